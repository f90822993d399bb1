// MCP benchmark, in one run, against the real @modelcontextprotocol/server-everything over
// stdio (its `echo` tool):
//
// 1. The added cost of one governed MCP call. Three loops of STEPS calls each, interleaved
//    round by round (the order alternates, so a slow spell falls on all three):
//    a. baseline: the official TypeScript SDK client (Client + StdioClientTransport) calling
//       `echo` STEPS times in a loop: the MCP call itself;
//    b. a `createAgent` turn whose JS model function calls `mcp__everything__echo` once per
//       step, STEPS steps (then a text answer): the kernel's decision, the schema check, the
//       call through the harness's pool, the result to the transcript, the step's commit;
//    c. the same turn with a host tool that answers at once instead: the harness's own
//       per-step cost (the model call across the JS boundary, the step, the commit).
//    b − c is what an MCP call costs inside a turn; (b − c) / a is that against the direct
//    call, and b − c − a the harness's added cost per governed call.
// 2. SESSIONS (100) concurrent sessions of one agent, each calling `echo` CALLS (5) times
//    then answering, all sharing the agent's one server process: wall time and MCP calls per
//    second (after a warm-up batch that starts the server; median of BATCHES batches), beside
//    the baseline of the TypeScript SDK client making the same calls from SESSIONS concurrent
//    loops over one connection, and beside the same sessions calling an instant host tool
//    (the difference is what the MCP calls add to the sessions' wall). The server processes this process started
//    are counted from /proc while the sessions run (Linux): exactly one must have run.
//
// The model function answers at once, the memory session store is used (BENCH_MCP_STORE=
// filesystem for the default store), so the figures are the harness's and the server's.
// Prints a line per round, a table, and last one JSON line. Exits 1 if a turn or session did
// not complete or the sessions did not share one server; no figure is asserted.
//
// Usage: node scripts/bench-mcp.mjs   (STEPS=200 ROUNDS=15 SESSIONS=100 CALLS=5 BATCHES=5)
// The addon is whatever index.js loads: the debug build of `npm run build`, or a release
// build with NAPI_RS_NATIVE_LIBRARY_PATH (`. scripts/release-addon.sh` sets it).
import { existsSync, mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { createAgent, createMemorySessionStore } from '@archmax-ai/harness'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..')
const EVERYTHING = join(repo, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js')
const STEPS = Number(process.env.STEPS ?? 200)
const ROUNDS = Number(process.env.ROUNDS ?? 15)
const SESSIONS = Number(process.env.SESSIONS ?? 100)
const CALLS = Number(process.env.CALLS ?? 5)
const BATCHES = Number(process.env.BATCHES ?? 5)
const STORE = process.env.BENCH_MCP_STORE ?? 'memory'
if (!existsSync(EVERYTHING)) {
  console.error(`${EVERYTHING} is not installed: run npm ci`)
  process.exit(2)
}
if (!['memory', 'filesystem'].includes(STORE)) {
  console.error(`BENCH_MCP_STORE must be memory or filesystem, not '${STORE}'`)
  process.exit(2)
}

const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1]
const us = (ms) => (ms * 1000).toFixed(1)
const SERVER = { command: process.execPath, args: [EVERYTHING, 'stdio'] }
const MESSAGE = 'hello from the benchmark'

// A workspace with two one-state workflows: one granting the server's echo, one a host tool.
const spec = (tool, calls) => `title: Bench
instructions: A benchmark workflow.
budget: { maxModelCalls: ${calls + 10} }
mounts:
  allow_always: []
states:
  work:
    triggers: { manual: }
    instructions: Call the tool.
    tools:
      allow: [${tool}]
`
const root = mkdtempSync(join(tmpdir(), 'archmax-bench-mcp-'))
for (const [name, tool, calls] of [['mcp', 'mcp__everything__echo', STEPS], ['host', 'instant', STEPS], ['many', 'mcp__everything__echo', CALLS], ['many-host', 'instant', CALLS]]) {
  mkdirSync(join(root, 'workflows', name), { recursive: true })
  writeFileSync(join(root, 'workflows', name, 'workflow.yaml'), spec(tool, calls))
}

/** A model function: `calls` tool calls of `tool`, one per step, then a text answer. */
const modelCalling = (tool, calls) => async (request) => {
  const step = request.messages.filter((m) => m.role === 'assistant').length
  if (step >= calls) return { role: 'assistant', content: 'Done.' }
  return { role: 'assistant', content: null, tool_calls: [{ id: `c${step}`, type: 'function', function: { name: tool, arguments: JSON.stringify({ message: MESSAGE }) } }] }
}
const INSTANT = { name: 'instant', description: 'Answers at once.', schema: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] }, handler: async ({ message }) => `Echo: ${message}` }
const sessionStore = () => (STORE === 'memory' ? createMemorySessionStore() : undefined)

// a. The TypeScript SDK client, its own server.
const sdk = new Client({ name: 'bench-mcp', version: '1.0.0' })
await sdk.connect(new StdioClientTransport({ ...SERVER, stderr: 'ignore' }))
const sdkLoop = async (n) => {
  const t0 = performance.now()
  for (let i = 0; i < n; i++) {
    const r = await sdk.callTool({ name: 'echo', arguments: { message: MESSAGE } })
    if (r.content?.[0]?.text !== `Echo: ${MESSAGE}`) throw new Error(`echo answered ${JSON.stringify(r)}`)
  }
  return (performance.now() - t0) / n
}

// b and c. One agent each, reused across rounds (the MCP server starts in the warm-up).
const mcpAgent = await createAgent({ workflow: 'mcp', workspace: { rootDir: root, sessionStore: sessionStore() }, model: modelCalling('mcp__everything__echo', STEPS), mcpServers: { everything: SERVER } })
const hostAgent = await createAgent({
  workflow: 'host',
  workspace: { rootDir: root, sessionStore: sessionStore() },
  model: modelCalling('instant', STEPS),
  mcpServers: false,
  tools: [INSTANT],
})
let turns = 0
const turnLoop = async (agent, tool) => {
  const t0 = performance.now()
  const out = await agent.workflow.send(`t${turns++}`, { message: 'go' })
  const wall = performance.now() - t0
  const results = out.transcript?.filter((m) => m.role === 'tool') ?? []
  if (out.kind !== 'completed' || out.reply !== 'Done.') throw new Error(`the ${tool} turn ended ${out.kind}: ${JSON.stringify(out).slice(0, 400)}`)
  if (results.length && results.some((m) => !String(m.content).includes(`Echo: ${MESSAGE}`))) throw new Error(`a ${tool} call answered ${JSON.stringify(results.find((m) => !String(m.content).includes('Echo')))}`)
  return wall / STEPS
}

const loops = {
  a: () => sdkLoop(STEPS),
  b: () => turnLoop(mcpAgent, 'mcp__everything__echo'),
  c: () => turnLoop(hostAgent, 'instant'),
}
const all = { a: [], b: [], c: [] }
try {
  // Warm-up: the servers started, the JIT and the harness's threads warm.
  for (const k of ['a', 'b', 'c']) await loops[k]()
  for (let r = 0; r < ROUNDS; r++) {
    const order = r % 2 ? ['c', 'b', 'a'] : ['a', 'b', 'c']
    for (const k of order) all[k].push(await loops[k]())
    const [ra, rb, rc] = [all.a.at(-1), all.b.at(-1), all.c.at(-1)]
    console.log(`round ${r + 1}: a ${us(ra)} µs/call, b ${us(rb)} µs/step, c ${us(rc)} µs/step; (b − c) / a ${((rb - rc) / ra).toFixed(2)}`)
  }
} finally {
  mcpAgent.dispose()
  hostAgent.dispose()
}
const [a, b, c] = [median(all.a), median(all.b), median(all.c)]
// The differences and the ratio are taken within each round (its three loops ran back to
// back), then the median over the rounds.
const perRound = (f) => median(all.a.map((_, r) => f(all.a[r], all.b[r], all.c[r])))
const mcpInTurn = perRound((ra, rb, rc) => rb - rc)
const ratio = perRound((ra, rb, rc) => (rb - rc) / ra)
const added = perRound((ra, rb, rc) => rb - rc - ra)

// 2. Many sessions. /proc: the server processes this process started while they run.
function everythingChildren() {
  const pids = []
  try {
    for (const tid of readdirSync(`/proc/${process.pid}/task`)) {
      const children = readFileSync(`/proc/${process.pid}/task/${tid}/children`, 'utf8').trim()
      for (const pid of children ? children.split(' ') : []) {
        try {
          if (readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(EVERYTHING)) pids.push(Number(pid))
        } catch {
          // Gone since it was listed.
        }
      }
    }
  } catch {
    return null // not Linux
  }
  return pids
}

// The SDK's baseline: SESSIONS concurrent loops of CALLS calls over its one connection.
const sdkMany = async () => {
  const t0 = performance.now()
  await Promise.all(Array.from({ length: SESSIONS }, async () => {
    for (let i = 0; i < CALLS; i++) await sdk.callTool({ name: 'echo', arguments: { message: MESSAGE } })
  }))
  return performance.now() - t0
}
await sdkMany() // warm-up
const sdkWalls = []
for (let r = 0; r < BATCHES; r++) sdkWalls.push(await sdkMany())
const sdkWall = median(sdkWalls)
await sdk.close()

const before = everythingChildren()
if (before?.length) {
  console.error(`server processes left from the first part: ${before.join(', ')}`)
  process.exit(1)
}
const manyAgent = await createAgent({ workflow: 'many', workspace: { rootDir: root, sessionStore: sessionStore() }, model: modelCalling('mcp__everything__echo', CALLS), mcpServers: { everything: SERVER } })
const manyHost = await createAgent({
  workflow: 'many-host',
  workspace: { rootDir: root, sessionStore: sessionStore() },
  model: modelCalling('instant', CALLS),
  mcpServers: false,
  tools: [INSTANT],
})
const seen = new Set()
const probe = setInterval(() => everythingChildren()?.forEach((p) => seen.add(p)), 10)
const manyWalls = []
const manyHostWalls = []
const bad = []
let batch = 0
const manyRound = async (agent) => {
  const t0 = performance.now()
  const outcomes = await Promise.all(Array.from({ length: SESSIONS }, (_, i) => agent.workflow.send(`m${batch}-${i}`, { message: 'go' })))
  batch++
  bad.push(...outcomes.filter((o) => o.kind !== 'completed' || o.reply !== 'Done.'))
  return performance.now() - t0
}
try {
  // Warm-up: the server starts here.
  await manyRound(manyAgent)
  await manyRound(manyHost)
  for (let r = 0; r < BATCHES; r++) {
    manyWalls.push(await manyRound(manyAgent))
    manyHostWalls.push(await manyRound(manyHost))
  }
  everythingChildren()?.forEach((p) => seen.add(p))
} finally {
  clearInterval(probe)
  manyAgent.dispose()
  manyHost.dispose()
  rmSync(root, { recursive: true, force: true })
}
const manyWall = median(manyWalls)
const manyHostWall = median(manyHostWalls)
const servers = everythingChildren() === null ? null : seen.size
const totalCalls = SESSIONS * CALLS

const build = process.env.NAPI_RS_NATIVE_LIBRARY_PATH ? `addon ${process.env.NAPI_RS_NATIVE_LIBRARY_PATH}` : 'the addon index.js loads (npm run build: debug)'
console.log(`\nOne governed MCP call over stdio (server-everything echo), ${STEPS} calls per loop, ${ROUNDS} rounds, medians; ${STORE} store; ${build}`)
console.log(`| loop | per call |`)
console.log(`|---|---|`)
console.log(`| a. TS SDK client, direct call (baseline) | ${us(a)} µs |`)
console.log(`| b. createAgent turn step calling mcp__everything__echo | ${us(b)} µs |`)
console.log(`| c. createAgent turn step calling an instant host tool | ${us(c)} µs |`)
console.log(`| b − c: the MCP call inside a turn | ${us(mcpInTurn)} µs |`)
console.log(`| (b − c) / a: against the direct call | **${ratio.toFixed(2)}×** |`)
console.log(`| b − c − a: added by the harness per governed call | ${us(added)} µs |`)
console.log('(b − c, the ratio and b − c − a: per round, then the median over the rounds)')
console.log(`\n${SESSIONS} concurrent sessions × ${CALLS} echo calls (${totalCalls} calls), one agent, median of ${BATCHES} batches:`)
console.log(`| run | wall | calls/s |`)
console.log(`|---|---|---|`)
console.log(`| TS SDK client, ${SESSIONS} concurrent loops, one connection (baseline) | ${sdkWall.toFixed(0)} ms | ${((totalCalls / sdkWall) * 1000).toFixed(0)} |`)
console.log(`| createAgent, ${SESSIONS} sessions calling echo, one server | ${manyWall.toFixed(0)} ms = ${(manyWall / sdkWall).toFixed(2)}× | ${((totalCalls / manyWall) * 1000).toFixed(0)} |`)
console.log(`| createAgent, ${SESSIONS} sessions calling an instant host tool | ${manyHostWall.toFixed(0)} ms | ${((totalCalls / manyHostWall) * 1000).toFixed(0)} |`)
console.log(`MCP's share of the sessions' wall: ${(manyWall - manyHostWall).toFixed(0)} ms = ${((manyWall - manyHostWall) / sdkWall).toFixed(2)}× the SDK baseline's wall`)
console.log(servers === null ? 'server processes: not counted (no /proc)' : `server processes that ran during the sessions: ${servers} (${[...seen].join(', ')})`)
console.log(JSON.stringify({
  steps: STEPS, rounds: ROUNDS, store: STORE,
  sdk_us: all.a.map((v) => v * 1000), turn_mcp_us: all.b.map((v) => v * 1000), turn_host_us: all.c.map((v) => v * 1000),
  mcp_in_turn_us: mcpInTurn * 1000, ratio, added_us: added * 1000,
  sessions: SESSIONS, calls: CALLS, sdk_many_ms: sdkWall, many_ms: manyWall, many_walls_ms: manyWalls, many_host_ms: manyHostWall, many_host_walls_ms: manyHostWalls, many_calls_per_s: (totalCalls / manyWall) * 1000, servers,
}))
if (bad.length) {
  console.error(`${bad.length} sessions did not complete: ${JSON.stringify(bad[0]).slice(0, 400)}`)
  process.exit(1)
}
if (servers !== null && servers !== 1) {
  console.error(`the sessions ran ${servers} server processes, not one`)
  process.exit(1)
}

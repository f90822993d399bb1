// The workflows-as-MCP-tools benchmark, in one run: the added cost of a turn started over MCP
// beside the same turn through the HTTP API, on one workspace (a one-state workflow) and one
// scripted OpenAI-compatible endpoint on 127.0.0.1 that answers each turn at once.
//
//   a. baseline: `POST /sessions/<id>/messages` on `archmax serve` (a new session per turn);
//   b. `tools/call` of the workflow's tool over `/mcp` of the same server (the official
//      TypeScript SDK client, streamable HTTP, one connection);
//   c. `tools/call` over stdio to one `archmax mcp` process (the same client);
//   d. `archmax run` (a process per turn), for scale: what a long-lived server saves.
// TURNS turns each, interleaved round by round (ROUNDS rounds; the order alternates). Prints
// each loop's median per-turn time, its ratio to (a), and one JSON line. Nothing is asserted;
// it exits 1 only when a turn does not complete.
//
// Usage: node scripts/bench-mcp-server.mjs   (TURNS=40 ROUNDS=5 RUNS=5)
// The addon is whatever index.js loads: the debug build of `npm run build`, or a release
// build with NAPI_RS_NATIVE_LIBRARY_PATH (`. scripts/release-addon.sh` sets it).
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { serveArchmax } from '../__test__/helpers.mjs'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..')
const BIN = join(repo, 'bin/archmax.js')
const TURNS = Number(process.env.TURNS ?? 40)
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const RUNS = Number(process.env.RUNS ?? 5)

// A one-state workflow: each turn is one model call answered in text.
const root = mkdtempSync(join(tmpdir(), 'archmax-bench-mcp-server-'))
mkdirSync(join(root, 'workflows/desk'), { recursive: true })
writeFileSync(join(root, 'workflows/desk/workflow.yaml'), `title: Desk
instructions: Answer.
states:
  answer:
    triggers:
      manual:
        description: Ask the desk.
    instructions: Answer in one sentence.
`)

const endpoint = createServer((req, res) => {
  req.resume()
  req.on('end', () => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: 'bench', choices: [{ index: 0, message: { role: 'assistant', content: 'Done.' }, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 } }))
  })
})
await new Promise((r) => endpoint.listen(0, '127.0.0.1', r))
const env = { ...process.env, ARCHMAX_CLI_NO_BANNER: '1', NO_COLOR: '1', ARCHMAX_API_BASE_URL: `http://127.0.0.1:${endpoint.address().port}/v1`, ARCHMAX_MODEL: 'bench', ARCHMAX_STREAMING: 'false' }
delete env.ARCHMAX_SESSION_STORE
delete env.ARCHMAX_SERVE_TOKENS

const { base, child: serve } = await serveArchmax(root, env.ARCHMAX_API_BASE_URL, { ARCHMAX_MODEL: 'bench', ARCHMAX_STREAMING: 'false', ARCHMAX_SERVE_TOKENS: '' })
const http = new Client({ name: 'bench', version: '1' })
await http.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`)))
const stdio = new Client({ name: 'bench', version: '1' })
await stdio.connect(new StdioClientTransport({ command: process.execPath, args: [BIN, 'mcp', '--root', root], env, stderr: 'ignore' }))

let n = 0
const check = (kind, ok) => {
  if (!ok) {
    console.error(`a ${kind} turn did not complete`)
    process.exit(1)
  }
}
const loops = {
  'POST /sessions/<id>/messages': async () => {
    const r = await fetch(`${base}/sessions/b-${n++}/messages`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ message: 'Hi.' }) })
    check('HTTP', (await r.json()).kind === 'completed')
  },
  'MCP over HTTP (/mcp)': async () => {
    const r = await http.callTool({ name: 'desk', arguments: { message: 'Hi.' } })
    check('MCP HTTP', r.structuredContent?.kind === 'completed')
  },
  'MCP over stdio (archmax mcp)': async () => {
    const r = await stdio.callTool({ name: 'desk', arguments: { message: 'Hi.' } })
    check('MCP stdio', r.structuredContent?.kind === 'completed')
  },
}
const times = Object.fromEntries(Object.keys(loops).map((k) => [k, []]))
// Warm-up: every path once.
for (const f of Object.values(loops)) await f()
const names = Object.keys(loops)
for (let round = 0; round < ROUNDS; round++) {
  const order = round % 2 ? [...names].reverse() : names
  for (const name of order) {
    const t0 = process.hrtime.bigint()
    for (let i = 0; i < TURNS; i++) await loops[name]()
    times[name].push(Number(process.hrtime.bigint() - t0) / 1e6 / TURNS)
  }
}
// `archmax run`: a process per turn (spawned, not spawnSync: the endpoint answers on this
// process's event loop).
const runTimes = []
for (let i = 0; i < RUNS; i++) {
  const t0 = process.hrtime.bigint()
  const child = spawn(process.execPath, [BIN, 'run', 'desk', 'Hi.', '--root', root, '--session', `r-${i}`], { env, stdio: 'ignore' })
  const status = await new Promise((resolve) => child.on('exit', resolve))
  check('archmax run', status === 0)
  runTimes.push(Number(process.hrtime.bigint() - t0) / 1e6)
}
times['archmax run (a process per turn)'] = runTimes

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const baseline = median(times['POST /sessions/<id>/messages'])
console.log(`turns per loop ${TURNS}, rounds ${ROUNDS}; median ms per turn, ratio to POST /sessions/<id>/messages`)
const summary = {}
for (const [name, xs] of Object.entries(times)) {
  const m = median(xs)
  summary[name] = { msPerTurn: Number(m.toFixed(3)), ratio: Number((m / baseline).toFixed(3)) }
  console.log(`${name.padEnd(36)} ${m.toFixed(2).padStart(9)} ms  ×${(m / baseline).toFixed(2)}`)
}
console.log(JSON.stringify({ bench: 'mcp-server', turns: TURNS, rounds: ROUNDS, results: summary }))
await http.close()
await stdio.close()
serve.kill()
endpoint.close()

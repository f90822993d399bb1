// Streaming benchmark (issue 16 item 6), in one run, against an SSE endpoint on 127.0.0.1
// in this process (every chunk stamped with performance.now() as it is written):
//
// 1. onEvent latency: from a chunk leaving the server to its `agent-text-delta` reaching
//    `onEvent` in this process (the ARCHMAX_* endpoint, createAgent). Baseline: the same
//    stream read by `fetch` in this process (chunk written → chunk read).
// 2. CLI latency: from a chunk leaving the server to its text reaching the CLI's output
//    (`node bin/archmax.js run`; the streamed text is written to stderr, in the state flow).
//    Baseline: a child `node` that reads the same stream with `fetch` and writes each piece
//    to stderr.
// 3. The cost of streaming: a 200-step turn (200 tool-call answers, then a text) with
//    streaming on (SSE) beside off (one JSON body per call), wall time per model call.
//
// Usage: node scripts/bench-stream.mjs   (ROUNDS=5 CHUNKS=40 GAP_MS=5)
// The addon is whatever index.js loads (set NAPI_RS_NATIVE_LIBRARY_PATH for a release build).
import { spawn } from 'node:child_process'
import { createServer } from 'node:http'
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createAgent } from '../js/main.js'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..')
const ROUNDS = Number(process.env.ROUNDS ?? 5)
const CHUNKS = Number(process.env.CHUNKS ?? 40)
const GAP_MS = Number(process.env.GAP_MS ?? 5)
const STEPS = 200

const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1]
const p95 = (v) => [...v].sort((a, b) => a - b)[Math.min(v.length - 1, Math.floor(v.length * 0.95))]
const sleep = (ms) => new Promise((r) => setTimeout(r, ms))
const piece = (i) => `w${i}${i % 7 === 6 ? '\n' : ' '}`

const SPEC = `title: Bench
instructions: A benchmark workflow.
budget:
  maxModelCalls: 400
mounts:
  allow_always: []
states:
  chat:
    triggers: { manual: }
    instructions: Chat.
`

function workspaceDir() {
  const root = mkdtempSync(join(tmpdir(), 'archmax-bench-stream-'))
  mkdirSync(join(root, 'workflows/bench'), { recursive: true })
  writeFileSync(join(root, 'workflows/bench/workflow.yaml'), SPEC)
  return root
}

const chunk = (delta, finish = null) => `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', model: 'm', choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`

/**
 * The endpoint. `mode.text`: each request streams CHUNKS text pieces GAP_MS apart, stamping
 * `sent[piece]`; `mode.steps`: requests 1..STEPS answer one tool call, then a text, as SSE
 * when asked for a stream, else as JSON.
 */
async function endpoint() {
  const state = { mode: 'text', sent: new Map(), calls: 0 }
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', async () => {
      const request = body ? JSON.parse(body) : {}
      if (req.url === '/raw' || state.mode === 'text') {
        res.writeHead(200, { 'content-type': 'text/event-stream' })
        res.write(chunk({ role: 'assistant', content: '' }))
        for (let i = 0; i < CHUNKS; i++) {
          await sleep(GAP_MS)
          state.sent.set(piece(i), performance.now())
          res.write(chunk({ content: piece(i) }))
        }
        res.end(`${chunk({}, 'stop')}data: [DONE]\n\n`)
        return
      }
      state.calls++
      const message =
        state.calls <= STEPS
          ? { role: 'assistant', content: null, tool_calls: [{ id: `c${state.calls}`, type: 'function', function: { name: 'archmax_set_variables', arguments: JSON.stringify({ variables: { n: state.calls } }) } }] }
          : { role: 'assistant', content: 'done' }
      if (!request.stream) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: 'm', choices: [{ index: 0, message, finish_reason: 'stop' }] }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream' })
      let out = chunk({ role: 'assistant', content: message.content ?? '' })
      for (const [index, c] of (message.tool_calls ?? []).entries()) {
        out += chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: '' } }] })
        out += chunk({ tool_calls: [{ index, function: { arguments: c.function.arguments } }] })
      }
      res.end(`${out}${chunk({}, message.tool_calls ? 'tool_calls' : 'stop')}data: [DONE]\n\n`)
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  return { state, url: `http://127.0.0.1:${server.address().port}`, close: () => (server.closeAllConnections(), new Promise((r) => server.close(r))) }
}

/** Latencies (ms) of the pieces whose arrival `seen` recorded, against the server's stamps. */
const latencies = (sent, seen) => [...seen].map(([p, t]) => t - sent.get(p)).filter((x) => Number.isFinite(x))

async function viaFetch(ep) {
  ep.state.sent.clear()
  const seen = new Map()
  const res = await fetch(`${ep.url}/raw`, { method: 'POST', body: '{}' })
  const decoder = new TextDecoder()
  for await (const bytes of res.body) {
    const now = performance.now()
    for (const m of decoder.decode(bytes, { stream: true }).matchAll(/"content":"((?:[^"\\]|\\.)*)"/g)) {
      const text = JSON.parse(`"${m[1]}"`)
      if (text && !seen.has(text)) seen.set(text, now)
    }
  }
  return latencies(ep.state.sent, seen)
}

async function viaOnEvent(ep) {
  ep.state.sent.clear()
  const seen = new Map()
  const root = workspaceDir()
  const agent = await createAgent({ workspace: { rootDir: root }, workflow: 'bench', onEvent: (e) => e.type === 'agent-text-delta' && seen.set(e.text, performance.now()) })
  try {
    await agent.workflow.send('s1', { message: 'go' })
  } finally {
    agent.dispose()
    rmSync(root, { recursive: true, force: true })
  }
  return latencies(ep.state.sent, seen)
}

/** A child process's stderr arrivals of each piece (its text, without the flow's quoting). */
function childArrivals(ep, args, env) {
  ep.state.sent.clear()
  const seen = new Map()
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: repo, env: { ...process.env, NO_COLOR: '1', ARCHMAX_CLI_NO_BANNER: '1', ...env } })
    let err = ''
    child.stderr.on('data', (d) => {
      const now = performance.now()
      err += d
      for (let i = 0; i < CHUNKS; i++) {
        const p = piece(i)
        if (!seen.has(p) && err.includes(p.trim())) seen.set(p, now)
      }
    })
    child.on('close', (code) => (code === 0 ? resolve(latencies(ep.state.sent, seen)) : reject(new Error(`exit ${code}: ${err}`))))
  })
}

const CHILD_FETCH = `const res = await fetch(process.argv[1] + '/raw', { method: 'POST', body: '{}' });
const d = new TextDecoder();
for await (const b of res.body) for (const m of d.decode(b, { stream: true }).matchAll(/"content":"((?:[^"\\\\]|\\\\.)*)"/g)) { const t = JSON.parse('"' + m[1] + '"'); if (t) process.stderr.write(t) }`

async function turnWall(ep, streaming) {
  ep.state.mode = 'steps'
  ep.state.calls = 0
  const root = workspaceDir()
  const agent = await createAgent({ workspace: { rootDir: root }, workflow: 'bench', streaming })
  try {
    const t0 = performance.now()
    const outcome = await agent.workflow.send('s1', { message: 'go' })
    if (outcome.kind !== 'completed') throw new Error(`the turn ended ${outcome.kind}: ${outcome.rejected ?? outcome.reason ?? ''}`)
    return (performance.now() - t0) / (STEPS + 1)
  } finally {
    agent.dispose()
    rmSync(root, { recursive: true, force: true })
  }
}

const ep = await endpoint()
const saved = { ...process.env }
Object.assign(process.env, { ARCHMAX_API_BASE_URL: `${ep.url}/v1`, ARCHMAX_API_KEY: 'k', ARCHMAX_MODEL: 'm', ARCHMAX_STREAMING: '1' })
try {
  const all = { fetch: [], onEvent: [], childFetch: [], cli: [], on: [], off: [] }
  for (let r = 0; r < ROUNDS; r++) {
    ep.state.mode = 'text'
    all.fetch.push(...(await viaFetch(ep)))
    all.onEvent.push(...(await viaOnEvent(ep)))
    all.childFetch.push(...(await childArrivals(ep, ['--input-type=module', '-e', CHILD_FETCH, ep.url], {})))
    const root = workspaceDir()
    all.cli.push(...(await childArrivals(ep, [join(repo, 'bin/archmax.js'), 'run', 'bench', 'go', '--root', root], { ARCHMAX_API_BASE_URL: `${ep.url}/v1` })))
    rmSync(root, { recursive: true, force: true })
    // Alternate which goes first, so a slow spell falls on both.
    if (r % 2) {
      all.on.push(await turnWall(ep, true))
      all.off.push(await turnWall(ep, false))
    } else {
      all.off.push(await turnWall(ep, false))
      all.on.push(await turnWall(ep, true))
    }
    console.log(`round ${r + 1}: onEvent ${median(all.onEvent).toFixed(2)} ms, cli ${median(all.cli).toFixed(2)} ms, turn/call on ${all.on.at(-1).toFixed(3)} ms off ${all.off.at(-1).toFixed(3)} ms`)
  }
  const row = (label, v, base) => console.log(`${label.padEnd(44)} median ${median(v).toFixed(2)} ms  p95 ${p95(v).toFixed(2)} ms  (${v.length} chunks)${base ? `  ${(median(v) / median(base)).toFixed(2)}x the baseline` : ''}`)
  console.log(`\nchunk leaves the server → it arrives (${CHUNKS} chunks ${GAP_MS} ms apart, ${ROUNDS} rounds; debug or release: whatever index.js loads)`)
  row('baseline: fetch in this process', all.fetch)
  row('agent-text-delta at onEvent (createAgent)', all.onEvent, all.fetch)
  row('baseline: fetch in a child node, to stderr', all.childFetch)
  row('archmax run: the text on stderr', all.cli, all.childFetch)
  const on = median(all.on)
  const off = median(all.off)
  console.log(`\n${STEPS}-step turn, ARCHMAX_* endpoint, per model call: streaming ${on.toFixed(3)} ms, not streaming ${off.toFixed(3)} ms: ${(on / off).toFixed(2)}x`)
} finally {
  for (const k of ['ARCHMAX_API_BASE_URL', 'ARCHMAX_API_KEY', 'ARCHMAX_MODEL', 'ARCHMAX_STREAMING']) {
    if (saved[k] === undefined) delete process.env[k]
    else process.env[k] = saved[k]
  }
  await ep.close()
}

#!/usr/bin/env node
// Benchmark of `archmax serve` beside the CLI, both measured in this run over the same
// copy of the example workspace (the model a scripted endpoint on 127.0.0.1):
//   1. reads: GET /sessions/<id> (8 concurrent clients) vs `archmax sessions <id> --json`
//      run one after another; reads per second and the ratio;
//   2. fan-out: one session's decision turn streamed to 100 SSE subscribers vs to 1; the time
//      until every subscriber has the turn's last event, the ratio, and beside it the time
//      the CLI takes for 100 reads of that session (how 100 watchers would poll without a
//      server).
// Usage: node scripts/bench-serve.mjs [--reads N] [--cli-reads N]  (after `npm run build`)
import { spawnSync } from 'node:child_process'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { copyExample, EXAMPLE, ROOT, refundAnswers, serveArchmax, sseEndpoint } from '../__test__/helpers.mjs'

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i > 0 ? Number(process.argv[i + 1]) : fallback
}
const READS = arg('reads', 2000)
const CLI_READS = arg('cli-reads', 20)
const SUBSCRIBERS = 100
const BIN = join(ROOT, 'bin', 'archmax.js')
const TOKEN = 'tok-lead'
const auth = { authorization: `Bearer ${TOKEN}` }

const root = mkdtempSync(join(tmpdir(), 'archmax-bench-serve-'))
copyExample(root)
// Both sessions park (three answers each), then both are approved (two answers each).
const [a, b] = [refundAnswers(), refundAnswers()]
const script = [...a.slice(0, 3), ...b.slice(0, 3), ...a.slice(3), ...b.slice(3)]
const endpoint = await sseEndpoint(() => script.shift())
const env = {
  ...process.env,
  ARCHMAX_CLI_NO_BANNER: '1',
  NO_COLOR: '1',
  ARCHMAX_API_BASE_URL: endpoint.url,
  ARCHMAX_MODEL: 'scripted',
}
delete env.ARCHMAX_SESSION_STORE
const { base, child } = await serveArchmax(root, endpoint.url, { ARCHMAX_SERVE_TOKENS: `support-lead@kettleandkite.example=${TOKEN}` })
const post = async (path, body) => {
  const r = await fetch(`${base}${path}`, { method: 'POST', headers: { ...auth, 'content-type': 'application/json' }, body: JSON.stringify(body) })
  const out = await r.json()
  if (!r.ok) throw new Error(`${path}: ${JSON.stringify(out)}`)
  return out
}
for (const id of ['bench-1', 'bench-2']) {
  const o = await post(`/sessions/${id}/messages`, { message: 'Order KK-2043 arrived late; refund please.', workflow: 'order-lookup' })
  if (o.status !== 'awaiting_decision') throw new Error(`${id} did not park: ${JSON.stringify(o)}`)
}

// 1. Reads.
let next = 0
const t0 = performance.now()
await Promise.all(Array.from({ length: 8 }, async () => {
  while (next++ < READS) {
    const r = await fetch(`${base}/sessions/bench-1`, { headers: auth })
    await r.arrayBuffer()
    if (!r.ok) throw new Error(`GET failed: ${r.status}`)
  }
}))
const serveRps = READS / ((performance.now() - t0) / 1000)
const cliRead = () => {
  const r = spawnSync(process.execPath, [BIN, 'sessions', 'bench-1', '--json', '--root', root], { cwd: root, env, encoding: 'utf8' })
  if (r.status !== 0) throw new Error(`archmax sessions failed: ${r.stderr}`)
}
const t1 = performance.now()
for (let i = 0; i < CLI_READS; i++) cliRead()
const cliSeconds = (performance.now() - t1) / 1000
const cliRps = CLI_READS / cliSeconds
console.log(`GET /sessions/<id>: ${serveRps.toFixed(0)} reads/s (8 clients, ${READS} reads)`)
console.log(`archmax sessions <id> --json: ${cliRps.toFixed(1)} reads/s (${CLI_READS} runs)`)
console.log(`ratio serve/cli: ${(serveRps / cliRps).toFixed(1)}x`)

// 2. Fan-out: subscribers from the current seq; the decision's last event is the
// `state-enter` of refund-approved... then its reply; we wait for the `agent-text` reply.
async function subscribe(id, since, done) {
  const r = await fetch(`${base}/sessions/${id}/events?since=${since}`, { headers: auth })
  const reader = r.body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  let count = 0
  let lastId = since
  for (;;) {
    const { value, done: end } = await reader.read()
    if (end) return { count, lastId }
    buffer += decoder.decode(value, { stream: true })
    let cut
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut)
      buffer = buffer.slice(cut + 2)
      const id = block.split('\n').find((l) => l.startsWith('id:'))
      const data = block.split('\n').find((l) => l.startsWith('data:'))
      if (!data) continue
      count++
      if (id) lastId = Number(id.slice(3))
      if (done(JSON.parse(data.slice(5)))) {
        reader.cancel()
        return { count, lastId }
      }
    }
  }
}
async function fanOut(id, n) {
  const isLast = (e) => e.type === 'agent-text' && /confirmed/.test(e.text ?? '')
  // The kept events up to the park, so the subscribers start after them.
  const { lastId: since } = await subscribe(id, 0, (e) => e.type === 'parked')
  const subs = Array.from({ length: n }, () => subscribe(id, since, isLast))
  // Every subscriber connected before the turn starts.
  await new Promise((r) => setTimeout(r, 300))
  const start = performance.now()
  const decided = post(`/sessions/${id}/decision`, { target: 'refund-approved' })
  const counts = await Promise.all(subs)
  const took = performance.now() - start
  await decided
  return { took, events: counts[0].count }
}
const one = await fanOut('bench-2', 1)
const many = await fanOut('bench-1', SUBSCRIBERS)
console.log(`SSE fan-out of one decision turn (${many.events} events): 1 subscriber ${one.took.toFixed(1)} ms, ${SUBSCRIBERS} subscribers ${many.took.toFixed(1)} ms, ratio ${(many.took / one.took).toFixed(2)}x`)
console.log(`beside it: ${SUBSCRIBERS} CLI reads of the session take ${(SUBSCRIBERS * cliSeconds / CLI_READS * 1000).toFixed(0)} ms (${(SUBSCRIBERS * cliSeconds / CLI_READS * 1000 / many.took).toFixed(1)}x the fan-out)`)

child.kill()
await endpoint.close()

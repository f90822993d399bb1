// The JS half of `scripts/bench-agent.sh`: the turn of `benches/benches/agent.rs`
// (200 tool-call steps, then a text answer) driven through `createAgent` by a JS
// model function that returns the next scripted assistant message at once.
// Same workflow, same replies (read from the fixture the Rust bench wrote), same
// store (BENCH_AGENT_STORE=memory: createMemorySessionStore; else the filesystem
// store, createAgent's default), a fresh workspace per round.
//
// Measured per round, as on the Rust side:
// - gap: from the model function returning to its next call (the harness's work
//   per step plus both crossings of the JS boundary: the answer's JSON envelope,
//   the drive loop's answer and poll, the request delta's serialization and
//   JSON.parse), median over the 200 steps;
// - wall: the whole `send` divided by the model calls (201).
//
// With --governance-only, instead of the turn: `Governance.decide` from JS on the
// example workflow, the four calls of `benches/benches/kernel.rs`, median ns per call.
//
// Prints a human line per round and, last, one JSON line:
// { steps, calls, rounds, gap_us, wall_us, gap_early_us, gap_late_us, probe_calls,
//   request_bytes, parse_us, governance? } (the probes: the size of the requests of
// calls 10 and 200 as JSON, and the time JSON.parse takes on them).
// Usage: node scripts/bench-agent.mjs <fixture-dir> [--governance-only]   (ROUNDS=7)
// The addon is whatever `index.js` loads: set NAPI_RS_NATIVE_LIBRARY_PATH to
// measure a release build (scripts/bench-agent.sh does).
import { mkdtempSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { createAgent, createMemorySessionStore, Governance } from '../js/main.js'

const repo = join(dirname(fileURLToPath(import.meta.url)), '..')
const fixture = process.argv[2]
if (!fixture || fixture.startsWith('--')) {
  console.error('usage: node scripts/bench-agent.mjs <fixture-dir> [--governance-only]')
  console.error('  (the fixture is written by BENCH_AGENT_FIXTURE=<dir> cargo bench -p archmax-bench --bench agent)')
  process.exit(2)
}
const workflowYaml = readFileSync(join(fixture, 'workflow.yaml'), 'utf8')
const script = JSON.parse(readFileSync(join(fixture, 'script.json'), 'utf8'))
const steps = script.length - 1
const PROBES = [10, steps] // as benches/benches/agent.rs
const rounds = Number(process.env.ROUNDS ?? 7)

const median = (v) => {
  const s = [...v].sort((a, b) => a - b)
  return s[s.length >> 1]
}

async function runOnce() {
  const root = mkdtempSync(join(tmpdir(), 'archmax-bench-agent-'))
  try {
    mkdirSync(join(root, 'workflows/bench'), { recursive: true })
    writeFileSync(join(root, 'workflows/bench/workflow.yaml'), workflowYaml)
    const enter = []
    const leave = []
    const probed = {}
    let n = 0
    const model = async (request) => {
      enter.push(performance.now())
      if (PROBES.includes(n)) probed[n] = request
      const reply = script[n++]
      leave.push(performance.now())
      return reply
    }
    const sessionStore = process.env.BENCH_AGENT_STORE === 'memory' ? createMemorySessionStore() : undefined
    const agent = await createAgent({ workflow: 'bench', workspace: { rootDir: root, sessionStore }, model, defaultModel: 'bench' })
    try {
      const t = performance.now()
      const out = await agent.workflow.send('bench', { message: 'go' })
      const wall = ((performance.now() - t) * 1000) / script.length
      if (out.reply !== 'done' || n !== script.length) {
        throw new Error(`the turn did not replay the script: ${n} calls, outcome ${JSON.stringify(out).slice(0, 400)}`)
      }
      const gaps = []
      for (let i = 1; i < enter.length; i++) gaps.push((enter[i] - leave[i - 1]) * 1000)
      // What the parse of a probed request costs (done by agent.js before every call).
      const probes = PROBES.map((k) => {
        const text = JSON.stringify(probed[k])
        const t0 = performance.now()
        for (let i = 0; i < 20; i++) JSON.parse(text)
        return { bytes: Buffer.byteLength(text), parseUs: ((performance.now() - t0) * 1000) / 20 }
      })
      return { gaps, wall, probes }
    } finally {
      agent.dispose()
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
}

const governanceOnly = process.argv.includes('--governance-only')
if (!governanceOnly) await runOnce() // warm-up (JIT, first load)
const gapUs = []
const wallUs = []
const perStep = Array.from({ length: steps }, () => [])
const parseUs = PROBES.map(() => [])
let requestBytes = []
for (let r = 0; r < (governanceOnly ? 0 : rounds); r++) {
  const { gaps, wall, probes } = await runOnce()
  probes.forEach((p, k) => parseUs[k].push(p.parseUs))
  requestBytes = probes.map((p) => p.bytes)
  const gap = median(gaps)
  console.log(`js   round ${r}: ${gap.toFixed(1).padStart(8)} µs/step (median gap), ${wall.toFixed(1).padStart(8)} µs/call (wall)`)
  gaps.forEach((g, i) => perStep[i].push(g))
  gapUs.push(gap)
  wallUs.push(wall)
}
const step = (i) => median(perStep[i])
const range = (a, b) => Array.from({ length: b - a }, (_, k) => a + k)
const out = governanceOnly ? {} : {
  steps,
  calls: script.length,
  rounds,
  gap_us: gapUs,
  wall_us: wallUs,
  gap_early_us: median(range(5, 15).map(step)),
  gap_late_us: median(range(steps - 10, steps).map(step)),
  probe_calls: PROBES,
  request_bytes: requestBytes,
  parse_us: parseUs.map(median),
}

if (governanceOnly) {
  // The four calls of benches/benches/kernel.rs, through the addon's Governance.
  const gov = Governance.fromWorkspace({ rootDir: join(repo, 'examples/customer-support'), workflow: 'order-lookup' })
  const cases = [
    { name: 'bare_grant', call: { state: 'order-question', tool: 'read_file', args: { file_path: 'skills/order-data/assets/orders.json' } }, allowed: true, rule: 'tool.allowed' },
    { name: 'path_guard', call: { state: 'refund-request', tool: 'archmax_run', args: { file_path: 'skills/refund-policy/scripts/refund-limit.js' } }, allowed: true, rule: 'tool.allowed' },
    { name: 'variable_guard', call: { state: 'refund-approved', tool: 'write_file', variables: { order_id: 'KK-2043' }, args: { file_path: 'outbox/refund-KK-2043.md', content: 'Refund confirmed.' } }, allowed: true, rule: 'tool.allowed' },
    { name: 'denial', call: { state: 'classify', tool: 'write_file', args: { file_path: 'scratchpad/notes.md', content: 'x' } }, allowed: false, rule: 'tool.forbidden-here' },
  ]
  let sink = 0
  const batch = (call, n) => {
    const t = process.hrtime.bigint()
    for (let i = 0; i < n; i++) sink += gov.decide(call).rule.length
    return Number(process.hrtime.bigint() - t) / n
  }
  out.governance = {}
  for (const c of cases) {
    const d = gov.decide(c.call)
    if (d.allowed !== c.allowed || d.rule !== c.rule) throw new Error(`${c.name}: decided ${JSON.stringify(d)}`)
    const warmEnd = performance.now() + 300
    let per = 0
    while (performance.now() < warmEnd) per = batch(c.call, 200)
    const n = Math.max(200, Math.round(10e6 / per)) // ~10 ms batches
    const times = []
    for (let b = 0; b < 21; b++) times.push(batch(c.call, n))
    out.governance[c.name] = Math.round(median(times) * 10) / 10
    console.log(`js   Governance.decide ${c.name.padEnd(15)} ${out.governance[c.name].toFixed(1).padStart(9)} ns/call`)
  }
  if (sink === 0) console.log('(sink)')
}
console.log(JSON.stringify(out))

// The example suite (`archmax test order-lookup`, 4 cases) replayed from its cassettes beside
// the same suite against a scripted OpenAI-compatible server on 127.0.0.1 (issue 15 item 6),
// interleaved for ROUNDS rounds (default 5), each run a fresh `archmax` process on a fresh copy
// of the example. Prints the median wall time per case and per model call of each, and the
// ratio replay / server (the baseline, measured in the same run). Run after `npm run build`
// (or with NAPI_RS_NATIVE_LIBRARY_PATH at a release build):
//
//   node scripts/bench-cases.mjs
import { spawn } from 'node:child_process'
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { copyExample, EXAMPLE, ROOT, exampleSuiteServer } from '../__test__/helpers.mjs'

const ROUNDS = Number(process.env.ROUNDS ?? 5)
const WORKFLOW = 'order-lookup'
const TESTS = join(EXAMPLE, 'workflows', WORKFLOW, 'tests')

// Every model call of the suite is one exchange of its cassettes.
const calls = readdirSync(TESTS)
  .filter((n) => n.endsWith('.cassette.json'))
  .reduce((n, f) => n + JSON.parse(readFileSync(join(TESTS, f), 'utf8')).exchanges.length, 0)

/** One suite run; its wall time in ms. */
async function suite(replay) {
  const copy = mkdtempSync(join(tmpdir(), 'archmax-bench-cases-'))
  copyExample(copy)
  const server = replay ? null : await exampleSuiteServer()
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARCHMAX_')))
  Object.assign(env, { ARCHMAX_CLI_NO_BANNER: '1', NO_COLOR: '1' })
  if (server) Object.assign(env, { ARCHMAX_API_BASE_URL: server.url, ARCHMAX_API_KEY: 'scripted', ARCHMAX_MODEL: 'scripted-model' })
  const args = [join(ROOT, 'bin', 'archmax.js'), 'test', WORKFLOW, '--root', copy, '--json', ...(replay ? ['--replay'] : [])]
  const started = performance.now()
  const child = spawn(process.execPath, args, { env, stdio: ['ignore', 'pipe', 'ignore'] })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  const code = await new Promise((resolve) => child.on('exit', resolve))
  const wall = performance.now() - started
  await server?.close()
  rmSync(copy, { recursive: true, force: true })
  const result = JSON.parse(out)
  if (code !== 0 || result.results.some((r) => r.verdict.status !== 'passed')) {
    throw new Error(`the ${replay ? 'replayed' : 'served'} suite did not pass (exit ${code})`)
  }
  return { wall, cases: result.results.length }
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]
const served = []
const replayed = []
let cases = 0
for (let i = 0; i < ROUNDS; i++) {
  const s = await suite(false)
  const r = await suite(true)
  served.push(s.wall)
  replayed.push(r.wall)
  cases = s.cases
}
const line = (name, wall) =>
  `${name.padEnd(22)} ${wall.toFixed(0).padStart(6)} ms per suite, ${(wall / cases).toFixed(1).padStart(7)} ms per case, ${(wall / calls).toFixed(2).padStart(7)} ms per model call`
console.log(`example suite: ${cases} cases, ${calls} model calls, ${ROUNDS} interleaved rounds (medians; each a fresh process)`)
console.log(line('scripted server', median(served)))
console.log(line('replayed cassettes', median(replayed)))
console.log(`ratio replay / scripted server: ${(median(replayed) / median(served)).toFixed(2)}x`)

#!/usr/bin/env node
// The official MCP conformance suite's client scenarios that apply to a tools client, run
// against archmax-mcp's conformance client (crates/mcp/examples/conformance_client.rs); with
// --server, its server scenarios that apply to a tools server, run against `archmax serve`'s
// /mcp on a copy of the example workspace (the built addon, as `npm run build` leaves it).
//
//   node scripts/mcp-conformance.mjs [--server] [--json] [--scenario <name>]...
//
// It installs Node 22 (the suite needs it) and @modelcontextprotocol/conformance from npm into
// a scratch folder (target/mcp-conformance/, kept between runs), builds the example, runs each
// scenario with `--command <example>` (the suite appends its server's URL), and fails unless the
// suite passed it, every check passed (no failure, no warning), the scenario's own checks are all
// there and the number of passed checks is above zero: a client that never connects gets
// "Passed: 0/0" and "OVERALL: PASSED" from the suite. The scenarios that do not apply are
// listed with the reason. `--json` prints the summary as JSON on stdout.
// MCP_CONFORMANCE_CLIENT=<program> runs that client instead of building the example (the test
// of this script gives one that never connects, which must fail).
// Only the npm registry and 127.0.0.1 are reached.
import { spawnSync, spawn } from 'node:child_process'
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const SUITE_VERSION = '0.1.16'
const NODE_MAJOR = 22
const SCRATCH = process.env.MCP_CONFORMANCE_DIR ?? join(ROOT, 'target/mcp-conformance')

// The client scenarios a tools client answers, with the checks each must pass.
const APPLICABLE = {
  initialize: ['mcp-client-initialization'],
  tools_call: ['tool-add-numbers'],
  'elicitation-sep1034-client-defaults': [
    'client-elicitation-sep1034-string-default',
    'client-elicitation-sep1034-integer-default',
    'client-elicitation-sep1034-number-default',
    'client-elicitation-sep1034-enum-default',
    'client-elicitation-sep1034-boolean-default',
  ],
  'sse-retry': ['client-sse-graceful-reconnect', 'client-sse-retry-timing', 'client-sse-last-event-id'],
}
// Why the others do not apply, by name prefix.
const NOT_APPLICABLE = [
  ['auth/', 'OAuth 2.1 authorization: the client has no OAuth support; a remote server takes static headers (a bearer token from the environment)'],
]
// The server scenarios a tools server answers, with the checks each must pass.
const SERVER_APPLICABLE = {
  'server-initialize': ['server-initialize'],
  ping: ['ping'],
  'tools-list': ['tools-list'],
  'server-sse-polling': ['server-sse-priming-event', 'server-sse-retry-field'],
  'server-sse-multiple-streams': ['server-accepts-multiple-post-streams', 'server-sse-streams-functional'],
  'dns-rebinding-protection': ['localhost-host-rebinding-rejected', 'localhost-host-valid-accepted'],
}
// A warning a server scenario may give, and why it is not a problem.
const SERVER_ALLOWED_WARNINGS = {
  // It calls a reference tool that closes its stream mid-call (SEP-1699 polling, a MAY); a
  // workflow turn answers on the stream it was asked on.
  'server-sse-disconnect-resume': 'closing a stream mid-call for the client to poll is optional; a turn answers on its stream',
}
const SERVER_NOT_APPLICABLE = [
  ['tools-call-', "calls the reference server's test tools (echo, image, audio, sampling, elicitation, …); the tools here are the workspace's workflows"],
  ['json-schema-2020-12', "calls the reference server's json_schema_2020_12_tool"],
  ['elicitation-', "asks through the reference server's elicitation tools"],
  ['resources-', "reads the reference server's test resources (test://static-text, …); the resources here are sessions' and workflows'"],
  ['prompts-', 'the server offers no prompts'],
  ['logging-', 'the server does not advertise the logging capability'],
  ['completion-', 'the server offers no completions'],
]
const SERVER = process.argv.includes('--server')
const SIDE = SERVER ? 'server' : 'client'
// sse-retry times the client's reconnection (within 50 ms early and 200 ms late of the
// server's `retry`); on a loaded machine a run may miss it, so a run whose only problem is
// that timing is tried once more, and says so.
const TIMING_CHECKS = new Set(['client-sse-retry-timing'])

const args = process.argv.slice(2)
const json = args.includes('--json')
const only = args.flatMap((a, i) => (args[i - 1] === '--scenario' ? [a] : []))
const say = (line) => (json ? process.stderr : process.stdout).write(`${line}\n`)

function run(cmd, argv, opts = {}) {
  const r = spawnSync(cmd, argv, { encoding: 'utf8', maxBuffer: 64 << 20, ...opts })
  if (r.error) throw new Error(`cannot run ${cmd}: ${r.error.message}`)
  return r
}

function fail(message) {
  process.stderr.write(`mcp-conformance: ${message}\n`)
  process.exit(1)
}

// 1. Node 22 and the suite, from npm, in the scratch folder.
function install() {
  mkdirSync(SCRATCH, { recursive: true })
  const node = join(SCRATCH, 'node_modules/.bin/node')
  const suite = join(SCRATCH, 'node_modules/@modelcontextprotocol/conformance')
  const installedVersion = () => {
    try {
      return JSON.parse(readFileSync(join(suite, 'package.json'), 'utf8')).version
    } catch {
      return null
    }
  }
  const nodeVersion = () => (existsSync(node) ? run(node, ['--version']).stdout.trim() : '')
  if (installedVersion() !== SUITE_VERSION || !nodeVersion().startsWith(`v${NODE_MAJOR}.`)) {
    say(`installing node@${NODE_MAJOR} and @modelcontextprotocol/conformance@${SUITE_VERSION} into ${SCRATCH}`)
    writeFileSync(join(SCRATCH, 'package.json'), `${JSON.stringify({
      name: 'archmax-mcp-conformance',
      private: true,
      description: 'Scratch folder of scripts/mcp-conformance.mjs',
      dependencies: { node: `^${NODE_MAJOR}.0.0`, '@modelcontextprotocol/conformance': SUITE_VERSION },
      // The node package downloads its binary (from the npm registry) in a preinstall script:
      // npm versions that block dependencies' install scripts by default must allow it.
      allowScripts: { node: true },
    }, null, 2)}\n`)
    const r = run('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error', '--ignore-scripts=false'], { cwd: SCRATCH, stdio: ['ignore', 'inherit', 'inherit'] })
    if (r.status !== 0) fail(`npm install in ${SCRATCH} failed (exit ${r.status})`)
  }
  if (installedVersion() !== SUITE_VERSION) fail(`${suite} is not version ${SUITE_VERSION} after npm install`)
  const version = nodeVersion()
  // The `node` package fetches its binary in a preinstall script; without it there is no binary.
  if (!version.startsWith(`v${NODE_MAJOR}.`)) fail(`${node} is not Node ${NODE_MAJOR} (got '${version || 'nothing'}'): did npm skip the node package's install script?`)
  return { node, entry: join(suite, 'dist/index.js'), version }
}

// 2. The example, on the host's target (as CI builds), its path from cargo.
function build() {
  const host = run('rustc', ['-vV']).stdout.match(/^host: (.+)$/m)?.[1]
  if (!host) fail('cannot read the host target from `rustc -vV`')
  say(`building the conformance client (cargo build -p archmax-mcp --example conformance_client --target ${host})`)
  const r = run('cargo', ['build', '-p', 'archmax-mcp', '--example', 'conformance_client', '--target', host, '--message-format=json-render-diagnostics'], { cwd: ROOT, stdio: ['ignore', 'pipe', 'inherit'] })
  if (r.status !== 0) fail(`cargo build failed (exit ${r.status})`)
  const exe = r.stdout.split('\n').filter(Boolean).map((l) => JSON.parse(l))
    .find((m) => m.reason === 'compiler-artifact' && m.target?.name === 'conformance_client' && m.executable)?.executable
  if (!exe) fail('cargo built no conformance_client executable')
  return exe
}

// The scenarios of the `client` command (or, `server`, the `server` command), from the
// suite's own list.
function clientScenarios(suite, server = false) {
  const r = run(suite.node, [suite.entry, 'list'], { cwd: SCRATCH })
  if (r.status !== 0) fail(`the suite's list failed: ${r.stderr}`)
  const section = server
    ? (r.stdout.split(/^Server scenarios.*$/m)[1] ?? '').split(/^Client scenarios.*$/m)[0]
    : r.stdout.split(/^Client scenarios.*$/m)[1] ?? ''
  return [...section.matchAll(/^\s+- (\S+)/gm)].map((m) => m[1])
}

// 2b. `archmax serve` on a copy of the example (no model is asked: the scenarios list and
// ping, they run no workflow), started as the tests start it; its /mcp URL and the child.
async function startServer() {
  const { mkdtempSync } = await import('node:fs')
  const { tmpdir } = await import('node:os')
  const { copyExample, serveArchmax } = await import('../__test__/helpers.mjs')
  const ws = copyExample(mkdtempSync(join(tmpdir(), 'archmax-conformance-')))
  // No tokens: the scenarios connect without one (and test the loopback host check).
  const { base, child } = await serveArchmax(ws, 'http://127.0.0.1:9/v1', { ARCHMAX_MODEL: 'none', ARCHMAX_SERVE_TOKENS: '' }).catch((e) => fail(e.message))
  return { url: `${base}/mcp`, child }
}

// 3. One scenario: the suite's checks (JSON on stdout with --verbose) and its verdict. `exe`
// is the client to run, or (server scenarios) `{ url }` of the server to test.
function runScenario(suite, exe, scenario) {
  return new Promise((resolve) => {
    // `--command` is split at spaces by the suite: pass the path as a single word.
    const target = typeof exe === 'string' ? ['client', '--command', exe] : ['server', '--url', exe.url]
    // Only the client command takes a timeout.
    const timeout = typeof exe === 'string' ? ['--timeout', '30000'] : []
    const child = spawn(suite.node, [suite.entry, ...target, '--scenario', scenario, ...timeout, '--verbose'], { cwd: SCRATCH, stdio: ['ignore', 'pipe', 'pipe'] })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => { out += d })
    child.stderr.on('data', (d) => { err += d })
    const limit = setTimeout(() => child.kill('SIGKILL'), 120_000)
    child.on('close', (code, signal) => {
      clearTimeout(limit)
      let checks = null
      try {
        // The server command prints a line before the checks and its results after them.
        checks = JSON.parse(out.slice(out.indexOf('['), out.lastIndexOf(']') + 1))
      } catch {}
      resolve({ code, signal, checks, stderr: err })
    })
  })
}

function judge(scenario, r) {
  const problems = []
  if (!Array.isArray(r.checks)) {
    problems.push(`the suite printed no checks (exit ${r.code ?? r.signal})`)
    return { problems, passed: 0, counted: 0, timingOnly: false }
  }
  const counted = r.checks.filter((c) => c.status === 'SUCCESS' || c.status === 'FAILURE')
  const passed = counted.filter((c) => c.status === 'SUCCESS').length
  const allowed = SERVER ? SERVER_ALLOWED_WARNINGS : {}
  const bad = r.checks.filter((c) => c.status === 'FAILURE' || (c.status === 'WARNING' && !allowed[c.id]))
  for (const c of bad) problems.push(`${c.status} ${c.id}: ${c.errorMessage ?? c.description}`)
  for (const id of APPLICABLE[scenario]) {
    if (!r.checks.some((c) => c.id === id && c.status === 'SUCCESS')) problems.push(`check ${id} did not pass`)
  }
  if (passed === 0) problems.push('no check passed (the client never reached the server?)')
  if (r.code !== 0) problems.push(`the suite exited with ${r.code ?? r.signal}`)
  const timingOnly = bad.length > 0 && bad.every((c) => TIMING_CHECKS.has(c.id))
    && APPLICABLE[scenario].every((id) => TIMING_CHECKS.has(id) || r.checks.some((c) => c.id === id && c.status === 'SUCCESS'))
  return { problems, passed, counted: counted.length, timingOnly }
}

if (SERVER) {
  // The same run, over the server scenarios.
  for (const key of Object.keys(APPLICABLE)) delete APPLICABLE[key]
  Object.assign(APPLICABLE, SERVER_APPLICABLE)
  NOT_APPLICABLE.splice(0, NOT_APPLICABLE.length, ...SERVER_NOT_APPLICABLE)
}
const suite = install()
const served = SERVER ? await startServer() : null
process.on('exit', () => served?.child.kill())
const exe = served ?? (process.env.MCP_CONFORMANCE_CLIENT || build())
const listed = clientScenarios(suite, SERVER)
const wanted = only.length ? only : Object.keys(APPLICABLE)
for (const s of wanted) {
  if (!APPLICABLE[s]) fail(`'${s}' is not a scenario this script runs (it runs ${Object.keys(APPLICABLE).join(', ')})`)
  if (!listed.includes(s)) fail(`the suite ${SUITE_VERSION} has no ${SIDE} scenario '${s}' (it lists ${listed.join(', ')})`)
}
const unexplained = listed.filter((s) => !APPLICABLE[s] && !NOT_APPLICABLE.some(([p]) => s.startsWith(p)))
if (unexplained.length) fail(`the suite lists ${SIDE} scenarios this script neither runs nor explains: ${unexplained.join(', ')}`)

say(`suite @modelcontextprotocol/conformance ${SUITE_VERSION} on Node ${suite.version}; ${SERVER ? `server ${exe.url}` : `client ${exe}`}`)
const results = []
for (const scenario of wanted) {
  let r = await runScenario(suite, exe, scenario)
  let verdict = judge(scenario, r)
  let retried = false
  if (verdict.problems.length && verdict.timingOnly) {
    say(`  ${scenario}: ${verdict.problems.join('; ')}; trying once more`)
    retried = true
    r = await runScenario(suite, exe, scenario)
    verdict = judge(scenario, r)
  }
  const ok = verdict.problems.length === 0
  results.push({ scenario, ok, passed: verdict.passed, checks: verdict.counted, retried, problems: verdict.problems })
  say(`${ok ? '✔' : '✖'} ${scenario.padEnd(38)} ${verdict.passed}/${verdict.counted} checks passed${retried ? ' (second run)' : ''}`)
  if (!ok) {
    for (const p of verdict.problems) say(`    ${p}`)
    say(`    the suite's stderr ends:\n${r.stderr.trim().split('\n').slice(-40).map((l) => `      ${l}`).join('\n')}`)
  }
}
const skipped = listed.filter((s) => !APPLICABLE[s])
for (const [prefix, why] of NOT_APPLICABLE) {
  const names = skipped.filter((s) => s.startsWith(prefix))
  if (names.length) say(`– not run: ${names.length} ${prefix}* scenarios (${why})`)
}
const total = results.reduce((n, r) => n + r.passed, 0)
const allOk = results.every((r) => r.ok) && total > 0
say(allOk
  ? `all ${results.length} applicable ${SIDE} scenarios passed: ${total} checks`
  : `FAILED: ${results.filter((r) => !r.ok).map((r) => r.scenario).join(', ') || 'no check passed'}`)
if (json) process.stdout.write(`${JSON.stringify({ suite: SUITE_VERSION, node: suite.version, results, notApplicable: skipped, ok: allOk }, null, 2)}\n`)
process.exit(allOk ? 0 : 1)

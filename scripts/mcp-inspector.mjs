#!/usr/bin/env node
// The MCP Inspector's CLI (`@modelcontextprotocol/inspector --cli`) drives `archmax mcp` over
// stdio and `archmax serve`'s /mcp over streamable HTTP, as a user checking a server would:
// it lists the tools and resources, reads a diagram, and runs the example's refund request to
// its park at the human review and the decision (a scripted model on 127.0.0.1 answers).
//
//   node scripts/mcp-inspector.mjs
//
// It installs the Inspector from npm into target/mcp-inspector/ (kept between runs) and uses
// the built addon (`npm run build`). Exits 1 on the first answer that is not what it should be.
import { spawn, spawnSync } from 'node:child_process'
import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { copyExample, refundAnswers, serveArchmax, sseEndpoint } from '../__test__/helpers.mjs'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const VERSION = '2.12.0'
const SCRATCH = join(ROOT, 'target/mcp-inspector')
const BIN = join(ROOT, 'bin/archmax.js')

function fail(message) {
  process.stderr.write(`mcp-inspector: ${message}\n`)
  process.exit(1)
}

// 1. The Inspector, from npm.
mkdirSync(SCRATCH, { recursive: true })
const pkg = join(SCRATCH, 'node_modules/@modelcontextprotocol/inspector/package.json')
const installed = existsSync(pkg) ? JSON.parse(readFileSync(pkg, 'utf8')).version : null
if (installed !== VERSION) {
  console.log(`installing @modelcontextprotocol/inspector@${VERSION} into ${SCRATCH}`)
  writeFileSync(join(SCRATCH, 'package.json'), `${JSON.stringify({ name: 'archmax-mcp-inspector', private: true, dependencies: { '@modelcontextprotocol/inspector': VERSION } }, null, 2)}\n`)
  const r = spawnSync('npm', ['install', '--no-audit', '--no-fund', '--loglevel=error'], { cwd: SCRATCH, stdio: 'inherit' })
  if (r.status !== 0) fail(`npm install failed (exit ${r.status})`)
}
const INSPECTOR = join(SCRATCH, 'node_modules/.bin/mcp-inspector')

// 2. A copy of the example and a scripted model: the refund request, parked, then approved
// (the tests' own helpers and script of that flow).
const ws = copyExample(mkdtempSync(join(tmpdir(), 'archmax-inspector-')))
const answers = refundAnswers()
const model = await sseEndpoint(() => {
  const next = answers.shift()
  if (next === undefined) throw new Error('the script ran out')
  return next
})
const env = { ARCHMAX_API_BASE_URL: model.url, ARCHMAX_MODEL: 'scripted', ARCHMAX_CLI_NO_BANNER: '1', NO_COLOR: '1' }

// 3. The Inspector's CLI, one method a run (a child process: the model answers on this loop).
const home = mkdtempSync(join(tmpdir(), 'archmax-inspector-home-'))
async function inspect(target, args) {
  const serverEnv = Object.entries(env).flatMap(([k, v]) => ['-e', `${k}=${v}`])
  const argv = ['--cli', ...(target === 'stdio' ? [...serverEnv, process.execPath, BIN, 'mcp', '--root', ws] : [target.url, '--header', `Authorization: Bearer ${target.token}`]), ...args]
  const child = spawn(INSPECTOR, argv, { env: { ...process.env, HOME: home }, stdio: ['ignore', 'pipe', 'pipe'] })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => (err += d))
  const code = await new Promise((resolve) => child.on('exit', resolve))
  try {
    return JSON.parse(out)
  } catch {
    fail(`${args.join(' ')}: exit ${code}, not JSON:\n${out}\n${err}`)
  }
}
function expect(what, ok, shown) {
  if (!ok) fail(`${what}: ${JSON.stringify(shown).slice(0, 600)}`)
  console.log(`✔ ${what}`)
}

const listed = await inspect('stdio', ['--method', 'tools/list'])
const names = (listed.tools ?? []).map((t) => t.name)
expect('stdio tools/list: a tool per trigger and the operations', ['order-lookup', 'order-lookup__email-received', 'enrich-order', 'decide', 'reply', 'deliver', 'sessions'].every((n) => names.includes(n)), names)
const resources = await inspect('stdio', ['--method', 'resources/list'])
expect('stdio resources/list: the diagrams', (resources.resources ?? []).some((r) => r.uri === 'archmax://workflows/order-lookup/diagram'), resources)
const diagram = await inspect('stdio', ['--method', 'resources/read', '--uri', 'archmax://workflows/order-lookup/diagram'])
expect('stdio resources/read: a Mermaid flowchart', diagram.contents?.[0]?.text?.startsWith('flowchart '), diagram)
const parked = await inspect('stdio', ['--method', 'tools/call', '--tool-name', 'order-lookup', '--tool-arg', 'message=Refund KK-2043, please.', 'session=insp-1'])
expect('stdio tools/call order-lookup: parked at the human review', parked.structuredContent?.kind === 'parked' && parked.structuredContent?.state === 'refund-review', parked)

// Over HTTP, behind a token that is an approver's.
const { base, child: serve } = await serveArchmax(ws, model.url, { ARCHMAX_SERVE_TOKENS: 'support-lead@kettleandkite.example=t-lead' }).catch((e) => fail(e.message))
process.on('exit', () => serve.kill())
const http = { url: `${base}/mcp`, token: 't-lead' }
const shown = await inspect(http, ['--method', 'tools/call', '--tool-name', 'sessions', '--tool-arg', 'session=insp-1'])
expect('http tools/call sessions: the parked session, one store', shown.structuredContent?.session?.park?.state === 'refund-review', shown)
const decided = await inspect(http, ['--method', 'tools/call', '--tool-name', 'decide', '--tool-arg', 'session=insp-1', 'target=refund-approved'])
expect('http tools/call decide (an approver): completed at refund-approved', decided.structuredContent?.kind === 'completed' && decided.structuredContent?.state === 'refund-approved', decided)
await model.close()
console.log('the MCP Inspector drove archmax mcp (stdio) and /mcp (HTTP) end to end')
process.exit(0)

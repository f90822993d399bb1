// The archmax command: runCli in process, and the bin as a real process.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createServer } from 'node:http'
import { join } from 'node:path'

import { runCli } from '@archmax-ai/harness'
import { runCli as runCliFromCli } from '@archmax-ai/harness/cli'
import { BROKEN_SPEC, EXAMPLE, ROOT, workspace } from './helpers.mjs'

const BIN = join(ROOT, 'bin', 'archmax.js')
const ENV = { ...process.env, NO_COLOR: '', ARCHMAX_CLI_NO_BANNER: '' }

function archmax(args, { via = 'node', cwd = ROOT, env = ENV } = {}) {
  const [cmd, argv] = via === 'npx' ? ['npx', ['--no-install', 'archmax', ...args]] : [process.execPath, [BIN, ...args]]
  const r = spawnSync(cmd, argv, { cwd, env, encoding: 'utf8' })
  return { code: r.status, out: r.stdout, err: r.stderr }
}

// In process only with outputs that go to stderr: stdout carries the test protocol.
test('runCli resolves to exit codes', async () => {
  assert.equal(runCliFromCli, runCli)
  assert.equal(await runCli(['validate', '--bogus']), 2)
  assert.equal(await runCli(['help', 'nope']), 2)
  assert.equal(await runCli(['nope']), 2)
  assert.equal(await runCli(['decide', 's1', '--to', 'done', '--workflow', 'w', '--root', EXAMPLE]), 1)
})

for (const via of ['node', 'npx']) {
  test(`validate through ${via}: a valid workflow`, () => {
    const r = archmax(['validate', 'order-lookup', '--root', 'examples/customer-support'], { via })
    assert.equal(r.code, 0, r.err)
    assert.equal(r.out, 'valid — 0 error(s), 0 warning(s)\n')
    assert.equal(r.err, `◆ order-lookup\n  directory  ${EXAMPLE}\n\n  ✔ no issues found\n\n`)
  })
}

test('validate: an invalid workflow exits 1 with located errors', () => {
  const root = workspace({ 'workflows/bad/workflow.yaml': BROKEN_SPEC })
  const r = archmax(['validate', '--root', root])
  assert.equal(r.code, 1)
  assert.equal(r.out, 'invalid — 1 error(s), 0 warning(s)\n')
  const lines = r.err.split('\n')
  assert.deepEqual(lines.slice(0, 3), ['◆ bad', `  directory  ${root}`, ''])
  assert.match(lines[3], /^ {2}✖ error {2}.*'nowhere' \[workflows\/bad\/workflow\.yaml:9:\d+\]$/)
  assert.deepEqual(lines.slice(4), ['', ''])
})

test('validate --json prints the result document', () => {
  const root = workspace({ 'workflows/bad/workflow.yaml': BROKEN_SPEC })
  const r = archmax(['validate', 'bad', '--json', '--root', root])
  assert.equal(r.code, 1)
  const doc = JSON.parse(r.out)
  assert.equal(r.out, JSON.stringify(doc, null, 2) + '\n')
  assert.deepEqual(Object.keys(doc), ['workflow', 'valid', 'diagnostics'])
  assert.equal(doc.workflow, 'bad')
  assert.equal(doc.valid, false)
  assert.equal(doc.diagnostics[0].field, 'states.start.transitions.0.to')
  assert.equal(doc.diagnostics[0].line, 9)
  const ok = archmax(['validate', 'order-lookup', '--json', '--root', EXAMPLE])
  assert.equal(ok.code, 0)
  assert.equal(ok.out, '{\n  "workflow": "order-lookup",\n  "valid": true,\n  "diagnostics": []\n}\n')
})

test('usage errors exit 2 with one line', () => {
  const r = archmax(['validate', '--bogus'])
  assert.deepEqual(r, { code: 2, out: '', err: "Error: Unknown option '--bogus' (try: archmax validate --help)\n" })
  const several = archmax(['validate', '--root', EXAMPLE])
  assert.equal(several.code, 2)
  assert.equal(
    several.err,
    'Error: a workflow is required; this workspace has several: enrich-order, order-lookup (try: archmax validate --help)\n',
  )
  const none = archmax([])
  assert.equal(none.code, 2)
  assert.ok(none.err.startsWith('Usage: archmax <command> [arguments] [options]\n'))
  assert.ok(none.err.endsWith("for a command's arguments and options.\n\nError: a command is required\n"))
})

test('help goes to stdout, identical both ways', () => {
  const a = archmax(['help', 'decide'])
  const b = archmax(['decide', '--help'])
  assert.equal(a.code, 0)
  assert.equal(a.out, b.out)
  assert.ok(a.out.startsWith('Usage: archmax decide <session> [options]\n'))
  for (const s of ['--to <state>', '--comment <text>', '--root <dir>']) assert.ok(a.out.includes(s), s)
  assert.equal(archmax(['--help']).out, archmax(['help']).out)
})

test('run without model credentials names every missing variable and the .env.example to copy', () => {
  const env = Object.fromEntries(Object.entries(ENV).filter(([k]) => !k.startsWith('ARCHMAX_API') && k !== 'ARCHMAX_MODEL'))
  const r = spawnSync(process.execPath, [BIN, 'run', 'order-lookup', 'hello', '--root', EXAMPLE], { cwd: ROOT, env, encoding: 'utf8' })
  assert.equal(r.status, 1)
  assert.equal(r.stdout, '')
  const example = join(EXAMPLE, '.env.example')
  assert.ok(
    r.stderr.endsWith(
      `Error: Missing required environment variables: ARCHMAX_API_BASE_URL, ARCHMAX_API_KEY, ARCHMAX_MODEL. Copy ${example} to ${join(EXAMPLE, '.env')} and fill it in. ARCHMAX_API_KEY may be left out for an endpoint on this machine (localhost, 127.0.0.1).\n`,
    ),
    r.stderr,
  )
  assert.ok(!r.stderr.includes('archmax failed'), r.stderr)
  assert.ok(readFileSync(example, 'utf8').includes('ARCHMAX_API_BASE_URL='), 'the file the message points to exists')
  const bad = archmax(['run', 'order-lookup', 'hi', '--variables', '[1]', '--root', EXAMPLE])
  assert.equal(bad.code, 2)
})

test('park commands check their arguments, then the session record, without the model env', () => {
  const env = Object.fromEntries(Object.entries(ENV).filter(([k]) => !k.startsWith('ARCHMAX_API') && k !== 'ARCHMAX_MODEL'))
  const r = archmax(['decide', 's1', '--to', 'done', '--root', EXAMPLE], { env })
  assert.deepEqual(r, { code: 1, out: '', err: "Error: no durable session 's1'. Use 'archmax sessions' to list them.\n" })
  const noTo = archmax(['decide', 's1', '--workflow', 'order-lookup', '--root', EXAMPLE])
  assert.deepEqual(noTo, { code: 2, out: '', err: 'Error: --to <state> is required (the target the person picks) (try: archmax decide --help)\n' })
  const t = archmax(['test', 'order-lookup', 'x', '--root', EXAMPLE])
  assert.deepEqual([t.code, t.out], [1, ''])
  assert.ok(t.err.endsWith("Error: no cases matched 'x' (4 discovered)\n"), t.err)
})

/** Runs the CLI without blocking this process's event loop (the model server lives here). */
function archmaxAsync(args, env) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('close', (code) => resolve({ code, out, err }))
  })
}

test('run: a governed turn against an OpenAI-compatible server, then sessions', async () => {
  const replies = [
    { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'write_file', arguments: JSON.stringify({ file_path: 'scratchpad/n.md', content: 'hi' }) } }] },
    { role: 'assistant', content: 'All done.' },
  ]
  const bodies = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      bodies.push(JSON.parse(body))
      const message = replies.shift()
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: 'm', choices: [{ index: 0, message, finish_reason: 'stop' }], usage: { prompt_tokens: 1200, completion_tokens: 30 } }))
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  try {
    const root = workspace({ 'workflows/w/workflow.yaml': 'instructions: Help.\nstates:\n  a:\n    triggers: { manual: }\n' })
    const env = { ...ENV, ARCHMAX_API_BASE_URL: `http://127.0.0.1:${server.address().port}/v1`, ARCHMAX_API_KEY: 'k', ARCHMAX_MODEL: 'm' }
    const r = await archmaxAsync(['run', 'w', 'note', 'this', '--session', 's1', '--root', root], env)
    assert.equal(r.code, 0, r.err)
    assert.equal(r.out, 'All done.\n')
    assert.ok(r.err.includes('● a\n'), r.err)
    assert.ok(r.err.includes('    › write_file'), r.err)
    assert.ok(r.err.includes('tokens     in 2,400 · out 60 · cache r 0/w 0'), r.err)
    assert.equal(bodies.length, 2)
    assert.equal(bodies[0].messages.at(-1).content, 'note this')
    assert.equal(readFileSync(join(root, 'sessions/s1/scratchpad/n.md'), 'utf8'), 'hi')
    const list = await archmaxAsync(['sessions', '--json', '--root', root], ENV)
    assert.equal(list.code, 0, list.err)
    const [s] = JSON.parse(list.out)
    assert.equal(s.sessionId, 's1')
    assert.equal(s.status, 'completed')
  } finally {
    server.close()
  }
})

// The README's "Next steps" run as written (commands extracted from the README, not copied):
// init, validate, cp, run against a scripted OpenAI-compatible server on 127.0.0.1, decide.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs'
import { createServer } from 'node:http'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { copyExample, EXAMPLE, ROOT } from './helpers.mjs'

/** The shell lines of the README's `### Next steps` code blocks, in order. */
function nextSteps() {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const start = readme.indexOf('### Next steps')
  assert.ok(start > 0, 'the README has a Next steps section')
  const end = readme.indexOf('\n## ', start)
  const section = readme.slice(start, end)
  const lines = []
  for (const [, block] of section.matchAll(/```sh\n([^]*?)```/g)) {
    for (const line of block.split('\n')) if (line.trim() && !line.trim().startsWith('#')) lines.push(line.trim())
  }
  return lines
}

/** A project that installed the package: `npx archmax` resolves to this build. */
function project() {
  const dir = mkdtempSync(join(tmpdir(), 'archmax-readme-'))
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'newcomer', private: true, type: 'module' }))
  mkdirSync(join(dir, 'node_modules/@archmax-ai'), { recursive: true })
  mkdirSync(join(dir, 'node_modules/.bin'), { recursive: true })
  symlinkSync(ROOT, join(dir, 'node_modules/@archmax-ai/harness'), 'dir')
  symlinkSync(join(ROOT, 'bin/archmax.js'), join(dir, 'node_modules/.bin/archmax'))
  return dir
}

function sh(line, cwd, env) {
  return new Promise((resolve) => {
    const child = spawn('bash', ['-c', line], { cwd, env })
    let out = ''
    let err = ''
    child.stdout.on('data', (d) => (out += d))
    child.stderr.on('data', (d) => (err += d))
    child.on('close', (code) => resolve({ code, out, err }))
  })
}

const call = (id, name, args) => ({ role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name, arguments: JSON.stringify(args) } }] })

test("the README's next steps run as written", async () => {
  const replies = [
    call('c1', 'write_file', { file_path: 'scratchpad/answer.md', content: 'Thank you, team.' }),
    call('c2', 'archmax_advance', { to: 'review', reason: 'drafted' }),
    { role: 'assistant', content: 'Your note waits for review.' },
    { role: 'assistant', content: 'Approved: Thank you, team.' },
  ]
  const seen = []
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (d) => (body += d))
    req.on('end', () => {
      seen.push({ auth: req.headers.authorization, body: JSON.parse(body) })
      const message = replies.shift() ?? { role: 'assistant', content: 'ok' }
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: 'm', choices: [{ index: 0, message, finish_reason: 'stop' }], usage: { prompt_tokens: 10, completion_tokens: 2 } }))
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  const port = server.address().port
  const cwd = project()
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARCHMAX_')))
  Object.assign(env, { ARCHMAX_CLI_NO_BANNER: '1', NO_COLOR: '1', npm_config_update_notifier: 'false' })
  try {
    const lines = nextSteps()
    const kinds = lines.map((l) => l.split(' ').slice(0, 3).join(' '))
    assert.deepEqual(
      kinds.filter((k) => k.startsWith('npx archmax')).map((k) => k.split(' ')[2]),
      ['init', 'validate', 'run', 'decide'],
      'init, then run against an endpoint, then decide',
    )
    let session = null
    for (const written of lines) {
      if (written.startsWith('export ')) {
        // The README's local endpoint, with the scripted server's port.
        for (const pair of written.slice('export '.length).split(/\s+/)) {
          const [k, v] = pair.split('=')
          env[k] = v.replace(/127\.0\.0\.1:\d+/, `127.0.0.1:${port}`)
        }
        assert.equal(env.ARCHMAX_API_BASE_URL, `http://127.0.0.1:${port}/v1`, 'a loopback endpoint')
        assert.equal(env.ARCHMAX_API_KEY, undefined, 'no key for a local server')
        continue
      }
      const line = written.replace('<session>', session ?? '<session>')
      const r = await sh(line, cwd, env)
      assert.equal(r.code, 0, `${line}\n${r.err}`)
      const verb = line.split(' ')[2]
      if (verb === 'validate') assert.match(r.out, /^valid — 0 error\(s\), 0 warning\(s\)\n$/)
      if (line.startsWith('cp ')) assert.ok(existsSync(join(cwd, 'my-workspace/.env')))
      if (verb === 'run') {
        assert.ok(r.err.includes('⚠ awaiting human decision'), r.err)
        session = /Session (\S+) is parked at the 'review' human state/.exec(r.err)?.[1] ?? null
        assert.ok(session, r.err)
        assert.ok(r.err.includes(`files     sessions/${session}/scratchpad/answer.md`), r.err)
        assert.equal(readFileSync(join(cwd, 'my-workspace/sessions', session, 'scratchpad/answer.md'), 'utf8'), 'Thank you, team.')
      }
      if (verb === 'decide') {
        assert.equal(r.out, 'Approved: Thank you, team.\n')
        assert.ok(r.err.startsWith('◆ hello\n'), r.err)
      }
    }
    assert.ok(session, 'the run step ran')
    assert.equal(seen.length, 4)
    assert.equal(seen[0].body.model, 'llama3.1')
  } finally {
    server.close()
  }
})

/** Every file under `dir` (relative path → its bytes as text), for a before/after comparison. */
function tree(dir, at = '') {
  const out = {}
  for (const name of readdirSync(join(dir, at)).sort()) {
    const rel = at ? `${at}/${name}` : name
    if (statSync(join(dir, rel)).isDirectory()) Object.assign(out, { [`${rel}/`]: '' }, tree(dir, rel))
    else out[rel] = readFileSync(join(dir, rel), 'latin1')
  }
  return out
}

// The README's main job, as written, on a copy of the example: every case of the suite passes
// from its committed cassette with no ARCHMAX_* variable at all, and the checkout is left as it
// was found (the cases' sessions run in a temporary store, not the example's sessions/).
test("the README's main job runs the example's cases offline from their cassettes", async () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const start = readme.indexOf('**Run the main job**')
  const block = readme.slice(start).match(/```sh\n([^]*?)```/)[1].trim()
  const job = block.split('&&').map((s) => s.trim()).find((s) => s.startsWith('npx archmax'))
  assert.equal(job, 'npx archmax test order-lookup --root examples/customer-support --replay')
  const cwd = project()
  const example = copyExample(join(cwd, 'examples/customer-support'))
  const before = tree(example)
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('ARCHMAX_')))
  Object.assign(env, { ARCHMAX_CLI_NO_BANNER: '1', NO_COLOR: '1', npm_config_update_notifier: 'false' })
  const r = await sh(job, cwd, env)
  assert.ok(!existsSync(join(example, 'sessions')), 'no sessions/ is left in the example')
  assert.deepEqual(Object.keys(tree(example)), Object.keys(before), 'no file is added or removed')
  assert.deepEqual(tree(example), before, 'no file changes')
  assert.equal(r.code, 0, r.err)
  assert.equal(r.out.trim(), '4 passed, 0 failed, 0 skipped')
  for (const id of ['email-refund-rejected', 'order-status-delayed', 'refund-approved', 'refund-draft-completed']) {
    assert.ok(r.err.includes(`✔ ${id} —`), `${id} passed:\n${r.err}`)
  }
  // The live flow: a park, the decision on it, a sub-workflow.
  assert.ok(r.err.includes('awaiting human decision at refund-review'), r.err)
  assert.ok(r.err.includes("sub-workflow 'enrich-order' done"), r.err)
  assert.ok(r.err.includes('replayed from each case'), r.err)
})

test("the README's governance matrix of the example is what archmax tools prints", async () => {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const command = '$ npx archmax tools order-lookup --root examples/customer-support\n'
  const start = readme.indexOf(command)
  assert.ok(start > 0, 'the README shows the example\'s governance matrix')
  const shown = readme.slice(start + command.length, readme.indexOf('\n```', start))
  const printed = await sh(`node ${join(ROOT, 'bin/archmax.js')} tools order-lookup --root ${EXAMPLE}`, ROOT, {
    ...process.env,
    NO_COLOR: '1',
    ARCHMAX_CLI_NO_BANNER: '1',
  })
  assert.equal(printed.code, 0, printed.out)
  assert.equal(printed.out.replaceAll(EXAMPLE, '…/examples/customer-support').trimEnd(), shown.trimEnd())
})

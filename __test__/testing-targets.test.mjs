// `@archmax-ai/harness/testing` beyond runTests: the tool-mock middleware and the capability
// gate, case targets, runCase, serializeCaseDocument, and a cassette per case from JS
// (record against the scripted server, replay with no model and no ARCHMAX_* variable).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join, relative } from 'node:path'

import { createAgent } from '@archmax-ai/harness'
import {
  CaseSchemaError,
  assertWorkflowGovernedTarget,
  createCaseTarget,
  createToolMockMiddleware,
  discoverCases,
  parseCaseDocument,
  runCase,
  runTests,
  serializeCaseDocument,
} from '@archmax-ai/harness/testing'
import { ROOT, approvedCaseAnswers, copyExample, exampleSuiteServer, say } from './helpers.mjs'

// Replays must not lean on an endpoint: no ARCHMAX_* variable reaches this process's agents.
for (const k of Object.keys(process.env)) if (k.startsWith('ARCHMAX_')) delete process.env[k]

const WORKFLOW = 'order-lookup'
const APPROVED = 'workflows/order-lookup/tests/refund-approved.test.yaml'

function example() {
  return copyExample(mkdtempSync(join(tmpdir(), 'archmax-targets-')))
}

/** A model that must not be asked. */
const untouchable = async () => {
  throw new Error('the model was asked')
}

/** The JS model of the refund-approved case: its answers in order, the rubric `ok`. */
function approvedModel() {
  const answers = approvedCaseAnswers()
  return async (_request, info) => {
    if (info?.role === 'rubric') return say('{"verdict": "ok", "reason": "accurate"}')
    const next = answers.shift()
    if (next === undefined) throw new Error('the script ran out')
    return next
  }
}

const gate = (n) =>
  `this case declares ${n} tool mock(s), but the target agent cannot intercept agent-initiated tool calls (interception would be partial: scripts' PTC calls mocked, the agent's own calls real). Wire createToolMockMiddleware() into the target's middleware, or set toolMocks on a target that intercepts by other means.`

test('createToolMockMiddleware is a frozen marker; createAgent sets toolMocks from it and refuses any other middleware', async () => {
  const root = example()
  const marker = createToolMockMiddleware()
  assert.equal(marker.name, 'ToolMockMiddleware')
  assert.ok(Object.isFrozen(marker))
  const wired = await createAgent({ workflow: WORKFLOW, workspace: { rootDir: root }, model: untouchable, middleware: [marker] })
  const bare = await createAgent({ workflow: WORKFLOW, workspace: { rootDir: root }, model: untouchable })
  assert.equal(wired.toolMocks, true)
  assert.equal(bare.toolMocks, false)
  wired.dispose()
  bare.dispose()
  await assert.rejects(
    createAgent({ workflow: WORKFLOW, workspace: { rootDir: root }, model: untouchable, middleware: [marker, { name: 'SummarizationMiddleware', wrapModelCall() {} }] }),
    (e) =>
      e instanceof TypeError &&
      e.message.startsWith("middleware[1] ('SummarizationMiddleware') cannot run inside createAgent") &&
      e.message.includes('@archmax-ai/harness/deepagents'),
  )
  await assert.rejects(createAgent({ workflow: WORKFLOW, workspace: { rootDir: root }, model: untouchable, middleware: marker }), {
    name: 'TypeError',
    message: "'middleware' must be an array, got an object",
  })
})

test('the capability gate: a target without the tool-mock middleware fails every case declaring mocks before it runs', async () => {
  const root = example()
  const started = []
  const host = await createAgent({ workflow: WORKFLOW, workspace: { rootDir: root }, model: untouchable })
  const result = await runTests({ workflow: WORKFLOW, rootDir: root, createTarget: host, onCaseStart: (f, s) => started.push([f, s]) })
  host.dispose()
  assert.equal(result.exitCode, 1)
  const texts = discoverCases({ workflow: WORKFLOW, rootDir: root }).map((f) => parseCaseDocument(f, readFileSync(join(root, f), 'utf8')))
  assert.equal(result.results.length, 4)
  assert.deepEqual(
    texts.map((d) => d.mocks?.length ?? 0),
    [1, 0, 1, 1],
  )
  for (const [i, r] of result.results.entries()) {
    const n = texts[i].mocks?.length ?? 0
    if (n === 0) {
      // A case without mocks is not gated: it runs (and this model fails it).
      assert.notEqual(r.error, gate(0))
      assert.match(r.turnError ?? '', /the model was asked/)
      continue
    }
    assert.equal(r.error, gate(n))
    assert.deepEqual(r.verdict, { status: 'failed', failures: [gate(n)] })
    assert.ok(r.records.length > 0 && r.records.every((x) => x.status === 'not-executed'), JSON.stringify(r.records))
    assert.equal(started[i][1], r.sessionId, 'the case is shown on its session')
  }
})

test('the same case passes on a host target that wires the middleware', async () => {
  const root = example()
  const host = await createAgent({ workflow: WORKFLOW, workspace: { rootDir: root }, model: approvedModel(), middleware: [createToolMockMiddleware()] })
  const result = await runTests({ workflow: WORKFLOW, rootDir: root, filter: 'refund-approved', createTarget: () => host })
  assert.deepEqual(result.results[0].verdict, { status: 'passed', failures: [] }, JSON.stringify(result.results[0]))
  // The host's agent is still its own.
  assert.ok(Array.isArray(await host.sessions.list()))
  host.dispose()
})

test('assertWorkflowGovernedTarget refuses a plain agent, and runTests refuses one the same way', async () => {
  const root = example()
  const plain = await createAgent({ workflow: false, workspace: { rootDir: root }, model: untouchable })
  const refusal = { name: 'Error', message: "Case target 'order-lookup' has no workflow machine; cases require a workflow-governed agent." }
  assert.throws(() => assertWorkflowGovernedTarget(plain, WORKFLOW), refusal)
  await assert.rejects(runTests({ workflow: WORKFLOW, rootDir: root, createTarget: plain }), refusal)
  await assert.rejects(runCase({ agent: plain, file: APPROVED }), refusal)
  plain.dispose()
  const governed = await createAgent({ workflow: WORKFLOW, workspace: { rootDir: root }, model: untouchable })
  assert.doesNotThrow(() => assertWorkflowGovernedTarget(governed, WORKFLOW))
  governed.dispose()
})

test('createCaseTarget: a governed agent with toolMocks; a bad cassettes mode is refused', async () => {
  const root = example()
  const target = await createCaseTarget({ workflow: WORKFLOW, rootDir: root, model: untouchable })
  assert.equal(target.toolMocks, true)
  assert.equal(typeof target.workflow.send, 'function')
  target.dispose()
  await assert.rejects(createCaseTarget({ workflow: WORKFLOW, rootDir: root, cassettes: 'live' }), {
    name: 'TypeError',
    message: "'cassettes' must be 'record' or 'replay', got 'live'",
  })
  await assert.rejects(createCaseTarget({ rootDir: root }), { name: 'TypeError', message: "createCaseTarget needs a 'workflow' slug" })
  await assert.rejects(runTests({ workflow: WORKFLOW, rootDir: root, cassettes: 'replay', createTarget: target }), /'cassettes' applies to the default target/)
})

test('runCase: one case file on a host agent, which stays usable; a parse error is the failed result, nothing runs', async () => {
  const root = example()
  const agent = await createCaseTarget({ workflow: WORKFLOW, rootDir: root, cassettes: 'replay' })
  const [file] = discoverCases({ workflow: WORKFLOW, rootDir: root }).filter((f) => f.includes('refund-approved'))
  const result = await runCase({ agent, file, sessionId: 'one-case' })
  assert.equal(result.id, 'refund-approved')
  assert.equal(result.sessionId, 'one-case')
  assert.deepEqual(result.verdict, { status: 'passed', failures: [] }, JSON.stringify(result))
  // The original's shape; the agent is not disposed between calls.
  const again = await runCase({ agent, discovered: { file: 'workflows/order-lookup/tests/order-status-delayed.test.yaml' } })
  assert.equal(again.verdict.status, 'passed', JSON.stringify(again))
  assert.match(again.sessionId, /^test-default-test-run-\d+-workflows-order-lookup-tests-order-status-delayed\.test\.yaml$/)
  const broken = await runCase({ agent, discovered: { file: 'workflows/order-lookup/tests/broken.test.yaml', parseError: 'broken: title is required' } })
  assert.deepEqual(broken, {
    id: 'workflows/order-lookup/tests/broken.test.yaml',
    file: 'workflows/order-lookup/tests/broken.test.yaml',
    verdict: { status: 'failed', failures: ['broken: title is required'] },
    records: [],
    error: 'broken: title is required',
  })
  const missing = await runCase({ agent, file: 'workflows/order-lookup/tests/none.test.yaml' })
  assert.equal(missing.verdict.status, 'failed')
  assert.match(missing.error, /^workflows\/order-lookup\/tests\/none\.test\.yaml: cannot read the case file: /)
  // An exact selection reads nothing outside the suite.
  const outside = await runCase({ agent, file: 'workflows/order-lookup/tests/../../enrich-order/workflow.test.yaml' })
  assert.equal(
    outside.error,
    "workflows/order-lookup/tests/../../enrich-order/workflow.test.yaml: not a case file of workflow 'order-lookup' (workflows/order-lookup/tests/<name>.test.yaml)",
  )
  await assert.rejects(runCase({ agent, file, workflow: 'enrich-order' }), { name: 'TypeError', message: /is not a case of workflow 'enrich-order'/ })
  await assert.rejects(runCase({ agent, file, caseTimeoutMs: 0 }), { name: 'TypeError' })
  assert.ok(Array.isArray(await agent.sessions.list()))
  agent.dispose()
})

test("runCase's caseTimeoutMs outranks the spec's: a case whose model never answers dies on it", async () => {
  const root = example()
  const never = () => new Promise(() => {})
  const agent = await createCaseTarget({ workflow: WORKFLOW, rootDir: root, model: never })
  const late = await runCase({ agent, file: APPROVED, caseTimeoutMs: 200 })
  assert.equal(late.error, "case 'refund-approved' timed out after 200ms (tests.caseTimeoutMs)")
  assert.ok(late.records.every((x) => x.status === 'not-executed'))
  agent.dispose()
})

/** Every case file of the repository (the example's and the fixtures'), workspace-relative to ROOT. */
function repositoryCases() {
  const out = []
  const walk = (dir) => {
    for (const name of readdirSync(dir)) {
      if (['node_modules', 'target', '.git', 'sessions'].includes(name)) continue
      const p = join(dir, name)
      if (statSync(p).isDirectory()) walk(p)
      else if (/\.test\.ya?ml$/.test(name)) out.push(p)
    }
  }
  for (const dir of ['examples', 'tests', 'crates', '__test__']) if (existsSync(join(ROOT, dir))) walk(join(ROOT, dir))
  return out.sort()
}

test('serializeCaseDocument is the inverse of parseCaseDocument on every case file of the repository', () => {
  const files = repositoryCases()
  assert.ok(files.length >= 4, files.join('\n'))
  let checked = 0
  for (const path of files) {
    let doc
    try {
      doc = parseCaseDocument(relative(ROOT, path), readFileSync(path, 'utf8'))
    } catch (e) {
      if (e instanceof CaseSchemaError) continue
      throw e
    }
    const text = serializeCaseDocument(doc)
    assert.deepEqual(parseCaseDocument(doc.file, text), doc, `${relative(ROOT, path)}\n${text}`)
    checked += 1
  }
  assert.ok(checked >= 4)
})

test('serializeCaseDocument quotes what would read as something else, writes keys in order, and refuses a non-case', () => {
  for (const s of ['yes', '123', "'123'", 'a: b', '  leading', 'trailing ', '# hash', 'a #b', 'two\nlines\n', 'no end\nnewline', 'ünïcödé — ✓ 日本', '', 'null', '~', '- dash', '{x}', 'tab\there']) {
    const doc = { title: 'Quoting', description: 'Strings survive.', variables: { v: s, n: 3, f: 84.5, t: true, z: null }, steps: [{ send: s || 'hi' }, { reply: { includes: s } }] }
    assert.deepEqual(parseCaseDocument('q.test.yaml', serializeCaseDocument(doc)), { file: 'q.test.yaml', id: 'q', ...doc }, JSON.stringify(s))
  }
  const text = serializeCaseDocument({
    id: 'a',
    file: 'workflows/w/tests/a.test.yaml',
    steps: [{ send: 'hi' }, { succeeded: true }],
    mocks: [{ name: 'crm', result: 'ok' }],
    title: 'A case',
    description: 'Asks.',
  })
  assert.equal(text, 'title: A case\ndescription: Asks.\nmocks:\n  - tool: crm\n    result: ok\nsteps:\n  - send: hi\n  - succeeded: true\n')
  assert.throws(() => serializeCaseDocument({ title: 'T', steps: [{ send: 'x' }] }), (e) => e instanceof CaseSchemaError && /'description' is required/.test(e.message))
  assert.throws(() => serializeCaseDocument('title: x'), { name: 'TypeError' })
})

test("runTests({ cassettes: 'replay' }) passes the example's four cases with no model and no ARCHMAX_* variable", async () => {
  const root = example()
  const result = await runTests({ workflow: WORKFLOW, rootDir: root, cassettes: 'replay' })
  assert.equal(result.exitCode, 0, JSON.stringify(result.results.map((r) => [r.id, r.verdict, r.error])))
  assert.deepEqual(
    result.results.map((r) => [r.id, r.verdict.status]),
    [
      ['email-refund-rejected', 'passed'],
      ['order-status-delayed', 'passed'],
      ['refund-approved', 'passed'],
      ['refund-draft-completed', 'passed'],
    ],
  )
})

test('nothing to run builds no target: a filter matching no case (a failure, as for the CLI), an empty suite, a disabled workflow', async () => {
  const root = example()
  const never = () => {
    throw new Error('a target was built')
  }
  // No model and no ARCHMAX_* variable: building the default target would fail.
  const unmatched = { results: [], exitCode: 1, discovered: 4, error: "no cases matched 'no-such-case' (4 discovered)" }
  assert.deepEqual(await runTests({ workflow: WORKFLOW, rootDir: root, filter: 'no-such-case' }), unmatched)
  assert.deepEqual(await runTests({ workflow: WORKFLOW, rootDir: root, filter: 'no-such-case', createTarget: never }), unmatched)
  rmSync(join(root, 'workflows', WORKFLOW, 'tests'), { recursive: true })
  assert.deepEqual(await runTests({ workflow: WORKFLOW, rootDir: root }), { results: [], exitCode: 0, discovered: 0 })
  const spec = join(root, 'workflows', WORKFLOW, 'workflow.yaml')
  writeFileSync(spec, `disabled: true\n${readFileSync(spec, 'utf8')}`)
  assert.deepEqual(await runTests({ workflow: WORKFLOW, rootDir: root, createTarget: never }), {
    results: [],
    exitCode: 0,
    discovered: 0,
    skipped: 'disabled',
  })
})

test('a case whose cassette is missing dies with the CLI message', async () => {
  const root = example()
  rmSync(join(root, 'workflows/order-lookup/tests/order-status-delayed.cassette.json'))
  const result = await runTests({ workflow: WORKFLOW, rootDir: root, cassettes: 'replay', filter: 'order-status' })
  const [r] = result.results
  assert.equal(r.error, "no cassette workflows/order-lookup/tests/order-status-delayed.cassette.json for case workflows/order-lookup/tests/order-status-delayed.test.yaml: record it with 'archmax test --record'")
  assert.equal(r.verdict.status, 'failed')
  assert.ok(r.records.every((x) => x.status === 'not-executed'))
})

test("cassettes: 'record' against the scripted server, then 'replay' gives the same verdicts", async () => {
  const root = example()
  const tests = join(root, 'workflows/order-lookup/tests')
  for (const name of readdirSync(tests)) if (name.endsWith('.cassette.json')) rmSync(join(tests, name))
  const server = await exampleSuiteServer()
  let recorded
  try {
    // The endpoint is the workspace's `.env`: nothing of this process's environment.
    writeFileSync(join(root, '.env'), `ARCHMAX_API_BASE_URL=${server.url}\nARCHMAX_API_KEY=scripted\nARCHMAX_MODEL=scripted-model\n`)
    recorded = await runTests({ workflow: WORKFLOW, rootDir: root, cassettes: 'record' })
    assert.equal(server.left(), 0)
  } finally {
    await server.close()
  }
  rmSync(join(root, '.env'))
  const verdicts = (r) => r.results.map((c) => [c.id, c.verdict])
  assert.equal(recorded.exitCode, 0, JSON.stringify(verdicts(recorded)))
  const tapes = readdirSync(tests).filter((n) => n.endsWith('.cassette.json')).sort()
  assert.deepEqual(tapes, ['email-refund-rejected', 'order-status-delayed', 'refund-approved', 'refund-draft-completed'].map((n) => `${n}.cassette.json`))
  assert.equal(JSON.parse(readFileSync(join(tests, tapes[0]), 'utf8')).defaultModel, 'scripted-model')
  const replayed = await runTests({ workflow: WORKFLOW, rootDir: root, cassettes: 'replay' })
  assert.deepEqual(verdicts(replayed), verdicts(recorded))
})

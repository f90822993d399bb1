// `@archmax-ai/harness/testing`: the example workspace's own cases run by `runTests` under a
// JS model function (the judge and the rubric answered by role), the callbacks, the result
// shapes, and the case-document helpers.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import {
  CASE_DESCRIPTION_MAX_LENGTH,
  CASE_TITLE_MAX_LENGTH,
  CaseSchemaError,
  discoverCases,
  exitCodeForVerdict,
  parseCaseDocument,
  partialMatch,
  reduceVerdict,
  runTests,
} from '@archmax-ai/harness/testing'
import { createFilesystemSessionStore } from '@archmax-ai/harness'
import { copyExample, EXAMPLE, ROOT, advance, approvedCaseAnswers, call, delayedCaseAnswers, exampleSuiteAnswers, say, tools, workspace } from './helpers.mjs'

/** A fresh copy of the example workspace. */
function example() {
  const dir = mkdtempSync(join(tmpdir(), 'archmax-testing-'))
  copyExample(dir)
  return dir
}

/** A model answering the agent from `answers` in order, the rubric `ok` and the judge `verdict`. */
function byRole(answers, verdict = { score: 0.9, pass: true, reason: 'fine' }) {
  const roles = []
  const judged = []
  const model = async (request, info) => {
    roles.push(info?.role ?? 'agent')
    if (info?.role === 'rubric') return say('{"verdict": "ok", "reason": "accurate"}')
    if (info?.role === 'judge') {
      judged.push(request)
      return say(JSON.stringify(verdict))
    }
    const next = answers.shift()
    if (next === undefined) throw new Error('the script ran out')
    return next
  }
  return { model, roles, judged }
}

const APPROVED = approvedCaseAnswers()

const DELAYED = delayedCaseAnswers()

test("the example's delayed-order case runs under a JS model: routing, the rubric hook, the judge in its role", async () => {
  const root = example()
  const { model, roles, judged } = byRole([...DELAYED])
  const started = []
  const ended = []
  const events = []
  const result = await runTests({
    workflow: 'order-lookup',
    rootDir: root,
    filter: 'order-status-delayed.test.yaml',
    model,
    onEvent: (e) => events.push(e),
    onCaseStart: (file, sessionId) => started.push([file, sessionId]),
    onCaseResult: (r) => ended.push(r.id),
  }).catch((e) => e)
  // A filter naming one file runs that case only (the approval case is its own run below).
  assert.equal(result.exitCode, 0, JSON.stringify(result.results?.[0], null, 2))
  assert.equal(result.discovered, 4)
  const [delayed] = result.results
  assert.equal(delayed.id, 'order-status-delayed')
  assert.equal(delayed.title, 'Delayed order gets status and new estimate')
  assert.deepEqual(delayed.verdict, { status: 'passed', failures: [] })
  assert.deepEqual(
    delayed.records.map((r) => [r.kind, r.status]),
    [
      ['reachedState', 'passed'],
      ['calledTool', 'passed'],
      ['succeeded', 'passed'],
      ['notCalledTool', 'passed'],
      ['reply.includes', 'passed'],
      ['reply.includes', 'passed'],
      ['grade.closedQA', 'passed'],
    ],
  )
  assert.deepEqual(delayed.records[6], {
    kind: 'grade.closedQA',
    threshold: 0.7,
    status: 'passed',
    score: 0.9,
    detail: 'The reply says the order is delayed, gives the new estimated delivery date, and apologises without blaming anyone.: fine',
    step: 6,
  })
  // The rubric after-hook and the judge were asked in their roles; the judge saw the evidence.
  assert.ok(roles.includes('rubric') && roles.includes('judge'), roles.join(','))
  const human = judged[0].messages.at(-1).content
  assert.match(human, /^Criterion: The reply says the order is delayed/)
  assert.match(human, /\n\nFinal reply to the user:\nOrder KK-2043 is delayed at the carrier; the new estimate is 12 March\. Sorry for the wait\.$/)
  assert.deepEqual(started, [['workflows/order-lookup/tests/order-status-delayed.test.yaml', delayed.sessionId]])
  assert.deepEqual(ended, ['order-status-delayed'])
  assert.ok(events.some((e) => e.event?.type === 'state-enter' || e.type === 'state-enter'), 'the case session events reach onEvent')
  assert.ok(!events.some((e) => e.type === 'case-start' || e.type === 'case-result'), 'progress markers are not events')
})

test('the approval case: the mocked enrich-order answers, the run parks at refund-review and is approved', async () => {
  const root = example()
  const { model } = byRole([...APPROVED])
  const result = await runTests({
    workflow: 'order-lookup',
    rootDir: root,
    filter: 'refund-approved',
    model,
    sessionIdForCase: (file) => `case-${file.split('/').at(-1).replace('.test.yaml', '')}`,
    keep: true,
  })
  const [approved] = result.results
  assert.equal(approved.sessionId, 'case-refund-approved')
  assert.deepEqual(approved.verdict, { status: 'passed', failures: [] }, JSON.stringify(approved, null, 2))
  assert.deepEqual(
    approved.records.map((r) => `${r.kind}:${r.status}:${r.detail ?? ''}`),
    [
      'reachedState:passed:refund-request',
      'ranWorkflow:passed:enrich-order (ok)',
      'variables:passed:order_id: expected "KK-2047", got "KK-2047"',
      'parked:passed:decision in refund-review',
      'reachedState:passed:refund-approved',
      'calledTool:passed:mcp__shop__issue_refund',
      'succeeded:passed:',
      'reply.includes:passed:KK-2047',
    ],
  )
  // The confirmation note was written in the case's session, in the store `keep` kept.
  const note = readFileSync(join(result.sessionsKept, 'case-refund-approved', 'outbox', 'refund-KK-2047.md'), 'utf8')
  assert.match(note, /KK-2047/)
  assert.ok(!existsSync(join(root, 'sessions')))
  rmSync(result.sessionsKept, { recursive: true, force: true })
})

/** The agent's side of a refund proposal for `order` that parks at refund-review. */
test("the example workspace's whole suite passes under a JS model, live callbacks in order", async () => {
  const root = example()
  const { model, roles } = byRole(exampleSuiteAnswers())
  const order = []
  const result = await runTests({
    workflow: 'order-lookup',
    rootDir: root,
    model,
    onCaseStart: (file) => order.push(`start ${file.split('/').at(-1)}`),
    onCaseResult: (r) => order.push(`end ${r.id} ${r.verdict.status}`),
  })
  assert.equal(result.exitCode, 0, JSON.stringify(result.results.filter((r) => r.verdict.status !== 'passed'), null, 2))
  assert.deepEqual(order, [
    'start email-refund-rejected.test.yaml',
    'end email-refund-rejected passed',
    'start order-status-delayed.test.yaml',
    'end order-status-delayed passed',
    'start refund-approved.test.yaml',
    'end refund-approved passed',
    'start refund-draft-completed.test.yaml',
    'end refund-draft-completed passed',
  ])
  const seeded = result.results[3]
  assert.deepEqual(
    seeded.records.map((r) => r.kind),
    ['reachedState', 'variables', 'parked', 'trail'],
  )
  assert.equal(roles.filter((r) => r === 'judge').length, 1)
  assert.ok(!existsSync(join(root, 'sessions')), 'the cases ran in a store of their own')
})

const SPEC = `title: One
instructions: Answer.
states:
  answer:
    triggers: { manual: }
    instructions: Answer the question.
`

test('a failing case, a broken case file and a skipped one: verdicts, the exit code, not-executed records', async () => {
  const root = workspace({
    'workflows/one/workflow.yaml': SPEC,
    'workflows/one/tests/a.test.yaml': 'title: Says hello\ndescription: Expects a greeting and a state it never reaches.\nsteps:\n  - send: hi\n  - reply: { includes: hello, excludes: "/bye/i" }\n  - reachedState: elsewhere\n  - usedNoTools: true\n',
    'workflows/one/tests/b.test.yaml': 'title: Broken\ndescription: x\nsteps:\n  - reply: { includes: x }\n',
    'workflows/one/tests/c.test.yml': 'title: Later\ndescription: Not yet.\nskip: blocked on the policy\n',
  })
  const { model } = byRole([say('hello there, bye now')])
  const result = await runTests({ workflow: 'one', rootDir: root, model })
  assert.equal(result.exitCode, 1)
  assert.equal(result.discovered, 3)
  const [a, b, c] = result.results
  assert.deepEqual(a.verdict, { status: 'failed', failures: ['reply.excludes: /bye/i', 'reachedState: elsewhere'] })
  assert.deepEqual(a.records.at(-1), { kind: 'usedNoTools', threshold: null, status: 'not-executed', step: 3 })
  assert.deepEqual(reduceVerdict(a.records), a.verdict)
  assert.equal(exitCodeForVerdict(a.verdict), 1)
  const broken = "workflows/one/tests/b.test.yaml: steps[0]: assertion 'reply' has no preceding action — put a 'send', 'decide', or 'deliver' step before it"
  assert.deepEqual(b, { id: 'workflows/one/tests/b.test.yaml', file: 'workflows/one/tests/b.test.yaml', verdict: { status: 'failed', failures: [broken] }, records: [], error: broken })
  assert.deepEqual(c.verdict, { status: 'skipped', failures: [] })
  assert.equal(c.skipReason, 'blocked on the policy')
  assert.deepEqual(discoverCases({ workflow: 'one', rootDir: root }), [
    'workflows/one/tests/a.test.yaml',
    'workflows/one/tests/b.test.yaml',
    'workflows/one/tests/c.test.yml',
  ])
})

test("a host tool's mock answers the agent's call and a script's tools.* call; the real tool never runs", async () => {
  const root = workspace({
    'workflows/crm/workflow.yaml': `title: CRM
instructions: Look customers up.
states:
  look:
    triggers: { manual: }
    instructions: Look the customer up.
    tools:
      allow: [crm_lookup]
`,
    'workflows/crm/tests/mocked.test.yaml': `title: The CRM is mocked
description: The agent and its script both look a customer up; the mock answers both.
mocks:
  - { tool: crm_lookup, whenInput: { email: '/@acme\\.example$/' }, result: { tier: gold } }
steps:
  - send: who is a@acme.example
  - calledTool: { name: crm_lookup, input: { email: a@acme.example } }
  - calledTool: { name: archmax_eval }
  - reply: { includes: gold }
`,
  })
  const real = []
  const crm = {
    name: 'crm_lookup',
    description: 'Looks a customer up by email.',
    schema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
    handler: async (args) => (real.push(args), { tier: 'standard' }),
  }
  const { model } = byRole([
    tools(call('crm_lookup', { email: 'a@acme.example' }, 'c1')),
    tools(call('archmax_eval', { code: "await tools.crmLookup({ email: 'b@acme.example' })" }, 'c2')),
    (request) => say(`The customer is ${JSON.stringify(request.messages.filter((m) => m.role === 'tool').map((m) => m.content))} gold.`),
  ])
  const seen = []
  const result = await runTests({
    workflow: 'crm',
    rootDir: root,
    tools: [crm],
    model: async (request, info) => {
      seen.push(request)
      const a = await model(request, info)
      return typeof a === 'function' ? a(request) : a
    },
  })
  assert.deepEqual(result.results[0].verdict, { status: 'passed', failures: [] }, JSON.stringify(result.results[0], null, 2))
  assert.deepEqual(real, [], 'the real tool never ran')
  const answers = seen[2].messages.filter((m) => m.role === 'tool').map((m) => m.content)
  assert.equal(answers[0], '{"tier":"gold"}')
  assert.match(answers[1], /gold/)
})

test("a modelFactory builds the judge with role 'judge' and tests.judge.model", async () => {
  const root = workspace({
    'workflows/one/workflow.yaml': SPEC.replace('title: One\n', 'title: One\ntests:\n  judge: { model: grader-1 }\n'),
    'workflows/one/tests/g.test.yaml': 'title: Graded\ndescription: A judged answer.\nsteps:\n  - send: hi\n  - grade: { closedQA: It greets, atLeast: 0.5 }\n',
  })
  const built = []
  const result = await runTests({
    workflow: 'one',
    rootDir: root,
    modelFactory: (role, _env, id) => {
      built.push(`${role}:${id ?? ''}`)
      return role === 'judge' ? async () => say('{"score": 0.75, "reason": "greets"}') : async () => say('Hello!')
    },
  })
  assert.deepEqual(result.results[0].verdict, { status: 'passed', failures: [] })
  assert.equal(result.results[0].records[0].score, 0.75)
  assert.ok(built.includes('judge:grader-1'), built.join(','))
})

test('runTests keeps the cases out of the workspace: a temporary store removed unless kept, a chosen store cleared', async () => {
  const root = workspace({
    'workflows/one/workflow.yaml': SPEC,
    'workflows/one/tests/a.test.yaml': 'title: Says hello\ndescription: Greets, with a seeded session file.\nworkspace:\n  notes.md: seeded\nsteps:\n  - send: hi\n  - reply: { includes: hello }\n',
  })
  const model = async () => say('hello there')
  const first = await runTests({ workflow: 'one', rootDir: root, model })
  assert.equal(first.exitCode, 0, JSON.stringify(first.results))
  assert.equal(first.sessionsKept, undefined)
  assert.ok(!existsSync(join(root, 'sessions')), 'nothing in the workspace')

  const kept = await runTests({ workflow: 'one', rootDir: root, model, keep: true })
  assert.equal(kept.exitCode, 0)
  assert.ok(kept.sessionsKept.startsWith(tmpdir()), kept.sessionsKept)
  const sid = kept.results[0].sessionId
  assert.equal(readFileSync(join(kept.sessionsKept, sid, 'notes.md'), 'utf8'), 'seeded', 'seeded in the kept store')
  rmSync(kept.sessionsKept, { recursive: true, force: true })
  assert.ok(!existsSync(join(root, 'sessions')))

  const dir = mkdtempSync(join(tmpdir(), 'archmax-chosen-'))
  const chosen = await runTests({ workflow: 'one', rootDir: root, model, workspace: { sessionStore: createFilesystemSessionStore({ dir }) } })
  assert.equal(chosen.exitCode, 0)
  assert.equal(chosen.sessionsKept, undefined)
  assert.ok(!existsSync(join(dir, chosen.results[0].sessionId)), "the case's session left the chosen store")
  const chosenKept = await runTests({ workflow: 'one', rootDir: root, model, keep: true, workspace: { sessionStore: createFilesystemSessionStore({ dir }) } })
  assert.ok(existsSync(join(dir, chosenKept.results[0].sessionId, 'notes.md')))
  assert.equal(chosenKept.sessionsKept, undefined, 'a chosen store is the host’s to name')
  assert.ok(!existsSync(join(root, 'sessions')))
  await assert.rejects(runTests({ workflow: 'one', rootDir: root, model, keep: 'yes' }), TypeError)
})

test('runTests fails like archmax test: a workflow that does not load, or a filter that selects no case, exits 1 with the CLI message', async () => {
  const root = workspace({
    'workflows/one/workflow.yaml': SPEC,
    'workflows/one/tests/a.test.yaml': 'title: A\ndescription: B.\nsteps:\n  - send: hi\n',
    'workflows/broken/workflow.yaml': 'title: Broken\nstates: 3\n',
  })
  const model = async () => say('unused')
  const cli = (...args) => spawnSync(process.execPath, [join(ROOT, 'bin/archmax.js'), 'test', ...args, '--root', root], { encoding: 'utf8', env: { ...process.env, NO_COLOR: '1' } })
  for (const [options, args] of [
    [{ workflow: 'nope' }, ['nope']],
    [{ workflow: 'broken' }, ['broken']],
    [{ workflow: 'one', filter: 'zzz' }, ['one', 'zzz']],
  ]) {
    const result = await runTests({ ...options, rootDir: root, model })
    const r = cli(...args)
    assert.equal(r.status, 1, r.stderr)
    assert.equal(result.exitCode, 1, JSON.stringify(result))
    assert.deepEqual(result.results, [])
    assert.ok(r.stderr.includes(`Error: ${result.error}\n`), `${result.error}\n${r.stderr}`)
  }
  assert.equal((await runTests({ workflow: 'nope', rootDir: root, model })).error, "Cannot load workflow 'nope' (workflows/nope/workflow.yaml): no workflow.yaml found. Run 'archmax validate nope' for details.")
  assert.deepEqual(await runTests({ workflow: 'one', filter: 'zzz', rootDir: root, model }), { results: [], exitCode: 1, discovered: 1, error: "no cases matched 'zzz' (1 discovered)" })
  // A suite with no case runs none, and passes (as the CLI).
  const empty = workspace({ 'workflows/one/workflow.yaml': SPEC })
  assert.deepEqual(await runTests({ workflow: 'one', rootDir: empty, model }), { results: [], exitCode: 0, discovered: 0 })
})

test('a disabled suite runs nothing and exits 0', async () => {
  const root = workspace({
    'workflows/one/workflow.yaml': SPEC.replace('title: One\n', 'title: One\ndisabled: true\n'),
    'workflows/one/tests/a.test.yaml': 'title: A\ndescription: B.\nsteps:\n  - send: hi\n',
  })
  const result = await runTests({ workflow: 'one', rootDir: root, model: async () => say('unused') })
  assert.deepEqual(result, { results: [], exitCode: 0, discovered: 0, skipped: 'disabled' })
})

test('case documents: read collapsed, rejected with every problem, matched partially', () => {
  assert.equal(CASE_TITLE_MAX_LENGTH, 60)
  assert.equal(CASE_DESCRIPTION_MAX_LENGTH, 200)
  // The original's arguments: the case file, its text, the tests folder; `id` is the path under it.
  const doc = parseCaseDocument('workflows/w/tests/sub/x.test.yaml', 'title: "  Two   words "\ndescription: One.\nmocks:\n  - { tool: crm, result: 1 }\nsteps:\n  - send: hi\n', 'workflows/w/tests')
  assert.deepEqual(doc, { file: 'workflows/w/tests/sub/x.test.yaml', id: 'sub/x', title: 'Two words', description: 'One.', mocks: [{ name: 'crm', result: 1 }], steps: [{ send: 'hi' }] })
  assert.equal(parseCaseDocument('workflows/w/tests/x.test.yml', 'title: t\ndescription: d\n').id, 'x', 'the tests folder defaults to the file\'s suite')
  assert.throws(() => parseCaseDocument('title: t\n'), /needs the YAML text/)
  assert.throws(
    () => parseCaseDocument('y.test.yaml', 'title: t\nsessions: 2\n', '.'),
    (e) =>
      e instanceof CaseSchemaError &&
      e.message ===
        "y.test.yaml: unknown key 'sessions' (known: title, description, skip, trigger, variables, workspace, mocks, steps); 'description' is required: one or two sentences stating the scenario driven and what is asserted",
  )
  assert.equal(partialMatch({ id: '/^KK-\\d+$/' }, { id: 'KK-12', extra: true }), true)
  assert.equal(partialMatch([1], [1, 2]), false)
})

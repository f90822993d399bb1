// The parity matrix: every scenario, written once as data, runs under every way a host
// drives the harness (a JS model function, a LangChain chat model, the ARCHMAX_* endpoint
// against a scripted server on 127.0.0.1) × onEvent on/off × every session store
// (filesystem, memory, a host JS store, PostgreSQL). Every cell must give the reference cell's
// outcomes, and every listening cell its event types in the same order; no cell may end
// because a sandbox or turn time limit fired.
//
// A new capability adds a scenario; a new way in adds a column. A scenario leaves out a store
// only for what that store cannot do by design (`skipStores`, with the reason).
import { after, test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessageChunk } from '@langchain/core/messages'
import { ChatGenerationChunk } from '@langchain/core/outputs'

import { createAgent, createMemorySessionStore } from '@archmax-ai/harness'
import { ROOT, APPROVAL_SPEC, asCompletion, withUsage, CALLER_SPEC, CHILD_SPEC, ONE_STATE_SPEC, PARKING_CHILD_SPEC, approvedCaseAnswers, call, chunksOf, copyExample, EXAMPLE, mapStore, NO_PG, otlpReceiver, pgStore, refundAnswers, say, textPieces, toAIMessage, tools, workspace } from './helpers.mjs'

/** The text of a request's messages, for a check to search (`requestText` is their JSON). */
function contents(requestText) {
  return JSON.parse(requestText)
    .map((m) => (typeof m === 'string' ? m : typeof m?.content === 'string' ? m.content : JSON.stringify(m?.content ?? m)))
    .join('\n')
}

const advance = (to, reason, id) => tools(call('archmax_advance', { to, reason }, id))

function exampleCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'archmax-parity-'))
  copyExample(dir)
  return dir
}

// ---------------------------------------------------------------- scenarios


/** Hooks and scripts that call several tools at once. */
const CONCURRENT_SPEC = `title: Concurrent tools
instructions: A test workflow.
mounts:
  allow_always: []
skills:
  allow_always: [notes]
states:
  draft:
    triggers: { manual: }
    instructions: Write the notes, compute, then move on.
    transitions:
      - to: done
    after:
      script: hooks/check.js
  done:
    instructions: Say goodbye.
`
const CONCURRENT_HOOK = `export default async ({ tools }) => {
  const [a, b, listing] = await Promise.all([
    tools.readFile({ file_path: 'scratchpad/a.md' }),
    tools.readFile({ file_path: 'scratchpad/b.md' }),
    tools.ls({ path: 'scratchpad' }),
  ])
  if (!a.includes('alpha') || !b.includes('beta')) return { verdict: 'correct', reason: 'write both notes' }
  if (!listing.includes('a.md')) return { verdict: 'veto', reason: 'the listing misses a.md' }
  return { verdict: 'ok', reason: 'both notes are there' }
}
`
const RUN_BOTH = `const [a, b] = await Promise.all([tools.readFile({ file_path: 'scratchpad/a.md' }), tools.glob({ pattern: 'scratchpad/*.md' })]);
({ alpha: a.includes('alpha'), listed: b.includes('b.md') })`
const NOTES_SKILL = `---
name: notes
description: Checks the notes. Use it before moving on.
---

Run scripts/both.js with archmax_run.
`
const EVAL_BOTH = `const [a, b] = await Promise.all([tools.readFile({ file_path: 'scratchpad/a.md' }), tools.readFile({ file_path: 'scratchpad/b.md' })]);
[a.includes('alpha'), b.includes('beta')]`

const RUBRIC_SPEC = `title: Graded
instructions: A test workflow.
mounts:
  allow_always: []
states:
  answer:
    triggers: { manual: }
    instructions: Answer with a date.
    after:
      rubric:
        instructions: The reply must name a date.
        max_iterations: 2
`

const WAIT_SPEC = `title: Waits
instructions: A test workflow.
mounts:
  allow_always: []
states:
  invoice:
    triggers: { manual: }
    instructions: Wait for the payment, then say thanks.
`

/** A draft a person reviews: approved it is done, sent back it is drafted again. */
const SEND_BACK_SPEC = `title: Reviews
instructions: A test workflow.
mounts:
  allow_always: []
states:
  draft:
    triggers: { manual: }
    instructions: Draft, then hand over.
    transitions:
      - to: review
  review:
    type: human
    instructions: Approve or send back.
    transitions:
      - { to: done, type: approve, description: Approve. }
      - { to: draft, type: refine, description: Send back. }
  done:
    instructions: Say it is done.
`

/** A session's history as a scenario compares it: everything but the commit times. */
const historyOf = async (agent, id) => (await agent.sessions.history(id)).map(({ at, ...step }) => step)
/** One state under a session token cap. */
const CAPPED_SPEC = `title: Capped
instructions: A test workflow.
mounts:
  allow_always: []
budget:
  maxSessionTokens: 100
states:
  work:
    triggers: { manual: }
    instructions: Work.
`

const POLICY_SPEC = `title: Lookups
instructions: A test workflow.
mounts:
  allow_always: []
states:
  lookup:
    triggers: { manual: }
    instructions: Look the customers up.
    tools:
      allow: [crm_lookup]
`
const crm = {
  name: 'crm_lookup',
  description: 'Looks a customer up by email.',
  schema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
  handler: async ({ email }) => ({ email, tier: 'gold' }),
}
const noVip = (action) =>
  action.tool === 'crm_lookup' && String(action.args.email).endsWith('@vip.example')
    ? { decision: 'block', ruleId: 'host.no-vip', reason: 'VIP records are off limits.' }
    : null

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

const ARCHIVE_SPEC = `title: Archive
instructions: A test workflow.
mounts:
  allow_always: []
states:
  work:
    triggers: { manual: }
    instructions: Write the note, then archive it.
    tools:
      allow: [archive]
`
/** A host tool working on the session's files through `context.workspace`. */
const archive = {
  name: 'archive',
  description: 'Archives the note.',
  schema: { type: 'object', properties: {} },
  handler: async (_args, { workspace: ws }) => {
    const [note] = await ws.downloadFiles(['scratchpad/note.md'])
    if (note.error) return `not archived: ${note.error}`
    const [copied] = await ws.uploadFiles([['scratchpad/archive/note.md', note.content]])
    const removed = await ws.delete('scratchpad/note.md')
    const { content } = await ws.read('scratchpad/archive/note.md')
    return `archived (${copied.error ?? 'copied'}, ${removed.error ?? 'removed'}): ${content}`
  },
}

const BATCH_SPEC = `title: Batch
instructions: A test workflow.
mounts:
  allow_always: []
states:
  work:
    triggers: { manual: }
    instructions: Call both tools at once.
    tools:
      allow: [first, second]
`
/**
 * Two host tools that can only answer \`together\` when they run at once: each waits (at
 * most 3 s, so a sequential run answers \`alone\` rather than hanging) for the other to start.
 */
function meetingTools() {
  let arrived = 0
  let release
  const met = new Promise((r) => (release = r))
  const meet = async (name) => {
    arrived += 1
    if (arrived === 2) release()
    let timer
    const bound = new Promise((r) => (timer = setTimeout(r, 3000)))
    await Promise.race([met, bound])
    clearTimeout(timer)
    return arrived === 2 ? `${name}: together` : `${name}: alone`
  }
  const tool = (name) => ({ name, description: `Meets the other tool (${name}).`, schema: { type: 'object', properties: {} }, handler: () => meet(name) })
  return [tool('first'), tool('second')]
}

/**
 * name, a workspace maker, the agent options beyond model/store/onEvent, the model's
 * scripted answers (to the agent and to any grader, in the order asked), the steps (each
 * a harness call on `agent.workflow`), and `check`: what the reference outcomes must say.
 * `files`: the scenario's tools read or write session files. `everyCell`: `checkEvents` holds
 * every listening cell's events to it, not the reference cell's alone.
 */
/** One OTLP receiver for the telemetry row; each cell exports under its own service name. */
const OTLP = await otlpReceiver()
after(() => OTLP.close())
let otlpCell = 0

/** A cell's traces as a tree of span names (a chat span by its operation: the model id is the column's). */
function spanTrees(service) {
  const spans = OTLP.spans().filter((s) => s.service === service)
  const label = (s) => (s.attributes['gen_ai.operation.name'] === 'chat' ? 'chat' : s.name)
  const tree = (s) => {
    const children = spans.filter((c) => c.parentSpanId === s.spanId && c.traceId === s.traceId).map(tree)
    children.sort((a, b) => JSON.stringify(a).localeCompare(JSON.stringify(b)))
    return children.length ? { [label(s)]: children } : label(s)
  }
  return spans
    .filter((s) => s.attributes['gen_ai.operation.name'] === 'invoke_agent')
    .map((s) => ({ disposition: s.attributes['archmax.disposition'], outcome: s.attributes['archmax.outcome'], links: s.links.length, tree: tree(s) }))
}


/** The example's refund-approved case ran on session `case-1` and passed, all 8 records. */
function assertApprovedCasePassed(result) {
  assert.equal(result.exitCode, 0, JSON.stringify(result))
  const [approved] = result.results
  assert.equal(approved.sessionId, 'case-1')
  assert.deepEqual(approved.verdict, { status: 'passed', failures: [] })
  assert.equal(approved.records.length, 8)
}
/** The installed MCP server the MCP scenario starts over stdio (the test setup installs it). */
const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js')
const MCP_SPEC = `title: MCP lookups
instructions: A test workflow.
mounts:
  allow_always: []
states:
  lookup:
    triggers: { manual: }
    instructions: Echo, then stop.
    tools:
      allow: [mcp__everything__echo]
`

/** A workflow that may hand part of its work to itself; the run must set `verdict`. */
const SELF_SPEC = `title: Splitter
instructions: Split the order.
mounts:
  allow_always: []
states:
  split:
    triggers:
      manual:
        description: Split one order
        returns: [verdict]
    instructions: Split the order, or hand a part of it to yourself.
    tools:
      allow: [archmax_workflow_split]
`
/** The answers of a run of SELF_SPEC whose child calls itself once more (refused). */
const selfAnswers = () => [
  { role: 'assistant', content: 'Handing a part over.', tool_calls: [call('archmax_workflow_split', {}, 'c1')] },
  { role: 'assistant', content: 'Splitting again.', tool_calls: [call('archmax_workflow_split', {}, 'k1')] },
  say('Part done.'),
  tools(call('archmax_set_variables', { variables: { verdict: 'split' } }, 'c2')),
  say('Done.'),
]
/** What the first request (the caller's) and the second (its child's) say, and how the outer call ended. */
function checkSelfCall([done], requests) {
  assert.equal(done.kind, 'completed')
  assert.equal(done.reply, 'Done.')
  // The caller is asked for a title and told its returns are checked; its child is neither.
  assert.match(contents(requests[0]), /1\. Give the run a short title first/)
  assert.match(contents(requests[0]), /finishing without every one set ends it rejected/)
  assert.doesNotMatch(contents(requests[1]), /short title/)
  assert.match(contents(requests[1]), /1\. Do the work the current state asks for\./)
  assert.match(contents(requests[1]), /This run must set verdict with `archmax_set_variables` before it finishes — your caller gets the ones you set, with a note naming any you did not\./)
  // The child's own call of the workflow is refused; the outer call answers with the child's result.
  assert.ok(contents(requests[2]).includes("Refusing to run sub-workflow 'split': it is already running in this chain (split → split), so the run would not terminate."), contents(requests[2]))
  assert.ok(contents(requests[3]).includes('{"message":"Part done.","returns":{"note":"Not all return variables were set by the sub-workflow: \'verdict\' was not set."}}'), contents(requests[3]))
  assert.deepEqual(done.auditTrail.filter((t) => t.kind === 'sub-workflow').map((t) => [t.workflow, t.status]), [['split', 'ok']])
}
/**
 * Every event of the child (session `s1~split:split:0`) carries its dispatch's id and no
 * event of the caller does; the caller's text is its untagged text alone, in deltas and in
 * `agent-text`; the results list `note` among the returns.
 */
function checkSelfCallEvents(events) {
  for (const e of events) {
    const child = e.sessionId?.startsWith('s1~')
    assert.equal(e.subWorkflowDispatchId, child ? 'subwf-0' : undefined, JSON.stringify(e))
  }
  const text = (type, tagged) => events.filter((e) => e.type === type && !!e.subWorkflowDispatchId === tagged).map((e) => e.text).join('')
  assert.equal(text('agent-text-delta', false), 'Handing a part over.Done.')
  assert.equal(text('agent-text', false), 'Handing a part over.Done.')
  assert.equal(text('agent-text-delta', true), 'Splitting again.Part done.')
  assert.equal(text('agent-text', true), 'Splitting again.Part done.')
  const results = events.filter((e) => e.type === 'sub-workflow-result')
  assert.deepEqual(
    results.map((e) => [e.sessionId, e.subWorkflowDispatchId, e.dispatchId, e.depth, e.status, e.returns]),
    [
      ['s1~split:split:0', 'subwf-0', 'subwf-0.0', 2, 'error', undefined],
      ['s1', undefined, 'subwf-0', 1, 'ok', ['note']],
    ],
  )
}

/** A draft handed to a person at the human state `review`. */
const REVIEW_SPEC = `title: Reviews
instructions: A test workflow.
mounts:
  allow_always: []
states:
  draft:
    triggers: { manual: }
    instructions: Draft it, then hand it to a person.
    transitions:
      - { to: review, description: Ready for a person. }
  review:
    type: human
    title: Review the draft
    instructions: A person reviews the draft.
    transitions:
      - { to: done, description: Approve it., type: approve }
  done:
    instructions: Say goodbye.
`

const SCENARIOS = [
  {
    name: "the example's refund flow exports one span tree per turn, the decision's linked to the park's",
    files: true,
    workspace: exampleCopy,
    options: () => {
      otlpCell += 1
      return { workflow: 'order-lookup', telemetry: { endpoint: `${OTLP.base}/v1/traces`, protocol: 'http/json', serviceName: `parity-${otlpCell}` } }
    },
    answers: refundAnswers(),
    steps: [
      (w) => w.send('t1', { message: 'I want a refund for KK-2043.' }),
      (w) => w.decide('t1', { target: 'refund-approved' }),
      () => spanTrees(`parity-${otlpCell}`),
    ],
    check: ([parked, done, trees]) => {
      assert.equal(parked.kind, 'parked')
      assert.equal(done.kind, 'completed')
      assert.deepEqual(
        trees.map((t) => [t.disposition, t.outcome, t.links]),
        [
          ['turn', 'parked', 0],
          ['decide', 'completed', 1],
        ],
      )
      const [first] = trees
      const states = first.tree['invoke_agent order-lookup']
      assert.deepEqual(states[0], 'park refund-review')
      assert.deepEqual(states[2], {
        'state refund-request': [
          'chat',
          'execute_tool archmax_set_variables',
          'execute_tool write_file',
          { 'execute_tool archmax_advance': ['hook after hooks/check-refund.js'] },
        ],
      })
    },
  },
  {
    name: "the cases engine runs the example's refund-approved case: a mocked sub-workflow, a park, a decision",
    files: true,
    workspace: exampleCopy,
    options: { workflow: 'order-lookup' },
    answers: approvedCaseAnswers(),
    steps: [
      (_w, agent) =>
        agent[Symbol.for('archmax.runCases')]({
          filter: 'refund-approved',
          sessionIds: { 'workflows/order-lookup/tests/refund-approved.test.yaml': 'case-1' },
        }),
    ],
    check: ([result], requests) => {
      assertApprovedCasePassed(result)
      // The mock answered the delegation: no child's model call, its message and returns sent
      // back; after the approval the refund is paid through the shop's MCP server.
      assert.equal(requests.length, 6)
      assert.match(contents(requests[4]), /Refund R-KK-2047 of 10\.00 EUR issued for KK-2047\./)
      assert.match(contents(requests[2]), /Hollow Pine Outfitters \(gold\)/)
    },
  },
  {
    // A cassette per case (`runTests({ cassettes: 'replay' })`): the committed cassette answers,
    // whatever the column's model, so every store and listener replays the same case.
    name: "per-case cassettes: the example's refund-approved case replays from its committed cassette",
    files: true,
    caseCassettes: true,
    workspace: exampleCopy,
    options: { workflow: 'order-lookup', [Symbol.for('archmax.caseCassettes')]: 'replay' },
    answers: [],
    steps: [
      (_w, agent) =>
        agent[Symbol.for('archmax.runCases')]({
          files: ['workflows/order-lookup/tests/refund-approved.test.yaml'],
          sessionIds: { 'workflows/order-lookup/tests/refund-approved.test.yaml': 'case-1' },
        }),
    ],
    check: ([result], requests) => {
      assertApprovedCasePassed(result)
      assert.equal(requests.length, 0, 'the model is never asked')
    },
  },
  {
    name: "the example's refund flow: park at review, decide, complete",
    files: true,
    workspace: exampleCopy,
    options: { workflow: 'order-lookup' },
    answers: refundAnswers(),
    steps: [(w) => w.send('r1', { message: 'I want a refund for KK-2043.' }), (w) => w.decide('r1', { target: 'refund-approved', comment: 'ok' })],
    check: ([parked, done]) => {
      assert.equal(parked.kind, 'parked')
      assert.equal(parked.state, 'refund-review')
      assert.equal(done.kind, 'completed')
      assert.equal(done.state, 'refund-approved')
    },
  },
  {
    name: "a session's history lists its steps; a fork of the parked step is parked again and goes another way",
    files: true,
    workspace: () => workspace({ 'workflows/reviews/workflow.yaml': SEND_BACK_SPEC }),
    options: { workflow: 'reviews' },
    // A host's own store keeps only the latest step: history and fork are refused there
    // (SessionStoreCapabilityError, agent-sessions.test.mjs).
    skipStores: { host: "a host's store keeps only the latest step" },
    answers: [advance('review', 'drafted', 'a1'), say('Sent for review.'), say('It is done.'), say('Drafting again.')],
    steps: [
      (w) => w.send('f1', { message: 'Draft the note.' }),
      (w, agent) => historyOf(agent, 'f1'),
      (w) => w.decide('f1', { target: 'done' }),
      async (w, agent) => {
        const parked = (await agent.sessions.history('f1')).find((s) => s.status === 'awaiting_decision')
        return agent.sessions.fork('f1', { at: parked.step })
      },
      (w, agent) => agent.sessions.park('f1-fork-2'),
      (w) => w.decide('f1-fork-2', { target: 'draft' }),
      async (w, agent) => ({ original: await historyOf(agent, 'f1'), fork: await historyOf(agent, 'f1-fork-2') }),
    ],
    check: ([parked, steps, done, fork, park, again, after]) => {
      assert.equal(parked.status, 'awaiting_decision')
      assert.deepEqual(steps.map((s) => [s.step, s.state, s.status]), [[1, 'draft', 'running'], [2, 'review', 'awaiting_decision'], [3, 'review', 'awaiting_decision']])
      assert.match(steps[1].what, /^called archmax_advance; moved to review; parked for a decision at review$/)
      assert.equal(done.kind, 'completed')
      assert.equal(fork.sessionId, 'f1-fork-2')
      assert.equal(fork.status, 'awaiting_decision')
      assert.deepEqual(fork.forkedFrom, { sessionId: 'f1', step: 2 })
      assert.equal(park.state, 'review')
      assert.equal(again.state, 'draft')
      assert.equal(again.reply, 'Drafting again.')
      assert.deepEqual(after.original.slice(0, 3), steps, 'the original keeps its steps')
      assert.equal(after.original.at(-1).status, 'completed')
      assert.equal(after.fork[0].what, 'forked from f1 step 2; parked for a decision at review')
      assert.ok(after.fork.some((s) => s.what.includes('decided: draft')))
    },
  },
  {
    name: "a session's token cap ends the turn that reaches it before its next model call",
    workspace: () => workspace({ 'workflows/capped/workflow.yaml': CAPPED_SPEC }),
    options: { workflow: 'capped' },
    answers: [withUsage(say('First.'), 30, 10), withUsage(tools(call('ls', { path: '.' }, 'c1')), 50, 10)],
    steps: [
      (w) => w.send('cap-1', { message: 'Go.' }),
      (w) => w.send('cap-1', { message: 'Again.' }),
      (w, agent) => agent.sessions.get('cap-1'),
    ],
    check: ([first, second, summary]) => {
      assert.equal(first.kind, 'completed')
      assert.equal(second.kind, 'rejected')
      assert.match(second.rejected, /the session reached its token cap \(budget\.maxSessionTokens: 100 tokens\): 100 tokens spent/)
      assert.deepEqual([summary.usage.inputTokens, summary.usage.outputTokens], [80, 20])
    },
    checkEvents: (events) => {
      const usage = events.filter((e) => e.type === 'model-usage')
      assert.deepEqual(usage.map((e) => e.sessionTokens), [40, 100])
    },
  },
  {
    name: 'a hook, archmax_eval and archmax_run each await several tools.* calls at once',
    files: true,
    workspace: () =>
      workspace({
        'workflows/conc/workflow.yaml': CONCURRENT_SPEC,
        'workflows/conc/hooks/check.js': CONCURRENT_HOOK,
        'skills/notes/SKILL.md': NOTES_SKILL,
        'skills/notes/scripts/both.js': RUN_BOTH,
      }),
    options: { workflow: 'conc' },
    answers: [
      tools(
        call('write_file', { file_path: 'scratchpad/a.md', content: 'alpha' }, 'c1'),
        call('write_file', { file_path: 'scratchpad/b.md', content: 'beta' }, 'c2'),
        call('archmax_eval', { code: EVAL_BOTH }, 'c3'),
        call('archmax_run', { file_path: 'skills/notes/scripts/both.js' }, 'c3b'),
      ),
      advance('done', 'notes written', 'c4'),
      say('Goodbye.'),
    ],
    steps: [(w) => w.send('h1', { message: 'Go.' })],
    check: ([done], requests) => {
      assert.equal(done.kind, 'completed')
      assert.equal(done.state, 'done')
      assert.match(contents(requests[1]), /→ \[\s*true,\s*true\s*\]/)
      assert.match(contents(requests[1]), /"alpha":\s*true,\s*"listed":\s*true/)
    },
  },
  {
    name: 'a rubric corrects once, then passes',
    workspace: () => workspace({ 'workflows/graded/workflow.yaml': RUBRIC_SPEC }),
    options: { workflow: 'graded' },
    answers: [
      say('Soon.'),
      say('{"verdict": "correct", "reason": "name a date"}'),
      say('On 3 March.'),
      say('{"verdict": "ok", "reason": "names a date"}'),
    ],
    steps: [(w) => w.send('g1', { message: 'When does it ship?' })],
    check: ([done]) => {
      assert.equal(done.kind, 'completed')
      assert.equal(done.reply, 'On 3 March.')
    },
  },
  {
    name: 'a wait parks for an event; a delivery resumes it',
    workspace: () => workspace({ 'workflows/waits/workflow.yaml': WAIT_SPEC }),
    options: { workflow: 'waits' },
    answers: [tools(call('archmax_wait', { reason: 'waiting for the payment' }, 'c1')), say('I will wait for the payment.'), say('Thanks, the payment of 20 arrived.')],
    steps: [(w) => w.send('w1', { message: 'Here is the invoice.' }), (w) => w.deliver('w1', { trigger: { id: 'payment-received' }, variables: { amount: 20 } })],
    check: ([waiting, done]) => {
      assert.equal(waiting.status, 'awaiting_input')
      assert.equal(done.kind, 'completed')
      assert.equal(done.reply, 'Thanks, the payment of 20 arrived.')
      assert.equal(done.variables.amount.value, 20)
    },
  },
  {
    name: 'a custom hook kind vetoes, then lets the agent move',
    workspace: () => workspace({ 'workflows/approvals/workflow.yaml': APPROVAL_SPEC }),
    options: () => {
      let asked = 0
      return {
        workflow: 'approvals',
        hookExecutors: {
          approval: async () => ({ ok: true, value: asked++ === 0 ? { verdict: 'veto', reason: 'not signed off' } : { verdict: 'ok' }, logs: [], formatted: '' }),
        },
      }
    },
    answers: [advance('done', 'drafted', 'c1'), advance('done', 'drafted again', 'c2'), say('Refunded.')],
    steps: [(w) => w.send('a1', { message: 'Refund it.' })],
    check: ([done], requests) => {
      assert.equal(done.state, 'done')
      assert.match(contents(requests[1]), /not signed off/)
    },
  },
  {
    name: 'a host policy rule refuses one host tool call and lets another through',
    workspace: () => workspace({ 'workflows/lookups/workflow.yaml': POLICY_SPEC }),
    options: { workflow: 'lookups', tools: [crm], policyRules: [noVip] },
    answers: [tools(call('crm_lookup', { email: 'a@vip.example' }, 'c1'), call('crm_lookup', { email: 'b@shop.example' }, 'c2')), say('Done.')],
    steps: [(w) => w.send('p1', { message: 'Look them up.' })],
    check: ([done], requests) => {
      assert.equal(done.kind, 'completed')
      assert.match(contents(requests[1]), /VIP records are off limits/)
      assert.match(contents(requests[1]), /"tier":"gold"/)
    },
  },
  {
    name: 'a host tool reads, writes and deletes session files through context.workspace',
    files: true,
    workspace: () => workspace({ 'workflows/archive/workflow.yaml': ARCHIVE_SPEC }),
    options: { workflow: 'archive', tools: [archive] },
    answers: [
      tools(call('write_file', { file_path: 'scratchpad/note.md', content: 'alpha' }, 'c1')),
      tools(call('archive', {}, 'c2'), call('ls', { path: 'scratchpad' }, 'c3')),
      say('Archived.'),
    ],
    steps: [(w) => w.send('x1', { message: 'Archive the note.' })],
    check: ([done], requests) => {
      assert.equal(done.kind, 'completed')
      assert.match(contents(requests[2]), /archived \(copied, removed\): alpha/)
      assert.doesNotMatch(contents(requests[2]), /scratchpad\/note\.md \(/)
    },
  },
  {
    name: 'an image read is shown to the model on the next request',
    files: true,
    workspace: () => {
      const dir = workspace({ 'AGENTS.md': '# Persona\n' })
      mkdirSync(join(dir, 'charts'), { recursive: true })
      writeFileSync(join(dir, 'charts/a.png'), PNG)
      return dir
    },
    options: { workflow: false, images: {} },
    mounts: { '/charts/': {} },
    answers: [tools(call('read_file', { file_path: 'charts/a.png' }, 'c1')), say('One chart.')],
    steps: [(w, agent) => agent.invoke({ messages: [{ role: 'user', content: 'What is in the chart?' }] }, { configurable: { thread_id: 'i1' } })],
    check: ([done], requests) => {
      assert.match(requests[1], /data:image\/png;base64,/)
      assert.ok(JSON.stringify(done).includes('One chart.'))
    },
  },
  {
    name: 'an MCP server tool a state grants is called; one it does not grant is refused',
    workspace: () =>
      workspace({
        'workflows/mcp/workflow.yaml': MCP_SPEC,
        '.mcp.json': JSON.stringify({ mcpServers: { everything: { command: 'node', args: [EVERYTHING, 'stdio'] } } }),
      }),
    options: { workflow: 'mcp' },
    answers: [tools(call('mcp__everything__echo', { message: 'hi' }, 'c1'), call('mcp__everything__get-sum', { a: 1, b: 2 }, 'c2')), say('Echoed.')],
    steps: [(w) => w.send('m1', { message: 'Echo hi.' })],
    check: ([done], requests) => {
      assert.equal(done.kind, 'completed')
      assert.match(contents(requests[1]), /Echo: hi/)
      assert.match(contents(requests[1]), /BLOCKED: 'mcp__everything__get-sum' is not allowed in state 'lookup'/)
    },
  },
  {
    name: "a batch's host tools run at once, answered in call order",
    workspace: () => workspace({ 'workflows/batch/workflow.yaml': BATCH_SPEC }),
    options: () => ({ workflow: 'batch', tools: meetingTools() }),
    answers: [tools(call('first', {}, 'c1'), call('second', {}, 'c2')), say('Both met.')],
    steps: [(w) => w.send('b1', { message: 'Go.' })],
    check: ([done], requests) => {
      assert.equal(done.kind, 'completed')
      assert.match(contents(requests[1]), /first: together\nsecond: together/)
    },
  },
  {
    name: 'a sub-workflow runs as a child session and answers with its returns',
    files: true,
    workspace: () => workspace({ 'workflows/orders/workflow.yaml': CALLER_SPEC, 'workflows/enrich/workflow.yaml': CHILD_SPEC }),
    options: { workflow: 'orders' },
    answers: [
      tools(call('archmax_workflow_enrich', { order_id: 'KK-1' }, 'c1')),
      tools(
        call('archmax_set_variables', { variables: { risk: 'low' } }, 'k1'),
        call('write_file', { file_path: 'scratchpad/e.md', content: 'enriched' }, 'k2'),
        call('write_file', { file_path: 'scratchpad/secret/e.md', content: 'leaked' }, 'k3'),
      ),
      say('Enriched KK-1.'),
      tools(call('read_file', { file_path: 'scratchpad/e.md' }, 'c2')),
      say('Done.'),
    ],
    steps: [(w) => w.send('s1', { message: 'Enrich KK-1.' })],
    check: ([done], requests) => {
      assert.equal(done.kind, 'completed')
      assert.equal(done.reply, 'Done.')
      assert.match(contents(requests[1]), /Begin\. Your instructions are already in context\. You were started with these inputs:\n- order_id: "KK-1"/)
      assert.doesNotMatch(contents(requests[1]), /Enrich KK-1\./)
      // The caller's forbid_always binds inside the child, naming the caller.
      assert.ok(contents(requests[2]).includes("[workflow] BLOCKED: 'write_file' on 'scratchpad/secret/e.md' is forbidden by the workflow inherited from workflow 'orders' (tools.forbid_always: paths=scratchpad/secret/**)."), contents(requests[2]))
      assert.match(contents(requests[3]), /\{"message":"Enriched KK-1\.","returns":\{"risk":"low"\}\}/)
      assert.match(contents(requests[4]), /enriched/)
      assert.equal(done.variables.risk, undefined)
      },
    },
  {
    name: 'a child parks, the caller is decided, the child finishes, the caller completes',
    files: true,
    workspace: () => workspace({ 'workflows/orders/workflow.yaml': CALLER_SPEC, 'workflows/enrich/workflow.yaml': PARKING_CHILD_SPEC }),
    options: { workflow: 'orders' },
    answers: [
      tools(call('archmax_workflow_enrich', { order_id: 'KK-1' }, 'c1')),
      advance('approve', 'checked', 'k1'),
      say('KK-1 is with a reviewer.'),
      say('Your order is being reviewed.'),
      say('KK-1 is approved.'),
      say('Reviewed and approved.'),
    ],
    steps: [
      (w) => w.send('s1', { message: 'Review KK-1.' }),
      // Sorted: each store lists in its own order.
      async (w, agent) => (await agent.sessions.list()).sort((a, b) => (a.sessionId < b.sessionId ? -1 : 1)),
      (w, agent) => agent.sessions.park('s1'),
      (w) => w.decide('s1', { target: 'done', comment: 'fine' }),
    ],
    check: ([parked, listed, park, done], requests) => {
      assert.equal(parked.kind, 'parked')
      assert.equal(parked.status, 'awaiting_decision')
      assert.equal(parked.state, 'approve')
      assert.equal(parked.workflowState, 'work')
      assert.equal(parked.reply, 'Your order is being reviewed.')
      assert.equal(parked.pending.seq, 1)
      assert.equal(parked.pending.title, 'Approve the order')
      // The park is the child's: which child, and which call.
      assert.deepEqual(parked.delegation, { workflow: 'enrich', sessionId: 's1~work:enrich:0', identity: 'work:enrich:0', dispatchId: 'subwf-0', toolCallId: 'c1', state: 'work' })
      assert.equal(done.delegation, undefined)
      assert.deepEqual(parked.pending.transitions.map((t) => t.to), ['done', 'check'])
      assert.match(contents(requests[3]), /The 'enrich' sub-workflow stopped for a person at its 'approve' step\./)
      const child = listed.find((s) => s.sessionId === 's1~work:enrich:0')
      assert.equal(child?.parentSessionId, 's1')
      assert.equal(child?.status, 'awaiting_decision')
      // The caller's park, as a host presents it: the child's declaration of its state.
      assert.equal(park.state, 'approve')
      assert.equal(park.instructions, 'A person approves the order.')
      assert.equal(done.kind, 'completed')
      assert.equal(done.disposition, 'decide')
      assert.equal(done.reply, 'Reviewed and approved.')
      assert.match(contents(requests[4]), /\[decision\] A human selected approve → 'done' at the 'approve' checkpoint: fine\./)
      assert.match(contents(requests[5]), /\[sub-workflow: enrich\] KK-1 is approved\./)
    },
    checkEvents: (events) => {
      assert.deepEqual(events.filter((e) => e.type === 'sub-workflow-result').map((e) => e.status), ['parked', 'ok'])
      assert.deepEqual(events.filter((e) => e.type === 'decided').map((e) => e.sessionId), ['s1', 's1~work:enrich:0'])
      // The child's events, in its first run and after the decision, carry the dispatch's id.
      assert.deepEqual(events.filter((e) => e.type === 'decided').map((e) => e.subWorkflowDispatchId), [undefined, 'subwf-0'])
      for (const e of events) assert.equal(e.subWorkflowDispatchId, e.sessionId === 's1~work:enrich:0' ? 'subwf-0' : undefined, JSON.stringify(e))
    },
  },
  {
    name: 'a workflow calls itself: the first hop runs, the child\'s own call is refused, the outer call ends ok',
    everyCell: true,
    workspace: () => workspace({ 'workflows/split/workflow.yaml': SELF_SPEC }),
    options: { workflow: 'split' },
    answers: selfAnswers(),
    steps: [(w) => w.send('s1', { message: 'Split KK-1.' })],
    check: checkSelfCall,
    checkEvents: checkSelfCallEvents,
  },
  {
    name: 'a workflow calls itself, streamed: the child\'s text deltas carry its dispatch id, the caller\'s do not',
    everyCell: true,
    stream: true,
    workspace: () => workspace({ 'workflows/split/workflow.yaml': SELF_SPEC }),
    options: { workflow: 'split' },
    answers: selfAnswers(),
    steps: [(w) => w.send('s1', { message: 'Split KK-1.' })],
    check: checkSelfCall,
    checkEvents: checkSelfCallEvents,
  },
  {
    name: 'a new turn on a session parked for a decision presents the decision again; a reply keeps it',
    workspace: () => workspace({ 'workflows/reviews/workflow.yaml': REVIEW_SPEC }),
    options: { workflow: 'reviews' },
    answers: [advance('review', 'drafted', 'a1'), say('It is with a reviewer.'), say('Still with the reviewer.'), say('It is still with a reviewer.'), say('Goodbye.')],
    steps: [
      (w) => w.send('v1', { message: 'Draft it.' }),
      (w) => w.send('v1', { message: 'Any news?' }),
      (w, agent) => agent.invoke({ messages: [{ role: 'user', content: 'Hello again.' }] }, { configurable: { thread_id: 'v1' } }),
      (w) => w.decide('v1', { target: 'done' }),
    ],
    check: ([parked, replied, again, done], requests) => {
      assert.equal(parked.kind, 'parked')
      assert.equal(parked.pending.seq, 1)
      // A reply answers on the same record.
      assert.equal(replied.disposition, 'reply')
      assert.equal(replied.pending.seq, 1)
      // A new turn presents the decision again, on the next record.
      assert.equal(again.status, 'awaiting_decision')
      assert.equal(again.pendingDecision.state, 'review')
      assert.equal(again.pendingDecision.seq, 2)
      assert.equal(again.messages.at(-1).content, 'It is still with a reviewer.')
      assert.match(contents(requests[3]), /Hello again\./)
      assert.equal(done.kind, 'completed')
      assert.equal(done.reply, 'Goodbye.')
    },
    checkEvents: (events) => {
      assert.deepEqual(events.filter((e) => e.type === 'parked').map((e) => [e.state, e.awaiting]), [['review', 'decision'], ['review', 'decision']])
    },
  },
  {
    name: 'streamed answers: text deltas before each agent-text, a tool call split across chunks',
    files: true,
    stream: true,
    workspace: () => workspace({ 'workflows/one/workflow.yaml': ONE_STATE_SPEC }),
    options: { workflow: 'one' },
    answers: [
      { role: 'assistant', content: 'Writing the note now.', tool_calls: [call('write_file', { file_path: 'scratchpad/note.md', content: 'streamed' }, 'c1')] },
      say('The note is written.'),
    ],
    steps: [(w) => w.send('st1', { message: 'Write a note.' })],
    check: ([done]) => {
      assert.equal(done.kind, 'completed')
      assert.ok(JSON.stringify(done).includes('The note is written.'))
    },
    checkEvents: (events) => {
      const shown = events.filter((e) => e.type === 'agent-text-delta' || e.type === 'agent-text').map((e) => `${e.type}:${e.text}`)
      assert.deepEqual(shown, [
        ...textPieces('Writing the note now.').map((p) => `agent-text-delta:${p}`),
        'agent-text:Writing the note now.',
        ...textPieces('The note is written.').map((p) => `agent-text-delta:${p}`),
        'agent-text:The note is written.',
      ])
      assert.equal(events.find((e) => e.type === 'tool-result')?.status, 'ok')
    },
  },
]

// ---------------------------------------------------------------- the columns

class ScriptedChatModel extends BaseChatModel {
  constructor(next) {
    super({})
    this.next = next
  }
  _llmType() {
    return 'scripted'
  }
  bindTools(tools) {
    return this.withConfig({ tools })
  }
  async _generate(messages) {
    const message = toAIMessage(this.next(JSON.stringify(messages.map((m) => m.content))))
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] }
  }
}

/** A streaming ScriptedChatModel: `.stream()` yields the answer's text pieces, then each tool call's two halves. */
class StreamingScriptedChatModel extends ScriptedChatModel {
  async *_streamResponseChunks(messages) {
    const m = this.next(JSON.stringify(messages.map((x) => x.content)))
    for (const text of textPieces(m.content ?? '')) yield new ChatGenerationChunk({ text, message: new AIMessageChunk({ content: text }) })
    for (const [index, c] of (m.tool_calls ?? []).entries()) {
      const args = c.function.arguments
      const half = Math.floor(args.length / 2)
      for (const [part, first] of [[args.slice(0, half), true], [args.slice(half), false]]) {
        const piece = first ? { index, id: c.id, name: c.function.name, args: part } : { index, args: part }
        yield new ChatGenerationChunk({ text: '', message: new AIMessageChunk({ content: '', tool_call_chunks: [{ ...piece, type: 'tool_call_chunk' }] }) })
      }
    }
  }
}

/** The chunks an endpoint would send for `message`, without the usage chunk (a LangChain stream reports none). */
const chunksNoUsage = (message) => chunksOf(message).filter((c) => c.choices.length)

/** An answer as a model function's stream: those chunks, one by one. */
async function* streamOf(message) {
  for (const chunk of chunksNoUsage(message)) yield chunk
}

/**
 * The model sources. Each answers from `next(requestText)` and gives the createAgent
 * options that select it; `requestText` is what the test may search (the request's messages as text).
 */
const MODELS = {
  // A cassette recorded from the JS model function, replayed with no model (`runCell`).
  cassette: async () => ({ options: {} }),
  js: async (next, stream) => ({ options: { model: async (request) => (stream ? streamOf : asCompletion)(next(JSON.stringify(request.messages))) } }),
  langchain: async (next, stream) => ({ options: { model: new (stream ? StreamingScriptedChatModel : ScriptedChatModel)(next) } }),
  http: async (next, stream) => {
    const server = createServer((req, res) => {
      let body = ''
      req.on('data', (c) => (body += c))
      req.on('end', () => {
        let message
        try {
          message = next(JSON.stringify(JSON.parse(body).messages))
        } catch (e) {
          res.statusCode = 400
          res.end(JSON.stringify({ error: { message: String(e) } }))
          return
        }
        if (stream && JSON.parse(body).stream) {
          res.setHeader('content-type', 'text/event-stream')
          res.end(`${chunksNoUsage(message).map((c) => `data: ${JSON.stringify(c)}\n\n`).join('')}data: [DONE]\n\n`)
          return
        }
        res.setHeader('content-type', 'application/json')
        const { usage, ...plain } = message
        res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: 'scripted', choices: [{ index: 0, message: plain, finish_reason: 'stop' }], ...(usage ? { usage } : {}) }))
      })
    })
    await new Promise((r) => server.listen(0, '127.0.0.1', r))
    const saved = { ...process.env }
    process.env.ARCHMAX_API_BASE_URL = `http://127.0.0.1:${server.address().port}/v1`
    process.env.ARCHMAX_API_KEY = 'test'
    process.env.ARCHMAX_MODEL = 'scripted'
    return {
      options: {},
      close: async () => {
        for (const k of ['ARCHMAX_API_BASE_URL', 'ARCHMAX_API_KEY', 'ARCHMAX_MODEL']) {
          if (saved[k] === undefined) delete process.env[k]
          else process.env[k] = saved[k]
        }
        server.closeAllConnections()
        await new Promise((r) => server.close(r))
      },
    }
  },
}

const STORES = {
  filesystem: () => undefined,
  memory: () => createMemorySessionStore(),
  host: () => mapStore().store,
  // A fresh schema of the test database per cell; the column is left out (said so) when
  // ARCHMAX_TEST_PG_URL is not set locally, and fails under CI.
  postgres: () => pgStore('parity'),
}
if (!process.env.ARCHMAX_TEST_PG_URL && !(process.env.CI && process.env.CI !== 'false')) {
  console.log(`parity: the postgres store column is skipped: ${NO_PG}`)
  delete STORES.postgres
}

/** Cells that cannot pass yet, with the reason; they run as `todo`. None today. */
function knownGap(_scenario, _store) {
  return undefined
}

// ---------------------------------------------------------------- running a cell

/** What may differ between cells: clock readings, and the runtime's note ids, which carry one. */
function normalize(value) {
  const text = JSON.stringify(value).replace(/"note_(\d+)_\d+"/g, '"note_$1"')
  return JSON.parse(text, (key, v) => (['ts', 'createdAt', 'decidedAt', 'parkedAt', 'since', 'forkedAt'].includes(key) ? undefined : v))
}

/**
 * One cell. The cassette column records the scenario with the JS model function into a
 * cassette, then runs it again, in a fresh workspace, answered by the cassette alone.
 */
async function runCell(scenario, column) {
  // A scenario replaying each case's own cassette needs no recording first.
  if (column.model !== 'cassette' || scenario.caseCassettes) return runOnce(scenario, column)
  const path = join(mkdtempSync(join(tmpdir(), 'archmax-parity-tape-')), 'cell.cassette.json')
  const recorded = await runOnce(scenario, { ...column, model: 'js' }, { cassette: { path, mode: 'record' } })
  const replayed = await runOnce(scenario, column, { cassette: { path, mode: 'replay' } })
  return { ...replayed, requests: recorded.requests, unused: recorded.unused }
}

async function runOnce(scenario, { model, events, store }, extra = {}) {
  const answers = [...scenario.answers]
  const requests = []
  const next = (text) => {
    requests.push(text)
    const answer = answers.shift()
    if (answer === undefined) throw new Error(`the script ran out at request ${requests.length}`)
    return answer
  }
  const source = await MODELS[model](next, scenario.stream === true)
  const seen = []
  const options = typeof scenario.options === 'function' ? scenario.options() : scenario.options
  const sessionStore = STORES[store]()
  let agent
  try {
    agent = await createAgent({
      ...options,
      ...source.options,
      ...extra,
      workspace: { rootDir: scenario.workspace(), ...(scenario.mounts ? { mounts: scenario.mounts } : {}), ...(sessionStore ? { sessionStore } : {}) },
      ...(events ? { onEvent: (e) => seen.push(e) } : {}),
    })
    const outcomes = []
    for (const step of scenario.steps) outcomes.push(normalize(await step(agent.workflow, agent)))
    return { outcomes, types: eventTypes(seen), events: seen, requests, unused: answers.length }
  } finally {
    agent?.dispose()
    await source.close?.()
  }
}

/**
 * The event types in order, except that a script's or hook's own tool calls run
 * concurrently (`Promise.all`), so their events come in completion order, which timing
 * decides: each run of them is put in call order (every call's `tool-called` still before
 * its `tool-result`, which is checked).
 */
function eventTypes(events) {
  const out = []
  let run = []
  const flush = () => {
    const order = (e) => `${e.callId}\u0000${e.type === 'tool-called' ? 0 : 1}`
    out.push(...run.sort((a, b) => (order(a) < order(b) ? -1 : 1)).map((e) => `${e.type}:${e.tool}`))
    run = []
  }
  const called = new Set()
  for (const e of events) {
    if (e.origin && (e.type === 'tool-called' || e.type === 'tool-result')) {
      if (e.type === 'tool-called') called.add(e.callId)
      else assert.ok(called.has(e.callId), `${e.callId}: tool-result before tool-called`)
      run.push(e)
      continue
    }
    flush()
    out.push(e.type)
  }
  flush()
  return out
}

/** A limit that fired shows as a hook error or an exit naming a timeout. */
function assertNoLimitFired(cell) {
  const text = JSON.stringify([cell.outcomes, cell.events])
  assert.doesNotMatch(text, /timed out|time limit|timeoutMs|exceeded the .*budget/i, 'a time limit fired')
}

// ---------------------------------------------------------------- the matrix

const columns = []
for (const model of Object.keys(MODELS)) for (const events of [true, false]) for (const store of Object.keys(STORES)) columns.push({ model, events, store })
const label = ({ model, events, store }) => `${model} model, onEvent ${events ? 'on' : 'off'}, ${store} store`

for (const scenario of SCENARIOS) {
  test(`parity: ${scenario.name}`, async (t) => {
    // The reference: a JS model function, listening, over the filesystem store.
    const reference = await runCell(scenario, columns.find((c) => c.model === 'js'))
    scenario.check(reference.outcomes, reference.requests)
    scenario.checkEvents?.(reference.events)
    assert.equal(reference.unused, 0, 'the reference cell used every scripted answer')
    assertNoLimitFired(reference)
    for (const column of columns.filter((c) => !(c.model === 'js' && c.events && c.store === 'filesystem'))) {
      const gap = knownGap(scenario, column.store)
      const skip = scenario.skipStores?.[column.store]
      await t.test(label(column), gap ? { todo: gap } : skip ? { skip } : {}, async () => {
        const cell = await runCell(scenario, column)
        assertNoLimitFired(cell)
        assert.deepEqual(cell.outcomes, reference.outcomes)
        if (column.events) assert.deepEqual(cell.types, reference.types)
        if (column.events && scenario.everyCell) scenario.checkEvents?.(cell.events)
        assert.equal(cell.unused, 0)
      })
    }
  })
}

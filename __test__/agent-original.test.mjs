// What the original does that this port had not yet done (issue 12 item 5), each through
// createAgent: event shapes, tool-message markers, outcome fields, park records, titles,
// model attribution and tool texts.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { createAgent } from '@archmax-ai/harness'
import { advance, APPROVAL_SPEC, call, ON_ERROR_HUMAN_SPEC, say, scripted, workspace } from './helpers.mjs'

const tools = (...calls) => ({ role: 'assistant', content: null, tool_calls: calls })
const toolMessage = (messages, id) => messages.find((m) => m.role === 'tool' && m.tool_call_id === id)

/** A workflow: `draft` → human `review` (approve → `done`, rework → `draft`). */
const REVIEW_SPEC = `title: Reviews
instructions: A test workflow.
mounts:
  allow_always: []
states:
  draft:
    triggers: { manual: }
    instructions: Draft it, then hand it over.
    transitions:
      - to: review
  review:
    type: human
    instructions: A person approves or sends it back.
    transitions:
      - to: done
        description: approve
      - to: draft
        description: rework
  done:
    instructions: Say goodbye.
`

async function agentOn(files, answers, options = {}) {
  const root = workspace(files)
  const { model, requests } = scripted(answers)
  const events = []
  const agent = await createAgent({ workspace: { rootDir: root }, model, onEvent: (e) => events.push(e), ...options })
  return { agent, events, requests, root }
}

test('skills-loaded names the skills at assembly, before createAgent resolves and before any turn event', async () => {
  const skill = (name) => `---\nname: ${name}\ndescription: The ${name} skill.\n---\n\n# ${name}\n`
  const { agent, events } = await agentOn(
    { 'workflows/reviews/workflow.yaml': REVIEW_SPEC, 'skills/alpha/SKILL.md': skill('alpha'), 'skills/beta/SKILL.md': skill('beta') },
    [say('Hi.')],
    { workflow: 'reviews' },
  )
  try {
    const loaded = events.filter((e) => e.type === 'skills-loaded')
    assert.deepEqual(loaded.map((e) => e.names), [['alpha', 'beta']])
    assert.equal(loaded[0].level, 'info')
    assert.equal(loaded[0].sessionId, undefined)
    await agent.workflow.send('s1', { message: 'Hi' })
    assert.equal(events[0].type, 'skills-loaded')
    for (let i = 1; i < events.length; i++) assert.ok(events[i].seq > events[i - 1].seq)
  } finally {
    agent.dispose()
  }
  // No skills, no event.
  const none = await agentOn({ 'workflows/reviews/workflow.yaml': REVIEW_SPEC }, [], { workflow: 'reviews' })
  none.agent.dispose()
  assert.equal(none.events.filter((e) => e.type === 'skills-loaded').length, 0)
})

test('a governance refusal is marked governance_blocked beside its BLOCKED text, in the outcome and the stored transcript', async () => {
  const { agent } = await agentOn(
    { 'workflows/reviews/workflow.yaml': REVIEW_SPEC },
    [tools(call('crm_lookup', { email: 'a@b.example' }, 'c1'), call('archmax_get_variables', {}, 'c2')), say('Cannot look it up here.')],
    { workflow: 'reviews', tools: [{ name: 'crm_lookup', description: 'Looks up.', schema: { type: 'object', properties: { email: { type: 'string' } } }, handler: async () => 'found' }] },
  )
  try {
    const outcome = await agent.workflow.send('g1', { message: 'Look me up.' })
    for (const messages of [outcome.messages, await agent.sessions.messages('g1')]) {
      const refused = toolMessage(messages, 'c1')
      assert.match(refused.content, /^\[workflow\] BLOCKED: 'crm_lookup'/)
      assert.equal(refused.governance_blocked, true)
      // An allowed call carries no marker.
      assert.equal(toolMessage(messages, 'c2').governance_blocked, undefined)
    }
  } finally {
    agent.dispose()
  }
})

test('archmax_advance and archmax_raise are bracketed by tool-called/tool-result with the callId of their advance/raised', async () => {
  const { agent, events } = await agentOn(
    { 'workflows/reviews/workflow.yaml': REVIEW_SPEC.replace('      - to: review\n', '      - to: review\n      - to: done\n') },
    [advance('done', 'drafted'), tools(call('archmax_raise', { code: 'no-data', reason: 'nothing to say' }, 'r1'))],
    { workflow: 'reviews' },
  )
  try {
    const outcome = await agent.workflow.send('t1', { message: 'Go.' })
    assert.equal(outcome.kind, 'failed')
    const of = (type, tool) => events.filter((e) => e.type === type && (tool === undefined || e.tool === tool))
    const [moved] = of('advance').filter((e) => e.from === 'draft')
    assert.equal(moved.callId, 'call_archmax_advance')
    assert.deepEqual(of('tool-called', 'archmax_advance').map((e) => e.callId), ['call_archmax_advance'])
    assert.deepEqual(of('tool-result', 'archmax_advance').map((e) => [e.callId, e.status]), [['call_archmax_advance', 'ok']])
    assert.equal(of('raised')[0].callId, 'r1')
    assert.deepEqual(of('tool-called', 'archmax_raise').map((e) => e.callId), ['r1'])
    assert.deepEqual(of('tool-result', 'archmax_raise').map((e) => e.callId), ['r1'])
    const types = events.map((e) => `${e.type}:${e.tool ?? ''}`)
    assert.ok(types.indexOf('tool-called:archmax_raise') < types.indexOf('raised:'))
  } finally {
    agent.dispose()
  }
})

test('a refused archmax_advance reports tool-result error; its tool message stays an ordinary answer', async () => {
  const { agent, events } = await agentOn({ 'workflows/reviews/workflow.yaml': REVIEW_SPEC }, [advance('nowhere'), say('Staying.')], { workflow: 'reviews' })
  try {
    const outcome = await agent.workflow.send('t2', { message: 'Go.' })
    const answer = toolMessage(outcome.messages, 'call_archmax_advance')
    assert.match(answer.content, /^archmax_advance rejected: /)
    assert.equal(answer.is_error, false)
    const result = events.find((e) => e.type === 'tool-result' && e.tool === 'archmax_advance')
    assert.equal(result.status, 'error')
    assert.equal(result.level, 'warn')
  } finally {
    agent.dispose()
  }
})

test('hook-rejected is emitted for a veto and a correct; an ok keeps its reason in hook-verdict', async () => {
  const verdicts = [{ verdict: 'veto', reason: 'not signed off' }, { verdict: 'ok', reason: 'signed off' }]
  const vetoed = await agentOn({ 'workflows/approvals/workflow.yaml': APPROVAL_SPEC }, [advance('done'), advance('done'), say('Done.')], {
    workflow: 'approvals',
    hookExecutors: { approval: async () => ({ ok: true, value: verdicts.shift(), logs: [], formatted: '' }) },
  })
  try {
    const outcome = await vetoed.agent.workflow.send('h1', { message: 'Refund it.' })
    assert.equal(outcome.state, 'done')
    const rejected = vetoed.events.filter((e) => e.type === 'hook-rejected')
    assert.deepEqual(rejected.map((e) => [e.state, e.phase, e.reason, e.level]), [['draft', 'after', 'hook veto: not signed off', 'warn']])
    assert.deepEqual(
      vetoed.events.filter((e) => e.type === 'hook-verdict').map((e) => [e.verdict, e.reason]),
      [
        ['veto', 'not signed off'],
        ['ok', 'signed off'],
      ],
    )
  } finally {
    vetoed.agent.dispose()
  }
  const GRADED = `title: Graded
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
  const corrected = await agentOn(
    { 'workflows/graded/workflow.yaml': GRADED },
    [say('Soon.'), say('{"verdict": "correct", "reason": "name a date"}'), say('On 3 March.'), say('{"verdict": "ok", "reason": "names a date"}')],
    { workflow: 'graded' },
  )
  try {
    const outcome = await corrected.agent.workflow.send('h2', { message: 'When?' })
    assert.equal(outcome.kind, 'completed')
    const rejected = corrected.events.filter((e) => e.type === 'hook-rejected')
    assert.equal(rejected.length, 1)
    assert.match(rejected[0].reason, /^rubric: reply incomplete — name a date\. .*\(1 attempt\(s\) remaining\)$/)
    assert.deepEqual(
      corrected.events.filter((e) => e.type === 'hook-verdict').map((e) => [e.verdict, e.reason]),
      [
        ['correct', 'name a date'],
        ['ok', 'names a date'],
      ],
    )
  } finally {
    corrected.agent.dispose()
  }
})

test("a rubric's ok keeps the grader's reason in hook-verdict", async () => {
  const SPEC = `title: Graded
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
`
  const { agent, events } = await agentOn({ 'workflows/graded/workflow.yaml': SPEC }, [say('On 3 March.'), say('{"verdict": "ok", "reason": "names a date"}')], { workflow: 'graded' })
  try {
    await agent.workflow.send('r1', { message: 'When?' })
    assert.deepEqual(
      events.filter((e) => e.type === 'hook-verdict').map((e) => [e.verdict, e.reason]),
      [['ok', 'names a date']],
    )
  } finally {
    agent.dispose()
  }
})

test('Outcome carries workflowState; a resume says whether it reparked', async () => {
  const { agent } = await agentOn(
    { 'workflows/reviews/workflow.yaml': REVIEW_SPEC },
    [advance('review', 'drafted'), say('It is with a reviewer.'), say('Still with the reviewer.'), say('Approved, goodbye.')],
    { workflow: 'reviews' },
  )
  try {
    const parked = await agent.workflow.send('o1', { message: 'Go.' })
    assert.equal(parked.kind, 'parked')
    assert.equal(parked.workflowState, 'review')
    assert.equal(parked.reparked, undefined)
    const replied = await agent.workflow.reply('o1', 'Any news?')
    assert.equal(replied.reparked, true)
    assert.equal(replied.workflowState, 'review')
    const done = await agent.workflow.decide('o1', { target: 'done' })
    assert.equal(done.kind, 'completed')
    assert.equal(done.reparked, false)
    assert.equal(done.workflowState, 'done')
  } finally {
    agent.dispose()
  }
})

test('a new turn opened at a human state opens a fresh decision record; a reply keeps the record', async () => {
  let fail = false
  const answers = [
    advance('review', 'drafted'),
    () => {
      if (fail) throw new Error('the provider is down')
      return say('unused')
    },
    say('I see your new message; the review is still with a person.'),
    say('Still pending.'),
  ]
  fail = true
  const { agent, events } = await agentOn({ 'workflows/reviews/workflow.yaml': REVIEW_SPEC }, answers, { workflow: 'reviews' })
  try {
    // The hand-off's reply-only call fails: the session ends failed, standing at the human state.
    const failed = await agent.workflow.send('d1', { message: 'Go.' })
    assert.equal(failed.kind, 'failed')
    assert.equal(failed.state, 'review')
    const firstParks = events.filter((e) => e.type === 'parked').length
    const turn = await agent.workflow.send('d1', { message: 'Hello again?' })
    assert.equal(turn.kind, 'parked')
    assert.equal(turn.disposition, 'turn')
    assert.equal(turn.pending.seq, 2)
    assert.equal(events.filter((e) => e.type === 'parked').length, firstParks + 1)
    assert.equal(turn.reply, 'I see your new message; the review is still with a person.')
    const replied = await agent.workflow.reply('d1', 'And now?')
    assert.equal(replied.pending.seq, 2)
    assert.equal(replied.pending.createdAt, turn.pending.createdAt)
    assert.equal(events.filter((e) => e.type === 'parked').length, firstParks + 1)
  } finally {
    agent.dispose()
  }
})

test("the park's own hand-off text is not reported as an outbound park-message; an answer to a person is", async () => {
  const { agent, events } = await agentOn(
    { 'workflows/reviews/workflow.yaml': REVIEW_SPEC },
    [advance('review', 'drafted'), say('It is with a reviewer now.'), say('Still with the reviewer.')],
    { workflow: 'reviews' },
  )
  try {
    await agent.workflow.send('p1', { message: 'Go.' })
    assert.deepEqual(events.filter((e) => e.type === 'park-message'), [])
    await agent.workflow.reply('p1', 'Any news?')
    assert.deepEqual(
      events.filter((e) => e.type === 'park-message').map((e) => [e.direction, e.text]),
      [
        ['inbound', 'Any news?'],
        ['outbound', 'Still with the reviewer.'],
      ],
    )
  } finally {
    agent.dispose()
  }
})

test('a host-seeded title stays unlocked and is announced with title-set (no state)', async () => {
  const { agent, events } = await agentOn({ 'workflows/reviews/workflow.yaml': REVIEW_SPEC }, [say('Hi.'), say('Again.')], { workflow: 'reviews', variables: { title: 'Refund for KK-1', order_id: 'KK-1' } })
  try {
    const outcome = await agent.workflow.send('ti1', { message: 'Hi' })
    assert.deepEqual(outcome.variables.title, { value: 'Refund for KK-1', locked: false })
    assert.equal(outcome.variables.order_id.locked, true)
    const set = events.filter((e) => e.type === 'title-set')
    assert.equal(set.length, 1)
    assert.equal(set[0].title, 'Refund for KK-1')
    assert.equal('state' in set[0], false)
    assert.equal('callId' in set[0], false)
    // The session holds a title: the next turn's seed loses to it and announces nothing.
    await agent.workflow.send('ti1', { message: 'Hi again' })
    assert.equal(events.filter((e) => e.type === 'title-set').length, 1)
  } finally {
    agent.dispose()
  }
})

const WAIT_SPEC = `title: Waits
instructions: A test workflow.
mounts:
  allow_always: []
states:
  invoice:
    triggers: { manual: }
    instructions: Wait for the payment, then say thanks.
`

test('a delivered title is trimmed and announced with title-set; a malformed one is skipped with a warning', async () => {
  const wait = tools(call('archmax_wait', { reason: 'waiting for the payment' }, 'w1'))
  const { agent, events } = await agentOn({ 'workflows/waits/workflow.yaml': WAIT_SPEC }, [wait, say('Waiting.'), wait, say('Waiting again.'), say('Thanks.')], { workflow: 'waits' })
  try {
    await agent.workflow.send('dt1', { message: 'Invoice.' })
    const first = await agent.workflow.deliver('dt1', { trigger: { id: 'paid' }, variables: { title: '  Payment for KK-1  ', amount: 20 } })
    assert.deepEqual(first.variables.title, { value: 'Payment for KK-1', locked: false })
    const set = events.filter((e) => e.type === 'title-set')
    assert.deepEqual(set.map((e) => [e.title, e.state]), [['Payment for KK-1', 'invoice']])
    const second = await agent.workflow.deliver('dt1', { trigger: { id: 'paid' }, variables: { title: 'two\nlines', amount: 30 } })
    assert.equal(second.variables.title.value, 'Payment for KK-1')
    assert.equal(second.variables.amount.value, 30)
    const warned = events.filter((e) => e.type === 'warning' && e.message.startsWith('Delivered title ignored: '))
    assert.equal(warned.length, 1)
    assert.equal(events.filter((e) => e.type === 'title-set').length, 1)
    const namesSet = events.filter((e) => e.type === 'variables-set').at(-1)
    assert.deepEqual(namesSet.names, ['amount'])
  } finally {
    agent.dispose()
  }
})

test('model-usage has no model when no id is known; a LangChain model prices and attributes by its configured id', async () => {
  const usage = { prompt_tokens: 1000, completion_tokens: 100, total_tokens: 1100 }
  const saved = process.env.ARCHMAX_MODEL
  delete process.env.ARCHMAX_MODEL
  try {
    const { agent, events } = await agentOn({ 'workflows/reviews/workflow.yaml': REVIEW_SPEC }, [{ choices: [{ message: { role: 'assistant', content: 'Hi.' } }], usage }], { workflow: 'reviews' })
    await agent.workflow.send('u1', { message: 'Hi' })
    agent.dispose()
    const [reported] = events.filter((e) => e.type === 'model-usage')
    assert.equal(reported.inputTokens, 1000)
    assert.equal('model' in reported, false)

    const chat = {
      model: 'gpt-test-mini',
      bindTools() {
        return this
      },
      async invoke() {
        return { content: 'Hello.', tool_calls: [], usage_metadata: { input_tokens: 1000, output_tokens: 100, total_tokens: 1100 } }
      },
    }
    const lcEvents = []
    const lc = await createAgent({
      workflow: 'reviews',
      workspace: { rootDir: workspace({ 'workflows/reviews/workflow.yaml': REVIEW_SPEC }) },
      model: chat,
      onEvent: (e) => lcEvents.push(e),
      pricing: { 'gpt-test-mini': { input: 1, output: 10 }, default: { input: 100, output: 100 } },
    })
    const outcome = await lc.workflow.send('u2', { message: 'Hi' })
    lc.dispose()
    const [priced] = lcEvents.filter((e) => e.type === 'model-usage')
    assert.equal(priced.model, 'gpt-test-mini')
    assert.equal(priced.costUsd, 0.002)
    assert.equal(outcome.usage.costUsd, 0.002)
  } finally {
    if (saved !== undefined) process.env.ARCHMAX_MODEL = saved
  }
})

// The original's own test of this description matches these four phrases.
test('archmax_raise says it is for when the task cannot be completed, never to finish work that worked, and alone', async () => {
  const { agent, requests } = await agentOn({ 'workflows/reviews/workflow.yaml': REVIEW_SPEC }, [say('Hi.')], { workflow: 'reviews' })
  try {
    await agent.workflow.send('ra1', { message: 'Hi' })
    const raise = requests[0].tools.find((t) => t.function.name === 'archmax_raise')
    assert.match(raise.function.description, /when the task cannot be completed/)
    assert.match(raise.function.description, /Never call it to finish work that worked/)
    assert.match(raise.function.description, /a reply that only explains the failure reports it as one/)
    assert.match(raise.function.description, /Call it alone/)
  } finally {
    agent.dispose()
  }
})

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a])

function chartsWorkspace() {
  const dir = workspace({ 'AGENTS.md': '# Persona\n', 'notes/many.txt': 'needle 1\nneedle 2\nneedle 3\nneedle 4\n' })
  mkdirSync(join(dir, 'charts'), { recursive: true })
  writeFileSync(join(dir, 'charts/a.png'), PNG)
  return dir
}

test("with images on, read_file's description says an image is shown right after the result", async () => {
  for (const images of [undefined, {}]) {
    const { model, requests } = scripted([say('Hi.')])
    const agent = await createAgent({ workflow: false, workspace: { rootDir: chartsWorkspace() }, model, images })
    try {
      await agent.invoke({ messages: [{ role: 'user', content: 'Hi' }] }, { configurable: { thread_id: 'im1' } })
      const read = requests[0].tools.find((t) => t.function.name === 'read_file').function.description
      if (images) {
        assert.match(read, /an image is shown to you right after the tool result/)
        assert.doesNotMatch(read, /Text files only/)
      } else {
        assert.match(read, /Text files only: a binary file/)
        assert.doesNotMatch(read, /shown to you/)
      }
    } finally {
      agent.dispose()
    }
  }
})

test("read_file's binary notice is an ordinary result, not an error; the grep cap note says it hit the maximum match count", async () => {
  const { model } = scripted([
    tools(call('read_file', { file_path: 'charts/a.png' }, 'b1'), call('grep', { pattern: 'needle', path: 'notes', max_count: 2 }, 'g1')),
    say('Done.'),
  ])
  const events = []
  const agent = await createAgent({ workflow: false, workspace: { rootDir: chartsWorkspace(), mounts: { '/charts/': {}, '/notes/': {} } }, model, onEvent: (e) => events.push(e) })
  try {
    const { messages } = await agent.invoke({ messages: [{ role: 'user', content: 'Read them.' }] }, { configurable: { thread_id: 'bin1' } })
    const binary = toolMessage(messages, 'b1')
    assert.equal(binary.content, "Error: 'charts/a.png' is a binary file (image/png, 8 B) and was not read; read_file returns text files only.")
    assert.equal(binary.is_error, false)
    assert.equal(events.find((e) => e.type === 'tool-result' && e.callId === 'b1').status, 'ok')
    const grep = toolMessage(messages, 'g1')
    assert.match(grep.content, /hit the maximum match count/)
  } finally {
    agent.dispose()
  }
})

test('send(id, { decision }) resumes a decision as decide does', async () => {
  const { agent, events } = await agentOn(
    { 'workflows/reviews/workflow.yaml': REVIEW_SPEC },
    [advance('review', 'drafted'), say('It is with a reviewer.'), say('Approved, goodbye.')],
    { workflow: 'reviews' },
  )
  try {
    await agent.workflow.send('sd1', { message: 'Go.' })
    const done = await agent.workflow.send('sd1', { decision: { target: 'done', comment: 'fine' } })
    assert.equal(done.disposition, 'decide')
    assert.equal(done.kind, 'completed')
    assert.equal(done.state, 'done')
    assert.deepEqual(events.filter((e) => e.type === 'decided').map((e) => [e.state, e.to]), [['review', 'done']])
    assert.equal(done.auditTrail.at(-1).kind, 'human')
  } finally {
    agent.dispose()
  }
})

test("a person's message to a session waiting for an event resets that state's maxParks count", async () => {
  const SPEC = `title: Polls
instructions: A test workflow.
mounts:
  allow_always: []
states:
  invoice:
    triggers: { manual: }
    instructions: Wait for the payment.
    budget: { maxParks: 1 }
`
  const waitSaying = (text, id) => ({ role: 'assistant', content: text, tool_calls: [call('archmax_wait', { reason: 'the payment' }, id)] })
  const { agent } = await agentOn(
    { 'workflows/polls/workflow.yaml': SPEC },
    [waitSaying('I will wait for the payment.', 'w1'), waitSaying('Still waiting for it.', 'w2'), waitSaying('Waiting once more.', 'w3'), say('I cannot wait any longer.')],
    { workflow: 'polls' },
  )
  try {
    assert.equal((await agent.workflow.send('mp1', { message: 'Here is the invoice.' })).status, 'awaiting_input')
    // A person writes while it waits: the wait loop starts over, so the second park fits the budget.
    const asked = await agent.workflow.send('mp1', { message: 'Has it arrived?' })
    assert.equal(asked.disposition, 'deliver')
    assert.equal(asked.status, 'awaiting_input')
    // An event without a person's message counts on.
    const polled = await agent.workflow.deliver('mp1', { trigger: { id: 'tick' } })
    assert.equal(polled.kind, 'rejected')
    assert.match(polled.rejected, /exhausted its park budget \(maxParks: 1\)/)
  } finally {
    agent.dispose()
  }
})

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
      forbid: [remove_file]
`

test('a host tool handler reads, uploads, downloads and deletes through context.workspace, governed as the agent file tools are', async () => {
  const seen = {}
  let kept
  const archive = {
    name: 'archive',
    description: 'Archives the note.',
    schema: { type: 'object', properties: {} },
    handler: async (_args, context) => {
      const ws = context.workspace
      kept = context
      assert.equal(Object.keys(context).includes('workspace'), false)
      seen.read = await ws.read('scratchpad/note.md')
      seen.part = await ws.read('scratchpad/note.md', 1, 1)
      seen.upload = await ws.uploadFiles([
        ['scratchpad/logo.png', new Uint8Array(PNG)],
        ['catalog/prices.md', new TextEncoder().encode('new prices')],
      ])
      seen.download = await ws.downloadFiles(['scratchpad/logo.png', 'scratchpad/missing.txt'])
      seen.internal = await ws.read('checkpoints/state.json')
      seen.forbidden = await ws.delete('scratchpad/note.md')
      return 'archived'
    },
  }
  const root = workspace({ 'workflows/archive/workflow.yaml': ARCHIVE_SPEC, 'catalog/prices.md': 'old prices\n' })
  const { model } = scripted([
    tools(call('write_file', { file_path: 'scratchpad/note.md', content: 'alpha\nbeta' }, 'c1')),
    tools(call('archive', {}, 'c2')),
    say('Archived.'),
  ])
  const agent = await createAgent({ workflow: 'archive', workspace: { rootDir: root, mounts: { '/catalog/': { readOnly: true } } }, model, tools: [archive] })
  try {
    const outcome = await agent.workflow.send('ws1', { message: 'Archive it.' })
    assert.equal(outcome.kind, 'completed')
    // The file's text as it is (a Deep Agents backend's read), not read_file's numbered view.
    assert.deepEqual(seen.read, { content: 'alpha\nbeta' })
    assert.deepEqual(seen.part, { content: 'beta' })
    assert.equal(seen.upload[0].error, null)
    // A refused upload as a Deep Agents backend reports it, the kernel's reason beside it.
    assert.equal(seen.upload[1].path, '/catalog/prices.md')
    assert.equal(seen.upload[1].error, 'permission_denied')
    assert.match(seen.upload[1].reason, /^\[workflow\] BLOCKED: 'write_file' on 'catalog\/prices\.md' targets a read-only mount/)
    assert.deepEqual([...seen.download[0].content], [...PNG])
    assert.equal(seen.download[0].error, null)
    assert.equal(seen.download[1].content, null)
    assert.match(seen.download[1].error, /missing\.txt/)
    assert.match(seen.internal.error, /^\[workflow\] BLOCKED: 'read_file'/)
    assert.match(seen.forbidden.error, /^\[workflow\] BLOCKED: 'remove_file'.* is forbidden by state 'work'/)
    // Outside its call the context's workspace is gone.
    assert.throws(() => kept.workspace, /only usable while its tool call runs/)
    assert.deepEqual(await agent.sessions.messages('ws1').then((m) => m.filter((x) => x.role === 'tool').map((x) => x.content)).then((c) => c.includes('archived')), true)
  } finally {
    agent.dispose()
  }
})

test("on_error routes once the model has finished its segment, and into a human state it parks awaiting a decision", async () => {
  const { agent, events, requests } = await agentOn(
    { 'workflows/approvals/workflow.yaml': ON_ERROR_HUMAN_SPEC },
    [advance('done'), say('I could not get the approval.'), say('A person will decide what happens next.')],
    {
      workflow: 'approvals',
      hookExecutors: {
        approval: async () => {
          throw new Error('the approval service is down')
        },
      },
    },
  )
  try {
    const outcome = await agent.workflow.send('oe1', { message: 'Refund it.' })
    // The failed advance is answered in place; the model's next call is still in `draft`.
    const texts = events.filter((e) => e.type === 'agent-text').map((e) => [e.state, e.text])
    assert.deepEqual(texts, [
      ['draft', 'I could not get the approval.'],
      ['triage', 'A person will decide what happens next.'],
    ])
    const types = events.map((e) => e.type)
    assert.ok(types.indexOf('state-error-routed') > types.indexOf('agent-text'))
    assert.match(JSON.stringify(requests[1].messages.at(-1)), /archmax_advance rejected: /)
    // Routed into a human state: parked there, awaiting a decision, after one reply-only call.
    assert.equal(outcome.kind, 'parked')
    assert.equal(outcome.status, 'awaiting_decision')
    assert.equal(outcome.state, 'triage')
    assert.equal(outcome.parkedChannel, 'decision')
    assert.equal(outcome.pending.seq, 1)
    assert.equal(outcome.reply, 'A person will decide what happens next.')
    assert.deepEqual(events.filter((e) => e.type === 'parked').map((e) => [e.state, e.awaiting]), [['triage', 'decision']])
    assert.equal(requests.length, 3)
    assert.equal(outcome.auditTrail.at(-1).kind, 'on_error')
  } finally {
    agent.dispose()
  }
})

test('a failure routed when the model finishes runs the handler state in the same turn', async () => {
  const SPEC = `title: Approvals
instructions: A test workflow.
mounts:
  allow_always: []
states:
  draft:
    triggers: { manual: }
    instructions: Draft the refund.
    on_error: closed
    transitions:
      - to: done
    after:
      approval: finance
  closed:
    instructions: Tell the customer it could not be done.
  done:
    instructions: Say goodbye.
`
  const { agent, events } = await agentOn(
    { 'workflows/approvals/workflow.yaml': SPEC },
    [advance('done'), say('I could not get the approval.'), say('Sorry, the refund could not be made.')],
    { workflow: 'approvals', hookExecutors: { approval: async () => ({ ok: false, error: { message: 'down' }, logs: [], formatted: '' }) } },
  )
  try {
    const outcome = await agent.workflow.send('oe2', { message: 'Refund it.' })
    assert.equal(outcome.kind, 'completed')
    assert.equal(outcome.state, 'closed')
    assert.equal(outcome.reply, 'Sorry, the refund could not be made.')
    assert.deepEqual(events.filter((e) => e.type === 'agent-text').map((e) => e.state), ['draft', 'closed'])
  } finally {
    agent.dispose()
  }
})

test('modelFactory builds the declared model ids at assembly, once each', async () => {
  const SPEC = `title: Models
instructions: A test workflow.
mounts:
  allow_always: []
states:
  intake:
    triggers: { manual: }
    instructions: Take it in.
    transitions:
      - to: lookup
  lookup:
    instructions: Look it up.
    model: big-model
    after:
      rubric:
        instructions: Must name an order.
        model: grader-model
    transitions:
      - to: done
  done:
    instructions: Say goodbye.
    model: big-model
    after:
      rubric:
        instructions: Must be polite.
`
  const asked = []
  const agent = await createAgent({
    workflow: 'models',
    workspace: { rootDir: workspace({ 'workflows/models/workflow.yaml': SPEC }) },
    defaultModel: 'small-model',
    modelFactory: (role, env, id) => {
      asked.push([role, id])
      return async () => ({ role: 'assistant', content: 'Hi.' })
    },
  })
  try {
    assert.deepEqual(asked, [
      ['agent', undefined],
      ['rubric', 'grader-model'],
      ['rubric', undefined],
      ['agent', 'big-model'],
    ])
    await agent.workflow.send('mf1', { message: 'Hi' })
    assert.equal(asked.length, 4)
  } finally {
    agent.dispose()
  }
  // A declared model the factory cannot build fails assembly.
  await assert.rejects(
    createAgent({
      workflow: 'models',
      workspace: { rootDir: workspace({ 'workflows/models/workflow.yaml': SPEC }) },
      modelFactory: (role, env, id) => {
        if (id === 'grader-model') throw new Error('no grader here')
        return async () => ({ role: 'assistant', content: 'Hi.' })
      },
    }),
    /no grader here/,
  )
})

test("a host tool called from archmax_eval code gets context.workspace too", async () => {
  const SPEC = `title: Archive
instructions: A test workflow.
mounts:
  allow_always: []
states:
  work:
    triggers: { manual: }
    instructions: Write the note, then archive it from code.
    tools:
      allow: [archive]
`
  const archive = {
    name: 'archive',
    description: 'Archives the note.',
    schema: { type: 'object', properties: {} },
    handler: async (_args, { workspace: ws }) => {
      const { content, error } = await ws.read('scratchpad/note.md')
      return error ?? `archived: ${content.trim()}`
    },
  }
  const { model, requests } = scripted([
    tools(call('write_file', { file_path: 'scratchpad/note.md', content: 'alpha' }, 'c1')),
    tools(call('archmax_eval', { code: 'await tools.archive({})' }, 'c2')),
    say('Archived.'),
  ])
  const agent = await createAgent({ workflow: 'archive', workspace: { rootDir: workspace({ 'workflows/archive/workflow.yaml': SPEC }) }, model, tools: [archive] })
  try {
    await agent.workflow.send('ws2', { message: 'Archive it.' })
    assert.match(JSON.stringify(requests[2].messages.at(-1)), /→ archived: alpha"/)
  } finally {
    agent.dispose()
  }
})

test('the plain agent answers a copy onto, or a removal from, a read-only mount as its file operations do', async () => {
  const root = workspace({ 'AGENTS.md': '# Persona\n', 'catalog/a.md': 'a\n' })
  const { model } = scripted([
    tools(
      call('write_file', { file_path: 'scratchpad/x.md', content: 'x' }, 'w1'),
      call('copy_file', { source: 'scratchpad/x.md', destination: 'catalog/b.md' }, 'c1'),
      call('remove_file', { file_path: 'catalog/a.md' }, 'r1'),
      call('write_file', { file_path: 'catalog/c.md', content: 'c' }, 'w2'),
    ),
    say('Done.'),
  ])
  const agent = await createAgent({ workflow: false, workspace: { rootDir: root, mounts: { '/catalog/': { readOnly: true } } }, model })
  try {
    const { messages } = await agent.invoke({ messages: [{ role: 'user', content: 'Go.' }] }, { configurable: { thread_id: 'pl1' } })
    const copy = toolMessage(messages, 'c1')
    assert.equal(copy.content, "Error: Cannot copy to 'catalog/b.md': it is served by a read-only mount.")
    assert.equal(copy.governance_blocked, undefined)
    assert.equal(toolMessage(messages, 'r1').content, "Error: Cannot remove 'catalog/a.md': it is served by a read-only mount.")
    // Nothing was written or removed; other writes there stay the kernel's refusal.
    assert.equal(existsSync(join(root, 'catalog/b.md')), false)
    assert.equal(existsSync(join(root, 'catalog/a.md')), true)
    assert.match(toolMessage(messages, 'w2').content, /^\[workflow\] BLOCKED: 'write_file'/)
  } finally {
    agent.dispose()
  }
})

// createAgent: the Rust harness driven from JS (model, host tools, events, parks, errors).
import { test } from 'node:test'
import { spawnSync } from 'node:child_process'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import {
  createAgent,
  HarnessError,
  InvalidDecisionTargetError,
  SessionNotParkedError,
  SessionStoreIdError,
} from '@archmax-ai/harness'
import { createAgent as createAgentFromSubpath } from '@archmax-ai/harness/agent'
import { copyExample, EXAMPLE, ROOT, advance, call, say, scripted, workspace } from './helpers.mjs'

/** A copy of the example workspace (sessions are written into it). */
function exampleCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'archmax-agent-'))
  copyExample(dir)
  return dir
}

const TOOLS_SPEC = `title: Tools and parks
instructions: A test workflow.
mounts:
  allow_always: []
states:
  intake:
    triggers: { manual: }
    instructions: Route the request.
    transitions:
      - to: lookup
  lookup:
    instructions: Look the customer up.
    tools:
      allow: [crm_lookup]
    transitions:
      - to: review
  review:
    type: human
    instructions: A person decides.
    transitions:
      - to: done
        type: approve
        description: Approve.
      - to: lookup
        type: refine
        description: Send it back.
  done:
    instructions: Say goodbye.
`

const crmTool = (calls) => ({
  name: 'crm_lookup',
  description: 'Looks a customer up.',
  schema: { type: 'object', properties: { email: { type: 'string' } }, required: ['email'] },
  handler: async (args, ctx) => {
    calls.push({ args, ctx })
    return { customer: 'Acme', tier: 'gold' }
  },
})

test('the README example: a JS model works the example workflow end to end', async () => {
  assert.equal(createAgentFromSubpath, createAgent)
  const { model, requests } = scripted([advance('general-question', 'a shop question'), say('Yes, we ship to Austria.')])
  const events = []
  const agent = await createAgent({
    workflow: 'order-lookup',
    workspace: { rootDir: exampleCopy() },
    model,
    onEvent: (e) => events.push(e),
  })
  try {
    const outcome = await agent.workflow.send('s-readme', { message: 'Do you ship to Austria?' })
    assert.equal(outcome.kind, 'completed')
    assert.equal(outcome.sessionId, 's-readme')
    assert.equal(outcome.state, 'general-question')
    assert.equal(outcome.reply, 'Yes, we ship to Austria.')
    assert.deepEqual(outcome.auditTrail.map((s) => s.to), ['classify', 'general-question'])
    // The request is the chat-completions body.
    assert.equal(requests.length, 2)
    assert.equal(requests[0].messages[0].role, 'system')
    assert.ok(requests[0].tools.some((t) => t.function.name === 'archmax_advance'))
    // Every event is an envelope; all reached onEvent before send resolved.
    assert.ok(events.length > 0)
    for (const e of events) {
      assert.equal(typeof e.type, 'string')
      assert.equal(typeof e.ts, 'number')
    }
    assert.ok(events.some((e) => e.type === 'state-enter' && e.state === 'general-question'))
    const [summary] = await agent.sessions.list()
    assert.deepEqual(
      { id: summary.sessionId, status: summary.status, classification: summary.classification, at: summary.workflowState },
      { id: 's-readme', status: 'completed', classification: 'finished', at: 'general-question' },
    )
    assert.deepEqual(await agent.sessions.get('s-readme'), summary)
    assert.equal(await agent.sessions.get('s-none'), null)
    // The outcome carries the transcript; the store holds the same messages.
    assert.deepEqual(await agent.sessions.messages('s-readme'), outcome.messages)
    assert.equal(await agent.sessions.messageCount('s-readme'), outcome.messages.length)
    assert.equal(outcome.messages.at(-1).content, 'Yes, we ship to Austria.')
  } finally {
    agent.dispose()
  }
})

test('event order: seq strictly increasing, every event before the outcome', async () => {
  const { model } = scripted([advance('general-question'), say('Hello.'), advance('order-question'), say('Shipped.')])
  const events = []
  const agent = await createAgent({ workflow: 'order-lookup', workspace: { rootDir: exampleCopy() }, model, onEvent: (e) => events.push(e), sessionPath: 'triggers.-1.conversationId' })
  try {
    await agent.workflow.send('s-a', { message: 'Hi' })
    const seen = events.length
    await agent.workflow.send('s-b', { message: 'Hi again' }).catch(() => {})
    assert.ok(events.length > seen)
    for (let i = 1; i < events.length; i++) assert.ok(events[i].seq > events[i - 1].seq, `seq ${events[i - 1].seq} then ${events[i].seq}`)
    assert.ok(events.every((e) => e.sessionId === undefined || e.sessionId === 's-a' || e.sessionId === 's-b'))
    // A send that resolves its id emits the warning of a session path that does not resolve
    // first, in order with the turn's events.
    const before = events.length
    const out = await agent.workflow.send(undefined, { message: 'Hi', variables: {} })
    const later = events.slice(before)
    const warning = later.findIndex((e) => e.type === 'warning' && e.scope === 'session')
    assert.equal(warning, 0, `the session warning comes first: ${later.map((e) => e.type).join(', ')}`)
    assert.ok(later.length > 1)
    for (let i = 1; i < events.length; i++) assert.ok(events[i].seq > events[i - 1].seq, `seq ${events[i - 1].seq} then ${events[i].seq}`)
    assert.match(out.sessionId ?? later.at(-1).sessionId, /^session-/)
  } finally {
    agent.dispose()
  }
})

test('a host tool is refused where the state does not allow it and runs where it does', async () => {
  const calls = []
  const { model, requests } = scripted([
    { role: 'assistant', content: null, tool_calls: [call('crm_lookup', { email: 'a@acme.test' }, 'c1')] },
    advance('lookup', 'needs the CRM'),
    { role: 'assistant', content: null, tool_calls: [call('crm_lookup', { email: 'a@acme.test' }, 'c2')] },
    say('Acme is a gold customer.'),
  ])
  const root = workspace({ 'workflows/desk/workflow.yaml': TOOLS_SPEC })
  const agent = await createAgent({ workflow: 'desk', workspace: { rootDir: root }, model, tools: [crmTool(calls)] })
  try {
    const outcome = await agent.workflow.send('t1', { message: 'Who is a@acme.test?' })
    // In intake the tool is neither shown nor run.
    assert.ok(!requests[0].tools.some((t) => t.function.name === 'crm_lookup'))
    const refusal = requests[1].messages.find((m) => m.role === 'tool' && m.tool_call_id === 'c1')
    assert.match(refusal.content, /crm_lookup/)
    assert.match(refusal.content, /BLOCKED|not allowed|forbidden/i)
    // In lookup it is shown and runs, with its context; a non-string result reaches the model as JSON.
    assert.ok(requests[2].tools.some((t) => t.function.name === 'crm_lookup'))
    assert.equal(calls.length, 1)
    assert.deepEqual(calls[0].args, { email: 'a@acme.test' })
    assert.equal(calls[0].ctx.state, 'lookup')
    assert.equal(calls[0].ctx.sessionId, 't1')
    const result = requests[3].messages.find((m) => m.role === 'tool' && m.tool_call_id === 'c2')
    assert.deepEqual(JSON.parse(result.content), { customer: 'Acme', tier: 'gold' })
    assert.equal(outcome.reply, 'Acme is a gold customer.')
  } finally {
    agent.dispose()
  }
})

test('a human state parks the session and a decision from JS resumes it', async () => {
  const { model } = scripted([
    advance('lookup'),
    advance('review', 'ready for review'),
    say('A colleague will review your request.'),
    say('Goodbye, your request is approved.'),
  ])
  const root = workspace({ 'workflows/desk/workflow.yaml': TOOLS_SPEC })
  const events = []
  const agent = await createAgent({ workflow: 'desk', workspace: { rootDir: root }, model, onEvent: (e) => events.push(e) })
  try {
    const parked = await agent.workflow.send('p1', { message: 'Please approve me.' })
    assert.equal(parked.kind, 'parked')
    assert.equal(parked.state, 'review')
    assert.equal(parked.status, 'awaiting_decision')
    assert.equal(parked.reply, 'A colleague will review your request.')
    assert.deepEqual(parked.pending.transitions.map((t) => t.to), ['done', 'lookup'])
    await assert.rejects(agent.workflow.decide('p1', { to: 'nowhere' }), (e) => {
      assert.ok(e instanceof InvalidDecisionTargetError)
      assert.ok(e instanceof HarnessError && e instanceof Error)
      assert.equal(e.code, 'InvalidDecisionTargetError')
      assert.equal(e.name, 'InvalidDecisionTargetError')
      assert.match(e.message, /Choose one of: done, lookup/)
      assert.equal(e.sessionId, 'p1')
      assert.equal(e.target, 'nowhere')
      assert.deepEqual(e.validTargets, ['done', 'lookup'])
      return true
    })
    const done = await agent.workflow.decide('p1', { target: 'done', comment: 'Fine by me.' })
    assert.equal(done.kind, 'completed')
    assert.equal(done.state, 'done')
    assert.equal(done.reply, 'Goodbye, your request is approved.')
    assert.ok(events.some((e) => e.type === 'decided' && e.to === 'done'))
    await assert.rejects(agent.workflow.decide('p1', { to: 'done' }), SessionNotParkedError)
  } finally {
    agent.dispose()
  }
})

test('a model function that throws, rejects or answers garbage fails the turn with a clear message', async () => {
  const cases = [
    [() => { throw new Error('boom: sync') }, /the model function threw: boom: sync/],
    [async () => { throw new TypeError('boom: async') }, /the model function threw: boom: async/],
    [() => Promise.reject('a string'), /non-Error value/],
    [() => 42, /returned a number/],
    [() => undefined, /returned null\/undefined/],
    [() => ({ hello: 'world' }), /neither 'content' nor 'tool_calls'/],
    [() => ({ role: 'assistant', content: null, tool_calls: 'nope' }), /'tool_calls' as a string/],
    [() => { const o = { role: 'assistant', content: 'x' }; o.self = o; return o }, /not JSON/],
  ]
  for (const [fn, pattern] of cases) {
    const events = []
    const agent = await createAgent({ workflow: 'order-lookup', workspace: { rootDir: exampleCopy() }, model: fn, onEvent: (e) => events.push(e) })
    try {
      const outcome = await agent.workflow.send('g1', { message: 'Hello' })
      assert.equal(outcome.kind, 'failed', JSON.stringify(outcome))
      assert.equal(outcome.exit.success, false)
      assert.equal(outcome.exit.code, 'turn-error')
      assert.match(JSON.stringify(outcome.exit), pattern)
    } finally {
      agent.dispose()
    }
  }
})

test('a host tool handler that throws answers the model with the error; the turn goes on', async () => {
  const { model, requests } = scripted([
    advance('lookup'),
    { role: 'assistant', content: null, tool_calls: [call('crm_lookup', { email: 'x' }, 'c1')] },
    say('The CRM is down.'),
  ])
  const root = workspace({ 'workflows/desk/workflow.yaml': TOOLS_SPEC })
  const tool = { ...crmTool([]), handler: () => { throw new Error('CRM offline') } }
  const agent = await createAgent({ workflow: 'desk', workspace: { rootDir: root }, model, tools: [tool] })
  try {
    const outcome = await agent.workflow.send('h1', { message: 'Look me up' })
    assert.equal(outcome.reply, 'The CRM is down.')
    const answer = requests[2].messages.find((m) => m.role === 'tool' && m.tool_call_id === 'c1')
    assert.match(answer.content, /CRM offline/)
  } finally {
    agent.dispose()
  }
})

test('a model that never answers is ended by cancel', async () => {
  let called
  const reached = new Promise((resolve) => { called = resolve })
  const agent = await createAgent({
    workflow: 'order-lookup',
    workspace: { rootDir: exampleCopy() },
    model: () => { called(); return new Promise(() => {}) },
  })
  try {
    const pending = agent.workflow.send('n1', { message: 'Hello' })
    await reached
    assert.equal(agent.cancel('n1'), true)
    const outcome = await pending
    assert.equal(outcome.kind, 'failed')
    assert.equal(outcome.exit.code, 'turn-cancelled')
    assert.equal(agent.cancel('n1'), false)
  } finally {
    agent.dispose()
  }
})

// Each error class, its message and fields: agent-errors.test.mjs.
test('harness errors are Error classes with a stable code', async () => {
  const root = exampleCopy()
  await assert.rejects(createAgent({ workflow: 'order-lookup', model: 42 }), TypeError)
  const agent = await createAgent({ workflow: 'order-lookup', workspace: { rootDir: root }, model: () => say('x') })
  await assert.rejects(agent.workflow.decide('never-ran', { to: 'closed' }), (e) => e.code === 'SessionNotParkedError' && e.sessionId === 'never-ran')
  await assert.rejects(agent.workflow.reply('never-ran', 'hi'), (e) => e.code === 'SessionNotParkedError')
  await assert.rejects(agent.workflow.deliver('never-ran', { trigger: 'x' }), (e) => e.code === 'SessionNotAwaitingInputError')
  await assert.rejects(agent.workflow.send('../escape', { message: 'x' }), (e) => e.code === 'SessionStoreIdError')
  const resolved = await agent.workflow.resolveSession({ trigger: { id: 'email-received' }, variables: { message: { thread_id: 'th-1' } } })
  assert.equal(resolved.sessionId, 'th-1')
  agent.dispose()
  agent.dispose()
  await assert.rejects(agent.workflow.send('x', { message: 'x' }), (e) => e.code === 'AgentDisposedError')
})

const SLOW_SPEC = `title: Slow
instructions: A test workflow.
mounts:
  allow_always: []
states:
  think:
    triggers: { manual: }
    instructions: Think.
    budget:
      timeoutMs: 300
`

test("a model that never answers is bounded by the state's timeoutMs; a throwing onEvent does not stop the turn", async () => {
  const root = workspace({ 'workflows/slow/workflow.yaml': SLOW_SPEC })
  const agent = await createAgent({
    workflow: 'slow',
    workspace: { rootDir: root },
    model: () => new Promise(() => {}),
    onEvent: () => { throw new Error('listener bug') },
  })
  try {
    const started = Date.now()
    const outcome = await agent.workflow.send('slow-1', { message: 'Think hard.' })
    assert.equal(outcome.kind, 'rejected')
    assert.match(outcome.rejected, /exceeded its time budget \(timeoutMs: 300\)/)
    assert.ok(Date.now() - started < 10_000)
  } finally {
    agent.dispose()
  }
})

test('dispose cancels a turn in flight and Node exits by itself', () => {
  const root = workspace({ 'workflows/slow/workflow.yaml': SLOW_SPEC.replace('timeoutMs: 300', 'timeoutMs: 600000') })
  const script = `
    import { createAgent } from '@archmax-ai/harness'
    let called
    const reached = new Promise((resolve) => { called = resolve })
    const agent = await createAgent({ workflow: 'slow', workspace: { rootDir: ${JSON.stringify(root)} }, model: () => { called(); return new Promise(() => {}) }, onEvent: () => {} })
    const pending = agent.workflow.send('d1', { message: 'Hi' })
    await reached
    agent.dispose()
    const outcome = await pending
    console.log(JSON.stringify({ kind: outcome.kind, code: outcome.exit?.code }))
  `
  const r = spawnSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 30_000 })
  assert.equal(r.signal, null, `timed out or killed; stderr: ${r.stderr}`)
  assert.equal(r.status, 0, r.stderr)
  assert.deepEqual(JSON.parse(r.stdout.trim()), { kind: 'failed', code: 'turn-cancelled' })
})

test('a minted session waits for an event (deliver), then parks for a decision and takes a reply', async () => {
  const { model, requests } = scripted([
    { role: 'assistant', content: null, tool_calls: [call('archmax_wait', { reason: 'waiting for the invoice' })] },
    say('I will wait for the invoice.'),
    say('Thanks, got it.'),
    advance('lookup'),
    advance('review'),
    say('A colleague decides.'),
    say('Tomorrow.'),
  ])
  const root = workspace({ 'workflows/desk/workflow.yaml': TOOLS_SPEC })
  const agent = await createAgent({ workflow: 'desk', workspace: { rootDir: root }, model })
  try {
    const waiting = await agent.workflow.send(null, { message: 'Refund my invoice.' })
    assert.match(waiting.sessionId, /^session-/)
    assert.equal(waiting.kind, 'parked')
    assert.equal(waiting.parkedChannel, 'input')
    assert.equal(waiting.pending.reason, 'waiting for the invoice')
    const id = waiting.sessionId
    await assert.rejects(agent.workflow.deliver(id, { trigger: ' ' }), (e) => e.code === 'MissingDeliveryTriggerError')
    const delivered = await agent.workflow.deliver(id, { trigger: 'invoice-arrived', variables: { invoice: { n: 1 } }, message: 'Here it is' })
    assert.equal(delivered.disposition, 'deliver')
    assert.deepEqual(delivered.variables.invoice, { value: { n: 1 }, locked: true })
    assert.equal(requests.at(-1).messages.at(-1).content, 'Here it is')
    const parked = await agent.workflow.send(id, { message: 'Go on.' })
    assert.equal(parked.parkedChannel, 'decision')
    await assert.rejects(agent.workflow.reply(id, '  '), (e) => e.code === 'EmptyMessageError')
    const replied = await agent.workflow.reply(id, 'When?')
    assert.equal(replied.disposition, 'reply')
    assert.equal(replied.status, 'awaiting_decision')
    assert.equal(replied.reply, 'Tomorrow.')
    assert.deepEqual((await agent.sessions.list()).map((s) => [s.sessionId, s.status, s.state]), [[id, 'awaiting_decision', 'review']])
  } finally {
    agent.dispose()
  }
})

test('assembly options: default trigger (checked), resolveTrigger, sessionPath, skills and mounts', async () => {
  const root = exampleCopy()
  await assert.rejects(createAgent({ workflow: 'order-lookup', workspace: { rootDir: root }, model: () => say('x'), trigger: { id: 'fax' } }), (e) => {
    assert.equal(e.code, 'UnknownTriggerError')
    assert.equal(e.triggerId, 'fax')
    assert.deepEqual(e.available, ['manual', 'email-received'])
    return true
  })
  const { model, requests } = scripted([say('Got your email.')])
  const agent = await createAgent({
    workspace: { rootDir: root, mounts: { '/AGENTS.md': { readOnly: true } } },
    skills: [],
    model,
    trigger: { id: 'email-received' },
    sessionPath: 'message.thread_id',
  })
  try {
    assert.deepEqual(agent.workflow.resolveTrigger(), { id: 'email-received', startState: 'classify' })
    assert.deepEqual(agent.workflow.resolveTrigger({ id: 'manual' }), { id: 'manual', startState: 'classify' })
    assert.throws(() => agent.workflow.resolveTrigger({ id: 'fax' }), (e) => e.code === 'UnknownTriggerError')
    const email = { thread_id: 'thread-9', from: 'a@b.test', subject: 'Hi', body: 'Where is KK-2043?' }
    assert.equal((await agent.workflow.resolveSession({ variables: { message: email } })).sessionId, 'thread-9')
    const outcome = await agent.workflow.send(null, { message: 'Where is KK-2043?', variables: { message: email } })
    assert.equal(outcome.sessionId, 'thread-9')
    assert.equal(outcome.variables.trigger.value, 'email-received')
    // skills: [] — no skill is offered to the model.
    assert.doesNotMatch(requests[0].messages[0].content, /order-data/)
  } finally {
    agent.dispose()
  }
})

test('a tool handler answering garbage reaches the model as an error; one that never answers is ended by cancel', async () => {
  const root = workspace({ 'workflows/desk/workflow.yaml': TOOLS_SPEC })
  let reached
  const hanging = new Promise((resolve) => { reached = resolve })
  const tools = [
    { name: 'cyclic', handler: () => { const o = {}; o.o = o; return o } },
    { name: 'stuck', handler: () => { reached(); return new Promise(() => {}) } },
  ]
  const { model, requests } = scripted([
    { role: 'assistant', content: null, tool_calls: [call('cyclic', {}, 'c1')] },
    { role: 'assistant', content: null, tool_calls: [call('stuck', {}, 'c2')] },
  ])
  const agent = await createAgent({ workflow: 'desk', workspace: { rootDir: root }, model, tools, essentialTools: ['cyclic', 'stuck'] })
  try {
    const pending = agent.workflow.send('k1', { message: 'Go' })
    await hanging
    const answer = requests[1].messages.find((m) => m.role === 'tool' && m.tool_call_id === 'c1')
    assert.match(answer.content, /the tool handler returned a value that is not JSON/)
    assert.equal(agent.cancel('k1'), true)
    const outcome = await pending
    assert.equal(outcome.exit.code, 'turn-cancelled')
  } finally {
    agent.dispose()
  }
})

test('sessions: seed files the agent then reads, delete removes the session, bad ids and zones are refused', async () => {
  const { model, requests } = scripted([
    { role: 'assistant', content: null, tool_calls: [call('read_file', { file_path: 'trigger.json' })] },
    say('Read it.'),
  ])
  const root = workspace({ 'workflows/desk/workflow.yaml': TOOLS_SPEC })
  const agent = await createAgent({ workflow: 'desk', workspace: { rootDir: root }, model })
  try {
    await agent.sessions.seed('s-seed', { 'trigger.json': { from: 'a@b.c' }, 'scratchpad/note.md': 'hello' })
    assert.equal(readFileSync(join(root, 'sessions/s-seed/scratchpad/note.md'), 'utf8'), 'hello')
    await assert.rejects(agent.sessions.seed('s-seed', { 'ok.md': 'x', 'checkpoints/x.json': 'no' }), (e) => {
      assert.equal(e.constructor, Error)
      assert.match(e.message, /^Cannot seed "checkpoints\/x\.json": it resolves to the '[a-z-]+' zone\./)
      return true
    })
    assert.equal(existsSync(join(root, 'sessions/s-seed/ok.md')), false, 'nothing written when one path is refused')
    const out = await agent.workflow.send('s-seed', { message: 'Read the trigger.' })
    assert.equal(out.reply, 'Read it.')
    assert.match(requests[1].messages.at(-1).content, /a@b\.c/)
    await assert.rejects(agent.sessions.get('../x'), (e) => e instanceof SessionStoreIdError && e.code === 'SessionStoreIdError')
    assert.equal(await agent.sessions.delete('s-seed'), true)
    assert.equal(existsSync(join(root, 'sessions/s-seed')), false)
    assert.equal(await agent.sessions.delete('s-seed'), false)
    assert.deepEqual(await agent.sessions.list(), [])
    assert.equal(await agent.sessions.messageCount('s-seed'), 0)
    assert.deepEqual(await agent.sessions.messages('s-seed'), [])
  } finally {
    agent.dispose()
  }
})

// agent.workflow.resolveSession (public-api digest §4.2), agent.dispose(sessionId) and agent.getSpecSnapshot (§3).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { createAgent, SessionNotResumableError } from '@archmax-ai/harness'
import { advance, call, say, scripted, workspace } from './helpers.mjs'

const SPEC = `title: Desk
instructions: A test workflow.
mounts:
  allow_always: []
states:
  intake:
    triggers:
      manual:
      email-received:
        session: message.thread_id
    instructions: Route the request.
    transitions:
      - to: review
      - to: waiting
  waiting:
    instructions: Wait for the courier.
    transitions:
      - to: review
  review:
    type: human
    instructions: A person decides.
    transitions:
      - to: done
        type: approve
        description: Approve.
  done:
    instructions: Say goodbye.
`

const wait = (reason) => ({ role: 'assistant', content: null, tool_calls: [call('archmax_wait', { reason })] })

function deskAgent(options = {}) {
  return createAgent({ workflow: 'desk', workspace: { rootDir: workspace({ 'workflows/desk/workflow.yaml': SPEC }) }, ...options })
}

test('resolveSession: turn, reply and resume dispositions, as a Promise, running nothing', async () => {
  const { model, requests } = scripted([advance('review'), say('A person will decide.'), advance('waiting'), wait('the courier'), say('Waiting.'), say('Bye.'), say('Bye.')])
  const agent = await deskAgent({ model })
  try {
    const fresh = agent.workflow.resolveSession({ sessionId: 'r-1' })
    assert.ok(fresh instanceof Promise)
    assert.deepEqual(await fresh, { sessionId: 'r-1', disposition: 'turn', startState: 'intake', native: false })
    assert.equal(await agent.sessions.get('r-1'), null, 'resolving started nothing')
    assert.equal(requests.length, 0)

    // A session parked at a human state: a reply, at the parked state.
    assert.equal((await agent.workflow.send('r-1', { message: 'Please review.' })).parkedChannel, 'decision')
    assert.deepEqual(await agent.workflow.resolveSession({ sessionId: 'r-1' }), { sessionId: 'r-1', disposition: 'reply', state: 'review', native: false })

    // A session parked for an event: a resume, at the waiting state.
    assert.equal((await agent.workflow.send('r-2', { message: 'Wait for it.' })).parkedChannel, 'input')
    assert.deepEqual(await agent.workflow.resolveSession({ sessionId: 'r-2', trigger: { id: 'courier' } }), {
      sessionId: 'r-2',
      disposition: 'resume',
      state: 'waiting',
      native: false,
    })

    // A finished session: a turn from the state it was left in.
    await agent.workflow.decide('r-1', { target: 'done' })
    assert.equal((await agent.sessions.get('r-1')).status, 'completed')
    assert.deepEqual(await agent.workflow.resolveSession({ sessionId: 'r-1', trigger: 'manual' }), {
      sessionId: 'r-1',
      disposition: 'turn',
      startState: 'done',
      native: false,
    })
  } finally {
    agent.dispose()
  }
})

test('resolveSession: a minted id is native; a declared path resolves (not native) or warns and mints', async () => {
  const events = []
  const agent = await deskAgent({ model: () => say('x'), onEvent: (e) => events.push(e) })
  try {
    const minted = await agent.workflow.resolveSession()
    assert.match(minted.sessionId, /^session-[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    assert.deepEqual({ ...minted, sessionId: 'x' }, { sessionId: 'x', disposition: 'turn', startState: 'intake', native: true })
    assert.equal(events.length, 0, 'no path was declared: no warning')

    const byPath = await agent.workflow.resolveSession({ trigger: { id: 'email-received' }, variables: { message: { thread_id: 'th-7' } } })
    assert.deepEqual(byPath, { sessionId: 'th-7', disposition: 'turn', startState: 'intake', native: false })

    const unresolved = await agent.workflow.resolveSession({ trigger: { id: 'email-received' }, variables: {} })
    assert.equal(unresolved.native, true)
    const warnings = events.filter((e) => e.type === 'warning')
    assert.equal(warnings.length, 1)
    assert.equal(warnings[0].scope, 'session')
    assert.equal(warnings[0].sessionId, unresolved.sessionId)
    assert.equal(
      warnings[0].message,
      `Trigger 'email-received' declares session path 'message.thread_id', which this firing's variables do not resolve. The firing is its own session ('${unresolved.sessionId}') and cannot be continued by a later firing for the same conversation.`,
    )
    // A caller path wins over the declared one; an explicit id over both.
    assert.equal((await agent.workflow.resolveSession({ variables: { a: { b: 'p-1' } }, sessionPath: 'a.b' })).sessionId, 'p-1')
    assert.equal((await agent.workflow.resolveSession({ sessionId: ' x-1 ', variables: { a: { b: 'p-1' } }, sessionPath: 'a.b' })).sessionId, 'x-1')
    await assert.rejects(agent.workflow.resolveSession({ sessionId: '../up' }), (e) => e.code === 'SessionStoreIdError')
  } finally {
    agent.dispose()
  }
})

test('resolveSession: a session with a turn in progress is refused (SessionNotResumableError)', async () => {
  let release
  const gate = new Promise((resolve) => {
    release = resolve
  })
  let entered
  const reached = new Promise((resolve) => {
    entered = resolve
  })
  const agent = await deskAgent({
    model: async () => {
      entered()
      await gate
      return say('Done.')
    },
  })
  try {
    const running = agent.workflow.send('busy-1', { message: 'Think.' })
    await reached
    await assert.rejects(agent.workflow.resolveSession({ sessionId: 'busy-1' }), (e) => {
      assert.ok(e instanceof SessionNotResumableError)
      assert.equal(e.sessionId, 'busy-1')
      assert.equal(e.status, 'running')
      assert.equal(e.message, "Session 'busy-1' has a turn in progress (status 'running'). A session has a single writer: retry once the turn parks or ends.")
      return true
    })
    release()
    assert.equal((await running).kind, 'completed')
    assert.equal((await agent.workflow.resolveSession({ sessionId: 'busy-1' })).disposition, 'turn')
  } finally {
    agent.dispose()
  }
})

test('dispose(sessionId) releases that session (and its children) without disposing the agent; idempotent, never throws', async () => {
  // Each request the model function sees; with the session's conversation released, the next
  // turn's request crosses whole (the JS side rebuilt it from nothing) and is still complete.
  const { model, requests } = scripted([say('One.'), say('Two.'), say('Three.'), say('Four.')])
  const agent = await deskAgent({ model })
  try {
    await agent.workflow.send('d-1', { message: 'First.' })
    await agent.workflow.send('d-2', { message: 'Other.' })
    assert.equal(agent.dispose('d-1'), undefined)
    agent.dispose('d-1')
    agent.dispose('never-ran')
    agent.dispose('../not an id')
    agent.dispose(42)
    // The agent still works, for the disposed session and for the others.
    const again = await agent.workflow.send('d-1', { message: 'Second.' })
    assert.equal(again.reply, 'Three.')
    const last = requests.at(-1).messages
    assert.deepEqual(
      last.filter((m) => m.role !== 'system').map((m) => m.content),
      ['First.', 'One.', 'Second.'],
      'the whole conversation reached the model after the release',
    )
    assert.equal((await agent.workflow.send('d-2', { message: 'More.' })).reply, 'Four.')
    assert.equal((await agent.sessions.get('d-1')).status, 'completed', 'the session itself is kept')
  } finally {
    agent.dispose()
  }
  // After the whole agent is disposed, dispose(id) is still a quiet no-op.
  agent.dispose('d-1')
})

test('getSpecSnapshot: the spec a session ran under, by its specHash; null for an unknown hash', async () => {
  const root = workspace({ 'workflows/desk/workflow.yaml': SPEC })
  const { model } = scripted([say('Hello.')])
  const agent = await createAgent({ workflow: 'desk', workspace: { rootDir: root }, model })
  try {
    await agent.workflow.send('snap-1', { message: 'Hi' })
    const { specHash } = await agent.sessions.get('snap-1')
    assert.match(specHash, /^[0-9a-f]+$/)
    const spec = await agent.getSpecSnapshot(specHash)
    assert.equal(spec.title, 'Desk')
    assert.ok(spec.states && typeof spec.states === 'object')
    assert.equal(await agent.getSpecSnapshot('0123abcd'), null)
  } finally {
    agent.dispose()
  }
})

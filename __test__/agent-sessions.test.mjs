// agent.workflow.resolveSession (public-api digest §4.2), agent.dispose(sessionId) and agent.getSpecSnapshot (§3).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { createAgent, createMemorySessionStore, SessionForkError, SessionNotResumableError, SessionStoreCapabilityError } from '@archmax-ai/harness'
import { advance, call, mapStore, NO_PG, pgStore, say, scripted, workspace } from './helpers.mjs'

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

/**
 * A desk agent on `sessionStore` (default: the workspace's folder) with a session at each of
 * these standings: `s-idle` (answered at `intake`, which has transitions), `s-park` (awaiting
 * the decision at `review`), `s-done` (decided, answered at the terminal `done`), `s-wait`
 * (awaiting the courier, no due time), `s-cancel` (its turn cancelled).
 */
async function everyStanding(sessionStore) {
  let hung
  const hanging = new Promise((resolve) => (hung = resolve))
  const { model } = scripted([
    say('I will route it later.'),
    advance('review'),
    say('A person will decide.'),
    advance('review'),
    say('A person will decide.'),
    say('Bye.'),
    advance('waiting'),
    wait('the courier'),
    say('Waiting.'),
    () => {
      hung()
      return new Promise(() => {})
    },
  ])
  const rootDir = workspace({ 'workflows/desk/workflow.yaml': SPEC })
  const agent = await createAgent({ workflow: 'desk', workspace: { rootDir, ...(sessionStore ? { sessionStore } : {}) }, model })
  await agent.workflow.send('s-idle', { message: 'Hello.' })
  await agent.workflow.send('s-park', { message: 'Please review.' })
  await agent.workflow.send('s-done', { message: 'Please review.' })
  await agent.workflow.decide('s-done', { target: 'done' })
  await agent.workflow.send('s-wait', { message: 'Wait for it.' })
  const pending = agent.workflow.send('s-cancel', { message: 'Think.' })
  await hanging
  assert.equal(agent.cancel('s-cancel'), true)
  assert.equal((await pending).exit.code, 'turn-cancelled')
  return agent
}

const STORES = [
  ['filesystem', () => undefined],
  ['memory', () => createMemorySessionStore()],
  ['postgres', () => pgStore('standing')],
]

for (const [name, store] of STORES) {
  const skip = name === 'postgres' && !process.env.ARCHMAX_TEST_PG_URL && !(process.env.CI && process.env.CI !== 'false') ? NO_PG : false
  test(`sessions say where they stand, list by standing and age, and prune (${name} store)`, { skip }, async () => {
    const agent = await everyStanding(store())
    try {
      const byId = Object.fromEntries((await agent.sessions.list()).map((s) => [s.sessionId, s]))
      const standing = (id) => {
        const { since, ...rest } = byId[id].standing
        assert.ok(Number.isInteger(since) && since > 1.7e12 && since <= Date.now(), `${id}: since ${since}`)
        return rest
      }
      assert.deepEqual(standing('s-idle'), { kind: 'idle', state: 'intake', resumable: true })
      assert.deepEqual(standing('s-park'), { kind: 'awaiting-decision', state: 'review', resumable: true })
      assert.deepEqual(standing('s-done'), { kind: 'done', state: 'done', resumable: false })
      assert.deepEqual(standing('s-wait'), { kind: 'awaiting-input', state: 'waiting', resumable: true })
      assert.deepEqual(standing('s-cancel'), { kind: 'cancelled', state: 'intake', resumable: true })
      // The original's fields keep their values.
      assert.deepEqual([byId['s-idle'].status, byId['s-idle'].classification], ['completed', 'finished'])
      assert.deepEqual([byId['s-cancel'].status, byId['s-cancel'].classification], ['failed', 'finished'])
      assert.deepEqual((await agent.sessions.get('s-idle')).standing, byId['s-idle'].standing)

      const ids = async (options) => (await agent.sessions.list(options)).map((s) => s.sessionId).sort()
      assert.deepEqual(await ids({ status: 'idle' }), ['s-idle'])
      assert.deepEqual(await ids({ status: ['cancelled', 'idle'] }), ['s-cancel', 's-idle'])
      assert.deepEqual(await ids({ status: 'completed' }), ['s-done', 's-idle'], "the original's value names idle and done")
      assert.deepEqual(await ids({ olderThan: '1h' }), [])
      assert.deepEqual(await ids({ olderThan: 0 }), ['s-cancel', 's-done', 's-idle', 's-park', 's-wait'])
      // Attention: stalled work, longest first (s-idle stalled before s-cancel).
      assert.deepEqual((await agent.sessions.list({ attention: true })).map((s) => s.sessionId), ['s-idle', 's-cancel'])
      await assert.rejects(agent.sessions.list({ status: 'stuck' }), (e) => e instanceof TypeError && e.message.startsWith("'status': 'stuck' is not a session status"))
      await assert.rejects(agent.sessions.list({ olderThan: 'soon' }), (e) => e instanceof TypeError && e.message.startsWith("'olderThan': 'soon' is not an age"))
      await assert.rejects(agent.sessions.list('idle'), TypeError)

      // Prune: a dry run first, then the ended sessions; never a parked one by status.
      const dry = await agent.sessions.prune({ dryRun: true })
      assert.equal(dry.dryRun, true)
      assert.deepEqual(dry.pruned.map((p) => [p.sessionId, p.standing.kind, p.workflow]).sort(), [
        ['s-cancel', 'cancelled', 'desk'],
        ['s-done', 'done', 'desk'],
      ])
      assert.equal((await agent.sessions.list()).length, 5, 'a dry run removes nothing')
      const done = await agent.sessions.prune()
      assert.deepEqual(done.pruned.map((p) => p.sessionId).sort(), ['s-cancel', 's-done'])
      assert.deepEqual(done.skipped, [])
      assert.deepEqual(await ids(), ['s-idle', 's-park', 's-wait'])
      await assert.rejects(agent.sessions.prune({ status: 'awaiting-input' }), (e) => {
        assert.ok(e instanceof TypeError)
        assert.equal(e.message, 'a prune by status never removes a awaiting-input session (running or parked); name the session to remove one: prune <session>')
        return true
      })
      await assert.rejects(agent.sessions.prune({ sessionId: 's-park', status: 'idle' }), TypeError)
      await assert.rejects(agent.sessions.prune({ dryRun: 'yes' }), TypeError)
      const one = await agent.sessions.prune({ sessionId: 's-park' })
      assert.deepEqual(one.pruned.map((p) => [p.sessionId, p.standing.kind]), [['s-park', 'awaiting-decision']])
      assert.deepEqual((await agent.sessions.prune({ sessionId: 's-park' })).skipped, [{ sessionId: 's-park', reason: 'there is no such session' }])
      assert.deepEqual((await agent.sessions.prune({ status: 'idle', olderThan: '1d' })).pruned, [])
      assert.deepEqual((await agent.sessions.prune({ status: 'idle' })).pruned.map((p) => p.sessionId), ['s-idle'])
      assert.deepEqual(await ids(), ['s-wait'])
    } finally {
      agent.dispose()
    }
  })
}

test('sessions.prune leaves a session a turn holds', async () => {
  let release
  const gate = new Promise((resolve) => (release = resolve))
  let entered
  const reached = new Promise((resolve) => (entered = resolve))
  const agent = await deskAgent({
    model: async () => {
      entered()
      await gate
      return say('Done.')
    },
  })
  try {
    const running = agent.workflow.send('busy', { message: 'Think.' })
    await reached
    assert.equal((await agent.sessions.get('busy')).standing.kind, 'running')
    const r = await agent.sessions.prune({ sessionId: 'busy' })
    assert.deepEqual(r, { dryRun: false, pruned: [], skipped: [{ sessionId: 'busy', reason: 'a turn holds it (running)' }] })
    release()
    await running
    assert.equal((await agent.sessions.get('busy')).standing.kind, 'idle')
  } finally {
    agent.dispose()
  }
})

for (const [name, store] of STORES) {
  const skip = name === 'postgres' && !process.env.ARCHMAX_TEST_PG_URL && !(process.env.CI && process.env.CI !== 'false') ? NO_PG : false
  test(`sessions.history lists every step; sessions.fork makes a session from one, a parked step parked again (${name} store)`, { skip }, async () => {
    const { model } = scripted([advance('review'), say('A person will decide.'), say('Bye.'), say('Bye again.')])
    const rootDir = workspace({ 'workflows/desk/workflow.yaml': SPEC })
    const sessionStore = store()
    const agent = await createAgent({ workflow: 'desk', workspace: { rootDir, ...(sessionStore ? { sessionStore } : {}) }, model })
    try {
      await agent.workflow.send('h-1', { message: 'Please review.' })
      await agent.workflow.decide('h-1', { target: 'done' })
      const steps = await agent.sessions.history('h-1')
      assert.deepEqual(steps.map((s) => s.step), steps.map((_, i) => i + 1))
      assert.match(steps[0].what, /^started by manual; message "Please review\."/)
      const parked = steps.find((s) => s.status === 'awaiting_decision')
      assert.equal(parked.state, 'review')
      assert.match(parked.what, /parked for a decision at review/)
      assert.match(parked.at, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
      assert.equal(steps.at(-1).status, 'completed')
      assert.equal(await agent.sessions.history('nobody'), null)

      const fork = await agent.sessions.fork('h-1', { at: parked.step })
      assert.equal(fork.sessionId, `h-1-fork-${parked.step}`)
      assert.equal(fork.status, 'awaiting_decision')
      assert.deepEqual(fork.forkedFrom && [fork.forkedFrom.sessionId, fork.forkedFrom.step], ['h-1', parked.step])
      const park = await agent.sessions.park(fork.sessionId)
      assert.equal(park.state, 'review')
      assert.equal(await agent.sessions.messageCount(fork.sessionId), parked.messages)
      // The fork decides again; the original keeps its history.
      const out = await agent.workflow.decide(fork.sessionId, { target: 'done' })
      assert.equal(out.status, 'completed')
      assert.deepEqual(await agent.sessions.history('h-1'), steps)
      assert.equal((await agent.sessions.history(fork.sessionId))[0].what, `forked from h-1 step ${parked.step}; parked for a decision at review`)

      const named = await agent.sessions.fork('h-1', { at: 1, as: 'h-named' })
      assert.equal(named.sessionId, 'h-named')
      await assert.rejects(agent.sessions.fork('h-1', { at: 1, as: 'h-named' }), (e) => e instanceof SessionForkError && e.code === 'SessionForkError' && e.message === "Session 'h-named' already exists: choose another id for the fork.")
      await assert.rejects(agent.sessions.fork('h-1', { at: 99 }), (e) => e instanceof SessionForkError && e.message.startsWith("Session 'h-1' has no step 99"))
      await assert.rejects(agent.sessions.fork('h-1', { at: 0 }), (e) => e instanceof TypeError && e.message === "'at' must be a step number (a whole number from 1), got 0")
      await assert.rejects(agent.sessions.fork('h-1'), TypeError)
      await assert.rejects(agent.sessions.fork('h-1', { at: 1, as: 7 }), TypeError)
    } finally {
      agent.dispose()
    }
  })
}

test("a host's session store keeps only the latest step: history and fork say so", async () => {
  const { store } = mapStore()
  const { model } = scripted([say('Hello.')])
  const rootDir = workspace({ 'workflows/desk/workflow.yaml': SPEC })
  const agent = await createAgent({ workflow: 'desk', workspace: { rootDir, sessionStore: store }, model })
  try {
    await agent.workflow.send('m-1', { message: 'Hi.' })
    for (const call of [() => agent.sessions.history('m-1'), () => agent.sessions.fork('m-1', { at: 1 })]) {
      await assert.rejects(call(), (e) => e instanceof SessionStoreCapabilityError && e.capability === 'history' && /keeps every step/.test(e.message))
    }
  } finally {
    agent.dispose()
  }
})

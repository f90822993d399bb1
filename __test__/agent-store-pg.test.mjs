// createPostgresSessionStore: two agents on two stores over one database stand for two
// workers: one writer per session between them, and each sees what the other committed.
// Needs ARCHMAX_TEST_PG_URL (.ci/run starts a server); skipped locally without it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

import { createAgent, createMemorySessionStore, createPostgresSessionStore, runCli, SessionNotResumableError } from '@archmax-ai/harness'
import { call, NO_PG, ONE_STATE_SPEC, say, scripted, sseEndpoint, tools, workspace } from './helpers.mjs'

const url = process.env.ARCHMAX_TEST_PG_URL
const ci = Boolean(process.env.CI && process.env.CI !== 'false')
const skip = !url && !ci ? NO_PG : false

test('createPostgresSessionStore names what is wrong with its options', () => {
  assert.throws(() => createPostgresSessionStore({ url: 'mysql://x' }), {
    name: 'TypeError',
    message: "createPostgresSessionStore needs { url: 'postgres://…' }, got string mysql://x",
  })
  assert.throws(() => createPostgresSessionStore({ url: 'postgres://h/db', leaseTtlMs: -1 }), {
    name: 'TypeError',
    message: "createPostgresSessionStore: 'leaseTtlMs' must be a positive integer, got number -1",
  })
  // Nothing listens on port 1 of the loopback.
  assert.throws(() => createPostgresSessionStore({ url: 'postgres://archmax@127.0.0.1:1/x' }), (e) => {
    assert.match(e.message, /^session store \(postgres\): cannot connect: .*refused/i)
    return true
  })
})

test('two workers over one database: one writer per session, and each sees the other\u2019s steps', { skip }, async () => {
  assert.ok(url, 'ARCHMAX_TEST_PG_URL is not set: CI must run the PostgreSQL store tests')
  const schema = `workers_${process.pid}`
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_STATE_SPEC })
  let release
  const gate = new Promise((resolve) => (release = resolve))
  let entered
  const reached = new Promise((resolve) => (entered = resolve))
  const first = await createAgent({
    workflow: 'one',
    workspace: { rootDir: root, sessionStore: createPostgresSessionStore({ url, schema }) },
    model: async () => {
      entered()
      await gate
      return say('Done.')
    },
  })
  const second = await createAgent({
    workflow: 'one',
    workspace: { rootDir: root, sessionStore: createPostgresSessionStore({ url, schema }) },
    model: async () => say('Second.'),
  })
  try {
    const running = first.workflow.send('w1', { message: 'Think.' })
    await reached
    await assert.rejects(second.workflow.send('w1', { message: 'Me too.' }), (e) => {
      assert.ok(e instanceof SessionNotResumableError)
      assert.equal(e.message, "Session 'w1' has a turn in progress (status 'running'). A session has a single writer: retry once the turn parks or ends.")
      return true
    })
    release()
    assert.equal((await running).kind, 'completed')
    // The second worker reads the first one's committed session and continues it.
    const summary = await second.sessions.get('w1')
    assert.equal(summary.status, 'completed')
    const before = await second.sessions.messageCount('w1')
    assert.ok(before >= 2, `${before}`)
    assert.equal((await second.workflow.send('w1', { message: 'Again.' })).kind, 'completed')
    assert.ok((await first.sessions.messageCount('w1')) > before)
    assert.deepEqual((await first.sessions.list()).map((s) => s.sessionId), ['w1'])
    assert.equal(existsSync(join(root, 'sessions')), false, 'nothing on disk')
  } finally {
    first.dispose()
    second.dispose()
  }
})

test('sessions.seed over PostgreSQL: the seeded files are rows another worker reads', { skip }, async () => {
  const schema = `seed_${process.pid}`
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_STATE_SPEC })
  const first = await createAgent({
    workflow: 'one',
    workspace: { rootDir: root, sessionStore: createPostgresSessionStore({ url, schema }) },
    model: async () => say('unused'),
  })
  const { model, requests } = scripted([tools(call('read_file', { file_path: 'scratchpad/note.md' })), say('Read it.')])
  const second = await createAgent({
    workflow: 'one',
    workspace: { rootDir: root, sessionStore: createPostgresSessionStore({ url, schema }) },
    model,
  })
  try {
    await first.sessions.seed('s1', { 'scratchpad/note.md': 'hello from the host', 'trigger.json': { order: 7 } })
    await assert.rejects(first.sessions.seed('s1', { 'checkpoints/state.json': 'x' }), /^Error: Cannot seed "checkpoints\/state\.json"/)
    assert.equal((await second.workflow.send('s1', { message: 'Read the note.' })).kind, 'completed')
    const result = requests[1].messages.find((m) => m.role === 'tool' && m.tool_call_id === 'call_read_file')
    assert.ok(result, JSON.stringify(requests[1].messages))
    assert.match(String(result.content), /hello from the host/)
    assert.equal(existsSync(join(root, 'sessions')), false, 'nothing on disk')
  } finally {
    first.dispose()
    second.dispose()
  }
})

test('enqueueDelivery: a worker runs the queued delivery once and stores the Outcome a direct deliver gives', { skip }, async () => {
  const schema = `queue_${process.pid}`
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_STATE_SPEC })
  const store = createPostgresSessionStore({ url, schema })
  const wait = () => [tools(call('archmax_wait', { reason: 'the payment', until: '2999-01-01T09:00:00Z' })), say('Waiting for the payment.')]
  const { model } = scripted([...wait(), ...wait(), say('Payment received.')])
  const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: store }, model })
  const endpoint = await sseEndpoint(() => say('Payment received.'))
  const saved = { ...process.env }
  try {
    for (const id of ['q1', 'd1']) assert.equal((await agent.workflow.send(id, { message: 'Refund order 9.' })).kind, 'parked')
    const seq = await store.enqueueDelivery('q1', { trigger: 'payment', variables: { n: 1 }, workflow: 'one' })
    assert.ok(Number.isSafeInteger(seq), String(seq))
    assert.deepEqual(await store.delivery(seq), { status: 'queued', outcome: null, error: null })
    await assert.rejects(store.enqueueDelivery('q1', { variables: {} }), { name: 'TypeError', message: 'enqueueDelivery needs { trigger: string }, got undefined' })
    assert.equal(createMemorySessionStore().enqueueDelivery, undefined, 'only the PostgreSQL store has a queue')

    Object.assign(process.env, {
      ARCHMAX_SESSION_STORE: `${url}?schema=${schema}`,
      ARCHMAX_API_BASE_URL: endpoint.url,
      ARCHMAX_API_KEY: 'test-key',
      ARCHMAX_MODEL: 'scripted-model',
      ARCHMAX_CLI_NO_BANNER: '1',
    })
    assert.equal(await runCli(['worker', 'one', '--once', '--root', root]), 0)
    const done = await store.delivery(seq)
    assert.equal(done.status, 'done')
    assert.equal(done.error, null)
    assert.equal(endpoint.bodies.length, 1, 'run once')
    // The same delivery, direct, on the twin session.
    const direct = await agent.workflow.deliver('d1', { trigger: 'payment', variables: { n: 1 } })
    // The worker's model is the endpoint (which reports usage), the direct one a JS function.
    const comparable = ({ sessionId, messages, auditTrail, usage, ...rest }) => ({ ...rest, auditTrail: auditTrail.map(({ ts, ...step }) => step) })
    assert.equal(done.outcome.sessionId, 'q1')
    assert.deepEqual(comparable(done.outcome), comparable(direct))
    assert.equal((await agent.sessions.get('q1')).status, direct.status)
  } finally {
    process.env = saved
    agent.dispose()
    await endpoint.close()
  }
})

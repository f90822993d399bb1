// createPostgresSessionStore: two agents on two stores over one database stand for two
// workers: one writer per session between them, and each sees what the other committed.
// Needs ARCHMAX_TEST_PG_URL (.ci/run starts a server); skipped locally without it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'

import { createAgent, createPostgresSessionStore, SessionNotResumableError } from '@archmax-ai/harness'
import { NO_PG, ONE_STATE_SPEC, say, workspace } from './helpers.mjs'

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

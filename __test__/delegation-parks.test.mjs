// Parks inside sub-workflows across a process boundary: a child parks its caller in one
// Node process (createAgent with a JS model function), and the caller is decided in another
// (this one), over the filesystem store; over a memory store, by a second agent sharing it.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

import { createAgent, createMemorySessionStore } from '@archmax-ai/harness'
import { runtimeNoteKind } from '@archmax-ai/harness/messages'
import { advance, CALLER_SPEC, call, PARKING_CHILD_SPEC, ROOT, say, scripted, tools, workspace } from './helpers.mjs'

/** Until the caller parks: its call, the child's move and closing message, the caller's. */
const UNTIL_PARKED = [
  tools(call('archmax_workflow_enrich', { order_id: 'KK-1' }, 'c1')),
  advance('approve', 'checked'),
  say('KK-1 is with a reviewer.'),
  say('Your order is being reviewed.'),
]
/** After the decision: the child's answer, then the caller's. */
const AFTER_DECISION = [say('KK-1 is approved.'), say('Reviewed and approved.')]

const texts = (requests) => requests.map((r) => JSON.stringify(r.messages))

test('a child parks its caller in one process; agent.workflow.decide in another resumes it', async () => {
  const root = workspace({ 'workflows/orders/workflow.yaml': CALLER_SPEC, 'workflows/enrich/workflow.yaml': PARKING_CHILD_SPEC })
  // The first process: its own createAgent and JS model, answering from the same script.
  const script = `
    import { createAgent } from ${JSON.stringify(pathToFileURL(join(ROOT, 'js', 'main.js')).href)}
    const answers = ${JSON.stringify(UNTIL_PARKED)}
    const agent = await createAgent({ workflow: 'orders', workspace: { rootDir: ${JSON.stringify(root)} }, model: async () => answers.shift() })
    const out = await agent.workflow.send('s1', { message: 'Review KK-1.' })
    agent.dispose()
    process.stdout.write(JSON.stringify({ kind: out.kind, state: out.state, seq: out.pending?.seq, left: answers.length }))
  `
  const first = JSON.parse(execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT, encoding: 'utf8' }))
  assert.deepEqual(first, { kind: 'parked', state: 'approve', seq: 1, left: 0 })

  const { model, requests } = scripted([...AFTER_DECISION])
  const agent = await createAgent({ workflow: 'orders', workspace: { rootDir: root }, model })
  try {
    const listed = await agent.sessions.list()
    assert.equal(listed.find((s) => s.sessionId === 's1~work:enrich:0')?.parentSessionId, 's1')
    const done = await agent.workflow.decide('s1', { target: 'done' })
    assert.equal(done.kind, 'completed')
    assert.equal(done.reply, 'Reviewed and approved.')
    assert.match(texts(requests)[0], /REVIEW-CHILD/)
    assert.match(texts(requests)[1], /\[sub-workflow: enrich\] KK-1 is approved\./)
    const child = (await agent.sessions.list()).find((s) => s.sessionId === 's1~work:enrich:0')
    assert.equal(child?.status, 'completed')
  } finally {
    agent.dispose()
  }
})

test('over a memory store, a second agent decides the caller the first one parked', async () => {
  const root = workspace({ 'workflows/orders/workflow.yaml': CALLER_SPEC, 'workflows/enrich/workflow.yaml': PARKING_CHILD_SPEC })
  const store = createMemorySessionStore()
  const before = scripted([...UNTIL_PARKED])
  const a = await createAgent({ workflow: 'orders', workspace: { rootDir: root, sessionStore: store }, model: before.model })
  const parked = await a.workflow.send('m1', { message: 'Review KK-1.' })
  a.dispose()
  assert.equal(parked.kind, 'parked')
  assert.equal(parked.pending.state, 'approve')
  const after = scripted([...AFTER_DECISION])
  const b = await createAgent({ workflow: 'orders', workspace: { rootDir: root, sessionStore: store }, model: after.model })
  try {
    const done = await b.workflow.decide('m1', { target: 'done' })
    assert.equal(done.kind, 'completed')
    assert.equal(done.reply, 'Reviewed and approved.')
    assert.match(texts(after.requests)[1], /\[sub-workflow: enrich\] KK-1 is approved\./)
    // The child's answer is a runtime note of kind `sub-workflow` in the caller's transcript.
    const notes = done.messages.filter((m) => runtimeNoteKind(m) === 'sub-workflow')
    assert.deepEqual(notes.map((m) => m.content).filter(Boolean), ['[sub-workflow: enrich] KK-1 is approved.'])
  } finally {
    b.dispose()
  }
})

// workspace.sessionStore: a host store implemented in JS, the memory store, and the
// filesystem store under a folder of the host's choice.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import {
  createAgent,
  createFilesystemSessionStore,
  createMemorySessionStore,
  SessionStoreCapabilityError,
  SessionStoreError,
} from '@archmax-ai/harness'
import { advance, call, mapStore, NO_PG, ONE_STATE_SPEC, pgStore, say, scripted, tools, workspace } from './helpers.mjs'

const ONE_SPEC = ONE_STATE_SPEC

const PARK_SPEC = `title: Parks
instructions: A test workflow.
mounts:
  allow_always: []
states:
  intake:
    triggers: { manual: }
    instructions: Route the request.
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

async function oneTurnIntoAHostStore({ async }) {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const { store, sessions, commits, calls } = mapStore({ async })
  const { model } = scripted([say('Hello from the agent.')])
  const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: store }, model })
  try {
    const outcome = await agent.workflow.send('s1', { message: 'Hi' })
    assert.equal(outcome.kind, 'completed')
    assert.equal(outcome.reply, 'Hello from the agent.')
    // The store holds the transcript and the final state, committed step by step.
    const held = sessions.get('s1')
    assert.deepEqual(held.messages, outcome.messages)
    assert.deepEqual(
      held.messages.map((m) => [m.role, m.content]),
      [
        ['user', 'Hi'],
        ['assistant', 'Hello from the agent.'],
      ],
    )
    assert.equal(held.state.status, 'completed')
    assert.equal(held.state.workflowState, 'chat')
    assert.equal(held.state.transcriptLen, 2)
    assert.ok(commits.length >= 2, `commits: ${commits.length}`)
    assert.ok(commits.every((c) => c.id === 's1'))
    assert.equal(commits[0].state.status, 'running')
    assert.deepEqual(commits.flatMap((c) => c.messages), outcome.messages, 'each commit carries only its new messages')
    assert.ok(calls.includes('load'))
    // Nothing went to the filesystem store.
    assert.equal(existsSync(join(root, 'sessions')), false)
    assert.deepEqual(await agent.sessions.messages('s1'), outcome.messages)
  } finally {
    agent.dispose()
  }
}

test('a JS store with sync methods holds the commits of a turn; nothing is written under <root>/sessions', async () => {
  await oneTurnIntoAHostStore({ async: false })
})

test('a JS store with async methods works the same', async () => {
  await oneTurnIntoAHostStore({ async: true })
})

// A turn's start writes the spec snapshot in the same store work as its lease and load; the
// first of many sessions starting at once writes it, the others wait for that write instead
// of each writing it again (or each queueing one more piece of store work).
test('thirty sessions starting at once write the spec snapshot once, before any commit', async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const { store, calls } = mapStore({ async: true })
  const specs = new Map()
  store.writeSpec = async (hash, spec) => {
    calls.push('writeSpec')
    await new Promise((resolve) => setTimeout(resolve, 20))
    specs.set(hash, spec)
  }
  store.readSpec = (hash) => specs.get(hash) ?? null
  const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: store }, model: async () => say('Hi.') })
  try {
    const outcomes = await Promise.all(Array.from({ length: 30 }, (_, i) => agent.workflow.send(`w${i}`, { message: 'Hi' })))
    assert.deepEqual(new Set(outcomes.map((o) => o.kind)), new Set(['completed']))
    assert.equal(calls.filter((c) => c === 'writeSpec').length, 1, `store calls: ${calls.join(' ')}`)
    assert.ok(calls.indexOf('writeSpec') < calls.indexOf('commit'), 'the snapshot is in the store before the first commit')
    const { specHash } = await agent.sessions.get('w7')
    assert.equal((await agent.getSpecSnapshot(specHash)).title, 'One')
  } finally {
    agent.dispose()
  }
})

test('a session parked in one agent is decided in a second agent sharing the JS store', async () => {
  const root = workspace({ 'workflows/desk/workflow.yaml': PARK_SPEC })
  const { store, sessions } = mapStore({ async: true })
  const first = scripted([advance('review', 'ready'), say('A colleague will review it.')])
  const a = await createAgent({ workflow: 'desk', workspace: { rootDir: root, sessionStore: store }, model: first.model })
  const parked = await a.workflow.send('p1', { message: 'Approve me.' })
  a.dispose()
  assert.equal(parked.kind, 'parked')
  assert.equal(parked.status, 'awaiting_decision')
  assert.equal(sessions.get('p1').state.status, 'awaiting_decision')

  const second = scripted([say('Approved, goodbye.')])
  const b = await createAgent({ workflow: 'desk', workspace: { rootDir: root, sessionStore: store }, model: second.model })
  try {
    assert.deepEqual((await b.sessions.list()).map((s) => [s.sessionId, s.status]), [['p1', 'awaiting_decision']])
    // The park record the first agent's Outcome carried, read back by the second from the store.
    const { instructions, ...record } = await b.sessions.park('p1')
    assert.deepEqual(record, parked.pending)
    assert.equal(instructions, 'A person decides.')
    const done = await b.workflow.decide('p1', { to: 'done' })
    assert.equal(await b.sessions.park('p1'), null)
    assert.equal(done.kind, 'completed')
    assert.equal(done.state, 'done')
    assert.equal(done.reply, 'Approved, goodbye.')
    // The second agent's model saw the first agent's conversation.
    assert.ok(second.requests[0].messages.some((m) => m.role === 'user' && m.content === 'Approve me.'))
    assert.equal(sessions.get('p1').state.status, 'completed')
    assert.equal(existsSync(join(root, 'sessions')), false)
  } finally {
    b.dispose()
  }
})

test('sessions.list/get/messages/delete read and delete through the JS store', async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const { store, sessions, calls } = mapStore()
  const { model } = scripted([say('One.'), say('Two.')])
  const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: store }, model })
  try {
    await agent.workflow.send('a1', { message: 'First' })
    await agent.workflow.send('a2', { message: 'Second' })
    assert.deepEqual((await agent.sessions.list()).map((s) => s.sessionId).sort(), ['a1', 'a2'])
    const a1 = await agent.sessions.get('a1')
    assert.equal(a1.sessionId, 'a1')
    assert.equal(a1.status, 'completed')
    assert.equal(await agent.sessions.get('nope'), null)
    assert.deepEqual((await agent.sessions.messages('a2')).map((m) => m.content), ['Second', 'Two.'])
    assert.equal(await agent.sessions.messageCount('a2'), 2)
    calls.length = 0
    assert.equal(await agent.sessions.delete('a1'), true)
    assert.ok(calls.includes('delete'))
    assert.deepEqual([...sessions.keys()], ['a2'])
    assert.equal(await agent.sessions.delete('a1'), false)
    assert.deepEqual((await agent.sessions.list()).map((s) => s.sessionId), ['a2'])
    // Seeding needs a session folder, which a host store does not have.
    await assert.rejects(agent.sessions.seed('a2', { 'note.md': 'x' }), (e) => {
      assert.ok(e instanceof SessionStoreCapabilityError)
      assert.match(e.message, /^The configured host session store does not support 'seed'\./)
      return true
    })
  } finally {
    agent.dispose()
  }
})

test('a store whose commit throws rejects the send with a SessionStoreError naming the method; Node survives', async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const { store } = mapStore()
  store.commit = () => {
    throw new Error('disk full')
  }
  const { model } = scripted([say('Hello.')])
  const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: store }, model })
  try {
    await assert.rejects(agent.workflow.send('c1', { message: 'Hi' }), (e) => {
      assert.ok(e instanceof SessionStoreError, `${e.name}: ${e.message}`)
      assert.equal(e.code, 'SessionStoreError')
      assert.equal(e.message, "session store: commit of session 'c1' failed: store.commit threw: disk full")
      return true
    })
  } finally {
    agent.dispose()
  }
  // The process is fine: another agent runs a turn.
  const ok = mapStore()
  const again = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: ok.store }, model: scripted([say('Still here.')]).model })
  try {
    assert.equal((await again.workflow.send('c2', { message: 'Hi' })).reply, 'Still here.')
  } finally {
    again.dispose()
  }
})

test('a store answering garbage or rejecting fails the call with a SessionStoreError naming the method', async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const cases = [
    [{ load: () => 42 }, () => 'send', /^session store: load of session 'g1' failed: it answered a number; expected \{ state, messages \} or null$/],
    [{ load: () => Promise.reject(new Error('offline')) }, () => 'send', /^session store: load of session 'g1' failed: store\.load threw: offline$/],
    [{ list: () => 'x' }, () => 'list', /^session store: list failed: it answered a string; expected an array of session ids$/],
    [{ list: () => { const o = []; o.push(o); return o } }, () => 'list', /^session store: list failed: store\.list answered a value that is not JSON/],
  ]
  for (const [override, op, pattern] of cases) {
    const { store } = mapStore()
    Object.assign(store, override)
    const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: store }, model: scripted([say('x')]).model })
    try {
      const pending = op() === 'send' ? agent.workflow.send('g1', { message: 'Hi' }) : agent.sessions.list()
      await assert.rejects(pending, (e) => {
        assert.ok(e instanceof SessionStoreError, `${e.name}: ${e.message}`)
        assert.match(e.message, pattern)
        return true
      })
    } finally {
      agent.dispose()
    }
  }
})

test('a store that never answers does not hang dispose; the waiting call is released', async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const { store } = mapStore()
  let asked
  const asking = new Promise((resolve) => (asked = resolve))
  store.load = () => {
    asked()
    return new Promise(() => {})
  }
  const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: store }, model: scripted([say('x')]).model })
  const pending = agent.workflow.send('h1', { message: 'Hi' })
  await asking
  const started = Date.now()
  agent.dispose()
  assert.ok(Date.now() - started < 1000)
  await assert.rejects(pending, (e) => {
    assert.ok(e instanceof SessionStoreError, `${e.name}: ${e.message}`)
    assert.match(e.message, /^session store: load of session 'h1' failed: the agent was disposed/)
    return true
  })
})

test('a bad store object is a TypeError naming what is missing', async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const { store } = mapStore()
  delete store.commit
  await assert.rejects(createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: store }, model: say }), (e) => {
    assert.ok(e instanceof TypeError)
    assert.match(e.message, /'workspace\.sessionStore' must have a 'commit' method/)
    return true
  })
  await assert.rejects(createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: 'memory' }, model: say }), TypeError)
  assert.throws(() => createFilesystemSessionStore({}), TypeError)
})

test('the memory store keeps history across sends and agents, lists sessions, and cannot seed', async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const memory = createMemorySessionStore()
  assert.equal(memory.kind, 'memory')
  const { model, requests } = scripted([say('First answer.'), say('Second answer.')])
  const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: memory }, model })
  try {
    await agent.workflow.send('m1', { message: 'One' })
    const second = await agent.workflow.send('m1', { message: 'Two' })
    assert.equal(second.reply, 'Second answer.')
    const contents = requests[1].messages.filter((m) => m.role !== 'system').map((m) => m.content)
    assert.deepEqual(contents.slice(0, 3), ['One', 'First answer.', 'Two'])
    assert.deepEqual((await agent.sessions.list()).map((s) => s.sessionId), ['m1'])
    assert.equal(await agent.sessions.messageCount('m1'), 4)
    await assert.rejects(agent.sessions.seed('m1', { 'scratchpad/a.md': 'x' }), (e) => {
      assert.ok(e instanceof SessionStoreCapabilityError)
      assert.equal(e.code, 'SessionStoreCapabilityError')
      assert.match(e.message, /^The configured in-memory session store does not support 'seed'\./)
      return true
    })
    assert.equal(existsSync(join(root, 'sessions')), false)
  } finally {
    agent.dispose()
  }
  // A second agent given the same store sees the session; a fresh store does not.
  const other = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: memory }, model: say })
  const fresh = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: createMemorySessionStore() }, model: say })
  try {
    assert.equal(await other.sessions.messageCount('m1'), 4)
    assert.deepEqual(await fresh.sessions.list(), [])
  } finally {
    other.dispose()
    fresh.dispose()
  }
})

/** What the model was told for each tool call of `requests`, by call id. */
function toolAnswers(requests) {
  const answers = {}
  for (const r of requests) for (const m of r.messages) if (m.role === 'tool') answers[m.tool_call_id] = m.content
  return answers
}

const BIG = Array.from({ length: 2000 }, (_, i) => `row ${i} ${'x'.repeat(20)}`).join('\n')
const bigTool = { name: 'big', description: 'Answers a long text.', schema: { type: 'object', properties: {} }, handler: async () => BIG }

/** Two turns on one session working with its files: writes, an offloaded result, reads, a listing, a copy and a removal. */
async function filesAcrossTurns(sessionStore) {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const tools = (...calls) => ({ role: 'assistant', content: null, tool_calls: calls })
  const { model, requests } = scripted([
    tools(
      call('write_file', { file_path: 'scratchpad/a.md', content: 'alpha\nbeta' }, 'w1'),
      call('write_file', { file_path: 'outbox/note.md', content: 'to send' }, 'w2'),
      call('big', {}, 'b1'),
    ),
    say('Written.'),
    tools(
      call('read_file', { file_path: 'scratchpad/a.md' }, 'r1'),
      call('read_file', { file_path: 'large_tool_results/b1', offset: 1, limit: 2 }, 'r2'),
      call('edit_file', { file_path: 'scratchpad/a.md', old_string: 'beta', new_string: 'gamma' }, 'e1'),
      call('copy_file', { source: 'scratchpad/a.md', destination: 'scratchpad/b.md' }, 'c1'),
      call('remove_file', { file_path: 'outbox/note.md' }, 'x1'),
      call('ls', { path: '/' }, 'l1'),
      call('glob', { pattern: '**/*.md' }, 'g1'),
      call('grep', { pattern: 'gamma' }, 'g2'),
      call('read_file', { file_path: 'outbox/note.md' }, 'r3'),
    ),
    say('Read.'),
  ])
  const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore }, model, tools: [bigTool], essentialTools: ['big'] })
  try {
    await agent.workflow.send('f1', { message: 'Write the notes.' })
    await agent.workflow.send('f1', { message: 'Read them back.' })
  } finally {
    agent.dispose()
  }
  return { root, answers: toolAnswers(requests) }
}

test("the memory and host stores hold a session's files: every file tool answers as with the filesystem store", async () => {
  const reference = (await filesAcrossTurns(undefined)).answers
  assert.equal(reference.w1, "Successfully wrote to 'scratchpad/a.md'")
  assert.match(reference.b1, /^Tool result too large \(\d+ characters\), so it was saved to the file '\/large_tool_results\/b1'/)
  assert.equal(reference.r1, '     1\talpha\n     2\tbeta')
  assert.equal(reference.r2, `     2\trow 1 ${'x'.repeat(20)}\n     3\trow 2 ${'x'.repeat(20)}`)
  assert.equal(reference.c1, "Copied 'scratchpad/a.md' to 'scratchpad/b.md' (11 B).")
  assert.equal(reference.x1, "Removed 'outbox/note.md'.")
  assert.equal(reference.l1, '/large_tool_results/ (directory)\n/outbox/ (directory)\n/scratchpad/ (directory)')
  assert.equal(reference.g1, '/scratchpad/a.md\n/scratchpad/b.md')
  assert.equal(reference.r3, "Error: File '/outbox/note.md' not found")
  const pg = pgStore('files')
  if (!pg) console.log(`postgres store skipped: ${NO_PG}`)
  for (const [kind, store] of [
    ['memory', createMemorySessionStore()],
    ['host', mapStore().store],
    ...(pg ? [['postgres', pg]] : []),
  ]) {
    const { root, answers } = await filesAcrossTurns(store)
    assert.deepEqual(answers, reference, kind)
    assert.equal(existsSync(join(root, 'sessions')), false, kind)
  }
})

test("a memory store's session files are shared by its agents and go with the session", async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const memory = createMemorySessionStore()
  const writer = await createAgent({
    workflow: 'one',
    workspace: { rootDir: root, sessionStore: memory },
    model: scripted([{ role: 'assistant', content: null, tool_calls: [call('write_file', { file_path: 'scratchpad/a.md', content: 'kept' }, 'w1')] }, say('Done.')]).model,
  })
  const readAs = async (sessionStore, id) => {
    const { model, requests } = scripted([{ role: 'assistant', content: null, tool_calls: [call('read_file', { file_path: 'scratchpad/a.md' }, 'r1')] }, say('Read.')])
    const reader = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore }, model })
    try {
      await reader.workflow.send(id, { message: 'Read it.' })
    } finally {
      reader.dispose()
    }
    return toolAnswers(requests).r1
  }
  try {
    await writer.workflow.send('m1', { message: 'Write it.' })
    assert.equal(await readAs(memory, 'm1'), '     1\tkept')
    assert.equal(await readAs(memory, 'm2'), "Error: File '/scratchpad/a.md' not found")
    assert.equal(await readAs(createMemorySessionStore(), 'm1'), "Error: File '/scratchpad/a.md' not found")
    assert.equal(await writer.sessions.delete('m1'), true)
    assert.equal(await readAs(memory, 'm1'), "Error: File '/scratchpad/a.md' not found")
    assert.equal(existsSync(join(root, 'sessions')), false)
  } finally {
    writer.dispose()
  }
})

test("a host store's session files go with the session when the host drops it behind the agent's back", async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const { store, sessions } = mapStore()
  const tools = (...calls) => ({ role: 'assistant', content: null, tool_calls: calls })
  const { model, requests } = scripted([
    tools(call('write_file', { file_path: 'scratchpad/a.md', content: 'old' }, 'w1')),
    say('Written.'),
    tools(call('read_file', { file_path: 'scratchpad/a.md' }, 'r1')),
    say('Read.'),
    tools(call('read_file', { file_path: 'scratchpad/a.md' }, 'r2')),
    say('Read again.'),
  ])
  const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: store }, model })
  try {
    await agent.workflow.send('h1', { message: 'Write.' })
    await agent.workflow.send('h1', { message: 'Read.' })
    assert.equal(toolAnswers(requests).r1, '     1\told')
    // The host removes the session from its own storage, not through the agent.
    sessions.delete('h1')
    await agent.workflow.send('h1', { message: 'Read again.' })
    assert.equal(toolAnswers(requests).r2, "Error: File '/scratchpad/a.md' not found")
  } finally {
    agent.dispose()
  }
})

test('createFilesystemSessionStore({ dir }) keeps sessions under dir', async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': ONE_SPEC })
  const dir = join(workspace({}), 'elsewhere')
  const fsStore = createFilesystemSessionStore({ dir })
  assert.deepEqual({ kind: fsStore.kind, dir: fsStore.dir }, { kind: 'filesystem', dir })
  const { model } = scripted([say('Filed.')])
  const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: fsStore }, model })
  try {
    await agent.workflow.send('d1', { message: 'Hi' })
    const state = JSON.parse(readFileSync(join(dir, 'd1', 'checkpoints', 'state.json'), 'utf8'))
    assert.equal(state.state.status, 'completed')
    assert.equal(existsSync(join(root, 'sessions')), false)
    await agent.sessions.seed('d1', { 'scratchpad/n.md': 'seeded' })
    assert.equal(readFileSync(join(dir, 'd1', 'scratchpad', 'n.md'), 'utf8'), 'seeded')
    assert.deepEqual((await agent.sessions.list()).map((s) => s.sessionId), ['d1'])
  } finally {
    agent.dispose()
  }
})

// A step is durable before anything follows it. A session whose transcript path is a
// dangling link fails its first commit (the runtime's writes never follow a link): the turn
// fails with the store's error before any model call or `before` hook, and the session is
// left as it was.
test('a session whose lease or first commit fails asks no model and runs no hook; repaired, it runs from scratch', async () => {
  const BEFORE_SPEC = `${ONE_SPEC}    before:\n      script: hooks/mark.js\n`
  const root = workspace({
    'workflows/one/workflow.yaml': ONE_SPEC,
    'workflows/gated/workflow.yaml': BEFORE_SPEC,
    'workflows/gated/hooks/mark.js': 'export default async (input) => { await input.tools.writeFile({ file_path: "scratchpad/hook.md", content: "ran" }); return { verdict: "ok" } }\n',
  })
  // Two ways a new session's files cannot be made; each returns its repair.
  const breakages = {
    // A link where the transcript goes: refused, never followed (on Unix by the lease,
    // which locks the transcript; elsewhere by the first commit).
    transcript: (id) => {
      const dir = join(root, 'sessions', id, 'checkpoints')
      mkdirSync(dir, { recursive: true })
      symlinkSync(join(root, 'nowhere.jsonl'), join(dir, 'transcript.jsonl'))
      return () => rmSync(join(dir, 'transcript.jsonl'))
    },
    // A file where `scratchpad/` goes: the lease and the load go through, the first commit
    // (which makes the folder when the load could not) fails.
    scratchpad: (id) => {
      const dir = join(root, 'sessions', id)
      mkdirSync(dir, { recursive: true })
      writeFileSync(join(dir, 'scratchpad'), 'in the way')
      return () => rmSync(join(dir, 'scratchpad'))
    },
  }
  const write = (name) => tools(call('write_file', { file_path: `scratchpad/${name}.md`, content: name }))
  for (const workflow of ['one', 'gated']) {
    for (const [what, broken] of Object.entries(breakages)) {
      const { model, requests } = scripted([write('after'), say('Done.')])
      const agent = await createAgent({ workflow, workspace: { rootDir: root }, model })
      const id = `f-${workflow}-${what}`
      const repair = broken(id)
      try {
        await assert.rejects(agent.workflow.send(id, { message: 'Write it.' }), (e) => {
          assert.ok(e instanceof SessionStoreError, `${e.name}: ${e.message}`)
          assert.ok(e.message.includes(what === 'transcript' ? 'transcript.jsonl' : `${id}/scratchpad`), e.message)
          return true
        })
        const scratch = join(root, 'sessions', id, 'scratchpad')
        if (what === 'transcript') {
          assert.equal(existsSync(join(scratch, 'after.md')), false, 'the tool call of an answer after a failed commit ran')
          assert.equal(existsSync(join(scratch, 'hook.md')), false, 'a before hook ran after a failed commit')
        }
        assert.equal(requests.length, 0, 'the model was asked after a failed commit')
        if (what === 'transcript') {
          // The planted link is never read through: the session's messages are refused, naming it.
          await assert.rejects(agent.sessions.messages(id), /transcript\.jsonl' is a symbolic link/)
        } else {
          assert.deepEqual(await agent.sessions.messages(id), [], 'nothing of the failed turn was kept')
        }
        // Nothing half-written: once the path is repaired the same session runs from scratch.
        repair()
        requests.length = 0
        const { model: again } = scripted([write('after'), say('Done.')])
        const second = await createAgent({ workflow, workspace: { rootDir: root }, model: again })
        try {
          const out = await second.workflow.send(id, { message: 'Write it.' })
          assert.equal(out.kind, 'completed', JSON.stringify(out))
          assert.equal(readFileSync(join(scratch, 'after.md'), 'utf8'), 'after')
          assert.equal(existsSync(join(scratch, 'hook.md')), workflow === 'gated')
          assert.deepEqual((await second.sessions.messages(id)).map((m) => m.role), ['user', 'assistant', 'tool', 'assistant'])
        } finally {
          second.dispose()
        }
      } finally {
        agent.dispose()
      }
    }
  }
})

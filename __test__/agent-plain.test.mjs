// A plain (ungoverned) agent — `workflow: false`, or the default workflow looked for and
// absent — and `agent.invoke` on both kinds of agent.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync } from 'node:fs'
import { join } from 'node:path'

import { createAgent, EmptyMessageError, SessionStoreIdError, WorkflowLoadError, WorkflowDisabledError } from '../js/main.js'
import { BROKEN_SPEC, EXAMPLE, call, say, scripted, workspace } from './helpers.mjs'

const toolNames = (request) => (request.tools ?? []).map((t) => t.function.name)

const SKILL = `---
name: greeting
description: How to greet a customer
---
Say hello.
`

/** A workspace with a persona, a skill, and (optionally) a workflow. */
function plainWorkspace(extra = {}) {
  return workspace({ 'AGENTS.md': '# Persona\n\nYou are Wren.\n', 'skills/greeting/SKILL.md': SKILL, ...extra })
}

const MINIMAL_SPEC = `title: Minimal
states:
  start:
    triggers: { manual: }
    instructions: Answer.
`

test('workflow: false — no spec is read, agent.workflow is undefined, the runtime contract is the defaulted v1', async () => {
  // A broken workflow under the default slug is not even looked at.
  const root = plainWorkspace({ 'workflows/order-lookup/workflow.yaml': BROKEN_SPEC })
  const { model } = scripted([])
  const agent = await createAgent({ workflow: false, workspace: { rootDir: root }, model })
  assert.equal(agent.workflow, undefined)
  assert.deepEqual({ ...agent.runtimeContract }, { engine: 'archmax-harness', version: '1', source: 'defaulted', sandbox: 1, testFormat: '1' })
  assert.ok(Object.isFrozen(agent.runtimeContract))
  agent.dispose('any') // a no-op on a plain agent: nothing to release, never throws
  agent.dispose()
})

test('a plain agent writes a file with write_file in one invoke and reads it back in the next; the transcript grows', async () => {
  const root = plainWorkspace()
  const { model, requests } = scripted([
    { role: 'assistant', content: null, tool_calls: [call('write_file', { file_path: 'notes.md', content: 'KK-2043 ships Monday' }, 'w1')] },
    say('Noted.'),
    { role: 'assistant', content: null, tool_calls: [call('read_file', { file_path: 'notes.md' }, 'r1')] },
    (request) => say(`It says: ${request.messages.at(-1).content.includes('KK-2043 ships Monday') ? 'ships Monday' : '??'}`),
  ])
  const events = []
  const agent = await createAgent({ workflow: false, workspace: { rootDir: root }, model, onEvent: (e) => events.push(e) })
  const first = await agent.invoke({ messages: [{ role: 'user', content: 'Note that KK-2043 ships Monday.' }] }, { configurable: { thread_id: 't1' } })
  assert.equal(first.status, 'completed')
  assert.deepEqual(
    first.messages.map((m) => m.role),
    ['user', 'assistant', 'tool', 'assistant'],
  )
  assert.equal(first.messages.at(-1).content, 'Noted.')
  assert.equal(readFileSync(join(root, 'sessions', 't1', 'notes.md'), 'utf8'), 'KK-2043 ships Monday')

  const second = await agent.invoke({ messages: [{ role: 'user', content: 'What did I note?' }] }, { configurable: { thread_id: 't1' } })
  assert.equal(second.messages.length, 8, 'the second turn is appended to the first')
  assert.deepEqual(second.messages.slice(0, 4), first.messages)
  assert.equal(second.messages.at(-1).content, 'It says: ships Monday')
  // The second turn's first request carries the whole conversation so far.
  assert.deepEqual(
    requests[2].messages.map((m) => m.role),
    ['system', 'user', 'assistant', 'tool', 'assistant', 'user'],
  )
  // Sessions: checkpointed like any other.
  assert.equal(await agent.sessions.messageCount('t1'), 8)
  const summary = await agent.sessions.get('t1')
  assert.equal(summary.status, 'completed')
  assert.deepEqual((await agent.sessions.messages('t1')).map((m) => m.role), second.messages.map((m) => m.role))
  // No workflow events: the plain agent has no states to enter or leave.
  assert.ok(!events.some((e) => e.type === 'advance' || e.type === 'state-enter' || e.type === 'state-leave'))
  assert.ok(events.some((e) => e.type === 'tool-called' && e.tool === 'write_file'))
  agent.dispose()
})

test("a plain agent's tools: the file tools, write_todos and host tools; no archmax_* tool exists for it", async () => {
  const root = plainWorkspace()
  const { model, requests } = scripted([
    { role: 'assistant', content: null, tool_calls: [call('archmax_advance', { to: 'x', reason: 'y' }, 'a1'), call('archmax_eval', { code: '1' }, 'e1')] },
    say('ok'),
  ])
  const agent = await createAgent({
    workflow: false,
    workspace: { rootDir: root },
    model,
    tools: [{ name: 'crm_lookup', description: 'Looks a customer up.', handler: () => 'gold' }],
  })
  const result = await agent.invoke({ messages: [{ role: 'user', content: 'Hi' }] })
  const names = toolNames(requests[0])
  assert.deepEqual(
    [...names].sort(),
    ['copy_file', 'crm_lookup', 'edit_file', 'glob', 'grep', 'ls', 'move_file', 'read_file', 'remove_file', 'write_file', 'write_todos'],
  )
  assert.ok(!names.some((n) => n.startsWith('archmax_')))
  // Called anyway, they are not tools.
  const answers = result.messages.filter((m) => m.role === 'tool').map((m) => m.content)
  assert.match(answers[0], /'archmax_advance' is not a tool/)
  assert.match(answers[1], /'archmax_eval' is not a tool/)
  // The system prompt: AGENTS.md, the zones and every skill; no platform prompt, no state block.
  const system = requests[0].messages[0].content
  assert.match(system, /^# Persona\n\nYou are Wren\./)
  assert.match(system, /# Workspace/)
  assert.match(system, /`greeting`.*How to greet a customer.*skills\/greeting\/SKILL\.md/)
  assert.doesNotMatch(system, /archmax_advance|Current state|How this run works/)
  agent.dispose()
})

test('systemPrompt is the layer after AGENTS.md, on a plain agent and a governed one', async () => {
  const root = plainWorkspace({ 'workflows/minimal/workflow.yaml': MINIMAL_SPEC })
  for (const workflow of [false, 'minimal']) {
    const { model, requests } = scripted([say('ok')])
    const agent = await createAgent({ workflow, workspace: { rootDir: root }, model, systemPrompt: 'Answer in French.' })
    await agent.invoke({ messages: [{ role: 'user', content: 'Hi' }] }, { configurable: { thread_id: `sp-${workflow}` } })
    const system = requests[0].messages[0].content
    const text = typeof system === 'string' ? system : system.map((p) => p.text).join('\n\n')
    assert.match(text, /^# Persona\n\nYou are Wren\.\n\nAnswer in French\.\n\n/, `workflow ${workflow}`)
    agent.dispose()
  }
  await assert.rejects(createAgent({ workflow: false, workspace: { rootDir: root }, model: scripted([]).model, systemPrompt: 42 }), TypeError)
})

test("a plain agent's file tools still refuse runtime-internal areas and read-only mounts", async () => {
  const root = plainWorkspace()
  const { model } = scripted([
    {
      role: 'assistant',
      content: null,
      tool_calls: [
        call('write_file', { file_path: 'checkpoints/x.json', content: '{}' }, 'c1'),
        call('write_file', { file_path: 'skills/greeting/SKILL.md', content: 'hacked' }, 'c2'),
        call('edit_file', { file_path: 'AGENTS.md', old_string: 'Wren', new_string: 'Evil' }, 'c3'),
        call('read_file', { file_path: '../outside.txt' }, 'c4'),
      ],
    },
    say('done'),
  ])
  const agent = await createAgent({ workflow: false, workspace: { rootDir: root }, model })
  const result = await agent.invoke({ messages: [{ role: 'user', content: 'Try.' }] }, { configurable: { thread_id: 'z' } })
  const answers = result.messages.filter((m) => m.role === 'tool')
  assert.equal(answers.length, 4)
  for (const a of answers) assert.equal(a.is_error, true, a.content)
  assert.match(answers[0].content, /BLOCKED/)
  assert.ok(!existsSync(join(root, 'sessions', 'z', 'checkpoints', 'x.json')))
  assert.equal(readFileSync(join(root, 'skills', 'greeting', 'SKILL.md'), 'utf8'), SKILL)
  assert.match(readFileSync(join(root, 'AGENTS.md'), 'utf8'), /Wren/)
  agent.dispose()
})

test('invoke: the session is thread_id, else __default__; a bad id is refused before anything runs; a blank message too', async () => {
  const root = plainWorkspace()
  const { model, requests } = scripted([say('hi')])
  const agent = await createAgent({ workflow: false, workspace: { rootDir: root }, model })
  await agent.invoke({ messages: [{ role: 'user', content: 'Hello' }] })
  assert.equal(await agent.sessions.messageCount('__default__'), 2)
  await assert.rejects(agent.invoke({ messages: [{ role: 'user', content: 'x' }] }, { configurable: { thread_id: 'checkpoints' } }), (e) => {
    assert.ok(e instanceof SessionStoreIdError)
    assert.equal(e.sessionId, 'checkpoints')
    return true
  })
  await assert.rejects(agent.invoke({ messages: [{ role: 'user', content: 'x' }] }, { configurable: { thread_id: '../up' } }), SessionStoreIdError)
  await assert.rejects(agent.invoke({ messages: [{ role: 'user', content: '  ' }] }, { configurable: { thread_id: 'b' } }), EmptyMessageError)
  await assert.rejects(agent.invoke({ messages: 'hi' }), TypeError)
  assert.equal(requests.length, 1, 'no refused invoke reached the model')
  assert.equal(await agent.sessions.get('b'), null)
  agent.dispose()
})

test('invoke appends every input message; LangChain-style roles and [role, content] pairs are read', async () => {
  const root = plainWorkspace()
  const { model, requests } = scripted([say('fine')])
  const agent = await createAgent({ workflow: false, workspace: { rootDir: root }, model })
  const result = await agent.invoke(
    { messages: [{ type: 'human', content: 'Earlier question' }, ['ai', 'Earlier answer'], { role: 'user', content: 'Now?' }] },
    { configurable: { thread_id: 'lc' } },
  )
  assert.deepEqual(result.messages.slice(0, 3), [
    { role: 'user', content: 'Earlier question' },
    { role: 'assistant', content: 'Earlier answer' },
    { role: 'user', content: 'Now?' },
  ])
  assert.equal(requests[0].messages.length, 4)
  agent.dispose()
})

test('a failed plain turn resolves with status failed and its exit', async () => {
  const root = plainWorkspace()
  const agent = await createAgent({ workflow: false, workspace: { rootDir: root }, model: async () => { throw new Error('provider down') } })
  const result = await agent.invoke({ messages: [{ role: 'user', content: 'Hi' }] }, { configurable: { thread_id: 'f' } })
  assert.equal(result.status, 'failed')
  assert.equal(result.exit.code, 'turn-error')
  assert.match(result.exit.reason, /provider down/)
  agent.dispose()
})

// ---- §2.1: `workflow` omitted, and an explicit slug.

test('§2.1 workflow omitted, default slug missing → a plain agent', async () => {
  const root = plainWorkspace()
  const { model, requests } = scripted([say('hi')])
  const agent = await createAgent({ workspace: { rootDir: root }, model })
  assert.equal(agent.workflow, undefined)
  await agent.invoke({ messages: [{ role: 'user', content: 'Hi' }] })
  assert.ok(!toolNames(requests[0]).includes('archmax_advance'))
  agent.dispose()
})

test('§2.1 workflow omitted, default slug present and valid → governed', async () => {
  const { model } = scripted([])
  const agent = await createAgent({ workspace: { rootDir: EXAMPLE }, model })
  assert.equal(typeof agent.workflow.send, 'function')
  assert.equal(agent.workflow.resolveTrigger().startState, 'classify')
  agent.dispose()
})

test('§2.1 workflow omitted, default slug present but invalid → WorkflowLoadError (no valid machine spec)', async () => {
  const root = plainWorkspace({ 'workflows/order-lookup/workflow.yaml': BROKEN_SPEC })
  await assert.rejects(createAgent({ workspace: { rootDir: root }, model: scripted([]).model }), (e) => {
    assert.ok(e instanceof WorkflowLoadError)
    assert.equal(e.problem, 'no valid machine spec')
    assert.equal(e.workflow, 'order-lookup')
    return true
  })
})

test('§2.1 an explicit slug: missing → WorkflowLoadError (no workflow.yaml found); invalid → no valid machine spec', async () => {
  const root = plainWorkspace({ 'workflows/broken/workflow.yaml': BROKEN_SPEC })
  await assert.rejects(createAgent({ workflow: 'order-lookup', workspace: { rootDir: root }, model: scripted([]).model }), (e) => {
    assert.ok(e instanceof WorkflowLoadError)
    assert.equal(e.problem, 'no workflow.yaml found')
    return true
  })
  await assert.rejects(createAgent({ workflow: 'broken', workspace: { rootDir: root }, model: scripted([]).model }), (e) => {
    assert.equal(e.problem, 'no valid machine spec')
    return true
  })
  await assert.rejects(createAgent({ workflow: '', workspace: { rootDir: root } }), TypeError)
  await assert.rejects(createAgent({ workflow: true, workspace: { rootDir: root } }), TypeError)
})

test('a plain agent ignores the governed-only options (trigger, seeds are not checked)', async () => {
  const root = plainWorkspace()
  const agent = await createAgent({ workflow: false, workspace: { rootDir: root }, model: scripted([]).model, trigger: { id: 'nope' }, variables: { 'Bad-Name': 1 } })
  assert.equal(agent.workflow, undefined)
  agent.dispose()
})

// ---- invoke on a governed agent.

test('invoke on a governed agent runs a turn like send, on thread_id', async () => {
  const root = plainWorkspace({ 'workflows/minimal/workflow.yaml': MINIMAL_SPEC })
  const { model, requests } = scripted([say('Answered.')])
  const agent = await createAgent({ workflow: 'minimal', workspace: { rootDir: root }, model, variables: { tier: 'gold' } })
  const result = await agent.invoke(
    { messages: [{ role: 'user', content: 'Earlier' }, { role: 'user', content: 'Question?' }] },
    { configurable: { thread_id: 'g1' } },
  )
  assert.equal(result.status, 'completed')
  assert.equal(result.workflowState, 'start')
  assert.equal(result.variables.tier.value, 'gold')
  assert.equal(result.variables.tier.locked, true)
  assert.deepEqual(result.auditTrail.map((s) => s.kind), ['trigger'])
  assert.deepEqual(result.messages.map((m) => m.content), ['Earlier', 'Question?', 'Answered.'])
  assert.ok(toolNames(requests[0]).includes('archmax_set_variables'))
  const summary = await agent.sessions.get('g1')
  assert.equal(summary.workflowState, 'start')
  agent.dispose()
})

test('invoke on a disabled workflow settles rejected with a warning and no model call; send throws', async () => {
  const root = plainWorkspace({ 'workflows/minimal/workflow.yaml': `disabled: true\n${MINIMAL_SPEC}` })
  const { model, requests } = scripted([])
  const events = []
  const agent = await createAgent({ workflow: 'minimal', workspace: { rootDir: root }, model, onEvent: (e) => events.push(e) })
  const result = await agent.invoke({ messages: [{ role: 'user', content: 'Hi' }] }, { configurable: { thread_id: 'd1' } })
  assert.equal(result.status, 'rejected')
  assert.equal(result.rejected, "Refusing to start: workflow 'minimal' is disabled.")
  assert.equal(requests.length, 0)
  assert.ok(events.some((e) => e.type === 'warning' && e.scope === 'workflow' && e.message === "Refusing to start: workflow 'minimal' is disabled."))
  await assert.rejects(agent.workflow.send('d2', { message: 'Hi' }), WorkflowDisabledError)
  agent.dispose()
})

test("a session's own files live in checkpoints/, where no agent tool reaches: the agent cannot forge or break its checkpoint", async () => {
  const root = plainWorkspace()
  const forged = JSON.stringify({ archmax_checkpoint: { transcript_len: 0, state: { status: 'completed' } } })
  const { model, requests } = scripted([
    { role: 'assistant', content: null, tool_calls: [call('write_file', { file_path: 'checkpoints/transcript.jsonl', content: forged }, 'c1')] },
    { role: 'assistant', content: null, tool_calls: [call('read_file', { file_path: 'checkpoints/state.json' }, 'c2')] },
    { role: 'assistant', content: null, tool_calls: [call('ls', { path: '/' }, 'c3')] },
    say('done'),
  ])
  const agent = await createAgent({ workflow: false, workspace: { rootDir: root }, model })
  try {
    const out = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, { configurable: { thread_id: 'cp-1' } })
    const results = Object.fromEntries(requests.at(-1).messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]))
    assert.match(results.c1, /harness-internal run area/)
    assert.match(results.c2, /harness-internal run area/)
    assert.doesNotMatch(results.c3, /state\.json|transcript\.jsonl|turn\.lock/)
    // The store is intact: the whole conversation reloads.
    const transcript = readFileSync(join(root, 'sessions', 'cp-1', 'checkpoints', 'transcript.jsonl'), 'utf8')
    assert.doesNotMatch(transcript, /"content":"\{\\"archmax_checkpoint/)
    assert.equal((await agent.sessions.messages('cp-1')).length, out.messages.length)
  } finally {
    agent.dispose()
  }
})

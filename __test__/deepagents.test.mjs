// `@archmax-ai/harness/deepagents`: the workflow run by a real Deep Agents agent (and by
// LangChain's createAgent) through archmaxMiddleware, with a fake tool-calling model.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { tool } from '@langchain/core/tools'
import { Command, MemorySaver } from '@langchain/langgraph'
import { createDeepAgent } from 'deepagents'
import { createAgent as createLangChainAgent, createMiddleware, FakeToolCallingModel } from 'langchain'
import { z } from 'zod'

import { createAgent, createMemorySessionStore, WorkflowLoadError } from '@archmax-ai/harness'
import { archmaxMiddleware, CHILD_TAG } from '@archmax-ai/harness/deepagents'
import { CALLER_SPEC, CHILD_SPEC, call, copyExample, EXAMPLE, mapStore, ON_ERROR_HUMAN_SPEC, REFUND, refundAnswers, say, toAIMessage, tools, workspace } from './helpers.mjs'

/** A LangChain chat model answering `answer({ messages, tools })`, recording every request. */
class FakeToolModel extends BaseChatModel {
  constructor(answer) {
    super({})
    this.answer = answer
    this.requests = []
  }
  _llmType() {
    return 'fake-tools'
  }
  bindTools(tools) {
    return this.withConfig({ tools })
  }
  async _generate(messages, options) {
    const request = {
      system: messages.filter((m) => m.getType() === 'system').map((m) => m.text).join('\n'),
      messages,
      tools: (options?.tools ?? []).map((t) => t.function?.name ?? t.name),
    }
    this.requests.push(request)
    const message = toAIMessage(await this.answer(request, this.requests.length - 1))
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] }
  }
}

/** A model answering from a script, in the order asked. */
const scriptedModel = (answers) =>
  new FakeToolModel(() => {
    const next = answers.shift()
    if (next === undefined) throw new Error('the script ran out')
    return next
  })

const advance = (to, reason, id) => tools(call('archmax_advance', { to, reason }, id))
const config = (thread) => ({ configurable: { thread_id: thread }, recursionLimit: 100 })

/**
 * Runs `fn(agent, middleware)` on an agent (`createDeepAgent`, else `create`) with
 * `archmaxMiddleware({ workflow, workspace: { rootDir, sessionStore }, onEvent, ...extra })`
 * and a checkpointer, then disposes the middleware.
 */
async function withAgent({ workflow, rootDir, mounts, model, sessionStore, onEvent, tools, checkpointer, create = createDeepAgent }, fn, extra = {}) {
  const middleware = archmaxMiddleware({ workflow, workspace: { rootDir, mounts, sessionStore }, ...(onEvent ? { onEvent } : {}), ...extra })
  const agent = create({ model, ...(tools ? { tools } : {}), middleware: [middleware], checkpointer: checkpointer ?? new MemorySaver() })
  try {
    return await fn(agent, middleware)
  } finally {
    await middleware.dispose()
  }
}

function exampleCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'archmax-deep-'))
  copyExample(dir)
  return dir
}

/** The tool messages of a LangGraph result, by call id. */
function toolTexts(result) {
  return Object.fromEntries(result.messages.filter((m) => m.getType() === 'tool').map((m) => [m.tool_call_id, m.content]))
}

test("the example's refund flow through a Deep Agents agent: interrupt at the human state, resumed with a Command, to completion", async () => {
  const root = exampleCopy()
  // Deep Agents' file tools take absolute paths: '/' is the workspace root.
  const model = scriptedModel(refundAnswers('/scratchpad/refund.json'))
  const events = []
  await withAgent({ workflow: 'order-lookup', rootDir: root, model, onEvent: (e) => events.push(e) }, async (agent, middleware) => {
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'I want a refund for KK-2043.' }] }, config('r1'))
    // The park is an interrupt whose payload is the park record.
    assert.equal(first.__interrupt__?.length, 1, JSON.stringify(first.__interrupt__))
    const park = first.__interrupt__[0].value
    assert.equal(park.channel, 'decision')
    assert.equal(park.state, 'refund-review')
    assert.equal(park.sessionId, 'r1')
    assert.deepEqual(park.evidence, ['scratchpad/refund.json'])
    assert.deepEqual(park.transitions.map((t) => t.to), ['refund-approved', 'refund-request', 'closed'])
    assert.match(park.instructions, /The assistant proposes the refund/)
    assert.deepEqual(park.approvers, ['support-lead@kettleandkite.example', 'finance@kettleandkite.example'])
    assert.deepEqual(park.transitions.map((t) => t.type), ['approve', 'refine', 'reject'])
    // The model saw the state's prompt block and only the tools that state discloses.
    const [classify] = model.requests
    assert.match(classify.system, /Read the customer's request and decide what kind of request it is/)
    assert.ok(classify.tools.includes('archmax_advance') && classify.tools.includes('read_file'), classify.tools.join())
    assert.ok(!classify.tools.includes('write_file'), 'classify forbids write_file')
    assert.ok(!classify.tools.includes('task'), 'task is not granted')
    assert.ok(!classify.tools.includes('archmax_reset'), 'forbid_always')
    // The file tools acted on the session's workspace, so the harness sees what the agent wrote.
    assert.equal(readFileSync(join(root, 'sessions/r1/scratchpad/refund.json'), 'utf8'), REFUND)
    const harness = await middleware.harness()
    const summary = await harness.sessions.get('r1')
    assert.equal(summary.status, 'awaiting_decision')
    assert.equal(summary.variables.order_id.value, 'KK-2043')
    // What the model wrote in the turn that parked reaches LangGraph's state, not only its stream.
    assert.equal(first.messages.at(-1).content, 'A colleague will review your refund.')
    const state = await agent.getState(config('r1'))
    assert.equal(state.values.messages.at(-1).content, 'A colleague will review your refund.')

    const done = await agent.invoke(new Command({ resume: { target: 'refund-approved', comment: 'ok' } }), config('r1'))
    assert.equal(done.__interrupt__, undefined)
    assert.equal(done.messages.at(-1).content, 'Your refund of 10.00 EUR is confirmed.')
    const after = await harness.sessions.get('r1')
    assert.equal(after.status, 'completed')
    assert.equal(after.workflowState, 'refund-approved')
    assert.equal(readFileSync(join(root, 'sessions/r1/outbox/refund-KK-2043.md'), 'utf8'), 'KK-2043: 10.00 EUR, within 5 working days.')
    // The event stream reached onEvent: the hook ran in the Rust sandbox, the park and the decision.
    const types = events.map((e) => e.type)
    for (const t of ['hook-verdict', 'parked', 'decided', 'state-enter']) assert.ok(types.includes(t), `${t} in ${types.join()}`)
    assert.ok(events.every((e) => e.sessionId === undefined || e.sessionId === 'r1'))
  })
})

test('after a restart the interrupt is the same park record, rebuilt from the session store, and the Command resumes it', async () => {
  const root = exampleCopy()
  const answers = refundAnswers('/scratchpad/refund.json')
  const before = await withAgent({ workflow: 'order-lookup', rootDir: root, model: scriptedModel(answers.slice(0, 3)) }, async (agent) => {
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'I want a refund for KK-2043.' }] }, config('rs1'))
    return first.__interrupt__?.[0]?.value
  })
  assert.equal(before?.state, 'refund-review')
  // A new process: a new middleware and a new LangGraph checkpointer (its interrupt is gone),
  // the same session store. A new message meets the park, whose record comes from the store.
  const model = scriptedModel(answers.slice(3))
  await withAgent({ workflow: 'order-lookup', rootDir: root, model }, async (agent, middleware) => {
    const again = await agent.invoke({ messages: [{ role: 'user', content: 'Any news on my refund?' }] }, config('rs1'))
    assert.equal(again.__interrupt__?.length, 1, JSON.stringify(again.__interrupt__))
    assert.deepEqual(again.__interrupt__[0].value, before)
    for (const key of ['seq', 'createdAt', 'title', 'instructions', 'approvers', 'evidence']) assert.ok(before[key] !== undefined, key)
    assert.deepEqual(before.transitions[0], { to: 'refund-approved', type: 'approve', description: 'Approve the refund as proposed.' })
    assert.equal(model.requests.length, 0, 'a parked session asks the model nothing')
    const harness = await middleware.harness()
    assert.deepEqual(await harness.sessions.park('rs1'), (({ sessionId, ...rest }) => rest)(before))
    const done = await agent.invoke(new Command({ resume: { target: 'refund-approved' } }), config('rs1'))
    assert.equal(done.__interrupt__, undefined)
    assert.equal(done.messages.at(-1).content, 'Your refund of 10.00 EUR is confirmed.')
    assert.equal((await harness.sessions.get('rs1')).status, 'completed')
    assert.equal(await harness.sessions.park('rs1'), null)
  })
})

const TWO_REVIEWS_SPEC = `title: Two reviews
instructions: A test workflow.
mounts:
  allow_always: []
states:
  draft:
    triggers: { manual: }
    instructions: Draft, then ask for the reviews.
    transitions:
      - to: legal
  legal:
    type: human
    instructions: Legal checks the draft.
    approvers: [legal@example.com]
    transitions:
      - to: finance
        type: approve
        description: The draft is sound.
  finance:
    type: human
    instructions: Finance checks the cost.
    transitions:
      - to: done
        type: approve
        description: The cost is fine.
  done:
    instructions: Say it is approved.
`

test('two human states in a row are two interrupts of one node: each decided once, across a restart too', async () => {
  const root = workspace({ 'workflows/reviews/workflow.yaml': TWO_REVIEWS_SPEC })
  const checkpointer = new MemorySaver()
  const model = () => new FakeToolModel((r, i) => (i === 0 && r.system.includes('Draft, then ask') ? advance('legal', 'drafted', 'a1') : say('Noted.')))
  const events = []
  const onEvent = (e) => events.push(e)
  await withAgent({ workflow: 'reviews', rootDir: root, model: model(), checkpointer, onEvent }, async (agent, middleware) => {
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'Draft it.' }] }, config('t1'))
    const legal = first.__interrupt__?.[0]?.value
    assert.equal(legal?.state, 'legal', JSON.stringify(first.__interrupt__))
    assert.deepEqual(legal.approvers, ['legal@example.com'])
    assert.equal(legal.seq, 1)
    // Deciding legal lands on finance, another human state: its own interrupt, same invoke.
    const second = await agent.invoke(new Command({ resume: { target: 'finance', comment: 'legal ok' } }), config('t1'))
    const finance = second.__interrupt__?.[0]?.value
    assert.equal(finance?.state, 'finance', JSON.stringify(second.__interrupt__))
    assert.equal(finance.seq, 2)
    assert.equal(finance.instructions, 'Finance checks the cost.')
    assert.deepEqual(finance.transitions.map((t) => t.to), ['done'])
    const harness = await middleware.harness()
    assert.equal((await harness.sessions.get('t1')).state, 'finance')
  })
  // A new process over the same checkpointer: LangGraph runs the node again and hands the
  // legal answer back first; the harness applies only the finance one.
  await withAgent({ workflow: 'reviews', rootDir: root, model: model(), checkpointer, onEvent }, async (agent, middleware) => {
    const done = await agent.invoke(new Command({ resume: { target: 'done' } }), config('t1'))
    assert.equal(done.__interrupt__, undefined, JSON.stringify(done.__interrupt__))
    const harness = await middleware.harness()
    const after = await harness.sessions.get('t1')
    assert.equal(after.workflowState, 'done')
    assert.ok(!['awaiting_input', 'awaiting_decision'].includes(after.status), after.status)
  })
  const decided = events.filter((e) => e.type === 'decided')
  assert.equal(decided.length, 2, JSON.stringify(decided))
})

const NOTES_SPEC = `title: Notes
instructions: A test workflow.
mounts:
  allow_always: []
states:
  draft:
    triggers: { manual: }
    instructions: Write notes/<your name>.md, record who you are, then move on.
    tools:
      allow:
        - { tool: write_file, paths: ["notes/**"] }
    transitions:
      - to: done
    after:
      script: hooks/check.js
  done:
    instructions: Say goodbye.
`
const VETO_HOOK = `export default async ({ tools }) => {
  let r = ''
  try {
    r = await tools.readFile({ file_path: 'notes/veto.md' })
  } catch {
    // No notes/veto.md: nothing to veto.
  }
  return String(r).includes('VETO!') ? { verdict: 'veto', reason: 'the notes say veto' } : { verdict: 'ok' }
}
`

/** A model that works one notes thread from what its own conversation says (so threads may interleave). */
function notesModel() {
  return new FakeToolModel(({ messages }) => {
    const who = messages.find((m) => m.getType() === 'human')?.text ?? ''
    const done = messages.filter((m) => m.getType() === 'ai').length
    if (done === 0) {
      return tools(
        call('write_file', { file_path: `notes/${who}.md`, content: `by ${who}` }, `w-${who}`),
        call('archmax_set_variables', { variables: { who } }, `v-${who}`),
      )
    }
    if (done === 1) return advance('done', 'written', `a-${who}`)
    return say(`bye ${who}`)
  })
}

test('two threads at once on one agent keep their own state, variables and files', async () => {
  const root = workspace({ 'workflows/notes/workflow.yaml': NOTES_SPEC, 'workflows/notes/hooks/check.js': VETO_HOOK })
  await withAgent({ workflow: 'notes', rootDir: root, model: notesModel() }, async (agent, middleware) => {
    const [a, b] = await Promise.all(
      ['ann', 'bob'].map((who) => agent.invoke({ messages: [{ role: 'user', content: who }] }, config(`t-${who}`))),
    )
    assert.equal(a.messages.at(-1).content, 'bye ann')
    assert.equal(b.messages.at(-1).content, 'bye bob')
    const harness = await middleware.harness()
    for (const who of ['ann', 'bob']) {
      const s = await harness.sessions.get(`t-${who}`)
      assert.equal(s.status, 'completed')
      assert.equal(s.workflowState, 'done')
      assert.deepEqual(Object.keys(s.variables).sort(), ['trigger', 'who'])
      assert.equal(s.variables.who.value, who)
      assert.equal(readFileSync(join(root, `sessions/t-${who}/notes/${who}.md`), 'utf8'), `by ${who}`)
      const other = who === 'ann' ? 'bob' : 'ann'
      assert.ok(!existsSync(join(root, `sessions/t-${who}/notes/${other}.md`)))
    }
  })
})

const STORES = {
  filesystem: () => undefined,
  memory: () => createMemorySessionStore(),
  host: () => mapStore().store,
}

for (const [storeName, makeStore] of Object.entries(STORES)) {
  for (const listening of [true, false]) {
    test(`a refused file write, a veto and an edge the workflow does not have answer the model with the kernel's texts (${storeName} store, onEvent ${listening ? 'on' : 'off'})`, async () => {
      const root = workspace({ 'workflows/notes/workflow.yaml': NOTES_SPEC, 'workflows/notes/hooks/check.js': VETO_HOOK })
      const model = scriptedModel([
        tools(
          call('write_file', { file_path: '/etc/evil.md', content: 'x' }, 'w1'),
          call('write_file', { file_path: 'notes/veto.md', content: 'VETO!' }, 'w2'),
        ),
        advance('ghost', 'anywhere', 'g1'),
        advance('done', 'written', 'd1'),
        tools(call('write_file', { file_path: 'notes/veto.md', content: 'fine' }, 'w3')),
        advance('done', 'fixed', 'd2'),
        say('bye'),
      ])
      const events = []
      const onEvent = listening ? (e) => events.push(e.type) : undefined
      await withAgent({ workflow: 'notes', rootDir: root, model, sessionStore: makeStore(), onEvent }, async (agent, middleware) => {
        const result = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, config('k1'))
        const texts = toolTexts(result)
        assert.match(texts.w1, /^\[workflow\] BLOCKED: 'write_file' on '\/etc\/evil.md' is not allowed in state 'draft'\./)
        assert.ok(!existsSync(join(root, 'sessions/k1/etc/evil.md')) && !existsSync('/etc/evil.md'))
        assert.equal(texts.g1, "archmax_advance rejected: cannot advance from 'draft' to 'ghost'. Valid target slugs: done.")
        // The hook read what the agent wrote, in whichever store holds the session's files.
        assert.match(texts.d1, /the notes say veto/)
        assert.match(texts.d2, /done/)
        if (storeName === 'filesystem') assert.equal(readFileSync(join(root, 'sessions/k1/notes/veto.md'), 'utf8'), 'fine')
        assert.equal(result.messages.at(-1).content, 'bye')
        const harness = await middleware.harness()
        assert.equal((await harness.sessions.get('k1')).status, 'completed')
        const transcript = await harness.sessions.messages('k1')
        assert.ok(transcript.some((m) => m.role === 'tool' && m.tool_call_id === 'w1' && m.governance_blocked === true))
        if (listening) {
          for (const t of ['tool-blocked', 'hook-verdict', 'state-enter']) assert.ok(events.includes(t), `${t} in ${events.join()}`)
        }
      })
    })
  }
}

test("LangChain's createAgent takes the same middleware; a host tool is governed and runs through LangGraph's tool node", async () => {
  const spec = `title: Lookup
instructions: A test workflow.
mounts:
  allow_always: []
states:
  ask:
    triggers: { manual: }
    instructions: Look the customer up.
    tools:
      allow:
        - { tool: crm_lookup, args: { email: ["*@example.com"] } }
    transitions:
      - to: done
  done:
    instructions: Say goodbye.
`
  const root = workspace({ 'workflows/lookup/workflow.yaml': spec })
  const seen = []
  const crm = tool(async ({ email }) => (seen.push(email), `customer ${email}: gold`), {
    name: 'crm_lookup',
    description: 'Looks a customer up.',
    schema: z.object({ email: z.string() }),
  })
  const model = scriptedModel([
    tools(call('crm_lookup', { email: 'eve@evil.test' }, 'x1'), call('crm_lookup', { email: 'ann@example.com' }, 'x2')),
    advance('done', 'found', 'x3'),
    say('bye'),
  ])
  await withAgent({ workflow: 'lookup', rootDir: root, model, tools: [crm], create: createLangChainAgent }, async (agent, middleware) => {
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'who is ann?' }] }, config('l1'))
    const texts = toolTexts(result)
    assert.match(texts.x1, /^\[workflow\] BLOCKED: 'crm_lookup' is not allowed in state 'ask'\./)
    assert.equal(texts.x2, 'customer ann@example.com: gold')
    assert.deepEqual(seen, ['ann@example.com'])
    assert.ok(model.requests[0].tools.includes('crm_lookup'))
    assert.ok(!model.requests[2].tools.includes('crm_lookup'), 'done does not disclose crm_lookup')
    assert.equal((await (await middleware.harness()).sessions.get('l1')).status, 'completed')
  })
})

test("Deep Agents' task tool is governed like any tool: granted by the state, its subagent runs as the host's", async () => {
  const spec = `title: Delegate
instructions: A test workflow.
mounts:
  allow_always: []
states:
  research:
    triggers: { manual: }
    instructions: Delegate the research, then move on.
    tools:
      allow: [task]
    transitions:
      - to: done
  done:
    instructions: Say goodbye.
`
  const root = workspace({ 'workflows/delegate/workflow.yaml': spec })
  const main = [
    tools(call('task', { description: 'Find the answer.', subagent_type: 'general-purpose' }, 't1')),
    advance('done', 'researched', 't2'),
    tools(call('task', { description: 'Again.', subagent_type: 'general-purpose' }, 't3')),
    say('bye'),
  ]
  const model = new FakeToolModel(({ system }) => {
    // The harness's prompt marks the workflow's own calls; the subagent has Deep Agents' prompt only.
    if (!system.includes('# How this run works')) return say('the answer is 42')
    const next = main.shift()
    if (next === undefined) throw new Error('the script ran out')
    return next
  })
  await withAgent({ workflow: 'delegate', rootDir: root, model }, async (agent, middleware) => {
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'research' }] }, config('d1'))
    const texts = toolTexts(result)
    assert.equal(texts.t1, 'the answer is 42')
    assert.match(texts.t3, /^\[workflow\] BLOCKED: 'task' is not allowed in state 'done'\./)
    const research = model.requests.find((r) => r.system.includes('## Current state: research'))
    assert.ok(research.tools.includes('task'), research.tools.join())
    const done = model.requests.find((r) => r.system.includes('## Current state: done'))
    assert.ok(!done.tools.includes('task'), done.tools.join())
    const transcript = await (await middleware.harness()).sessions.messages('d1')
    assert.ok(transcript.some((m) => m.role === 'tool' && m.tool_call_id === 't1' && m.content === 'the answer is 42'))
  })
})

test('a resume value the park cannot take throws a TypeError naming what it needs; a good one then decides', async () => {
  const root = workspace({ 'workflows/approve/workflow.yaml': APPROVAL_SPEC_HUMAN })
  const model = scriptedModel([advance('review', 'drafted', 'a1'), say('Waiting for review.'), say('Goodbye.')])
  await withAgent({ workflow: 'approve', rootDir: root, model }, async (agent, middleware) => {
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'draft' }] }, config('p1'))
    assert.equal(first.__interrupt__?.[0]?.value.state, 'review')
    await assert.rejects(agent.invoke(new Command({ resume: 42 }), config('p1')), (e) => {
      // LangChain wraps a middleware's error (MiddlewareError) and keeps its text.
      assert.ok(e.message.endsWith("resuming session 'p1' parked for a decision needs { target, comment? } (or { message } to reply), got number 42"), e.message)
      return true
    })
    const summary = await (await middleware.harness()).sessions.get('p1')
    assert.equal(summary.status, 'awaiting_decision', 'a refused resume decides nothing')
    // The refused value is not taken for the next resume's.
    const done = await agent.invoke(new Command({ resume: { target: 'done' } }), config('p1'))
    assert.equal(done.__interrupt__, undefined, JSON.stringify(done.__interrupt__))
    assert.equal(done.messages.at(-1).content, 'Goodbye.')
    assert.equal((await (await middleware.harness()).sessions.get('p1')).workflowState, 'done')
  })
})

test('a { message } resume is a reply: the run ends with the answer, the park stays, and a later message meets it again', async () => {
  const root = workspace({ 'workflows/approve/workflow.yaml': APPROVAL_SPEC_HUMAN })
  const model = scriptedModel([advance('review', 'drafted', 'a1'), say('Waiting for review.'), say('Still with the reviewer.'), say('Goodbye.')])
  await withAgent({ workflow: 'approve', rootDir: root, model }, async (agent, middleware) => {
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'draft' }] }, config('q1'))
    const park = first.__interrupt__?.[0]?.value
    assert.equal(park?.state, 'review')
    const replied = await agent.invoke(new Command({ resume: { message: 'Any news?' } }), config('q1'))
    assert.equal(replied.__interrupt__, undefined, JSON.stringify(replied.__interrupt__))
    assert.equal(replied.messages.at(-1).content, 'Still with the reviewer.')
    assert.equal((await (await middleware.harness()).sessions.get('q1')).status, 'awaiting_decision')
    const again = await agent.invoke({ messages: [{ role: 'user', content: 'Hello?' }] }, config('q1'))
    assert.deepEqual(again.__interrupt__?.[0]?.value, park)
    const done = await agent.invoke(new Command({ resume: { target: 'done' } }), config('q1'))
    assert.equal(done.messages.at(-1).content, 'Goodbye.')
  })
})

test('archmax_wait parks for an input: an interrupt whose resume value is the delivery', async () => {
  const spec = `title: Waits
instructions: A test workflow.
mounts:
  allow_always: []
states:
  invoice:
    triggers: { manual: }
    instructions: Wait for the payment, then say thanks.
`
  const root = workspace({ 'workflows/waits/workflow.yaml': spec })
  const model = scriptedModel([tools(call('archmax_wait', { reason: 'waiting for the payment' }, 'w1')), say('Waiting.'), say('Thanks.')])
  await withAgent({ workflow: 'waits', rootDir: root, model }, async (agent, middleware) => {
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'Invoice.' }] }, config('i1'))
    const park = first.__interrupt__?.[0]?.value
    assert.equal(park?.channel, 'input', JSON.stringify(first.__interrupt__))
    assert.equal(park.state, 'invoice')
    assert.equal(park.reason, 'waiting for the payment')
    assert.equal(park.instructions, 'Wait for the payment, then say thanks.')
    const harness = await middleware.harness()
    assert.equal((await harness.sessions.get('i1')).status, 'awaiting_input')
    assert.match(park.parkedAt, /Z$/)
    assert.deepEqual(park, { sessionId: 'i1', ...(await harness.sessions.park('i1')) })
    const done = await agent.invoke(new Command({ resume: { trigger: { id: 'paid' }, variables: { amount: 20 } } }), config('i1'))
    assert.equal(done.__interrupt__, undefined)
    assert.equal(done.messages.at(-1).content, 'Thanks.')
    const after = await harness.sessions.get('i1')
    assert.ok(!['awaiting_input', 'awaiting_decision'].includes(after.status), after.status)
    assert.equal(after.variables.amount.value, 20)
  })
})

test("the workflow's budget ends the run: the graph ends with the harness's reason", async () => {
  const spec = `title: Budget
instructions: A test workflow.
budget:
  maxModelCalls: 2
mounts:
  allow_always: []
states:
  loop:
    triggers: { manual: }
    instructions: Look around.
`
  const root = workspace({ 'workflows/budget/workflow.yaml': spec })
  const model = new FakeToolModel((_, i) => tools(call('ls', { path: '/' }, `l${i}`)))
  await withAgent({ workflow: 'budget', rootDir: root, model }, async (agent, middleware) => {
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, config('b1'))
    assert.equal(model.requests.length, 2, 'the third model call is never made')
    const summary = await (await middleware.harness()).sessions.get('b1')
    assert.equal(summary.status, 'rejected')
    assert.equal(result.messages.at(-1).content, 'the turn exhausted its model-call budget (budget.maxModelCalls: 2)')
  })
})

test("a rubric runs in the harness, graded by the agent's model or by rubricModel", async () => {
  const spec = `title: Graded
instructions: A test workflow.
mounts:
  allow_always: []
states:
  answer:
    triggers: { manual: }
    instructions: Answer.
    after:
      rubric:
        instructions: The reply must name a date.
        max_iterations: 1
`
  const OK = say('{"verdict": "ok", "reason": "names a date"}')
  const graded = (r) => r.system.startsWith('The reply must name a date.')
  for (const separate of [false, true]) {
    const root = workspace({ 'workflows/graded/workflow.yaml': spec })
    const grader = new FakeToolModel(() => OK)
    const model = new FakeToolModel((r) => (graded(r) ? OK : say('It ships on 3 March.')))
    const events = []
    const options = { workflow: 'graded', rootDir: root, model, onEvent: (e) => events.push(e.type) }
    await withAgent(options, async (agent, middleware) => {
      const result = await agent.invoke({ messages: [{ role: 'user', content: 'When does it ship?' }] }, config('g1'))
      assert.equal(result.messages.at(-1).content, 'It ships on 3 March.')
      assert.equal((await (await middleware.harness()).sessions.get('g1')).status, 'completed')
    }, separate ? { rubricModel: grader } : {})
    assert.ok(events.includes('rubric-start') && events.includes('rubric-result'), events.join())
    assert.equal(model.requests.filter(graded).length, separate ? 0 : 1)
    assert.equal(grader.requests.length, separate ? 1 : 0)
  }
})

test("the file tools reach the workspace's mounts as createAgent's do: a read-only mount reads, and refuses a write", async () => {
  const root = workspace({ 'workflows/notes/workflow.yaml': NOTES_SPEC, 'catalog/prices.md': 'old prices\n' })
  const model = scriptedModel([
    tools(
      call('read_file', { file_path: '/catalog/prices.md' }, 'm1'),
      call('write_file', { file_path: '/catalog/prices.md', content: 'new prices' }, 'm2'),
    ),
    say('Read.'),
  ])
  await withAgent({ workflow: 'notes', rootDir: root, mounts: { '/catalog/': { readOnly: true } }, model }, async (agent) => {
    const texts = toolTexts(await agent.invoke({ messages: [{ role: 'user', content: 'prices' }] }, config('m1')))
    assert.match(texts.m1, /old prices/)
    assert.match(texts.m2, /^\[workflow\] BLOCKED: 'write_file' on '\/catalog\/prices\.md' targets a read-only mount/)
    assert.equal(readFileSync(join(root, 'catalog/prices.md'), 'utf8'), 'old prices\n')
  })
})

test("a sub-workflow runs as the harness's child session, answered by the agent's model", async () => {
  const root = workspace({ 'workflows/orders/workflow.yaml': CALLER_SPEC, 'workflows/enrich/workflow.yaml': CHILD_SPEC })
  const model = scriptedModel([
    tools(call('archmax_workflow_enrich', { order_id: 'KK-1' }, 'c1')),
    tools(call('archmax_set_variables', { variables: { risk: 'low' } }, 'k1')),
    say('Enriched KK-1.'),
    say('Done.'),
  ])
  await withAgent({ workflow: 'orders', rootDir: root, model }, async (agent, middleware) => {
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Enrich KK-1.' }] }, config('o1'))
    assert.equal(result.messages.at(-1).content, 'Done.')
    assert.match(toolTexts(result).c1, /"returns":\{"risk":"low"\}/)
    const sessions = await (await middleware.harness()).sessions.list()
    assert.ok(sessions.some((s) => s.parentSessionId === 'o1'), JSON.stringify(sessions.map((s) => [s.sessionId, s.parentSessionId])))
  })
})

const APPROVAL_SPEC_HUMAN = `title: Approve
instructions: A test workflow.
mounts:
  allow_always: []
states:
  draft:
    triggers: { manual: }
    instructions: Draft, then ask for review.
    transitions:
      - to: review
  review:
    type: human
    instructions: Approve or send back.
    transitions:
      - to: done
        type: approve
        description: Approve.
  done:
    instructions: Say goodbye.
`

test("archmax_raise ends the session failed: the graph ends with the raised reason", async () => {
  const spec = `title: Raise
instructions: A test workflow.
mounts:
  allow_always: []
states:
  work:
    triggers: { manual: }
    instructions: Do the work, or raise.
`
  const root = workspace({ 'workflows/raise/workflow.yaml': spec })
  const model = scriptedModel([tools(call('archmax_raise', { code: 'no-invoice', reason: 'nothing to bill' }, 'r1'))])
  await withAgent({ workflow: 'raise', rootDir: root, model }, async (agent, middleware) => {
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Bill it.' }] }, config('x1'))
    assert.equal(result.__interrupt__, undefined)
    assert.equal(result.messages.at(-1).content, 'nothing to bill')
    const summary = await (await middleware.harness()).sessions.get('x1')
    assert.equal(summary.status, 'failed')
    assert.deepEqual(summary.exit, { success: false, code: 'no-invoice', reason: 'nothing to bill' })
    assert.equal(model.requests.length, 1, 'a raise ends the turn: no call after it')
  })
})

test('archmax_reset goes back to the entry state: its prompt block, an agent lock released, the reset text as the tool result', async () => {
  const spec = `title: Reset
instructions: A test workflow.
mounts:
  allow_always: []
states:
  intake:
    triggers: { manual: }
    instructions: Take the order in.
    transitions:
      - to: pack
  pack:
    instructions: Pack the order.
    transitions:
      - to: done
  done:
    instructions: Say goodbye.
`
  const root = workspace({ 'workflows/reset/workflow.yaml': spec })
  const model = scriptedModel([
    tools(call('archmax_set_variables', { variables: { order: 'A-1' }, lock: true }, 'v1'), call('archmax_advance', { to: 'pack', reason: 'taken' }, 'a1')),
    tools(call('archmax_reset', { reason: 'wrong order' }, 'z1')),
    tools(call('archmax_set_variables', { variables: { order: 'B-2' } }, 'v2')),
    say('Order B-2 taken.'),
  ])
  await withAgent({ workflow: 'reset', rootDir: root, model }, async (agent, middleware) => {
    const result = await agent.invoke({ messages: [{ role: 'user', content: 'Order.' }] }, config('z'))
    const texts = toolTexts(result)
    assert.equal(texts.z1, "Reset to state 'intake'. Correction budgets are cleared and its entry gate runs again; earlier work in the conversation and in scratchpad/ is untouched.")
    assert.match(model.requests[1].system, /## Current state: pack\n/)
    assert.match(model.requests[2].system, /## Current state: intake\n/)
    assert.doesNotMatch(model.requests[2].system, /## Current state: pack/)
    // The lock the agent set is released by the reset, so the variable takes a new value.
    assert.doesNotMatch(texts.v2, /rejected|locked/i, texts.v2)
    const summary = await (await middleware.harness()).sessions.get('z')
    assert.equal(summary.workflowState, 'intake')
    assert.equal(summary.variables.order.value, 'B-2')
    assert.equal(result.messages.at(-1).content, 'Order B-2 taken.')
  })
})

test('on_error routes a failed hook to a human state: the turn parks there, an interrupt, and the decision resumes it', async () => {
  const root = workspace({ 'workflows/approvals/workflow.yaml': ON_ERROR_HUMAN_SPEC })
  const model = scriptedModel([advance('done', 'drafted', 'a1'), say('I could not get the approval.'), say('A person will decide.'), say('Goodbye.')])
  const events = []
  const hookExecutors = {
    approval: async () => {
      throw new Error('the approval service is down')
    },
  }
  await withAgent({ workflow: 'approvals', rootDir: root, model, onEvent: (e) => events.push(e) }, async (agent, middleware) => {
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'Refund it.' }] }, config('oe'))
    assert.match(toolTexts(first).a1, /^archmax_advance rejected: /)
    const park = first.__interrupt__?.[0]?.value
    assert.equal(park?.state, 'triage', JSON.stringify(first.__interrupt__))
    assert.equal(park.instructions, 'A person decides what to do with a failed refund.')
    assert.ok(events.some((e) => e.type === 'state-error-routed'))
    // The failed advance was answered in draft; the park's one message is a reply-only call.
    assert.match(model.requests[1].system, /## Current state: draft\n/)
    assert.match(model.requests[2].system, /it stays parked until someone else acts/)
    const done = await agent.invoke(new Command({ resume: { target: 'done', comment: 'close it' } }), config('oe'))
    assert.equal(done.__interrupt__, undefined)
    assert.equal(done.messages.at(-1).content, 'Goodbye.')
    const summary = await (await middleware.harness()).sessions.get('oe')
    assert.equal(summary.workflowState, 'done')
  }, { hookExecutors })
})

test('bad options throw a clear TypeError', () => {
  assert.throws(() => archmaxMiddleware(), /needs an options object/)
  assert.throws(() => archmaxMiddleware({ workspace: {} }), /'workflow' must be a workflow slug, got undefined/)
})

/** The example's refund flow as LangChain's FakeToolCallingModel plays it: its answers cycle, and so do its message ids. */
function cyclingRefundModel() {
  const c = (name, args, id) => ({ name, args, id })
  return new FakeToolCallingModel({
    toolCalls: [
      [c('archmax_advance', { to: 'refund-request', reason: 'wants money back' }, 'c1')],
      [
        c('archmax_set_variables', { variables: { order_id: 'KK-2043' } }, 'c2'),
        c('write_file', { file_path: '/scratchpad/refund.json', content: REFUND }, 'c3'),
        c('archmax_advance', { to: 'refund-review', reason: 'proposal written' }, 'c4'),
      ],
      [],
      [c('write_file', { file_path: 'outbox/refund-KK-2043.md', content: 'KK-2043: 10.00 EUR, within 5 working days.' }, 'c5')],
    ],
  })
}

test('a finished LangGraph run leaves a settled session: the refund flow under FakeToolCallingModel ends completed, read the same from a new agent', async () => {
  const root = exampleCopy()
  await withAgent({ workflow: 'order-lookup', rootDir: root, model: cyclingRefundModel() }, async (agent, middleware) => {
    const first = await agent.invoke({ messages: [{ role: 'user', content: 'I want a refund for KK-2043.' }] }, config('fc1'))
    assert.equal(first.__interrupt__?.[0]?.value.state, 'refund-review', JSON.stringify(first.__interrupt__))
    const done = await agent.invoke(new Command({ resume: { target: 'refund-approved' } }), config('fc1'))
    assert.equal(done.__interrupt__, undefined)
    assert.equal(readFileSync(join(root, 'sessions/fc1/outbox/refund-KK-2043.md'), 'utf8'), 'KK-2043: 10.00 EUR, within 5 working days.')
    // The model reused its message ids: each answer is still a message of its own in the graph.
    const ids = done.messages.map((m) => m.id)
    assert.equal(new Set(ids).size, ids.length, ids.join())
    assert.equal(done.messages.at(-1).getType(), 'ai')
    const harness = await middleware.harness()
    const summary = await harness.sessions.get('fc1')
    assert.equal(summary.status, 'completed')
    assert.equal(summary.standing.kind, 'done')
    const transcript = await harness.sessions.messages('fc1')
    assert.equal(transcript.filter((m) => m.role !== 'system').at(-1).role, 'assistant')
  })
  // A new agent over the same store (as a worker in another process would read it): settled.
  const reader = await createAgent({ workflow: 'order-lookup', workspace: { rootDir: root }, model: async () => ({ content: 'unused' }) })
  try {
    const summary = await reader.sessions.get('fc1')
    assert.equal(summary.status, 'completed')
    assert.equal(summary.standing.resumable, false)
  } finally {
    reader.dispose()
  }
})

test('a LangGraph run another middleware ends while the turn is in flight leaves the session settled (cancelled, resumable), not running', async () => {
  const root = exampleCopy()
  // Ends the run after the model's second answer, before its tool calls run.
  const stop = createMiddleware({
    name: 'Stop',
    afterModel: { canJumpTo: ['end'], hook: (state) => (state.messages.filter((m) => m.getType() === 'ai').length >= 2 ? { jumpTo: 'end' } : undefined) },
  })
  const model = scriptedModel([
    advance('refund-request', 'wants money back', 'c1'),
    tools(call('archmax_set_variables', { variables: { order_id: 'KK-2043' } }, 'c2')),
    say('unused'),
  ])
  const middleware = archmaxMiddleware({ workflow: 'order-lookup', workspace: { rootDir: root } })
  const agent = createLangChainAgent({ model, middleware: [stop, middleware], checkpointer: new MemorySaver() })
  try {
    await agent.invoke({ messages: [{ role: 'user', content: 'I want a refund for KK-2043.' }] }, config('st1'))
    const summary = await (await middleware.harness()).sessions.get('st1')
    assert.notEqual(summary.status, 'running')
    assert.deepEqual([summary.standing.kind, summary.standing.resumable, summary.exit?.code], ['cancelled', true, 'turn-cancelled'])
  } finally {
    await middleware.dispose()
  }
})

test("a sub-workflow's model calls are tagged in LangGraph's message stream, the workflow's own are not", async () => {
  const root = workspace({ 'workflows/orders/workflow.yaml': CALLER_SPEC, 'workflows/enrich/workflow.yaml': CHILD_SPEC })
  const model = scriptedModel([
    tools(call('archmax_workflow_enrich', { order_id: 'KK-1' }, 'c1')),
    tools(call('archmax_set_variables', { variables: { risk: 'low' } }, 'k1')),
    say('Enriched KK-1.'),
    say('Done.'),
  ])
  await withAgent({ workflow: 'orders', rootDir: root, model }, async (agent) => {
    const seen = []
    for await (const [message, metadata] of await agent.stream({ messages: [{ role: 'user', content: 'Enrich KK-1.' }] }, { ...config('tag1'), streamMode: 'messages' })) {
      if (message.getType?.() === 'ai' || message._getType?.() === 'ai') seen.push({ text: String(message.content), child: (metadata.tags ?? []).includes(CHILD_TAG), session: metadata.archmax_session_id })
    }
    const child = seen.filter((m) => m.child)
    assert.ok(child.some((m) => m.text === 'Enriched KK-1.'), JSON.stringify(seen))
    assert.ok(child.every((m) => m.session?.startsWith('tag1~')), JSON.stringify(child))
    assert.ok(seen.some((m) => m.text === 'Done.' && !m.child), JSON.stringify(seen))
  })
})

test('a workflow that does not load fails as WorkflowLoadError where the middleware is built, or where an invoke starts; dispose never throws', async () => {
  const root = exampleCopy()
  assert.throws(
    () => archmaxMiddleware({ workflow: 'order-lookpu', workspace: { rootDir: root } }),
    (e) => e instanceof WorkflowLoadError && e.workflow === 'order-lookpu' && e.problem === 'no workflow.yaml found' && /^Cannot load workflow 'order-lookpu'/.test(e.message),
  )
  // Built while it loaded, gone before the first invoke: the invoke rejects with the typed error itself.
  const gone = workspace({ 'workflows/w/workflow.yaml': 'title: W\ninstructions: x\nstates:\n  a:\n    triggers: { manual: }\n' })
  const middleware = archmaxMiddleware({ workflow: 'w', workspace: { rootDir: gone } })
  rmSync(join(gone, 'workflows/w/workflow.yaml'))
  const agent = createDeepAgent({ model: scriptedModel([say('hi')]), middleware: [middleware], checkpointer: new MemorySaver() })
  await assert.rejects(agent.invoke({ messages: [{ role: 'user', content: 'hi' }] }, config('wl1')), (e) => {
    assert.ok(e instanceof WorkflowLoadError, `${e?.name}: ${e?.message}`)
    assert.equal(e.problem, 'no workflow.yaml found')
    return true
  })
  await middleware.dispose()
  // An assembly that failed at the first model call (an unknown trigger) leaves nothing to release.
  const bad = archmaxMiddleware({ workflow: 'order-lookup', workspace: { rootDir: root }, trigger: 'no-such-trigger' })
  const badAgent = createDeepAgent({ model: scriptedModel([say('hi')]), middleware: [bad], checkpointer: new MemorySaver() })
  await assert.rejects(badAgent.invoke({ messages: [{ role: 'user', content: 'hi' }] }, config('wl2')), /no-such-trigger/)
  await bad.dispose()
  await bad.dispose()
})

// createAgent driven by LangChain: a scripted BaseChatModel subclass and a `tool(...)` with a zod schema.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessage, HumanMessage, SystemMessage, ToolMessage } from '@langchain/core/messages'
import { tool } from '@langchain/core/tools'
import { z } from 'zod'

import { createAgent } from '@archmax-ai/harness'
import { copyExample, EXAMPLE, workspace } from './helpers.mjs'

function exampleCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'archmax-lc-'))
  copyExample(dir)
  return dir
}

/** A chat model answering AIMessages from a script; records the messages and the bound tools of every call. */
class ScriptedChatModel extends BaseChatModel {
  constructor(answers) {
    super({})
    this.answers = answers
    this.calls = []
  }
  _llmType() {
    return 'scripted'
  }
  bindTools(tools) {
    return this.withConfig({ tools })
  }
  async _generate(messages, options) {
    this.calls.push({ messages, tools: options?.tools ?? [] })
    const next = this.answers.shift()
    if (next === undefined) throw new Error('the script ran out')
    const message = typeof next === 'function' ? next(messages) : next
    return { generations: [{ text: typeof message.content === 'string' ? message.content : '', message }] }
  }
}

const advance = (to, reason = 'next', id = `adv_${to}`) =>
  new AIMessage({ content: '', tool_calls: [{ id, name: 'archmax_advance', args: { to, reason }, type: 'tool_call' }] })
const toolNames = (call) => call.tools.map((t) => t.function?.name ?? t.name)

test('the README turn driven by a LangChain chat model', async () => {
  const model = new ScriptedChatModel([
    advance('general-question', 'a shop question'),
    new AIMessage({
      // Content blocks become text; usage_metadata becomes the runtime's usage.
      content: [{ type: 'text', text: 'Yes, we ship ' }, { type: 'text', text: 'to Austria.' }],
      usage_metadata: { input_tokens: 120, output_tokens: 8, total_tokens: 128 },
    }),
  ])
  const events = []
  const agent = await createAgent({
    workflow: 'order-lookup',
    workspace: { rootDir: exampleCopy() },
    model,
    onEvent: (e) => events.push(e),
  })
  try {
    const outcome = await agent.workflow.send('s-lc', { message: 'Do you ship to Austria?' })
    assert.equal(outcome.kind, 'completed')
    assert.equal(outcome.state, 'general-question')
    assert.equal(outcome.reply, 'Yes, we ship to Austria.')
    assert.deepEqual(outcome.auditTrail.map((s) => s.to), ['classify', 'general-question'])
    assert.equal(model.calls.length, 2)
    const [first, second] = model.calls
    // LangChain messages: a SystemMessage, the HumanMessage; later the AIMessage with its tool call and a ToolMessage.
    assert.ok(first.messages[0] instanceof SystemMessage)
    assert.ok(first.messages.some((m) => m instanceof HumanMessage && m.content === 'Do you ship to Austria?'))
    assert.ok(toolNames(first).includes('archmax_advance'))
    const ai = second.messages.find((m) => m instanceof AIMessage && m.tool_calls?.length)
    assert.equal(ai.tool_calls[0].name, 'archmax_advance')
    assert.deepEqual(ai.tool_calls[0].args, { to: 'general-question', reason: 'a shop question' })
    assert.ok(second.messages.some((m) => m instanceof ToolMessage && m.tool_call_id === ai.tool_calls[0].id))
    const usage = events.filter((e) => e.type === 'model-usage')
    assert.ok(usage.some((e) => e.inputTokens === 120 && e.outputTokens === 8), JSON.stringify(usage))
  } finally {
    agent.dispose()
  }
})

const TOOLS_SPEC = `title: Tools
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
      - to: done
  done:
    instructions: Say goodbye.
`

test('a LangChain tool (zod schema) is governed: refused in one state, run in another; the model sees its JSON schema', async () => {
  const ran = []
  const crmLookup = tool(
    async ({ email }) => {
      ran.push(email)
      return `Customer ${email}: Acme, gold tier.`
    },
    {
      name: 'crm_lookup',
      description: 'Looks a customer up by email.',
      schema: z.object({ email: z.string().describe('The customer email') }),
    },
  )
  const lookup = (id) =>
    new AIMessage({ content: '', tool_calls: [{ id, name: 'crm_lookup', args: { email: 'a@acme.test' }, type: 'tool_call' }] })
  const model = new ScriptedChatModel([lookup('c1'), advance('lookup', 'needs the CRM'), lookup('c2'), new AIMessage('Acme is a gold customer.')])
  const agent = await createAgent({
    workflow: 'desk',
    workspace: { rootDir: workspace({ 'workflows/desk/workflow.yaml': TOOLS_SPEC }) },
    model,
    tools: [crmLookup],
  })
  try {
    const outcome = await agent.workflow.send('t-lc', { message: 'Who is a@acme.test?' })
    assert.equal(outcome.state, 'lookup')
    assert.equal(outcome.reply, 'Acme is a gold customer.')
    // Intake: not offered, and the call is refused without running.
    assert.ok(!toolNames(model.calls[0]).includes('crm_lookup'))
    const refusal = model.calls[1].messages.find((m) => m instanceof ToolMessage && m.tool_call_id === 'c1')
    assert.match(String(refusal.content), /crm_lookup/)
    assert.match(String(refusal.content), /BLOCKED|not allowed|forbidden/i)
    // Lookup: offered with the zod schema as JSON Schema, and run once.
    const offered = model.calls[2].tools.find((t) => (t.function?.name ?? t.name) === 'crm_lookup')
    assert.ok(offered, 'crm_lookup is bound in lookup')
    assert.equal(offered.function.description, 'Looks a customer up by email.')
    const params = offered.function.parameters
    assert.equal(params.type, 'object')
    assert.equal(params.properties.email.type, 'string')
    assert.equal(params.properties.email.description, 'The customer email')
    assert.deepEqual(params.required, ['email'])
    assert.deepEqual(ran, ['a@acme.test'])
    const result = model.calls[3].messages.find((m) => m instanceof ToolMessage && m.tool_call_id === 'c2')
    assert.equal(result.content, 'Customer a@acme.test: Acme, gold tier.')
  } finally {
    agent.dispose()
  }
})

test('modelFactory: asked for the agent model with no id at assembly, and may return a LangChain model', async () => {
  const asked = []
  const model = new ScriptedChatModel([advance('general-question'), new AIMessage('Hello.')])
  const agent = await createAgent({
    workflow: 'order-lookup',
    workspace: { rootDir: exampleCopy() },
    defaultModel: 'house-model',
    modelFactory: (role, env, id) => {
      asked.push([role, typeof env, id])
      return model
    },
  })
  try {
    // The example's rubric (no model of its own) gets its grader at assembly too, as in the original.
    const atAssembly = [
      ['agent', 'function', undefined],
      ['rubric', 'function', undefined],
    ]
    assert.deepEqual(asked, atAssembly)
    const outcome = await agent.workflow.send('s-f', { message: 'Hi' })
    assert.equal(outcome.reply, 'Hello.')
    assert.deepEqual(asked, atAssembly)
  } finally {
    agent.dispose()
  }
})

test('modelFactory: a state declaring another model id gets a second model, built once', async () => {
  const asked = []
  const small = new ScriptedChatModel([advance('lookup'), new AIMessage('from small')])
  const big = new ScriptedChatModel([advance('done')])
  const spec = TOOLS_SPEC.replace('    instructions: Look the customer up.\n', '    instructions: Look the customer up.\n    model: big-model\n')
  const agent = await createAgent({
    workflow: 'desk',
    workspace: { rootDir: workspace({ 'workflows/desk/workflow.yaml': spec }) },
    defaultModel: 'small-model',
    modelFactory: (role, env, id) => {
      asked.push(id)
      return id === 'big-model' ? big : small
    },
  })
  try {
    // intake (default model) → lookup (declares big-model) → done (default model again).
    const outcome = await agent.workflow.send('m1', { message: 'Hi' })
    assert.equal(outcome.reply, 'from small')
    assert.deepEqual(asked, [undefined, 'big-model'])
    assert.equal(small.calls.length, 2)
    assert.equal(big.calls.length, 1)
  } finally {
    agent.dispose()
  }
})

test('a model that is neither a function nor a LangChain chat model is a TypeError', async () => {
  await assert.rejects(createAgent({ workspace: { rootDir: exampleCopy() }, model: { invoke() {} } }), TypeError)
  await assert.rejects(createAgent({ workspace: { rootDir: exampleCopy() }, modelFactory: () => 42 }), TypeError)
  await assert.rejects(
    createAgent({ workspace: { rootDir: exampleCopy() }, modelFactory: () => { throw new Error('no key') } }),
    /no key/,
  )
})

test("invoke's config callbacks, tags and metadata reach every call of the turn to a LangChain model", async () => {
  const model = new ScriptedChatModel([
    advance('refund-request', 'wants money back', 'c1'),
    new AIMessage({ content: '', tool_calls: [{ id: 'c2', name: 'archmax_set_variables', args: { variables: { order_id: 'KK-2043' } }, type: 'tool_call' }] }),
    advance('escalation', 'needs a person', 'c3'),
    new AIMessage({ content: 'A colleague will take over.' }),
  ])
  const starts = []
  const handler = {
    handleChatModelStart(_llm, _messages, _runId, _parent, _extra, tags, metadata) {
      starts.push({ tags, metadata })
    },
  }
  const agent = await createAgent({ workflow: 'order-lookup', workspace: { rootDir: exampleCopy() }, model })
  try {
    const result = await agent.invoke(
      { messages: [{ role: 'user', content: 'I want a refund for KK-2043.' }] },
      { configurable: { thread_id: 'cb1' }, callbacks: [handler], tags: ['desk'], metadata: { ticket: 4711 } },
    )
    assert.equal(result.messages.at(-1).content, 'A colleague will take over.')
    assert.equal(model.calls.length, 4)
    assert.equal(starts.length, 4, 'one start per model call')
    assert.ok(starts.every((s) => s.tags?.includes('desk') && s.metadata?.ticket === 4711), JSON.stringify(starts))
    // The config belongs to that invoke: a later one without callbacks reports nothing to them.
    model.answers.push(new AIMessage({ content: 'Still here.' }))
    await agent.invoke({ messages: [{ role: 'user', content: 'Thanks.' }] }, { configurable: { thread_id: 'cb1' } })
    assert.equal(starts.length, 4)
  } finally {
    agent.dispose()
  }
})

test("a LangChain model whose stream() yields nothing fails the call with a message naming stream()", async () => {
  class SilentStream extends ScriptedChatModel {
    async *_streamResponseChunks() {}
  }
  const model = new SilentStream([])
  const agent = await createAgent({ workflow: 'order-lookup', workspace: { rootDir: exampleCopy() }, model, streaming: true, onEvent: () => {} })
  try {
    const outcome = await agent.workflow.send('st1', { message: 'Do you ship to Austria?' })
    assert.equal(outcome.kind, 'failed')
    assert.match(outcome.exit.reason, /stream\(\) yielded no chunk/)
    assert.doesNotMatch(outcome.exit.reason, /undefined undefined/)
  } finally {
    agent.dispose()
  }
})

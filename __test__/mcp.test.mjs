// MCP servers from createAgent: the workspace's .mcp.json by default, `mcpServers` instead of
// it, `mcpServers: false` for none; the tools a state grants are called against the real
// @modelcontextprotocol/server-everything over stdio, the rest refused by the kernel.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent } from '@archmax-ai/harness'
import { REFUND, ROOT, advance, call, copyExample, say, scripted, tools, workspace } from './helpers.mjs'

const EVERYTHING = join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js')
const SERVERS = { everything: { command: 'node', args: [EVERYTHING, 'stdio'] } }
const SPEC = `title: MCP
instructions: A test workflow.
states:
  lookup:
    triggers: { manual: }
    instructions: Echo.
    tools:
      allow: [mcp__everything__echo, { tool: mcp__everything__get-sum, args: { a: ["1"] } }]
`

const skipUnlessInstalled = (t) => {
  if (existsSync(EVERYTHING)) return false
  if (process.env.CI && process.env.CI !== 'false') throw new Error(`${EVERYTHING} is not installed: run npm ci`)
  t.skip('server-everything is not installed (npm ci)')
  return true
}

test('the tools a state grants are offered and called; the rest are refused with the kernel\'s words', async (t) => {
  if (skipUnlessInstalled(t)) return
  const root = workspace({ 'workflows/mcp/workflow.yaml': SPEC, '.mcp.json': JSON.stringify({ mcpServers: SERVERS }) })
  const events = []
  const { model, requests } = scripted([
    tools(
      call('mcp__everything__echo', { message: 'hi' }, 'c1'),
      call('mcp__everything__get-sum', { a: 1, b: 2 }, 'c2'),
      call('mcp__everything__get-sum', { a: 2, b: 2 }, 'c3'),
      call('mcp__everything__get-env', {}, 'c4'),
    ),
    say('Done.'),
  ])
  const agent = await createAgent({ workflow: 'mcp', workspace: { rootDir: root }, model, onEvent: (e) => events.push(e) })
  try {
    const out = await agent.workflow.send('m1', { message: 'Echo hi.' })
    assert.equal(out.kind, 'completed')
    const offered = requests[0].tools.map((d) => d.function?.name ?? d.name).filter((n) => n.startsWith('mcp__'))
    assert.deepEqual(offered.sort(), ['mcp__everything__echo', 'mcp__everything__get-sum'])
    const results = requests[1].messages.filter((m) => m.role === 'tool').map((m) => m.content)
    assert.equal(results[0], 'Echo: hi')
    assert.match(results[1], /3/)
    assert.match(results[2], /^\[workflow\] BLOCKED: 'mcp__everything__get-sum'/)
    assert.match(results[3], /^\[workflow\] BLOCKED: 'mcp__everything__get-env' is not allowed in state 'lookup'/)
    const blocked = events.filter((e) => e.type === 'tool-blocked').map((e) => e.tool)
    assert.deepEqual(blocked, ['mcp__everything__get-sum', 'mcp__everything__get-env'])
    // The calls that ran name the server and its tool.
    const called = events.filter((e) => e.type === 'tool-called' && e.tool.startsWith('mcp__')).map((e) => [e.tool, e.mcp])
    assert.deepEqual(called, [
      ['mcp__everything__echo', { server: 'everything', tool: 'echo' }],
      ['mcp__everything__get-sum', { server: 'everything', tool: 'get-sum' }],
    ])
  } finally {
    agent.dispose()
  }
})

test('mcpServers replaces the workspace\'s .mcp.json; false leaves none; a bad one is a TypeError', async (t) => {
  if (skipUnlessInstalled(t)) return
  // The workspace's file names a server that cannot start: mcpServers wins over it.
  const root = workspace({ 'workflows/mcp/workflow.yaml': SPEC, '.mcp.json': JSON.stringify({ mcpServers: { everything: { command: 'no-such-program-here' } } }) })
  const first = scripted([tools(call('mcp__everything__echo', { message: 'given' }, 'c1')), say('Done.')])
  const agent = await createAgent({ workflow: 'mcp', workspace: { rootDir: root }, model: first.model, mcpServers: SERVERS })
  try {
    await agent.workflow.send('g1', { message: 'Echo.' })
    assert.equal(first.requests[1].messages.at(-1).content, 'Echo: given')
  } finally {
    agent.dispose()
  }
  const none = scripted([tools(call('mcp__everything__echo', { message: 'x' }, 'c1')), say('Done.')])
  const plain = await createAgent({ workflow: 'mcp', workspace: { rootDir: root }, model: none.model, mcpServers: false })
  try {
    await plain.workflow.send('n1', { message: 'Echo.' })
    assert.deepEqual(none.requests[0].tools.filter((d) => (d.function?.name ?? d.name).startsWith('mcp__')), [])
    assert.match(none.requests[1].messages.at(-1).content, /mcp__everything__echo/)
  } finally {
    plain.dispose()
  }
  await assert.rejects(
    createAgent({ workflow: 'mcp', workspace: { rootDir: root }, model: none.model, mcpServers: { 'bad name!': { command: 'x' } } }),
    (e) => e instanceof TypeError && /mcpServers/.test(e.message),
  )
  await assert.rejects(createAgent({ workflow: 'mcp', workspace: { rootDir: root }, model: none.model, mcpServers: 'x' }), TypeError)
})

test('a cassette records the MCP answers with the model\'s, and its replay starts no server', async (t) => {
  if (skipUnlessInstalled(t)) return
  const root = workspace({ 'workflows/mcp/workflow.yaml': SPEC })
  const path = join(root, 'mcp.cassette.json')
  const { model } = scripted([tools(call('mcp__everything__echo', { message: 'taped' }, 'c1')), say('Done.')])
  const recorded = await createAgent({ workflow: 'mcp', workspace: { rootDir: root }, model, mcpServers: SERVERS, cassette: { path, mode: 'record' } })
  let first
  try {
    first = await recorded.workflow.send('t1', { message: 'Echo.' })
  } finally {
    recorded.dispose()
  }
  // A fresh workspace where the server's command is gone: every MCP answer comes from the cassette.
  const events = []
  const replayed = await createAgent({
    workflow: 'mcp',
    workspace: { rootDir: workspace({ 'workflows/mcp/workflow.yaml': SPEC }) },
    mcpServers: { everything: { command: 'no-such-program-here' } },
    cassette: { path, mode: 'replay' },
    onEvent: (e) => events.push(e),
  })
  try {
    const again = await replayed.workflow.send('t1', { message: 'Echo.' })
    assert.equal(again.kind, first.kind, JSON.stringify(again))
    assert.equal(again.reply, first.reply)
    const result = events.find((e) => e.type === 'tool-result' && e.tool === 'mcp__everything__echo')
    assert.equal(result?.output, 'Echo: taped', JSON.stringify(result))
    assert.equal(result.status, 'ok')
  } finally {
    replayed.dispose()
  }
})

test("the example's shop server: the lookup where a state grants it, the refund only after the approval and only for the conversation's order", async () => {
  const root = copyExample(mkdtempSync(join(tmpdir(), 'archmax-shop-')))
  const ledger = join(root, 'ledger.jsonl')
  process.env.SHOP_LEDGER = ledger
  const refund = (order_id, id) => call('mcp__shop__issue_refund', { order_id, amount: 10, currency: 'EUR' }, id)
  const { model, requests } = scripted([
    tools(call('mcp__shop__lookup_order', { order_id: 'KK-2047' }, 'l1'), refund('KK-2047', 'r1')),
    advance('refund-request', 'wants money back'),
    tools(
      call('archmax_set_variables', { variables: { order_id: 'KK-2047' } }, 's1'),
      refund('KK-2047', 'r2'),
      call('write_file', { file_path: 'scratchpad/refund.json', content: REFUND.replace('KK-2043', 'KK-2047') }, 'w1'),
      call('archmax_advance', { to: 'refund-review', reason: 'proposal written' }, 'a1'),
    ),
    say('A colleague will review your refund.'),
    tools(refund('KK-2043', 'r3')),
    tools(refund('KK-2047', 'r4')),
    say('Your refund R-KK-2047 is on its way.'),
  ])
  const agent = await createAgent({ workflow: 'order-lookup', workspace: { rootDir: root }, model })
  try {
    const parked = await agent.workflow.send('shop-1', { message: 'The kettle of KK-2047 is dented. Refund, please.' })
    assert.equal(parked.kind, 'parked', JSON.stringify(parked))
    const approved = await agent.workflow.decide('shop-1', { to: 'refund-approved', comment: 'Fine.' })
    assert.equal(approved.kind, 'completed', JSON.stringify(approved))
    assert.equal(approved.state, 'refund-approved')
    const answer = (i, id) => requests[i].messages.find((m) => m.role === 'tool' && m.tool_call_id === id)?.content
    const offered = (i) => requests[i].tools.map((d) => d.function?.name ?? d.name).filter((n) => n.startsWith('mcp__'))
    // classify: the lookup is offered and answers from the shop; the refund is not granted there.
    assert.deepEqual(offered(0), ['mcp__shop__lookup_order'])
    assert.match(answer(1, 'l1'), /"customer":"Hollow Pine Outfitters"/)
    assert.match(answer(1, 'r1'), /^\[workflow\] BLOCKED: 'mcp__shop__issue_refund' is not allowed in state 'classify'/)
    // refund-request decides a refund but may not pay it.
    assert.deepEqual(offered(2), [])
    assert.match(answer(3, 'r2'), /^\[workflow\] BLOCKED: 'mcp__shop__issue_refund' is not allowed in state 'refund-request'/)
    // refund-approved, after the person's approval: only for this conversation's order.
    assert.deepEqual(offered(4), ['mcp__shop__issue_refund'])
    assert.match(answer(5, 'r3'), /^\[workflow\] BLOCKED: 'mcp__shop__issue_refund' is not allowed in state 'refund-approved'/)
    assert.match(answer(5, 'r3'), /mcp__shop__issue_refund\(order_id=\$\{\{order_id\}\}\)/)
    assert.equal(answer(6, 'r4'), 'Refund R-KK-2047 of 10.00 EUR issued for KK-2047.')
    const paid = readFileSync(ledger, 'utf8').trim().split('\n').map((l) => JSON.parse(l))
    assert.deepEqual(paid.map((p) => [p.order_id, p.amount]), [['KK-2047', 10]])
  } finally {
    agent.dispose()
    delete process.env.SHOP_LEDGER
  }
})

test('onMcpElicitation and onMcpSampling answer what a server asks; the client advertises only what the host answers', async (t) => {
  if (skipUnlessInstalled(t)) return
  const root = workspace({
    'workflows/mcp/workflow.yaml': SPEC.replace('allow: [mcp__everything__echo, { tool: mcp__everything__get-sum, args: { a: ["1"] } }]', 'allow: [mcp__everything]'),
  })
  const offered = (requests) => requests[0].tools.map((d) => d.function?.name ?? d.name).filter((n) => n.startsWith('mcp__everything__trigger-'))
  const asked = []
  const { model, requests } = scripted([
    tools(
      call('mcp__everything__trigger-elicitation-request', {}, 'e1'),
      call('mcp__everything__trigger-sampling-request', { prompt: 'the answer', maxTokens: 10 }, 's1'),
    ),
    say('Done.'),
  ])
  const agent = await createAgent({
    workflow: 'mcp',
    workspace: { rootDir: root },
    model,
    mcpServers: SERVERS,
    onMcpElicitation: async (request) => {
      asked.push(request)
      return { action: 'accept', content: { name: 'Ada Lovelace', check: true } }
    },
    onMcpSampling: (request) => {
      asked.push(request)
      return 'forty-two'
    },
  })
  try {
    const out = await agent.workflow.send('ask-1', { message: 'Ask me.' })
    assert.equal(out.kind, 'completed')
    assert.ok(offered(requests).includes('mcp__everything__trigger-elicitation-request'), offered(requests).join())
    assert.ok(offered(requests).includes('mcp__everything__trigger-sampling-request'), offered(requests).join())
    const results = requests[1].messages.filter((m) => m.role === 'tool').map((m) => m.content)
    assert.match(results[0], /User provided the requested information/)
    assert.match(results[0], /Ada Lovelace/)
    // A field the person left out is sent with the schema's default.
    assert.match(results[0], /It was a dark and stormy night\./)
    assert.match(results[1], /forty-two/)
    const elicitation = asked.find((r) => r.params.requestedSchema)
    assert.equal(elicitation.server, 'everything')
    assert.match(elicitation.params.message, /^Please provide inputs/)
    const sampling = asked.find((r) => r.params.messages)
    assert.equal(sampling.params.maxTokens, 10)
    assert.match(JSON.stringify(sampling.params.messages), /the answer/)
  } finally {
    agent.dispose()
  }
  // Only elicitation answered: the server sees no sampling capability (its sampling tool is not
  // there); neither: no elicitation tool either, and nothing the server asks reaches the host.
  for (const [options, expected] of [
    [{ onMcpElicitation: () => ({ action: 'decline' }) }, ['mcp__everything__trigger-elicitation-request']],
    [{}, []],
  ]) {
    const probe = scripted([say('Nothing to do.')])
    const bare = await createAgent({ workflow: 'mcp', workspace: { rootDir: root }, model: probe.model, mcpServers: SERVERS, ...options })
    try {
      await bare.workflow.send('probe', { message: 'Hi.' })
      assert.deepEqual(offered(probe.requests).filter((n) => /elicitation-request$|sampling-request$/.test(n)), expected)
    } finally {
      bare.dispose()
    }
  }
  await assert.rejects(createAgent({ workflow: 'mcp', workspace: { rootDir: root }, model, onMcpSampling: 'yes' }), {
    name: 'TypeError',
    message: "'onMcpSampling' must be a function, got string yes",
  })
})

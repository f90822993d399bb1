// MCP servers from createAgent: the workspace's .mcp.json by default, `mcpServers` instead of
// it, `mcpServers: false` for none; the tools a state grants are called against the real
// @modelcontextprotocol/server-everything over stdio, the rest refused by the kernel.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { join } from 'node:path'
import { createAgent } from '@archmax-ai/harness'
import { ROOT, call, say, scripted, tools, workspace } from './helpers.mjs'

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

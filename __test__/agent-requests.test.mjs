// The requests a JS model function receives are exactly the requests the
// OpenAI-compatible endpoint receives for the same turn (the native side sends
// them to JS as deltas over per-conversation channels; agent.js rebuilds them).
// Reference: the same scripted turns run against a scripted HTTP server on
// 127.0.0.1 through the ARCHMAX_* endpoint path.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'

import { createAgent } from '@archmax-ai/harness'
import { NativeAgent } from '../index.js'
import { workspace } from './helpers.mjs'

const SPEC = `title: Two states
instructions: A test workflow.
states:
  first:
    triggers: { manual: }
    instructions: Write a note, then move on.
    transitions:
      - to: second
        description: When the note is written.
  second:
    instructions: Read the note back and answer.
`

const call = (id, name, args) => ({ id, type: 'function', function: { name, arguments: JSON.stringify(args) } })
const tools = (...calls) => ({ role: 'assistant', content: null, tool_calls: calls })

/** The scripted answers of one session `tag`: a write, a state change, a read, a failed read, an answer. */
function script(tag) {
  return [
    tools(call(`${tag}1`, 'write_file', { file_path: `scratchpad/${tag}.md`, content: `note ${tag}` })),
    tools(call(`${tag}2`, 'archmax_advance', { to: 'second', reason: 'written' })),
    tools(call(`${tag}3`, 'read_file', { file_path: `scratchpad/${tag}.md` }), call(`${tag}4`, 'read_file', { file_path: 'nope.md' })),
    { role: 'assistant', content: `done ${tag}` },
  ]
}

/** The session a request belongs to: its first user message says. */
const sessionOf = (request) => request.messages.find((m) => m.role === 'user')?.content?.match(/session (\w+)/)?.[1]

/** Runs the sessions' turns concurrently; the requests each session's model saw, in order. */
async function run(tags, makeModel) {
  const root = workspace({ 'workflows/two/workflow.yaml': SPEC })
  const seen = Object.fromEntries(tags.map((t) => [t, []]))
  const scripts = Object.fromEntries(tags.map((t) => [t, script(t)]))
  const answer = (request) => {
    const tag = sessionOf(request)
    // A deep copy now: what the model saw at this call, whatever happens later.
    seen[tag].push(JSON.parse(JSON.stringify({ messages: request.messages, tools: request.tools ?? [] })))
    return scripts[tag].shift()
  }
  const { options, close } = await makeModel(answer)
  try {
    const agent = await createAgent({ workflow: 'two', workspace: { rootDir: root }, ...options })
    const outcomes = await Promise.all(tags.map((t) => agent.workflow.send(`s-${t}`, { message: `session ${t}` })))
    agent.dispose()
    for (const [i, o] of outcomes.entries()) assert.equal(o.reply, `done ${tags[i]}`, JSON.stringify(o.exit))
    return seen
  } finally {
    await close?.()
  }
}

/** A JS model function answering after a random short delay (so the sessions interleave). */
const jsModel = async (answer) => ({
  options: {
    defaultModel: 'scripted',
    model: async (request) => {
      await new Promise((r) => setTimeout(r, Math.random() * 3))
      assert.ok(Object.isFrozen(request.messages[0]), 'request messages are frozen')
      return answer(request)
    },
  },
})

/** A scripted OpenAI-compatible server on 127.0.0.1, reached through ARCHMAX_*. */
async function httpModel(answer) {
  const server = createServer((req, res) => {
    let body = ''
    req.on('data', (c) => (body += c))
    req.on('end', () => {
      const message = answer(JSON.parse(body))
      res.setHeader('content-type', 'application/json')
      res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: 'scripted', choices: [{ index: 0, message, finish_reason: 'stop' }] }))
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  process.env.ARCHMAX_API_BASE_URL = `http://127.0.0.1:${server.address().port}/v1`
  process.env.ARCHMAX_API_KEY = 'test'
  process.env.ARCHMAX_MODEL = 'scripted'
  return { options: {}, close: () => new Promise((r) => server.close(r)) }
}

test('a JS model function receives exactly what the HTTP endpoint receives, call by call, sessions interleaved', async () => {
  const tags = ['a', 'b', 'c']
  const viaHttp = await run(tags, httpModel)
  const viaJs = await run(tags, jsModel)
  for (const t of tags) {
    assert.equal(viaJs[t].length, 4, `session ${t}: four model calls`)
    assert.deepEqual(viaJs[t], viaHttp[t], `session ${t}`)
  }
  // The state change rewrote the system message and the tools between calls 2 and 3.
  const [, second, third] = viaJs.a
  assert.notDeepEqual(second.messages[0], third.messages[0])
  assert.notDeepEqual(second.tools, third.tools)
  assert.ok(third.messages.length > second.messages.length)
})

test('a model function that mutates the request it got cannot corrupt the next request', async () => {
  const root = workspace({ 'workflows/two/workflow.yaml': SPEC })
  const lengths = []
  const answers = script('m')
  const agent = await createAgent({
    workflow: 'two',
    workspace: { rootDir: root },
    model: async (request) => {
      lengths.push(request.messages.length)
      request.messages.push({ role: 'user', content: 'injected' }) // the array is the caller's copy
      assert.throws(() => {
        request.messages[1].content = 'changed'
      }, TypeError)
      return answers.shift()
    },
  })
  const out = await agent.workflow.send('m', { message: 'session m' })
  agent.dispose()
  assert.equal(out.reply, 'done m')
  assert.deepEqual(lengths, [2, 4, 6, 9])
})

test('sessions in one state share one frozen copy of their system message and tools, fetched once; a block the JS side cannot get is asked again', async () => {
  const root = workspace({ 'workflows/two/workflow.yaml': SPEC })
  const fetched = []
  const original = NativeAgent.prototype.modelBlock
  let refuse = 1
  NativeAgent.prototype.modelBlock = function (id) {
    fetched.push(id)
    // The first fetch fails as a forgotten block does: the JS side refuses the delta.
    if (refuse-- > 0) return null
    return original.call(this, id)
  }
  try {
    const firsts = []
    const agent = await createAgent({
      workflow: 'two',
      workspace: { rootDir: root },
      model: async (request) => {
        firsts.push(request)
        return { role: 'assistant', content: `done ${sessionOf(request)}` }
      },
    })
    const tags = ['a', 'b', 'c', 'd']
    const outcomes = await Promise.all(tags.map((t) => agent.workflow.send(`s-${t}`, { message: `session ${t}` })))
    agent.dispose()
    assert.deepEqual(outcomes.map((o) => o.reply), tags.map((t) => `done ${t}`))
    assert.equal(firsts.length, 4, 'one call per session: the refused delta was sent again, not answered')
    const [one, ...others] = firsts
    assert.match(one.messages[0].content, /Write a note, then move on/)
    assert.ok(one.tools.some((t) => t.function?.name === 'write_file' || t.name === 'write_file'), JSON.stringify(one.tools).slice(0, 200))
    for (const r of others) {
      assert.equal(r.messages[0], one.messages[0], 'the same system message object')
      assert.equal(r.tools, one.tools, 'the same tools array')
    }
    assert.ok(Object.isFrozen(one.tools) && Object.isFrozen(one.messages[0]))
    // The refused fetch, then the system message and the tools once each for all four sessions.
    assert.equal(fetched.length, 3, `fetches: ${fetched}`)
  } finally {
    NativeAgent.prototype.modelBlock = original
  }
})

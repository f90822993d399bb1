// Streaming: the model's text as it arrives (agent-text-delta), from every model source,
// `agent.workflow.stream`, and the CLI's live printing and Ctrl-C.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { join } from 'node:path'

import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessageChunk } from '@langchain/core/messages'
import { ChatGenerationChunk } from '@langchain/core/outputs'

import { createAgent } from '@archmax-ai/harness'
import { ONE_STATE_SPEC, ROOT, call, sseEndpoint, workspace } from './helpers.mjs'

const root = () => workspace({ 'workflows/one/workflow.yaml': ONE_STATE_SPEC })

/** The agent-text-delta and agent-text events, as `[type, text, messageId, partial]`. */
const texts = (events) =>
  events.filter((e) => e.type === 'agent-text-delta' || e.type === 'agent-text').map((e) => [e.type, e.text, e.messageId, e.partial])

function assertStreamed(events, pieces, whole) {
  const t = texts(events)
  const id = t.at(-1)[2]
  assert.ok(id, 'the agent-text has a messageId')
  assert.deepEqual(t, [...pieces.map((p) => ['agent-text-delta', p, id, undefined]), ['agent-text', whole, id, undefined]])
  const deltas = events.filter((e) => e.type === 'agent-text-delta')
  assert.ok(deltas.every((e) => e.state === 'chat' && e.sessionId === 's1' && e.level === 'info'))
}

async function* slowly(pieces) {
  for (const p of pieces) {
    await new Promise((r) => setTimeout(r, 1))
    yield p
  }
}

test('a model function answering with an async iterable of text streams agent-text-delta before its agent-text', async () => {
  const seen = []
  const agent = await createAgent({ workspace: { rootDir: root() }, workflow: 'one', model: (_r, info) => (assert.deepEqual(info, { role: 'agent', stream: true, sessionId: 's1', state: 'chat' }), slowly(['Hel', 'lo ', 'there'])), onEvent: (e) => seen.push(e) })
  try {
    const outcome = await agent.workflow.send('s1', { message: 'hi' })
    assert.equal(outcome.kind, 'completed')
    assertStreamed(seen, ['Hel', 'lo ', 'there'], 'Hello there')
    const messages = await agent.sessions.messages('s1')
    assert.equal(messages.at(-1).content, 'Hello there')
  } finally {
    agent.dispose()
  }
})

test('a ReadableStream of chunks: tool calls split by index run, text pieces stream, empty deltas add nothing', async () => {
  const seen = []
  const answers = [
    () =>
      new ReadableStream({
        start(c) {
          c.enqueue({ content: '' })
          c.enqueue({ tool_calls: [{ index: 0, id: 'w1', type: 'function', function: { name: 'write_file', arguments: '{"file_path":"scratchpad/a.md",' } }] })
          c.enqueue({ tool_calls: [{ index: 0, function: { arguments: '"content":"alpha"}' } }] })
          c.enqueue({ choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }], usage: { prompt_tokens: 9, completion_tokens: 3 } })
          c.close()
        },
      }),
    () => slowly(['do', '', 'ne']),
  ]
  const agent = await createAgent({ workspace: { rootDir: root() }, workflow: 'one', model: () => answers.shift()(), onEvent: (e) => seen.push(e) })
  try {
    const outcome = await agent.workflow.send('s1', { message: 'write it' })
    assert.equal(outcome.kind, 'completed')
    const result = seen.find((e) => e.type === 'tool-result')
    assert.equal(result.tool, 'write_file')
    assert.equal(result.status, 'ok')
    assertStreamed(seen, ['do', 'ne'], 'done')
    const usage = seen.filter((e) => e.type === 'model-usage')
    assert.equal(usage[0].inputTokens, 9)
  } finally {
    agent.dispose()
  }
})

test('streaming: false shows no deltas and records the same answer', async () => {
  const seen = []
  const agent = await createAgent({ workspace: { rootDir: root() }, workflow: 'one', streaming: false, model: (_r, info) => (assert.deepEqual(info, { role: 'agent', sessionId: 's1', state: 'chat' }), slowly(['a', 'b'])), onEvent: (e) => seen.push(e) })
  try {
    assert.equal((await agent.workflow.send('s1', { message: 'hi' })).kind, 'completed')
    assert.deepEqual(texts(seen).map((t) => t[0]), ['agent-text'])
    assert.equal(texts(seen)[0][1], 'ab')
  } finally {
    agent.dispose()
  }
  await assert.rejects(createAgent({ workspace: { rootDir: root() }, workflow: 'one', streaming: 'yes', model: () => ({ content: 'x' }) }), /'streaming' must be a boolean, got string yes/)
})

test('a stream that throws after text was shown: a partial agent-text, then the turn fails turn-error', async () => {
  const seen = []
  async function* broken() {
    yield 'half an '
    yield 'answer'
    throw new Error('the socket closed')
  }
  const agent = await createAgent({ workspace: { rootDir: root() }, workflow: 'one', model: broken, onEvent: (e) => seen.push(e) })
  try {
    const outcome = await agent.workflow.send('s1', { message: 'hi' })
    assert.equal(outcome.kind, 'failed')
    assert.equal(outcome.exit?.code ?? outcome.code, 'turn-error')
    assert.deepEqual(texts(seen).slice(-1), [['agent-text', 'half an answer', undefined, true]])
    assert.ok(JSON.stringify(outcome).includes('the socket closed'), JSON.stringify(outcome))
    const messages = await agent.sessions.messages('s1')
    assert.ok(!messages.some((m) => m.role === 'assistant' && String(m.content).includes('half')), 'nothing half-recorded')
  } finally {
    agent.dispose()
  }
  await assert.rejects(
    (async () => {
      const a = await createAgent({ workspace: { rootDir: root() }, workflow: 'one', model: () => slowly([42]) })
      try {
        const o = await a.workflow.send('s2', { message: 'hi' })
        throw new Error(JSON.stringify(o))
      } finally {
        a.dispose()
      }
    })(),
    /piece 0 of the model's stream is number 42; expected a string or a chunk object/,
  )
})

class StreamingChatModel extends BaseChatModel {
  constructor(pieces) {
    super({})
    this.pieces = pieces
    this.streamed = 0
  }
  _llmType() {
    return 'streaming'
  }
  bindTools(tools) {
    return this.withConfig({ tools })
  }
  async _generate() {
    throw new Error('invoke is not used while streaming')
  }
  async *_streamResponseChunks() {
    this.streamed++
    for (const text of this.pieces) yield new ChatGenerationChunk({ text, message: new AIMessageChunk({ content: text }) })
  }
}

test('a LangChain model streams through .stream()', async () => {
  const seen = []
  const model = new StreamingChatModel(['La', 'ng', 'Chain'])
  const agent = await createAgent({ workspace: { rootDir: root() }, workflow: 'one', model, onEvent: (e) => seen.push(e) })
  try {
    assert.equal((await agent.workflow.send('s1', { message: 'hi' })).kind, 'completed')
    assert.equal(model.streamed, 1)
    assertStreamed(seen, ['La', 'ng', 'Chain'], 'LangChain')
  } finally {
    agent.dispose()
  }
})

test('the ARCHMAX_* endpoint is asked for a stream; ARCHMAX_STREAMING=0 and streaming: false turn it off', async () => {
  const endpoint = await sseEndpoint(() => ({ message: { role: 'assistant', content: 'Streamed from SSE' } }), { gapMs: 2 })
  const saved = { ...process.env }
  Object.assign(process.env, { ARCHMAX_API_BASE_URL: endpoint.url, ARCHMAX_API_KEY: 'k', ARCHMAX_MODEL: 'm' })
  try {
    for (const [env, option, streams] of [[undefined, undefined, true], ['0', undefined, false], ['1', false, false], ['0', true, true]]) {
      if (env === undefined) delete process.env.ARCHMAX_STREAMING
      else process.env.ARCHMAX_STREAMING = env
      const seen = []
      const agent = await createAgent({ workspace: { rootDir: root() }, workflow: 'one', ...(option === undefined ? {} : { streaming: option }), onEvent: (e) => seen.push(e) })
      try {
        assert.equal((await agent.workflow.send('s1', { message: 'hi' })).kind, 'completed')
      } finally {
        agent.dispose()
      }
      const body = endpoint.bodies.at(-1)
      const label = `ARCHMAX_STREAMING=${env}, streaming: ${option}`
      if (streams) {
        assert.equal(body.stream, true, label)
        assert.deepEqual(body.stream_options, { include_usage: true }, label)
        assertStreamed(seen, ['Streamed ', 'from ', 'SSE'], 'Streamed from SSE')
        assert.equal(seen.find((e) => e.type === 'model-usage')?.inputTokens, 10, label)
      } else {
        assert.equal(body.stream, undefined, label)
        assert.deepEqual(texts(seen).map((t) => t[0]), ['agent-text'], label)
      }
    }
  } finally {
    for (const k of ['ARCHMAX_API_BASE_URL', 'ARCHMAX_API_KEY', 'ARCHMAX_MODEL', 'ARCHMAX_STREAMING']) {
      if (saved[k] === undefined) delete process.env[k]
      else process.env[k] = saved[k]
    }
    await endpoint.close()
  }
})

test('agent.workflow.stream: for await over the typed events, the Outcome last, with or without onEvent', async () => {
  for (const onEvent of [undefined, () => {}]) {
    const answers = [{ role: 'assistant', content: null, tool_calls: [call('write_file', { file_path: 'scratchpad/n.md', content: 'x' })] }, () => slowly(['all ', 'done'])]
    const agent = await createAgent({ workspace: { rootDir: root() }, workflow: 'one', model: () => (typeof answers[0] === 'function' ? answers.shift()() : answers.shift()), onEvent })
    try {
      const items = []
      for await (const item of agent.workflow.stream('s1', { message: 'go' })) items.push(item)
      const outcome = items.at(-1)
      assert.equal(outcome.kind, 'completed')
      assert.equal(outcome.type, undefined)
      const events = items.slice(0, -1)
      assert.ok(events.every((e) => typeof e.type === 'string' && e.sessionId === 's1'))
      const types = events.map((e) => e.type)
      assert.ok(types.indexOf('tool-called') < types.indexOf('tool-result'))
      assert.ok(types.lastIndexOf('agent-text-delta') < types.indexOf('agent-text'))
      assertStreamed(events, ['all ', 'done'], 'all done')
      const seqs = events.map((e) => e.seq)
      assert.deepEqual(seqs, [...seqs].sort((a, b) => a - b))
      // A second session's stream sees only its own events.
      answers.push({ role: 'assistant', content: 'other' })
      const other = []
      for await (const item of agent.workflow.stream('s2', { message: 'go' })) other.push(item)
      assert.ok(other.slice(0, -1).every((e) => e.sessionId === 's2'))
      assert.equal(other.at(-1).kind, 'completed')
    } finally {
      agent.dispose()
    }
  }
})

// ---------------------------------------------------------------- the CLI

const BIN = join(ROOT, 'bin', 'archmax.js')

/** Spawns the CLI; `onErr(text, child)` sees stderr as it grows. */
function archmax(args, env, onErr = () => {}) {
  const child = spawn(process.execPath, [BIN, ...args], { cwd: ROOT, env: { ...process.env, NO_COLOR: '1', ARCHMAX_CLI_NO_BANNER: '1', ...env } })
  let out = ''
  let err = ''
  child.stdout.on('data', (d) => (out += d))
  child.stderr.on('data', (d) => {
    err += d
    onErr(err, child)
  })
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, out, err })))
}

test('the CLI prints streamed text as it arrives, in the state-flow layout', async () => {
  const endpoint = await sseEndpoint(() => ({ message: { role: 'assistant', content: 'line one\nline two' }, pieces: ['line', ' one\nli', 'ne two'] }), { gapMs: 30 })
  try {
    const dir = root()
    const stamps = []
    const r = await archmax(['run', 'one', 'hi', '--session', 's1', '--root', dir], { ARCHMAX_API_BASE_URL: endpoint.url, ARCHMAX_API_KEY: 'k', ARCHMAX_MODEL: 'm' }, (err) => stamps.push(err))
    assert.equal(r.code, 0, r.err)
    assert.ok(r.err.includes('● chat\n    │ line one\n    │ line two\n✔ chat'), r.err)
    assert.equal(r.err.split('line one').length, 2, 'the text is not printed twice')
    assert.ok(stamps.some((s) => s.endsWith('    │ line') && !s.includes('line two')), 'the first piece showed before the rest came')
    assert.equal(r.out, 'line one\nline two\n')
    assert.equal(endpoint.bodies[0].stream, true)
  } finally {
    await endpoint.close()
  }
})

for (const signal of ['SIGINT', 'SIGTERM']) {
  test(`${signal} mid-stream cancels the turn (turn-cancelled, a hint, resumable); a second one exits at once`, async () => {
    const endpoint = await sseEndpoint(
      (body) => (body.messages.at(-1).content === 'again' ? { role: 'assistant', content: 'back' } : { message: { role: 'assistant', content: 'slow words that never end' } }),
      { gapMs: 400 },
    )
    try {
      const dir = root()
      const env = { ARCHMAX_API_BASE_URL: endpoint.url, ARCHMAX_API_KEY: 'k', ARCHMAX_MODEL: 'm' }
      let sent = false
      const r = await archmax(['run', 'one', 'hi', '--session', 's1', '--root', dir], env, (err, child) => {
        if (!sent && err.includes('    │ slow')) {
          sent = true
          child.kill(signal)
        }
      })
      assert.ok(sent, r.err)
      assert.equal(r.code, 1, r.err)
      assert.ok(r.err.includes('cancelling the turn: the last completed step is kept and the session can be resumed'), r.err)
      assert.ok(r.err.includes("with code 'turn-cancelled'"), r.err)
      assert.ok(r.err.includes('    │ slow '), r.err)
      // The session is resumable: the next message opens a fresh turn.
      const again = await archmax(['run', 'one', 'again', '--session', 's1', '--root', dir], env)
      assert.equal(again.code, 0, again.err)
      assert.equal(again.out, 'back\n')
      // Twice: out at once, with 128 + the signal number, even while a hook holds the turn.
      const slow = workspace({
        'workflows/one/workflow.yaml': `${ONE_STATE_SPEC}    before:\n      script: hooks/slow.js\n`,
        'workflows/one/hooks/slow.js': 'export default async () => { const end = Date.now() + 4000; while (Date.now() < end) {} return { verdict: "ok", reason: "slow" } }\n',
      })
      let kills = 0
      const started = Date.now()
      const twice = await archmax(['run', 'one', 'hi', '--session', 's2', '--root', slow], env, (err, child) => {
        if (kills === 0 && err.includes('› before')) {
          kills = 1
          child.kill(signal)
        } else if (kills === 1 && err.includes('cancelling the turn')) {
          kills = 2
          child.kill(signal)
        }
      })
      assert.equal(kills, 2, twice.err)
      assert.equal(twice.code, signal === 'SIGINT' ? 130 : 143, twice.err)
      assert.ok(Date.now() - started < 3500, 'it did not wait for the hook')
    } finally {
      await endpoint.close()
    }
  })
}

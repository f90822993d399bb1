// The bounds of a call to the ARCHMAX_* endpoint, set through createAgent options: a hanging
// endpoint fails after requestTimeoutMs × (1 + maxRetries); an enormous body fails at once.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { createServer } from 'node:http'

import { createAgent } from '@archmax-ai/harness'
import { workspace } from './helpers.mjs'

const SPEC = `title: One state
instructions: A test workflow.
states:
  only:
    triggers: { manual: }
    instructions: Answer.
`

/** A server on 127.0.0.1 that `respond`s to each request; counts them. */
async function endpoint(respond) {
  const seen = { requests: 0 }
  const sockets = new Set()
  const server = createServer((req, res) => {
    seen.requests++
    req.resume()
    req.on('end', () => respond(res))
  })
  server.on('connection', (s) => {
    sockets.add(s)
    s.on('close', () => sockets.delete(s))
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  process.env.ARCHMAX_API_BASE_URL = `http://127.0.0.1:${server.address().port}/v1`
  process.env.ARCHMAX_API_KEY = 'test'
  process.env.ARCHMAX_MODEL = 'scripted'
  const close = () => {
    for (const s of sockets) s.destroy()
    return new Promise((r) => server.close(r))
  }
  return { seen, close }
}

const settle = (p) => p.then((o) => JSON.stringify(o), (e) => `${e?.name}: ${e?.message}`)

test('a hanging endpoint fails after requestTimeoutMs and maxRetries', async () => {
  const { seen, close } = await endpoint(() => {})
  try {
    const root = workspace({ 'workflows/one/workflow.yaml': SPEC })
    const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root }, requestTimeoutMs: 200, maxRetries: 1 })
    const started = Date.now()
    const text = await settle(agent.workflow.send('h', { message: 'hello' }))
    agent.dispose()
    assert.ok(Date.now() - started < 10000, `${Date.now() - started} ms`)
    assert.match(text, /gave up after 2 attempts/)
    assert.match(text, /timed out after 200ms/)
    assert.equal(seen.requests, 2)
  } finally {
    await close()
  }
})

test('a body over maxResponseBytes fails the call without a retry', async () => {
  const { seen, close } = await endpoint((res) => {
    res.setHeader('content-type', 'application/json')
    res.end(JSON.stringify({ choices: [{ message: { role: 'assistant', content: 'x'.repeat(1 << 20) } }] }))
  })
  try {
    const root = workspace({ 'workflows/one/workflow.yaml': SPEC })
    const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root }, maxResponseBytes: 4096 })
    const text = await settle(agent.workflow.send('b', { message: 'hello' }))
    agent.dispose()
    assert.match(text, /is larger than the 4096-byte limit \(ARCHMAX_MAX_RESPONSE_BYTES\); it was not read/)
    assert.equal(seen.requests, 1)
  } finally {
    await close()
  }
})

test('the request options are checked', async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': SPEC })
  for (const [name, value, range] of [
    ['requestTimeoutMs', 0, '1 to 3600000'],
    ['maxRetries', 1.5, '0 to 10'],
    ['maxRetries', 11, '0 to 10'],
    ['maxResponseBytes', '4096', '1024 to 1073741824'],
    ['maxConcurrentCalls', 0, '1 to 1024'],
  ]) {
    await assert.rejects(
      createAgent({ workflow: 'one', workspace: { rootDir: root }, [name]: value }),
      (e) => e instanceof TypeError && e.message.startsWith(`'${name}' must be a whole number from ${range}, got `),
      name,
    )
  }
})

test('maxConcurrentCalls: sessions past the bound queue for the endpoint, and each wait is an event', async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': SPEC })
  let now = 0
  let most = 0
  const { seen, close } = await endpoint((res) => {
    most = Math.max(most, ++now)
    setTimeout(() => {
      now--
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end(JSON.stringify({ choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'Hi.' } }] }))
    }, 20)
  })
  const queued = []
  try {
    // The port is new to this process, so this agent's bound is the endpoint's.
    const agent = await createAgent({
      workflow: 'one',
      workspace: { rootDir: root },
      maxConcurrentCalls: 2,
      streaming: false,
      onEvent: (e) => e.type === 'model-queued' && queued.push(e),
    })
    try {
      const outcomes = await Promise.all(Array.from({ length: 10 }, (_, i) => agent.workflow.send(`q${i}`, { message: 'Hi' })))
      assert.deepEqual(outcomes.map((o) => o.kind), Array(10).fill('completed'))
      assert.equal(seen.requests, 10)
      assert.equal(most, 2, 'never more than two calls at once')
      assert.ok(queued.length > 0, 'the waits are events')
      for (const e of queued) {
        assert.equal(e.limit, 2)
        assert.equal(e.state, 'only')
        assert.ok(Number.isInteger(e.waitedMs) && e.waitedMs >= 1, JSON.stringify(e))
      }
    } finally {
      agent.dispose()
    }
  } finally {
    await close()
  }
})

test('fallbackModels: a call the first endpoint cannot answer goes to the next, as an event', async () => {
  const root = workspace({ 'workflows/one/workflow.yaml': SPEC })
  const { close } = await endpoint((res) => {
    res.writeHead(200, { 'content-type': 'application/json' })
    res.end(JSON.stringify({ model: 'backup', choices: [{ index: 0, finish_reason: 'stop', message: { role: 'assistant', content: 'From the backup.' } }] }))
  })
  const backupUrl = process.env.ARCHMAX_API_BASE_URL
  // The first endpoint: a port nothing listens on.
  const probe = createServer()
  await new Promise((r) => probe.listen(0, '127.0.0.1', r))
  const closed = probe.address().port
  await new Promise((r) => probe.close(r))
  process.env.ARCHMAX_API_BASE_URL = `http://127.0.0.1:${closed}/v1`
  const events = []
  try {
    await assert.rejects(
      createAgent({ workflow: 'one', workspace: { rootDir: root }, fallbackModels: [{ baseUrl: backupUrl }] }),
      (e) => e instanceof TypeError && /'fallbackModels\[0\]' must be a model id or/.test(e.message),
    )
    const agent = await createAgent({
      workflow: 'one',
      workspace: { rootDir: root },
      maxRetries: 0,
      streaming: false,
      fallbackModels: [{ model: 'backup', baseUrl: backupUrl }],
      onEvent: (e) => (e.type === 'model-fallback' || e.type === 'agent-text') && events.push(e),
    })
    try {
      const out = await agent.workflow.send('f1', { message: 'Hi' })
      assert.equal(out.kind, 'completed')
      assert.equal(out.reply, 'From the backup.')
      const fell = events.find((e) => e.type === 'model-fallback')
      assert.equal(fell.from, 'scripted')
      assert.equal(fell.to, `backup@${backupUrl}`)
      assert.equal(fell.level, 'warn')
      assert.match(fell.reason, /127\.0\.0\.1/)
    } finally {
      agent.dispose()
    }
  } finally {
    await close()
  }
})

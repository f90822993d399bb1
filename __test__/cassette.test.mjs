// Cassettes through createAgent: a run recorded with a JS model function (or the ARCHMAX_*
// endpoint) replays with no model at all, the same outcomes and events; a replay whose
// workspace changed fails naming the request and the field.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { createAgent } from '@archmax-ai/harness'
import { FakeListChatModel } from '@langchain/core/utils/testing'

import { copyExample, EXAMPLE, ONE_STATE_SPEC, refundAnswers, scripted, sseEndpoint, workspace } from './helpers.mjs'

function exampleCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'archmax-cassette-'))
  copyExample(dir)
  return dir
}

/** An event or outcome as compared across runs: no times, no time-stamped ids. */
function untimed(value) {
  if (Array.isArray(value)) return value.map(untimed)
  if (value && typeof value === 'object') {
    const out = {}
    for (const [k, v] of Object.entries(value)) {
      if (k === 'ts' || k === 'durationMs' || k.endsWith('At')) continue
      out[k] = untimed(v)
    }
    return out
  }
  // The runtime's message and note ids carry the clock.
  if (typeof value === 'string' && /^(msg|note)_\d+_\d+$/.test(value)) return value.replace(/_\d+$/, '')
  return value
}

/** The example's refund flow: parks at `refund-review`, then the approval resumes it. */
async function refundFlow(params, edit = () => {}) {
  const rootDir = exampleCopy()
  edit(rootDir)
  const events = []
  const agent = await createAgent({ ...params, workspace: { rootDir }, onEvent: (e) => events.push(e) })
  const parked = await agent.workflow.send('refund-1', { message: 'I want a refund for KK-2043.' })
  const outcomes = [parked]
  if (parked.status === 'awaiting_decision') outcomes.push(await agent.workflow.decide('refund-1', { target: 'refund-approved' }))
  agent.dispose()
  return { outcomes, events, rootDir }
}

/** Runs `fn` with every ARCHMAX_* variable unset. */
async function withoutEndpoint(fn) {
  const saved = Object.fromEntries(Object.entries(process.env).filter(([k]) => k.startsWith('ARCHMAX_')))
  for (const k of Object.keys(saved)) delete process.env[k]
  try {
    return await fn()
  } finally {
    Object.assign(process.env, saved)
  }
}

const cassetteFile = () => join(mkdtempSync(join(tmpdir(), 'archmax-tape-')), 'refund.cassette.json')

test('a run recorded with a JS model function replays with no model: the same outcomes and events', async () => {
  const path = cassetteFile()
  const { model, requests } = scripted(refundAnswers())
  const recorded = await refundFlow({ model, cassette: { path, mode: 'record' } })
  assert.equal(requests.length, 5)
  assert.deepEqual(recorded.outcomes.map((o) => o.state), ['refund-review', 'refund-approved'])
  const file = JSON.parse(readFileSync(path, 'utf8'))
  assert.equal(file.format, 'archmax-cassette')
  assert.equal(file.version, 1)
  assert.equal(file.exchanges.length, 5)
  assert.match(file.exchanges[0].digest, /^sha256:[0-9a-f]{64}$/)

  const replayed = await withoutEndpoint(() => refundFlow({ cassette: { path, mode: 'replay' } }))
  assert.deepEqual(untimed(replayed.outcomes), untimed(recorded.outcomes))
  assert.deepEqual(untimed(replayed.events), untimed(recorded.events))
  assert.equal(readFileSync(join(replayed.rootDir, 'sessions/refund-1/outbox/refund-KK-2043.md'), 'utf8'), 'KK-2043: 10.00 EUR, within 5 working days.')
})

test('a run recorded through the ARCHMAX_* endpoint replays without it, streamed text in the same pieces', async () => {
  const path = cassetteFile()
  const answers = refundAnswers()
  const server = await sseEndpoint(() => answers.shift())
  const saved = { ...process.env }
  Object.assign(process.env, { ARCHMAX_API_BASE_URL: server.url, ARCHMAX_API_KEY: 'k', ARCHMAX_MODEL: 'scripted-model' })
  let recorded
  try {
    recorded = await refundFlow({ cassette: { path, mode: 'record' } })
  } finally {
    for (const k of ['ARCHMAX_API_BASE_URL', 'ARCHMAX_API_KEY', 'ARCHMAX_MODEL']) {
      if (saved[k] === undefined) delete process.env[k]
      else process.env[k] = saved[k]
    }
    await server.close()
  }
  assert.equal(server.bodies.length, 5)
  assert.equal(JSON.parse(readFileSync(path, 'utf8')).defaultModel, 'scripted-model')
  const replayed = await withoutEndpoint(() => refundFlow({ cassette: { path, mode: 'replay' } }))
  assert.deepEqual(untimed(replayed.outcomes), untimed(recorded.outcomes))
  assert.deepEqual(untimed(replayed.events), untimed(recorded.events))
  const deltas = (events) => events.filter((e) => e.type === 'agent-text-delta').map((e) => e.delta ?? e.text)
  assert.ok(deltas(recorded.events).length > 2)
  assert.deepEqual(deltas(replayed.events), deltas(recorded.events))
})

test('a run recorded with a LangChain chat model replays with none', async () => {
  const path = cassetteFile()
  const run = async (params) => {
    const rootDir = workspace({ 'workflows/one/workflow.yaml': ONE_STATE_SPEC })
    const agent = await createAgent({ workflow: 'one', workspace: { rootDir }, ...params })
    const outcomes = [await agent.workflow.send('c1', { message: 'Hello?' }), await agent.workflow.send('c1', { message: 'And now?' })]
    agent.dispose()
    return untimed(outcomes)
  }
  // (Each call binds the tools anew, which starts the fake's list over: both answers are its first.)
  const model = new FakeListChatModel({ responses: ['Hello from LangChain.'] })
  const recorded = await run({ model, cassette: { path, mode: 'record' } })
  assert.deepEqual(recorded.map((o) => o.reply), ['Hello from LangChain.', 'Hello from LangChain.'])
  const replayed = await withoutEndpoint(() => run({ cassette: { path, mode: 'replay' } }))
  assert.deepEqual(replayed, recorded)
  // The second request continues the first: it is stored as what was added.
  const second = JSON.parse(readFileSync(path, 'utf8')).exchanges[1].request
  assert.equal(second.base, 1)
  assert.equal(second.answered, true)
  assert.deepEqual(second.messages.map((m) => m.role), ['user'])
})

test('a replay of an edited workspace fails the turn naming the request and the field', async () => {
  const path = cassetteFile()
  const { model } = scripted(refundAnswers())
  await refundFlow({ model, cassette: { path, mode: 'record' } })
  const replayed = await withoutEndpoint(() =>
    refundFlow({ cassette: { path, mode: 'replay' } }, (root) => {
      const spec = join(root, 'workflows/order-lookup/workflow.yaml')
      writeFileSync(spec, readFileSync(spec, 'utf8').replace('You handle one customer conversation', 'You tersely handle one customer conversation'))
    }),
  )
  const [outcome] = replayed.outcomes
  assert.equal(outcome.status, 'failed')
  const reason = outcome.exit?.reason ?? ''
  assert.match(reason, /is not in the cassette .*refund\.cassette\.json: request 1 \(state 'classify', agent, session 'refund-1'\) was not recorded; the nearest recorded request is exchange 1 \(state 'classify', agent, session 'refund-1'\): messages\[0\]\.content differs: recorded ".*You handle one customer conversation.*" \(at character \d+\), asked ".*You tersely handle/)
})

test('a bad cassette option is a TypeError; a missing file refuses assembly', async () => {
  const rootDir = exampleCopy()
  await assert.rejects(createAgent({ workspace: { rootDir }, cassette: { path: 'x.json', mode: 'rewind' } }), (e) => e instanceof TypeError && /^'cassette.mode' must be 'record' or 'replay', got /.test(e.message))
  await assert.rejects(createAgent({ workspace: { rootDir }, cassette: 'x.json' }), TypeError)
  const missing = join(rootDir, 'none.cassette.json')
  await assert.rejects(createAgent({ workspace: { rootDir }, cassette: { path: missing, mode: 'replay' } }), (e) => e.message.startsWith(`cassette ${missing}: cannot be read`))
  assert.equal(existsSync(missing), false)
})

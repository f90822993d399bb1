// OpenTelemetry through createAgent: the example's refund flow as a span tree at an
// OTLP/HTTP (JSON) receiver on 127.0.0.1, under the host's traceparent; the decision's turn
// linked to the park's; the OTEL_* environment (here a .env) for the ARCHMAX_* endpoint;
// nothing sent when telemetry is off.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { createAgent } from '@archmax-ai/harness'
import { CALLER_SPEC, CHILD_SPEC, copyExample, EXAMPLE, call, otlpGrpcReceiver, otlpReceiver, refundAnswers, say, scripted, sseEndpoint, tools, workspace } from './helpers.mjs'

function exampleCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'archmax-otel-'))
  copyExample(dir)
  return dir
}

const HOST_TRACE = '4bf92f3577b34da6a3ce929d0e0e4736'
const HOST_SPAN = '00f067aa0ba902b7'
const HOST_PARENT = `00-${HOST_TRACE}-${HOST_SPAN}-01`

const byName = (spans, name) => spans.filter((s) => s.name === name)
const one = (spans, name) => {
  const found = byName(spans, name)
  assert.equal(found.length, 1, `one '${name}' in ${JSON.stringify(spans.map((s) => s.name))}`)
  return found[0]
}
const childNames = (spans, parent) =>
  spans
    .filter((s) => s.parentSpanId === parent.spanId && s.traceId === parent.traceId)
    .map((s) => s.name)
    .sort()
const toolSpan = (spans, callId) => spans.find((s) => s.attributes['gen_ai.tool.call.id'] === callId)

/** Checks the parked turn's tree and returns its turn span. */
function assertParkedTree(spans, { model, service }) {
  const turn = one(spans, 'invoke_agent order-lookup')
  assert.equal(turn.service, service)
  assert.equal(turn.attributes['archmax.session.id'], 'otel-1')
  assert.equal(turn.attributes['archmax.disposition'], 'turn')
  assert.equal(turn.attributes['archmax.outcome'], 'parked')
  assert.deepEqual(childNames(spans, turn), ['park refund-review', 'state classify', 'state refund-request', 'state refund-review'])
  const classify = one(spans, 'state classify')
  assert.deepEqual(childNames(spans, classify), [`chat ${model}`, 'execute_tool archmax_advance'])
  const request = one(spans, 'state refund-request')
  assert.deepEqual(childNames(spans, request), [`chat ${model}`, 'execute_tool archmax_advance', 'execute_tool archmax_set_variables', 'execute_tool write_file'])
  const chat = spans.find((s) => s.parentSpanId === classify.spanId && s.name === `chat ${model}`)
  assert.equal(chat.attributes['gen_ai.operation.name'], 'chat')
  assert.equal(chat.attributes['gen_ai.request.model'], model)
  const write = toolSpan(spans, 'c3')
  assert.equal(write.attributes['gen_ai.tool.name'], 'write_file')
  assert.equal(write.attributes['archmax.governance.decision'], 'allowed')
  assert.equal(write.attributes['archmax.tool.status'], 'ok')
  const hook = one(spans, 'hook after hooks/check-refund.js')
  assert.equal(hook.parentSpanId, toolSpan(spans, 'c4').spanId)
  assert.equal(hook.attributes['archmax.hook.verdict'], 'ok')
  assert.ok(spans.every((s) => !('gen_ai.input.messages' in s.attributes)), 'no message contents unless asked')
  return turn
}

for (const withEvents of [false, true]) {
  test(`a JS model's refund flow is a span tree under the host's traceparent${withEvents ? ', with onEvent' : ''}`, async () => {
    const receiver = await otlpReceiver()
    const events = []
    try {
      const { model } = scripted(refundAnswers())
      const agent = await createAgent({
        workspace: { rootDir: exampleCopy() },
        workflow: 'order-lookup',
        model,
        onEvent: withEvents ? (e) => events.push(e.type) : undefined,
        telemetry: { endpoint: `${receiver.base}/v1/traces`, protocol: 'http/json', serviceName: 'js-desk', traceparent: () => HOST_PARENT },
      })
      const parked = await agent.workflow.send('otel-1', { message: 'I want a refund for KK-2043' })
      assert.equal(parked.kind, 'parked')
      // The turn's spans are sent before its promise settles.
      const first = receiver.spans()
      assert.ok(receiver.requests.every((r) => r.path === '/v1/traces' && r.contentType === 'application/json'))
      const turn = assertParkedTree(first, { model: 'default', service: 'js-desk' })
      assert.equal(turn.traceId, HOST_TRACE)
      assert.equal(turn.parentSpanId, HOST_SPAN)

      const own = '00-11111111111111111111111111111111-2222222222222222-01'
      const done = await agent.workflow.decide('otel-1', { target: 'refund-approved', traceparent: own })
      assert.equal(done.kind, 'completed')
      const second = receiver.spans().slice(first.length)
      const resumed = one(second, 'invoke_agent order-lookup')
      assert.equal(resumed.attributes['archmax.disposition'], 'decide')
      assert.equal(resumed.traceId, '11111111111111111111111111111111', "the call's own traceparent wins")
      assert.deepEqual(resumed.links, [{ traceId: turn.traceId, spanId: turn.spanId }])
      assert.ok(toolSpan(second, 'c5'))
      if (withEvents) assert.ok(events.includes('tool-called'))
      agent.dispose()
    } finally {
      await receiver.close()
    }
  })
}

test('over OTLP/gRPC the refund flow is the same span tree, its headers sent as metadata', async () => {
  const receiver = await otlpGrpcReceiver()
  try {
    const { model } = scripted(refundAnswers())
    const agent = await createAgent({
      workspace: { rootDir: exampleCopy() },
      workflow: 'order-lookup',
      model,
      telemetry: { endpoint: receiver.base, protocol: 'grpc', serviceName: 'grpc-desk', headers: { 'x-team': 'refunds' } },
    })
    const parked = await agent.workflow.send('otel-1', { message: 'I want a refund for KK-2043' })
    assert.equal(parked.kind, 'parked')
    const first = receiver.spans()
    assert.ok(first.length > 0, 'the spans arrived before the turn settled')
    for (const r of receiver.requests) {
      assert.equal(r.path, '/opentelemetry.proto.collector.trace.v1.TraceService/Export')
      assert.match(r.contentType, /^application\/grpc/)
      assert.equal(r.headers['x-team'], 'refunds')
    }
    const turn = assertParkedTree(first, { model: 'default', service: 'grpc-desk' })
    assert.equal(turn.parentSpanId, '')
    const done = await agent.workflow.decide('otel-1', { target: 'refund-approved' })
    assert.equal(done.kind, 'completed')
    const resumed = one(receiver.spans().slice(first.length), 'invoke_agent order-lookup')
    assert.deepEqual(resumed.links, [{ traceId: turn.traceId, spanId: turn.spanId }])
    agent.dispose()
  } finally {
    await receiver.close()
  }
})

test('the ARCHMAX_* endpoint with the OTEL_* variables of a .env: streamed chat spans carry usage and time to first token', async () => {
  const receiver = await otlpReceiver()
  const answers = refundAnswers()
  const endpoint = await sseEndpoint(() => answers.shift())
  try {
    const root = exampleCopy()
    writeFileSync(
      join(root, '.env'),
      [
        `ARCHMAX_API_BASE_URL=${endpoint.url}`,
        'ARCHMAX_API_KEY=test-key',
        'ARCHMAX_MODEL=scripted',
        `OTEL_EXPORTER_OTLP_ENDPOINT=${receiver.base}`,
        'OTEL_EXPORTER_OTLP_PROTOCOL=http/json',
        'OTEL_EXPORTER_OTLP_HEADERS=x-team=refunds',
        'OTEL_SERVICE_NAME=env-desk',
        'OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true',
      ].join('\n'),
    )
    const agent = await createAgent({ workspace: { rootDir: root }, workflow: 'order-lookup' })
    const parked = await agent.workflow.send('otel-1', { message: 'I want a refund for KK-2043' })
    assert.equal(parked.kind, 'parked')
    const spans = receiver.spans()
    assert.equal(receiver.requests[0].headers['x-team'], 'refunds')
    const turn = one(spans, 'invoke_agent order-lookup')
    assert.equal(turn.service, 'env-desk')
    assert.equal(turn.parentSpanId, '')
    const chats = byName(spans, 'chat scripted')
    assert.equal(chats.length, 3)
    for (const c of chats) {
      assert.equal(c.attributes['gen_ai.response.model'], 'scripted')
      assert.equal(c.attributes['gen_ai.usage.input_tokens'], 10)
      assert.equal(c.attributes['gen_ai.usage.output_tokens'], 5)
    }
    const texted = chats.find((c) => c.attributes['gen_ai.response.finish_reasons'] === '["stop"]')
    assert.equal(typeof texted.attributes['gen_ai.server.time_to_first_token'], 'number')
    assert.match(chats[0].attributes['gen_ai.input.messages'], /I want a refund for KK-2043/)
    agent.dispose()
  } finally {
    await endpoint.close()
    await receiver.close()
  }
})

test('nothing is sent with telemetry: false, and bad settings are named', async () => {
  const receiver = await otlpReceiver()
  try {
    const root = exampleCopy()
    writeFileSync(join(root, '.env'), `OTEL_EXPORTER_OTLP_ENDPOINT=${receiver.base}\nOTEL_EXPORTER_OTLP_PROTOCOL=http/json\n`)
    const { model } = scripted(refundAnswers())
    const agent = await createAgent({ workspace: { rootDir: root }, workflow: 'order-lookup', model, telemetry: false })
    assert.equal((await agent.workflow.send('otel-1', { message: 'I want a refund for KK-2043' })).kind, 'parked')
    assert.equal(receiver.requests.length, 0)
    agent.dispose()

    const plain = await createAgent({ workspace: { rootDir: exampleCopy() }, workflow: 'order-lookup', model: scripted(refundAnswers()).model })
    assert.equal((await plain.workflow.send('otel-1', { message: 'I want a refund for KK-2043' })).kind, 'parked')
    assert.equal(receiver.requests.length, 0)
    await assert.rejects(plain.workflow.send('otel-2', { message: 'x', traceparent: 42 }), /'traceparent' must be a string, got number 42/)
    plain.dispose()

    await assert.rejects(
      createAgent({ workspace: { rootDir: exampleCopy() }, workflow: 'order-lookup', model, telemetry: { endpoint: receiver.base, protocol: 'thrift' } }),
      /telemetry.protocol is 'thrift': expected one of http\/protobuf, http\/json, grpc/,
    )
    await assert.rejects(
      createAgent({ workspace: { rootDir: exampleCopy() }, workflow: 'order-lookup', model, telemetry: { traceparent: 'x' } }),
      /'telemetry.traceparent' must be a function/,
    )
    const traced = await createAgent({
      workspace: { rootDir: exampleCopy() },
      workflow: 'order-lookup',
      model,
      telemetry: { endpoint: `${receiver.base}/v1/traces`, protocol: 'http/json' },
    })
    await assert.rejects(traced.workflow.send('otel-3', { message: 'x', traceparent: 'not-a-traceparent' }), /traceparent 'not-a-traceparent' is not a W3C trace context/)
    traced.dispose()
  } finally {
    await receiver.close()
  }
})

test("a sub-workflow's turn is a child of the calling tool call's span; a refused call says its rule", async () => {
  const receiver = await otlpReceiver()
  try {
    const { model } = scripted([
      tools(call('archmax_workflow_enrich', { order_id: 'KK-1' }, 'c1')),
      tools(
        call('archmax_set_variables', { variables: { risk: 'low' } }, 'k1'),
        call('write_file', { file_path: 'scratchpad/secret/e.md', content: 'leaked' }, 'k2'),
      ),
      say('Enriched KK-1.'),
      say('Done.'),
    ])
    const agent = await createAgent({
      workspace: { rootDir: workspace({ 'workflows/orders/workflow.yaml': CALLER_SPEC, 'workflows/enrich/workflow.yaml': CHILD_SPEC }) },
      workflow: 'orders',
      model,
      telemetry: { endpoint: `${receiver.base}/v1/traces`, protocol: 'http/json' },
    })
    assert.equal((await agent.workflow.send('s1', { message: 'Enrich KK-1.' })).kind, 'completed')
    const spans = receiver.spans()
    const root = one(spans, 'invoke_agent orders')
    const delegation = toolSpan(spans, 'c1')
    assert.equal(delegation.name, 'execute_tool archmax_workflow_enrich')
    assert.equal(delegation.parentSpanId, one(spans, 'state work').spanId)
    const child = one(spans, 'invoke_agent enrich')
    assert.equal(child.parentSpanId, delegation.spanId)
    assert.equal(child.traceId, root.traceId)
    assert.notEqual(child.attributes['archmax.session.id'], 's1')
    const refused = toolSpan(spans, 'k2')
    assert.equal(refused.attributes['archmax.tool.status'], 'blocked')
    assert.equal(refused.attributes['archmax.governance.decision'], 'blocked')
    assert.equal(typeof refused.attributes['archmax.governance.rule'], 'string')
    assert.equal(refused.parentSpanId, one(spans, 'state enrich').spanId)
    agent.dispose()
  } finally {
    await receiver.close()
  }
})

// `archmax mcp` (stdio) and `archmax serve`'s /mcp (streamable HTTP), driven by the official
// TypeScript SDK client as any MCP client would: the example's workflows as tools, a turn that
// parks for a person, the decision, and the kernel still deciding inside the session.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { ROOT, call, copyExample, refundAnswers, say, serveArchmax, sseEndpoint, tools } from './helpers.mjs'

const LEAD = 'support-lead@kettleandkite.example'

/** A copy of the example and a scripted endpoint answering `answers` in order. */
async function setup(answers) {
  const root = copyExample(mkdtempSync(join(tmpdir(), 'archmax-mcp-server-')))
  const endpoint = await sseEndpoint(() => {
    const next = answers.shift()
    if (next === undefined) throw new Error('the script ran out')
    return next
  })
  return { root, endpoint }
}

/** An SDK client over `archmax mcp --root <root>` (the npm bin, so the built addon); `onElicit`
 * answers the server's elicitation requests (the client then declares the capability). */
async function stdioClient(root, endpointUrl, onElicit = null, store = null) {
  const env = { ...process.env, ARCHMAX_CLI_NO_BANNER: '1', NO_COLOR: '1', ARCHMAX_API_BASE_URL: endpointUrl, ARCHMAX_MODEL: 'scripted' }
  delete env.ARCHMAX_SESSION_STORE
  const args = [join(ROOT, 'bin', 'archmax.js'), 'mcp', '--root', root, ...(store ? ['--store', store] : [])]
  const transport = new StdioClientTransport({ command: process.execPath, args, env, cwd: root, stderr: 'pipe' })
  const client = new Client({ name: 'test-client', version: '1.0.0' }, onElicit ? { capabilities: { elicitation: {} } } : undefined)
  if (onElicit) client.setRequestHandler(ElicitRequestSchema, onElicit)
  await client.connect(transport)
  return client
}

test('archmax mcp over stdio: the workflows are tools; a turn parks for a person, the decision finishes it, and the caller cannot skip the review', async () => {
  const { root, endpoint } = await setup(refundAnswers())
  const client = await stdioClient(root, endpoint.url)
  try {
    const { tools: listed } = await client.listTools()
    const names = listed.map((t) => t.name)
    for (const n of ['order-lookup', 'order-lookup__email-received', 'enrich-order', 'decide', 'reply', 'deliver', 'sessions']) {
      assert.ok(names.includes(n), `${n} in ${names.join(', ')}`)
    }
    const start = listed.find((t) => t.name === 'order-lookup')
    assert.equal(start.description.startsWith('Start a support conversation from a chat message.'), true, start.description)
    assert.deepEqual(Object.keys(start.inputSchema.properties).sort(), ['message', 'session'])
    assert.deepEqual(start.outputSchema.required, ['sessionId', 'kind', 'state', 'reply'])
    // The email trigger's typed signature is its input, exactly as signatureJsonSchema maps it.
    const email = listed.find((t) => t.name === 'order-lookup__email-received')
    assert.deepEqual(email.inputSchema.required, ['message'])
    assert.equal(email.inputSchema.properties.message.type, 'object')
    const enrich = listed.find((t) => t.name === 'enrich-order')
    assert.deepEqual(enrich.inputSchema.required, ['order_id'])
    assert.deepEqual(Object.keys(enrich.outputSchema.properties.returns.properties).sort(), ['customer_tier', 'order_total'])

    const progress = []
    const parked = await client.callTool({ name: 'order-lookup', arguments: { message: 'Refund KK-2043, please.' } }, undefined, {
      onprogress: (p) => progress.push(p.message),
    })
    assert.notEqual(parked.isError, true, JSON.stringify(parked))
    const s = parked.structuredContent
    assert.equal(s.kind, 'parked')
    assert.equal(s.state, 'refund-review')
    assert.equal(s.reply, 'A colleague will review your refund.')
    assert.equal(s.park.channel, 'decision')
    assert.deepEqual(s.park.transitions.map((t) => t.to), ['refund-approved', 'refund-request', 'closed'])
    assert.match(parked.content[0].text, /^A colleague will review your refund\.\n\n\[session .+ parked at refund-review, awaiting a person's decision: 'refund-approved' \(Approve the refund as proposed\.\)/)
    assert.ok(progress.includes('entered refund-request'), progress.join(' | '))
    assert.ok(progress.includes('called write_file'), progress.join(' | '))
    const id = s.sessionId

    // The evidence is linked, and read as a resource with the evidence route's checks.
    const evidence = `archmax://sessions/${id}/evidence/scratchpad/refund.json`
    assert.deepEqual(parked.content.slice(1).map((c) => [c.type, c.uri]), [['resource_link', evidence]])
    const read = await client.readResource({ uri: evidence })
    assert.equal(JSON.parse(read.contents[0].text).order_id, 'KK-2043')
    await assert.rejects(client.readResource({ uri: `archmax://sessions/${id}/evidence/checkpoints/state.json` }), /is not evidence of session/)
    const transcript = JSON.parse((await client.readResource({ uri: `archmax://sessions/${id}/transcript` })).contents[0].text)
    assert.equal(transcript[0].role, 'user')
    const trail = JSON.parse((await client.readResource({ uri: `archmax://sessions/${id}/trail` })).contents[0].text)
    assert.equal(trail.park.state, 'refund-review')
    const { resources } = await client.listResources()
    assert.deepEqual(resources.map((r) => r.uri), ['archmax://workflows/enrich-order/diagram', 'archmax://workflows/order-lookup/diagram'])
    assert.match((await client.readResource({ uri: resources[1].uri })).contents[0].text, /^flowchart /)
    const { resourceTemplates } = await client.listResourceTemplates()
    assert.equal(resourceTemplates.length, 3)

    // The calling agent cannot move the session on itself: a message is a reply at the park,
    // a delivery is refused, and the workflow stays at the human state.
    const pushed = await client.callTool({ name: 'deliver', arguments: { session: id, trigger: 'email-received' } })
    assert.equal(pushed.isError, true)
    assert.match(pushed.content[0].text, /^\w+Error: /)
    const shown = await client.callTool({ name: 'sessions', arguments: { session: id } })
    assert.equal(shown.structuredContent.session.park.state, 'refund-review')

    const decided = await client.callTool({ name: 'decide', arguments: { session: id, target: 'refund-approved', comment: 'Fine.' } })
    assert.notEqual(decided.isError, true, JSON.stringify(decided))
    assert.equal(decided.structuredContent.kind, 'completed')
    assert.equal(decided.structuredContent.state, 'refund-approved')
    assert.equal(decided.structuredContent.reply, 'Your refund of 10.00 EUR is confirmed.')

    const listedSessions = await client.callTool({ name: 'sessions', arguments: { status: 'done' } })
    assert.deepEqual(listedSessions.structuredContent.sessions.map((x) => x.sessionId), [id])
    const unknown = await client.callTool({ name: 'decide', arguments: { session: 'nope', target: 'x' } })
    assert.equal(unknown.isError, true)
    assert.equal(unknown.content[0].text, "NotFoundError: no durable session 'nope'")
  } finally {
    await client.close()
    await endpoint.close()
  }
})

test("archmax serve's /mcp: bearer tokens name the caller, and only an approver decides the human state", async () => {
  const { root, endpoint } = await setup(refundAnswers())
  const { base, child } = await serveArchmax(root, endpoint.url, { ARCHMAX_SERVE_TOKENS: `agent=t-agent,${LEAD}=t-lead` })
  const connect = async (token) => {
    const client = new Client({ name: 'test-client', version: '1.0.0' })
    const headers = token ? { Authorization: `Bearer ${token}` } : {}
    await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp`), { requestInit: { headers } }))
    return client
  }
  try {
    await assert.rejects(connect(null), /401|Unauthorized|token/i)
    const agent = await connect('t-agent')
    const lead = await connect('t-lead')
    try {
      const parked = await agent.callTool({ name: 'order-lookup', arguments: { message: 'Refund KK-2043, please.' } })
      assert.equal(parked.structuredContent.kind, 'parked', JSON.stringify(parked))
      const id = parked.structuredContent.sessionId
      const refused = await agent.callTool({ name: 'decide', arguments: { session: id, target: 'refund-approved' } })
      assert.equal(refused.isError, true)
      assert.match(refused.content[0].text, /^NotAnApproverError: 'agent' may not decide the human state 'refund-review'/)
      const decided = await lead.callTool({ name: 'decide', arguments: { session: id, target: 'refund-approved' } })
      assert.equal(decided.structuredContent.kind, 'completed', JSON.stringify(decided))
      // With tokens, a server reached under another name (behind a proxy, on 0.0.0.0) answers
      // /mcp; without them only loopback names do (the conformance suite's rebinding check).
      const { request } = await import('node:http')
      const port = new URL(base).port
      const status = await new Promise((resolve, reject) => {
        const req = request({ host: '127.0.0.1', port, path: '/mcp', method: 'POST', headers: { host: `desk.example:${port}`, authorization: 'Bearer t-lead', 'content-type': 'application/json', accept: 'application/json, text/event-stream' } }, (res) => {
          res.resume()
          resolve(res.statusCode)
        })
        req.on('error', reject)
        req.end(JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }))
      })
      assert.equal(status, 200)
      // The same session over the HTTP API: one store, one truth.
      const summary = await (await fetch(`${base}/sessions/${id}`, { headers: { Authorization: 'Bearer t-lead' } })).json()
      assert.equal(summary.workflowState, 'refund-approved')
    } finally {
      await agent.close()
      await lead.close()
    }
  } finally {
    child.kill()
    await endpoint.close()
  }
})

test("inside a session started over MCP the workflow's kernel still decides: a jump past the review is refused; an unknown tool is a protocol error", async () => {
  const { root, endpoint } = await setup([tools(call('archmax_advance', { to: 'refund-approved', reason: 'skip the review' }, 'c1')), say('Done.')])
  const client = await stdioClient(root, endpoint.url)
  try {
    const out = await client.callTool({ name: 'order-lookup', arguments: { message: 'Refund KK-2043 now.' } })
    // The kernel refused the jump past the human review; the turn finished where it was.
    assert.equal(out.structuredContent.state, 'classify')
    assert.equal(out.structuredContent.kind, 'completed')
    const refusal = endpoint.bodies[1].messages.find((m) => m.role === 'tool' && m.tool_call_id === 'c1')?.content
    assert.match(refusal, /archmax_advance rejected: /)
    await assert.rejects(client.callTool({ name: 'no-such-tool', arguments: {} }), /no tool 'no-such-tool'/)
  } finally {
    await client.close()
    await endpoint.close()
  }
})

test("a client's cancel stops the turn as Ctrl-C does: the session is left cancelled at its last step, not running", async () => {
  const { createServer } = await import('node:http')
  // A model that never answers: the turn waits in its first model call until cancelled.
  const held = []
  const hang = createServer((req, res) => held.push(res))
  await new Promise((r) => hang.listen(0, '127.0.0.1', r))
  const root = copyExample(mkdtempSync(join(tmpdir(), 'archmax-mcp-cancel-')))
  const client = await stdioClient(root, `http://127.0.0.1:${hang.address().port}/v1`)
  try {
    const abort = new AbortController()
    const progress = []
    const call = client.callTool({ name: 'order-lookup', arguments: { message: 'Where is KK-2043?', session: 'cancel-1' } }, undefined, {
      signal: abort.signal,
      onprogress: (p) => {
        progress.push(p.message)
        if (p.message === 'entered classify') setTimeout(() => abort.abort(), 50)
      },
    })
    await assert.rejects(call, /abort/i)
    // The server stops the turn: the session is left cancelled, not running.
    let shown
    for (let i = 0; i < 50; i++) {
      shown = (await client.callTool({ name: 'sessions', arguments: { session: 'cancel-1' } })).structuredContent.session
      if (shown.standing.kind !== 'running') break
      await new Promise((r) => setTimeout(r, 100))
    }
    assert.equal(shown.standing.kind, 'cancelled', JSON.stringify(shown))
    assert.equal(shown.workflowState, 'classify')
  } finally {
    await client.close()
    for (const res of held) res.destroy()
    hang.close()
  }
})

test('a client that can ask its person (elicitation) gets the decision asked in the same call; declining leaves the session parked', async () => {
  const { root, endpoint } = await setup([...refundAnswers(), ...refundAnswers().slice(0, 3)])
  const asked = []
  let answer = { action: 'accept', content: { target: 'refund-approved', comment: 'Matches the policy.' } }
  const client = await stdioClient(root, endpoint.url, async (request) => {
    asked.push(request.params)
    return answer
  })
  try {
    const done = await client.callTool({ name: 'order-lookup', arguments: { message: 'Refund KK-2043, please.' } })
    assert.equal(done.structuredContent.kind, 'completed', JSON.stringify(done))
    assert.equal(done.structuredContent.state, 'refund-approved')
    assert.equal(asked.length, 1)
    assert.match(asked[0].message, /^Decide: Approve the proposed refund\n\nThe agent says: A colleague will review your refund\.\n\nEvidence: scratchpad\/refund\.json$/)
    assert.deepEqual(asked[0].requestedSchema.properties.target.oneOf.map((o) => o.const), ['refund-approved', 'refund-request', 'closed'])
    // The decision's comment reached the session as a decide would.
    const trail = JSON.parse((await client.readResource({ uri: `archmax://sessions/${done.structuredContent.sessionId}/trail` })).contents[0].text)
    assert.equal(trail.workflowState, 'refund-approved')

    answer = { action: 'decline' }
    const parked = await client.callTool({ name: 'order-lookup', arguments: { message: 'Refund KK-2043 again.' } })
    assert.equal(parked.structuredContent.kind, 'parked')
    assert.equal(asked.length, 2)
  } finally {
    await client.close()
    await endpoint.close()
  }
})

test('archmax mcp --store postgres://: the park and the decision go through the PostgreSQL store', async (t) => {
  const url = process.env.ARCHMAX_TEST_PG_URL
  if (!url) {
    if (process.env.CI && process.env.CI !== 'false') throw new Error('ARCHMAX_TEST_PG_URL is not set under CI')
    t.skip('no PostgreSQL (ARCHMAX_TEST_PG_URL)')
    return
  }
  const { root, endpoint } = await setup(refundAnswers())
  const client = await stdioClient(root, endpoint.url, null, url)
  const id = `mcp-pg-${process.pid}-${Date.now()}`
  try {
    const parked = await client.callTool({ name: 'order-lookup', arguments: { message: 'Refund KK-2043, please.', session: id } })
    assert.equal(parked.structuredContent.kind, 'parked', JSON.stringify(parked))
    const decided = await client.callTool({ name: 'decide', arguments: { session: id, target: 'refund-approved' } })
    assert.equal(decided.structuredContent.kind, 'completed', JSON.stringify(decided))
    const shown = await client.callTool({ name: 'sessions', arguments: { session: id } })
    assert.equal(shown.structuredContent.session.standing.kind, 'done')
    // Nothing went to the workspace's folder.
    assert.equal(existsSync(join(root, 'sessions', id)), false)
  } finally {
    await client.close()
    await endpoint.close()
  }
})

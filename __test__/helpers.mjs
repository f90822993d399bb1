// Shared helpers for the node:test suites.
import { cpSync, mkdtempSync, mkdirSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve, sep } from 'node:path'
import { fileURLToPath } from 'node:url'

import { AIMessage } from '@langchain/core/messages'
import { createPostgresSessionStore } from '@archmax-ai/harness'

/** The repository root. */
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
/** The example workspace. */
export const EXAMPLE = join(ROOT, 'examples', 'customer-support')

/** Copies the example workspace into `dir`, without a `sessions/` store an earlier run against the example may have left in it. */
export function copyExample(dir) {
  const sessions = join(EXAMPLE, 'sessions')
  cpSync(EXAMPLE, dir, { recursive: true, filter: (src) => src !== sessions && !src.startsWith(sessions + sep) })
  // The example's MCP server (mcp/shop.mjs) imports the MCP SDK: a copy outside the
  // repository finds it through this link beside the script, as the example finds the
  // repository's own.
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'mcp', 'node_modules'), 'dir')
  return dir
}

/** A temp workspace holding `files` (workspace-relative path → text). */
export function workspace(files) {
  const dir = mkdtempSync(join(tmpdir(), 'archmax-test-'))
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true })
    writeFileSync(join(dir, path), text)
  }
  return dir
}

/** A workflow that fails validation: a transition to an undefined state (line 9). */
export const BROKEN_SPEC = `title: Broken
instructions: Fails on purpose.
mounts:
  allow_always: []
states:
  start:
    triggers: { manual: }
    transitions:
      - to: nowhere
`

/** An OpenAI tool call of `name` with `args`. */
export function call(name, args, id = `call_${name}`) {
  return { id, type: 'function', function: { name, arguments: JSON.stringify(args) } }
}
/** An OpenAI assistant message as a LangChain AIMessage (for the fake LangChain chat models). */
export function toAIMessage(m) {
  return new AIMessage({
    content: m.content ?? '',
    tool_calls: (m.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: JSON.parse(c.function.arguments), type: 'tool_call' })),
    ...(m.usage ? { usage_metadata: { input_tokens: m.usage.prompt_tokens, output_tokens: m.usage.completion_tokens, total_tokens: m.usage.prompt_tokens + m.usage.completion_tokens } } : {}),
  })
}
/** `message` (an assistant message) reporting `input` and `output` tokens, for every model source to pass on. */
export const withUsage = (message, input, output) => ({ ...message, usage: { prompt_tokens: input, completion_tokens: output } })
/** An assistant message with its usage (from `withUsage`) as a `chat.completion`; a message without usage as it is. */
export function asCompletion(m) {
  if (!m || typeof m !== 'object' || !m.usage) return m
  const { usage, ...message } = m
  return { id: 'x', object: 'chat.completion', model: 'scripted', choices: [{ index: 0, message, finish_reason: 'stop' }], usage }
}
/** An assistant message making `calls`. */
export const tools = (...calls) => ({ role: 'assistant', content: null, tool_calls: calls })
/** The example's refund proposal, as the agent writes it. */
export const REFUND = JSON.stringify({ order_id: 'KK-2043', decision: 'partial_refund', amount: 10, currency: 'EUR', limit: 300, reason: 'Delayed past the promise.' })
/**
 * The example's refund flow as the agent answers it: to `refund-request`, the proposal
 * written to `proposal` and on to `refund-review` (where it parks); once approved, the
 * confirmation note and the reply.
 */
export function refundAnswers(proposal = 'scratchpad/refund.json') {
  return [
    tools(call('archmax_advance', { to: 'refund-request', reason: 'wants money back' }, 'c1')),
    tools(
      call('archmax_set_variables', { variables: { order_id: 'KK-2043' } }, 'c2'),
      call('write_file', { file_path: proposal, content: REFUND }, 'c3'),
      call('archmax_advance', { to: 'refund-review', reason: 'proposal written' }, 'c4'),
    ),
    say('A colleague will review your refund.'),
    tools(call('write_file', { file_path: 'outbox/refund-KK-2043.md', content: 'KK-2043: 10.00 EUR, within 5 working days.' }, 'c5')),
    say('Your refund of 10.00 EUR is confirmed.'),
  ]
}
/**
 * The agent's side of the example's `refund-approved` case (tests/refund-approved.test.yaml):
 * to `refund-request`, order recorded, the mocked enrich-order called, the proposal written and
 * on to `refund-review`; once approved, the refund issued through the example's `shop` MCP
 * server, the confirmation note and the reply.
 */
export function approvedCaseAnswers() {
  return [
    tools(call('archmax_advance', { to: 'refund-request', reason: 'wants money back' }, 'c1')),
    tools(
      call('archmax_set_variables', { variables: { order_id: 'KK-2047' } }, 'c2'),
      call('archmax_workflow_enrich-order', { order_id: 'KK-2047' }, 'c3'),
      call('write_file', { file_path: 'scratchpad/refund.json', content: REFUND.replace('KK-2043', 'KK-2047') }, 'c4'),
      call('archmax_advance', { to: 'refund-review', reason: 'proposal written' }, 'c5'),
    ),
    say('A colleague will review your refund for KK-2047.'),
    tools(call('mcp__shop__issue_refund', { order_id: 'KK-2047', amount: 10, currency: 'EUR' }, 'c6')),
    tools(call('write_file', { file_path: 'outbox/refund-KK-2047.md', content: 'KK-2047: 10.00 EUR (refund R-KK-2047), within 5 working days.' }, 'c7')),
    say('Your refund R-KK-2047 of 10.00 EUR for KK-2047 is confirmed.'),
  ]
}
/** The agent's answers to the example's `order-status-delayed` case. */
export function delayedCaseAnswers() {
  return [
    advance('order-question', 'asks where the order is'),
    tools(call('mcp__shop__lookup_order', { order_id: 'KK-2043' }, 'l1')),
    say('Order KK-2043 is delayed at the carrier; the new estimate is 12 March. Sorry for the wait.'),
  ]
}

/** The agent's answers to a refund proposal for `order`, parked for review with `said`. */
function proposal(order, decision, amount, said) {
  const file = JSON.stringify({ order_id: order, decision, amount, currency: 'EUR', limit: amount, reason: 'Within the policy.' })
  return [
    advance('refund-request', 'wants money back'),
    tools(
      call('archmax_set_variables', { variables: { order_id: order } }, 'p1'),
      call('archmax_workflow_enrich-order', { order_id: order }, 'p2'),
      call('write_file', { file_path: 'scratchpad/refund.json', content: file }, 'p3'),
      call('archmax_advance', { to: 'refund-review', reason: 'proposal written' }, 'p4'),
    ),
    say(said),
  ]
}

/**
 * The agent's answers to the example's whole suite (`order-lookup`), its cases in path order
 * (the rubric and the judge are answered apart): what its cassettes were recorded from
 * (`scripts/record-example-cassettes.mjs`).
 */
export function exampleSuiteAnswers() {
  return [
    // email-refund-rejected: through the email trigger, parked, rejected, closed.
    ...proposal('KK-2050', 'full_refund', 96.4, 'Your refund request for KK-2050 is with a colleague for review.'),
    say('We cannot refund order KK-2050: customs released the parcel and it arrives on 11 March.'),
    // order-status-delayed, refund-approved.
    ...delayedCaseAnswers(),
    ...approvedCaseAnswers(),
    // refund-draft-completed: the seeded half-written draft is completed.
    ...proposal('KK-2049', 'partial_refund', 10, 'A colleague will review your partial refund for KK-2049.'),
  ]
}

/** An assistant message calling `archmax_advance`. */
export const advance = (to, reason = 'next') => ({ role: 'assistant', content: null, tool_calls: [call('archmax_advance', { to, reason })] })
/** An assistant message saying `content`. */
export const say = (content) => ({ role: 'assistant', content })

/** A model answering from a script (an answer may be a function of the request), recording every request. */
export function scripted(answers) {
  const requests = []
  const model = async (request) => {
    requests.push(request)
    const next = answers.shift()
    if (next === undefined) throw new Error('the script ran out')
    return typeof next === 'function' ? next(request) : next
  }
  return { model, requests }
}

/** A Map-backed host store recording its commits; `async` answers every method a tick later. */
/**
 * A PostgreSQL session store in a fresh schema of the test database (`ARCHMAX_TEST_PG_URL`,
 * which `.ci/run` sets), or `null` locally when it is not set (the caller skips, saying so).
 * Under CI a missing URL throws: the PostgreSQL store must be tested there.
 */
export function pgStore(tag = 'js') {
  const url = process.env.ARCHMAX_TEST_PG_URL
  if (!url) {
    if (process.env.CI && process.env.CI !== 'false') {
      throw new Error('ARCHMAX_TEST_PG_URL is not set: CI must run the PostgreSQL store tests (scripts/pg-test-server.sh)')
    }
    return null
  }
  pgStore.count = (pgStore.count ?? 0) + 1
  return createPostgresSessionStore({ url, schema: `${tag}_${process.pid}_${pgStore.count}` })
}

/** Why a PostgreSQL test was skipped. */
export const NO_PG = 'ARCHMAX_TEST_PG_URL is not set (eval "$(bash scripts/pg-test-server.sh start)" to run it)'

export function mapStore({ async = false } = {}) {
  const sessions = new Map()
  const commits = []
  const calls = []
  const method = (name, fn) =>
    async
      ? async (...args) => {
          calls.push(name)
          await new Promise((resolve) => setImmediate(resolve))
          return fn(...args)
        }
      : (...args) => {
          calls.push(name)
          return fn(...args)
        }
  const store = {
    load: method('load', (id) => (sessions.has(id) ? structuredClone(sessions.get(id)) : null)),
    commit: method('commit', (id, step) => {
      commits.push({ id, ...step })
      const s = sessions.get(id) ?? { state: null, messages: [] }
      s.messages.push(...step.messages)
      s.state = step.state
      sessions.set(id, s)
    }),
    list: method('list', () => [...sessions.keys()]),
    delete: method('delete', (id) => sessions.delete(id)),
  }
  return { store, sessions, commits, calls }
}

/** A workflow of one state, `chat`, with no transitions: a turn there ends when the model answers with text. */
export const ONE_STATE_SPEC = `title: One
instructions: A test workflow.
mounts:
  allow_always: []
states:
  chat:
    triggers: { manual: }
    instructions: Chat.
`

/** A workflow whose `draft` state leaves for `done` only past a custom `approval: finance` hook (run by `hookExecutors`). */
export const APPROVAL_SPEC = `title: Approvals
instructions: A test workflow.
mounts:
  allow_always: []
states:
  draft:
    triggers: { manual: }
    instructions: Draft the refund.
    transitions:
      - to: done
    after:
      approval: finance
  done:
    instructions: Say goodbye.
`

/** A caller whose one state may run `enrich` as a tool (and forbids writes under scratchpad/secret/ everywhere it delegates). */
export const CALLER_SPEC = `title: Orders
instructions: Handle the order.
mounts:
  allow_always: []
tools:
  forbid_always: [{ tool: write_file, paths: ["scratchpad/secret/**"] }]
states:
  work:
    triggers: { manual: }
    instructions: Enrich the order, then answer.
    tools:
      allow: [archmax_workflow_enrich]
`
/** The sub-workflow `enrich`: typed `order_id` in, `risk` returned, may write the scratchpad. */
export const CHILD_SPEC = `title: Enrichment
instructions: Enrich orders.
mounts:
  allow_always: []
states:
  enrich:
    triggers:
      manual:
        description: Enrich one order
        requires: [{ name: order_id, type: string }]
        returns: [{ name: risk, type: string }]
    instructions: Set risk for the order.
    tools:
      allow: [{ tool: write_file, paths: ["scratchpad/**"] }]
`

/** A sub-workflow `enrich` (called by CALLER_SPEC) that hands each order to a person. */
export const PARKING_CHILD_SPEC = `title: Review
instructions: REVIEW-CHILD.
mounts:
  allow_always: []
states:
  check:
    triggers:
      manual:
        description: Review one order
        requires: [{ name: order_id, type: string }]
    instructions: Check the order, then hand it to a person.
    transitions:
      - { to: approve, description: Ready for a person. }
  approve:
    type: human
    title: Approve the order
    instructions: A person approves the order.
    transitions:
      - { to: done, description: Approve it., type: approve }
      - { to: check, description: Send it back., type: refine }
  done:
    instructions: Say the order is approved.
`

/** A text as streamed pieces: split after each space. */
export const textPieces = (text) => text.match(/[^ ]* ?/g).filter(Boolean)

/**
 * An OpenAI chat message as the `chat.completion.chunk`s a streaming endpoint sends: a role
 * chunk, the text in `pieces` (default: split after each space), each tool call in two
 * pieces keyed by its index, a finish chunk and a usage chunk (no choices).
 */
export function chunksOf(message, pieces) {
  const chunk = (delta, finish = null) => ({ id: 'x', object: 'chat.completion.chunk', model: 'scripted', choices: [{ index: 0, delta, finish_reason: finish }] })
  const out = [chunk({ role: 'assistant', content: '' })]
  const text = typeof message.content === 'string' ? message.content : ''
  for (const piece of pieces ?? textPieces(text)) out.push(chunk({ content: piece }))
  for (const [index, c] of (message.tool_calls ?? []).entries()) {
    const args = c.function.arguments
    const half = Math.floor(args.length / 2)
    out.push(chunk({ tool_calls: [{ index, id: c.id, type: 'function', function: { name: c.function.name, arguments: args.slice(0, half) } }] }))
    out.push(chunk({ tool_calls: [{ index, function: { arguments: args.slice(half) } }] }))
  }
  out.push(chunk({}, message.tool_calls?.length ? 'tool_calls' : 'stop'))
  out.push({ id: 'x', object: 'chat.completion.chunk', model: 'scripted', choices: [], usage: { prompt_tokens: 10, completion_tokens: 5 } })
  return out
}

/**
 * An OpenAI-compatible endpoint on 127.0.0.1 answering each request with `next(body)`'s
 * message: as SSE chunks (`chunksOf`), `gapMs` apart, when the request asks for a stream,
 * else as one `chat.completion`. `next` may answer `{ cutAfter: n, message }` to send only
 * n chunks and then cut the connection. Records every request body.
 */
export async function sseEndpoint(next, { gapMs = 0 } = {}) {
  const { createServer } = await import('node:http')
  const bodies = []
  const server = createServer((req, res) => {
    let text = ''
    req.on('data', (d) => (text += d))
    req.on('end', async () => {
      const body = JSON.parse(text)
      bodies.push(body)
      let answer
      try {
        answer = next(body)
      } catch (e) {
        res.writeHead(400, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ error: { message: String(e) } }))
        return
      }
      const { message, cutAfter, pieces } = answer?.message ? answer : { message: answer }
      if (!body.stream) {
        res.writeHead(200, { 'content-type': 'application/json' })
        res.end(JSON.stringify({ id: 'x', object: 'chat.completion', model: 'scripted', choices: [{ index: 0, message, finish_reason: 'stop' }] }))
        return
      }
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' })
      const chunks = chunksOf(message, pieces)
      for (const [i, c] of chunks.entries()) {
        if (cutAfter !== undefined && i >= cutAfter) {
          res.socket.destroy()
          return
        }
        if (i && gapMs) await new Promise((r) => setTimeout(r, gapMs))
        res.write(`data: ${JSON.stringify(c)}\n\n`)
      }
      res.end('data: [DONE]\n\n')
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  return {
    url: `http://127.0.0.1:${server.address().port}/v1`,
    bodies,
    close: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    },
  }
}

/** APPROVAL_SPEC with `on_error: triage`: a failed `approval` hook routes `draft` to the human state `triage`. */
export const ON_ERROR_HUMAN_SPEC = `title: Approvals
instructions: A test workflow.
mounts:
  allow_always: []
states:
  draft:
    triggers: { manual: }
    instructions: Draft the refund.
    on_error: triage
    transitions:
      - to: done
    after:
      approval: finance
  triage:
    type: human
    instructions: A person decides what to do with a failed refund.
    transitions:
      - to: done
        description: close it
  done:
    instructions: Say goodbye.
`

/**
 * An OTLP/HTTP receiver on 127.0.0.1 for the JSON encoding: `POST /v1/traces` answered
 * `200 {}`. `spans()` decodes every span received: ids, parent, name, service, attributes
 * (an `intValue` as a number) and links.
 */
/**
 * An OTLP/gRPC receiver on 127.0.0.1 (node:http2): the collector's `TraceService/Export`,
 * its length-prefixed protobuf bodies decoded by hand into the same span shape as
 * `otlpReceiver()`'s, and each request's metadata kept.
 */
export async function otlpGrpcReceiver() {
  const { createServer } = await import('node:http2')
  const requests = []
  const server = createServer()
  const open = new Set()
  server.on('session', (session) => {
    open.add(session)
    session.on('close', () => open.delete(session))
  })
  server.on('stream', (stream, headers) => {
    const chunks = []
    stream.on('data', (d) => chunks.push(d))
    stream.on('end', () => {
      const body = Buffer.concat(chunks)
      // One gRPC message: a compressed flag, a 4-byte length, the protobuf.
      const message = body.length >= 5 && body[0] === 0 ? body.subarray(5, 5 + body.readUInt32BE(1)) : Buffer.alloc(0)
      requests.push({ path: headers[':path'], contentType: headers['content-type'], headers, message })
      stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true })
      stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': '0' }))
      stream.end(Buffer.from([0, 0, 0, 0, 0]))
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    requests,
    spans: () => requests.flatMap(({ message }) => decodeTraceRequest(message)),
    close: async () => {
      for (const session of open) session.destroy()
      await new Promise((r) => server.close(r))
    },
  }
}

/** The fields of one protobuf message: `[number, value]`, value a Buffer (length-delimited) or a BigInt. */
function protoFields(buf) {
  const out = []
  let i = 0
  const varint = () => {
    let v = 0n
    let shift = 0n
    for (;;) {
      const b = buf[i++]
      v |= BigInt(b & 0x7f) << shift
      if (!(b & 0x80)) return v
      shift += 7n
    }
  }
  while (i < buf.length) {
    const key = Number(varint())
    const field = key >> 3
    switch (key & 7) {
      case 0: out.push([field, varint()]); break
      case 1: out.push([field, buf.readBigUInt64LE(i)]); i += 8; break
      case 2: { const n = Number(varint()); out.push([field, buf.subarray(i, i + n)]); i += n; break }
      case 5: out.push([field, BigInt(buf.readUInt32LE(i))]); i += 4; break
      default: throw new Error(`protobuf wire type ${key & 7} at ${i}`)
    }
  }
  return out
}

const protoAll = (buf, n) => protoFields(buf).filter(([f]) => f === n).map(([, v]) => v)
const protoOne = (buf, n) => protoAll(buf, n)[0]

function protoAttributes(list) {
  const value = (any) => {
    const [[field, v]] = protoFields(any)
    if (field === 1) return v.toString('utf8')
    if (field === 2) return v !== 0n
    if (field === 3) return Number(BigInt.asIntN(64, v))
    if (field === 4) { const b = Buffer.alloc(8); b.writeBigUInt64LE(v); return b.readDoubleLE(0) }
    return v
  }
  return Object.fromEntries(list.map((kv) => [protoOne(kv, 1).toString('utf8'), value(protoOne(kv, 2) ?? Buffer.alloc(0))]))
}

/** The spans of an `ExportTraceServiceRequest` (opentelemetry-proto's field numbers). */
function decodeTraceRequest(message) {
  const hex = (b) => (b ? b.toString('hex') : '')
  return protoAll(message, 1).flatMap((rs) => {
    const resource = protoOne(rs, 1)
    const service = resource ? protoAttributes(protoAll(resource, 1))['service.name'] : undefined
    return protoAll(rs, 2).flatMap((ss) =>
      protoAll(ss, 2).map((span) => ({
        traceId: hex(protoOne(span, 1)),
        spanId: hex(protoOne(span, 2)),
        parentSpanId: hex(protoOne(span, 4)),
        name: protoOne(span, 5)?.toString('utf8') ?? '',
        service,
        attributes: protoAttributes(protoAll(span, 9)),
        links: protoAll(span, 13).map((l) => ({ traceId: hex(protoOne(l, 1)), spanId: hex(protoOne(l, 2)) })),
      })),
    )
  })
}

export async function otlpReceiver() {
  const { createServer } = await import('node:http')
  const requests = []
  const server = createServer((req, res) => {
    let text = ''
    req.on('data', (d) => (text += d))
    req.on('end', () => {
      requests.push({ path: req.url, contentType: req.headers['content-type'], headers: req.headers, body: JSON.parse(text || 'null') })
      res.writeHead(200, { 'content-type': 'application/json' })
      res.end('{}')
    })
  })
  await new Promise((r) => server.listen(0, '127.0.0.1', r))
  const value = (v) => ('stringValue' in v ? v.stringValue : 'intValue' in v ? Number(v.intValue) : 'doubleValue' in v ? v.doubleValue : 'boolValue' in v ? v.boolValue : v)
  const attributes = (list = []) => Object.fromEntries(list.map((kv) => [kv.key, value(kv.value ?? {})]))
  return {
    base: `http://127.0.0.1:${server.address().port}`,
    requests,
    spans: () =>
      requests.flatMap(({ body }) =>
        (body?.resourceSpans ?? []).flatMap((rs) =>
          (rs.scopeSpans ?? []).flatMap((ss) =>
            (ss.spans ?? []).map((s) => ({
              traceId: s.traceId,
              spanId: s.spanId,
              parentSpanId: s.parentSpanId ?? '',
              name: s.name,
              service: attributes(rs.resource?.attributes)['service.name'],
              attributes: attributes(s.attributes),
              links: (s.links ?? []).map((l) => ({ traceId: l.traceId, spanId: l.spanId })),
            })),
          ),
        ),
      ),
    close: async () => {
      server.closeAllConnections()
      await new Promise((r) => server.close(r))
    },
  }
}

/**
 * Starts `archmax serve --root <root> --port 0` (the npm bin, so the built addon) with the
 * model at `endpointUrl` and `env` added; resolves with its base URL and the child process
 * once it listens. The caller kills the child.
 */
export async function serveArchmax(root, endpointUrl, env = {}) {
  const { spawn } = await import('node:child_process')
  const all = { ...process.env, ARCHMAX_CLI_NO_BANNER: '1', NO_COLOR: '1', ARCHMAX_API_BASE_URL: endpointUrl, ARCHMAX_MODEL: 'scripted', ...env }
  delete all.ARCHMAX_SESSION_STORE
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'archmax.js'), 'serve', '--root', root, '--port', '0'], { cwd: root, env: all })
  let err = ''
  const base = await new Promise((resolve, reject) => {
    child.stderr.on('data', (d) => {
      err += d
      const m = err.match(/listening on (http:\/\/127\.0\.0\.1:\d+)/)
      if (m) resolve(m[1])
    })
    child.on('exit', (code) => reject(new Error(`archmax serve exited ${code}: ${err}`)))
  })
  return { base, child }
}

/**
 * A scripted OpenAI-compatible server on 127.0.0.1 answering the example's whole suite:
 * the agent from `exampleSuiteAnswers()` in order, the rubric hook `ok`, the case judge a
 * pass (told apart by their prompts). `left()` is how many agent answers were not asked for.
 */
export async function exampleSuiteServer() {
  const answers = exampleSuiteAnswers()
  const server = await sseEndpoint((body) => {
    const asked = JSON.stringify(body.messages ?? [])
    if (asked.includes("You grade whether an AI assistant's work")) return say(JSON.stringify({ score: 0.9, pass: true, reason: 'The reply meets the criterion.' }))
    if (asked.includes('\\"verdict\\": \\"ok\\" | \\"correct\\" | \\"veto\\"')) return say('{"verdict": "ok", "reason": "accurate"}')
    const next = answers.shift()
    if (next === undefined) throw new Error('the script ran out of answers')
    return next
  })
  return { ...server, left: () => answers.length }
}

// `createAgent`: a workflow run by the Rust harness, driven from JS.
// Hand-written (index.js is generated). The native `NativeAgent` speaks JSON
// text with its callbacks; this module adapts plain JS functions to it, never
// lets a callback's throw cross into Rust, and raises the harness's refusals
// as the original's error classes.
import { DEFAULT_SESSION_ID, NativeAgent, defaultModelId, modelChunk, modelSettings, modelText } from './native.js'
import { inSlice, nextSlice, sliced } from './slices.js'
import { AgentDisposedError, errorClasses } from '../generated/errors.js'
import { OPTION_RANGES } from '../generated/limits.js'
import { sessionStoreBinding } from './store.js'
import { checkPolicyRules, policyAsk } from './policy-ask.js'
import {
  checkOptionNames,
  contentText,
  describe,
  errorText,
  isLangChainModel,
  isLangChainTool,
  jsonSchemaOf,
  langChainMessages,
  langChainModelFunction,
  STREAM_ID,
} from './langchain.js'

/**
 * Declares a host tool; returns it unchanged. Its use is in TypeScript: a zod/Standard
 * `schema` types the handler's arguments.
 */
export function hostTool(tool) {
  return tool
}

// The error classes, generated from the Rust list (the native side names them by `code`).
export { HarnessError } from './harness-error.js'
export * from '../generated/errors.js'

/** Unwraps a native `{ ok, value | code, message }` answer, raising its error class. */
function unwrap(result) {
  if (result.ok) return result.value
  const Cls = errorClasses[result.code]
  if (Cls) throw Object.assign(new Cls(result.message), result.fields ?? {})
  if (result.code === 'TypeError') throw new TypeError(result.message)
  throw new Error(result.message)
}


/** Runs `fn` and answers the `{ ok, value | error }` JSON the native side reads; never throws. */
async function settle(fn, label, convert = (v) => v) {
  let value
  try {
    value = await fn()
  } catch (e) {
    return JSON.stringify({ ok: false, error: `${label} threw: ${errorText(e)}` })
  }
  try {
    value = convert(value)
    return JSON.stringify({ ok: true, value: value === undefined ? null : value })
  } catch (e) {
    return JSON.stringify({ ok: false, error: `${label} returned a value that is not JSON: ${errorText(e)}` })
  }
}

/** Freezes a message received from Rust (it is shared by the requests of later calls). */
function freeze(value) {
  if (typeof value !== 'object' || value === null || Object.isFrozen(value)) return value
  Object.freeze(value)
  if (Array.isArray(value)) for (let i = 0; i < value.length; i++) freeze(value[i])
  else for (const key in value) freeze(value[key])
  return value
}

const RESYNC = JSON.stringify({ ok: false, resync: true, error: 'the request delta did not apply' })

/**
 * The model function behind the native side's request deltas: keeps the conversations
 * (channels) Rust sends deltas against and hands `model` each whole request
 * `{ model, messages, tools?, temperature?, max_tokens?, parallel_tool_calls? }`.
 * Messages are frozen: they are shared with the requests of later calls.
 */
function modelAdapter(model, getNative) {
  const channels = new Map()
  // The blocks (system messages, tool lists) deltas name by id, each parsed once for every
  // channel; one not held yet is fetched from the native side (ids are never reused).
  const blocks = new Map()
  const block = (id) => {
    let b = blocks.get(id)
    if (b === undefined) {
      const json = getNative().modelBlock(id)
      if (json === null || json === undefined) throw new Error('block')
      blocks.set(id, (b = freeze(JSON.parse(json))))
    }
    return b
  }
  const adapter = (deltaJson) => {
    let request
    let info
    let d
    try {
      d = JSON.parse(deltaJson)
      for (const id of d.unkeep ?? []) blocks.delete(id)
      for (const id of d.drop ?? []) channels.delete(id)
      let ch = channels.get(d.ch)
      if (!ch) channels.set(d.ch, (ch = { messages: [], tools: undefined }))
      if (d.keep > ch.messages.length) throw new Error('keep')
      // Assigning `length` unconditionally costs a slow path even when nothing is dropped.
      if (d.keep < ch.messages.length) ch.messages.length = d.keep
      if (d.first !== undefined) ch.messages[0] = block(d.first)
      for (const m of d.append) ch.messages.push(freeze(m))
      if (ch.messages.length !== d.len) throw new Error('len')
      if (d.tools !== undefined) {
        const tools = block(d.tools)
        ch.tools = tools.length ? tools : undefined
      }
      const { role = 'agent', session, state, ...head } = d.head
      request = { ...head, messages: ch.messages.slice() }
      if (ch.tools) request.tools = ch.tools
      info = session === undefined ? { role } : { role, sessionId: session }
      if (state !== undefined) info.state = state
      // Present only when the text is shown live: no `stream` key otherwise, as before streaming.
      if (d.stream?.show) info.stream = true
      if (d.stream) Object.defineProperty(info, STREAM_ID, { value: d.stream.id })
    } catch {
      if (d) channels.delete(d.ch)
      return Promise.resolve(RESYNC)
    }
    return settle(async () => {
      const answer = await model(request, info)
      return d.stream && isStream(answer) ? pump(answer, d.stream.id) : answer
    }, 'the model function')
  }
  /** Forgets channels the native side released (`agent.dispose(sessionId)`). */
  adapter.forget = (ids) => {
    for (const id of ids) channels.delete(id)
  }
  return adapter
}

/** What a model function answered instead of an answer: its pieces went to the native side. */
const STREAMED = Object.freeze({ archmaxStreamed: true })

/** An answer that streams: an async iterable (a ReadableStream is one) or a reader-bearing stream. */
function isStream(answer) {
  if (!answer || typeof answer !== 'object') return false
  return typeof answer[Symbol.asyncIterator] === 'function' || typeof answer.getReader === 'function'
}

/** The pieces of an async iterable or a ReadableStream, in order. */
async function* piecesOf(stream) {
  if (typeof stream[Symbol.asyncIterator] === 'function') {
    yield* stream
    return
  }
  const reader = stream.getReader()
  try {
    for (;;) {
      const { done, value } = await reader.read()
      if (done) return
      yield value
    }
  } finally {
    reader.releaseLock?.()
  }
}

/**
 * Sends each piece a streaming model yields to the native side, which folds them into the
 * answer and shows their text as it comes: a string is text; an object is an OpenAI
 * `chat.completion.chunk` or one delta `{ content?, tool_calls?, usage? }`.
 */
async function pump(stream, id) {
  let i = 0
  for await (const piece of piecesOf(stream)) {
    if (typeof piece === 'string') modelText(id, piece)
    else if (piece && typeof piece === 'object' && !Array.isArray(piece)) modelChunk(id, JSON.stringify(piece))
    else throw new TypeError(`piece ${i} of the model's stream is ${describe(piece)}; expected a string or a chunk object`)
    i++
  }
  return STREAMED
}

/**
 * `model`/`modelFactory` as one model function `(request, { role }) => answer` (or null: the
 * `ARCHMAX_*` endpoint). `model` answers the agent; the factory builds one model per role
 * (`agent`, `rubric`) and declared id, memoised; a rubric without a factory is graded by
 * the agent's model.
 */
function resolveModel(model, modelFactory, defaultModel, rootDir, configOf) {
  const asFunction = (m, what) => {
    if (typeof m === 'function') return m
    if (isLangChainModel(m)) return langChainModelFunction(m, configOf)
    throw new TypeError(`${what} must be a function or a LangChain chat model (bindTools + invoke), got ${describe(m)}`)
  }
  const direct = model !== undefined && model !== null ? asFunction(model, "'model'") : null
  if (modelFactory === undefined || modelFactory === null) return direct
  if (typeof modelFactory !== 'function') throw new TypeError(`'modelFactory' must be a function, got ${describe(modelFactory)}`)
  const env = () => agentEnv(rootDir)
  const built = new Map()
  const build = (role, id) => {
    const key = `${role} ${id ?? ''}`
    if (!built.has(key)) {
      const made = (async () => asFunction(await modelFactory(role, env, id), "what 'modelFactory' returned"))()
      built.set(key, made)
      made.catch(() => built.delete(key)) // a failed build is retried on the next request
    }
    return built.get(key)
  }
  // The default model is asked for with no id, once, at assembly (so a factory that throws
  // fails createAgent); its id is the one the harness decides (the environment and `.env`).
  const defaultId = defaultModelId(rootDir, defaultModel ?? undefined)
  const idOf = (request) => (!request.model || request.model === defaultId ? undefined : request.model)
  return {
    ready: direct ? Promise.resolve(direct) : build('agent', undefined),
    /** Builds the models the spec declares (`models` of `open`), as the original does at assembly. */
    prebuild: async ({ agent = [], rubric = [] } = {}) => {
      // In the original's order: the rubrics' graders with the rubrics, then the states' models.
      const graders = rubric.map((id) => build('rubric', id ?? undefined))
      const agents = direct ? [] : agent.filter((id) => id !== defaultId).map((id) => build('agent', id))
      await Promise.all([...graders, ...agents])
    },
    fn: async (request, info) => {
      // A case's judge is built as the original builds it: modelFactory('judge', env, id).
      const role = info?.role === 'rubric' || info?.role === 'judge' ? info.role : 'agent'
      if (role === 'agent' && direct) return direct(request, info)
      const fn = await build(role, idOf(request))
      return fn(request, info)
    },
  }
}

/**
 * The lazy `AgentEnv` of `modelFactory`, read when called: the endpoint settings as the
 * harness reads them (the environment, then `.env` in the cwd and in `rootDir`; a key may be
 * left out for an endpoint on this machine). Throws the harness's message on a missing one.
 */
function agentEnv(rootDir) {
  const { apiBaseUrl, apiKey, model, temperature, maxTokens } = modelSettings(rootDir)
  return { apiBaseUrl, apiKey, model, temperature: temperature ?? undefined, maxTokens: maxTokens ?? undefined }
}

/** Tool entries as host tool definitions: LangChain tools get a JSON schema and a handler over `invoke`. */
async function normalizeTools(tools) {
  if (!Array.isArray(tools)) return tools
  const out = []
  for (const [i, t] of tools.entries()) {
    if (!isLangChainTool(t)) {
      out.push(t)
      continue
    }
    const schema = await jsonSchemaOf(t.schema, `tools[${i}] ('${t.name}')`)
    out.push({
      name: t.name,
      description: t.description ?? '',
      schema,
      paths: t.paths,
      handler: async (args) => {
        const result = await t.invoke(args)
        // A ToolMessage (or anything with content) answers with its text.
        if (result && typeof result === 'object' && (result.type === 'tool' || result._getType?.() === 'tool')) {
          return typeof result.content === 'string' ? result.content : contentText(result.content) || JSON.stringify(result.content)
        }
        return result
      },
    })
  }
  return out
}

/**
 * `context.workspace` of one host tool call: the turn's files, each access decided by the
 * kernel as the agent's own file tool (`read_file`, `write_file`, `remove_file`) would be in
 * the calling state (crates/machine/src/host_workspace.rs). Refusals are answered in the
 * results (`error`), as a Deep Agents backend answers them; nothing throws.
 */
function toolWorkspace(native, contextId) {
  const op = (name, args) => unwrap(native.toolWorkspace(contextId, name, args))
  return Object.freeze({
    /** `{ content }` (the file's text, lines `offset`.. (0-based), at most `limit`, default 500) or `{ error }`. */
    async read(filePath, offset, limit) {
      return op('read', { path: String(filePath), offset, limit })
    },
    /** `[{ path, content: Uint8Array | null, error: string | null }]`. */
    async downloadFiles(paths) {
      return op('download', { paths: [...paths].map(String) }).map((r) => ({
        path: r.path,
        content: r.content === null ? null : new Uint8Array(Buffer.from(r.content, 'base64')),
        error: r.error,
      }))
    },
    /** `files`: `[[path, Uint8Array]]`; `[{ path, error: null } | { path: '/<path>', error: 'permission_denied', reason }]`. */
    async uploadFiles(files) {
      return op('upload', { files: [...files].map(([path, bytes]) => [String(path), Buffer.from(bytes).toString('base64')]) })
    },
    /** `{}` or `{ error }`. */
    async delete(filePath) {
      return op('delete', { path: String(filePath) })
    },
  })
}

function toolAdapter(tools, getNative) {
  const byName = new Map(tools.map((t) => [t.name, t]))
  return (callJson) =>
    settle(async () => {
      const { name, args, sessionId, state, callId, contextId } = JSON.parse(callJson)
      const tool = byName.get(name)
      if (!tool) throw new Error(`no handler for tool '${name}'`)
      const context = { sessionId, state, toolName: name }
      if (callId !== null && callId !== undefined) context.callId = callId
      const workspace = contextId === null || contextId === undefined ? null : toolWorkspace(getNative(), contextId)
      let open = true
      // Non-enumerable, as the original's: readable only while the call runs.
      Object.defineProperty(context, 'workspace', {
        enumerable: false,
        get() {
          if (!open) throw new Error('context.workspace is only usable while its tool call runs')
          if (!workspace) throw new Error('context.workspace is not available to this call')
          return workspace
        },
      })
      try {
        return await tool.handler(args ?? {}, context)
      } finally {
        open = false
      }
    }, 'the tool handler', (result) => {
      if (typeof result === 'string') return result
      if (result === undefined) return ''
      return JSON.stringify(result)
    })
}

function eventAdapter(onEvent) {
  let warned = false
  return (envelopeJson) => {
    if (!envelopeJson) return // a flush marker
    try {
      onEvent(JSON.parse(envelopeJson))
    } catch (e) {
      // A listener's failure must not stop the turn; report it once where Node reports warnings.
      if (!warned) process.emitWarning(`onEvent threw (later throws are not reported): ${errorText(e)}`)
      warned = true
    }
  }
}

/**
 * Drives one native turn (`NativeTurn`, crates/napi/src/pump.rs) on this thread: polls it,
 * passes its events to `onEvent` in order, hands each call it makes to its function and its
 * answer back, and polls again; the turn calls `wake` when something else (a timer, a
 * cancellation, a worker) needs a poll. Resolves with the turn's `{ ok, ... }` answer.
 */
async function drive(turn, handlers) {
  // `wake` asks for another poll; one that arrives while the loop is busy is kept in
  // `pending`, so it is never lost.
  let kick = null
  let pending = false
  const wake = () => {
    if (kick) kick()
    else pending = true
  }
  turn.onWake(wake)
  for (;;) {
    while (!inSlice()) await nextSlice()
    pending = false
    const { done, events, calls, again } = turn.poll()
    for (const e of events) handlers.event(e)
    // The answer crosses as JSON text: one parse here beats napi building it field by field.
    if (done !== undefined && done !== null) return JSON.parse(done)
    for (const { id, kind, json } of calls) {
      const fn = handlers[kind]
      const answer = fn ? fn(json) : Promise.resolve(NO_HANDLER)
      answer.then((envelope) => {
        turn.answer(id, envelope)
        wake()
      })
    }
    // A wake-up raised on this thread while it polled (the turn woke itself, then
    // stopped to hand over events or calls) is not signalled through `wake`.
    if (again || pending) continue
    await new Promise((resolve) => {
      kick = resolve
    })
    kick = null
  }
}

const NO_HANDLER = JSON.stringify({ ok: false, error: 'no JS function answers this call' })

function checkTools(tools) {
  if (tools === undefined || tools === null) return []
  if (!Array.isArray(tools)) throw new TypeError(`'tools' must be an array, got ${describe(tools)}`)
  for (const [i, t] of tools.entries()) {
    if (!t || typeof t.name !== 'string' || !t.name) throw new TypeError(`tools[${i}].name must be a non-empty string`)
    if (typeof t.handler !== 'function') throw new TypeError(`tools[${i}] ('${t.name}'): handler must be a function`)
  }
  return tools
}

/** A trigger given as `{ id }` (the original's shape) or as its id; `undefined` when absent. */
function triggerId(trigger) {
  if (trigger === undefined || trigger === null) return undefined
  if (typeof trigger === 'string') return trigger
  if (typeof trigger === 'object' && typeof trigger.id === 'string') return trigger.id
  throw new TypeError(`a trigger must be { id: string } or a string, got ${describe(trigger)}`)
}

function checkPromptCache(promptCache) {
  if (promptCache === undefined || promptCache === null) return undefined
  if (typeof promptCache !== 'object' || Array.isArray(promptCache)) {
    throw new TypeError(`'promptCache' must be { enabled?, ttl? }, got ${describe(promptCache)}`)
  }
  const { enabled, ttl } = promptCache
  if (enabled !== undefined && typeof enabled !== 'boolean') throw new TypeError(`'promptCache.enabled' must be a boolean, got ${describe(enabled)}`)
  if (ttl !== undefined && typeof ttl !== 'string') throw new TypeError(`'promptCache.ttl' must be a string, got ${describe(ttl)}`)
  return { enabled, ttl }
}


/** `workflow`: a slug, `false` (a plain agent), or absent (`undefined`: the default is looked for). */
function checkWorkflow(workflow) {
  if (workflow === undefined || workflow === null || workflow === false) return workflow ?? undefined
  if (typeof workflow !== 'string' || !workflow.trim()) {
    throw new TypeError(`'workflow' must be a workflow slug or false (a plain agent), got ${describe(workflow)}`)
  }
  return workflow
}

/** One `invoke` input message as `{ role, content }`: a `{ role | type, content }` object, a LangChain message, a `[role, content]` pair or a string (a user message). */
function invokeMessage(m, i) {
  if (typeof m === 'string') return { role: 'user', content: m }
  if (Array.isArray(m) && m.length === 2 && typeof m[0] === 'string') return { role: m[0], content: m[1] }
  if (m && typeof m === 'object') {
    const role = m.role ?? (typeof m._getType === 'function' ? m._getType() : typeof m.getType === 'function' ? m.getType() : m.type)
    if (typeof role === 'string') return { role, content: m.content ?? '' }
  }
  throw new TypeError(`invoke: messages[${i}] must be { role, content }, got ${describe(m)}`)
}

/**
 * What `invoke` resolves to: the session's whole transcript, with the session channels the
 * original's graph state carries (a plain agent: its status, and its exit when a turn failed).
 */
function invokeResult(outcome, plain) {
  const result = { messages: outcome.messages, status: outcome.status }
  if (!plain) {
    result.workflowState = outcome.state
    result.variables = outcome.variables
    result.auditTrail = outcome.auditTrail
    if (outcome.pending?.channel === 'decision') result.pendingDecision = outcome.pending
    if (outcome.pending?.channel === 'input') result.pendingInput = outcome.pending
    if (outcome.rejected !== undefined) result.rejected = outcome.rejected
  }
  if (outcome.exit && outcome.exit.success === false) result.exit = outcome.exit
  if (outcome.usage) result.usage = outcome.usage
  return result
}

/**
 * `hookExecutors` checked: an object of functions. Assembly refuses a built-in kind
 * (`script`, `rubric`) on a governed agent, in the original's order.
 */
function checkHookExecutors(executors) {
  if (executors === undefined || executors === null) return null
  if (typeof executors !== 'object' || Array.isArray(executors)) throw new TypeError(`'hookExecutors' must be an object of kind → function, got ${describe(executors)}`)
  for (const [kind, fn] of Object.entries(executors)) {
    if (typeof fn !== 'function') throw new TypeError(`hookExecutors.${kind} must be a function (hook, ctx, args) => Promise<outcome>, got ${describe(fn)}`)
  }
  return Object.keys(executors).length ? executors : null
}

/**
 * The executors behind the native `hook` calls: `{ hook, ctx, args }` to the executor of the
 * hook's kind; its outcome `{ ok, value, logs, error?, formatted }` goes back as is (a throw
 * or rejection is an execution error, so the state fails closed).
 */
function hookAdapter(executors) {
  return (callJson) =>
    settle(async () => {
      const { hook, ctx, args } = JSON.parse(callJson)
      const kind = Object.keys(hook)[0]
      const outcome = await executors[kind](hook, ctx, args)
      if (!outcome || typeof outcome !== 'object') {
        throw new Error(`hookExecutors.${kind} answered ${describe(outcome)}; expected { ok, value, logs, error?, formatted }`)
      }
      return outcome
    }, 'the hook executor')
}

/** `onMcpElicitation` / `onMcpSampling`: the functions given, or null when neither is. */
function checkMcpHost(params) {
  const host = { elicitation: params.onMcpElicitation ?? null, sampling: params.onMcpSampling ?? null }
  for (const [key, fn] of [['onMcpElicitation', host.elicitation], ['onMcpSampling', host.sampling]]) {
    if (fn !== null && typeof fn !== 'function') throw new TypeError(`'${key}' must be a function, got ${describe(fn)}`)
  }
  return host.elicitation || host.sampling ? host : null
}

/** Answers `{ kind, server, params }` from an MCP server with the host's function for its kind. */
function mcpHostAdapter(host) {
  return (callJson) =>
    settle(async () => {
      const { kind, server, params } = JSON.parse(callJson)
      const fn = host[kind]
      if (!fn) throw new Error(`no handler answers MCP ${kind}`)
      return fn({ server, params })
    }, 'the MCP request handler')
}

/** `cassette`: `{ path, mode: 'record' | 'replay' }`, or undefined when absent. */
function checkCassette(cassette) {
  if (cassette === undefined || cassette === null) return undefined
  if (typeof cassette !== 'object' || Array.isArray(cassette)) {
    throw new TypeError(`'cassette' must be { path, mode: 'record' | 'replay' }, got ${describe(cassette)}`)
  }
  const { path, mode } = cassette
  if (typeof path !== 'string' || !path.trim()) throw new TypeError(`'cassette.path' must be a non-empty file path, got ${describe(path)}`)
  if (mode !== 'record' && mode !== 'replay') throw new TypeError(`'cassette.mode' must be 'record' or 'replay', got ${describe(mode)}`)
  return { path, mode }
}

function checkRecord(value, name) {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'object' || Array.isArray(value)) throw new TypeError(`'${name}' must be an object, got ${describe(value)}`)
  return value
}

/** A whole number in the range `OPTION_RANGES` gives for `name`, or undefined when absent. */
function checkWhole(value, name) {
  if (value === undefined || value === null) return undefined
  const [min, max] = OPTION_RANGES[name]
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    throw new TypeError(`'${name}' must be a whole number from ${min} to ${max}, got ${describe(value)}`)
  }
  return value
}

/** A boolean, or undefined when absent. */
function checkBoolean(value, name) {
  if (value === undefined || value === null) return undefined
  if (typeof value !== 'boolean') throw new TypeError(`'${name}' must be a boolean, got ${describe(value)}`)
  return value
}

/** `telemetry`: `false`, or `{ endpoint?, protocol?, headers?, serviceName?, captureMessageContent?, traceparent? }`. */
function checkTelemetry(value) {
  if (value === undefined || value === null) return { native: undefined, traceparent: null }
  if (value === false) return { native: { enabled: false }, traceparent: null }
  if (typeof value !== 'object' || Array.isArray(value)) throw new TypeError(`'telemetry' must be false or an object, got ${describe(value)}`)
  const { endpoint, protocol, headers, serviceName, captureMessageContent, traceparent } = value
  for (const [name, v] of Object.entries({ endpoint, protocol, serviceName })) {
    if (v !== undefined && v !== null && typeof v !== 'string') throw new TypeError(`'telemetry.${name}' must be a string, got ${describe(v)}`)
  }
  if (traceparent !== undefined && traceparent !== null && typeof traceparent !== 'function') {
    throw new TypeError(`'telemetry.traceparent' must be a function returning the W3C traceparent of the host's active span, got ${describe(traceparent)}`)
  }
  return {
    native: {
      endpoint: endpoint ?? undefined,
      protocol: protocol ?? undefined,
      headers: checkRecord(headers, 'telemetry.headers'),
      serviceName: serviceName ?? undefined,
      captureMessageContent: checkBoolean(captureMessageContent, 'telemetry.captureMessageContent'),
    },
    traceparent: traceparent ?? null,
  }
}

/**
 * Assembles a workflow of a workspace into an agent.
 * @param {import('./agent.d.ts').CreateAgentParams} params
 * @returns {Promise<import('./agent.d.ts').Agent>}
 */
/** The key of an agent's cases engine (`@archmax-ai/harness/testing` drives it). */
const RUN_CASES = Symbol.for('archmax.runCases')
/** The internal option of a case target with a cassette per case (`runTests({ cassettes })`). */
const CASE_CASSETTES = Symbol.for('archmax.caseCassettes')
/** The name `createToolMockMiddleware()` gives its marker (the original's detection handle). */
const TOOL_MOCK_MIDDLEWARE = 'ToolMockMiddleware'

/**
 * `middleware`: whether it wires the tool-mock marker (`agent.toolMocks`). Our mocks are
 * served natively whatever the middleware; any other entry is refused (docs/decisions.md).
 */
function checkMiddleware(middleware) {
  if (middleware === undefined || middleware === null) return false
  if (!Array.isArray(middleware)) throw new TypeError(`'middleware' must be an array, got ${describe(middleware)}`)
  let toolMocks = false
  middleware.forEach((m, i) => {
    if (m && typeof m === 'object' && m.name === TOOL_MOCK_MIDDLEWARE) {
      toolMocks = true
      return
    }
    const name = m && (typeof m === 'object' || typeof m === 'function') && typeof m.name === 'string' && m.name ? `'${m.name}'` : describe(m)
    throw new TypeError(
      `middleware[${i}] (${name}) cannot run inside createAgent: its turns run natively, not through LangChain middleware; only createToolMockMiddleware() is accepted here. To compose LangChain middleware with a workflow, use archmaxMiddleware() from @archmax-ai/harness/deepagents in your own createAgent/createDeepAgent.`,
    )
  })
  return toolMocks
}

/** The options `createAgent` takes: `CreateAgentParams` in agent.d.ts (a test holds the two equal). */
export const AGENT_OPTIONS = Object.freeze([
  'workflow',
  'systemPrompt',
  'workspace',
  'skills',
  'trigger',
  'sessionPath',
  'model',
  'modelFactory',
  'cassette',
  'middleware',
  'defaultModel',
  'tools',
  'essentialTools',
  'onEvent',
  'variables',
  'toolPaths',
  'promptCache',
  'pricing',
  'requestTimeoutMs',
  'streaming',
  'telemetry',
  'maxRetries',
  'maxResponseBytes',
  'maxConcurrentCalls',
  'caps',
  'fallbackModels',
  'policyRules',
  'hookExecutors',
  'images',
  'mcpServers',
  'onMcpElicitation',
  'onMcpSampling',
])

/** The session a model call belongs to for its run config: a child session's root (`<root>~…`). */
function rootSession(sessionId) {
  if (typeof sessionId !== 'string') return undefined
  const tilde = sessionId.indexOf('~')
  return tilde < 0 ? sessionId : sessionId.slice(0, tilde)
}

/** The LangChain run config keys an `invoke`'s config hands every model call of its turn. */
const RUN_CONFIG_KEYS = ['callbacks', 'tags', 'metadata']

/**
 * The tag a sub-workflow child's model text carries in LangGraph-style message streams (with
 * the metadata `archmax_child: true` and `archmax_session_id`), so a chat UI can leave it out.
 */
export const CHILD_TAG = 'archmax:child'

/** The `streamMode`s `agent.stream` answers, as LangGraph names them. */
const STREAM_MODES = ['values', 'messages', 'custom']

/** The metadata of a `messages` chunk: the node, the state and the session, a child's tagged. */
function messageMetadata(event) {
  const child = typeof event.sessionId === 'string' && event.sessionId.includes('~')
  const meta = { langgraph_node: 'model', archmax_state: event.state, archmax_session_id: event.sessionId }
  if (child) Object.assign(meta, { tags: [CHILD_TAG], archmax_child: true })
  return meta
}

/**
 * Yields what `pick(event, push)` pushes for each event the agent emits while `run()` runs
 * (listening from before it starts), then returns what `run` resolved to, or throws what it
 * rejected with. The listener is removed however the iteration ends.
 */
async function* streamWhile(streams, pick, run) {
  const queue = []
  let wakeUp = null
  let settled = null
  const listener = (event) => {
    pick(event, (item) => queue.push(item))
    wakeUp?.()
  }
  streams.add(listener)
  try {
    run().then(
      (value) => (settled = { value }),
      (error) => (settled = { error }),
    ).then(() => wakeUp?.())
    for (;;) {
      while (queue.length) yield queue.shift()
      if (settled) break
      await new Promise((resolve) => (wakeUp = resolve))
      wakeUp = null
    }
  } finally {
    streams.delete(listener)
  }
  if (settled.error) throw settled.error
  return settled.value
}

export async function createAgent(params = {}) {
  if (!params || typeof params !== 'object') throw new TypeError('createAgent needs an options object')
  checkOptionNames(params, AGENT_OPTIONS, 'createAgent')
  const { workspace, model, onEvent, variables, essentialTools, defaultModel, skills, sessionPath } = params
  const workflow = checkWorkflow(params.workflow)
  const systemPrompt = params.systemPrompt ?? undefined
  if (systemPrompt !== undefined && typeof systemPrompt !== 'string') {
    throw new TypeError(`'systemPrompt' must be a string, got ${describe(systemPrompt)}`)
  }
  const cassette = checkCassette(params.cassette)
  const toolMocks = checkMiddleware(params.middleware)
  const caseCassettes = params[CASE_CASSETTES] ?? undefined
  if (caseCassettes !== undefined && caseCassettes !== 'record' && caseCassettes !== 'replay') {
    throw new TypeError(`'cassettes' must be 'record' or 'replay', got ${describe(caseCassettes)}`)
  }
  // A replay answers from the cassette (or each case's): the model, if any, is not asked.
  const replay = cassette?.mode === 'replay' || caseCassettes === 'replay'
  // The run config (`callbacks`, `tags`, `metadata`) of the `invoke` in flight on each session:
  // a LangChain model gets it on every call of that turn, its sub-workflows' included.
  const runConfigs = new Map()
  const configOf = (info) => runConfigs.get(rootSession(info?.sessionId))
  const resolved = replay ? null : resolveModel(model, params.modelFactory, defaultModel, workspace?.rootDir ?? process.cwd(), configOf)
  if (onEvent !== undefined && onEvent !== null && typeof onEvent !== 'function') {
    throw new TypeError(`'onEvent' must be a function, got ${describe(onEvent)}`)
  }
  const tools = checkTools(await normalizeTools(params.tools))
  const useStore = sessionStoreBinding(workspace?.sessionStore)
  let modelFn = resolved
  if (resolved && typeof resolved === 'object') {
    await resolved.ready
    modelFn = resolved.fn
  }
  // `workflow.stream` callers listen beside `onEvent`.
  const streams = new Set()
  const toOnEvent = onEvent ? eventAdapter(onEvent) : null
  // The cases engine's progress (`case-start`, `case-result`) while a run that asked for it is in flight.
  let caseProgress = null
  const handlers = {
    model: modelFn ? modelAdapter(modelFn, () => native) : null,
    tool: tools.length ? toolAdapter(tools, () => native) : null,
    event: (json) => {
      if (caseProgress && typeof json === 'string' && json.startsWith('{"type":"case-')) {
        caseProgress(JSON.parse(json))
        return
      }
      if (toOnEvent) toOnEvent(json)
      if (json && streams.size) {
        const event = JSON.parse(json)
        for (const listener of streams) listener(event)
      }
    },
  }
  // The drive loop calls `handlers` in its own slices; calls from workers come in through these.
  const native = new NativeAgent(sliced(handlers.model), sliced(handlers.tool), onEvent ? handlers.event : null)
  let listening = !!onEvent
  const run = (turn) => drive(turn, handlers).then(unwrap)
  if (useStore) unwrap(useStore(native))
  const hookExecutors = checkHookExecutors(params.hookExecutors)
  if (hookExecutors) {
    handlers.hook = hookAdapter(hookExecutors)
    native.useHookExecutors(Object.keys(hookExecutors), sliced(handlers.hook))
  }
  const mcpHost = checkMcpHost(params)
  if (mcpHost) {
    handlers.mcp = mcpHostAdapter(mcpHost)
    native.useMcpHost(!!mcpHost.elicitation, !!mcpHost.sampling, sliced(handlers.mcp))
  }
  const policyRules = checkPolicyRules(params.policyRules)
  if (policyRules.length) {
    const ask = policyAsk(policyRules)
    unwrap(native.usePolicy(ask, ask, policyRules.length))
  }
  const defaultTrigger = triggerId(params.trigger) ?? 'manual'
  const telemetry = checkTelemetry(params.telemetry)
  // Starts a turn (`begin` makes its native half) under the parent trace context `own`, else
  // the host's, read now, in the caller's context. The start itself waits for a slice of the
  // JS thread (slices.js), as the turn's polls do: a host that starts a thousand sessions in
  // one loop does not hold its event loop for all their starts in a row.
  const start = async (own, begin) => {
    const tp = own ?? telemetry.traceparent?.() ?? null
    if (tp !== null && typeof tp !== 'string') throw new TypeError(`'traceparent' must be a string, got ${describe(tp)}`)
    while (!inSlice()) await nextSlice()
    live()
    native.setTraceparent(tp)
    return run(begin())
  }
  const opened = unwrap(
    native.open({
      trigger: params.trigger === undefined || params.trigger === null ? undefined : defaultTrigger,
      variables: checkRecord(variables, 'variables'),
      toolPaths: checkRecord(params.toolPaths, 'toolPaths'),
      promptCache: checkPromptCache(params.promptCache),
      pricing: checkRecord(params.pricing, 'pricing'),
      requestTimeoutMs: checkWhole(params.requestTimeoutMs, 'requestTimeoutMs'),
      maxRetries: checkWhole(params.maxRetries, 'maxRetries'),
      maxResponseBytes: checkWhole(params.maxResponseBytes, 'maxResponseBytes'),
      maxConcurrentCalls: checkWhole(params.maxConcurrentCalls, 'maxConcurrentCalls'),
      caps: checkRecord(params.caps, 'caps'),
      fallbackModels: params.fallbackModels ?? undefined,
      streaming: checkBoolean(params.streaming, 'streaming'),
      telemetry: telemetry.native,
      cassette,
      caseCassettes,
      images: params.images ?? undefined,
      mcpServers: params.mcpServers ?? undefined,
      rootDir: workspace?.rootDir ?? process.cwd(),
      // A slug must load; omitted, the default is looked for (absent: a plain agent); false: plain.
      workflow: typeof workflow === 'string' ? workflow : undefined,
      ungoverned: workflow === false,
      systemPrompt,
      defaultModel: defaultModel ?? undefined,
      essentialTools: essentialTools ?? undefined,
      skills: skills ?? undefined,
      mounts: workspace?.mounts ?? undefined,
      tools: tools.map((t) => ({
        name: t.name,
        description: t.description ?? '',
        schema: t.schema ?? { type: 'object', properties: {} },
        paths: t.paths ?? undefined,
      })),
    }),
  )
  const seeds = variables ?? {}
  let disposed = false
  const live = () => {
    if (disposed) throw new AgentDisposedError('the agent was disposed')
  }
  // What assembly announced (skills-loaded, warnings), before anything a call emits.
  for (const e of opened.events ?? []) handlers.event(e)
  if (resolved && typeof resolved === 'object') {
    try {
      await resolved.prebuild(opened.models)
    } catch (e) {
      native.dispose()
      throw e
    }
  }
  const runtimeContract = Object.freeze(opened.runtimeContract)
  const plain = opened.plain === true
  const workflowOperations = plain
    ? undefined
    : {
        async send(sessionId, input = {}) {
          live()
          // The original's resume payloads: a decision routes as `decide` does, a delivery as `deliver`.
          if (input?.decision !== undefined && input.decision !== null) return workflowOperations.decide(sessionId, input.decision)
          if (input?.delivery !== undefined && input.delivery !== null) return workflowOperations.deliver(sessionId, input.delivery)
          const vars = { ...seeds, ...(input.variables ?? {}) }
          const trigger = triggerId(input.trigger) ?? defaultTrigger
          return start(input.traceparent, () =>
            native.send(sessionId ?? null, { message: input.message ?? '', trigger, variables: vars }, input.sessionPath ?? sessionPath ?? null),
          )
        },
        /**
         * `send` as an async iterator: the session's events as they happen, then the
         * Outcome (the last item: it has `kind` where events have `type`).
         */
        async *stream(sessionId, input = {}) {
          live()
          if (!listening) {
            native.listen(handlers.event)
            listening = true
          }
          const outcome = yield* streamWhile(streams, (event, push) => {
            if (!sessionId || event.sessionId === sessionId) push(event)
          }, () => workflowOperations.send(sessionId, input))
          yield outcome
        },
        async decide(sessionId, decision) {
          live()
          // `{ target }` as in the original; `{ to }` (the spec's word for an edge) and a bare string too.
          const { target, to, comment } = typeof decision === 'string' ? { target: decision } : (decision ?? {})
          return start(decision?.traceparent, () => native.decide(sessionId, target ?? to ?? '', comment ?? null))
        },
        async reply(sessionId, message) {
          live()
          return start(message?.traceparent, () => native.reply(sessionId, typeof message === 'string' ? message : (message?.message ?? '')))
        },
        async deliver(sessionId, delivery = {}) {
          live()
          const trigger = triggerId(delivery.trigger) ?? ''
          return start(delivery.traceparent, () => native.deliver(sessionId, trigger, delivery.variables ?? null, delivery.message ?? null))
        },
        async resolveSession({ sessionId, trigger, variables, sessionPath: path } = {}) {
          live()
          const id = triggerId(trigger) ?? defaultTrigger
          const vars = { ...seeds, ...(variables ?? {}) }
          return unwrap(await native.resolveSession(sessionId ?? null, id, vars, path ?? sessionPath ?? null))
        },
        resolveTrigger(t) {
          live()
          const id = t?.id ?? defaultTrigger
          return { id, startState: unwrap(native.startState(id)) }
        },
      }
  const agent = {
    runtimeContract,
    workflow: workflowOperations,
    toolMocks,
    /**
     * `invoke` as a stream, LangGraph's way: `values` (the default) yields the state `invoke`
     * resolves to, `messages` yields `[chunk, metadata]` for each piece of text the model
     * shows, `custom` yields the harness's events; several modes yield `[mode, chunk]`.
     */
    async stream(input, options) {
      live()
      const modes = options?.streamMode ?? 'values'
      const list = Array.isArray(modes) ? modes : [modes]
      for (const m of list) {
        if (!STREAM_MODES.includes(m)) throw new TypeError(`agent.stream: streamMode ${describe(m)} is not one of ${STREAM_MODES.join(', ')}`)
      }
      const threadId = options?.configurable?.thread_id
      const sessionId = typeof threadId === 'string' && threadId ? threadId : DEFAULT_SESSION_ID
      const ours = (id) => id === sessionId || (typeof id === 'string' && id.startsWith(`${sessionId}~`))
      const emit = (mode, chunk) => (Array.isArray(modes) ? [mode, chunk] : chunk)
      const lc = list.includes('messages') ? await langChainMessages() : null
      if (!listening) {
        native.listen(handlers.event)
        listening = true
      }
      const listener = (event, push) => {
        if (!ours(event.sessionId)) return
        if (list.includes('custom')) push(emit('custom', event))
        if (list.includes('messages') && event.type === 'agent-text-delta' && event.text) {
          const fields = { content: event.text, ...(event.messageId ? { id: event.messageId } : {}) }
          const chunk = lc?.AIMessageChunk ? new lc.AIMessageChunk(fields) : { type: 'ai', ...fields }
          push(emit('messages', [chunk, messageMetadata(event)]))
        }
      }
      // Listening starts before the turn does: nothing it emits is missed.
      const items = streamWhile(streams, listener, () => agent.invoke(input, options))
      return (async function* () {
        const result = yield* items
        if (list.includes('values')) yield emit('values', result)
      })()
    },
    /**
     * Writes session `sessionId`'s run under its `artifacts/` folder (the workflow's graph,
     * `trajectory`, its metadata, trail and variables): `"<id>/artifacts"`, or `null` after a
     * `warning` event (scope `run-artifacts`) when they could not be written.
     */
    async emitRunArtifacts(sessionId, trajectory, opts) {
      live()
      if (typeof sessionId !== 'string' || !sessionId) throw new TypeError(`emitRunArtifacts needs a session id, got ${describe(sessionId)}`)
      const trail = opts?.trail
      if (trail !== undefined && trail !== null && !Array.isArray(trail)) throw new TypeError(`emitRunArtifacts: 'trail' must be an array of trail steps, got ${describe(trail)}`)
      const answer = native.emitRunArtifacts(sessionId, trajectory ?? null, trail ?? null)
      // The warning of a write that failed, to `onEvent` before the answer.
      for (const e of answer.events ?? []) handlers.event(e)
      return unwrap(answer)
    },
    async invoke(input, config) {
      live()
      if (!input || typeof input !== 'object' || !Array.isArray(input.messages)) {
        throw new TypeError(`invoke's input must be { messages: [{ role, content }...] }, got ${describe(input)}`)
      }
      const messages = input.messages.map(invokeMessage)
      const threadId = config?.configurable?.thread_id
      const nativeInput = { messages }
      if (!plain) {
        nativeInput.trigger = triggerId(input.trigger) ?? defaultTrigger
        nativeInput.variables = { ...seeds, ...(checkRecord(input.variables, 'variables') ?? {}) }
      }
      const sessionId = typeof threadId === 'string' && threadId ? threadId : DEFAULT_SESSION_ID
      const runConfig = config && typeof config === 'object' ? Object.fromEntries(RUN_CONFIG_KEYS.filter((k) => config[k] !== undefined).map((k) => [k, config[k]])) : {}
      const owns = Object.keys(runConfig).length > 0 && !runConfigs.has(sessionId)
      if (owns) runConfigs.set(sessionId, runConfig)
      try {
        const outcome = await start(config?.traceparent, () => native.invoke(sessionId, nativeInput))
        return invokeResult(outcome, plain)
      } finally {
        if (owns) runConfigs.delete(sessionId)
      }
    },
    sessions: {
      async list(options) {
        live()
        if (options !== undefined && options !== null && (typeof options !== 'object' || Array.isArray(options))) {
          throw new TypeError(`sessions.list takes { status?, olderThan?, attention? }, got ${describe(options)}`)
        }
        return unwrap(await native.sessionList(options ?? null))
      },
      async prune(options = {}) {
        live()
        if (options === null || typeof options !== 'object' || Array.isArray(options)) {
          throw new TypeError(`sessions.prune takes { status?, olderThan?, dryRun?, sessionId? }, got ${describe(options)}`)
        }
        return unwrap(await native.sessionPrune(options))
      },
      async get(sessionId) {
        live()
        return unwrap(await native.sessionGet(sessionId))
      },
      async messages(sessionId) {
        live()
        return unwrap(await native.sessionMessages(sessionId))
      },
      async messageCount(sessionId) {
        live()
        return unwrap(await native.sessionMessageCount(sessionId))
      },
      async park(sessionId) {
        live()
        return unwrap(await native.sessionPark(sessionId))
      },
      async delete(sessionId) {
        live()
        return unwrap(await native.sessionDelete(sessionId))
      },
      async seed(sessionId, files) {
        live()
        unwrap(await native.sessionSeed(sessionId, files))
      },
      async history(sessionId) {
        live()
        return unwrap(await native.sessionHistory(sessionId))
      },
      async fork(sessionId, options) {
        live()
        return unwrap(await native.sessionFork(sessionId, options ?? null))
      },
    },
    async getSpecSnapshot(hash) {
      live()
      return unwrap(await native.specSnapshot(String(hash)))
    },
    cancel(sessionId) {
      if (disposed) return false
      return native.cancel(sessionId)
    },
    dispose(sessionId) {
      if (sessionId !== undefined) {
        // One session's resources (and its child sessions'): the agent stays usable.
        if (disposed || typeof sessionId !== 'string') return
        const released = native.disposeSession(sessionId)
        handlers.model?.forget(released)
        return
      }
      if (disposed) return
      disposed = true
      native.dispose()
    },
  }
  // The cases engine over this agent (`@archmax-ai/harness/testing`); not enumerable.
  // `onProgress` gets the run's `case-start`/`case-result` markers instead of `onEvent`.
  Object.defineProperty(agent, RUN_CASES, {
    value: (options, onProgress) => {
      live()
      if (typeof onProgress === 'function') {
        if (!listening) {
          native.listen(handlers.event)
          listening = true
        }
        caseProgress = onProgress
      }
      return run(native.runCases(options ?? {})).finally(() => {
        caseProgress = null
      })
    },
  })
  return agent
}

// ---- Usage: folded from the event stream (pure JS, no native call).

const UNSCOPED = '__unscoped__'

function zeroUsage() {
  return { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 }
}

/** Two summaries added; `costUsd` is present only when one side has it (6 decimals). */
function addSummaries(a, b) {
  const sum = {
    inputTokens: a.inputTokens + b.inputTokens,
    outputTokens: a.outputTokens + b.outputTokens,
    cacheReadTokens: a.cacheReadTokens + b.cacheReadTokens,
    cacheCreationTokens: a.cacheCreationTokens + b.cacheCreationTokens,
  }
  if (a.costUsd !== undefined || b.costUsd !== undefined) {
    sum.costUsd = Math.round(((a.costUsd ?? 0) + (b.costUsd ?? 0)) * 1e6) / 1e6
  }
  return sum
}

/**
 * A usage tracker: pass `handler` as `onEvent`; it folds every `model-usage` event per
 * session (events without one under `"__unscoped__"`) and forwards every event to
 * `onEvent`, when given.
 * @param {{ onEvent?: (event: object) => void }} [options]
 */
export function createUsageTracker(options = {}) {
  const onEvent = options?.onEvent
  if (onEvent !== undefined && onEvent !== null && typeof onEvent !== 'function') {
    throw new TypeError(`'onEvent' must be a function, got ${describe(onEvent)}`)
  }
  const sessions = new Map()
  const count = (n) => (typeof n === 'number' && Number.isFinite(n) ? n : 0)
  return {
    handler(event) {
      if (event && event.type === 'model-usage') {
        const key = event.sessionId ?? UNSCOPED
        const call = {
          inputTokens: count(event.inputTokens),
          outputTokens: count(event.outputTokens),
          cacheReadTokens: count(event.cacheReadTokens),
          cacheCreationTokens: count(event.cacheCreationTokens),
        }
        if (typeof event.costUsd === 'number') call.costUsd = event.costUsd
        sessions.set(key, addSummaries(sessions.get(key) ?? zeroUsage(), call))
      }
      onEvent?.(event)
    },
    totals(sessionId) {
      if (sessionId !== undefined) return { ...(sessions.get(sessionId) ?? zeroUsage()) }
      return [...sessions.values()].reduce(addSummaries, zeroUsage())
    },
    bySession() {
      return new Map([...sessions].map(([id, s]) => [id, { ...s }]))
    },
    reset(sessionId) {
      if (sessionId === undefined) sessions.clear()
      else sessions.delete(sessionId)
    },
  }
}

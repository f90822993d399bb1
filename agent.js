// `createAgent`: a workflow run by the Rust harness, driven from JS.
// Hand-written (index.js is generated). The native `NativeAgent` speaks JSON
// text with its callbacks; this module adapts plain JS functions to it, never
// lets a callback's throw cross into Rust, and raises the harness's refusals
// as the original's error classes.
import { NativeAgent } from './index.js'

/** Base of every error `createAgent` and its agent raise: `name` and `code` are the class name. */
export class HarnessError extends Error {
  constructor(message, code) {
    super(message)
    this.name = code ?? new.target.name
    this.code = code ?? new.target.name
  }
}

const CLASS_NAMES = [
  'WorkflowLoadError',
  'WorkflowDisabledError',
  'UnknownTriggerError',
  'ReservedToolNameError',
  'ToolPathsError',
  'InvalidVariableNameError',
  'MountCollisionError',
  'SessionStoreIdError',
  'SessionStoreError',
  'SessionNotParkedError',
  'InvalidDecisionTargetError',
  'EmptyMessageError',
  'SessionNotAwaitingInputError',
  'MissingDeliveryTriggerError',
  'SessionNotResumableError',
  'SessionParkedError',
  'AgentDisposedError',
]

/** The error classes by name; each `extends HarnessError` (so `Error`). */
export const errors = Object.fromEntries(
  CLASS_NAMES.map((name) => [
    name,
    { [name]: class extends HarnessError { constructor(message) { super(message, name) } } }[name],
  ]),
)
export const {
  WorkflowLoadError,
  WorkflowDisabledError,
  UnknownTriggerError,
  ReservedToolNameError,
  ToolPathsError,
  InvalidVariableNameError,
  MountCollisionError,
  SessionStoreIdError,
  SessionStoreError,
  SessionNotParkedError,
  InvalidDecisionTargetError,
  EmptyMessageError,
  SessionNotAwaitingInputError,
  MissingDeliveryTriggerError,
  SessionNotResumableError,
  SessionParkedError,
  AgentDisposedError,
} = errors

/** Unwraps a native `{ ok, value | code, message }` answer, raising its error class. */
function unwrap(result) {
  if (result.ok) return result.value
  const Cls = errors[result.code]
  if (Cls) throw Object.assign(new Cls(result.message), result.fields ?? {})
  if (result.code === 'TypeError') throw new TypeError(result.message)
  throw new Error(result.message)
}

/** What a JS value is, for error texts. */
function describe(value) {
  if (value === null) return 'null'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value).slice(0, 40)}`
}

function errorText(e) {
  if (e instanceof Error) return e.message || e.name
  return `a non-Error value (${describe(e)})`
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

function modelAdapter(model) {
  return (requestJson) =>
    settle(() => {
      const request = JSON.parse(requestJson)
      return model(request)
    }, 'the model function')
}

function toolAdapter(tools) {
  const byName = new Map(tools.map((t) => [t.name, t]))
  return (callJson) =>
    settle(async () => {
      const { name, args, sessionId, state } = JSON.parse(callJson)
      const tool = byName.get(name)
      if (!tool) throw new Error(`no handler for tool '${name}'`)
      return tool.handler(args ?? {}, { sessionId, state, toolName: name })
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

function checkTools(tools) {
  if (tools === undefined || tools === null) return []
  if (!Array.isArray(tools)) throw new TypeError(`'tools' must be an array, got ${describe(tools)}`)
  for (const [i, t] of tools.entries()) {
    if (!t || typeof t.name !== 'string' || !t.name) throw new TypeError(`tools[${i}].name must be a non-empty string`)
    if (typeof t.handler !== 'function') throw new TypeError(`tools[${i}] ('${t.name}'): handler must be a function`)
  }
  return tools
}

/**
 * Assembles a workflow of a workspace into an agent.
 * @param {import('./agent.d.ts').CreateAgentParams} params
 * @returns {Promise<import('./agent.d.ts').Agent>}
 */
export async function createAgent(params) {
  if (!params || typeof params !== 'object') throw new TypeError('createAgent needs an options object')
  const { workspace, model, onEvent, variables, essentialTools, defaultModel, skills, sessionPath } = params
  const workflow = params.workflow ?? 'order-lookup'
  if (typeof workflow !== 'string' || !workflow) {
    throw new TypeError("'workflow' must be a workflow slug (a plain ungoverned agent, workflow: false, is not supported yet)")
  }
  if (model !== undefined && model !== null && typeof model !== 'function') {
    throw new TypeError(`'model' must be a function, got ${describe(model)}`)
  }
  if (onEvent !== undefined && onEvent !== null && typeof onEvent !== 'function') {
    throw new TypeError(`'onEvent' must be a function, got ${describe(onEvent)}`)
  }
  const tools = checkTools(params.tools)
  const native = new NativeAgent(
    model ? modelAdapter(model) : null,
    tools.length ? toolAdapter(tools) : null,
    onEvent ? eventAdapter(onEvent) : null,
  )
  unwrap(
    native.open({
      rootDir: workspace?.rootDir ?? process.cwd(),
      workflow,
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
  const defaultTrigger = params.trigger?.id ?? 'manual'
  // The default trigger must start somewhere (UnknownTriggerError at assembly).
  if (params.trigger) unwrap(native.startState(defaultTrigger))
  let disposed = false
  const live = () => {
    if (disposed) throw new AgentDisposedError('the agent was disposed')
  }
  return {
    workflow: {
      async send(sessionId, input = {}) {
        live()
        const vars = { ...seeds, ...(input.variables ?? {}) }
        return unwrap(
          await native.send(
            sessionId ?? null,
            { message: input.message ?? '', trigger: input.trigger ?? defaultTrigger, variables: vars },
            sessionPath ?? null,
          ),
        )
      },
      async decide(sessionId, decision) {
        live()
        const { to, comment } = typeof decision === 'string' ? { to: decision } : (decision ?? {})
        return unwrap(await native.decide(sessionId, to ?? '', comment ?? null))
      },
      async reply(sessionId, message) {
        live()
        return unwrap(await native.reply(sessionId, typeof message === 'string' ? message : (message?.message ?? '')))
      },
      async deliver(sessionId, delivery = {}) {
        live()
        return unwrap(
          await native.deliver(sessionId, delivery.trigger ?? '', delivery.variables ?? null, delivery.message ?? null),
        )
      },
      resolveSession({ sessionId, trigger = defaultTrigger, variables, sessionPath: path = sessionPath } = {}) {
        live()
        return unwrap(native.resolveSession(sessionId ?? null, trigger, variables ?? null, path ?? null))
      },
      resolveTrigger(t) {
        live()
        const id = t?.id ?? defaultTrigger
        return { id, startState: unwrap(native.startState(id)) }
      },
    },
    sessions: {
      async list() {
        live()
        return unwrap(native.sessionIds())
      },
      async get(sessionId) {
        live()
        return unwrap(native.sessionState(sessionId))
      },
    },
    cancel(sessionId) {
      if (disposed) return false
      return native.cancel(sessionId)
    },
    dispose() {
      if (disposed) return
      disposed = true
      native.dispose()
    },
  }
}

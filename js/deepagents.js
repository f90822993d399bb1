// `@archmax-ai/harness/deepagents`: the whole workflow as a LangChain agent middleware, for
// `createDeepAgent` (deepagents) and LangChain's `createAgent`.
//
// LangGraph owns the loop (model node, tool node, checkpoints, interrupts); the Rust harness
// owns the run (state, variables, trail, usage, parks, hooks, rubrics, budgets, the
// workspace, all kept in its session store under the LangGraph `thread_id`). The two meet
// as two coroutines: each thread's harness turn is a `createAgent` turn whose model
// function waits for LangGraph's next model call, and whose host tools wait for LangGraph's
// tool call of the same id. So every rule the runtime applies to a `createAgent` turn
// applies here unchanged, and the model sees exactly what the runtime would show it.
//
// No dependency on LangChain: the middleware is the plain object `createMiddleware` builds
// (its brand is a registered symbol); `@langchain/core/messages` and
// `@langchain/langgraph`'s `interrupt` are imported from the host's install when used.
import { randomUUID } from 'node:crypto'
import { CHILD_TAG, createAgent, WorkflowLoadError } from './agent.js'
import { Governance } from './governance.js'
import { DEFAULT_SESSION_ID, builtinTools } from './native.js'
import {
  checkOptionNames,
  contentText,
  describe,
  fromLangChainMessage,
  jsonSchemaOf,
  langChainMessages,
  langChainModelFunction,
  optionalImport,
  toLangChainMessages,
} from './langchain.js'

/** `createMiddleware`'s brand (`Symbol.for`, so any copy of `langchain` recognises it). */
const MIDDLEWARE_BRAND = Symbol.for('AgentMiddleware')

/**
 * Tools the runtime runs itself, on the session's workspace (the harness's own list): Deep
 * Agents' file tools and `write_todos`, the runtime's file operations, and every `archmax_*`
 * control. A request's other tools (`task`, `execute`, the host's) become the harness's host
 * tools.
 */
const RUNTIME_TOOLS = new Set(builtinTools().map((t) => t.name))

/** The `createAgent` options the middleware passes through (`ArchmaxMiddlewareOptions` in deepagents.d.ts). */
const PASSED = [
  'skills',
  'systemPrompt',
  'trigger',
  'variables',
  'essentialTools',
  'toolPaths',
  'policyRules',
  'hookExecutors',
  'onEvent',
  'promptCache',
  'pricing',
  'defaultModel',
  'images',
]

/** The options `archmaxMiddleware` takes. */
const OPTIONS = Object.freeze(['workflow', 'workspace', 'rubricModel', ...PASSED])

/** A promise with its settle functions. */
function deferred() {
  let resolve
  let reject
  const promise = new Promise((res, rej) => {
    resolve = res
    reject = rej
  })
  return { promise, resolve, reject }
}

/** A LangChain message's type (`human`, `ai`, `tool`, …), classes or plain objects. */
function messageType(m) {
  if (!m || typeof m !== 'object') return undefined
  if (typeof m.getType === 'function') return m.getType()
  if (typeof m._getType === 'function') return m._getType()
  return m.type ?? m.role
}

/** The text of the last human message of a LangGraph state. */
function lastHumanText(messages) {
  for (let i = (messages?.length ?? 0) - 1; i >= 0; i--) {
    const type = messageType(messages[i])
    if (type === 'human' || type === 'user') return contentText(messages[i].content)
  }
  return ''
}

/** What a tool answered through LangGraph (a ToolMessage, a Command carrying one, text, a value) as text. */
function toolText(out) {
  if (out === undefined || out === null) return ''
  if (typeof out === 'string') return out
  const update = out.update ?? out.lg_update
  if (update && Array.isArray(update.messages)) {
    const tool = update.messages.findLast((m) => messageType(m) === 'tool')
    if (tool) return contentText(tool.content)
  }
  if (messageType(out) === 'tool' || 'content' in out) return contentText(out.content)
  return JSON.stringify(out)
}

/** One thread's harness turn in flight, seen from LangGraph. */
class Live {
  constructor() {
    /** Steps the turn produced that the model node has not taken: model requests, then its end. */
    this.steps = []
    this.waiting = null
    /** The current answer's tool calls by id: `{ result, host }` deferreds. */
    this.calls = new Map()
    /** Host tools running (a Deep Agents `task` runs a subagent graph meanwhile). */
    this.hostBusy = 0
  }
  push(step) {
    if (this.waiting) {
      const w = this.waiting
      this.waiting = null
      w.resolve(step)
    } else this.steps.push(step)
  }
  next() {
    if (this.steps.length) return Promise.resolve(this.steps.shift())
    this.waiting = deferred()
    return this.waiting.promise
  }
  /** Settles the calls whose tool messages `messages` holds. */
  settle(messages) {
    for (const m of messages ?? []) {
      if (m?.role !== 'tool') continue
      const call = this.calls.get(m.tool_call_id)
      if (call) call.result.resolve({ text: contentText(m.content), error: m.governance_blocked === true })
    }
  }
  /** Settles every call still open: the turn ended before it ran. */
  abandon(why) {
    for (const call of this.calls.values()) call.result.resolve({ text: why, error: true })
  }
}

/** Why a turn still in flight is ended when LangGraph's run ends first (another middleware jumped to the end, a model's message replaced an earlier one, …). */
const RUN_ENDED = "LangGraph's run ended before the workflow's turn did"


/** The thread a LangGraph call belongs to (`config.configurable.thread_id`, else the default session id). */
function threadOf(runtime) {
  const id = runtime?.configurable?.thread_id
  return id === undefined || id === null || id === '' ? DEFAULT_SESSION_ID : String(id)
}

/**
 * Whether the node's next `interrupt()` was answered in an earlier run of the node: LangGraph
 * keeps a task's answered resume values in its scratchpad (`__pregel_scratchpad.resume`) and
 * hands them back in order when the node runs again.
 */
function answeredBefore(runtime) {
  const pad = runtime?.configurable?.__pregel_scratchpad
  if (!pad || !Array.isArray(pad.resume) || typeof pad.interruptCounter !== 'number') return false
  return pad.interruptCounter + 1 < pad.resume.length
}

/** Whether two park records are the same park (a reply keeps it; a decision or a new wait makes another). */
function samePark(a, b) {
  const key = (p) => JSON.stringify([p.channel, p.state, p.seq, p.createdAt, p.parkedAt])
  return Boolean(a && b) && key(a) === key(b)
}

/**
 * `ai` as LangGraph appends it: a message whose id one of `messages` has already would
 * replace that message in the graph's state instead (a model reusing its ids), so it gets a
 * fresh one.
 */
function appendable(ai, messages) {
  const id = ai?.id
  if (typeof id !== 'string' || !id || !(messages ?? []).some((m) => m?.id === id)) return ai
  const fresh = `${id}-${randomUUID()}`
  const Cls = ai.constructor
  if (typeof Cls !== 'function' || Cls === Object) return { ...ai, id: fresh }
  const { content, tool_calls, invalid_tool_calls, additional_kwargs, response_metadata, usage_metadata, name } = ai
  return new Cls({ content, tool_calls, invalid_tool_calls, additional_kwargs, response_metadata, usage_metadata, name, id: fresh })
}

/** The LangChain run config of a sub-workflow child's model call: tags and metadata a chat UI filters on. */
function childConfig(sessionId) {
  return () => ({ tags: [CHILD_TAG], metadata: { archmax_child: true, archmax_session_id: sessionId } })
}

/** The tag of a sub-workflow child's model calls in LangGraph's streams (`streamMode: "messages"` metadata). */
export { CHILD_TAG }

function parked(status) {
  return status === 'awaiting_decision' || status === 'awaiting_input'
}

class Bridge {
  constructor(options) {
    this.options = options
    this.agent = null
    this.threads = new Map()
    /** Host tool instances by name (for a script's call, which has no LangGraph call). */
    this.tools = new Map()
    this.model = null
    /** Per thread, the park a resume value last answered (a reply leaves it in place: the run's end raises it no more). */
    this.answered = new Map()
    /** Per thread, a resume value taken before the harness was assembled, for the model node. */
    this.resumes = new Map()
  }

  /** The harness agent, assembled on the first call with the request's host tools. */
  agentFor(request) {
    this.agent ??= this.#assemble(request.tools ?? [])
    return this.agent
  }

  async #assemble(tools) {
    const host = []
    for (const t of tools) {
      const name = t?.name ?? t?.function?.name
      if (typeof name !== 'string' || RUNTIME_TOOLS.has(name) || name.startsWith('archmax_')) continue
      this.tools.set(name, t)
      host.push({
        name,
        description: t.description ?? t.function?.description ?? '',
        schema: await jsonSchemaOf(t.schema ?? t.function?.parameters, `the tool '${name}'`),
        handler: (args, context) => this.#hostCall(name, args, context),
      })
    }
    const o = this.options
    const passed = Object.fromEntries(PASSED.filter((k) => o[k] !== undefined).map((k) => [k, o[k]]))
    return createAgent({
      ...passed,
      workflow: o.workflow,
      workspace: o.workspace,
      model: (request, info) => this.#modelCall(request, info),
      tools: host,
    })
  }

  /** The runtime asks for a model answer: the agent's waits for LangGraph's model node. */
  #modelCall(request, info) {
    if (info?.role === 'rubric') {
      const grader = this.options.rubricModel ?? this.model
      if (!grader) throw new Error('a rubric needs a model: pass rubricModel to archmaxMiddleware')
      return langChainModelFunction(grader)(request)
    }
    const live = this.threads.get(info?.sessionId)
    if (!live) {
      // A sub-workflow's child session (no thread of its own): the agent's model answers it,
      // tagged so a chat UI streaming LangGraph's messages can leave its text out.
      if (!this.model) throw new Error(`no LangGraph model call waits for session '${info?.sessionId}'`)
      return langChainModelFunction(this.model, childConfig(info?.sessionId))(request)
    }
    live.settle(request.messages)
    const answer = deferred()
    live.push({ kind: 'model', request, answer })
    return answer.promise
  }

  /** The runtime runs a host tool: the model's call waits for LangGraph's tool call of its id. */
  async #hostCall(name, args, context) {
    const live = this.threads.get(context.sessionId)
    const call = context.callId === undefined ? undefined : live?.calls.get(context.callId)
    if (!call) {
      // A call from `archmax_eval` code or a hook: no LangGraph tool call stands for it.
      const tool = this.tools.get(name)
      if (typeof tool?.invoke !== 'function') throw new Error(`'${name}' cannot be called from here`)
      return toolText(await tool.invoke(args))
    }
    const answer = deferred()
    call.answer = answer
    call.host.resolve({ args, answer })
    return answer.promise
  }

  /** Starts a harness call (send, decide, deliver, reply) on `thread`. */
  #start(thread, agent, run) {
    const live = new Live()
    this.threads.set(thread, live)
    const end = async (outcome, error) => {
      let messages = []
      try {
        messages = await agent.sessions.messages(thread)
      } catch {
        // The transcript is only read to answer the calls still open.
      }
      live.settle(messages)
      live.abandon(error ? `Not run: the turn failed (${error.message}).` : 'Not run: the turn ended first.')
      live.push({ kind: 'end', outcome, error })
    }
    Promise.resolve()
      .then(run)
      .then(
        (outcome) => end(outcome, null),
        (error) => end(null, error),
      )
    return live
  }

  /**
   * The interrupt payload of a parked session: the park record the harness persisted for
   * it, with the state's instructions and approvers (so the same after a restart), and the
   * session id.
   */
  async #parkRecord(agent, thread) {
    const park = await agent.sessions.park(thread)
    if (!park) throw new Error(`session '${thread}' is not parked`)
    return { sessionId: thread, ...park }
  }

  /** The harness call a resume value makes on a parked session. */
  #resume(agent, thread, channel, value) {
    if (channel === 'decision') {
      if (typeof value === 'string') return () => agent.workflow.decide(thread, { target: value })
      if (value && typeof value === 'object' && (value.target !== undefined || value.to !== undefined)) {
        return () => agent.workflow.decide(thread, value)
      }
      if (value && typeof value.message === 'string') return () => agent.workflow.reply(thread, value.message)
    } else if (value && typeof value === 'object' && value.trigger !== undefined) {
      return () => agent.workflow.deliver(thread, value)
    }
    const want = channel === 'decision' ? '{ target, comment? } (or { message } to reply)' : '{ trigger, variables?, message? }'
    throw new TypeError(`resuming session '${thread}' parked for a ${channel} needs ${want}, got ${describe(value)}`)
  }

  /**
   * Raises the session's park as an `interrupt()` of the running node and starts the harness
   * call its resume value makes; again for each park the resumed turn lands on before it asks
   * the model anything. Each park is its own interrupt: LangGraph runs an interrupted node again
   * from the start on every resume, answering its earlier interrupts with their earlier values,
   * which the harness has applied already, so only the new one applies. Answers the live turn
   * once it waits for a model answer, else `{ outcome }` of the turn that ended without one.
   */
  async #raiseParks(runtime, agent, thread) {
    const { interrupt } = (await optionalImport('@langchain/langgraph')) ?? {}
    if (typeof interrupt !== 'function') throw new Error('a park needs @langchain/langgraph (its interrupt) installed')
    for (;;) {
      const payload = await this.#parkRecord(agent, thread)
      const replayed = answeredBefore(runtime)
      const value = interrupt(payload)
      if (replayed) continue
      const live = this.#resumeWith(agent, thread, payload, value)
      const step = await live.next()
      if (step.kind !== 'end') {
        live.steps.unshift(step)
        return { live }
      }
      this.threads.delete(thread)
      if (step.error) throw step.error
      if (parked(step.outcome?.status) && !samePark(step.outcome.pending, payload)) continue
      return { outcome: step.outcome }
    }
  }

  /** Starts the harness call `value` makes on the park `payload` (a `TypeError` when it cannot take it). */
  #resumeWith(agent, thread, payload, value) {
    const run = this.#resume(agent, thread, payload.channel, value)
    this.answered.set(thread, payload)
    return this.#start(thread, agent, run)
  }

  /** LangGraph's model node: answers the turn's next model request, starting or resuming a turn. */
  async wrapModelCall(request, handler) {
    const thread = threadOf(request.runtime)
    const current = this.threads.get(thread)
    // Model calls of a subagent a host tool runs (Deep Agents' `task`) are not the workflow's.
    if (current?.hostBusy) return handler(request)
    this.model = request.model
    const agent = await this.agentFor(request)
    const give = (ai) => appendable(ai, request.messages)
    let last = null
    for (;;) {
      let live = this.threads.get(thread)
      if (!live) {
        if (last) return give(last)
        const summary = await agent.sessions.get(thread)
        if (this.resumes.has(thread)) {
          // A resume value the run's end took before this process assembled the harness.
          const value = this.resumes.get(thread)
          this.resumes.delete(thread)
          live = this.#resumeWith(agent, thread, await this.#parkRecord(agent, thread), value)
        } else if (summary && parked(summary.status)) {
          // A message meets a park: the park is this node's interrupt.
          const raised = await this.#raiseParks(request.runtime, agent, thread)
          if (raised.outcome) return give(await this.#endMessage(raised.outcome))
          live = raised.live
        } else {
          const message = lastHumanText(request.messages)
          live = this.#start(thread, agent, () => agent.workflow.send(thread, { message }))
        }
      }
      const step = await live.next()
      if (step.kind === 'end') {
        this.threads.delete(thread)
        if (step.error) throw step.error
        // A turn that parked after a text answer hands the text to the graph; the park is
        // raised where the run ends (afterAgent), so the text stays in LangGraph's messages.
        // One that parked without a word is raised here.
        const again = parked(step.outcome?.status) && !samePark(step.outcome.pending, this.answered.get(thread))
        if (again && !last) continue
        return give(last ?? (await this.#endMessage(step.outcome)))
      }
      let ai
      try {
        ai = await this.#answer(request, handler, live, step)
      } catch (e) {
        // The model failed: so does the turn; wait for it to settle before the error surfaces.
        await live.next()
        this.threads.delete(thread)
        throw e
      }
      if (ai.tool_calls?.length) return give(ai)
      // A text answer: the turn may end, or ask again (a nudge); the graph sees the last one.
      last = ai
    }
  }

  /**
   * Before a run: a workflow that does not load fails here as the typed `WorkflowLoadError`
   * (until the harness is assembled), and a turn an earlier run left in flight (it threw, as at
   * LangGraph's recursion limit) is settled first.
   */
  async beforeAgent(_state, runtime) {
    const thread = threadOf(runtime)
    const live = this.threads.get(thread)
    if (live?.hostBusy) return undefined
    if (!this.agent) checkLoads(this.options)
    if (live) await this.#settle(thread, live)
    return undefined
  }

  /**
   * Where LangGraph's run ends: a turn still in flight is settled (ended and committed) before
   * `invoke` resolves; a park the run's turn ended in is raised as an interrupt here, after
   * the model's text reached the graph's messages, and a resume value continues the turn in
   * the model node.
   */
  async afterAgent(_state, runtime) {
    const thread = threadOf(runtime)

    const live = this.threads.get(thread)
    if (live?.hostBusy) return undefined
    if (live) {
      await this.#settle(thread, live)
      return undefined
    }
    if (!this.agent) return this.#resumeLater(runtime, thread)
    const agent = await this.agent
    const summary = await agent.sessions.get(thread)
    if (!summary || !parked(summary.status)) return undefined
    if (samePark(await agent.sessions.park(thread), this.answered.get(thread))) return undefined
    const raised = await this.#raiseParks(runtime, agent, thread)
    if (raised.live) return { jumpTo: 'model' }
    return { messages: [await this.#endMessage(raised.outcome)] }
  }

  /**
   * A resumed run's end in a process that has not assembled the harness (it needs the model
   * node's tools): the resume values LangGraph hands back are taken here (the earlier ones
   * were applied by earlier runs), and the last, the new answer, is applied by the model node.
   */
  async #resumeLater(runtime, thread) {
    const pad = runtime?.configurable?.__pregel_scratchpad
    // The answers of earlier runs, and this run's (a `Command` resume not tied to an interrupt id).
    const given = (Array.isArray(pad?.resume) ? pad.resume.length : 0) + (pad?.nullResume === undefined ? 0 : 1)
    if (!given) return undefined
    const { interrupt } = (await optionalImport('@langchain/langgraph')) ?? {}
    if (typeof interrupt !== 'function') throw new Error('a park needs @langchain/langgraph (its interrupt) installed')
    let value
    for (let i = 0; i < given; i++) value = interrupt(undefined)
    this.resumes.set(thread, value)
    return { jumpTo: 'model' }
  }

  /** Ends a turn LangGraph no longer drives: every request it makes fails with the reason, and the turn is cancelled. */
  async #settle(thread, live) {
    const agent = await this.agent
    const why = new Error(RUN_ENDED)
    for (const call of live.calls.values()) call.answer?.reject(why)
    agent.cancel(thread)
    for (;;) {
      const step = await live.next()
      if (step.kind === 'end') break
      step.answer.reject(why)
    }
    this.threads.delete(thread)
  }

  /** One model call for the runtime's request, through the rest of LangGraph's chain. */
  async #answer(request, handler, live, step) {
    const lc = await langChainMessages()
    const [system, ...rest] = step.request.messages
    const prompt = [system?.role === 'system' ? contentText(system.content) : '', request.systemPrompt ?? '']
      .filter(Boolean)
      .join('\n\n')
    let ai
    try {
      ai = await handler({
        ...request,
        systemPrompt: prompt,
        messages: toLangChainMessages(system?.role === 'system' ? rest : step.request.messages, lc),
        tools: step.request.tools ?? [],
      })
    } catch (e) {
      step.answer.reject(e)
      throw e
    }
    for (const [i, c] of (ai.tool_calls ?? []).entries()) {
      c.id ||= `call_${i}_${Date.now().toString(36)}`
      live.calls.set(c.id, { result: deferred(), host: deferred() })
    }
    step.answer.resolve(fromLangChainMessage(ai))
    return ai
  }

  async #endMessage(outcome) {
    const lc = await langChainMessages()
    const failed = outcome?.exit && outcome.exit.success === false ? outcome.exit.reason : undefined
    const text = failed ?? outcome?.rejected ?? outcome?.reply ?? ''
    return lc?.AIMessage ? new lc.AIMessage({ content: text }) : { type: 'ai', content: text }
  }

  /** LangGraph's tool node: the runtime's result for the call, running a host tool when the runtime does. */
  async wrapToolCall(request, handler) {
    const thread = threadOf(request.runtime)
    const live = this.threads.get(thread)
    const id = request.toolCall?.id
    const call = live?.calls.get(id)
    if (!call) {
      if (live?.hostBusy) return handler(request)
      return this.#toolMessage(request, { text: `Not run: '${request.toolCall?.name}' is not a call of this workflow turn.`, error: true })
    }
    const first = await Promise.race([call.host.promise.then((host) => ({ host })), call.result.promise.then((result) => ({ result }))])
    if (first.host) {
      const { args, answer } = first.host
      live.hostBusy++
      try {
        answer.resolve(toolText(await handler({ ...request, toolCall: { ...request.toolCall, args } })))
      } catch (e) {
        answer.reject(e)
      } finally {
        live.hostBusy--
      }
    }
    const result = first.result ?? (await call.result.promise)
    live.calls.delete(id)
    return this.#toolMessage(request, result)
  }

  async #toolMessage(request, { text, error }) {
    const lc = await langChainMessages()
    const fields = {
      content: text,
      tool_call_id: request.toolCall?.id ?? '',
      name: request.toolCall?.name,
      status: error ? 'error' : 'success',
    }
    return lc?.ToolMessage ? new lc.ToolMessage(fields) : { type: 'tool', ...fields }
  }

  /** The harness agent behind the middleware (assembled on the first model call). */
  async harness() {
    if (!this.agent) throw new Error('the harness is assembled on the first model call; no call has been made yet')
    return this.agent
  }
}

/**
 * Throws the `WorkflowLoadError` `createAgent` would raise when the workflow does not load, so
 * a wrong name or a broken file fails where the middleware is built (or, before the harness
 * is assembled, where an invoke starts), not as a `MiddlewareError` of LangGraph's model node.
 * Every other assembly error is `createAgent`'s to raise with the agent's tools in hand.
 */
function checkLoads(options) {
  const workspace = options.workspace ?? {}
  try {
    Governance.fromWorkspace({ rootDir: workspace.rootDir, workflow: options.workflow, skills: options.skills, mounts: workspace.mounts })
  } catch (e) {
    if (e instanceof WorkflowLoadError) throw e
  }
}

/**
 * The workflow as a LangChain agent middleware: `createDeepAgent({ model, middleware:
 * [archmaxMiddleware({ workflow, workspace })] })`. Each LangGraph `thread_id` is a harness
 * session; a park becomes an `interrupt()` whose payload is the park record, and
 * `new Command({ resume: { target, comment } })` decides it.
 */
export function archmaxMiddleware(options) {
  if (!options || typeof options !== 'object') {
    throw new TypeError('archmaxMiddleware needs an options object { workflow, workspace? }')
  }
  checkOptionNames(options, OPTIONS, 'archmaxMiddleware')
  if (typeof options.workflow !== 'string' || options.workflow === '') {
    throw new TypeError(`archmaxMiddleware: 'workflow' must be a workflow slug, got ${describe(options.workflow)}`)
  }
  checkLoads(options)
  const bridge = new Bridge(options)
  return {
    [MIDDLEWARE_BRAND]: true,
    name: 'ArchmaxMiddleware',
    beforeAgent: (state, runtime) => bridge.beforeAgent(state, runtime),
    wrapModelCall: (request, handler) => bridge.wrapModelCall(request, handler),
    wrapToolCall: (request, handler) => bridge.wrapToolCall(request, handler),
    afterAgent: { canJumpTo: ['model'], hook: (state, runtime) => bridge.afterAgent(state, runtime) },
    /** The harness agent (sessions, events, dispose) once the first model call assembled it. */
    harness: () => bridge.harness(),
    /** Releases the harness agent's callbacks so Node can exit; never throws (an assembly that failed has nothing to release). */
    async dispose() {
      const agent = await bridge.agent?.catch(() => null)
      agent?.dispose()
    },
  }
}

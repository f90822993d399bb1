// A typed consumer of the package: `npx tsc -p __test__` must pass.
// @langchain/core's declarations name Symbol.asyncDispose (not in the es2022 lib).
/// <reference lib="esnext.disposable" />
import {
  SIGNATURE_TYPES,
  isSlug,
  parseMachineSpec,
  runCli,
  signatureForTrigger,
  signatureValueIssues,
  validateSpec,
  validateWorkflow,
  type Diagnostic,
  type SpecValidation,
  type ValidationResult,
} from '@archmax-ai/harness'
import { validateSpec as validateSpecFromSpec, type Workflow } from '@archmax-ai/harness/spec'
import { runCli as runCliFromCli } from '@archmax-ai/harness/cli'

const checked: SpecValidation = validateSpec('states:\n  a:\n    triggers: { manual: }\n')
const ok: boolean = checked.ok
const spec: Workflow | undefined = checked.spec
const stateNames: string[] = spec ? Object.keys(spec.states) : []

function where(d: Diagnostic): string {
  const file: string | undefined = d.file
  const line: number | undefined = d.line
  const column: number | undefined = d.column
  return file && line !== undefined ? `${file}:${line}:${column ?? 0}` : (d.field ?? '')
}

const result: ValidationResult = validateWorkflow({ rootDir: 'examples/customer-support', workflow: 'order-lookup' })
const valid: boolean = result.valid
const rootDir: string | undefined = result.rootDir
const severities: Array<'error' | 'warning'> = result.diagnostics.map((d) => d.severity)
const locations: string[] = result.diagnostics.map(where)

const parsed = parseMachineSpec('states: {}')
const parsedOutcome: string = parsed.ok ? Object.keys(parsed.spec.states).join(',') : parsed.issues[0]?.message ?? ''

const sig = signatureForTrigger(checked.spec ?? {}, 'manual')
const requires: string[] = sig ? sig.requires.map((r) => r.name) : []
const issues = signatureValueIssues(['order_id', { name: 'qty', type: 'integer' }], { qty: 1.5 })
const issueText: string[] = issues.map((i) => (i.kind === 'invalid' ? `${i.name}: ${i.found}` : i.message))

const slug: boolean = isSlug('order-lookup')
const types: string[] = SIGNATURE_TYPES
const same: SpecValidation = validateSpecFromSpec('states: {}')
const exitCode: Promise<number> = runCli(['--help'])
const exitCode2: Promise<number> = runCliFromCli(['help'])

// @ts-expect-error validateSpec takes a YAML string
validateSpec(42)

export const consumed = [ok, stateNames, valid, rootDir, severities, locations, parsedOutcome, requires, issueText, slug, types, same, exitCode, exitCode2]

// Governance: a host running its own agent loop asks the kernel first.
import { Governance, type GovernanceDecision } from '@archmax-ai/harness'
const governance: Governance = Governance.fromWorkspace({ rootDir: 'examples/customer-support', workflow: 'order-lookup' })
const decision: GovernanceDecision = governance.decide({
  state: 'classify',
  tool: 'read_file',
  args: { file_path: 'skills/order-data/assets/orders.json' },
  variables: { order_id: 'KK-2043' },
  authority: 'agent',
})
const denial: string | undefined = decision.allowed ? undefined : `${decision.rule}: ${decision.message ?? ''}`
const shown: string[] = governance.surface('classify')
const fromText: Governance = Governance.fromSpec('states:\n  a:\n    triggers: { manual: }\n', { essentialTools: ['lookup'] })
// @ts-expect-error authority is a closed set
governance.decide({ state: 'a', tool: 'ls', authority: 'root' })
export { denial, shown, fromText }

// createAgent: a JS model, a governed host tool, the event stream, the workflow operations.
import {
  createAgent,
  HarnessError,
  WorkflowLoadError,
  type Agent,
  type GovernedAgent,
  type PlainAgent,
  type InvokeResult,
  type ModelRequest,
  type ModelAnswer,
  type Outcome,
  type EventEnvelope,
  type SessionSummary,
  type HistoryStep,
  type ForkedFrom,
  type StandingKind,
  type PruneReport,
} from '@archmax-ai/harness'
import { createAgent as createAgentFromAgent, type HostToolDefinition } from '@archmax-ai/harness/agent'

async function agentExample(): Promise<void> {
  const lookup: HostToolDefinition = {
    name: 'crm_lookup',
    description: 'Looks a customer up.',
    schema: { type: 'object', properties: { email: { type: 'string' } } },
    paths: { file: 'read' },
    handler: async (args, ctx) => ({ email: args['email'], state: ctx.state }),
  }
  const agent: GovernedAgent = await createAgent({
    workflow: 'order-lookup',
    workspace: { rootDir: 'examples/customer-support' },
    model: async (request: ModelRequest): Promise<ModelAnswer> => ({
      role: 'assistant',
      content: `${request.messages.length} messages`,
    }),
    tools: [lookup],
    onEvent: (event: EventEnvelope) => {
      const seq: number = event.seq
      void seq
    },
  })
  const outcome: Outcome = await agent.workflow.send('s1', { message: 'Hi', variables: { tier: 'gold' } })
  const reply: string = outcome.reply
  const decided: Outcome = await agent.workflow.decide(outcome.sessionId, { to: 'closed', comment: 'no' })
  const decidedByTarget: Outcome = await agent.workflow.decide(outcome.sessionId, { target: 'closed' })
  // @ts-expect-error: target and to are one field under two names, not both
  await agent.workflow.decide(outcome.sessionId, { target: 'closed', to: 'closed' })
  void decidedByTarget
  // Streaming: a model function may answer with a stream of pieces; workflow.stream is `for await`-able.
  const streamed: GovernedAgent = await createAgent({
    workflow: 'order-lookup',
    workspace: { rootDir: 'examples/customer-support' },
    streaming: true,
    model: async function* (_request: ModelRequest, info) {
      const shown: boolean | undefined = info.stream
      void shown
      yield 'Hel'
      yield { content: 'lo', usage: { prompt_tokens: 1 } }
    },
  })
  for await (const item of streamed.workflow.stream('s1', { message: 'Hi' })) {
    if ('kind' in item) {
      const done: Outcome = item
      void done
    } else {
      const type: string = item.type
      void type
    }
  }
  await agent.workflow.reply('s1', 'hello')
  await agent.workflow.deliver('s1', { trigger: 'email-received', variables: {} })
  const ids: string[] = (await agent.sessions.list()).map((s: SessionSummary) => s.sessionId)
  const start: string = agent.workflow.resolveTrigger({ id: 'manual' }).startState
  void start
  // invoke, on both kinds of agent; a plain agent has no workflow operations.
  const invoked: InvokeResult = await agent.invoke({ messages: [{ role: 'user', content: 'Hi' }] }, { configurable: { thread_id: 's2' } })
  const state: string | undefined = invoked.workflowState
  void state
  const plain: PlainAgent = await createAgent({ workflow: false, systemPrompt: 'Be brief.', workspace: { rootDir: '.' } })
  const none: undefined = plain.workflow
  void none
  await plain.invoke({ messages: ['Hi', ['ai', 'Hello'], { type: 'human', content: 'Again' }] })
  // @ts-expect-error a plain agent has no workflow operations
  await plain.workflow.send('s1', { message: 'Hi' })
  const either: Agent = await createAgent()
  // @ts-expect-error an agent assembled without a named workflow may be plain
  await either.workflow.send('s1', { message: 'Hi' })
  plain.dispose()
  const configured: Agent = await createAgent({
    workspace: { rootDir: '.', mounts: { '/catalogs/': { readOnly: true, governed: true } } },
    skills: [],
    trigger: { id: 'email-received' },
    sessionPath: 'message.thread_id',
  })
  configured.dispose()
  const cancelled: boolean = agent.cancel('s1')
  agent.dispose()
  try {
    await createAgentFromAgent({ workflow: 'nope' })
  } catch (e) {
    if (e instanceof WorkflowLoadError) {
      const code: string = e.code
      const path: string = e.workflowPath
      void [code, path]
    }
    const isHarness: boolean = e instanceof HarnessError
    void isHarness
  }
  void [reply, decided, ids, cancelled]
}
void agentExample

// createAgent with LangChain: a chat model instance, a `tool(...)` with a zod schema, a modelFactory.
import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { FakeListChatModel } from '@langchain/core/utils/testing'
import { AIMessage, type BaseMessage } from '@langchain/core/messages'
import type { ChatResult } from '@langchain/core/outputs'
import { tool } from '@langchain/core/tools'
import { z } from 'zod'
import type { AgentEnv, LangChainChatModelLike, LangChainToolLike, ModelFactory } from '@archmax-ai/harness/agent'

class EchoChatModel extends BaseChatModel {
  _llmType(): string {
    return 'echo'
  }
  override bindTools(): this {
    return this
  }
  async _generate(messages: BaseMessage[]): Promise<ChatResult> {
    const message = new AIMessage(`${messages.length} messages`)
    return { generations: [{ text: String(message.content), message }] }
  }
}

async function langChainExample(): Promise<void> {
  const crmLookup = tool(async ({ email }: { email: string }) => `Customer ${email}`, {
    name: 'crm_lookup',
    description: 'Looks a customer up by email.',
    schema: z.object({ email: z.string() }),
  })
  const asTool: LangChainToolLike = crmLookup
  const chat: LangChainChatModelLike = new EchoChatModel({})
  const agent: Agent = await createAgent({
    workflow: 'order-lookup',
    workspace: { rootDir: 'examples/customer-support' },
    model: new EchoChatModel({}),
    tools: [crmLookup, { name: 'plain', handler: () => 'ok' }],
  })
  agent.dispose()
  const factory: ModelFactory = (role, env, requested) => {
    const settings: AgentEnv | undefined = role === 'agent' && requested === 'env' ? env() : undefined
    void settings
    return requested ? new FakeListChatModel({ responses: ['hi'] }) : async () => ({ role: 'assistant' as const, content: 'hi' })
  }
  const fromFactory: Agent = await createAgent({ workspace: { rootDir: '.' }, modelFactory: factory })
  fromFactory.dispose()
  // @ts-expect-error a model is a function or a chat model
  await createAgent({ model: 42 })
  void [asTool, chat]
}
void langChainExample

// The runtime's serialized shapes (ts-rs): an outcome by kind, an event by type, a summary.
import type { DelegatedPark, OutcomeKind, PendingDecision, SessionExit, VariableStore, WorkflowStatus } from '@archmax-ai/harness/agent'

function describeOutcome(outcome: Outcome): string {
  const kind: OutcomeKind = outcome.kind
  const variables: VariableStore = outcome.variables
  const locked: boolean = variables['trigger']?.locked ?? false
  switch (kind) {
    case 'parked': {
      const pending = outcome.pending
      // A child's park names the child and the call.
      const delegation: DelegatedPark | undefined = outcome.delegation
      if (delegation) return `${delegation.workflow} ${delegation.sessionId} ${delegation.dispatchId} ${delegation.toolCallId} ${delegation.state}`
      if (pending?.channel === 'decision') {
        const decision: PendingDecision = pending
        const targets: string[] = decision.transitions.map((t) => `${t.to}:${t.type ?? 'none'}`)
        return `${decision.seq} ${decision.createdAt} ${targets.join(',')}`
      }
      // @ts-expect-error a pending input has no transitions
      void pending?.transitions
      return pending ? `${pending.reason} ${pending.resumeAt ?? ''}` : ''
    }
    case 'failed': {
      const exit: SessionExit | undefined = outcome.exit
      return exit && !exit.success ? `${exit.code}: ${exit.reason}` : ''
    }
    case 'rejected':
      // Only a parked outcome names a child.
      if (outcome.kind === 'rejected') {
        const none: undefined = outcome.delegation
        void none
      }
      return outcome.rejected ?? ''
    case 'completed':
      return `${outcome.reply} ${outcome.usage?.inputTokens ?? 0} ${outcome.auditTrail.map((s) => s.kind).join('>')} ${locked}`
    default: {
      const never: never = kind
      return never
    }
  }
}

function describeEvent(event: EventEnvelope): string {
  const level: 'info' | 'warn' | 'error' = event.level
  switch (event.type) {
    case 'tool-result':
      return `${level} ${event.tool} ${event.status} ${event.durationMs}ms ${event.truncated}`
    case 'parked':
      return `${event.sessionId} ${event.awaiting} ${event.resumeAt ?? ''} ${event.subWorkflowDispatchId ?? ''}`
    case 'model-usage':
      return `${event.inputTokens}/${event.outputTokens} ${event.costUsd ?? ''}`
    case 'advance':
      // @ts-expect-error an advance carries no tool
      return `${event.from} -> ${event.to} ${event.tool}`
    default:
      return event.type
  }
}

async function sessionsExample(agent: Agent): Promise<void> {
  const summary: SessionSummary | null = await agent.sessions.get('s1')
  if (summary) {
    const status: WorkflowStatus = summary.status
    const finished: boolean = summary.classification === 'finished'
    const code: string | undefined = summary.exit && !summary.exit.success ? summary.exit.code : undefined
    const parent: string | undefined = summary.parentSessionId
    const cost: number | undefined = summary.usage?.costUsd
    void [status, finished, code, parent, cost, summary.waitReason, summary.variables?.['trigger']?.value]
    const word: StandingKind = summary.standing.kind
    const resumable: boolean = summary.standing.resumable
    const since: number | undefined = summary.standing.since
    const until: string | undefined = summary.standing.until
    void [word, resumable, since, until, summary.standing.state]
    // @ts-expect-error 'stalled' is not a standing
    const wrong: StandingKind = 'stalled'
    void wrong
  }
  const idle: SessionSummary[] = await agent.sessions.list({ status: ['idle', 'cancelled'], olderThan: '2h' })
  const attention: SessionSummary[] = await agent.sessions.list({ attention: true })
  const report: PruneReport = await agent.sessions.prune({ status: 'failed', olderThan: '7d', dryRun: true })
  const one: PruneReport = await agent.sessions.prune({ sessionId: 's1' })
  const prunedIds: string[] = report.pruned.map((p) => `${p.sessionId} ${p.standing.kind}`)
  const left: string[] = one.skipped.map((s) => s.reason)
  void [idle, attention, prunedIds, left]
  // @ts-expect-error dryRun is a boolean
  await agent.sessions.prune({ dryRun: 'yes' })
  const messages: unknown[] = await agent.sessions.messages('s1')
  const cursor: number = await agent.sessions.messageCount('s1')
  const park = await agent.sessions.park('s1')
  if (park?.channel === 'decision') {
    const choices: string[] = park.transitions.map((t) => t.to)
    const approvers: string[] | undefined = park.approvers
    void [choices, approvers, park.instructions, park.seq]
  }
  const steps: HistoryStep[] | null = await agent.sessions.history('s1')
  const whats: string[] = (steps ?? []).map((s) => `${s.step} ${s.state} ${s.status} ${s.what} ${s.at ?? ''} ${s.tokens} ${s.costUsd ?? 0}`)
  const fork: SessionSummary = await agent.sessions.fork('s1', { at: 2, as: 's1-again' })
  const lineage: ForkedFrom | undefined = fork.forkedFrom
  void [whats, lineage?.sessionId, lineage?.step]
  // @ts-expect-error the step is a number
  await agent.sessions.fork('s1', { at: '2' })
  const removed: boolean = await agent.sessions.delete('s1')
  const seeded: void = await agent.sessions.seed('s1', { 'trigger.json': { from: 'a@b.c' }, 'scratchpad/notes.md': 'hi' })
  // @ts-expect-error seed takes a path → content record
  await agent.sessions.seed('s1', ['trigger.json'])
  void [messages, cursor, removed, seeded]
}
export { describeOutcome, describeEvent, sessionsExample }

// Session stores: the two factories and a host store implemented in JS (sync or async methods).
import {
  createFilesystemSessionStore,
  createMemorySessionStore,
  createPostgresSessionStore,
  type HostSessionStore,
  type SessionStore,
  type StoredSession,
} from '@archmax-ai/harness'
async function sessionStoresExample(model: ModelFunctionForStores) {
  const held = new Map<string, StoredSession>()
  const host: HostSessionStore = {
    load: (id) => held.get(id) ?? null,
    commit: async (id, step) => {
      const s = held.get(id) ?? { state: null, messages: [] }
      s.messages.push(...step.messages)
      s.state = step.state
      held.set(id, s)
    },
    list: async () => [...held.keys()],
    delete: (id) => held.delete(id),
  }
  const onDisk: SessionStore = createFilesystemSessionStore({ dir: 'var/sessions' })
  const kind: 'filesystem' | 'memory' | 'postgres' = createMemorySessionStore().kind
  const shared: SessionStore = createPostgresSessionStore({ url: 'postgres://archmax@db/archmax', schema: 'support', leaseTtlMs: 30000 })
  // @ts-expect-error the PostgreSQL store needs a url
  createPostgresSessionStore({ schema: 'support' })
  for (const sessionStore of [host, onDisk, createMemorySessionStore(), shared]) {
    const agent = await createAgent({ workspace: { rootDir: '.', sessionStore }, model })
    agent.dispose()
  }
  // @ts-expect-error a host store needs commit
  await createAgent({ workspace: { sessionStore: { load: () => null, list: () => [], delete: () => true } }, model })
  // @ts-expect-error the filesystem store needs a dir
  createFilesystemSessionStore({})
  void kind
}
type ModelFunctionForStores = import('@archmax-ai/harness').ModelFunction
export { sessionStoresExample }

// The runtime contract and the error classes' fields.
import {
  ReservedToolNameError as ReservedToolNameErrorClass,
  SessionNotResumableError as SessionNotResumableErrorClass,
  UnsupportedRuntimeContractError as UnsupportedRuntimeContractErrorClass,
  type ResolvedRuntimeContract,
  type RuntimeContract,
} from '@archmax-ai/harness'
function contractExample(agent: Agent, e: unknown): string {
  const contract: ResolvedRuntimeContract = agent.runtimeContract
  const source: 'declared' | 'defaulted' = contract.source
  const sandbox: number = contract.sandbox
  const same: RuntimeContract = contract
  if (e instanceof ReservedToolNameErrorClass) {
    const reservation: 'prefix' | 'file-operation' = e.reservation
    return `${reservation}: ${e.names.join(', ')}`
  }
  if (e instanceof UnsupportedRuntimeContractErrorClass) return `${e.requested} not in ${e.supported.join(', ')}`
  if (e instanceof SessionNotResumableErrorClass) return `${e.sessionId} is ${e.status}`
  // @ts-expect-error the contract is read-only
  agent.runtimeContract = contract
  return `${source} ${sandbox} ${same.testFormat}`
}
export { contractExample }

// resolveSession, dispose(sessionId), toolPaths/promptCache/pricing, createUsageTracker.
import {
  createUsageTracker,
  type PricingTable,
  type ResolvedSession,
  type SessionDisposition,
  type ToolPaths,
  type UsageSummary,
  type UsageTracker,
} from '@archmax-ai/harness'
async function issue7Example(model: ModelFunctionForStores): Promise<string> {
  const tracker: UsageTracker = createUsageTracker({ onEvent: (e) => void e.seq })
  const toolPaths: ToolPaths = { crm_lookup: { file: 'read' } }
  const pricing: PricingTable = { default: { input: 3, output: 15 }, claude: { cacheRead: 0.3 } }
  const agent = await createAgent({
    workflow: 'order-lookup',
    model,
    toolPaths,
    pricing,
    promptCache: { enabled: true, ttl: '1h' },
    variables: { from_email: 'a@b.c' },
    onEvent: tracker.handler,
  })
  const resolved: ResolvedSession = await agent.workflow.resolveSession({ trigger: { id: 'manual' }, variables: {} })
  const disposition: SessionDisposition = resolved.disposition
  const native: boolean = resolved.native
  const start: string | undefined = resolved.startState
  await agent.workflow.send(resolved.sessionId, { message: 'Hi', trigger: { id: 'manual' } })
  agent.dispose(resolved.sessionId)
  agent.dispose()
  const total: UsageSummary = tracker.totals()
  const cost: number | undefined = tracker.totals(resolved.sessionId).costUsd
  const bySession: Map<string, UsageSummary> = tracker.bySession()
  tracker.reset()
  // @ts-expect-error an unknown access
  const bad: ToolPaths = { crm_lookup: { file: 'steal' } }
  // @ts-expect-error resolveSession is a Promise
  const sync: ResolvedSession = agent.workflow.resolveSession()
  void bad
  void sync
  return `${disposition} ${native} ${start} ${total.inputTokens} ${cost} ${bySession.size}`
}
export { issue7Example }

import type { GovernanceRule, HookExecutor, ModelCallInfo, ModelFunction } from '@archmax-ai/harness'

/** Host governance rules, custom hook kinds and model roles, as a host writes them. */
async function hostRulesExample(): Promise<string> {
  const noVip: GovernanceRule = (action, api) =>
    action.tool === 'crm_lookup' && action.origin === 'agent' && api.variables.tier !== 'vip'
      ? { decision: 'block', ruleId: 'host.no-vip', reason: 'VIP records are off limits.' }
      : null
  const approval: HookExecutor = async (hook, ctx) => ({
    ok: true,
    value: { verdict: ctx.phase === 'after' && hook.approval === 'finance' ? 'ok' : 'veto', reason: 'checked' },
  })
  const model: ModelFunction = async (request, info) =>
    info.role === 'rubric' || info.role === 'judge'
      ? { role: 'assistant', content: '{"verdict": "ok", "reason": "fine"}' }
      : { role: 'assistant', content: `${request.model} in ${info.state ?? '?'}` }
  // @ts-expect-error a role the harness never asks as
  const noRole: ModelCallInfo['role'] = 'grader'
  void noRole
  const agent = await createAgent({ workflow: 'order-lookup', model, policyRules: [noVip], hookExecutors: { approval } })
  // @ts-expect-error a verdict decides 'allow' or 'block'
  const wrong: GovernanceRule = () => ({ decision: 'maybe', ruleId: 'x' })
  void wrong
  agent.dispose()
  return 'ok'
}
export { hostRulesExample }

/** The LangGraph methods of the agent: a stream of one turn, the run's artifacts. */
async function langGraphMethodsExample(agent: import('@archmax-ai/harness').Agent): Promise<string> {
  let text = ''
  for await (const [chunk, meta] of await agent.stream({ messages: [{ role: 'user', content: 'hi' }] }, { streamMode: 'messages' })) {
    text += chunk.content
    const child: boolean = (meta.tags ?? []).includes('archmax:child')
    void child
  }
  for await (const state of await agent.stream({ messages: ['hi'] })) text += state.status
  for await (const [mode, chunk] of await agent.stream({ messages: ['hi'] }, { streamMode: ['values', 'custom'] })) text += `${mode}${String(chunk)}`
  // @ts-expect-error a mode the agent does not stream
  await agent.stream({ messages: ['hi'] }, { streamMode: 'debug' })
  const dir: string | null = await agent.emitRunArtifacts('t1', { workflow: 'w', finalAnswer: text, segments: [] }, { trail: [] })
  const known: ReadonlyArray<keyof import('@archmax-ai/harness').CreateAgentParams> = (await import('@archmax-ai/harness')).AGENT_OPTIONS
  return `${dir} ${known.length}`
}
export { langGraphMethodsExample }

// The first hour's types (issue 13): each wrong use below must fail under --strict.
import {
  errors,
  hostTool,
  UnknownStateError,
  type Outcome as FirstOutcome,
  type GovernanceRuleId,
  type HarnessErrorCode,
  type TranscriptMessage,
  type Workflow as RootWorkflow,
} from '@archmax-ai/harness'
// @ts-expect-error the binding's internals are not exported from the package root
import { NativeAgent } from '@archmax-ai/harness'
// @ts-expect-error internal
import { NativeTurn } from '@archmax-ai/harness'
// @ts-expect-error internal
import { NativeSessionStore } from '@archmax-ai/harness'
// @ts-expect-error internal
import { __napiBindingTarget } from '@archmax-ai/harness'

async function firstHour(agent: GovernedAgent, gov: Governance): Promise<string[]> {
  const out: string[] = []
  const o: FirstOutcome = await agent.workflow.send('s1', { message: 'hi' })
  // @ts-expect-error the park record is optional until `kind` is narrowed
  out.push(o.pending.state)
  if (o.kind === 'parked') {
    out.push(o.pending.state, o.parkedChannel)
    if (o.parkedChannel === 'decision') out.push(...o.pending.transitions.map((t) => t.to))
  } else if (o.kind === 'failed') {
    out.push(o.exit.success ? 'ok' : o.exit.code)
  } else if (o.kind === 'rejected') {
    out.push(o.rejected)
  }
  // @ts-expect-error `kind` is a closed set
  if (o.kind === 'paused') out.push('never')
  const last: TranscriptMessage | undefined = o.messages.at(-1)
  out.push(last?.role ?? '')
  const stored: TranscriptMessage[] = await agent.sessions.messages('s1')
  // @ts-expect-error a transcript message's role is a closed set
  const badRole: TranscriptMessage['role'] = 'robot'
  const spec: RootWorkflow | null = await agent.getSpecSnapshot('abc')
  out.push(spec ? Object.keys(spec.states).join(',') : '', String(stored.length), badRole)

  const rule: GovernanceRuleId = gov.decide({ state: 'classify', tool: 'ls' }).rule
  out.push(rule)
  // @ts-expect-error a rule id the kernel never answers
  const noRule: GovernanceRuleId = 'tool.maybe'
  void noRule

  try {
    Governance.fromWorkspace({ rootDir: '.', workflow: 'nope' })
  } catch (e) {
    if (e instanceof errors.WorkflowLoadError) {
      out.push(e.workflow, e.workflowPath, e.problem, e.code)
      const known: boolean = e.problem === 'no workflow.yaml found' || e.problem === 'no valid machine spec' || e.problem.startsWith('the file ')
      // @ts-expect-error a problem the harness never names
      const unknownProblem: typeof e.problem = 'spec missing'
      void [known, unknownProblem]
    }
    if (e instanceof UnknownStateError) out.push(e.state, ...e.states)
    if (e instanceof HarnessError) {
      const code: HarnessErrorCode = e.code
      // @ts-expect-error codes are the class names
      const wrongCode: HarnessErrorCode = 'NoSuchError'
      out.push(code, wrongCode)
    }
  }

  // A host tool whose handler's arguments are typed: by a generic, or inferred from a zod schema.
  const byGeneric: HostToolDefinition<{ email: string }> = {
    name: 'crm_lookup',
    handler: async ({ email }) => email.toLowerCase(),
  }
  const byZod = hostTool({
    name: 'refund',
    schema: z.object({ order_id: z.string(), amount: z.number() }),
    handler: async (args) => args.amount.toFixed(2) + args.order_id.trim(),
  })
  hostTool({
    name: 'refund2',
    schema: z.object({ amount: z.number() }),
    // @ts-expect-error `amount` is a number, not a string
    handler: async (args) => args.amount.trim(),
  })
  const wrongGeneric: HostToolDefinition<{ email: string }> = {
    name: 'crm',
    // @ts-expect-error `email` is a string
    handler: async ({ email }) => email.toFixed(),
  }
  await createAgent({ workflow: 'order-lookup', tools: [byGeneric, byZod, wrongGeneric] })
  return out
}
export { firstHour }

// Cassettes: record with a model, replay with none; the mode is a closed set.
async function cassettes(model: ModelFunctionForStores): Promise<void> {
  const record: CassetteOptionsType = { path: 'tests/refund.cassette.json', mode: 'record' }
  await createAgent({ model, cassette: record })
  await createAgent({ cassette: { path: 'tests/refund.cassette.json', mode: 'replay' } })
  // @ts-expect-error the mode is 'record' or 'replay'
  await createAgent({ cassette: { path: 'x.cassette.json', mode: 'rewind' } })
}
void cassettes
type CassetteOptionsType = import('@archmax-ai/harness').CassetteOptions

// Every exported error class the Rust list names is declared (the list is generated from
// archmax_machine::ErrorClass; a class added there without a declaration fails here).
type ExportedErrorCode = Exclude<import('@archmax-ai/harness').HarnessErrorCode, 'UnknownSessionTriggerError'>
const everyClassDeclared: { [K in ExportedErrorCode]: unknown } = errors
const everyDeclaredClassListed: { [K in keyof typeof errors]: K extends ExportedErrorCode ? true : never } = {} as {
  [K in keyof typeof errors]: true
}
void everyClassDeclared
void everyDeclaredClassListed

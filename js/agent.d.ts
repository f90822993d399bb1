// Types of `createAgent` (agent.js). Hand-written, except the shapes the runtime
// serializes (outcomes, events, park records, session summaries): those are its ts-rs
// output in types/, so they cannot drift from what serde writes.
import type { EventEnvelope } from '../types/EventEnvelope.js'
import type { Outcome as OutcomeRecord } from '../types/Outcome.js'
import type { SessionExit } from '../types/SessionExit.js'
import type { Workflow } from '../types/Workflow.js'
import type { TranscriptMessage } from './messages.js'
import type { ParkRecord } from '../types/ParkRecord.js'
import type { DelegatedPark } from '../types/DelegatedPark.js'
import type { ResolvedSession } from '../types/ResolvedSession.js'
import type { RuntimeContract } from '../types/RuntimeContract.js'
import type { SessionSummary } from '../types/SessionSummary.js'
import type { HistoryStep } from '../types/HistoryStep.js'
import type { PruneReport } from '../types/PruneReport.js'
import type { StandingKind } from '../types/StandingKind.js'
import type { UsageSummary } from '../types/UsageSummary.js'
import type { VariableEntry } from '../types/VariableEntry.js'
import type { SessionStore, HostSessionStore } from './store.js'

export type { Classification } from '../types/Classification.js'
export type { DecisionOption } from '../types/DecisionOption.js'
export type { DelegatedPark } from '../types/DelegatedPark.js'
export type { EventEnvelope } from '../types/EventEnvelope.js'
export type { LifecycleEvent } from '../types/LifecycleEvent.js'
export type { OutcomeKind } from '../types/OutcomeKind.js'
export type { ParkRecord } from '../types/ParkRecord.js'
export type { ContractSource } from '../types/ContractSource.js'
export type { ResolvedSession } from '../types/ResolvedSession.js'
export type { RuntimeContract } from '../types/RuntimeContract.js'
export type { SessionDisposition } from '../types/SessionDisposition.js'
export type { SessionExit } from '../types/SessionExit.js'
export type { SessionSummary } from '../types/SessionSummary.js'
export type { HistoryStep } from '../types/HistoryStep.js'
export type { ForkedFrom } from '../types/ForkedFrom.js'
export type { Standing } from '../types/Standing.js'
export type { StandingKind } from '../types/StandingKind.js'
export type { PruneReport } from '../types/PruneReport.js'
export type { PrunedSession } from '../types/PrunedSession.js'
export type { SkippedSession } from '../types/SkippedSession.js'
export type { TrailStep } from '../types/TrailStep.js'
export type { UsageSummary } from '../types/UsageSummary.js'
export type { VariableEntry } from '../types/VariableEntry.js'
export type { WorkflowStatus } from '../types/WorkflowStatus.js'

/** A session parked at a human state: what the person decides. */
/** A park as `sessions.park` presents it: the record, with the parked state's `instructions` and `approvers` when declared. */
export type SessionPark = ParkRecord & { instructions?: string; approvers?: Array<string> }
export type PendingDecision = Extract<ParkRecord, { channel: 'decision' }>
/** A session parked for an outside event: what it waits for. */
export type PendingInput = Extract<ParkRecord, { channel: 'input' }>

type OutcomeBase = Omit<OutcomeRecord, 'kind' | 'parkedChannel' | 'pending' | 'delegation' | 'rejected' | 'exit' | 'messages'> & {
  /** The session's whole transcript (OpenAI chat messages; runtime notes carry `archmax`). */
  messages: Array<TranscriptMessage>
}
/** A turn that finished normally. */
export type CompletedOutcome = OutcomeBase & { kind: 'completed'; exit?: SessionExit; parkedChannel?: undefined; pending?: undefined; delegation?: undefined; rejected?: undefined }
/**
 * A session waiting for a person (`decision`) or an outside event (`input`): the park record is
 * always there. `delegation` names the sub-workflow child whose park this is, when a child
 * parked (absent for the session's own park).
 */
export type ParkedOutcome = OutcomeBase & { kind: 'parked'; exit?: SessionExit; rejected?: undefined; delegation?: DelegatedPark } & (
  | { parkedChannel: 'decision'; pending: PendingDecision }
  | { parkedChannel: 'input'; pending: PendingInput }
)
/** Governance ended the turn; `rejected` says why. */
export type RejectedOutcome = OutcomeBase & { kind: 'rejected'; rejected: string; exit?: SessionExit; parkedChannel?: undefined; pending?: undefined; delegation?: undefined }
/** The agent raised, or the turn threw (`turn-error`, `turn-cancelled`, `recursion-limit`). */
export type FailedOutcome = OutcomeBase & { kind: 'failed'; exit: SessionExit; parkedChannel?: undefined; pending?: undefined; delegation?: undefined; rejected?: undefined }
/** The result of a turn, discriminated on `kind`. */
export type Outcome = CompletedOutcome | ParkedOutcome | RejectedOutcome | FailedOutcome
/** The original's name of the resolved runtime contract (`agent.runtimeContract`). */
export type ResolvedRuntimeContract = RuntimeContract

/** A session's variables by name. */
export type VariableStore = Record<string, VariableEntry>

/** One OpenAI chat-completions message. */
export type ChatMessage = {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string | null | Array<{ type: string; text?: string; [key: string]: unknown }>
  tool_calls?: Array<ChatToolCall>
  tool_call_id?: string
}

/** A tool call as OpenAI spells it (`arguments` is JSON text). */
export type ChatToolCall = {
  id: string
  type: 'function'
  function: { name: string; arguments: string }
}

/** The body the harness would POST to `/chat/completions`. */
export type ModelRequest = {
  model: string
  messages: Array<ChatMessage>
  tools?: Array<{ type: 'function'; function: { name: string; description: string; parameters: Record<string, unknown> } }>
  temperature?: number
  max_tokens?: number
  parallel_tool_calls?: boolean
}

/** What a model function answers: an assistant message, or a whole `chat.completion`. */
export type ModelAnswer =
  | { role?: 'assistant'; content: string | null; tool_calls?: Array<ChatToolCall> }
  | { choices: Array<{ message: { role?: string; content: string | null; tool_calls?: Array<ChatToolCall> }; finish_reason?: string }>; usage?: Record<string, number>; model?: string }

/**
 * Who a request is for: the agent's turn, a rubric hook's grader, or a case's judge. `stream:
 * true` (absent otherwise): the answer's text is shown as it arrives (`agent-text-delta`) when
 * the function answers with a stream.
 */
export type ModelCallInfo = {
  role: import('../types/ModelRole.js').ModelRole
  stream?: boolean
  /** The session an agent request serves. */
  sessionId?: string
  /** The workflow state the request is made in (a plain agent's one state too). */
  state?: string
}
/**
 * One piece of a streamed answer: text, an OpenAI `chat.completion.chunk`, or one delta
 * (tool-call pieces keyed by `index`, as in a chunk's `delta.tool_calls`; `usage` in any piece).
 */
export type ModelStreamPiece =
  | string
  | { content?: string | null; tool_calls?: Array<{ index?: number; id?: string; type?: 'function'; function?: { name?: string; arguments?: string } }>; usage?: Record<string, number> }
  | { choices: Array<{ index?: number; delta?: Record<string, unknown>; finish_reason?: string | null }>; usage?: Record<string, number>; model?: string }
/** A model: the harness's chat-completions calls, answered by JS, whole or as a stream of pieces. */
export type ModelFunction = (
  request: ModelRequest,
  info: ModelCallInfo,
) => ModelAnswer | AsyncIterable<ModelStreamPiece> | ReadableStream<ModelStreamPiece> | Promise<ModelAnswer | AsyncIterable<ModelStreamPiece> | ReadableStream<ModelStreamPiece>>

/**
 * A LangChain chat model, duck-typed: `BaseChatModel` and every provider (`ChatOpenAI`,
 * `ChatAnthropic`, ...) fit. The runtime's request becomes LangChain messages and
 * `model.bindTools(tools).invoke(messages)` answers it; `@langchain/core` is not a dependency.
 * (`bindTools` is optional in LangChain's own typing; it must exist at run time.)
 */
export interface LangChainChatModelLike {
  invoke(input: any, options?: any): Promise<unknown>
  bindTools?(tools: Array<any>, kwargs?: any): { invoke(input: any, options?: any): Promise<unknown> }
}

/**
 * A LangChain tool, duck-typed (`tool(...)`, `StructuredTool`, `DynamicStructuredTool`): a zod
 * (or Standard) schema is converted with LangChain's `toJsonSchema`, a JSON Schema is used as is;
 * `invoke(args)` runs it and its result is the text the model sees (non-strings as JSON).
 */
export interface LangChainToolLike {
  name: string
  description?: string
  schema?: unknown
  invoke(input: any, config?: any): Promise<unknown>
  /** Path arguments and their access, as for a host tool. */
  paths?: Record<string, 'read' | 'list' | 'search' | 'write' | 'remove' | 'execute'>
}

/** The settings `modelFactory` may read from `ARCHMAX_*` (the function throws on a missing one). */
export type AgentEnv = {
  apiBaseUrl: string
  apiKey: string
  model: string
  temperature?: number
  maxTokens?: number
}

/** Either kind of model `createAgent` takes. */
export type AgentModel = ModelFunction | LangChainChatModelLike

/**
 * Builds the models: with `role` `agent` and no id once at assembly (the default model), then
 * once per distinct role and declared model id a request names (memoised). `rubric` builds the
 * grader of a rubric hook (`requested`: the rubric's `model`, or undefined for the default);
 * `judge` arrives with the cases engine. `model` beats it for `agent`.
 */
export type ModelFactory = (
  role: 'agent' | 'judge' | 'rubric',
  env: () => AgentEnv,
  requested?: string,
) => AgentModel | Promise<AgentModel>

/** Where a host tool is called from. */
export type ToolCallContext = {
  sessionId: string
  state: string
  toolName: string
  /** The model's tool call this call answers; absent for a call from script code or a hook. */
  callId?: string
  /**
   * The turn's files while this call runs (non-enumerable; reading it afterwards throws):
   * each access is decided as the agent's own `read_file`, `write_file` or `remove_file`
   * call would be in `state`, and routed as the file tools route it.
   */
  readonly workspace: ToolWorkspace
}
/** `context.workspace`: refusals are answered in the results, never thrown. */
export interface ToolWorkspace {
  /**
   * The file's text as it is (no line numbers): lines from `offset` (0-based), at most `limit`
   * (default 500), as a Deep Agents backend's `read`; or why it may not be read.
   */
  read(filePath: string, offset?: number, limit?: number): Promise<{ content: string; error?: undefined } | { error: string; content?: undefined }>
  downloadFiles(paths: string[]): Promise<Array<{ path: string; content: Uint8Array | null; error: string | null }>>
  /** A refused file answers `{ path: '/<path>', error: 'permission_denied', reason }` (`reason`: the harness's refusal). */
  uploadFiles(files: Array<[string, Uint8Array]>): Promise<Array<{ path: string; error: null } | { path: string; error: 'permission_denied'; reason: string }>>
  delete(filePath: string): Promise<{ error?: string }>
}

/** A zod (3 or 4) or Standard Schema object: what its parse yields types a host tool's arguments. */
export type ZodLikeSchema<Out = unknown> = { _output: Out } | { '~standard': { types?: { output: Out } } }

/** The arguments a schema yields: a zod/Standard schema's output, else `Fallback`. */
export type SchemaOutput<S, Fallback = Record<string, unknown>> = S extends { _output: infer O }
  ? O
  : S extends { '~standard': { types?: { output: infer O } } }
    ? O
    : Fallback

/**
 * A host tool, governed by the workflow like every other tool. `Args` types the handler's
 * arguments: give it (`HostToolDefinition<{ email: string }>`), or declare the tool with
 * `hostTool({ schema: z.object(…), handler })` so a zod schema infers it.
 */
export type HostToolDefinition<Args = Record<string, unknown>> = {
  /** The name the model calls (not `archmax_*`, not a file operation). */
  name: string
  description?: string
  /** JSON Schema of the arguments, or a zod/Standard schema (converted with `@langchain/core`). */
  schema?: Record<string, unknown> | ZodLikeSchema<Args>
  /** Path arguments and their access, so zones and mounts govern them. */
  paths?: Record<string, 'read' | 'list' | 'search' | 'write' | 'remove' | 'execute'>
  /** Its result is text for the model (non-strings are sent as JSON); a throw answers the model with the error. */
  handler: (args: Args, ctx: ToolCallContext) => unknown | Promise<unknown>
}

/**
 * Declares a host tool with its handler's arguments inferred from a zod/Standard `schema`
 * (or given as `Args`); returns the definition unchanged.
 */
export declare function hostTool<S extends ZodLikeSchema>(tool: Omit<HostToolDefinition<SchemaOutput<S>>, 'schema'> & { schema: S }): HostToolDefinition<SchemaOutput<S>>
export declare function hostTool<Args = Record<string, unknown>>(tool: HostToolDefinition<Args>): HostToolDefinition<Args>

/** How one mount is served. */
export type MountSpec = { readOnly?: boolean; governed?: boolean }

/** How a tool uses a path argument. */
export type PathAccess = 'read' | 'list' | 'search' | 'write' | 'remove' | 'execute'
/** Path arguments by tool name: `{ tool: { argument: access } }`. */
export type ToolPaths = Record<string, Record<string, PathAccess>>

/** Provider prompt caching of the stable prompt prefix (default on, `5m`). */
export type PromptCacheOptions = { enabled?: boolean; ttl?: '5m' | '1h' | (string & {}) }

/**
 * A cassette file (`<name>.cassette.json`, relative to the working directory) and what the
 * agent does with it: `record` saves each model exchange of the configured model (endpoint,
 * model function, LangChain model) after it completes; `replay` answers every model call from
 * the file, needs no model and no `ARCHMAX_*` variable, and fails a call the file does not hold
 * with the request and the field that differs (see docs/cassettes.md).
 */
export type CassetteOptions = { path: string; mode: 'record' | 'replay' }

/** The marker `createToolMockMiddleware()` returns (frozen). */
export type ToolMockMiddleware = { readonly name: 'ToolMockMiddleware' }

/** Prices in USD per 1M tokens; an omitted rate contributes nothing (cache rates default to `input`). */
export type ModelPricing = { input?: number; output?: number; cacheRead?: number; cacheWrite?: number }
/** Prices by model id: the exact id, else the longest key contained in it, else `default`. */
export type PricingTable = Record<string, ModelPricing>

/**
 * Spending ceilings: tokens (input + output, as the endpoint reports them) and US dollars (at
 * the configured prices), per turn and per session. The workflow's `budget` caps hold where
 * they are stricter. A turn reaching one ends as `budget.maxModelCalls` ends it: routed
 * through the state's `on_error`, else rejected, with a text naming the cap, the spend and
 * the limit. A cap in US dollars on a model with no price refuses assembly.
 */
export type SpendCaps = {
  turnTokens?: number
  turnCostUsd?: number
  sessionTokens?: number
  sessionCostUsd?: number
}

/** A trigger as the original spells it, or its id. */
export type TriggerRef = { id: string } | string

export type CreateAgentParams = {
  /**
   * The workflow slug (`workflows/<slug>/workflow.yaml`), which must load. `false`: a plain,
   * ungoverned agent (no spec is read). Omitted: `order-lookup` is looked for; it governs when
   * present (and refuses assembly when invalid), a plain agent is assembled when it is missing.
   */
  workflow?: string | false
  /** A prompt layer right after the workspace's `AGENTS.md` (both kinds of agent). */
  systemPrompt?: string
  /**
   * `rootDir` (default: the cwd), the mount table (key `/dir/` or `/file`; default: zero-config)
   * and the session store (default: the filesystem at `<rootDir>/sessions`).
   */
  workspace?: { rootDir?: string; mounts?: Record<string, MountSpec>; sessionStore?: SessionStore | HostSessionStore }
  /** Skill source dirs, workspace-relative (default `["skills/"]`; `[]` = none). */
  skills?: Array<string>
  /** The trigger of a turn that names none (default `manual`); checked at assembly. */
  trigger?: { id: string }
  /** Assembly-wide dotted path to the session id in a firing's variables (for a null id). */
  sessionPath?: string
  /** A model function or a LangChain chat model. Absent (and no `modelFactory`): the OpenAI-compatible endpoint from `ARCHMAX_*` (environment and `.env`). */
  model?: AgentModel
  /** Used when `model` is absent. */
  modelFactory?: ModelFactory
  /** Record the model's exchanges into a cassette, or replay them from one instead of a model. */
  cassette?: CassetteOptions
  /**
   * `[createToolMockMiddleware()]` (from `@archmax-ai/harness/testing`) sets `agent.toolMocks`,
   * which lets cases declaring mocks run on the agent; the mocks are served natively either way.
   * Any other entry is refused (a `TypeError` naming it): LangChain middleware composes with a
   * workflow through `archmaxMiddleware()` of `@archmax-ai/harness/deepagents`.
   */
  middleware?: ReadonlyArray<ToolMockMiddleware>
  /** The default model id sent in requests (default `ARCHMAX_MODEL`, else `default`). */
  defaultModel?: string
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- each tool types its own arguments
  tools?: Array<HostToolDefinition<any> | LangChainToolLike>
  /** Host tools permitted and disclosed in every state. */
  essentialTools?: Array<string>
  onEvent?: (event: EventEnvelope) => void
  /** Seeds (locked variables) of every `send`; a bad name rejects assembly (`InvalidVariableNameError`). */
  variables?: Record<string, unknown>
  /** Path arguments of host tools, replacing each tool's own `paths` (`ToolPathsError` at assembly). */
  toolPaths?: ToolPaths
  /** Outranks the spec's `settings.prompt_cache`, which outranks `ARCHMAX_PROMPT_CACHE(_TTL)`. */
  promptCache?: PromptCacheOptions
  /** Makes `costUsd` appear on `model-usage` events and in usage; absent: `ARCHMAX_PRICE_*`. */
  pricing?: PricingTable
  /**
   * The `ARCHMAX_*` endpoint only: the timeout of one request attempt, response included, in
   * milliseconds (1 to 3 600 000). Default: `ARCHMAX_REQUEST_TIMEOUT_MS`, else 60 000.
   */
  requestTimeoutMs?: number
  /**
   * Show the model's text as it arrives (`agent-text-delta` events, then the call's
   * `agent-text`): the `ARCHMAX_*` endpoint is asked for a stream, a LangChain model answers
   * through `.stream()`, and a model function's streamed pieces are shown. Default:
   * `ARCHMAX_STREAMING` for the endpoint, else on. Off, the answers are the same, whole.
   */
  streaming?: boolean
  /**
   * Where this agent's OpenTelemetry spans go (docs/telemetry.md). Absent: the standard
   * `OTEL_EXPORTER_OTLP_*` variables, off unless an endpoint is set; `false`: off. The spans
   * are exported by the addon itself (a native addon cannot hand them to a JavaScript
   * `TracerProvider`): a host with its own provider points `endpoint` at the same collector
   * and returns its active span's `traceparent`, so the agent's turns join its traces.
   */
  telemetry?: false | TelemetryOptions
  /**
   * The `ARCHMAX_*` endpoint only: retries after a failed attempt (HTTP 429 and 5xx, timeouts,
   * connection failures), 0 to 10. Default: `ARCHMAX_MAX_RETRIES`, else 2.
   */
  maxRetries?: number
  /**
   * The `ARCHMAX_*` endpoint only: the largest response body read, in bytes (1 024 to
   * 1 073 741 824); a longer one fails the model call. Default: `ARCHMAX_MAX_RESPONSE_BYTES`,
   * else 8 MiB.
   */
  maxResponseBytes?: number
  /**
   * How many calls this process sends the `ARCHMAX_*` endpoint at once (1 – 1 024); the rest
   * queue for a slot (a `model-queued` event each). Shared by every agent of the process that
   * calls the same endpoint; where they differ, the smallest holds. Default:
   * `ARCHMAX_MAX_CONCURRENT_CALLS`, else 16.
   */
  maxConcurrentCalls?: number
  /**
   * Spending ceilings per turn and per session (outrank `ARCHMAX_MAX_TURN_TOKENS`,
   * `ARCHMAX_MAX_TURN_COST_USD`, `ARCHMAX_MAX_SESSION_TOKENS`, `ARCHMAX_MAX_SESSION_COST_USD`).
   */
  caps?: SpendCaps
  /**
   * Models a call goes to, in order, when it still fails after its retries (connection
   * errors, timeouts, 5xx, 429, 401/403/404), never on another 4xx the request caused, nor
   * once the call has shown text. Each is a model id on the `ARCHMAX_*` endpoint, or
   * `{ model, baseUrl?, apiKey? }` on another (its key defaults to `ARCHMAX_API_KEY`; none is
   * needed on this machine). Each switch is a `model-fallback` event. Default:
   * `ARCHMAX_FALLBACK_MODELS` (`model` or `model@base-url`, comma-separated), else none.
   */
  fallbackModels?: Array<string | { model: string; baseUrl?: string; apiKey?: string }>
  /**
   * Host governance rules, asked in order for every tool call after the workflow's denials;
   * the first that does not abstain ends the chain. They can only tighten: a `block`
   * refuses the call, an `allow` leaves it to the workflow's own grants.
   */
  policyRules?: Array<GovernanceRule>
  /**
   * Custom hook kinds (`after: { approval: finance }`), each run by its function; `script` and
   * `rubric` cannot be replaced (a plain `Error` at assembly). A kind with no executor fails
   * its state closed at run time.
   */
  hookExecutors?: Record<string, HookExecutor>
  /**
   * Shows the agent the images it reads: its `read_file` of a PNG, JPEG, GIF or WebP answers
   * `Image '<path>' (<type>, <size>) is shown below.` and the image rides the next requests
   * (never the transcript). `maxBytes` (default 10 MB) caps one image; `keep` (default all)
   * keeps the most recent images attached, naming older ones. Off by default.
   */
  images?: boolean | { maxBytes?: number; keep?: number }
  /**
   * The MCP servers whose tools the workflow may grant (`mcp__<server>__<tool>`, or
   * `mcp__<server>` for all of a server's), in the `mcpServers` shape of `.mcp.json`:
   * `{ name: { command, args?, env?, cwd?, timeoutMs?, paths? } }` for a stdio server,
   * `{ name: { type: 'http', url, headers?, timeoutMs?, paths? } }` for a remote one;
   * `${VAR}` and `${VAR:-default}` read the environment and `.env`. Default: the workspace's
   * `.mcp.json`, if it has one; `false`: none.
   */
  mcpServers?: Record<string, McpServer> | false
  /**
   * Answers an MCP server's `elicitation/create` (a question for the person at the client);
   * the client then advertises the `elicitation` capability. Without it every elicitation is
   * declined. A handler that throws, or answers another shape, declines.
   */
  onMcpElicitation?: (request: McpElicitation) => McpElicitationAnswer | Promise<McpElicitationAnswer>
  /**
   * Answers an MCP server's `sampling/createMessage` (a model completion it asks the client
   * for); the client then advertises the `sampling` capability. Without it every sampling
   * request is refused. A string answers as the assistant's text (model `host`); a handler
   * that throws refuses the request with its message.
   */
  onMcpSampling?: (request: McpSampling) => McpSamplingAnswer | string | Promise<McpSamplingAnswer | string>
}

/** An MCP server's elicitation request, as `onMcpElicitation` receives it. */
export interface McpElicitation {
  /** The server's name in `mcpServers` / `.mcp.json`. */
  server: string
  /** The request's params as the server sent them. */
  params: { message: string; requestedSchema?: Record<string, unknown>; mode?: string; [key: string]: unknown }
}

/** The answer to an elicitation: the person's values (a field left out takes the schema's `default`), or no. */
export type McpElicitationAnswer =
  | { action: 'accept'; content?: Record<string, unknown> }
  | { action: 'decline' }
  | { action: 'cancel' }

/** An MCP server's sampling request, as `onMcpSampling` receives it. */
export interface McpSampling {
  /** The server's name in `mcpServers` / `.mcp.json`. */
  server: string
  /** The request's params as the server sent them (`messages`, `maxTokens`, `systemPrompt`, …). */
  params: { messages: Array<{ role: 'user' | 'assistant'; content: unknown }>; maxTokens: number; systemPrompt?: string; [key: string]: unknown }
}

/** A `CreateMessageResult`: the completion the server asked for. */
export interface McpSamplingAnswer {
  role: 'assistant'
  content: { type: 'text'; text: string } | { type: string; [key: string]: unknown }
  model: string
  stopReason?: string
}

/** One MCP server of `mcpServers` (`.mcp.json`'s shape). */
export type McpServer =
  | {
      type?: 'stdio'
      command: string
      args?: string[]
      env?: Record<string, string>
      cwd?: string
      /** One call's limit, in milliseconds (default 60000). */
      timeoutMs?: number
      /** The path arguments of its tools, `{ tool: { argument: access } }`, governed by the zones and mounts. */
      paths?: Record<string, Record<string, 'read' | 'list' | 'search' | 'write' | 'remove' | 'execute'>>
    }
  | {
      type?: 'http'
      url: string
      headers?: Record<string, string>
      timeoutMs?: number
      paths?: Record<string, Record<string, 'read' | 'list' | 'search' | 'write' | 'remove' | 'execute'>>
    }

/** The session a custom hook runs for. */
export type HookContext = {
  sessionId: string
  state: string
  phase: 'before' | 'after'
  trigger: { id: string }
  variables: Record<string, unknown>
}
/**
 * What an executor answers, as a sandbox script run: `value` is the verdict
 * (`{ verdict: 'ok' | 'correct' | 'veto', reason }`, `false` to veto, nothing for ok);
 * `ok: false` (or a throw) is an execution error and fails the state closed.
 */
export type HookOutcome = { ok: boolean; value?: unknown; logs?: Array<string>; error?: { message: string }; formatted?: string }
/** Runs one hook of a custom kind: `hook` is its declaration, `args` what a script hook receives. */
export type HookExecutor = (hook: Record<string, string>, ctx: HookContext, args: Record<string, unknown>) => Promise<HookOutcome>

/** A tool call a host rule is asked about. */
export type ProposedToolCall = {
  kind: 'tool-call'
  state: string
  tool: string
  args: Record<string, unknown>
  /** `agent` (the model), `script` (its `archmax_eval`/`archmax_run` code) or `lifecycle` (a hook). */
  origin: 'agent' | 'script' | 'lifecycle'
  /** The run is parked and only talks. */
  replyOnly: boolean
}
/** What a host rule may read besides the call. */
export type RuleApi = { variables: Record<string, unknown> }
/** A rule's opinion; `reason` is what the model reads on a block. */
export type Verdict = { decision: 'allow' | 'block'; ruleId: string; reason?: string; warn?: boolean; terminal?: boolean }
/** A host rule: a verdict, or null to abstain. Synchronous, like the kernel. */
export type GovernanceRule = (action: ProposedToolCall, api: RuleApi) => Verdict | null | undefined

export type SendInput =
  | { message?: string; trigger?: TriggerRef; variables?: Record<string, unknown>; sessionPath?: string; traceparent?: string; decision?: undefined; delivery?: undefined }
  /** Resumes a session parked at a human state, as `decide` does. */
  | { decision: Decision | string; message?: undefined; delivery?: undefined }
  /** Resumes a session parked for an event, as `deliver` does. */
  | { delivery: Delivery; message?: undefined; decision?: undefined }
/** The original's `{ target, comment? }`; `{ to }` is accepted as an alias of `target`. */
export type Decision = ({ target: string; to?: never } | { to: string; target?: never }) & { comment?: string; traceparent?: string }
export type Delivery = { trigger: TriggerRef; variables?: Record<string, unknown>; message?: string; traceparent?: string }
/** `createAgent({ telemetry })`. */
export interface TelemetryOptions {
  /** The OTLP traces endpoint, complete (`http://collector:4318/v1/traces`). */
  endpoint?: string
  /** `http/protobuf` (default), `http/json` or `grpc` (a build with the `grpc` feature). */
  protocol?: 'http/protobuf' | 'http/json' | 'grpc'
  /** Sent with every export request. */
  headers?: Record<string, string>
  /** The resource's `service.name` (default `OTEL_SERVICE_NAME`, else `archmax`). */
  serviceName?: string
  /** Model spans carry the messages (default `OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT`). */
  captureMessageContent?: boolean
  /** The W3C `traceparent` each turn runs under, asked at the turn's start (a call's own `traceparent` wins). */
  traceparent?: () => string | null | undefined
}
/** What `resolveSession` is given: the firing's trigger and variables, and an id or a path to find it by. */
export type ResolveSessionInput = { trigger?: TriggerRef; variables?: Record<string, unknown>; sessionId?: string; sessionPath?: string }

export interface WorkflowOperations {
  /** A message (or firing) to a session; a null id is resolved (declared `session:` path, else minted). */
  send(sessionId: string | null | undefined, input?: SendInput): Promise<Outcome>
  /**
   * `send` as an async iterator for `for await`: the session's events as they happen
   * (`agent-text-delta` included), then the Outcome as the last item (it has `kind`, events
   * have `type`). A turn that throws rejects the iteration after its events.
   */
  stream(sessionId: string | null | undefined, input?: SendInput): AsyncGenerator<EventEnvelope | Outcome, void, undefined>
  decide(sessionId: string, decision: Decision | string): Promise<Outcome>
  reply(sessionId: string, message: string): Promise<Outcome>
  deliver(sessionId: string, delivery: Delivery): Promise<Outcome>
  /**
   * How a firing would land, running nothing: a `turn` (with its `startState`), a `reply`
   * (parked at a human state) or a `resume` (parked for an event), with the parked `state`.
   * `native` is true when the id was minted. Rejects `SessionNotResumableError` while a turn
   * runs on the session.
   */
  resolveSession(input?: ResolveSessionInput): Promise<ResolvedSession>
  /** The trigger's start state (default: the agent's trigger); throws `UnknownTriggerError`. */
  resolveTrigger(trigger?: { id: string }): { id: string; startState: string }
}

/**
 * A status word for `sessions.list({ status })` and `sessions.prune({ status })`: a standing
 * (`SessionSummary.standing.kind`), or one of the original's status values, which names the
 * standings it covers (`completed`: idle and done; `awaiting_input`: awaiting-input and waiting).
 */
export type SessionStatusWord = StandingKind | 'completed' | 'awaiting_decision' | 'awaiting_input'

/** An age: a whole number and a unit (`'30s'`, `'15m'`, `'12h'`, `'7d'`, `'2w'`), or milliseconds. */
export type SessionAge = `${number}${'s' | 'm' | 'h' | 'd' | 'w'}` | number

/** What `sessions.list` selects. */
export interface SessionListOptions {
  /** Only sessions standing so: a word, comma-separated words, or an array of words. */
  status?: SessionStatusWord | string | Array<SessionStatusWord>
  /** Only sessions that have stood so for at least this long (`standing.since`). */
  olderThan?: SessionAge
  /**
   * The attention view: the root sessions that need a person, stalled work first (idle,
   * cancelled, failed and resumable, waiting past its due time, running for over an hour),
   * then sessions parked for over a day, each longest-standing first.
   */
  attention?: boolean
}

/** What `sessions.prune` removes. */
export interface PruneSessionsOptions {
  /**
   * Root sessions standing so (default: done, failed, cancelled, rejected; idle only when
   * named). A running or parked standing throws `TypeError`: remove such a session by `sessionId`.
   */
  status?: SessionStatusWord | string | Array<SessionStatusWord>
  /** Only sessions that have stood so for at least this long. */
  olderThan?: SessionAge
  /** Say what would be removed; remove nothing. */
  dryRun?: boolean
  /** This one session (and its child sessions), parked or not; not with `status` or `olderThan`. */
  sessionId?: string
}

export interface SessionOperations {
  /**
   * Every session of the store with a readable checkpoint (child sessions as their own
   * entries), each with its `standing`; with options, those they select.
   */
  list(options?: SessionListOptions): Promise<Array<SessionSummary>>
  /**
   * Removes sessions with their child sessions, by standing and age or one by id. Each
   * session's writer lease is taken first: a session a turn holds, in any process, is left
   * (`skipped`). Never a running or parked session unless named by `sessionId`.
   */
  prune(options?: PruneSessionsOptions): Promise<PruneReport>
  /** A session's summary; null when it has not run. Throws `SessionStoreIdError` for a bad id. */
  get(sessionId: string): Promise<SessionSummary | null>
  /** The committed transcript (OpenAI chat messages, runtime notes included); [] when none. */
  messages(sessionId: string): Promise<Array<TranscriptMessage>>
  /** How many messages the committed transcript holds; 0 when none. */
  messageCount(sessionId: string): Promise<number>
  /**
   * The park a parked session waits on, read from the store (so the same after a restart):
   * the park record the Outcome that parked it carried as `pending`, with the parked state's
   * `instructions` and `approvers` from the spec when it declares them; null when the session
   * has not run or is not parked.
   */
  park(sessionId: string): Promise<SessionPark | null>
  /**
   * Deletes the session and its child sessions; true when something was removed. Throws
   * `SessionNotResumableError` while a turn holds the session.
   */
  delete(sessionId: string): Promise<boolean>
  /**
   * Writes files into the session folder (strings verbatim, other values as pretty JSON).
   * Every path must be an agent-visible session file (`trigger.json`, `scratchpad/…`); a
   * refused path throws a plain `Error` and nothing is written. Needs a filesystem store
   * (`SessionStoreCapabilityError`).
   */
  seed(sessionId: string, files: Record<string, unknown>): Promise<void>
  /**
   * Every committed step of the session, oldest first: its number (what `fork` takes), the
   * state and status after it, what it did in words, when, and the tokens and cost it spent;
   * null when the session has not run. A store that keeps only the latest step (a host's
   * `SessionStore`) throws `SessionStoreCapabilityError`.
   */
  history(sessionId: string): Promise<Array<HistoryStep> | null>
  /**
   * Makes a new session from step `at` of this one: the same spec snapshot, the step's
   * state (position, variables, park) and transcript, the session's files as they are now,
   * and `forkedFrom` naming the source and step. The new id is `as`, else
   * `<sessionId>-fork-<at>` (numbered on when taken). A fork of a parked step is parked
   * the same way. The source is not changed. Answers the fork's summary; refusals throw
   * `SessionForkError`.
   */
  fork(sessionId: string, options: { at: number; as?: string }): Promise<SessionSummary>
}

/** A message of an `invoke` input: `{ role, content }` (LangChain's `human`/`ai` roles and messages are read too), a `[role, content]` pair, or a string (a user message). */
export type InvokeMessage =
  | { role: 'user' | 'human' | 'assistant' | 'ai' | 'system'; content: string | Array<{ type: string; text?: string; [key: string]: unknown }> }
  | { type: 'human' | 'ai' | 'system'; content: string | Array<{ type: string; text?: string; [key: string]: unknown }> }
  | [role: string, content: string]
  | string

/** What `invoke` takes: messages to append (the last user message opens the turn); a governed agent also reads `trigger` and `variables` (seeds, locked). */
export type InvokeInput = { messages: Array<InvokeMessage>; trigger?: TriggerRef; variables?: Record<string, unknown> }

/**
 * The part of a LangGraph `RunnableConfig` `invoke` reads: the session is `thread_id`, else
 * `__default__`; `callbacks`, `tags` and `metadata` reach every call of the turn to a LangChain
 * chat model (`model`, a `modelFactory`'s), its sub-workflows' included.
 */
export type InvokeConfig = {
  configurable?: { thread_id?: string; [key: string]: unknown }
  traceparent?: string
  /** LangChain callback handlers (or a callback manager): each model call of the turn reports to them. */
  callbacks?: unknown
  tags?: Array<string>
  metadata?: Record<string, unknown>
  [key: string]: unknown
}

/**
 * What `invoke` resolves to: the session's whole transcript and its status (a failed turn,
 * `turn-error`/`turn-cancelled`/`recursion-limit`, resolves with `exit`); a governed agent's
 * result also carries the workflow channels of the original's graph state.
 */
export type InvokeResult = {
  messages: Array<ChatMessage & Record<string, unknown>>
  status: import('../types/WorkflowStatus.js').WorkflowStatus
  exit?: { success: false; code: string; reason: string }
  usage?: UsageSummary
  /** Governed only: the state the session stands in. */
  workflowState?: string
  /** Governed only. */
  variables?: VariableStore
  /** Governed only. */
  auditTrail?: Array<import('../types/TrailStep.js').TrailStep>
  /** Governed only: the park record when parked at a human state. */
  pendingDecision?: PendingDecision
  /** Governed only: the park record when parked for an event. */
  pendingInput?: PendingInput
  /** Governed only: why governance ended the turn. */
  rejected?: string
}

export interface Agent {
  /**
   * The runtime contract the spec's `runtime:` declares (`source: 'declared'`), or the
   * defaulted `archmax-harness@1` (`source: 'defaulted'`), with the sandbox and test-case
   * format versions it selects (a plain agent: the defaulted one). Frozen.
   */
  readonly runtimeContract: Readonly<RuntimeContract>
  /** The workflow operations; `undefined` on a plain (ungoverned) agent. */
  workflow: WorkflowOperations | undefined
  /**
   * True when `createToolMockMiddleware()` is in `middleware`: cases declaring mocks run on the
   * agent (`runTests`, `runCase`); else such a case fails before it runs. A host may set it.
   */
  toolMocks: boolean
  /**
   * One turn on `config.configurable.thread_id` (else `__default__`; a bad id rejects
   * `SessionStoreIdError` before anything runs): the messages are appended and the last user
   * message opens the turn (`EmptyMessageError` when there is none). On a governed agent it is
   * the turn `send` runs, except that a fresh turn of a disabled workflow settles `rejected`.
   */
  invoke(input: InvokeInput, config?: InvokeConfig): Promise<InvokeResult>
  /**
   * `invoke` as a stream, LangGraph's way: `values` (the default) yields the state `invoke`
   * resolves to, `messages` yields `[chunk, metadata]` for each piece of text the model shows
   * (a sub-workflow's tagged `archmax:child`), `custom` yields the harness's events; an array
   * of modes yields `[mode, chunk]` pairs.
   */
  stream<M extends StreamMode | Array<StreamMode> = 'values'>(
    input: InvokeInput,
    options?: InvokeConfig & { streamMode?: M },
  ): Promise<AsyncIterable<M extends Array<StreamMode> ? [StreamMode, unknown] : StreamChunk<M & StreamMode>>>
  /**
   * Writes the session's run under its `artifacts/` folder: `graph.json` and `graph.mmd` (the
   * workflow's states and transitions), `trajectory.json`, `metadata.json` (runtime contract,
   * package version, spec hash, usage) and, governed, `trail.json` (`opts.trail`, else the
   * checkpoint's) and `variables.json`. Answers `"<id>/artifacts"`, or `null` after a
   * `warning` event (scope `run-artifacts`) when they could not be written.
   */
  emitRunArtifacts(sessionId: string, trajectory: unknown, opts?: { trail?: Array<import('../types/TrailStep.js').TrailStep> }): Promise<string | null>
  sessions: SessionOperations
  /**
   * The spec a session ran under, by its summary's `specHash` (a snapshot is kept the first
   * time a turn runs under a spec); `null` when the store has none.
   */
  getSpecSnapshot(hash: string): Promise<Workflow | null>
  /** Cancels the session's turn in flight (it ends failed, `turn-cancelled`); false when none runs. */
  cancel(sessionId: string): boolean
  /**
   * With an id: releases what the agent keeps for that session and its child sessions between
   * turns (the JS model's conversation copies); the agent stays usable. Idempotent, never throws.
   * Without: releases the JS callbacks; later calls throw `AgentDisposedError`. Idempotent.
   */
  dispose(sessionId?: string): void
}

/** Usage and cost folded from the event stream, per session. */
export interface UsageTracker {
  /** Pass as `onEvent`; forwards every event to the tracker's own `onEvent`. */
  handler: (event: EventEnvelope) => void
  /** One session's totals, or every session's summed (cost only if some session had it). */
  totals(sessionId?: string): UsageSummary
  /** Totals by session id (events without one under `__unscoped__`). */
  bySession(): Map<string, UsageSummary>
  /** Forgets one session's totals, or all. */
  reset(sessionId?: string): void
}

export declare function createUsageTracker(options?: { onEvent?: (event: EventEnvelope) => void }): UsageTracker

/** An agent a workflow governs. */
export interface GovernedAgent extends Agent {
  workflow: WorkflowOperations
}
/** A plain, ungoverned agent: file tools, skills and host tools, no workflow. */
export interface PlainAgent extends Agent {
  workflow: undefined
}

/** The tag a sub-workflow child's model text carries in message streams (`agent.stream`, Deep Agents' `streamMode: "messages"`). */
export declare const CHILD_TAG: 'archmax:child'
/** A `streamMode` of `agent.stream`. */
export type StreamMode = 'values' | 'messages' | 'custom'
/** What one mode of `agent.stream` yields. */
export type StreamChunk<M extends StreamMode> = M extends 'values'
  ? InvokeResult
  : M extends 'messages'
    ? [chunk: { content: string; id?: string; [key: string]: unknown }, metadata: { langgraph_node: 'model'; archmax_state?: string; archmax_session_id?: string; archmax_child?: true; tags?: Array<string> }]
    : EventEnvelope

/** The option names `createAgent` takes (the keys of `CreateAgentParams`); any other name is a `TypeError` naming these. */
export declare const AGENT_OPTIONS: ReadonlyArray<keyof CreateAgentParams>
export declare function createAgent(params: CreateAgentParams & { workflow: string }): Promise<GovernedAgent>
export declare function createAgent(params: CreateAgentParams & { workflow: false }): Promise<PlainAgent>
export declare function createAgent(params?: CreateAgentParams): Promise<Agent>

/** The `code` (and `name`) of every error class the package raises (generated from Rust). */
export type { HarnessErrorCode } from '../types/HarnessErrorCode.js'
import type { HarnessErrorCode } from '../types/HarnessErrorCode.js'

export declare class HarnessError extends Error {
  constructor(message: string, code?: HarnessErrorCode)
  /** The class name. */
  code: HarnessErrorCode
}
export declare class WorkflowLoadError extends HarnessError {
  code: 'WorkflowLoadError'
  workflow: string
  workflowPath: string
  /** `no workflow.yaml found`, `no valid machine spec`, or `the file <reason>` (not a regular file, too large, …). */
  problem: import('../types/LoadProblem.js').LoadProblem
  diagnostics: Array<import('../types/Diagnostic.js').Diagnostic>
}
export declare class WorkflowDisabledError extends HarnessError {
  code: 'WorkflowDisabledError'
  workflow: string
}
export declare class UnknownTriggerError extends HarnessError {
  code: 'UnknownTriggerError'
  triggerId: string
  available: Array<string>
}
export declare class ReservedToolNameError extends HarnessError {
  code: 'ReservedToolNameError'
  /** The offending host tool names, in the order given. */
  names: Array<string>
  /** `prefix`: they start with `archmax_`; `file-operation`: `copy_file`, `move_file` or `remove_file`. */
  reservation: 'prefix' | 'file-operation'
}
export declare class ToolPathsError extends HarnessError {
  code: 'ToolPathsError'
}
export declare class InvalidVariableNameError extends HarnessError {
  code: 'InvalidVariableNameError'
  variable: string
  source: string
}
export declare class MountCollisionError extends HarnessError {
  code: 'MountCollisionError'
  /** The mount key, `/name/` or `/name`. */
  key: string
}
export declare class SessionStoreIdError extends HarnessError {
  code: 'SessionStoreIdError'
  /** The refused id as given; absent when a session path (not an id) was refused. */
  sessionId?: string
}
export declare class SessionStoreError extends HarnessError {
  code: 'SessionStoreError'
}
export declare class SessionStoreCapabilityError extends HarnessError {
  code: 'SessionStoreCapabilityError'
  /** What the configured store is (`in-memory`, …). */
  storeKind: string
  /** The operation it lacks (`seed`, …). */
  capability: string
}
export declare class SessionNotParkedError extends HarnessError {
  code: 'SessionNotParkedError'
  sessionId: string
}
export declare class InvalidDecisionTargetError extends HarnessError {
  code: 'InvalidDecisionTargetError'
  sessionId: string
  /** Absent when no target was given. */
  target?: string
  validTargets: Array<string>
}
export declare class EmptyMessageError extends HarnessError {
  code: 'EmptyMessageError'
  sessionId: string
}
export declare class SessionNotAwaitingInputError extends HarnessError {
  code: 'SessionNotAwaitingInputError'
  sessionId: string
}
export declare class MissingDeliveryTriggerError extends HarnessError {
  code: 'MissingDeliveryTriggerError'
  sessionId: string
}
export declare class SessionNotResumableError extends HarnessError {
  code: 'SessionNotResumableError'
  sessionId: string
  /** The session's stored status, or `unknown` when it has none yet. */
  status: string
}
export declare class SessionParkedError extends HarnessError {
  code: 'SessionParkedError'
  sessionId: string
}
export declare class UnsupportedRuntimeContractError extends HarnessError {
  code: 'UnsupportedRuntimeContractError'
  /** `<engine>@<version>` as the spec declares it. */
  requested: string
  /** `['archmax-harness@1', 'archmax-harness@2']`. */
  supported: Array<string>
}
export declare class AgentDisposedError extends HarnessError {
  code: 'AgentDisposedError'
}
/** `Governance.decide` (and friends) in a state the workflow does not declare. */
export declare class SessionForkError extends HarnessError {
  code: 'SessionForkError'
}
export declare class UnknownStateError extends HarnessError {
  code: 'UnknownStateError'
  /** The state asked for. */
  state: string
  /** The workflow's states, in declaration order. */
  states: Array<string>
}
/** The error classes by name. */
export declare const errors: {
  WorkflowLoadError: typeof WorkflowLoadError
  WorkflowDisabledError: typeof WorkflowDisabledError
  UnknownTriggerError: typeof UnknownTriggerError
  ReservedToolNameError: typeof ReservedToolNameError
  ToolPathsError: typeof ToolPathsError
  InvalidVariableNameError: typeof InvalidVariableNameError
  MountCollisionError: typeof MountCollisionError
  SessionStoreIdError: typeof SessionStoreIdError
  SessionStoreError: typeof SessionStoreError
  SessionStoreCapabilityError: typeof SessionStoreCapabilityError
  SessionForkError: typeof SessionForkError
  SessionNotParkedError: typeof SessionNotParkedError
  InvalidDecisionTargetError: typeof InvalidDecisionTargetError
  EmptyMessageError: typeof EmptyMessageError
  SessionNotAwaitingInputError: typeof SessionNotAwaitingInputError
  MissingDeliveryTriggerError: typeof MissingDeliveryTriggerError
  SessionNotResumableError: typeof SessionNotResumableError
  SessionParkedError: typeof SessionParkedError
  UnsupportedRuntimeContractError: typeof UnsupportedRuntimeContractError
  AgentDisposedError: typeof AgentDisposedError
  UnknownStateError: typeof UnknownStateError
}

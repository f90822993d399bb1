// `@archmax-ai/harness/deepagents`: the workflow as a LangChain agent middleware.
import type { AgentMiddleware } from 'langchain'
import type { CreateAgentParams, GovernedAgent, SessionPark } from './agent.js'

/** Options of `archmaxMiddleware`: the `createAgent` options that make sense under LangGraph. */
export type ArchmaxMiddlewareOptions = Pick<
  CreateAgentParams,
  | 'workspace'
  | 'skills'
  | 'systemPrompt'
  | 'trigger'
  | 'variables'
  | 'essentialTools'
  | 'toolPaths'
  | 'policyRules'
  | 'hookExecutors'
  | 'onEvent'
  | 'promptCache'
  | 'pricing'
  | 'defaultModel'
  | 'images'
> & {
  /** The workflow slug (`workflows/<slug>/workflow.yaml` under `workspace.rootDir`). */
  workflow: string
  /** The LangChain chat model that grades rubrics (default: the agent's model). */
  rubricModel?: unknown
}

/**
 * The payload of the `interrupt()` a park raises: the park record the harness persisted (what
 * `sessions.park` answers, the same after a restart) with the session id. Resume with
 * `new Command({ resume: { target, comment? } })` (a decision; `{ message }` replies instead)
 * or `{ trigger, variables?, message? }` (an input park).
 */
export type ArchmaxInterrupt = SessionPark & { sessionId: string }

/**
 * What `archmaxMiddleware` returns: a LangChain agent middleware, typed as `createMiddleware()`
 * types one with no state or context schema (`AgentMiddleware<undefined, undefined, unknown>`
 * from `langchain`), so it goes into `createDeepAgent({ middleware })` and LangChain's
 * `createAgent({ middleware })` under `--strict`.
 */
export interface ArchmaxMiddleware extends AgentMiddleware<undefined, undefined, unknown> {
  readonly name: 'ArchmaxMiddleware'
  /** The harness agent behind the middleware (sessions, runtime contract); rejects before the first model call. */
  harness(): Promise<GovernedAgent>
  /** Releases the harness agent's callbacks so Node can exit; never throws. */
  dispose(): Promise<void>
}

/**
 * The tag a sub-workflow child's model calls carry in LangGraph's streams (with the metadata
 * `archmax_child: true` and `archmax_session_id`): `streamMode: "messages"` yields them with
 * `metadata.tags` holding it, so a chat UI can leave a child's internal text out.
 */
export { CHILD_TAG } from './agent.js'

/** The workflow as a LangChain agent middleware, for `createDeepAgent` and LangChain's `createAgent`. */
export declare function archmaxMiddleware(options: ArchmaxMiddlewareOptions): ArchmaxMiddleware

// `@archmax-ai/harness/deepagents`: the workflow as a LangChain agent middleware.
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

/** What `archmaxMiddleware` returns: a LangChain `AgentMiddleware` (as `createMiddleware` builds it). */
export interface ArchmaxMiddleware {
  readonly name: 'ArchmaxMiddleware'
  wrapModelCall(request: any, handler: (request: any) => Promise<any>): Promise<any>
  wrapToolCall(request: any, handler: (request: any) => Promise<any>): Promise<any>
  /** The harness agent behind the middleware (sessions, runtime contract); rejects before the first model call. */
  harness(): Promise<GovernedAgent>
  /** Releases the harness agent's callbacks so Node can exit. */
  dispose(): Promise<void>
}

/** The workflow as a LangChain agent middleware, for `createDeepAgent` and LangChain's `createAgent`. */
export declare function archmaxMiddleware(options: ArchmaxMiddlewareOptions): ArchmaxMiddleware

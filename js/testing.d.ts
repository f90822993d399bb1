// Types of `@archmax-ai/harness/testing` (testing.js). The result shapes are the engine's
// ts-rs output in types/, so they cannot drift from what it serializes.
import type { Agent, CreateAgentParams, GovernedAgent, EventEnvelope, ToolMockMiddleware } from './agent.js'
import type { AssertionRecord } from '../types/AssertionRecord.js'
import type { CaseResult } from '../types/CaseResult.js'
import type { CaseVerdict } from '../types/CaseVerdict.js'
import type { RunTestsResult } from '../types/RunTestsResult.js'

export type { AssertionRecord } from '../types/AssertionRecord.js'
export type { AssertionStatus } from '../types/AssertionStatus.js'
export type { CaseResult } from '../types/CaseResult.js'
export type { CaseVerdict } from '../types/CaseVerdict.js'
export type { RunTestsResult } from '../types/RunTestsResult.js'

export declare const CASE_TITLE_MAX_LENGTH: 60
export declare const CASE_DESCRIPTION_MAX_LENGTH: 200

/** A case document that breaks the schema; `message` is `<file>: <problem>; …`. */
export declare class CaseSchemaError extends Error {
  name: 'CaseSchemaError'
}

/** A case document as read (title and description collapsed, mocks as `{ name, whenInput?, result }`). */
export interface CaseDocument {
  title: string
  description: string
  skip?: string
  trigger?: { id: string }
  variables?: Record<string, unknown>
  workspace?: Record<string, unknown>
  mocks?: Array<{ name: string; whenInput?: Record<string, unknown>; result: unknown }>
  steps: Array<Record<string, unknown>>
}

/**
 * Reads the case document `text` of the case file `file` (workspace-relative) in the tests
 * folder `dir` (default: the file's `workflows/<slug>/tests`), as the original's
 * `parseCaseDocument(file, source, testsDir)`. Throws `CaseSchemaError` naming every problem.
 */
export declare function parseCaseDocument(file: string, text: string, dir?: string): CaseDocument & { file: string; id: string }
/**
 * The YAML text of a case document, the inverse of `parseCaseDocument` (keys in the schema's
 * order, multi-line strings as literal blocks, never folded; `file`/`id` are not written).
 * Throws `CaseSchemaError` when the text would not be a valid case.
 */
export declare function serializeCaseDocument(doc: CaseDocument & { file?: string; id?: string }): string
/** The marker that sets `agent.toolMocks` when given in `createAgent({ middleware })`. */
export declare function createToolMockMiddleware(): ToolMockMiddleware
/** Throws `Error("Case target '<workflow>' has no workflow machine; …")` unless `agent.workflow` is set. */
export declare function assertWorkflowGovernedTarget(agent: Agent, workflow: string): asserts agent is GovernedAgent

/** Each case's model exchanges recorded into, or replayed from, `tests/<case>.cassette.json`. */
export type CaseCassettes = 'record' | 'replay'

export interface CaseTargetOptions extends Pick<CreateAgentParams, 'model' | 'modelFactory' | 'defaultModel' | 'tools'> {
  workflow: string
  /** The workspace root (default: the current directory). */
  rootDir?: string
  /** Extra `workspace` options for the agent (`mounts`; `sessionStore` to run the cases in that store). */
  workspace?: CreateAgentParams['workspace']
  onEvent?: (event: EventEnvelope) => void
  /** A cassette per case: `replay` needs no model and no `ARCHMAX_*` variable. */
  cassettes?: CaseCassettes
}

/** `createAgent` over the workflow with `createToolMockMiddleware()` wired, checked governed. */
export declare function createCaseTarget(options: CaseTargetOptions): Promise<GovernedAgent>

export interface RunCaseOptions {
  /** The agent the case runs on (not disposed; the case's session is). */
  agent: Agent
  /** The workspace-relative case file, as `discoverCases` returns it. */
  file?: string
  /** The original's shape: a `parseError` is the failed result, nothing runs. */
  discovered?: { file: string; doc?: CaseDocument; parseError?: string }
  /** Default: the slug in `file` (`workflows/<slug>/tests/…`); must match it. */
  workflow?: string
  /** Accepted for the original's sake; the case is read under the agent's own root. */
  rootDir?: string
  /** Default `test-default-test-run-<epoch ms>-<file with / as ->`. */
  sessionId?: string
  /** Outranks `tests.caseTimeoutMs`. */
  caseTimeoutMs?: number
}

/** Runs one case; never throws for the case's own failure. */
export declare function runCase(options: RunCaseOptions): Promise<CaseResult>
export declare function discoverCases(options: { workflow: string; rootDir?: string }): string[]
export declare function partialMatch(expected: unknown, actual: unknown): boolean
export declare function reduceVerdict(records: AssertionRecord[], error?: string | null): CaseVerdict
export declare function exitCodeForVerdict(verdict: CaseVerdict): 0 | 1

export interface RunTestsOptions extends Pick<CreateAgentParams, 'model' | 'modelFactory' | 'defaultModel' | 'tools'> {
  /** The workflow slug whose `tests/` suite runs. */
  workflow: string
  /** The workspace root (default: the current directory). */
  rootDir?: string
  /** Extra `workspace` options for the agent (`mounts`; `sessionStore` to run the cases in that store). */
  workspace?: CreateAgentParams['workspace']
  /** Keeps the case files whose workspace-relative path contains this text. */
  filter?: string
  /** Every event of every case's session. */
  onEvent?: (event: EventEnvelope) => void
  /** A case starts: its file, and its session (none for a file that did not parse or a skipped case). */
  onCaseStart?: (file: string, sessionId?: string) => void
  /** A case ended. */
  onCaseResult?: (result: CaseResult) => void
  /** A cassette per case, on the default target (`createCaseTarget`); not with `createTarget`. */
  cassettes?: CaseCassettes
  /** The agent to run on, or how to build it (default: `createCaseTarget` with the options above). */
  createTarget?: GovernedAgent | ((o: { workflow: string; rootDir: string; onEvent: (event: EventEnvelope) => void }) => Promise<GovernedAgent> | GovernedAgent)
  /** The session id of a case file (default `test-default-test-run-<epoch ms>-<file with / as ->`). */
  sessionIdForCase?: (file: string) => string
  /**
   * Keep the cases' sessions after the run. By default the default target runs them in a
   * filesystem store in a new temporary folder, removed after the run (or, with
   * `workspace.sessionStore`, removes them from that store); never in the workspace's sessions.
   */
  keep?: boolean
}

/** What `runTests` answers: the engine's result, and the temporary folder kept with `keep`. */
export type RunTestsOutcome = RunTestsResult & {
  /** With `keep` and the default store: the folder the cases' sessions are in. */
  sessionsKept?: string
}

export declare function runTests(options: RunTestsOptions): Promise<RunTestsOutcome>

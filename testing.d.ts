// Types of `@archmax-ai/harness/testing` (testing.js). The result shapes are the engine's
// ts-rs output in types/, so they cannot drift from what it serializes.
import type { CreateAgentParams, GovernedAgent, EventEnvelope } from './agent.js'
import type { AssertionRecord } from './types/AssertionRecord.js'
import type { CaseResult } from './types/CaseResult.js'
import type { CaseVerdict } from './types/CaseVerdict.js'
import type { RunTestsResult } from './types/RunTestsResult.js'

export type { AssertionRecord } from './types/AssertionRecord.js'
export type { AssertionStatus } from './types/AssertionStatus.js'
export type { CaseResult } from './types/CaseResult.js'
export type { CaseVerdict } from './types/CaseVerdict.js'
export type { RunTestsResult } from './types/RunTestsResult.js'

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

export declare function parseCaseDocument(text: string, file?: string): CaseDocument
export declare function discoverCases(options: { workflow: string; rootDir?: string }): string[]
export declare function partialMatch(expected: unknown, actual: unknown): boolean
export declare function reduceVerdict(records: AssertionRecord[], error?: string | null): CaseVerdict
export declare function exitCodeForVerdict(verdict: CaseVerdict): 0 | 1

export interface RunTestsOptions extends Pick<CreateAgentParams, 'model' | 'modelFactory' | 'defaultModel' | 'tools'> {
  /** The workflow slug whose `tests/` suite runs. */
  workflow: string
  /** The workspace root (default: the current directory). */
  rootDir?: string
  /** Extra `workspace` options for the agent (`sessionStore`, `mounts`). */
  workspace?: CreateAgentParams['workspace']
  /** Keeps the case files whose workspace-relative path contains this text. */
  filter?: string
  /** Every event of every case's session. */
  onEvent?: (event: EventEnvelope) => void
  /** A case starts: its file, and its session (none for a file that did not parse or a skipped case). */
  onCaseStart?: (file: string, sessionId?: string) => void
  /** A case ended. */
  onCaseResult?: (result: CaseResult) => void
  /** The agent to run on, or how to build it (default: `createAgent` with the options above). */
  createTarget?: GovernedAgent | ((o: { workflow: string; rootDir: string; onEvent: (event: EventEnvelope) => void }) => Promise<GovernedAgent> | GovernedAgent)
  /** The session id of a case file (default `test-default-test-run-<epoch ms>-<file with / as ->`). */
  sessionIdForCase?: (file: string) => string
}

export declare function runTests(options: RunTestsOptions): Promise<RunTestsResult>

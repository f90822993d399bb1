// Types of `@archmax-ai/harness/messages` (messages.js): duck-typed transcript readers.

/**
 * The kind of a runtime note (generated from the harness's list). `budget` is this runtime's
 * addition (the model-call budget warning); `sub-workflow` is written when a child that parked
 * its caller finishes after the caller is resumed; `opening` is not written by this runtime.
 */
export type { RuntimeNoteKind } from '../types/RuntimeNoteKind.js'
import type { RuntimeNoteKind } from '../types/RuntimeNoteKind.js'

/**
 * One message of a session's transcript (`Outcome.messages`, `agent.sessions.messages`): an
 * OpenAI chat message; a runtime note carries `archmax.note`.
 */
export type TranscriptMessage = {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string | null | Array<{ type: string; text?: string; [key: string]: unknown }>
  /** An assistant's tool calls. */
  tool_calls?: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }>
  /** A tool result's call id. */
  tool_call_id?: string
  name?: string
  /** Present on the runtime's own notes. */
  archmax?: { note: RuntimeNoteKind; [key: string]: unknown }
  /** A tool result the governance refused (its text opens `[workflow] BLOCKED`). */
  governance_blocked?: true
  [key: string]: unknown
}

/**
 * `_getType()`, else `getType()`, else (a serialized LangChain message) the type named by the
 * last `id` segment, else `type`, else `role`, else `""`.
 */
export declare function messageTypeOf(message: unknown): string
/** Type `ai` or `assistant`. */
export declare function isAiMessage(message: unknown): boolean
/** Type `human` or `user`. */
export declare function isHumanMessage(message: unknown): boolean
/**
 * The note kind from `additional_kwargs.archmax.note`, `kwargs.additional_kwargs.archmax.note`
 * or a top-level `archmax.note`; `null` when absent or unknown.
 */
export declare function runtimeNoteKind(message: unknown): RuntimeNoteKind | null
/** `runtimeNoteKind(message) !== null`. */
export declare function isRuntimeNote(message: unknown): boolean
/** A string as is; the concatenated `text` of a part array's text parts; `""` otherwise. */
export declare function contentToString(content: unknown): string
/** The trimmed text of the last agent message with non-blank text, notes skipped; `""` if none. */
export declare function lastAgentText(messages: readonly unknown[]): string
/** A person's message or a runtime note. */
export declare function opensTurn(message: unknown): boolean
/** The messages from `floor(max(0, cursor))` on. */
export declare function messagesSince<T>(messages: readonly T[], cursor: number): T[]
/** From the first message of the last unbroken run of turn openers to the end. */
export declare function lastTurn<T>(messages: readonly T[]): T[]

// Types of `@archmax-ai/harness/sandbox` (sandbox.js): what this runtime's QuickJS sandbox hands a
// lifecycle hook script and what it reads back (crates/sandbox/src/input.rs, verdict.rs,
// prelude.rs; crates/machine/src/hooks.rs, ptc.rs).

import type { RuntimeNoteKind } from './messages.js'

/** A verdict object. A blank or missing `reason` reads as the helpers' default. */
export type HookVerdict = {
  verdict: 'ok' | 'veto' | 'correct'
  reason?: string
}

/** `before` guards entry to a state (before its first model call of a visit); `after` the move out of it. */
export type HookPhase = 'before' | 'after'

/** One call made by an assistant message. */
export type HookToolCall = {
  /** The tool's name as the model called it (snake_case, e.g. `read_file`). */
  name: string
  /** The parsed arguments (`{}` when they were not JSON). */
  args: Record<string, unknown>
}

/**
 * One transcript entry. A runtime note (an `archmax_note` call plus its answer in the transcript)
 * is one entry: `role: "runtime"`, its text and `note`.
 */
export type HookMessage = {
  role: 'user' | 'assistant' | 'system' | 'tool' | 'runtime' | (string & {})
  /** The entry's text (`""` for an assistant message that only called tools). */
  text: string
  /** The calls of an assistant message. */
  toolCalls?: HookToolCall[]
  /** The tool a `tool` entry answers (declared for the original's shape; this runtime does not set it). */
  tool?: string
  /** The kind of a `runtime` entry. */
  note?: RuntimeNoteKind
}

/** What a hook is asked about; also the global `args` of a hook script. */
export type HookArgs = {
  /** The state the hook belongs to. */
  state: string
  phase: HookPhase
  /** The run's trigger id. */
  trigger?: string
  /** The run's variables, name → value (a copy: writing it changes nothing). */
  variables: Record<string, unknown>
  /** The newest transcript entries (from the last 24 transcript messages), oldest first. */
  messages: HookMessage[]
  /** The state being left (an `after` hook on an advance). */
  from?: string
  /** The advance's target (an `after` hook on an advance). */
  to?: string
  /** The agent's reason for the advance, trimmed; absent when blank. */
  reason?: string
}

/**
 * The hook's `tools`: every file tool, plus the host's tools under their camelCase names
 * (`crm_lookup` → `tools.crmLookup`). Calls are governed with lifecycle authority. The file
 * tools answer their own errors as text (`"Error: …"`) rather than rejecting; `readFile`
 * answers the file's text without line numbers. A governance refusal or a host tool's failure
 * rejects with `Error("Tool '<name>' failed: <text>")`.
 */
export interface SandboxTools {
  ls(args?: { path?: string }): Promise<string>
  readFile(args: ({ file_path: string } | { path: string }) & { offset?: number; limit?: number }): Promise<string>
  writeFile(args: { file_path: string; content?: string }): Promise<string>
  editFile(args: { file_path: string; old_string: string; new_string: string; replace_all?: boolean }): Promise<string>
  glob(args: { pattern: string; path?: string }): Promise<string>
  grep(args: { pattern: string; path?: string; glob?: string; max_count?: number }): Promise<string>
  copyFile(args: { source: string; destination: string; overwrite?: boolean }): Promise<string>
  moveFile(args: { source: string; destination: string; overwrite?: boolean }): Promise<string>
  removeFile(args: { file_path: string }): Promise<string>
  /** A host tool (present only when the agent was given it). */
  [hostTool: string]: (args?: any) => Promise<string>
}

/** What a hook function receives: `HookArgs` and its `tools`. */
export type HookInput = HookArgs & { tools: SandboxTools }

/** One step of the audit trail (not handed to hooks by this runtime). */
export type TrailStep = {
  /** The state entered. */
  to: string
  kind: 'trigger' | 'agent' | 'human' | 'sub-workflow' | 'reset' | 'on_error'
  reason?: string
  /** Epoch milliseconds. */
  ts: number
}

/**
 * What a hook may return: a verdict; `true`, nothing (or any other non-object) for ok; `false`
 * for a veto ("precondition not met"). Any other object fails the hook closed.
 */
export type HookResult = HookVerdict | boolean | null | undefined | void

/** A hook function (it may be async). */
export type HookFn = (input: HookInput) => HookResult | Promise<HookResult>

/** ok, with `reason` (default, also for a blank one, `"ok"`). */
export declare function ok(reason?: string): { verdict: 'ok'; reason: string }
/** A veto, with `reason` (default, also for a blank one, `"vetoed by hook"`). */
export declare function veto(reason?: string): { verdict: 'veto'; reason: string }
/** A correction request, with `reason` (default, also for a blank one, `"correction requested"`). */
export declare function correct(reason?: string): { verdict: 'correct'; reason: string }
/** Returns `fn` unchanged; types it as a hook. */
export declare function defineHook<F extends HookFn>(fn: F): F

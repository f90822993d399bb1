// `@archmax-ai/harness/sandbox`: the type carrier of hook scripts, plus the verdict helpers.
//
// A hook script may start with `import { defineHook, veto } from "@archmax-ai/harness/sandbox"`:
// the sandbox blanks that line and provides the same helpers as globals, so a hook runs
// unchanged in the sandbox and, for unit tests, in Node. These helpers answer what the
// sandbox's own do, blank-reason defaults included. This file imports nothing.

/** True for a missing or blank reason. */
const blank = (reason) => reason === undefined || reason === null || String(reason).trim() === ''

/**
 * Let the move (or the entry) go ahead.
 * @param {string} [reason] default (also for a blank reason) "ok"
 * @returns {{ verdict: 'ok', reason: string }}
 */
export function ok(reason) {
  return { verdict: 'ok', reason: blank(reason) ? 'ok' : String(reason) }
}

/**
 * Refuse: before a state, the entry is refused; after it, the move is blocked and the agent
 * stays in the state.
 * @param {string} [reason] default (also for a blank reason) "vetoed by hook"
 * @returns {{ verdict: 'veto', reason: string }}
 */
export function veto(reason) {
  return { verdict: 'veto', reason: blank(reason) ? 'vetoed by hook' : String(reason) }
}

/**
 * Ask the agent to fix its work and try the move again (after hooks; counted against the
 * hook's `max_iterations`). A before hook's `correct` is treated as a veto.
 * @param {string} [reason] default (also for a blank reason) "correction requested"
 * @returns {{ verdict: 'correct', reason: string }}
 */
export function correct(reason) {
  return { verdict: 'correct', reason: blank(reason) ? 'correction requested' : String(reason) }
}

/**
 * Marks a function as the hook: returns it unchanged (the types check it against `HookFn`).
 * @template F
 * @param {F} fn
 * @returns {F}
 */
export function defineHook(fn) {
  return fn
}

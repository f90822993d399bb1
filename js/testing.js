// `@archmax-ai/harness/testing`: a workflow's `tests/*.test.yaml` cases run by the native
// engine (crates/cases) against a createAgent agent, from JS. The runner prints nothing:
// what happened comes back as data and through the callbacks.
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent } from './agent.js'
import { createFilesystemSessionStore } from './store.js'
import { discoverCaseFiles, parseCaseDocument as parseNative, partialMatch, reduceVerdict as reduceNative, serializeCaseDocument as serializeNative, suiteWithoutRun } from './native.js'

/** Longest case title, on whitespace-collapsed text. */
export const CASE_TITLE_MAX_LENGTH = 60
/** Longest case description, on whitespace-collapsed text. */
export const CASE_DESCRIPTION_MAX_LENGTH = 200

const RUN_CASES = Symbol.for('archmax.runCases')
const CASE_CASSETTES = Symbol.for('archmax.caseCassettes')

export { partialMatch }

/** A case document that breaks the schema; `message` is `<file>: <problem>; …`. */
export class CaseSchemaError extends Error {
  constructor(message) {
    super(message)
    this.name = 'CaseSchemaError'
  }
}

/**
 * Reads the case document `text` of the case file `file` (workspace-relative) in the tests
 * folder `dir` (`workflows/<slug>/tests`), as the original's `parseCaseDocument(file, source,
 * testsDir)`: the document with its `file` and `id` (the path under `dir` without the
 * extension). Throws CaseSchemaError naming every problem.
 */
export function parseCaseDocument(file, text, dir) {
  if (typeof file !== 'string') throw new TypeError(`parseCaseDocument(file, text, dir) needs the case file's path, got ${typeof file}`)
  if (typeof text !== 'string') throw new TypeError(`parseCaseDocument(file, text, dir) needs the YAML text, got ${typeof text}`)
  if (dir !== undefined && typeof dir !== 'string') throw new TypeError(`parseCaseDocument(file, text, dir): 'dir' must be the tests folder's path, got ${typeof dir}`)
  const r = parseNative(text, file, dir ?? testsDirOf(file))
  if (!r.ok) throw new CaseSchemaError(r.message)
  return r.value
}

/** The tests folder of a case file's path (`workflows/<slug>/tests`), else its folder. */
function testsDirOf(file) {
  const suite = /^(workflows\/[^/]+\/tests)\//.exec(file)
  if (suite) return suite[1]
  const slash = file.lastIndexOf('/')
  return slash < 0 ? '' : file.slice(0, slash)
}

/**
 * Writes a case document back as YAML, the inverse of `parseCaseDocument` (keys in the schema's
 * order, multi-line strings as literal blocks, never folded; `file`/`id` are not written).
 * Throws CaseSchemaError when the text would not be a valid case.
 */
export function serializeCaseDocument(doc) {
  if (!doc || typeof doc !== 'object' || Array.isArray(doc)) {
    throw new TypeError(`serializeCaseDocument needs a case document object, got ${doc === null ? 'null' : Array.isArray(doc) ? 'an array' : typeof doc}`)
  }
  const r = serializeNative(doc)
  if (!r.ok) throw new CaseSchemaError(r.message)
  return r.value
}

/**
 * The marker that gives an agent `toolMocks: true` when it is in `createAgent`'s `middleware`.
 * The mocks themselves are served natively (the agent's own calls and scripts' alike).
 */
export function createToolMockMiddleware() {
  return Object.freeze({ name: 'ToolMockMiddleware', [Symbol.for('archmax.toolMocks')]: true })
}

/** Throws unless `agent` is workflow-governed (cases drive the workflow's machine). */
export function assertWorkflowGovernedTarget(agent, workflow) {
  if (!agent || typeof agent !== 'object' || !agent.workflow) {
    throw new Error(`Case target '${workflow}' has no workflow machine; cases require a workflow-governed agent.`)
  }
}

function checkCassettes(cassettes) {
  if (cassettes === undefined || cassettes === null) return undefined
  if (cassettes !== 'record' && cassettes !== 'replay') {
    throw new TypeError(`'cassettes' must be 'record' or 'replay', got ${typeof cassettes === 'string' ? `'${cassettes}'` : typeof cassettes}`)
  }
  return cassettes
}

/**
 * The agent cases run on by default: `createAgent` over the workflow with the tool-mock
 * middleware wired (so `toolMocks` is true), checked to be workflow-governed. `cassettes`:
 * each case records into, or replays from, `tests/<case>.cassette.json` beside it.
 */
export async function createCaseTarget(options = {}) {
  if (!options || typeof options !== 'object') throw new TypeError('createCaseTarget needs an options object')
  const { workflow, rootDir = process.cwd() } = options
  if (typeof workflow !== 'string' || !workflow) throw new TypeError("createCaseTarget needs a 'workflow' slug")
  const cassettes = checkCassettes(options.cassettes)
  const agent = await createAgent({
    workflow,
    workspace: { ...(options.workspace ?? {}), rootDir },
    middleware: [createToolMockMiddleware()],
    onEvent: options.onEvent,
    model: options.model,
    modelFactory: options.modelFactory,
    defaultModel: options.defaultModel,
    tools: options.tools,
    [CASE_CASSETTES]: cassettes,
  })
  try {
    assertWorkflowGovernedTarget(agent, workflow)
  } catch (e) {
    agent.dispose()
    throw e
  }
  return agent
}

/** The cases engine of `agent` for `workflow`, with its capability flag. */
function engineOf(agent, workflow) {
  assertWorkflowGovernedTarget(agent, workflow)
  const run = agent[RUN_CASES]
  if (typeof run !== 'function') {
    throw new TypeError(`Case target '${workflow}' is not an agent of createAgent (@archmax-ai/harness): the cases engine runs inside one`)
  }
  return (options, onProgress) => run({ ...options, toolMocks: agent.toolMocks === true }, onProgress)
}

/** Releases each case's session on a host's agent (it stays usable). */
function disposeSessions(agent, results) {
  for (const r of results ?? []) if (r.sessionId) agent.dispose(r.sessionId)
}

/**
 * Runs one case file on `agent` (which stays the host's: it is not disposed; the case's session
 * is). `file` is workspace-relative, as `discoverCases` returns it; the original's
 * `discovered: { file, parseError? }` is accepted too. Never throws for the case's own failure.
 */
export async function runCase(options = {}) {
  if (!options || typeof options !== 'object') throw new TypeError('runCase needs an options object')
  const { agent, discovered, sessionId, caseTimeoutMs } = options
  const file = options.file ?? discovered?.file
  if (typeof file !== 'string' || !file) throw new TypeError("runCase needs the case's 'file' (workspace-relative, as discoverCases returns it)")
  const slug = /^workflows\/([^/]+)\/tests\//.exec(file)?.[1]
  const workflow = options.workflow ?? slug
  if (typeof workflow !== 'string' || !workflow) throw new TypeError(`runCase cannot tell the workflow of '${file}': pass 'workflow'`)
  if (slug !== workflow) throw new TypeError(`runCase: '${file}' is not a case of workflow '${workflow}' (workflows/${workflow}/tests/…)`)
  if (sessionId !== undefined && (typeof sessionId !== 'string' || !sessionId)) throw new TypeError(`'sessionId' must be a non-empty string`)
  if (caseTimeoutMs !== undefined && (!Number.isInteger(caseTimeoutMs) || caseTimeoutMs < 1)) {
    throw new TypeError(`'caseTimeoutMs' must be a positive whole number of milliseconds`)
  }
  if (typeof discovered?.parseError === 'string') {
    const error = discovered.parseError
    return { id: file, file, verdict: { status: 'failed', failures: [error] }, records: [], error }
  }
  const run = engineOf(agent, workflow)
  const result = await run({ files: [file], sessionIds: sessionId ? { [file]: sessionId } : undefined, caseTimeoutMs })
  disposeSessions(agent, result.results)
  const [one] = result.results
  if (one) return one
  // A disabled workflow runs none of its cases.
  return { id: file, file, verdict: { status: 'skipped', failures: [] }, records: [], skipReason: result.skipped ?? 'not run' }
}

/** The case files of `workflow` under `rootDir` (workspace-relative, sorted by path). */
export function discoverCases({ workflow, rootDir = process.cwd() } = {}) {
  if (typeof workflow !== 'string' || !workflow) throw new TypeError("discoverCases needs a 'workflow' slug")
  return discoverCaseFiles(rootDir, workflow)
}

/**
 * A case's verdict from its records and its death's `error`: failed when a record failed
 * or the case died (the engine's own reduction, from the native side).
 */
export function reduceVerdict(records, error) {
  return reduceNative(records ?? [], error === undefined || error === null ? undefined : String(error))
}

/** The process exit code of a verdict: 1 when it failed, else 0. */
export function exitCodeForVerdict(verdict) {
  return verdict?.status === 'failed' ? 1 : 0
}

/**
 * Runs the cases of `workflow`: each on its own session of one agent (built with `createAgent`
 * from the model options given, or `createTarget`), sequentially, under `tests.caseTimeoutMs`.
 * The default target never touches the workspace's sessions: its cases run in a filesystem
 * store in a new temporary folder, removed after the run (`workspace.sessionStore` chooses a
 * store instead, from which the cases' sessions are then removed); `keep: true` keeps them
 * (`sessionsKept` names a temporary folder kept).
 */
export async function runTests(options = {}) {
  if (!options || typeof options !== 'object') throw new TypeError('runTests needs an options object')
  const { workflow, rootDir = process.cwd(), filter, onEvent, onCaseStart, onCaseResult, createTarget, sessionIdForCase } = options
  if (typeof workflow !== 'string' || !workflow) throw new TypeError("runTests needs a 'workflow' slug")
  const cassettes = checkCassettes(options.cassettes)
  if (cassettes && createTarget) {
    throw new TypeError("'cassettes' applies to the default target; a target of your own takes them from createCaseTarget({ cassettes })")
  }
  if (options.keep !== undefined && typeof options.keep !== 'boolean') throw new TypeError(`'keep' must be a boolean, got ${typeof options.keep}`)
  const keep = options.keep === true
  for (const [name, fn] of Object.entries({ onEvent, onCaseStart, onCaseResult, sessionIdForCase })) {
    if (fn !== undefined && fn !== null && typeof fn !== 'function') throw new TypeError(`'${name}' must be a function`)
  }
  if (filter !== undefined && filter !== null && typeof filter !== 'string') throw new TypeError(`'filter' must be a string, got ${typeof filter}`)
  // What `archmax test` decides before it runs anything, with its messages (no target is
  // built, so no model is needed): a workflow that does not load, or a filter that selects no
  // case, fails with exit code 1 and the message in `error`; a disabled workflow is skipped;
  // a suite with no case runs none.
  const early = suiteWithoutRun(rootDir, workflow, filter ?? undefined)
  if (early) return early
  const files = discoverCaseFiles(rootDir, workflow)
  const progress = (event) => {
    if (event?.type === 'case-start') onCaseStart?.(event.file, event.sessionId ?? undefined)
    else if (event?.type === 'case-result') onCaseResult?.(event.result)
  }
  const listener = (event) => {
    if (event?.type === 'case-start' || event?.type === 'case-result') progress(event)
    else onEvent?.(event)
  }
  // The default target's store: the one chosen, else a filesystem store in a new temporary
  // folder (seeds and session files work as in production; a memory store cannot seed).
  const chosen = options.workspace?.sessionStore !== undefined && options.workspace?.sessionStore !== null
  const sessionsDir = createTarget || chosen ? undefined : mkdtempSync(join(tmpdir(), 'archmax-test-'))
  const workspace = sessionsDir ? { ...(options.workspace ?? {}), sessionStore: createFilesystemSessionStore({ dir: sessionsDir }) } : options.workspace
  let agent
  let result
  try {
    agent = createTarget
      ? typeof createTarget === 'function'
        ? await createTarget({ workflow, rootDir, onEvent: listener })
        : createTarget
      : await createCaseTarget({
          workflow,
          rootDir,
          workspace,
          model: options.model,
          modelFactory: options.modelFactory,
          defaultModel: options.defaultModel,
          tools: options.tools,
          onEvent: listener,
          cassettes,
        })
    const run = engineOf(agent, workflow)
    const sessionIds = sessionIdForCase ? Object.fromEntries(files.map((f) => [f, String(sessionIdForCase(f))])) : undefined
    result = await run({ filter: filter ?? undefined, sessionIds }, onCaseStart || onCaseResult ? progress : undefined)
    if (createTarget) disposeSessions(agent, result.results)
    else if (chosen && !keep) {
      // A store the host chose: the cases' sessions leave it with the run.
      for (const r of result.results) if (r.sessionId) await agent.sessions.delete(r.sessionId).catch(() => false)
    }
  } finally {
    if (!createTarget) agent?.dispose()
    if (sessionsDir && !keep) rmSync(sessionsDir, { recursive: true, force: true })
  }
  if (sessionsDir && keep) result.sessionsKept = sessionsDir
  return result
}

// `@archmax-ai/harness/testing`: a workflow's `tests/*.test.yaml` cases run by the native
// engine (crates/cases) against a createAgent agent, from JS. The runner prints nothing:
// what happened comes back as data and through the callbacks.
import { createAgent } from './agent.js'
import { discoverCaseFiles, parseCaseDocument as parseNative, partialMatch } from './native.js'

/** Longest case title, on whitespace-collapsed text. */
export const CASE_TITLE_MAX_LENGTH = 60
/** Longest case description, on whitespace-collapsed text. */
export const CASE_DESCRIPTION_MAX_LENGTH = 200

const RUN_CASES = Symbol.for('archmax.runCases')

export { partialMatch }

/** A case document that breaks the schema; `message` is `<file>: <problem>; …`. */
export class CaseSchemaError extends Error {
  constructor(message) {
    super(message)
    this.name = 'CaseSchemaError'
  }
}

/** Reads a case document (YAML text); throws CaseSchemaError naming every problem. */
export function parseCaseDocument(text, file) {
  if (typeof text !== 'string') throw new TypeError(`parseCaseDocument needs the YAML text, got ${typeof text}`)
  const r = parseNative(text, file ?? undefined)
  if (!r.ok) throw new CaseSchemaError(r.message)
  return r.value
}

/** The case files of `workflow` under `rootDir` (workspace-relative, sorted by path). */
export function discoverCases({ workflow, rootDir = process.cwd() } = {}) {
  if (typeof workflow !== 'string' || !workflow) throw new TypeError("discoverCases needs a 'workflow' slug")
  return discoverCaseFiles(rootDir, workflow)
}

/** A case's verdict from its records (and a death's error): failed iff a record failed or it died. */
export function reduceVerdict(records, error) {
  const failures = error ? [String(error)] : []
  for (const r of records ?? []) {
    if (r.status !== 'failed') continue
    let line = r.detail ? `${r.kind}: ${r.detail}` : r.kind
    if (typeof r.score === 'number' && typeof r.threshold === 'number') line += ` (score ${r.score} < ${r.threshold})`
    failures.push(line)
  }
  return { status: failures.length ? 'failed' : 'passed', failures }
}

/** The process exit code of a verdict: 1 when it failed, else 0. */
export function exitCodeForVerdict(verdict) {
  return verdict?.status === 'failed' ? 1 : 0
}

/**
 * Runs the cases of `workflow`: each on its own session of one agent (built with `createAgent`
 * from the model options given, or `createTarget`), sequentially, under `tests.caseTimeoutMs`.
 */
export async function runTests(options = {}) {
  if (!options || typeof options !== 'object') throw new TypeError('runTests needs an options object')
  const { workflow, rootDir = process.cwd(), filter, onEvent, onCaseStart, onCaseResult, createTarget, sessionIdForCase } = options
  if (typeof workflow !== 'string' || !workflow) throw new TypeError("runTests needs a 'workflow' slug")
  for (const [name, fn] of Object.entries({ onEvent, onCaseStart, onCaseResult, sessionIdForCase })) {
    if (fn !== undefined && fn !== null && typeof fn !== 'function') throw new TypeError(`'${name}' must be a function`)
  }
  const files = discoverCaseFiles(rootDir, workflow)
  const listener = (event) => {
    if (event?.type === 'case-start') onCaseStart?.(event.file, event.sessionId ?? undefined)
    else if (event?.type === 'case-result') onCaseResult?.(event.result)
    else onEvent?.(event)
  }
  const agentOptions = {
    workflow,
    workspace: { rootDir, ...(options.workspace ?? {}) },
    model: options.model,
    modelFactory: options.modelFactory,
    defaultModel: options.defaultModel,
    tools: options.tools,
    onEvent: listener,
  }
  const agent = createTarget
    ? typeof createTarget === 'function'
      ? await createTarget({ workflow, rootDir, onEvent: listener })
      : createTarget
    : await createAgent(agentOptions)
  const run = agent?.[RUN_CASES]
  if (typeof run !== 'function') {
    throw new TypeError(`Case target '${workflow}' has no workflow machine; cases require a workflow-governed agent.`)
  }
  const sessionIds = sessionIdForCase ? Object.fromEntries(files.map((f) => [f, String(sessionIdForCase(f))])) : undefined
  try {
    return await run({ filter: filter ?? undefined, sessionIds })
  } finally {
    if (!createTarget) agent.dispose()
  }
}

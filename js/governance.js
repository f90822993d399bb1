// `Governance.decide`, faster: the call crosses as two strings and a JSON text instead of an
// object napi converts field by field (which cost more than the decision), and a grant comes
// back as its rule id. Same answers and errors as the native `decide`; `main.js` loads this.
// The factories' refusals become the documented error classes (`WorkflowLoadError` with
// `workflow`, `workflowPath`, `problem` and `diagnostics`, as the native side gives them),
// and a call in a state the workflow does not declare throws `UnknownStateError` naming the
// states.
import { Governance as NativeGovernance, invalidSpecProblem, validateSpec, workflowLoadFields } from './native.js'
import { UnknownStateError, WorkflowLoadError } from './agent.js'
import { checkPolicyRules, policyAsk } from './policy-ask.js'

const packed = NativeGovernance.prototype.decidePacked
const nativeStates = NativeGovernance.prototype.states

/** A native load refusal as a `WorkflowLoadError` with the fields `fields()` answers. */
function loadError(e, fields) {
  if (!(e instanceof Error) || e.code !== 'WorkflowLoadError') return e
  return Object.assign(new WorkflowLoadError(e.message), fields())
}

/**
 * The package's `Governance`: the native class's instances and methods, with factories that
 * raise the documented error classes (the native statics cannot be replaced in place).
 */
function Governance() {
  throw new TypeError('Governance is created with Governance.fromWorkspace(…) or Governance.fromSpec(…)')
}
Governance.prototype = NativeGovernance.prototype
/** The native governance with the host's `policyRules`, asked as `createAgent` asks them. */
function withRules(gov, rules) {
  if (rules.length) gov.usePolicy(policyAsk(rules), rules.length)
  return gov
}
Governance.fromWorkspace = function fromWorkspace(options) {
  const { policyRules, ...native } = options ?? {}
  const rules = checkPolicyRules(policyRules)
  try {
    return withRules(NativeGovernance.fromWorkspace(native), rules)
  } catch (e) {
    throw loadError(e, () => workflowLoadFields(native) ?? {})
  }
}
Governance.fromSpec = function fromSpec(yamlText, options) {
  const { policyRules, ...native } = options ?? {}
  const rules = checkPolicyRules(policyRules)
  try {
    return withRules(NativeGovernance.fromSpec(yamlText, native), rules)
  } catch (e) {
    // A spec text has no workflow or path; its problem is that it is no valid machine spec.
    throw loadError(e, () => ({
      workflow: undefined,
      workflowPath: undefined,
      problem: invalidSpecProblem(),
      diagnostics: validateSpec(yamlText).diagnostics.filter((d) => d.severity === 'error'),
    }))
  }
}

const stateSets = new WeakMap()

/** Throws `UnknownStateError` unless `state` is one of the workflow's states. */
function checkState(gov, state) {
  let known = stateSets.get(gov)
  if (!known) {
    const list = nativeStates.call(gov)
    known = { list, set: new Set(list) }
    stateSets.set(gov, known)
  }
  if (known.set.has(state)) return
  const err = new UnknownStateError(`Unknown state '${state}'. The workflow's states: ${known.list.join(', ')}.`)
  throw Object.assign(err, { state, states: [...known.list] })
}

/**
 * Decides one tool call: `{ allowed, rule, message?, terminal, warn }`.
 * @param {import('../index.d.ts').GovernanceCall} call
 */
NativeGovernance.prototype.decide = function decide(call) {
  if (call === null || typeof call !== 'object') {
    throw new TypeError('decide needs a call { state, tool, args?, variables?, authority? }')
  }
  const { state, tool, args, variables, authority } = call
  if (typeof state !== 'string' || typeof tool !== 'string') {
    throw new TypeError("a call needs 'state' and 'tool' strings")
  }
  checkState(this, state)
  const answer = packed.call(
    this,
    state,
    tool,
    args === undefined || args === null ? undefined : JSON.stringify(args),
    variables === undefined || variables === null ? undefined : JSON.stringify(variables),
    authority ?? undefined,
  )
  // A denial is a JSON object; a grant is its rule id.
  return answer.charCodeAt(0) === 123 ? JSON.parse(answer) : { allowed: true, rule: answer, terminal: false, warn: false }
}

export { Governance }

// Hand-written: a host's `policyRules` as the native side asks them. The chain (order,
// abstain, allow, block, the refusal when a rule throws or answers something else, every
// text) is the kernel's (archmax_kernel::host_rules); this only calls rule `index` with the
// action and the variables and answers what it returned, or what it threw, as JSON.
import { describe, errorText } from './langchain.js'

/** `policyRules` checked: an array of functions. */
export function checkPolicyRules(rules) {
  if (rules === undefined || rules === null) return []
  if (!Array.isArray(rules)) throw new TypeError(`'policyRules' must be an array of functions, got ${describe(rules)}`)
  for (const [i, r] of rules.entries()) {
    if (typeof r !== 'function') throw new TypeError(`policyRules[${i}] must be a function (action, api) => Verdict | null, got ${describe(r)}`)
  }
  return rules
}


/** The one function the native side asks every rule through: `({ index, action }) => { verdict } | { threw }`. */
export function policyAsk(rules) {
  return (callJson) => {
    const { index, action } = JSON.parse(callJson)
    const { variables, ...call } = action
    try {
      const verdict = rules[index](call, { variables: variables ?? {} })
      return JSON.stringify({ verdict: verdict === undefined ? null : verdict })
    } catch (e) {
      return JSON.stringify({ threw: errorText(e) })
    }
  }
}

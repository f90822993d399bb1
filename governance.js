// `Governance.decide`, faster: the call crosses as two strings and a JSON text instead of an
// object napi converts field by field (which cost more than the decision), and a grant comes
// back as its rule id. Same answers and errors as the native `decide`; `main.js` loads this.
import { Governance } from './index.js'

const packed = Governance.prototype.decidePacked

/**
 * Decides one tool call: `{ allowed, rule, message?, terminal, warn }`.
 * @param {import('./index.d.ts').GovernanceCall} call
 */
Governance.prototype.decide = function decide(call) {
  if (call === null || typeof call !== 'object') {
    throw new TypeError('decide needs a call { state, tool, args?, variables?, authority? }')
  }
  const { state, tool, args, variables, authority } = call
  if (typeof state !== 'string' || typeof tool !== 'string') {
    throw new TypeError("a call needs 'state' and 'tool' strings")
  }
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

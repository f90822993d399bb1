// createAgent({ policyRules }): host governance rules, asked for every tool call after the
// workflow's denials. They can only tighten; a rule that throws refuses the call.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { createAgent } from '@archmax-ai/harness'
import { call, mapStore, say, scripted, workspace } from './helpers.mjs'

const SPEC = `title: Policy
instructions: A test workflow.
mounts:
  allow_always: []
states:
  lookup:
    triggers: { manual: }
    instructions: Look customers up.
    tools:
      allow: [crm_lookup]
`


/** One turn: the model calls each of `calls` in one answer, then says done. */
async function turn({ policyRules, calls, hostStore = false, variables }) {
  const seen = []
  const asked = []
  const events = []
  const { model, requests } = scripted([{ role: 'assistant', content: null, tool_calls: calls }, say('done')])
  const root = workspace({ 'workflows/policy/workflow.yaml': SPEC })
  const agent = await createAgent({
    workflow: 'policy',
    workspace: { rootDir: root, sessionStore: hostStore ? mapStore().store : undefined },
    model,
    variables,
    onEvent: (e) => events.push(e),
    tools: [
      { name: 'crm_lookup', schema: { type: 'object', properties: { email: { type: 'string' } } }, handler: (args) => (seen.push(args.email), 'found') },
      { name: 'refund', schema: { type: 'object', properties: {} }, handler: () => (seen.push('refund'), 'refunded') },
    ],
    policyRules: policyRules.map((rule) => (action, api) => (asked.push({ action, api }), rule(action, api))),
  })
  try {
    await agent.workflow.send('p-1', { message: 'Go.' })
  } finally {
    agent.dispose()
  }
  const results = Object.fromEntries(requests.at(-1).messages.filter((m) => m.role === 'tool').map((m) => [m.tool_call_id, m.content]))
  return { seen, asked, results, blocked: events.filter((e) => e.type === 'tool-blocked') }
}

const noVip = (action) =>
  action.tool === 'crm_lookup' && String(action.args.email).endsWith('@vip.example')
    ? { decision: 'block', ruleId: 'host.no-vip', reason: 'VIP records are off limits.' }
    : null

for (const hostStore of [false, true]) {
  test(`a host rule refuses one call and lets another through (${hostStore ? 'a host store: asked from a worker' : 'asked on the JS thread'})`, async () => {
    const { seen, asked, results, blocked } = await turn({
      hostStore,
      policyRules: [noVip],
      variables: { region: 'eu' },
      calls: [call('crm_lookup', { email: 'a@vip.example' }, 'c1'), call('crm_lookup', { email: 'b@shop.example' }, 'c2')],
    })
    assert.deepEqual(seen, ['b@shop.example'])
    assert.equal(results.c1, 'VIP records are off limits.')
    assert.equal(results.c2, 'found')
    assert.deepEqual(blocked.map((e) => [e.tool, e.reason]), [['crm_lookup', 'VIP records are off limits.']])
    // The rule saw the call as the original's ProposedAction, and the run's variables.
    assert.deepEqual(asked[0].action, { kind: 'tool-call', state: 'lookup', tool: 'crm_lookup', args: { email: 'a@vip.example' }, origin: 'agent', replyOnly: false })
    assert.equal(asked[0].api.variables.region, 'eu')
  })
}

test('a host rule only tightens: its allow does not open a tool the state does not allow, and ends the chain', async () => {
  const allowAll = () => ({ decision: 'allow', ruleId: 'host.yes' })
  const { seen, asked, results, blocked } = await turn({
    policyRules: [allowAll, noVip],
    calls: [call('refund', {}, 'c1'), call('crm_lookup', { email: 'a@vip.example' }, 'c2')],
  })
  assert.deepEqual(seen, ['a@vip.example'])
  assert.match(results.c1, /'refund' is not allowed in state 'lookup'/)
  assert.equal(results.c2, 'found')
  assert.deepEqual(blocked.map((e) => e.tool), ['refund'])
  // The second rule was never asked: the first answered.
  assert.equal(asked.length, 2)
})

test('a rule that throws or answers garbage refuses the call (fail closed) with a message naming it', async () => {
  const { seen, results, blocked } = await turn({
    policyRules: [
      (action) => {
        if (action.args.email === 'x@a.example') throw new Error('the CRM policy service is down')
        return action.args.email === 'y@a.example' ? 'yes' : null
      },
    ],
    calls: [call('crm_lookup', { email: 'x@a.example' }, 'c1'), call('crm_lookup', { email: 'y@a.example' }, 'c2'), call('crm_lookup', { email: 'z@a.example' }, 'c3')],
  })
  assert.deepEqual(seen, ['z@a.example'])
  assert.equal(results.c1, "[workflow] BLOCKED: 'crm_lookup' was refused: policyRules[0] threw: the CRM policy service is down")
  assert.equal(
    results.c2,
    "[workflow] BLOCKED: 'crm_lookup' was refused: policyRules[0] returned string yes; expected { decision: 'allow' | 'block', ruleId, reason? } or null",
  )
  assert.deepEqual(blocked.map((e) => e.reason), [results.c1, results.c2])
})

test('policyRules must be an array of functions', async () => {
  const root = workspace({ 'workflows/policy/workflow.yaml': SPEC })
  await assert.rejects(createAgent({ workflow: 'policy', workspace: { rootDir: root }, model: async () => say('x'), policyRules: 'no' }), TypeError)
  await assert.rejects(createAgent({ workflow: 'policy', workspace: { rootDir: root }, model: async () => say('x'), policyRules: [42] }), /policyRules\[0\] must be a function/)
})

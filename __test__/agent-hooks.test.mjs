// createAgent({ hookExecutors }): custom hook kinds run by JS, held to the contract of every
// hook kind (a verdict decides, false vetoes, nothing is ok, anything else fails closed).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { createAgent } from '@archmax-ai/harness'
import { advance, APPROVAL_SPEC, say, scripted, workspace } from './helpers.mjs'


async function run(executor, answers) {
  const root = workspace({ 'workflows/approvals/workflow.yaml': APPROVAL_SPEC })
  const { model, requests } = scripted(answers)
  const calls = []
  const events = []
  const agent = await createAgent({
    workflow: 'approvals',
    workspace: { rootDir: root },
    model,
    variables: { order_id: 'KK-1' },
    onEvent: (e) => events.push(e),
    hookExecutors: { approval: async (hook, ctx, args) => (calls.push({ hook, ctx, args }), executor(hook, ctx, args)) },
  })
  try {
    const outcome = await agent.workflow.send('h-1', { message: 'Refund it.' })
    return { outcome, calls, requests, events }
  } finally {
    agent.dispose()
  }
}

test('a custom hook kind is run by its executor: a veto keeps the agent in the state, ok lets it move', async () => {
  let verdict = { verdict: 'veto', reason: 'finance has not signed off' }
  const { outcome, calls, requests } = await run(
    async () => ({ ok: true, value: verdict, logs: [], formatted: '' }),
    [
      advance('done'),
      (request) => {
        verdict = { verdict: 'ok', reason: 'signed off' }
        return advance('done')
      },
      say('Refunded. Goodbye.'),
    ],
  )
  assert.equal(outcome.kind, 'completed', JSON.stringify(outcome).slice(0, 300))
  assert.equal(outcome.state, 'done')
  assert.equal(calls.length, 2)
  assert.deepEqual(calls[0].hook, { approval: 'finance' })
  const { variables, ...ctx } = calls[0].ctx
  assert.deepEqual(ctx, { sessionId: 'h-1', state: 'draft', phase: 'after', trigger: { id: 'manual' } })
  assert.equal(variables.order_id, 'KK-1')
  assert.equal(calls[0].args.state, 'draft')
  // The veto's reason reached the model as the advance's answer.
  const answer = requests[1].messages.filter((m) => m.role === 'tool').at(-1).content
  assert.match(answer, /finance has not signed off/)
})

test('an executor that throws or answers a non-verdict fails the state closed; a built-in kind cannot be replaced', async () => {
  for (const [executor, reason] of [
    [async () => { throw new Error('the approvals service is down') }, /the approvals service is down/],
    [async () => ({ ok: true, value: { approved: true }, logs: [], formatted: '' }), /hook returned an object with keys 'approved', which is not a verdict/],
    [async () => ({ ok: false, error: { message: 'no such approver' }, logs: [], formatted: '' }), /no such approver/],
  ]) {
    const { outcome } = await run(executor, [advance('done'), say('x'), say('y')])
    assert.notEqual(outcome.state, 'done')
    assert.match(JSON.stringify(outcome), reason)
  }
  const root = workspace({ 'workflows/approvals/workflow.yaml': APPROVAL_SPEC })
  await assert.rejects(
    createAgent({ workflow: 'approvals', workspace: { rootDir: root }, model: async () => say('x'), hookExecutors: { script: async () => ({ ok: true }), approval: async () => ({ ok: true }) } }),
    (e) => e.constructor === Error && e.message === 'hookExecutors may not override built-in hook kind(s): script. Register a custom kind under a different name.',
  )
})

// Spending caps from createAgent: a turn that reaches its token cap ends before the next model
// call; a cap in US dollars needs a price; the caps are checked where the host gives them.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { createAgent } from '@archmax-ai/harness'
import { workspace } from './helpers.mjs'

const SPEC = `title: Capped
instructions: A test workflow.
states:
  work:
    triggers: { manual: }
    instructions: Work.
`

/** A chat.completion calling `ls`, reporting `input` and `output` tokens. */
const listing = (id, input, output) => ({
  choices: [{ message: { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'ls', arguments: '{}' } }] } }],
  usage: { prompt_tokens: input, completion_tokens: output },
})

test('a turn that reaches caps.turnTokens ends rejected before its next model call, naming the cap and the spend', async () => {
  const root = workspace({ 'workflows/capped/workflow.yaml': SPEC })
  const answers = [listing('c1', 40, 20), listing('c2', 1, 1)]
  let calls = 0
  const usage = []
  const agent = await createAgent({
    workflow: 'capped',
    workspace: { rootDir: root },
    model: async () => (calls++, answers.shift()),
    caps: { turnTokens: 50 },
    onEvent: (e) => e.type === 'model-usage' && usage.push(e),
  })
  try {
    const out = await agent.workflow.send('c-1', { message: 'Go' })
    assert.equal(out.kind, 'rejected')
    assert.match(out.rejected, /the turn reached its token cap \(ARCHMAX_MAX_TURN_TOKENS \/ caps\.turnTokens: 50 tokens\): 60 tokens spent/)
    assert.equal(calls, 1, 'no model call started past the cap')
    assert.deepEqual(
      usage.map((e) => [e.turnTokens, e.sessionTokens]),
      [[60, 60]],
    )
  } finally {
    agent.dispose()
  }
})

test('a cap in US dollars on a model with no price refuses assembly; with a price it holds', async () => {
  const root = workspace({ 'workflows/capped/workflow.yaml': SPEC })
  await assert.rejects(
    createAgent({ workflow: 'capped', workspace: { rootDir: root }, model: async () => listing('c1', 1, 1), defaultModel: 'm', caps: { sessionCostUsd: 1 } }),
    /the cap ARCHMAX_MAX_SESSION_COST_USD \/ caps\.sessionCostUsd is in US dollars, but model 'm' has no price/,
  )
  const agent = await createAgent({
    workflow: 'capped',
    workspace: { rootDir: root },
    model: async () => listing('c1', 1_000_000, 0),
    defaultModel: 'm',
    pricing: { default: { input: 3, output: 15 } },
    caps: { sessionCostUsd: 1 },
  })
  try {
    const out = await agent.workflow.send('c-2', { message: 'Go' })
    assert.equal(out.kind, 'rejected')
    assert.match(out.rejected, /the session reached its cost cap \(ARCHMAX_MAX_SESSION_COST_USD \/ caps\.sessionCostUsd: \$1\.0000\): \$3\.0000 spent/)
  } finally {
    agent.dispose()
  }
})

test('caps are checked where the host gives them', async () => {
  const root = workspace({ 'workflows/capped/workflow.yaml': SPEC })
  for (const [caps, message] of [
    [{ turnTokens: 1.5 }, /'caps\.turnTokens' must be a positive whole number of tokens, got 1\.5/],
    [{ turnCostUsd: 0 }, /'caps\.turnCostUsd' must be a positive number of US dollars/],
    ['many', /'caps' must be an object/],
  ]) {
    await assert.rejects(createAgent({ workflow: 'capped', workspace: { rootDir: root }, model: async () => listing('c1', 1, 1), caps }), (e) => e instanceof TypeError && message.test(e.message), JSON.stringify(caps))
  }
})

// `@archmax-ai/harness/sandbox`: the verdict helpers, `defineHook`, and a hook file that imports
// them running in the runtime's QuickJS sandbox (the import line blanked).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import * as sandbox from '@archmax-ai/harness/sandbox'
import { createAgent } from '@archmax-ai/harness'
import { ROOT, workspace } from './helpers.mjs'

const { correct, defineHook, ok, veto } = sandbox

test('the helpers return { verdict, reason }', () => {
  assert.deepEqual(ok(), { verdict: 'ok', reason: 'ok' })
  assert.deepEqual(ok('fine'), { verdict: 'ok', reason: 'fine' })
  assert.deepEqual(veto('no order id'), { verdict: 'veto', reason: 'no order id' })
  assert.deepEqual(correct('add the amount'), { verdict: 'correct', reason: 'add the amount' })
  // Exactly two keys, fresh objects.
  assert.deepEqual(Object.keys(veto('x')), ['verdict', 'reason'])
  assert.notEqual(ok(), ok())
})

test('blank reasons get the sandbox helpers\' defaults', () => {
  for (const blank of [undefined, null, '', '   ']) {
    assert.deepEqual(ok(blank), { verdict: 'ok', reason: 'ok' }, JSON.stringify(blank))
    assert.deepEqual(veto(blank), { verdict: 'veto', reason: 'vetoed by hook' }, JSON.stringify(blank))
    assert.deepEqual(correct(blank), { verdict: 'correct', reason: 'correction requested' }, JSON.stringify(blank))
  }
  // A non-string reason becomes its string; a padded one is kept as given.
  assert.deepEqual(veto(42), { verdict: 'veto', reason: '42' })
  assert.deepEqual(correct(' spaced '), { verdict: 'correct', reason: ' spaced ' })
})

test('defineHook returns its argument', async () => {
  const hook = async (input) => (input.to === 'done' ? ok() : veto(`not to ${input.to}`))
  assert.equal(defineHook(hook), hook)
  const notAFunction = { any: 'value' }
  assert.equal(defineHook(notAFunction), notAFunction)
  // The hook runs in Node as written.
  assert.deepEqual(await defineHook(hook)({ to: 'elsewhere' }), { verdict: 'veto', reason: 'not to elsewhere' })
})

test('sandbox.js exports the four helpers and imports nothing', () => {
  assert.deepEqual(Object.keys(sandbox).sort(), ['correct', 'defineHook', 'ok', 'veto'])
  const text = readFileSync(join(ROOT, 'js', 'sandbox.js'), 'utf8')
  assert.doesNotMatch(text, /^\s*import\s/m)
  assert.doesNotMatch(text, /\brequire\s*\(/)
})

// A before hook that imports the helpers, as an author writes it. In the sandbox the import
// line is blanked and the globals of the same names answer; the veto reason reports what the
// hook was handed.
const HOOK = `import { defineHook, veto } from "@archmax-ai/harness/sandbox";

export default defineHook(async (input) => {
  if (input.variables.tier === "bronze") return veto("   ");
  const seen = {
    state: input.state,
    phase: input.phase,
    trigger: input.trigger,
    tier: input.variables.tier,
    roles: input.messages.map((m) => m.role),
    text: input.messages.map((m) => m.text),
    readFile: typeof input.tools.readFile,
    file: (await input.tools.readFile({ file_path: "policy.txt" })).trim(),
  };
  return input.variables.tier === "gold" ? ok() : veto("seen " + JSON.stringify(seen));
});
`

const HOOK_SPEC = `title: Gate
instructions: A test workflow.
mounts:
  allow_always: []
states:
  start:
    triggers: { manual: }
    instructions: Say hello.
    before:
      script: hooks/gate.js
`

test('a hook importing from @archmax-ai/harness/sandbox runs in the sandbox', async () => {
  const rootDir = workspace({ 'workflows/gate/workflow.yaml': HOOK_SPEC, 'workflows/gate/hooks/gate.js': HOOK })
  const answers = [{ role: 'assistant', content: 'Hello, gold customer.' }]
  const agent = await createAgent({ workflow: 'gate', workspace: { rootDir }, model: async () => answers.shift() })
  try {
    // Silver: the hook vetoes entry, so the turn is rejected before any model call.
    const vetoed = await agent.workflow.send('g1', { message: 'Hi there', variables: { tier: 'silver' } })
    assert.equal(vetoed.kind, 'rejected', JSON.stringify(vetoed))
    assert.match(vetoed.rejected, /seen \{/)
    const seen = JSON.parse(vetoed.rejected.slice(vetoed.rejected.indexOf('seen ') + 5))
    assert.equal(seen.state, 'start')
    assert.equal(seen.phase, 'before')
    assert.equal(seen.trigger, 'manual')
    assert.equal(seen.tier, 'silver')
    assert.deepEqual(seen.roles, ['user'])
    assert.deepEqual(seen.text, ['Hi there'])
    assert.equal(seen.readFile, 'function')
    assert.match(seen.file, /^Error:/, 'a missing file is answered as text, not thrown')
    assert.equal(answers.length, 1, 'no model call after an entry veto')

    // The sandbox's own helpers (the import was blanked) answer as this package's do.
    const blank = await agent.workflow.send('g3', { message: 'Hi', variables: { tier: 'bronze' } })
    assert.equal(blank.kind, 'rejected')
    assert.equal(blank.rejected, veto('   ').reason)

    const passed = await agent.workflow.send('g2', { message: 'Hi', variables: { tier: 'gold' } })
    assert.equal(passed.kind, 'completed', JSON.stringify(passed))
    assert.equal(passed.reply, 'Hello, gold customer.')
  } finally {
    agent.dispose()
  }
})

// Bad input never crashes Node: garbage is a diagnostic, a wrong argument
// type is a thrown Error with a message.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import * as api from '@archmax-ai/harness'

const GARBAGE = [
  '',
  '\0\0\0',
  ':::',
  'a: [1, 2',
  '- just\n- a list',
  'states: &a [*a]',
  'a: 1\na: 2',
  '\t\tstates:',
  '---\na: 1\n---\nb: 2',
  'x'.repeat(100_000),
  '['.repeat(10_000),
  '{'.repeat(10_000),
  '\uFEFFstates:\n  a: ~\n',
  'states:\n  a:\n    transitions: 7\n    triggers: "yes"\n',
]

test('garbage YAML gives diagnostics, never a crash', () => {
  for (const text of GARBAGE) {
    const v = api.validateSpec(text)
    assert.equal(typeof v.ok, 'boolean')
    assert.ok(Array.isArray(v.diagnostics))
    const p = api.parseMachineSpec(text)
    assert.equal(typeof p.ok, 'boolean')
  }
  assert.equal(api.validateSpec('states: [').ok, false)
})

const WRONG_CALLS = [
  ['validateSpec', []],
  ['validateSpec', [42]],
  ['validateSpec', [{}]],
  ['parseMachineSpec', [null]],
  ['validateWorkflow', [42]],
  ['validateWorkflow', [{ rootDir: 7 }]],
  ['validateWorkflow', [{ skills: 'skills/' }]],
  ['validateWorkflow', [{ mounts: { '/x/': { readOnly: 'no' } } }]],
  ['signatureForTrigger', [{}, 42]],
  ['signatureValueIssues', [[], 'not an object']],
  ['signatureValueIssues', [[], null]],
  ['sessionIdForTrigger', [{}, undefined, {}]],
  ['messagePathForTrigger', [{}, 42]],
  ['connectionForTrigger', [{}, null]],
  ['isSlug', [7]],
  ['isSlug', []],
  ['parseCodeDescription', [Symbol('x')]],
  ['runCli', ['validate']],
]

test('wrong argument types throw an Error with a message', async () => {
  for (const [name, args] of WRONG_CALLS) {
    let thrown
    try {
      await api[name](...args)
    } catch (e) {
      thrown = e
    }
    assert.ok(thrown instanceof Error, `${name}(${args.map(String).join(', ')}) should throw`)
    assert.ok(thrown.message.length > 0, name)
  }
})

test('lenient inputs are accepted as data', () => {
  assert.equal(api.signatureForTrigger(null, 'x'), undefined)
  assert.equal(api.signatureForTrigger('not a spec', 'x'), undefined)
  assert.deepEqual(api.signatureJsonSchema('not a list'), { type: 'object', properties: {}, required: [] })
  assert.equal(api.sessionIdForTrigger({}, 'x', null), undefined)
  assert.match(api.specHash(null), /^[0-9a-f]{32}$/)
})

test('the process is still alive and the addon still answers', () => {
  assert.equal(api.isSlug('still-here'), true)
})

// A panic inside the harness ends the call with an Error, never a call that does not settle,
// and leaves the session usable. The fault is injected by the debug build (the one the tests
// run on): `ARCHMAX_DEBUG_PANIC_TURN` makes a turn panic in its first poll (on the JS thread
// for a JS-driven turn) or once a timer woke it (polled on a tokio worker).
test('a panic in a turn rejects its call and leaves the session usable, whoever polls it', async () => {
  const { createAgent } = api
  const { mapStore, ONE_STATE_SPEC, say, scripted, workspace } = await import('./helpers.mjs')
  const stores = { filesystem: () => undefined, host: () => mapStore().store }
  for (const [storeName, makeStore] of Object.entries(stores)) {
    for (const fault of ['first-poll', 'after-timer']) {
      const where = `${storeName} store, ${fault}`
      const root = workspace({ 'workflows/one/workflow.yaml': ONE_STATE_SPEC })
      const { model } = scripted([say('Hello back.')])
      const events = []
      const agent = await createAgent({ workflow: 'one', workspace: { rootDir: root, sessionStore: makeStore() }, model, onEvent: (e) => events.push(e.type) })
      try {
        process.env.ARCHMAX_DEBUG_PANIC_TURN = fault
        let timer
        const settled = await Promise.race([
          agent.workflow.send('s1', { message: 'hi' }).then(
            () => 'resolved',
            (e) => e,
          ),
          new Promise((resolve) => (timer = setTimeout(() => resolve('did not settle in 5 s'), 5000))),
        ])
        clearTimeout(timer)
        delete process.env.ARCHMAX_DEBUG_PANIC_TURN
        assert.ok(settled instanceof Error, `${where}: ${settled}`)
        assert.match(settled.message, new RegExp(`harness panicked during this call \\(injected: ${fault}\\)`), where)
        const outcome = await agent.workflow.send('s1', { message: 'hi again' })
        assert.equal(outcome.status, 'completed', where)
        assert.equal(outcome.messages.at(-1).content, 'Hello back.', where)
      } finally {
        delete process.env.ARCHMAX_DEBUG_PANIC_TURN
        agent.dispose()
      }
    }
  }
})

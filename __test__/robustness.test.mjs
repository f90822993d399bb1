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

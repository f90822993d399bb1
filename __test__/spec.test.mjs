// The spec functions, through the root entry and through `./spec`.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import * as root from '@archmax-ai/harness'
import * as specEntry from '@archmax-ai/harness/spec'

const VALID = `title: Greet
instructions: Greet, then say goodbye.
states:
  hello:
    triggers:
      manual:
      mail:
        description: '  A mail arrived. '
        session: msg.thread
        requires: [order_id, { name: qty, type: integer }]
    instructions: Say hello.
    transitions:
      - to: done
  done:
    instructions: Say goodbye.
`

const SPEC_FUNCTIONS = [
  'validateSpec',
  'parseMachineSpec',
  'signatureForTrigger',
  'signatureJsonSchema',
  'signatureValueIssues',
  'sessionIdForTrigger',
  'messagePathForTrigger',
  'connectionForTrigger',
  'isSlug',
  'parseCodeDescription',
  'specHash',
  'validateWorkflow',
]

test('./spec re-exports the same functions as the root', () => {
  for (const name of SPEC_FUNCTIONS) {
    assert.equal(typeof root[name], 'function', name)
    assert.equal(specEntry[name], root[name], name)
  }
  assert.equal(specEntry.SIGNATURE_TYPES, root.SIGNATURE_TYPES)
  assert.deepEqual(root.SIGNATURE_TYPES, ['string', 'integer', 'number', 'boolean', 'date', 'date-time', 'object', 'array'])
})

for (const [label, api] of [['root', root], ['./spec', specEntry]]) {
  test(`validateSpec via ${label}`, () => {
    const ok = api.validateSpec(VALID)
    assert.equal(ok.ok, true)
    assert.deepEqual(ok.schema, [])
    assert.deepEqual(Object.keys(ok.spec.states), ['hello', 'done'])
    const bad = api.validateSpec('states:\n  a:\n    transitions:\n      - to: nowhere\n')
    assert.equal(bad.ok, false)
    const issue = bad.schema.find((d) => d.field === 'states.a.transitions.0.to')
    assert.ok(issue, JSON.stringify(bad.schema))
    assert.equal(issue.severity, 'error')
    assert.equal(issue.line, 4)
    assert.equal(typeof issue.column, 'number')
  })

  test(`parseMachineSpec via ${label}`, () => {
    const parsed = api.parseMachineSpec(VALID)
    assert.equal(parsed.ok, true)
    assert.equal(parsed.spec.title, 'Greet')
    const failed = api.parseMachineSpec('states: [')
    assert.equal(failed.ok, false)
    assert.ok(failed.issues.length > 0)
    assert.match(failed.issues[0].message, /YAML mapping/)
  })

  test(`signatures via ${label}`, () => {
    const { spec } = api.parseMachineSpec(VALID)
    const sig = api.signatureForTrigger(spec, 'mail')
    assert.deepEqual(sig, {
      description: 'A mail arrived.',
      requires: [{ name: 'order_id' }, { name: 'qty', type: 'integer' }],
      returns: [],
    })
    assert.deepEqual(api.signatureForTrigger(spec, 'manual'), { requires: [], returns: [] })
    assert.equal(api.signatureForTrigger(spec, 'nope'), undefined)
    assert.deepEqual(api.signatureJsonSchema(sig.requires), {
      type: 'object',
      properties: { order_id: {}, qty: { type: 'integer' } },
      required: ['order_id', 'qty'],
    })
    const issues = api.signatureValueIssues(sig.requires, { qty: 1.5 })
    assert.deepEqual(issues.map((i) => [i.kind, i.name]), [['missing', 'order_id'], ['invalid', 'qty']])
    assert.equal(issues[0].message, "'order_id' is not set")
    assert.deepEqual(api.signatureValueIssues(sig.requires, { order_id: 'A', qty: 2 }), [])
    assert.equal(api.sessionIdForTrigger(spec, 'mail', { msg: { thread: 'T-9' } }), 'T-9')
    assert.equal(api.sessionIdForTrigger(spec, 'mail', {}), undefined)
    const hostKeys = { states: { intake: { triggers: { slack: { message: 'triggers.-1.text', connection: 'acme-slack' }, tick: { message: false } } } } }
    assert.equal(api.messagePathForTrigger(hostKeys, 'slack'), 'triggers.-1.text')
    assert.equal(api.messagePathForTrigger(hostKeys, 'tick'), false)
    assert.equal(api.messagePathForTrigger(hostKeys, 'nope'), undefined)
    assert.equal(api.connectionForTrigger(hostKeys, 'slack'), 'acme-slack')
    assert.equal(api.connectionForTrigger(hostKeys, 'tick'), undefined)
  })

  test(`grammars and hashes via ${label}`, () => {
    assert.equal(api.isSlug('order-lookup'), true)
    assert.equal(api.isSlug('Order_Lookup'), false)
    assert.deepEqual(api.parseCodeDescription('/**\n * Checks the refund.\n * @param x\n */\nexport default 1'), {
      description: 'Checks the refund.',
    })
    assert.equal(api.parseCodeDescription('export default 1'), null)
    const { spec } = api.parseMachineSpec(VALID)
    const hash = api.specHash(spec)
    assert.match(hash, /^[0-9a-f]{32}$/)
    assert.equal(api.specHash({ ...spec, metadata: { owner: 'x' } }), hash, 'metadata does not count')
  })
}

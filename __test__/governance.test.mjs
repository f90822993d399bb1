// Governance: the Rust kernel for hosts that run their own agent loop.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { Governance } from '@archmax-ai/harness'
import { EXAMPLE } from './helpers.mjs'

const SPEC = `
tools:
  allow_always: [read_file, write_file, ls]
  forbid_always: [{ tool: "*", paths: ["secrets/**"] }]
states:
  collect:
    triggers: { manual: }
    tools:
      allow:
        - { tool: write_file, args: { file_path: ["output/\${{case_id}}/*.json"] } }
        - send_mail
      forbid: [ls]
    transitions: [{ to: done, description: Finished. }]
  done:
    instructions: Say goodbye.
`

test('fromSpec decides with rule ids and the exact model-facing text', () => {
  const g = Governance.fromSpec(SPEC)
  assert.deepEqual(g.states(), ['collect', 'done'])
  const vars = { case_id: 'K-9' }
  assert.deepEqual(
    g.decide({ state: 'collect', tool: 'write_file', args: { file_path: 'output/K-9/a.json' }, variables: vars }),
    { allowed: true, rule: 'tool.allowed', terminal: false, warn: false },
  )
  const other = g.decide({ state: 'collect', tool: 'write_file', args: { file_path: 'output/K-1/a.json' }, variables: vars })
  assert.equal(other.allowed, false)
  assert.equal(other.rule, 'tool.not-allowed')
  assert.ok(other.message.startsWith("[workflow] BLOCKED: 'write_file' on 'output/K-1/a.json' is not allowed in state 'collect'.\nAllowed in 'collect': write_file(file_path=output/${{case_id}}/*.json), send_mail, read_file,"), other.message)
  const unset = g.decide({ state: 'collect', tool: 'write_file', args: { file_path: 'output/x/a.json' } })
  assert.equal(unset.rule, 'tool.unresolved-variable')
  assert.equal(unset.terminal, true)
  assert.match(unset.message, /\$\{\{case_id\}\}.*not set/)
  const secret = g.decide({ state: 'done', tool: 'read_file', args: { file_path: 'secrets/key' } })
  assert.equal(secret.rule, 'tool.forbidden')
  assert.equal(g.decide({ state: 'collect', tool: 'ls', args: { path: 'output' } }).rule, 'tool.forbidden-here')
  assert.equal(g.decide({ state: 'collect', tool: 'ls', args: { path: 'output' }, authority: 'hook' }).allowed, true)
  assert.equal(g.decide({ state: 'collect', tool: 'read_file', args: { file_path: 'a' }, authority: 'reply-only' }).rule, 'tool.reply-only')
  assert.equal(g.decide({ state: 'done', tool: 'eval', args: {} }).warn, false)
})

test('surface hides advance in terminal states and bare-forbidden tools', () => {
  const g = Governance.fromSpec(SPEC)
  const collect = g.surface('collect')
  assert.ok(collect.includes('archmax_advance'))
  assert.ok(!collect.includes('ls'))
  assert.ok(collect.includes('send_mail'))
  const done = g.surface('done')
  assert.ok(!done.includes('archmax_advance'))
  assert.ok(done.includes('ls'))
  assert.deepEqual(g.surface('nowhere'), [])
})

test('transition checks the edge', () => {
  const g = Governance.fromSpec(SPEC)
  assert.equal(g.transition('collect', 'done').allowed, true)
  const no = g.transition('done', 'collect')
  assert.equal(no.rule, 'transition.no-edge')
  assert.equal(no.message, "cannot advance from 'done' to 'collect'. No transitions from this state.")
})

test('fromWorkspace compiles the example with its skills and mounts', () => {
  const g = Governance.fromWorkspace({ rootDir: EXAMPLE, workflow: 'order-lookup' })
  assert.ok(g.states().includes('refund-review'))
  assert.deepEqual(g.enabledSkills('refund-request').sort(), ['order-data', 'refund-policy'])
  const run = g.decide({ state: 'refund-request', tool: 'archmax_run', args: { file_path: 'skills/refund-policy/scripts/refund-limit.js' } })
  assert.equal(run.allowed, true, run.message)
  const outside = g.decide({ state: 'refund-request', tool: 'archmax_run', args: { file_path: 'scratchpad/x.js' } })
  assert.equal(outside.rule, 'script.skill-only')
  const skill = g.decide({ state: 'classify', tool: 'read_file', args: { file_path: 'skills/order-data/assets/orders.json' } })
  assert.equal(skill.rule, 'skill.forbidden')
  assert.equal(g.decide({ state: 'classify', tool: 'write_file', args: { file_path: 'AGENTS.md' } }).rule, 'zone.read-only')
})

test('bad input throws a clear error and Node survives', () => {
  assert.throws(() => Governance.fromWorkspace({ rootDir: EXAMPLE, workflow: 'nope' }), (e) => {
    assert.equal(e.code, 'WorkflowLoadError')
    assert.match(e.message, /Cannot load workflow 'nope' \(workflows\/nope\/workflow.yaml\): no workflow.yaml found/)
    return true
  })
  assert.throws(() => Governance.fromSpec('states: {}'), (e) => e.code === 'WorkflowLoadError' && /states/.test(e.message))
  assert.throws(() => Governance.fromSpec(SPEC, { toolPaths: { read_file: { x: 'read' } } }), /built-in tool/)
  const g = Governance.fromSpec(SPEC)
  assert.throws(() => g.decide({ state: 'collect', tool: 'ls', authority: 'root' }), /authority 'root'/)
  assert.throws(() => g.decide({ state: 'collect', tool: 'ls', variables: 7 }), /variables must be an object/)
  assert.throws(() => g.decide(null), Error)
  assert.equal(g.decide({ state: 'collect', tool: 'read_file', args: { file_path: 12 } }).rule, 'tool.path-argument')
})

test('refusals are the documented error classes', async () => {
  const { WorkflowLoadError, UnknownStateError, HarnessError, errors } = await import('@archmax-ai/harness')
  assert.throws(() => Governance.fromWorkspace({ rootDir: EXAMPLE, workflow: 'nope' }), (e) => {
    assert.ok(e instanceof WorkflowLoadError, 'instanceof, as from createAgent')
    assert.ok(e instanceof HarnessError)
    assert.equal(e.name, 'WorkflowLoadError')
    assert.equal(e.workflow, 'nope')
    assert.equal(e.workflowPath, 'workflows/nope/workflow.yaml')
    assert.equal(e.problem, 'no workflow.yaml found')
    assert.ok(e.diagnostics.some((d) => /No workflow.yaml found/.test(d.message)), JSON.stringify(e.diagnostics))
    return true
  })
  assert.throws(() => Governance.fromSpec('states: {}'), (e) => {
    assert.ok(e instanceof WorkflowLoadError && /states/.test(e.message))
    assert.ok(e.diagnostics.length > 0 && e.diagnostics.every((d) => d.severity === 'error'))
    return true
  })
  const g = Governance.fromSpec(SPEC)
  assert.throws(() => g.decide({ state: 'nope', tool: 'ls' }), (e) => {
    assert.ok(e instanceof UnknownStateError)
    assert.equal(errors.UnknownStateError, UnknownStateError)
    assert.equal(e.code, 'UnknownStateError')
    assert.equal(e.message, "Unknown state 'nope'. The workflow's states: collect, done.")
    assert.equal(e.state, 'nope')
    assert.deepEqual(e.states, ['collect', 'done'])
    return true
  })
  assert.equal(g.decide({ state: 'done', tool: 'ls' }).allowed, true)
})

test('GovernanceRuleId in the typings lists every rule id of the kernel', async () => {
  const { readFileSync } = await import('node:fs')
  const { join } = await import('node:path')
  const { ROOT } = await import('./helpers.mjs')
  const rust = readFileSync(join(ROOT, 'crates/kernel/src/rule.rs'), 'utf8')
  const ids = [...rust.matchAll(/RuleId::\w+ => "([^"]+)"/g)].map((m) => m[1]).sort()
  const dts = readFileSync(join(ROOT, 'index.d.ts'), 'utf8')
  const union = /export type GovernanceRuleId =([^]*?)\n\n/.exec(dts)?.[1] ?? ''
  const typed = [...union.matchAll(/'([^']+)'/g)].map((m) => m[1]).sort()
  assert.ok(ids.length > 20, 'the kernel ids were found')
  assert.deepEqual(typed, ids)
})

test('decide on archmax_advance checks the requires gate and the edge, as the runtime does', () => {
  const g = Governance.fromSpec(`
states:
  a:
    triggers: { manual: }
    requires: [order_id]
    transitions: [{ to: b }]
  b: { instructions: B. }
`)
  const advance = (to, variables) => g.decide({ state: 'a', tool: 'archmax_advance', args: { to, reason: 'r' }, variables })
  assert.equal(advance('b').rule, 'transition.requires')
  assert.deepEqual(advance('b', { order_id: 'A-1' }), { allowed: true, rule: 'tool.allowed', terminal: false, warn: false })
  const ghost = advance('ghost', { order_id: 'A-1' })
  assert.equal(ghost.allowed, false)
  assert.equal(ghost.rule, 'transition.no-edge')
  assert.equal(ghost.message, "cannot advance from 'a' to 'ghost'. Valid target slugs: b.")
})

test('guard variables accept the { value, locked } entries the package returns', () => {
  const g = Governance.fromSpec(SPEC)
  const call = (variables) =>
    g.decide({ state: 'collect', tool: 'write_file', args: { file_path: 'output/K-9/a.json' }, variables })
  assert.equal(call({ case_id: { value: 'K-9', locked: true } }).allowed, true)
  assert.equal(call({ case_id: { value: 'K-9' } }).allowed, true)
  assert.equal(call({ case_id: { value: 'K-1', locked: false } }).rule, 'tool.not-allowed')
  // An object that is not an entry stays a (non-scalar) value.
  assert.match(call({ case_id: { value: 'K-9', other: 1 } }).message, /non-scalar/)
  const gate = Governance.fromSpec('states:\n  a:\n    triggers: { manual: }\n    requires: [x]\n    transitions: [{ to: b }]\n  b: { instructions: B. }\n')
  assert.equal(gate.transition('a', 'b', { x: { value: 1, locked: true } }).allowed, true)
})

test('surface can leave out the control tools a host does not implement', () => {
  const g = Governance.fromSpec(SPEC)
  const all = g.surface('collect')
  assert.ok(all.includes('archmax_advance') && all.includes('archmax_get_variables'))
  const none = g.surface('collect', { controls: false })
  assert.deepEqual(none, all.filter((t) => !t.startsWith('archmax_')))
  assert.ok(none.includes('send_mail') && none.includes('write_file'))
  const some = g.surface('collect', { controls: ['archmax_advance', 'archmax_set_variables'] })
  assert.deepEqual(some.filter((t) => t.startsWith('archmax_')), ['archmax_advance', 'archmax_set_variables'])
  assert.deepEqual(g.surface('collect', { controls: true }), all)
  assert.throws(() => g.surface('collect', { controls: 'no' }), /'controls' must be a boolean or an array/)
})

test('task is governed like any tool, and validateSpec agrees with the kernel', async () => {
  const { validateSpec } = await import('@archmax-ai/harness/spec')
  const yaml = 'states:\n  a:\n    triggers: { manual: }\n    tools: { allow: [task] }\n    transitions: [{ to: b }]\n  b: { instructions: B. }\n'
  const checked = validateSpec(yaml)
  assert.equal(checked.ok, true)
  assert.deepEqual(checked.diagnostics.filter((d) => d.severity === 'error'), [])
  const g = Governance.fromSpec(yaml)
  assert.deepEqual(g.decide({ state: 'a', tool: 'task', args: { description: 'x' } }), {
    allowed: true,
    rule: 'tool.allowed',
    terminal: false,
    warn: false,
  })
  assert.ok(g.surface('a').includes('task'))
  const no = g.decide({ state: 'b', tool: 'task', args: {} })
  assert.equal(no.rule, 'tool.not-allowed')
  assert.equal(no.warn, true)
  assert.ok(no.message.startsWith("[workflow] BLOCKED: 'task' is not allowed in state 'b'."), no.message)
  assert.ok(!g.surface('b').includes('task'))
})

test('decide refuses paths above the workspace or in the session store, and says what every other path means', () => {
  const g = Governance.fromSpec(SPEC)
  const call = (file_path) => g.decide({ state: 'collect', tool: 'read_file', args: { file_path } })
  for (const escape of ['../../etc/passwd', 'scratchpad/../../x', '/../etc/shadow']) {
    const d = call(escape)
    assert.equal(d.allowed, false, escape)
    assert.equal(d.rule, 'path.outside-workspace')
    assert.equal(d.message, `Path ${JSON.stringify(escape)} resolves outside the workspace root; workspace paths may not traverse above it.`)
    assert.equal(d.paths[0].zone, 'outside')
  }
  const store = call('/sessions/a/checkpoints/state.json')
  assert.equal(store.allowed, false)
  assert.equal(store.rule, 'zone.runtime-internal')
  assert.match(store.message, /targets the session store \('sessions\/'\)/)
  // An absolute path is workspace-relative: the decision says which path it decided on.
  assert.deepEqual(call('/etc/passwd'), {
    allowed: true,
    rule: 'tool.allowed',
    terminal: false,
    warn: false,
    paths: [{ argument: 'file_path', given: '/etc/passwd', path: 'etc/passwd', zone: 'run' }],
  })
  // A plain path is answered as before, with no `paths`.
  assert.deepEqual(call('notes/a.md'), { allowed: true, rule: 'tool.allowed', terminal: false, warn: false })
})

test('policyRules are asked by Governance as createAgent asks them: the same chain, texts and fail-closed refusal', () => {
  const asked = []
  const g = Governance.fromSpec(SPEC, {
    policyRules: [
      (action, api) => (asked.push([action.tool, action.state, action.origin, api.variables]), null),
      (action) => (action.tool === 'send_mail' ? { decision: 'block', ruleId: 'no-mail', reason: 'No mail today.' } : null),
      (action) => (action.tool === 'ls' ? { decision: 'allow' } : null),
      (action) => {
        if (action.tool === 'read_file') throw new Error('the policy service is down')
        return null
      },
    ],
  })
  const vars = { case_id: 'K-9' }
  assert.deepEqual(g.decide({ state: 'collect', tool: 'send_mail', variables: vars }), {
    allowed: false,
    rule: 'no-mail',
    message: 'No mail today.',
    terminal: false,
    warn: true,
  })
  assert.deepEqual(asked[0], ['send_mail', 'collect', 'agent', vars])
  // An allow only ends the chain: the workflow still decides (ls is forbidden in collect).
  assert.equal(g.decide({ state: 'collect', tool: 'ls' }).rule, 'tool.forbidden-here')
  assert.deepEqual(g.decide({ state: 'done', tool: 'read_file', args: { file_path: 'a.md' } }), {
    allowed: false,
    rule: 'policy.error',
    message: "[workflow] BLOCKED: 'read_file' was refused: policyRules[3] threw: the policy service is down",
    terminal: false,
    warn: true,
  })
  assert.equal(g.decide({ state: 'done', tool: 'write_file', args: { file_path: 'a.md' } }).allowed, true)
  assert.throws(() => Governance.fromSpec(SPEC, { policyRules: ['nope'] }), /policyRules\[0\] must be a function/)
})

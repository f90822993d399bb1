// validateWorkflow on disk.
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { validateWorkflow } from '@archmax-ai/harness'
import { BROKEN_SPEC, EXAMPLE, workspace } from './helpers.mjs'

test('the example workflows are valid', () => {
  for (const workflow of ['order-lookup', 'enrich-order']) {
    const result = validateWorkflow({ rootDir: EXAMPLE, workflow })
    assert.deepEqual(result, { valid: true, workflow, rootDir: EXAMPLE, diagnostics: [] })
  }
})

test('workflow defaults to order-lookup and rootDir is made absolute', () => {
  const cwd = process.cwd()
  process.chdir(EXAMPLE)
  try {
    const result = validateWorkflow()
    assert.equal(result.workflow, 'order-lookup')
    assert.equal(result.rootDir, EXAMPLE)
    assert.equal(result.valid, true)
    assert.equal(validateWorkflow({ rootDir: '.' }).rootDir, EXAMPLE)
  } finally {
    process.chdir(cwd)
  }
})

test('a broken workspace reports errors with file, field and line', () => {
  const root = workspace({ 'workflows/bad/workflow.yaml': BROKEN_SPEC })
  const result = validateWorkflow({ rootDir: root, workflow: 'bad' })
  assert.equal(result.valid, false)
  assert.equal(result.rootDir, root)
  const d = result.diagnostics.find((x) => x.field === 'states.start.transitions.0.to')
  assert.ok(d, JSON.stringify(result.diagnostics, null, 2))
  assert.equal(d.severity, 'error')
  assert.equal(d.file, 'workflows/bad/workflow.yaml')
  assert.equal(d.line, 9)
  assert.equal(typeof d.column, 'number')
  assert.match(d.message, /nowhere/)
})

test('a missing workflow is a diagnostic', () => {
  const root = workspace({})
  const result = validateWorkflow({ rootDir: root, workflow: 'ghost' })
  assert.equal(result.valid, false)
  assert.deepEqual(result.diagnostics, [
    {
      severity: 'error',
      message: "No workflow.yaml found for workflow 'ghost'",
      file: 'workflows/ghost/workflow.yaml',
    },
  ])
})

test('skills and mounts options are accepted', () => {
  const result = validateWorkflow({
    rootDir: EXAMPLE,
    workflow: 'order-lookup',
    skills: ['skills/'],
    mounts: { '/skills/': { readOnly: true }, '/AGENTS.md': {} },
  })
  assert.equal(typeof result.valid, 'boolean')
  assert.ok(Array.isArray(result.diagnostics))
})

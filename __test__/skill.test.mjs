// The authoring skill (skills/archmax-harness/): its frontmatter, its links, and every example
// in it. A ```yaml block is a whole workflow (it validates, no lint error) or a whole case file
// (it validates beside the first workflow of the same file); a ```js block that default-exports
// a hook runs in the sandbox as a before hook; any other ```js block (host code) runs under Node.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { dirname, join } from 'node:path'

import { validateSpec, validateWorkflow } from '@archmax-ai/harness/spec'
import { createAgent } from '@archmax-ai/harness'
import { ROOT, workspace } from './helpers.mjs'

const SKILL = join(ROOT, 'skills/archmax-harness')
const FILES = ['SKILL.md', ...readdirSync(join(SKILL, 'references')).map((f) => `references/${f}`)]

function blocks(file, lang) {
  const text = readFileSync(join(SKILL, file), 'utf8')
  return [...text.matchAll(new RegExp('^```' + lang + '\\n([\\s\\S]*?)^```$', 'gm'))].map((m) => m[1])
}

test('the skill has its frontmatter and the five references, and its links resolve', () => {
  const text = readFileSync(join(SKILL, 'SKILL.md'), 'utf8')
  const front = /^---\nname: (.+)\ndescription: (.+)\n---\n/.exec(text)
  assert.ok(front, 'SKILL.md opens with name and description')
  assert.equal(front[1], 'archmax-harness')
  assert.match(front[2], /^Use when /)
  for (const r of ['workflow-language', 'hooks-and-scripts', 'cases', 'diagnostics', 'host-wiring']) {
    assert.ok(FILES.includes(`references/${r}.md`), r)
  }
  for (const file of FILES) {
    const body = readFileSync(join(SKILL, file), 'utf8')
    for (const [, link] of body.matchAll(/\]\(([^)#]+)\)/g)) {
      if (/^https?:/.test(link)) continue
      assert.ok(existsSync(join(SKILL, dirname(file), link)), `${file}: ${link} does not exist`)
    }
  }
})

test('every yaml example is a valid workflow or a valid case file', () => {
  let workflows = 0
  let cases = 0
  for (const file of FILES) {
    let host = null
    for (const yaml of blocks(file, 'yaml')) {
      if (/^states:/m.test(yaml)) {
        const v = validateSpec(yaml)
        assert.ok(v.ok, `${file}: ${JSON.stringify(v.schema)}\n${yaml}`)
        const errors = v.lint.filter((d) => d.severity === 'error')
        assert.deepEqual(errors, [], `${file}: lint errors\n${yaml}`)
        host ??= yaml
        workflows++
      } else if (/^steps:/m.test(yaml)) {
        assert.ok(host, `${file}: a case example needs a workflow example before it`)
        const rootDir = workspace({
          'workflows/w/workflow.yaml': host,
          'workflows/w/tests/example.test.yaml': yaml,
        })
        const r = validateWorkflow({ rootDir, workflow: 'w' })
        const errors = r.diagnostics.filter((d) => d.severity === 'error')
        assert.deepEqual(errors, [], `${file}: case example\n${yaml}`)
        cases++
      } else {
        assert.fail(`${file}: a yaml example is neither a workflow nor a case file:\n${yaml}`)
      }
    }
  }
  assert.ok(workflows >= 5, `only ${workflows} workflow examples`)
  assert.ok(cases >= 2, `only ${cases} case examples`)
})

// One before hook around the example; `variables` decide what it answers.
const GATE = `instructions: A test workflow.
mounts:
  allow_always: []
states:
  start:
    triggers: { manual: }
    instructions: Say hello.
    before:
      script: hooks/example.js
`

test('every js example runs: hooks in the sandbox returning a verdict, host code under Node', async () => {
  let hooks = 0
  let hosts = 0
  for (const file of FILES) {
    for (const js of blocks(file, 'js')) {
      if (!/export default defineHook/.test(js)) {
        // Host code runs from inside the package (so its imports resolve to this build),
        // with the repository as working directory (so the example workspace is found).
        const path = join(ROOT, '__test__', `.skill-example-${process.pid}.mjs`)
        writeFileSync(path, js)
        try {
          execFileSync(process.execPath, [path], { cwd: ROOT, stdio: 'pipe', timeout: 30_000 })
        } finally {
          rmSync(path, { force: true })
        }
        hosts++
        continue
      }
      hooks++
      const rootDir = workspace({ 'workflows/g/workflow.yaml': GATE, 'workflows/g/hooks/example.js': js })
      const agent = await createAgent({
        workflow: 'g',
        workspace: { rootDir },
        model: async () => ({ role: 'assistant', content: 'Hello.' }),
      })
      try {
        for (const variables of [{}, { order_id: 'KK-1' }]) {
          const out = await agent.workflow.send(`s${Object.keys(variables).length}`, { message: 'Hi', variables })
          // A verdict the example returns: ok completes the turn; a veto (or a correction,
          // read as a veto at entry) rejects it with one of the example's own reasons. A throw or a non-verdict fails closed
          // with the harness's message instead.
          if (out.kind === 'rejected') {
            const reasons = [...js.matchAll(/"([^"]{8,})"/g)].map((m) => m[1]).filter((r) => !r.includes('@archmax'))
            assert.ok(
              reasons.some((r) => out.rejected.includes(r)),
              `${file}: rejected for '${out.rejected}', not a reason of the example`,
            )
          } else {
            assert.equal(out.kind, 'completed', `${file}: ${JSON.stringify(out)}`)
          }
        }
      } finally {
        agent.dispose()
      }
    }
  }
  assert.ok(hooks >= 2, `only ${hooks} hook examples`)
  assert.ok(hosts >= 2, `only ${hosts} host examples`)
})

test('the skill and the schema are in the published package', () => {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' })
  const files = new Set(JSON.parse(out)[0].files.map((f) => f.path))
  for (const file of FILES) assert.ok(files.has(`skills/archmax-harness/${file}`), file)
  assert.ok(files.has('workflow.schema.json'))
  assert.ok(files.has('docs/workflow-reference.md'))
})

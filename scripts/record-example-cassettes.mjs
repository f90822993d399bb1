// Records the cassettes of the example workspace's cases (issue 15 item 5): runs
// `archmax test order-lookup --record` on a copy of examples/customer-support against a
// scripted OpenAI-compatible server on 127.0.0.1 (the agent's answers of
// `exampleSuiteAnswers()` in order; the rubric hook answered `ok`, the judge a pass), then
// copies each `tests/<case>.cassette.json` back beside its case. The README's main job then
// runs the suite from them with no model endpoint:
//
//   node scripts/record-example-cassettes.mjs      # after `npm run build`
//   npx archmax test order-lookup --root examples/customer-support --replay
//
// Re-record whenever a change alters what the harness asks the model (prompts, tool
// definitions, the cases): a replay then fails naming the request and the field.
import { spawn } from 'node:child_process'
import { copyFileSync, mkdtempSync, readdirSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { copyExample, EXAMPLE, ROOT, exampleSuiteServer } from '../__test__/helpers.mjs'

const WORKFLOW = 'order-lookup'
const server = await exampleSuiteServer()

const copy = mkdtempSync(join(tmpdir(), 'archmax-record-example-'))
copyExample(copy)
try {
  // Not spawnSync: the scripted server answers on this process's event loop.
  const child = spawn(process.execPath, [join(ROOT, 'bin', 'archmax.js'), 'test', WORKFLOW, '--root', copy, '--record'], {
    env: { ...process.env, ARCHMAX_API_BASE_URL: server.url, ARCHMAX_API_KEY: 'scripted', ARCHMAX_MODEL: 'scripted-model', ARCHMAX_CLI_NO_BANNER: '1', NO_COLOR: '1' },
    stdio: ['ignore', 'inherit', 'inherit'],
  })
  const status = await new Promise((resolve) => child.on('exit', resolve))
  if (status !== 0) throw new Error(`archmax test --record exited ${status}`)
  if (server.left()) throw new Error(`${server.left()} scripted answers were not asked for`)
  const tests = join('workflows', WORKFLOW, 'tests')
  for (const name of readdirSync(join(copy, tests)).filter((n) => n.endsWith('.cassette.json'))) {
    copyFileSync(join(copy, tests, name), join(EXAMPLE, tests, name))
    console.log(`recorded ${join('examples/customer-support', tests, name)}`)
  }
} finally {
  await server.close()
  rmSync(copy, { recursive: true, force: true })
}

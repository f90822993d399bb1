// The model roles: a rubric hook is graded by the model `modelFactory` builds for the
// `rubric` role (or, without a factory, by the agent's model, told the role).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { createAgent } from '@archmax-ai/harness'
import { say, workspace } from './helpers.mjs'

const spec = (rubricModel) => `title: Graded
instructions: A test workflow.
mounts:
  allow_always: []
states:
  answer:
    triggers: { manual: }
    instructions: Answer.
    after:
      rubric:
        instructions: The reply must name a date.${rubricModel ? `\n        model: ${rubricModel}` : ''}
        max_iterations: 1
`

const OK = say('{"verdict": "ok", "reason": "names a date"}')

async function gradedTurn(options, rubricModel) {
  const root = workspace({ 'workflows/graded/workflow.yaml': spec(rubricModel) })
  const agent = await createAgent({ workflow: 'graded', workspace: { rootDir: root }, defaultModel: 'main', ...options })
  try {
    return await agent.workflow.send('g-1', { message: 'When does it ship?' })
  } finally {
    agent.dispose()
  }
}

test("modelFactory builds the rubric's grader with role 'rubric' and the rubric's model id", async () => {
  for (const [rubricModel, requested] of [[undefined, undefined], ['grader-x', 'grader-x']]) {
    const built = []
    const graded = []
    const modelFactory = (role, env, id) => {
      built.push([role, id])
      if (role === 'agent') return async () => say('It ships on 3 March.')
      return async (request, info) => {
        graded.push({ system: request.messages[0].content, model: request.model, info })
        return OK
      }
    }
    const outcome = await gradedTurn({ modelFactory }, rubricModel)
    assert.equal(outcome.kind, 'completed')
    assert.equal(outcome.reply, 'It ships on 3 March.')
    assert.deepEqual(built, [['agent', undefined], ['rubric', requested]])
    assert.equal(graded.length, 1)
    assert.match(graded[0].system, /^The reply must name a date\./)
    assert.equal(graded[0].model, rubricModel ?? 'main')
    assert.deepEqual(graded[0].info, { role: 'rubric', state: 'answer' })
  }
})

test("without a factory the agent's model grades, told the role; with both, model answers the agent and the factory the rubric", async () => {
  const roles = []
  const model = async (request, info) => {
    roles.push(info.role)
    return info.role === 'rubric' ? OK : say('It ships on 3 March.')
  }
  assert.equal((await gradedTurn({ model })).kind, 'completed')
  assert.deepEqual(roles, ['agent', 'rubric'])

  const built = []
  const agentCalls = []
  const both = await gradedTurn({
    model: async (request, info) => (agentCalls.push(info.role), say('It ships on 3 March.')),
    modelFactory: (role, env, id) => (built.push([role, id]), async () => OK),
  })
  assert.equal(both.kind, 'completed')
  assert.deepEqual(agentCalls, ['agent'])
  assert.deepEqual(built, [['rubric', undefined]])
})

test("modelFactory's env() reads the environment, then .env in rootDir; a missing variable throws when read (the key only off this machine)", async () => {
  const NAMES = ['ARCHMAX_API_BASE_URL', 'ARCHMAX_API_KEY', 'ARCHMAX_MODEL', 'ARCHMAX_TEMPERATURE', 'ARCHMAX_MAX_TOKENS']
  const saved = Object.fromEntries(NAMES.map((n) => [n, process.env[n]]))
  for (const n of NAMES) delete process.env[n]
  try {
    process.env.ARCHMAX_MODEL = 'from-the-environment'
    const root = workspace({
      'workflows/graded/workflow.yaml': spec(),
      '.env': 'ARCHMAX_API_BASE_URL=http://127.0.0.1:9/v1\nARCHMAX_API_KEY=key-from-dotenv\nARCHMAX_MODEL=from-dotenv\nARCHMAX_TEMPERATURE=0.25\n',
    })
    let seen
    const agent = await createAgent({
      workflow: 'graded',
      workspace: { rootDir: root },
      modelFactory: (role, env) => {
        seen = env()
        return async () => OK
      },
    })
    agent.dispose()
    assert.deepEqual(seen, { apiBaseUrl: 'http://127.0.0.1:9/v1', apiKey: 'key-from-dotenv', model: 'from-the-environment', temperature: 0.25, maxTokens: undefined })
    // No key is needed for a server on this machine; elsewhere a missing key throws.
    // The harness's one loopback rule: `archmax run` needs no key for the same URLs.
    const keyless = [
      ['http://localhost:8080/v1', ''],
      ['http://127.0.0.2/v1', ''],
      ['http://[::1]:1/v1', ''],
      ['http://127.1:9/v1', ''],
      ['http://[0:0:0:0:0:0:0:1]:9/v1', ''],
      ['https://api.example/v1', /Missing required environment variable: ARCHMAX_API_KEY\./],
      ['http://127.0.0.1.example/v1', /Missing required environment variable: ARCHMAX_API_KEY\./],
    ]
    for (const [url, expected] of keyless) {
      const keyless = workspace({ 'workflows/graded/workflow.yaml': spec(), '.env': `ARCHMAX_API_BASE_URL=${url}\nARCHMAX_MODEL=m\n` })
      const read = createAgent({ workflow: 'graded', workspace: { rootDir: keyless }, modelFactory: (role, env) => (seen = env(), async () => OK) })
      if (typeof expected === 'string') {
        ;(await read).dispose()
        assert.equal(seen.apiKey, expected, url)
      } else await assert.rejects(read, expected, url)
    }
    const bare = workspace({ 'workflows/graded/workflow.yaml': spec() })
    await assert.rejects(
      createAgent({ workflow: 'graded', workspace: { rootDir: bare }, modelFactory: (role, env) => env() }),
      /Missing required environment variable: ARCHMAX_API_BASE_URL\./,
    )
  } finally {
    for (const n of NAMES) {
      if (saved[n] === undefined) delete process.env[n]
      else process.env[n] = saved[n]
    }
  }
})

test('the default model id is the harness\'s: ARCHMAX_MODEL only in .env builds the default model once', async () => {
  const saved = process.env.ARCHMAX_MODEL
  delete process.env.ARCHMAX_MODEL
  try {
    const root = workspace({ 'workflows/graded/workflow.yaml': spec(), '.env': 'ARCHMAX_MODEL=from-dotenv\n' })
    const built = []
    const requested = []
    const agent = await createAgent({
      workflow: 'graded',
      workspace: { rootDir: root },
      modelFactory: (role, env, id) => {
        built.push([role, id ?? null])
        return async (request) => (requested.push(request.model), role === 'rubric' ? OK : say('It ships on 3 March.'))
      },
    })
    try {
      await agent.workflow.send('s1', { message: 'When does it ship?' })
    } finally {
      agent.dispose()
    }
    assert.deepEqual(built, [['agent', null], ['rubric', null]])
    assert.equal(requested[0], 'from-dotenv')
  } finally {
    if (saved === undefined) delete process.env.ARCHMAX_MODEL
    else process.env.ARCHMAX_MODEL = saved
  }
})

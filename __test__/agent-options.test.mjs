// createAgent options toolPaths, promptCache and pricing, and createUsageTracker
// (public-api digest §2, §12 ToolPathsError, §13).
import { test } from 'node:test'
import assert from 'node:assert/strict'

import { createAgent, createUsageTracker, ToolPathsError } from '@archmax-ai/harness'
import { call, say, scripted, workspace } from './helpers.mjs'

const SPEC = `title: Desk
instructions: A test workflow.
mounts:
  allow_always: []
states:
  intake:
    triggers: { manual: }
    instructions: Answer.
`

const rootWith = (spec = SPEC) => workspace({ 'workflows/desk/workflow.yaml': spec, 'notes/a.md': 'hello' })

function deskAgent(options = {}, spec = SPEC) {
  return createAgent({ workflow: 'desk', workspace: { rootDir: rootWith(spec) }, model: () => say('x'), ...options })
}

/** A chat.completion answering `content` with `usage`, from `model`. */
const completion = (content, usage, model) => ({
  choices: [{ message: { role: 'assistant', content }, finish_reason: 'stop' }],
  usage,
  ...(model ? { model } : {}),
})

test('toolPaths: ToolPathsError for a built-in name, an empty declaration, an unknown access (exact texts)', async () => {
  const tool = { name: 'fetch_doc', handler: () => 'x' }
  const cases = [
    [{ read_file: { file_path: 'read' } }, "Tool 'read_file' is a built-in tool; its path arguments are declared by the runtime and cannot be redeclared."],
    [{ fetch_doc: {} }, "Tool 'fetch_doc' declares no path argument; omit its declaration instead."],
    [{ fetch_doc: { file: 'steal' } }, "Tool 'fetch_doc' declares argument 'file' with access 'steal'; the accesses are 'read', 'list', 'search', 'write', 'remove', 'execute'."],
  ]
  for (const [toolPaths, message] of cases) {
    await assert.rejects(deskAgent({ tools: [tool], toolPaths }), (e) => e instanceof ToolPathsError && e.message === message && e.code === 'ToolPathsError')
  }
  // A declaration for a name that is no host tool is accepted, as in the original.
  const agent = await deskAgent({ tools: [tool], toolPaths: { not_a_tool: { file: 'read' } } })
  agent.dispose()
  await assert.rejects(deskAgent({ toolPaths: 'x' }), TypeError)
})

test("toolPaths governs a host tool's argument as a path, replacing the tool's own paths", async () => {
  const run = async (options) => {
    const seen = []
    const { model } = scripted([
      { role: 'assistant', content: null, tool_calls: [call('fetch_doc', { file: 'AGENTS.md' })] },
      say('done'),
    ])
    const events = []
    const agent = await deskAgent({
      model,
      essentialTools: ['fetch_doc'],
      onEvent: (e) => events.push(e),
      tools: [{ name: 'fetch_doc', schema: { type: 'object', properties: { file: { type: 'string' } } }, paths: { other: 'write' }, handler: (args) => (seen.push(args.file), 'contents') }],
      ...options,
    })
    try {
      await agent.workflow.send('t-1', { message: 'Read it.' })
    } finally {
      agent.dispose()
    }
    return { seen, blocked: events.filter((e) => e.type === 'tool-blocked' && e.tool === 'fetch_doc') }
  }
  // Its own paths name `other`: `file` is not a path, so the read-only mount is written.
  const ungoverned = await run({})
  assert.deepEqual(ungoverned.seen, ['AGENTS.md'])
  assert.equal(ungoverned.blocked.length, 0)
  // toolPaths declares `file` a write path: the kernel refuses writing the read-only mount.
  const governed = await run({ toolPaths: { fetch_doc: { file: 'write' } } })
  assert.deepEqual(governed.seen, [])
  assert.equal(governed.blocked.length, 1)
  assert.match(governed.blocked[0].reason, /'fetch_doc' on 'AGENTS.md' targets a read-only mount/)
})

test('a declared path argument that leaves the workspace never reaches the host tool', async () => {
  const seen = []
  const { model, requests } = scripted([
    { role: 'assistant', content: null, tool_calls: [call('fetch_doc', { file: '../outside.txt' }, 'c1'), call('fetch_doc', { file: 'notes/../inside.txt' }, 'c2')] },
    say('done'),
  ])
  const agent = await deskAgent({
    model,
    essentialTools: ['fetch_doc'],
    tools: [{ name: 'fetch_doc', schema: { type: 'object', properties: { file: { type: 'string' } } }, paths: { file: 'read' }, handler: (args) => (seen.push(args.file), 'contents') }],
  })
  try {
    await agent.workflow.send('esc-1', { message: 'Read them.' })
  } finally {
    agent.dispose()
  }
  // The escaping one is refused with the file tools' router text; the other runs as written.
  assert.deepEqual(seen, ['notes/../inside.txt'])
  const results = requests.at(-1).messages.filter((m) => m.role === 'tool')
  assert.equal(results.find((m) => m.tool_call_id === 'c1').content, 'Error: Path "../outside.txt" resolves outside the workspace root; workspace paths may not traverse above it.')
  assert.equal(results.find((m) => m.tool_call_id === 'c2').content, 'contents')
})

test('pricing: costUsd on model-usage events and in the Outcome usage (exact, longest key, default); none without pricing', async () => {
  const usage = { prompt_tokens: 1000, completion_tokens: 200, prompt_tokens_details: { cached_tokens: 400 } }
  const run = async (options, answers) => {
    const events = []
    const { model } = scripted(answers)
    const agent = await deskAgent({ model, onEvent: (e) => events.push(e), ...options })
    try {
      const outcome = await agent.workflow.send('p-1', { message: 'Hi' })
      return { outcome, usage: events.filter((e) => e.type === 'model-usage') }
    } finally {
      agent.dispose()
    }
  }
  // 600 uncached × 3 + 200 × 15 + 400 × 0.3 = 1800 + 3000 + 120 = 4920 per 1e6.
  const priced = await run(
    { pricing: { default: { input: 100 }, claude: { input: 1 }, 'claude-sonnet': { input: 3, output: 15, cacheRead: 0.3 } } },
    [completion('hi', usage, 'anthropic/claude-sonnet-4')],
  )
  assert.equal(priced.usage.length, 1)
  assert.equal(priced.usage[0].costUsd, 0.00492)
  assert.equal(priced.usage[0].model, 'anthropic/claude-sonnet-4')
  assert.deepEqual(priced.outcome.usage, { inputTokens: 1000, outputTokens: 200, cacheReadTokens: 400, cacheCreationTokens: 0, costUsd: 0.00492 })
  // No entry matches and no default: no cost (never guessed).
  const unmatched = await run({ pricing: { 'gpt-4': { input: 1 } } }, [completion('hi', usage, 'other-model')])
  assert.equal('costUsd' in unmatched.usage[0], false)
  assert.equal('costUsd' in unmatched.outcome.usage, false)
  // Two calls of one turn accumulate in the session's usage: 2 × (1000 + 200 × 2) → 0.0028.
  const small = { prompt_tokens: 1000, completion_tokens: 200 }
  const twice = await run({ pricing: { default: { input: 1, output: 2 } }, essentialTools: ['noop'], tools: [{ name: 'noop', handler: () => 'ok' }] }, [
    { choices: [{ message: { role: 'assistant', content: null, tool_calls: [call('noop', {})] } }], usage: small },
    completion('y', small),
  ])
  assert.deepEqual(twice.usage.map((e) => e.costUsd), [0.0014, 0.0014])
  assert.equal(twice.outcome.usage.costUsd, 0.0028)
  assert.equal(twice.outcome.usage.inputTokens, 2000)
})

test('pricing: ARCHMAX_PRICE_* only when the option is absent; a non-numeric value refuses assembly', async () => {
  const usage = { prompt_tokens: 1000, completion_tokens: 1000 }
  const saved = { ...process.env }
  try {
    process.env.ARCHMAX_PRICE_INPUT = '2'
    process.env.ARCHMAX_PRICE_OUTPUT = '4'
    const events = []
    const agent = await deskAgent({ model: () => completion('hi', usage), onEvent: (e) => events.push(e) })
    await agent.workflow.send('e-1', { message: 'Hi' })
    agent.dispose()
    assert.equal(events.find((e) => e.type === 'model-usage').costUsd, 0.006)
    // The option wins over the env.
    const optioned = []
    const other = await deskAgent({ model: () => completion('hi', usage), onEvent: (e) => optioned.push(e), pricing: { default: { input: 1 } } })
    await other.workflow.send('e-2', { message: 'Hi' })
    other.dispose()
    assert.equal(optioned.find((e) => e.type === 'model-usage').costUsd, 0.001)
    process.env.ARCHMAX_PRICE_OUTPUT = 'cheap'
    await assert.rejects(deskAgent(), (e) => e.message === 'Environment variable ARCHMAX_PRICE_OUTPUT must be a number, got: cheap')
    // …but not when `pricing` is given.
    ;(await deskAgent({ pricing: {} })).dispose()
  } finally {
    for (const key of Object.keys(process.env)) if (!(key in saved)) delete process.env[key]
    Object.assign(process.env, saved)
  }
  await assert.rejects(deskAgent({ pricing: { default: { input: 'cheap' } } }), TypeError)
})

test('promptCache: option, then settings.prompt_cache, then env; a ttl other than 5m/1h is 5m', async () => {
  const systemOf = async (options, spec = SPEC) => {
    const { model, requests } = scripted([say('hi')])
    const agent = await deskAgent({ model, defaultModel: 'claude-sonnet-4', ...options }, spec)
    try {
      await agent.workflow.send('c-1', { message: 'Hi' })
    } finally {
      agent.dispose()
    }
    const content = requests[0].messages[0].content
    if (typeof content === 'string') return 'off'
    return content[0].cache_control?.ttl ?? 'on, no ttl'
  }
  assert.equal(await systemOf({}), '5m')
  assert.equal(await systemOf({ promptCache: { ttl: '1h' } }), '1h')
  assert.equal(await systemOf({ promptCache: { ttl: '2h' } }), '5m')
  assert.equal(await systemOf({ promptCache: { enabled: false } }), 'off')
  const cached = SPEC.replace('states:', 'settings:\n  prompt_cache:\n    enabled: true\n    ttl: 1h\nstates:')
  assert.equal(await systemOf({}, cached), '1h')
  assert.equal(await systemOf({ promptCache: { ttl: '5m' } }, cached), '5m', 'the option beats the spec')
  const saved = process.env.ARCHMAX_PROMPT_CACHE
  try {
    process.env.ARCHMAX_PROMPT_CACHE = 'off'
    assert.equal(await systemOf({}), 'off', 'the env applies to a JS model too')
    assert.equal(await systemOf({}, cached), '1h', 'the spec beats the env')
    assert.equal(await systemOf({ promptCache: { enabled: true } }), '5m', 'the option beats the env')
  } finally {
    if (saved === undefined) delete process.env.ARCHMAX_PROMPT_CACHE
    else process.env.ARCHMAX_PROMPT_CACHE = saved
  }
  await assert.rejects(deskAgent({ promptCache: { enabled: 'yes' } }), TypeError)
})

test('createUsageTracker: folds model-usage per session, forwards every event, totals/bySession/reset', async () => {
  const forwarded = []
  const tracker = createUsageTracker({ onEvent: (e) => forwarded.push(e.type) })
  const { model } = scripted([
    completion('a', { prompt_tokens: 100, completion_tokens: 10, prompt_tokens_details: { cached_tokens: 40 } }),
    completion('b', { prompt_tokens: 50, completion_tokens: 5 }),
    completion('c', { prompt_tokens: 7, completion_tokens: 1 }),
  ])
  const agent = await deskAgent({ model, onEvent: tracker.handler, pricing: { default: { input: 1, output: 2 } } })
  try {
    await agent.workflow.send('u-1', { message: 'Hi' })
    await agent.workflow.send('u-1', { message: 'Again' })
    await agent.workflow.send('u-2', { message: 'Hi' })
  } finally {
    agent.dispose()
  }
  assert.ok(forwarded.includes('state-enter') && forwarded.filter((t) => t === 'model-usage').length === 3, 'every event is forwarded')
  // u-1: (60 + 40) × 1 + 10 × 2 = 120, then 50 + 5 × 2 = 60 → 0.00018; u-2: 7 + 2 = 9 → 0.000009.
  assert.deepEqual(tracker.totals('u-1'), { inputTokens: 150, outputTokens: 15, cacheReadTokens: 40, cacheCreationTokens: 0, costUsd: 0.00018 })
  assert.deepEqual(tracker.totals('u-2'), { inputTokens: 7, outputTokens: 1, cacheReadTokens: 0, cacheCreationTokens: 0, costUsd: 0.000009 })
  assert.deepEqual(tracker.totals(), { inputTokens: 157, outputTokens: 16, cacheReadTokens: 40, cacheCreationTokens: 0, costUsd: 0.000189 })
  assert.deepEqual(tracker.totals('nobody'), { inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheCreationTokens: 0 })
  const by = tracker.bySession()
  assert.ok(by instanceof Map)
  assert.deepEqual([...by.keys()], ['u-1', 'u-2'])
  tracker.handler({ type: 'model-usage', inputTokens: 3, outputTokens: 1 })
  assert.deepEqual(tracker.totals('__unscoped__'), { inputTokens: 3, outputTokens: 1, cacheReadTokens: 0, cacheCreationTokens: 0 })
  tracker.reset('u-1')
  assert.deepEqual([...tracker.bySession().keys()], ['u-2', '__unscoped__'])
  tracker.reset()
  assert.equal(tracker.bySession().size, 0)
  // Unpriced sessions sum without inventing a cost.
  const plain = createUsageTracker()
  plain.handler({ type: 'model-usage', sessionId: 's', inputTokens: 1, outputTokens: 1 })
  assert.equal('costUsd' in plain.totals(), false)
})

/** The property names of the exported type `name` of the declaration file `file`, as TypeScript reads them. */
async function typeKeys(file, name) {
  const { default: ts } = await import('typescript')
  const path = new URL(`../${file}`, import.meta.url).pathname
  const program = ts.createProgram([path], { strict: true, noEmit: true, module: ts.ModuleKind.NodeNext, moduleResolution: ts.ModuleResolutionKind.NodeNext, target: ts.ScriptTarget.ES2022, skipLibCheck: true })
  const checker = program.getTypeChecker()
  const source = program.getSourceFile(path)
  const symbol = checker.getExportsOfModule(checker.getSymbolAtLocation(source)).find((s) => s.name === name)
  const type = checker.getDeclaredTypeOfSymbol(symbol)
  return checker.getPropertiesOfType(type).map((p) => p.name).sort()
}

test('a misspelled option from plain JS is refused with the known names, the ones TypeScript accepts', async () => {
  const { AGENT_OPTIONS } = await import('@archmax-ai/harness')
  assert.deepEqual([...AGENT_OPTIONS].sort(), await typeKeys('js/agent.d.ts', 'CreateAgentParams'))
  await assert.rejects(createAgent({ workflow: false, workspce: { rootDir: '.' }, model: async () => say('hi') }), (e) => {
    assert.ok(e instanceof TypeError)
    assert.equal(e.message, `createAgent: unknown option 'workspce'; the options are ${AGENT_OPTIONS.join(', ')}`)
    return true
  })
  const { archmaxMiddleware } = await import('@archmax-ai/harness/deepagents')
  let listed
  assert.throws(() => archmaxMiddleware({ workflow: 'w', workspce: {}, modle: 1 }), (e) => {
    assert.ok(e instanceof TypeError)
    const [, unknown, known] = /^archmaxMiddleware: unknown options (.*); the options are (.*)$/.exec(e.message) ?? []
    assert.equal(unknown, "'workspce', 'modle'")
    listed = known.split(', ').sort()
    return true
  })
  assert.deepEqual(listed, await typeKeys('js/deepagents.d.ts', 'ArchmaxMiddlewareOptions'))
})

test('a JS model function is told the state each request is made in, and who asks', async () => {
  const root = workspace({
    'workflows/two/workflow.yaml': `title: Two
instructions: A test workflow.
mounts:
  allow_always: []
states:
  first:
    triggers: { manual: }
    instructions: Move on.
    transitions:
      - to: second
  second:
    instructions: Say done.
`,
  })
  const seen = []
  const answers = [{ role: 'assistant', content: null, tool_calls: [call('archmax_advance', { to: 'second', reason: 'next' }, 'a1')] }, say('done')]
  const agent = await createAgent({ workflow: 'two', workspace: { rootDir: root }, model: async (_request, info) => {
    seen.push({ role: info.role, sessionId: info.sessionId, state: info.state })
    return answers.shift()
  } })
  try {
    const outcome = await agent.workflow.send('st1', { message: 'go' })
    assert.equal(outcome.kind, 'completed')
    assert.deepEqual(seen, [
      { role: 'agent', sessionId: 'st1', state: 'first' },
      { role: 'agent', sessionId: 'st1', state: 'second' },
    ])
  } finally {
    agent.dispose()
  }
})

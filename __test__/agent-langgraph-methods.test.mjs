// The original agent's LangGraph methods a host calls on the agent itself: `agent.stream`
// (LangGraph's stream modes over one turn) and `agent.emitRunArtifacts` (the run written under
// the session's `artifacts/`).
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'

import { CHILD_TAG, createAgent } from '@archmax-ai/harness'
import { CALLER_SPEC, CHILD_SPEC, advance, call, say, scripted, tools, workspace } from './helpers.mjs'

const TWO_SPEC = `title: Two
instructions: A test workflow.
mounts:
  allow_always: []
states:
  first:
    triggers: { manual: }
    instructions: Move on.
    transitions:
      - to: second
        description: Always.
  second:
    instructions: Say done.
`

/** A model function that streams its text in two pieces. */
function streamingSay(text) {
  return async function* () {
    yield text.slice(0, 3)
    yield text.slice(3)
  }
}

test("agent.stream: 'values' yields the state invoke resolves to; 'messages' the text as it comes; 'custom' the events", async () => {
  const root = workspace({ 'workflows/two/workflow.yaml': TWO_SPEC })
  const { model } = scripted([advance('second', 'go'), streamingSay('All done.')])
  const agent = await createAgent({ workflow: 'two', workspace: { rootDir: root }, model })
  try {
    const chunks = []
    for await (const chunk of await agent.stream({ messages: [{ role: 'user', content: 'go' }] }, { configurable: { thread_id: 's1' } })) chunks.push(chunk)
    assert.equal(chunks.length, 1)
    assert.equal(chunks[0].workflowState, 'second')
    assert.equal(chunks[0].messages.at(-1).content, 'All done.')

    const { model: model2 } = scripted([advance('second', 'go'), streamingSay('All done.')])
    const again = await createAgent({ workflow: 'two', workspace: { rootDir: root }, model: model2 })
    const pairs = []
    for await (const pair of await again.stream({ messages: [{ role: 'user', content: 'go' }] }, { configurable: { thread_id: 's2' }, streamMode: ['messages', 'custom', 'values'] })) pairs.push(pair)
    again.dispose()
    const texts = pairs.filter(([m]) => m === 'messages').map(([, [chunk, meta]]) => [chunk.content, meta.archmax_state, meta.langgraph_node])
    assert.deepEqual(texts, [['All', 'second', 'model'], [' done.', 'second', 'model']])
    const types = pairs.filter(([m]) => m === 'custom').map(([, e]) => e.type)
    for (const t of ['state-enter', 'agent-text-delta', 'agent-text']) assert.ok(types.includes(t), types.join())
    assert.deepEqual(pairs.at(-1)[0], 'values')
    await assert.rejects(agent.stream({ messages: [] }, { streamMode: 'debug' }), /streamMode string debug is not one of values, messages, custom/)
  } finally {
    agent.dispose()
  }
})

test("agent.stream tags a sub-workflow's text, so a chat UI can leave it out", async () => {
  const root = workspace({ 'workflows/orders/workflow.yaml': CALLER_SPEC, 'workflows/enrich/workflow.yaml': CHILD_SPEC })
  const { model } = scripted([
    tools(call('archmax_workflow_enrich', { order_id: 'KK-1' }, 'c1')),
    tools(call('archmax_set_variables', { variables: { risk: 'low' } }, 'k1')),
    streamingSay('Enriched KK-1.'),
    streamingSay('Done.'),
  ])
  const agent = await createAgent({ workflow: 'orders', workspace: { rootDir: root }, model })
  try {
    const seen = []
    for await (const [chunk, meta] of await agent.stream({ messages: [{ role: 'user', content: 'Enrich KK-1.' }] }, { configurable: { thread_id: 'o1' }, streamMode: 'messages' })) {
      seen.push([chunk.content, (meta.tags ?? []).includes(CHILD_TAG)])
    }
    assert.deepEqual(seen.filter(([, child]) => child).map(([t]) => t).join(''), 'Enriched KK-1.')
    assert.deepEqual(seen.filter(([, child]) => !child).map(([t]) => t).join(''), 'Done.')
  } finally {
    agent.dispose()
  }
})

test("agent.emitRunArtifacts writes the run under the session's artifacts/: graph, trajectory, metadata, trail, variables", async () => {
  const root = workspace({ 'workflows/two/workflow.yaml': TWO_SPEC })
  const { model } = scripted([
    tools(call('archmax_set_variables', { variables: { order_id: 'KK-1' }, lock: true }, 'v1')),
    advance('second', 'go'),
    say('All done.'),
  ])
  const events = []
  const agent = await createAgent({ workflow: 'two', workspace: { rootDir: root }, model, onEvent: (e) => events.push(e) })
  try {
    await agent.invoke({ messages: [{ role: 'user', content: 'go' }] }, { configurable: { thread_id: 'a1' } })
    const trajectory = { workflow: 'two', finalAnswer: 'All done.', segments: [] }
    assert.equal(await agent.emitRunArtifacts('a1', trajectory), 'a1/artifacts')
    const dir = join(root, 'sessions/a1/artifacts')
    const read = (f) => JSON.parse(readFileSync(join(dir, f), 'utf8'))
    const graph = read('graph.json')
    assert.deepEqual(graph.nodes, ['__start__', 'first', 'second'])
    assert.deepEqual(graph.edges[0], { source: '__start__', target: 'first', conditional: true, label: 'manual' })
    assert.deepEqual(graph.edges[1], { source: 'first', target: 'second', conditional: false, label: 'Always.' })
    assert.equal(graph.entry, 'first')
    assert.deepEqual(graph.finals, ['second'])
    assert.equal(graph.mermaid, 'graph TD;\n  first[first];\n  second[second];\n  __start__ -.->|manual| first;\n  first -->|Always.| second;\n')
    assert.equal(readFileSync(join(dir, 'graph.mmd'), 'utf8'), `${graph.mermaid}\n`)
    assert.deepEqual(read('trajectory.json'), { ...trajectory, sessionId: 'a1' })
    const meta = read('metadata.json')
    assert.equal(meta.sessionId, 'a1')
    assert.equal(meta.workflow, 'two')
    assert.equal(meta.packageVersion, JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')).version)
    assert.equal(meta.runtimeContract.engine, 'archmax-harness')
    assert.equal(typeof meta.specHash, 'string')
    assert.deepEqual(read('trail.json').steps.map((s) => s.to), ['first', 'second'])
    assert.deepEqual(read('variables.json').variables.order_id, { value: 'KK-1', locked: true })
    // The host's trail replaces the checkpoint's.
    await agent.emitRunArtifacts('a1', trajectory, { trail: [] })
    assert.deepEqual(read('trail.json'), { sessionId: 'a1', workflow: 'two', steps: [] })
  } finally {
    agent.dispose()
  }
  // A write that fails (here `artifacts` is a file, not a folder): null, and a warning saying why.
  mkdirSync(join(root, 'sessions/w1'), { recursive: true })
  writeFileSync(join(root, 'sessions/w1/artifacts'), 'not a folder')
  const again = await createAgent({ workflow: 'two', workspace: { rootDir: root }, model: async () => say('x'), onEvent: (e) => events.push(e) })
  try {
    assert.equal(await again.emitRunArtifacts('w1', { segments: [] }), null)
    const warning = events.find((e) => e.type === 'warning' && e.scope === 'run-artifacts')
    assert.match(warning?.message ?? '', /^failed to write artifacts for session 'w1': /)
    assert.equal(warning.sessionId, 'w1')
    await assert.rejects(again.emitRunArtifacts('../x', {}), (e) => e.name === 'SessionStoreIdError')
  } finally {
    again.dispose()
  }
})

// The deepagents middleware's added cost, in one run: the same Deep Agents agent (same fake
// tool-calling model, same script) with `archmaxMiddleware` and without it.
//
// Three scripts, each run as one `invoke` per thread, ROUNDS rounds of THREADS threads:
// - talk: one model call answering text: F + m (F: an invoke's fixed cost);
// - fan: one model call making STEPS `read_file` calls at once, then a text answer: F + 2m + N·t;
// - chain: STEPS model calls each making one `read_file` call, then a text answer: F + (N+1)m + N·t.
// So per model call m = (chain − fan) / (N − 1) and per tool call t = (fan − talk − m) / N, for
// each agent; the middleware's added cost is the governed agent's m and t less the plain
// one's. The model answers at once, so the numbers are the two loops' own work. Sessions go
// to the memory store (the filesystem store's syncs would measure the disk). Prints a table
// and, last, one JSON line.
// Usage: bash scripts/bench-deepagents.sh (the release addon), or node
// scripts/bench-deepagents.mjs (whatever `index.js` loads: a debug build unless
// NAPI_RS_NATIVE_LIBRARY_PATH names another); ROUNDS=5 THREADS=20 STEPS=10.
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'

import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessage } from '@langchain/core/messages'
import { MemorySaver } from '@langchain/langgraph'
import { createDeepAgent } from 'deepagents'

import { createMemorySessionStore } from '../js/main.js'
import { archmaxMiddleware } from '../js/deepagents.js'

const ROUNDS = Number(process.env.ROUNDS ?? 5)
const THREADS = Number(process.env.THREADS ?? 20)
const STEPS = Number(process.env.STEPS ?? 10)

const SPEC = `title: Bench
instructions: Read the notes, then answer.
mounts:
  allow_always: []
states:
  work:
    triggers: { manual: }
    instructions: Read notes.md as often as asked, then answer.
`

/** A model that reads `notes.md` until its conversation holds `steps` tool results (`fan`: all in one message), then answers. */
class ScriptModel extends BaseChatModel {
  constructor(steps, fan) {
    super({})
    this.steps = steps
    this.fan = fan
  }
  _llmType() {
    return 'bench'
  }
  bindTools(tools) {
    return this.withConfig({ tools })
  }
  async _generate(messages) {
    const done = messages.filter((m) => m.getType() === 'tool').length
    const read = (i) => ({ id: `r${i}`, name: 'read_file', args: { file_path: '/notes.md' }, type: 'tool_call' })
    const calls = done >= this.steps ? [] : this.fan ? Array.from({ length: this.steps }, (_, i) => read(i)) : [read(done)]
    const message = calls.length ? new AIMessage({ content: '', tool_calls: calls }) : new AIMessage({ content: 'done' })
    return { generations: [{ text: '', message }] }
  }
}

/** One agent, governed or not, for `steps` tool calls per invoke. */
function agentFor(governed, steps, fan, root) {
  const middleware = governed
    ? archmaxMiddleware({ workflow: 'bench', workspace: { rootDir: root, sessionStore: createMemorySessionStore() } })
    : null
  const agent = createDeepAgent({ model: new ScriptModel(steps, fan), middleware: middleware ? [middleware] : [], checkpointer: new MemorySaver() })
  return { agent, middleware }
}

/** Mean ms per invoke over ROUNDS rounds of THREADS invokes (one thread each, in turn). */
async function measure(governed, steps, fan, root) {
  const { agent, middleware } = agentFor(governed, steps, fan, root)
  const run = async (round) => {
    for (let t = 0; t < THREADS; t++) {
      const config = { configurable: { thread_id: `b${round}-${t}` }, recursionLimit: 4 * steps + 20 }
      const files = governed ? undefined : { '/notes.md': { content: ['some notes'], created_at: '', modified_at: '' } }
      const out = await agent.invoke({ messages: [{ role: 'user', content: 'go' }], ...(files ? { files } : {}) }, config)
      if (out.messages.at(-1).content !== 'done') throw new Error(`the run did not finish: ${JSON.stringify(out.messages.at(-1).content)}`)
    }
  }
  await run('warm')
  const times = []
  for (let r = 0; r < ROUNDS; r++) {
    const start = performance.now()
    await run(r)
    times.push((performance.now() - start) / THREADS)
  }
  await middleware?.dispose()
  times.sort((a, b) => a - b)
  return times[Math.floor(times.length / 2)]
}

const root = mkdtempSync(join(tmpdir(), 'archmax-bench-deep-'))
try {
  mkdirSync(join(root, 'workflows/bench'), { recursive: true })
  writeFileSync(join(root, 'workflows/bench/workflow.yaml'), SPEC)
  writeFileSync(join(root, 'notes.md'), 'some notes\n')
  const N = STEPS
  const side = async (governed) => {
    const talk = await measure(governed, 0, false, root)
    const fan = await measure(governed, N, true, root)
    const chain = await measure(governed, N, false, root)
    const m = (chain - fan) / (N - 1)
    return { talk, fan, chain, model_ms: m, tool_ms: (fan - talk - m) / N }
  }
  const plain = await side(false)
  const governed = await side(true)
  const rows = [
    ['', 'plain', 'middleware', 'ratio'],
    ['talk ms/invoke', plain.talk, governed.talk],
    [`fan (${N} at once) ms/invoke`, plain.fan, governed.fan],
    [`chain (${N} steps) ms/invoke`, plain.chain, governed.chain],
    ['ms per model call', plain.model_ms, governed.model_ms],
    ['ms per tool call', plain.tool_ms, governed.tool_ms],
  ]
  for (const [label, a, b] of rows) {
    const cells = typeof a === 'number' ? [a.toFixed(2), b.toFixed(2), (b / a).toFixed(2)] : [a, b, 'middleware/plain']
    console.log(label.padEnd(28) + cells.map((c) => String(c).padStart(18)).join(''))
  }
  const addedModel = governed.model_ms - plain.model_ms
  const addedTool = governed.tool_ms - plain.tool_ms
  console.log(`added by the middleware: ${addedModel.toFixed(2)} ms per model call, ${addedTool.toFixed(2)} ms per tool call (median of ${ROUNDS} rounds x ${THREADS} threads)`)
  console.log(JSON.stringify({ rounds: ROUNDS, threads: THREADS, steps: N, plain, governed, added_model_ms: addedModel, added_tool_ms: addedTool }))
} finally {
  rmSync(root, { recursive: true, force: true })
}

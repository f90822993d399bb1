// The deepagents middleware's added cost, in one run: the same Deep Agents agent (same fake
// tool-calling model, same script) with `archmaxMiddleware` and without it.
//
// Two scripts, each run as one `invoke` per thread, ROUNDS rounds of THREADS threads:
// - talk: one model call answering text (the turn's fixed cost: session, prompt, commit);
// - work: STEPS model calls each making one `read_file` call, then a text answer.
// Per model call, the added cost is talk's difference; per tool call, work's difference
// less its model calls' share. The model answers at once, so the numbers are the two
// loops' own work. Sessions go to the memory store (the filesystem store's syncs would
// measure the disk). Prints a table and, last, one JSON line.
// Usage: node scripts/bench-deepagents.mjs   (ROUNDS=5 THREADS=20 STEPS=10)
// The addon is whatever `index.js` loads (a debug build unless NAPI_RS_NATIVE_LIBRARY_PATH
// names a release one).
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { performance } from 'node:perf_hooks'

import { BaseChatModel } from '@langchain/core/language_models/chat_models'
import { AIMessage } from '@langchain/core/messages'
import { MemorySaver } from '@langchain/langgraph'
import { createDeepAgent } from 'deepagents'

import { createMemorySessionStore } from '../main.js'
import { archmaxMiddleware } from '../deepagents.js'

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

/** A model that reads `notes.md` until its conversation holds `steps` tool results, then answers. */
class ScriptModel extends BaseChatModel {
  constructor(steps) {
    super({})
    this.steps = steps
  }
  _llmType() {
    return 'bench'
  }
  bindTools(tools) {
    return this.withConfig({ tools })
  }
  async _generate(messages) {
    const done = messages.filter((m) => m.getType() === 'tool').length
    const message =
      done < this.steps
        ? new AIMessage({ content: '', tool_calls: [{ id: `r${done}`, name: 'read_file', args: { file_path: '/notes.md' }, type: 'tool_call' }] })
        : new AIMessage({ content: 'done' })
    return { generations: [{ text: '', message }] }
  }
}

/** One agent, governed or not, for `steps` tool calls per invoke. */
function agentFor(governed, steps, root) {
  const middleware = governed
    ? archmaxMiddleware({ workflow: 'bench', workspace: { rootDir: root, sessionStore: createMemorySessionStore() } })
    : null
  const agent = createDeepAgent({ model: new ScriptModel(steps), middleware: middleware ? [middleware] : [], checkpointer: new MemorySaver() })
  return { agent, middleware }
}

/** Mean ms per invoke over ROUNDS rounds of THREADS invokes (one thread each, in turn). */
async function measure(governed, steps, root) {
  const { agent, middleware } = agentFor(governed, steps, root)
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
  const talk = { plain: await measure(false, 0, root), governed: await measure(true, 0, root) }
  const work = { plain: await measure(false, STEPS, root), governed: await measure(true, STEPS, root) }
  const perModel = talk.governed - talk.plain
  const perTool = (work.governed - work.plain - (STEPS + 1) * perModel) / STEPS
  const rows = [
    ['script', 'plain ms/invoke', 'middleware ms/invoke', 'ratio'],
    ['talk (1 model call)', talk.plain, talk.governed, talk.governed / talk.plain],
    [`work (${STEPS + 1} model, ${STEPS} tool calls)`, work.plain, work.governed, work.governed / work.plain],
  ]
  for (const r of rows) console.log(r.map((c) => (typeof c === 'number' ? c.toFixed(2) : c).padStart(24)).join(''))
  console.log(`added per model call: ${perModel.toFixed(2)} ms; added per tool call: ${perTool.toFixed(2)} ms (median of ${ROUNDS} rounds x ${THREADS} threads)`)
  console.log(JSON.stringify({ rounds: ROUNDS, threads: THREADS, steps: STEPS, talk, work, added_model_ms: perModel, added_tool_ms: perTool }))
} finally {
  rmSync(root, { recursive: true, force: true })
}

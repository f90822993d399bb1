// The host's event loop stays free while a session's script runs: a hook or an
// archmax_eval that spins runs on a thread of its own, so the host's timers keep firing
// and another session completes a whole turn meanwhile.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readdirSync, readFileSync } from 'node:fs'

import { createAgent, createMemorySessionStore } from '@archmax-ai/harness'
import { advance, call, mapStore, ONE_STATE_SPEC, ROOT, say, workspace } from './helpers.mjs'

const SPEC = `title: Spinning
instructions: A test workflow.
mounts:
  allow_always: []
settings:
  timeoutMs: 5000
states:
  work:
    triggers: { manual: }
    instructions: Work, then move on.
    transitions:
      - to: done
    after:
      script: hooks/spin.js
  done:
    instructions: Say goodbye.
`
// Spins for SPIN ms of the sandbox's clock, then lets the move through.
const SPIN = 1500
const HOOK = `export default async () => { const t = Date.now(); while (Date.now() - t < ${SPIN}) {} return { verdict: 'ok', reason: 'spun' } }`

/** Runs `slow` (a session whose script spins) beside `quick` (a plain one-answer session), with a host timer ticking. */
async function beside(slowAnswers) {
  const root = workspace({ 'workflows/spin/workflow.yaml': SPEC, 'workflows/spin/hooks/spin.js': HOOK })
  const answers = { slow: [...slowAnswers], quick: [say('Hello back.')] }
  const agent = await createAgent({
    workflow: 'spin',
    workspace: { rootDir: root },
    // The session a request belongs to is in its first user message.
    model: async (request) => answers[request.messages.find((m) => m.role === 'user').content].shift(),
    onEvent: () => {},
  })
  const finished = []
  let last = performance.now()
  let longest = 0
  const timer = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
  }, 5)
  try {
    const slow = agent.workflow.send('s-slow', { message: 'slow' }).then((o) => (finished.push('slow'), o))
    // Let the slow session reach its script before the quick one starts.
    await new Promise((r) => setTimeout(r, 100))
    const quick = agent.workflow.send('s-quick', { message: 'quick' }).then((o) => (finished.push('quick'), o))
    const [s, q] = await Promise.all([slow, quick])
    return { slow: s, quick: q, finished, longest }
  } finally {
    clearInterval(timer)
    agent.dispose()
  }
}

test('a spinning hook holds neither the host timers nor another session', async () => {
  const { slow, quick, finished, longest } = await beside([advance('done', 'worked'), say('Goodbye.')])
  assert.equal(slow.state, 'done', JSON.stringify(slow.exit))
  assert.equal(quick.reply, 'Hello back.')
  assert.deepEqual(finished, ['quick', 'slow'], 'the quick session finished while the hook spun')
  // The hook spun for 1.5 s; a loop held by it would have stalled that long.
  assert.ok(longest < SPIN / 3, `the host's event loop stalled for ${Math.round(longest)} ms`)
})

test('an archmax_eval that spins holds neither the host timers nor another session', async () => {
  const code = `const t = Date.now(); while (Date.now() - t < ${SPIN}) {} 'spun'`
  const { slow, quick, finished, longest } = await beside([
    { role: 'assistant', content: null, tool_calls: [call('archmax_eval', { code }, 'e1')] },
    say('Computed.'),
  ])
  assert.equal(slow.reply, 'Computed.')
  assert.equal(slow.messages.find((m) => m.role === 'tool')?.content, '→ spun')
  assert.equal(quick.reply, 'Hello back.')
  assert.deepEqual(finished, ['quick', 'slow'])
  assert.ok(longest < SPIN / 3, `the host's event loop stalled for ${Math.round(longest)} ms`)
})

// The harness's own threads (the spinning script's, the blocking pool's, the commit
// thread) run as background work for the OS scheduler (SCHED_BATCH, Linux): waking them
// never preempts Node's main thread, which must keep the default policy; those waiting on
// the disk also run at nice 10.
const linux = process.platform === 'linux'
test('the harness threads are background work for the scheduler; the JS thread is not', { skip: !linux && 'SCHED_BATCH is Linux only' }, async () => {
  const root = workspace({ 'workflows/spin/workflow.yaml': SPEC, 'workflows/spin/hooks/spin.js': HOOK })
  const answers = [advance('done', 'worked'), say('Goodbye.')]
  const agent = await createAgent({ workflow: 'spin', workspace: { rootDir: root }, model: async () => answers.shift() })
  const threads = () =>
    readdirSync(`/proc/${process.pid}/task`).flatMap((tid) => {
      let stat
      try {
        stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8')
      } catch (e) {
        // A thread that ended between the listing and this read is not one to look at.
        if (e.code === 'ENOENT' || e.code === 'ESRCH') return []
        throw e
      }
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      // Fields 14-15 (CPU time), 19 (nice) and 41 (the scheduling policy: 0 normal, 3 batch).
      return [{ tid: Number(tid), name: stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')), cpu: Number(f[11]) + Number(f[12]), nice: Number(f[16]), policy: Number(f[38]) }]
    })
  try {
    const before = new Map(threads().map((t) => [t.tid, t.cpu]))
    const slow = agent.workflow.send('b1', { message: 'slow' })
    // Halfway through the hook's spin, the thread that gained the most CPU is the script's.
    await new Promise((r) => setTimeout(r, SPIN / 2))
    const now = threads()
    const spinner = now.filter((t) => t.tid !== process.pid).sort((a, b) => b.cpu - (before.get(b.tid) ?? 0) - (a.cpu - (before.get(a.tid) ?? 0)))[0]
    assert.equal((await slow).state, 'done')
    const main = now.find((t) => t.tid === process.pid)
    assert.deepEqual([main.policy, main.nice], [0, 0], "Node's main thread keeps the default policy and priority")
    // A script keeps its full share of a busy CPU: its time limit is wall-clock time.
    assert.deepEqual([spinner.policy, spinner.nice], [3, 0], `the spinning thread (${spinner.name}) is SCHED_BATCH at nice 0`)
    // The threads that wait on the disk also take a smaller share of a busy CPU.
    const ours = threads().filter((t) => /^archmax-(io-\d+|commits)$/.test(t.name))
    assert.ok(ours.some((t) => t.name === 'archmax-commits') && ours.length > 1, ours.map((t) => t.name).join(', '))
    for (const t of ours) assert.deepEqual([t.policy, t.nice], [3, 10], `${t.name} is SCHED_BATCH at nice 10`)
  } finally {
    agent.dispose()
  }
})

// More sessions than the commit threads (64) at once: a session waiting for a commit
// thread is woken by another session's turn releasing one, on the same (JS) thread. That
// wake-up must reach the waiting session's drive loop, or it never finishes.
test('a hundred concurrent sessions over the filesystem store all complete', { timeout: 60_000 }, async () => {
  const root = workspace({ 'workflows/notes/workflow.yaml': ONE_STATE_SPEC })
  const agent = await createAgent({
    workflow: 'notes',
    workspace: { rootDir: root },
    model: async (request) => {
      await new Promise((r) => setTimeout(r, Math.random() * 5))
      const step = request.messages.filter((m) => m.role === 'assistant').length
      return step < 3 ? { role: 'assistant', content: null, tool_calls: [call('write_file', { file_path: `scratchpad/n${step}.md`, content: 'n' }, `c${step}`)] } : say('Done.')
    },
  })
  try {
    const outcomes = await Promise.all(Array.from({ length: 100 }, (_, i) => agent.workflow.send(`n${i}`, { message: 'Write them.' })))
    assert.deepEqual(new Set(outcomes.map((o) => `${o.kind}:${o.reply}`)), new Set(['completed:Done.']))
  } finally {
    agent.dispose()
  }
})

// The filesystem store's commits complete on its commit thread, which answers a batch of
// them at once, from outside the JS thread: each answer must wake its own session's drive
// loop, listening or not, however many land together. Every session's steps are then in
// its transcript, in order.
for (const listening of [false, true]) {
  test(`three hundred sessions committing at once over the filesystem store all complete (onEvent ${listening ? 'on' : 'off'})`, { timeout: 60_000 }, async () => {
    const root = workspace({ 'workflows/notes/workflow.yaml': ONE_STATE_SPEC })
    const events = []
    const agent = await createAgent({
      workflow: 'notes',
      workspace: { rootDir: root },
      model: async (request) => {
        const step = request.messages.filter((m) => m.role === 'assistant').length
        return step < 4 ? { role: 'assistant', content: null, tool_calls: [call('archmax_get_variables', {}, `c${step}`)] } : say('Done.')
      },
      ...(listening ? { onEvent: (e) => events.push(e.type) } : {}),
    })
    try {
      const ids = Array.from({ length: 300 }, (_, i) => `q${i}`)
      const outcomes = await Promise.all(ids.map((id) => agent.workflow.send(id, { message: 'Go.' })))
      assert.deepEqual(new Set(outcomes.map((o) => `${o.kind}:${o.reply}`)), new Set(['completed:Done.']))
      for (const id of [ids[0], ids[150], ids[299]]) {
        const messages = await agent.sessions.messages(id)
        assert.deepEqual(messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id), ['c0', 'c1', 'c2', 'c3'])
      }
      if (listening) assert.equal(events.filter((t) => t === 'tool-result').length, 300 * 4)
    } finally {
      agent.dispose()
    }
  })
}

// The two pollers of a JS-driven turn hand it over many times a turn: the JS thread polls it
// after a model answer, a tokio worker after a file tool (the blocking pool), a hook or a
// commit. Answers that come at once (a resolved promise), a tick later or a timer later land
// while the other side may be polling it; each hand-over must leave exactly one poller, so
// every session ends (a lost wake-up leaves one waiting for ever) with its steps in order.
for (const listening of [false, true]) {
  test(`turns handed between the JS thread and the workers at every timing all complete (onEvent ${listening ? 'on' : 'off'})`, { timeout: 60_000 }, async () => {
    const SPEC = `title: Mixed
instructions: A test workflow.
mounts:
  allow_always: []
states:
  work:
    triggers: { manual: }
    instructions: Work.
    transitions:
      - to: done
    after:
      script: hooks/check.js
  done:
    instructions: Say goodbye.
`
    // Two file reads through tools.*, one after the other (their events then have one order),
    // each a round trip through the blocking pool.
    const HOOK = `export default async ({ tools }) => { const a = await tools.readFile({ file_path: 'scratchpad/n0.md' }); const b = await tools.readFile({ file_path: 'scratchpad/n1.md' }); return { verdict: a.includes('n') && b.includes('n') ? 'ok' : 'veto', reason: 'read' } }`
    const root = workspace({ 'workflows/mixed/workflow.yaml': SPEC, 'workflows/mixed/hooks/check.js': HOOK })
    const timings = [
      () => undefined,
      () => new Promise((r) => setImmediate(r)),
      () => new Promise((r) => setTimeout(r, 1)),
      () => Promise.resolve(),
    ]
    const STEPS = 6
    const events = []
    const agent = await createAgent({
      workflow: 'mixed',
      workspace: { rootDir: root },
      model: async (request) => {
        const step = request.messages.filter((m) => m.role === 'assistant').length
        const id = Number(request.messages.find((m) => m.role === 'user').content)
        await timings[(id + step) % timings.length]()
        if (step < STEPS) {
          const c = step % 3 === 2 ? call('archmax_get_variables', {}, `c${step}`) : call('write_file', { file_path: `scratchpad/n${step}.md`, content: 'n' }, `c${step}`)
          return { role: 'assistant', content: null, tool_calls: [c] }
        }
        if (step === STEPS) return advance('done', 'written')
        return say('Done.')
      },
      ...(listening ? { onEvent: (e) => events.push(e) } : {}),
    })
    try {
      const ids = Array.from({ length: 120 }, (_, i) => String(i))
      const outcomes = await Promise.all(ids.map((id) => agent.workflow.send(`m${id}`, { message: id })))
      assert.deepEqual(new Set(outcomes.map((o) => `${o.state}:${o.reply}`)), new Set(['done:Done.']))
      for (const id of ['0', '61', '119']) {
        const messages = await agent.sessions.messages(`m${id}`)
        assert.deepEqual(
          messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id),
          [...Array.from({ length: STEPS }, (_, i) => `c${i}`), 'call_archmax_advance'],
        )
      }
      if (listening) {
        // Every session saw the same events in the same order, whatever polled it when.
        const types = (id) => events.filter((e) => e.sessionId === `m${id}` && e.type !== 'model-usage').map((e) => e.type)
        const first = types('0')
        // Into `work`, then the move past the hook; the model's tool calls and the hook's reads.
        assert.equal(first.filter((t) => t === 'advance').length, 2, first.join())
        assert.equal(first.filter((t) => t === 'tool-result').length, STEPS + 1 + 2, first.join())
        assert.ok(first.includes('hook-verdict'), first.join())
        for (const id of ids) assert.deepEqual(types(id), first, `session m${id}`)
      }
    } finally {
      agent.dispose()
    }
  })
}

// Many turns polled on the JS thread at once share it in slices: two hundred sessions whose
// model answers at once (each step's harness work runs in its turn's poll) leave the host's
// timers ticking between slices, instead of running every poll in one go.
// A host store's turns run on tokio workers and reach this thread through threadsafe calls
// (the store's methods, the model), which Node dispatches up to a thousand in a row: each
// waits for a slice too (`sliced` in slices.js).
for (const [label, store] of [['the memory store', () => createMemorySessionStore()], ['a host store', () => mapStore().store]]) {
test(`two hundred sessions answering at once leave the host timers ticking (${label})`, { timeout: 60_000 }, async () => {
  const root = workspace({ 'workflows/chat/workflow.yaml': ONE_STATE_SPEC })
  const agent = await createAgent({
    workflow: 'chat',
    workspace: { rootDir: root, sessionStore: store() },
    model: async (request) => {
      const step = request.messages.filter((m) => m.role === 'assistant').length
      return step < 20 ? { role: 'assistant', content: null, tool_calls: [call('archmax_get_variables', {}, `c${step}`)] } : say('Done.')
    },
  })
  let last = performance.now()
  let longest = 0
  const timer = setInterval(() => {
    const now = performance.now()
    longest = Math.max(longest, now - last)
    last = now
  }, 1)
  try {
    const started = performance.now()
    const outcomes = await Promise.all(Array.from({ length: 200 }, (_, i) => agent.workflow.send(`c${i}`, { message: 'Hi.' })))
    const ended = performance.now()
    const took = ended - started
    // The gap still open when the run ended counts too (a loop held throughout never ticks).
    longest = Math.max(longest, ended - last)
    assert.deepEqual(new Set(outcomes.map((o) => o.reply)), new Set(['Done.']))
    // 4 200 polls in all; a loop held by them for the whole run shows one gap as long as the run.
    assert.ok(longest < Math.max(100, took / 4), `the host's event loop stalled for ${Math.round(longest)} ms of a ${Math.round(took)} ms run`)
  } finally {
    clearInterval(timer)
    agent.dispose()
  }
})
}

// A host store's load and commit are answered on this thread, later: the turns await them,
// and no thread blocks on one. When each call blocked the worker that made it, tokio started
// another thread to take the worker's place, for every session waiting at once (hundreds
// here, each a stack and a context switch on the way to the answer).
test('a host store\'s calls hold no thread while the host answers them', { skip: !linux && 'threads are counted in /proc (Linux)', timeout: 60_000 }, async () => {
  const root = workspace({ 'workflows/chat/workflow.yaml': ONE_STATE_SPEC })
  const { store, commits } = mapStore({ async: true })
  const agent = await createAgent({
    workflow: 'chat',
    workspace: { rootDir: root, sessionStore: store },
    model: async (request) => {
      await new Promise((r) => setTimeout(r, 5))
      const step = request.messages.filter((m) => m.role === 'assistant').length
      return step < 3 ? { role: 'assistant', content: null, tool_calls: [call('archmax_get_variables', {}, `c${step}`)] } : say('Done.')
    },
  })
  const threads = () => readdirSync(`/proc/${process.pid}/task`).length
  try {
    // One session first: whatever starts once per process (the runtime's workers) has started.
    assert.equal((await agent.workflow.send('warm', { message: 'Hi.' })).reply, 'Done.')
    const before = threads()
    let most = before
    const sampler = setInterval(() => (most = Math.max(most, threads())), 1)
    const outcomes = await Promise.all(Array.from({ length: 300 }, (_, i) => agent.workflow.send(`h${i}`, { message: 'Hi.' })))
    clearInterval(sampler)
    assert.deepEqual(new Set(outcomes.map((o) => o.reply)), new Set(['Done.']))
    // Every session loaded and committed through the host (five commits each: the message,
    // three steps, the answer), so every one of its calls was waited for.
    assert.equal(commits.filter((c) => c.id.startsWith('h')).length, 300 * 5)
    assert.ok(most - before < 20, `${most - before} threads were started while 300 sessions waited on the host store (${before} before)`)
  } finally {
    agent.dispose()
  }
})

// The wake function a turn holds keeps Node running only while the turn runs: a script
// whose turn waited on the blocking pool (filesystem commits, file tools) exits on its own
// once the turn is done, without dispose.
test('Node exits by itself after a turn that waited on the blocking pool', { timeout: 60_000 }, async () => {
  const { spawn } = await import('node:child_process')
  const root = workspace({ 'workflows/notes/workflow.yaml': ONE_STATE_SPEC })
  const script = `
    import { createAgent } from '@archmax-ai/harness'
    const answers = [
      { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'write_file', arguments: JSON.stringify({ file_path: 'scratchpad/a.md', content: 'a' }) } }] },
      { role: 'assistant', content: 'Done.' },
    ]
    const agent = await createAgent({ workflow: 'notes', workspace: { rootDir: ${JSON.stringify(root)} }, model: async () => answers.shift() })
    const out = await agent.workflow.send('x1', { message: 'Write it.' })
    console.log(out.reply)
  `
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { cwd: ROOT })
  let out = ''
  child.stdout.on('data', (d) => (out += d))
  const code = await new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL')
      resolve('still running after 20 s')
    }, 20_000)
    child.on('exit', (c) => {
      clearTimeout(timer)
      resolve(c)
    })
  })
  assert.equal(code, 0)
  assert.equal(out.trim(), 'Done.')
})

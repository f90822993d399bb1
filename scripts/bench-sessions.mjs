// The half of `scripts/bench-sessions.sh` that runs in Node: SESSIONS concurrent sessions
// (default 1 000) through one `createAgent`, each a turn of CALLS model calls (default 6)
// answered by a JS model function after LATENCY ms (default 100), for one store (argv[2]:
// filesystem, memory or host) and one workload (argv[3]):
// - `calls` (the default, issue 12's benchmark, the same for every store): five steps that
//   each call one tool touching no file (`archmax_get_variables`), then a text answer: what
//   a store costs, its commits;
// - `files` (the stores that hold files: filesystem, memory): the five steps each write a
//   scratchpad note (`write_file`) instead: what a file tool adds.
//
// Prints, as ratios against named baselines measured or fixed in this run:
// - wall / floor: the whole run over the latency floor (CALLS × LATENCY: what the sessions
//   would take if the harness cost nothing and every session ran at once);
// - the longest event-loop stall: the largest gap between two ticks of a 1 ms setInterval
//   beyond its period, while the sessions run;
// - memory per session: the process's RSS growth over the run, divided by SESSIONS.
// With BENCH_DEBUG set, also (on stderr) how long issuing the sends took, when the longest stall
// began, the CPU time of the whole process and of each kind of thread over the run (Linux) and, for each k, when the sessions' k-th model requests arrived (first, median, p90,
// last): where the wall goes.
// Last line: one JSON object with the figures. Floors (issue 12): wall ≤ 1.5 × floor with the
// filesystem store (workload `calls`), longest stall < 50 ms (every run); the .sh exits
// non-zero when one is missed.
import { mkdtempSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createAgent, createMemorySessionStore } from '../js/main.js'
import { mapStore, ONE_STATE_SPEC } from '../__test__/helpers.mjs'

const store = process.argv[2] ?? 'filesystem'
const workload = process.argv[3] ?? 'calls'
if (!['calls', 'files'].includes(workload) || (workload === 'files' && store === 'host')) {
  console.error(`unknown workload '${workload}' for the ${store} store (calls, or files for filesystem and memory)`)
  process.exit(2)
}
const SESSIONS = Number(process.env.SESSIONS ?? 1000)
const CALLS = Number(process.env.CALLS ?? 6)
const LATENCY = Number(process.env.LATENCY ?? 100)

const root = mkdtempSync(join(tmpdir(), 'archmax-bench-sessions-'))
mkdirSync(join(root, 'workflows/notes'), { recursive: true })
writeFileSync(join(root, 'workflows/notes/workflow.yaml'), ONE_STATE_SPEC)
const sessionStore = store === 'memory' ? createMemorySessionStore() : store === 'host' ? mapStore().store : undefined
const toolCall = (n) =>
  workload === 'files'
    ? { id: `c${n}`, type: 'function', function: { name: 'write_file', arguments: JSON.stringify({ file_path: `scratchpad/n${n}.md`, content: `note ${n}` }) } }
    : { id: `c${n}`, type: 'function', function: { name: 'archmax_get_variables', arguments: '{}' } }

// BENCH_DEBUG: when each session's k-th model request arrived (ms after the sends), per k.
const arrivals = process.env.BENCH_DEBUG ? Array.from({ length: CALLS }, () => []) : null
let t0 = 0
const agent = await createAgent({
  workflow: 'notes',
  workspace: { rootDir: root, ...(sessionStore ? { sessionStore } : {}) },
  model: async (request) => {
    const step = request.messages.filter((m) => m.role === 'assistant').length
    if (arrivals) arrivals[step].push(performance.now() - t0)
    await new Promise((r) => setTimeout(r, LATENCY))
    return step < CALLS - 1 ? { role: 'assistant', content: null, tool_calls: [toolCall(step)] } : { role: 'assistant', content: 'Done.' }
  },
})

global.gc?.()
const rss0 = process.memoryUsage().rss
let last = performance.now()
let stall = 0
let stallAt = 0
const timer = setInterval(() => {
  const now = performance.now()
  if (now - last - 1 > stall) [stall, stallAt] = [now - last - 1, last - t0]
  last = now
}, 1)
// CPU time (user + system, ms) of each of the process's threads from /proc (Linux), by
// thread name (numbered names folded: `archmax-io-3` counts as `archmax-io-*`); `js` is
// the JS thread, whose id is the pid.
const threadCpu = () => {
  const byName = {}
  try {
    for (const tid of readdirSync(`/proc/${process.pid}/task`)) {
      const stat = readFileSync(`/proc/${process.pid}/task/${tid}/stat`, 'utf8')
      const name = Number(tid) === process.pid ? 'js' : stat.slice(stat.indexOf('(') + 1, stat.lastIndexOf(')')).replace(/\d+$/, '*')
      const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
      byName[name] = (byName[name] ?? 0) + ((Number(f[11]) + Number(f[12])) * 1000) / 100
    }
  } catch {
    // Not Linux: no figures.
  }
  return byName
}
const [threads0, cpu0] = [threadCpu(), process.cpuUsage()]
t0 = performance.now()
const sends = Array.from({ length: SESSIONS }, (_, i) => agent.workflow.send(`s${i}`, { message: "Write them." }))
if (process.env.BENCH_DEBUG) console.error(`issuing the sends took ${(performance.now() - t0).toFixed(1)} ms`)
const outcomes = await Promise.all(sends)
const wall = performance.now() - t0
clearInterval(timer)
if (process.env.BENCH_DEBUG) {
  const cpu = process.cpuUsage(cpu0)
  console.error(`the longest stall began ${stallAt.toFixed(0)} ms after the sends began`)
  const threads = Object.entries(threadCpu())
    .map(([name, ms]) => [name, ms - (threads0[name] ?? 0)])
    .filter(([, ms]) => ms > 0)
    .sort((a, b) => b[1] - a[1])
  console.error(`CPU over the run: whole process ${((cpu.user + cpu.system) / 1000).toFixed(0)} ms; ${threads.map(([n, ms]) => `${n} ${ms.toFixed(0)}`).join(', ')}`)
}
for (const [k, at] of (arrivals ?? []).entries()) {
  at.sort((a, b) => a - b)
  const q = (f) => at[Math.min(at.length - 1, Math.floor(at.length * f))].toFixed(0)
  console.error(`request ${k + 1}: first ${q(0)} ms, median ${q(0.5)}, p90 ${q(0.9)}, last ${q(1)}`)
}
const rss1 = process.memoryUsage().rss
agent.dispose()
// BENCH_KEEP (scripts/bench-sessions.sh): the caller removes the sessions once every run is done.
if (!process.env.BENCH_KEEP) rmSync(root, { recursive: true, force: true })

const bad = outcomes.filter((o) => o.kind !== 'completed' || o.reply !== 'Done.')
if (bad.length) {
  console.error(`${bad.length} sessions did not complete: ${JSON.stringify(bad[0]).slice(0, 400)}`)
  process.exit(1)
}
const floor = CALLS * LATENCY
const perSession = (rss1 - rss0) / SESSIONS
console.log(
  `${`${store}${workload === 'files' ? ' + files' : ''}`.padEnd(18)} ${SESSIONS} sessions × ${CALLS} calls @ ${LATENCY} ms: wall ${wall.toFixed(0)} ms = ${(wall / floor).toFixed(2)}× the ${floor} ms floor; ` +
    `longest event-loop stall ${stall.toFixed(1)} ms; ${(perSession / 1024).toFixed(1)} KiB RSS per session`,
)
console.log(JSON.stringify({ store, workload, sessions: SESSIONS, calls: CALLS, latency_ms: LATENCY, wall_ms: wall, floor_ms: floor, ratio: wall / floor, stall_ms: stall, rss_per_session_bytes: perSession }))

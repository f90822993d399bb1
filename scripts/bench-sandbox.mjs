// The Node baseline for `crates/sandbox/benches/hook.rs`: the same lifecycle hook run the
// way the original (TypeScript) harness runs it, in `@langchain/quickjs` (QuickJS-ng
// compiled to WASM, asyncify build), so `scripts/bench-sandbox.sh` can print ratios.
//
// Per hook run, as the original's script executor does it (spec: sandbox-hooks-cases §1.3,
// §1.4, §2.2, §2.3), all of it timed:
//   1. prepare the source host-side: blank the `@archmax-ai/harness` import (newlines kept),
//      rewrite `export default` to `globalThis.__hookDef = `, `transformForEval` it;
//   2. build one script: the lifecycle prelude (`__SANDBOX_VERSION`, `ok`/`veto`/`correct`,
//      `__isVerdict`, `SANDBOX_CONTRACT`, `defineHook`, `__hookShape`, `__hookVerdict`),
//      `__hookDef = undefined`, `args = <JSON of the input>`, `__scriptPath`,
//      `__hookBody = await <prepared>`, then
//      `__hookVerdict(typeof __hookDef === "function" ? await __hookDef({...args, tools}) : __hookBody)`;
//   3. `session.eval(script, 15000)` (which runs `transformForEval` on it again, evaluates
//      it and pumps jobs until the promise settles), then check `{ verdict: "ok" }`.
// Sessions get the original's quotas (64 MiB, 320 KiB stack, 256 tool calls, 4000 chars)
// and two stub tools (`read_file`, `ls`, answering "[]"), like the Rust bench's bridge.
//
// Cases (same warm-up/sample counts as hook.rs; `--quick` divides them the same way):
//   fresh  — `ReplSession.getOrCreate(<new id>, opts)` + one hook run + `dispose()`:
//            a new QuickJS runtime and context (console and tools installed) each time.
//            The process-wide WASM module is compiled once, before (reported as `cold`).
//   reused — one hook run on one warm session.
//   tool   — a hook awaiting one `tools.ls` call, on the warm session.
//
// Prints one line per case and, last, one JSON line:
//   { fresh_mean_us, fresh_p50_us, reused_mean_us, reused_p50_us, tool_mean_us, tool_p50_us, cold_us }
// Usage: node scripts/bench-sandbox.mjs [--quick]
// `@langchain/quickjs` is not a dependency of this repo: it is loaded from
// $BENCH_NODE_DIR (default ~/.cache/archmax-bench-node), where bench-sandbox.sh installs it.
import { existsSync, readFileSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const WANT = "0.6.4";
const quick = process.argv.includes("--quick");
const dir = process.env.BENCH_NODE_DIR || join(homedir(), ".cache", "archmax-bench-node");
const pkgDir = join(dir, "node_modules", "@langchain", "quickjs");
if (!existsSync(join(pkgDir, "package.json"))) {
  console.error(`@langchain/quickjs is not installed in ${dir}; run scripts/bench-sandbox.sh, or:\n` +
    `  npm install --no-save --prefix "${dir}" @langchain/quickjs@${WANT}`);
  process.exit(2);
}
const pkg = JSON.parse(readFileSync(join(pkgDir, "package.json"), "utf8"));
if (pkg.version !== WANT) console.error(`note: @langchain/quickjs ${pkg.version} (the bench expects ${WANT})`);
const { ReplSession, transformForEval } = await import(pathToFileURL(join(pkgDir, pkg.exports["."].import.default)).href);

// ---- the hooks and the input (keep in step with crates/sandbox/benches/hook.rs) -------
const HOOK = "import { ok, veto } from '@archmax-ai/harness/sandbox';\n\nexport default async function check({ variables, messages, tools }) {\n  const orders = variables.orders ?? [];\n  if (!messages.some((m) => m.role === 'assistant')) return veto('no reply yet');\n  return orders.length > 0 ? ok() : veto('no orders');\n}\n";
const TOOL_HOOK = "export default async ({ tools }) => JSON.parse(await tools.ls({ path: '.' })).length === 0";
// `HookInput::to_value()` of the Rust bench's input.
const INPUT = {
  state: "review",
  phase: "after",
  variables: { orders: [{ id: 1 }, { id: 2 }] },
  messages: [{ role: "user", text: "go" }, { role: "assistant", text: "done" }],
  from: "review",
  to: "done",
};
const TIMEOUT_MS = 15_000;
const stub = (name) => ({ name, invoke: async () => "[]" });
const OPTIONS = {
  memoryLimitBytes: 64 * 1024 * 1024,
  maxStackSizeBytes: 320 * 1024,
  maxPtcCalls: 256,
  maxResultChars: 4000,
  tools: [stub("read_file"), stub("ls")],
};

// ---- the original's executor, restated --------------------------------------------
const VERSION = 2;
const PRELUDE = `globalThis.__SANDBOX_VERSION = ${VERSION};
globalThis.__verdict = (verdict, fallback) => (reason) => ({ verdict, reason: reason === undefined || reason === null || String(reason).trim() === "" ? fallback : String(reason) });
globalThis.ok = __verdict("ok", "ok");
globalThis.veto = __verdict("veto", "vetoed by hook");
globalThis.correct = __verdict("correct", "correction requested");
globalThis.__isVerdict = (v) => v !== null && typeof v === "object" && !Array.isArray(v) && (v.verdict === "ok" || v.verdict === "veto" || v.verdict === "correct");
globalThis.SANDBOX_CONTRACT = { context: "lifecycle-hook", version: ${VERSION} };
globalThis.defineHook = (fn) => { globalThis.__hookDef = fn; return fn; };
globalThis.__hookShape = (v) => {
  if (Array.isArray(v)) return "an array";
  let keys;
  try { keys = Object.keys(v); } catch (e) { return "an object"; }
  if (keys.length === 0) return "an object with no keys";
  const q = (ks) => ks.map((k) => "'" + k + "'").join(", ");
  return keys.length <= 6 ? "an object with keys " + q(keys) : "an object with keys including " + q(keys.slice(0, 6));
};
globalThis.__hookVerdict = (v) => {
  if (__isVerdict(v)) return { verdict: v.verdict, reason: v.reason };
  if (v === false) return veto("precondition not met");
  if (v === null || typeof v !== "object") return ok();
  throw new Error("hook returned " + __hookShape(v) + ", which is not a verdict — return ok(), veto(reason), correct(reason), false, or nothing at all");
};
`;
const IMPORT = /^[ \t]*import\s+(?:[\w$*{}\s,]+?\s+from\s*)?(["'])([^"']+)\1[ \t]*;?/gm;
function prepare(source, path) {
  const stripped = source.replace(IMPORT, (stmt, _q, spec) => {
    if (spec === "@archmax-ai/harness" || spec.startsWith("@archmax-ai/harness/")) return stmt.replace(/[^\n]/g, "");
    throw new Error(`sandbox scripts may import only from '@archmax-ai/harness/*' type-carrier entry points; found 'import ... from "${spec}"' in ${path}.`);
  });
  return stripped.replace(/(^|\n)[ \t]*export[ \t]+default[ \t]+/g, "$1globalThis.__hookDef = ");
}
function hookScript(path, source, input) {
  return `${PRELUDE}globalThis.__hookDef = undefined;
globalThis.args = ${JSON.stringify(input)};
globalThis.__scriptPath = ${JSON.stringify(path)};
globalThis.__hookBody = await ${transformForEval(prepare(source, path))};
__hookVerdict(typeof __hookDef === "function" ? await __hookDef({ ...args, tools }) : __hookBody)`;
}
async function runHook(session, path, source, input) {
  const r = await session.eval(hookScript(path, source, input), TIMEOUT_MS);
  if (!r.ok || r.value?.verdict !== "ok") throw new Error(`${path}: ${JSON.stringify(r)}`);
  return r.value;
}

// ---- timing -----------------------------------------------------------------------
const plan = (warmup, measured) => (quick ? { warmup: Math.floor(warmup / 4), measured: Math.floor(measured / 5) } : { warmup, measured });
const fmt = (us) => (us >= 1000 ? `${(us / 1000).toFixed(3)}ms` : `${us.toFixed(3)}µs`);
function report(label, samples) {
  samples.sort((a, b) => a - b);
  const n = samples.length;
  const pct = (p) => samples[Math.min(Math.floor((n * p) / 100), n - 1)];
  const mean = samples.reduce((a, b) => a + b, 0) / n;
  console.log(`${label.padEnd(34)} n=${String(n).padEnd(6)} mean=${fmt(mean).padStart(9)} p50=${fmt(pct(50)).padStart(9)} p90=${fmt(pct(90)).padStart(9)} p99=${fmt(pct(99)).padStart(9)}`);
  return { mean, p50: pct(50) };
}
const now = () => process.hrtime.bigint();
const us = (t0) => Number(now() - t0) / 1000;
async function measure({ warmup, measured }, once) {
  const samples = [];
  for (let i = 0; i < warmup + measured; i++) {
    const t0 = now();
    await once(i);
    const took = us(t0);
    if (i >= warmup) samples.push(took);
  }
  return samples;
}

let seq = 0;
const newSession = () => ReplSession.getOrCreate(`bench-${process.pid}-${seq++}:process`, OPTIONS);

// The first session in the process also compiles the WASM module (once per process).
let t0 = now();
const first = newSession();
await runHook(first, "hooks/check.js", HOOK, INPUT);
first.dispose();
const cold = us(t0);
console.log(`${"hook run, first session (cold)".padEnd(34)} ${fmt(cold)}`);

const fresh = report("hook run, fresh session", await measure(plan(200, 1_000), async () => {
  const s = newSession();
  await runHook(s, "hooks/check.js", HOOK, INPUT);
  s.dispose();
}));

const warm = newSession();
const reused = report("hook run, reused session", await measure(plan(1_000, 10_000), () =>
  runHook(warm, "hooks/check.js", HOOK, INPUT)));
const tool = report("hook run + 1 tool call, reused", await measure(plan(500, 5_000), () =>
  runHook(warm, "hooks/tool.js", TOOL_HOOK, INPUT)));
warm.dispose();

const round = (v) => Math.round(v * 10) / 10;
console.log(JSON.stringify({
  fresh_mean_us: round(fresh.mean), fresh_p50_us: round(fresh.p50),
  reused_mean_us: round(reused.mean), reused_p50_us: round(reused.p50),
  tool_mean_us: round(tool.mean), tool_p50_us: round(tool.p50),
  cold_us: round(cold),
}));

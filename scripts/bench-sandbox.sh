#!/usr/bin/env bash
# One lifecycle-hook run in our QuickJS sandbox against the original's engine, in one run.
#
#   1. `cargo bench -p archmax-sandbox --bench hook` (plain timing; its last stdout line is
#      JSON). Rust, per run: `Sandbox::run_hook` strips the `@archmax-ai/harness` import,
#      rewrites the module to a re-runnable async script, re-installs the prelude globals
#      (`ok`/`veto`/…, `tools`, `args`) through `__archmax_setup`, evaluates the script,
#      calls the registered hook with the input plus `tools`, settles the promise and reads
#      the verdict. `fresh` also builds the Sandbox first (rquickjs runtime + context +
#      limits + prelude) and drops it after; `reused` runs on one long-lived Sandbox.
#   2. `node scripts/bench-sandbox.mjs` with `@langchain/quickjs` (the engine the original
#      TypeScript harness runs hooks in: QuickJS-ng as WASM). Node, per run, what the
#      original's executor does: the same import stripping and `export default` rewrite,
#      `transformForEval` of the hook, one script of lifecycle prelude + `args = <JSON>` +
#      `__hookBody = await <hook>` + `__hookVerdict(await __hookDef({...args, tools}))`, then
#      `session.eval(script, 15000)` (which transforms it again and pumps jobs until the
#      promise settles). `fresh` = `ReplSession.getOrCreate(<new id>, opts)` + that run +
#      `dispose()`; `reused` = that run on one warm session. The WASM module is compiled
#      once per process, before timing (printed as a note, not in the table).
#   3. one table: case, Rust mean / p50, Node mean / p50 (µs), ratio Node/Rust, floor check.
#
# Same hook source, same input object, same verdict (checked on every run), same
# warm-up/sample counts, two stub tools (`read_file`, `ls`, answering "[]") on both sides,
# 15 s / 64 MiB / 256 tool calls on both (stack: 1 MiB native vs the original's 320 KiB in
# WASM). `tool` (a hook awaiting one `tools.ls`) is shown for information, without a floor;
# on Node it includes ReplSession's 1 ms setTimeout poll while a host promise is pending.
# Floors (Rust p50): fresh under 3 ms, reused under 0.3 ms. Exits non-zero when one fails.
#
# `@langchain/quickjs` is not a dependency of this repo: on first use it is installed into
# ${BENCH_NODE_DIR:-~/.cache/archmax-bench-node} (outside the repo) with npm --no-save.
# QUICK=1 takes fewer samples on both sides.
set -euo pipefail
cd "$(dirname "$0")/.."

QJS_VERSION=0.6.4
export BENCH_NODE_DIR="${BENCH_NODE_DIR:-$HOME/.cache/archmax-bench-node}"
have=$(node -p "try { require('$BENCH_NODE_DIR/node_modules/@langchain/quickjs/package.json').version } catch { '' }")
if [ "$have" != "$QJS_VERSION" ]; then
  echo "installing @langchain/quickjs@$QJS_VERSION into $BENCH_NODE_DIR ..." >&2
  mkdir -p "$BENCH_NODE_DIR"
  npm install --no-save --no-audit --no-fund --loglevel=error --prefix "$BENCH_NODE_DIR" \
    "@langchain/quickjs@$QJS_VERSION" >/dev/null \
    || { echo "npm install of @langchain/quickjs@$QJS_VERSION into $BENCH_NODE_DIR failed" >&2; exit 2; }
fi

quick=()
[ -n "${QUICK:-}" ] && quick=(--quick)

rust_out=$(cargo bench -p archmax-sandbox --bench hook -- "${quick[@]}" 2>/dev/null) \
  || { echo "cargo bench failed; rerun: cargo bench -p archmax-sandbox --bench hook" >&2; exit 2; }
node_out=$(node scripts/bench-sandbox.mjs "${quick[@]}") \
  || { echo "node baseline failed; rerun: node scripts/bench-sandbox.mjs" >&2; exit 2; }

echo "rust: archmax-sandbox (rquickjs)"
sed '$d' <<<"$rust_out" | sed 's/^/  /'
echo "node: @langchain/quickjs $QJS_VERSION (QuickJS-ng WASM)"
sed '$d' <<<"$node_out" | sed 's/^/  /'
echo

node - "$(tail -n 1 <<<"$rust_out")" "$(tail -n 1 <<<"$node_out")" <<'JS'
const rust = JSON.parse(process.argv[2]);
const node = JSON.parse(process.argv[3]);
const floors = { fresh: 3000, reused: 300 }; // µs, on the Rust p50
const us = (v) => v.toFixed(1);
const rows = [["case", "rust µs mean / p50", "node µs mean / p50", "node/rust p50 (mean)", "floor (rust p50)"]];
let ok = true;
for (const id of ["fresh", "reused", "tool"]) {
  const r = { mean: rust[`${id}_mean_us`], p50: rust[`${id}_p50_us`] };
  const n = { mean: node[`${id}_mean_us`], p50: node[`${id}_p50_us`] };
  let floor = "-";
  if (floors[id] !== undefined) {
    const pass = r.p50 < floors[id];
    ok &&= pass;
    floor = `${pass ? "ok" : "FAIL"} (< ${floors[id] >= 1000 ? `${floors[id] / 1000} ms` : `${floors[id]} µs`})`;
  }
  rows.push([id, `${us(r.mean)} / ${us(r.p50)}`, `${us(n.mean)} / ${us(n.p50)}`,
    `${(n.p50 / r.p50).toFixed(1)}x (${(n.mean / r.mean).toFixed(1)}x)`, floor]);
}
const w = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
for (const row of rows) console.log(row.map((c, i) => (i === 0 || i === 4 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  ").trimEnd());
console.log(`note: node's first session also compiled the WASM module: ${(node.cold_us / 1000).toFixed(1)} ms (once per process, not in 'fresh')`);
if (!ok) console.log("FAIL: a Rust p50 is above its floor");
process.exit(ok ? 0 : 1);
JS

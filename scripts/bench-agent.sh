#!/usr/bin/env bash
# The cost of the JS boundary of `createAgent`, in one run: the same 200-tool-call-step
# turn (same workflow, same scripted replies, same store, a fresh workspace per round)
# driven twice, both release builds with the same allocator (mimalloc):
#
#   1. builds the release addon: `cargo build --release -p archmax-napi`, copied to
#      target/bench-agent/harness.node and loaded through NAPI_RS_NATIVE_LIBRARY_PATH
#      (the debug ./harness.*.node the tests use is left alone; nothing else is built
#      or regenerated);
#   2. `cargo bench -p archmax-bench --bench agent`: the turn driven by an in-process
#      Rust scripted model (no HTTP); it writes the workflow and the replies to a temp
#      fixture directory;
#   3. `node scripts/bench-agent.mjs <fixture>`: the same turn through `createAgent` with
#      a JS model function returning the same replies;
#   4. steps 2 and 3 alternate BLOCKS times (default 3) with ROUNDS rounds each (default 5),
#      so a slow spell of the machine falls on both sides; once for each store:
#      - `memory` (createMemorySessionStore / MemStore): the floor is checked here, since the
#        step is then the harness's work plus the boundary;
#      - `filesystem` (the default store): reported beside it. Every step ends in an fdatasync
#        (~150-250 µs on this VM's disk) that both sides pay alike; the thread comes back from
#        it with cold caches, which costs the side touching more memory (V8's) more, so this
#        difference is larger and much noisier than the boundary itself;
#   5. `Governance.decide` from JS on the example workflow, and unless KERNEL=0
#      `cargo bench -p archmax-bench --bench kernel` (short criterion run, output hidden)
#      for the same four decisions in Rust;
#   6. one table per store: per step (the median time between two model calls) and per
#      model call (the whole turn / 201 calls), Rust, JS, JS − Rust (the boundary) and
#      JS/Rust; the size of the whole request at calls 10 and 200 and what serializing
#      (Rust) and parsing (JS) it would cost: what the request deltas
#      (crates/machine/src/model/delta.rs) avoid, since only the new messages cross.
# Floor: the JS boundary (JS − Rust, median time per step, memory store) adds under 50 µs
# per model call. Exits non-zero when it does not.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/release-addon.sh
export ROUNDS="${ROUNDS:-5}"
blocks="${BLOCKS:-3}"

work=$(mktemp -d "${TMPDIR:-/tmp}/archmax-bench-agent.XXXXXX")
trap 'rm -rf "$work"' EXIT
fixture="$work/fixture"

for store in memory filesystem; do
  echo "== $store store"
  for ((b = 1; b <= blocks; b++)); do
    rust_out=$(BENCH_AGENT_STORE=$store BENCH_AGENT_FIXTURE="$fixture" cargo bench -p archmax-bench --bench agent 2>/dev/null) \
      || { echo "cargo bench failed; rerun: cargo bench -p archmax-bench --bench agent" >&2; exit 2; }
    echo "$rust_out" | sed '$d'
    echo "$rust_out" | tail -n 1 >>"$work/rust-$store.jsonl"
    js_out=$(BENCH_AGENT_STORE=$store node scripts/bench-agent.mjs "$fixture")
    echo "$js_out" | sed '$d'
    echo "$js_out" | tail -n 1 >>"$work/js-$store.jsonl"
  done
done

gov_out=$(node scripts/bench-agent.mjs "$fixture" --governance-only)
echo "$gov_out" | sed '$d'
echo "$gov_out" | tail -n 1 >"$work/governance.json"

if [ "${KERNEL:-1}" != 0 ]; then
  cargo bench -p archmax-bench --bench kernel -- \
    --warm-up-time 1 --measurement-time 2 >/dev/null 2>&1 \
    || { echo "cargo bench failed; rerun: cargo bench -p archmax-bench --bench kernel" >&2; exit 2; }
fi

echo
node - "$work" "${KERNEL:-1}" <<'JS'
const fs = require("node:fs");
const work = process.argv[2];
const kernel = process.argv[3] !== "0";
const FLOOR_US = 50;
const lines = (f) => fs.readFileSync(`${work}/${f}`, "utf8").trim().split("\n").map((l) => JSON.parse(l));
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const table = (rows) => {
  const w = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  ").trimEnd());
};
/** The blocks of one side pooled: every round's median gap and wall; the blocks' early/late medians. */
const pool = (blocks) => ({
  steps: blocks[0].steps,
  calls: blocks[0].calls,
  rounds: blocks.reduce((n, b) => n + b.rounds, 0),
  gap: median(blocks.flatMap((b) => b.gap_us)),
  wall: median(blocks.flatMap((b) => b.wall_us)),
  early: median(blocks.map((b) => b.gap_early_us)),
  late: median(blocks.map((b) => b.gap_late_us)),
  last: blocks[blocks.length - 1],
});
const row = (label, r, j) => [label, r.toFixed(1), j.toFixed(1), (j - r).toFixed(1), `${(j / r).toFixed(2)}x`];

let boundary = NaN;
for (const store of ["memory", "filesystem"]) {
  const rust = pool(lines(`rust-${store}.jsonl`));
  const js = pool(lines(`js-${store}.jsonl`));
  console.log(`${store} store: turn of ${rust.steps} tool-call steps + 1 answer (${rust.calls} model calls), release builds; medians of ${rust.rounds} rounds per side in alternating blocks`);
  table([
    ["", "rust µs", "js µs", "js − rust µs", "js/rust"],
    row("per step (between model calls)", rust.gap, js.gap),
    row("  steps 5-15", rust.early, js.early),
    row(`  steps ${rust.steps - 10}-${rust.steps}`, rust.late, js.late),
    row("per model call (turn / calls)", rust.wall, js.wall),
  ]);
  if (store === "memory") {
    boundary = js.gap - rust.gap;
    const r = rust.last, j = js.last;
    if (r.request_bytes && j.parse_us) {
      const parts = r.probe_calls.map((c, k) =>
        `call ${c}: ${(r.request_bytes[k] / 1024).toFixed(0)} KiB, serde_json::to_string ${r.serialize_us[k].toFixed(1)} µs + JSON.parse ${j.parse_us[k].toFixed(1)} µs`);
      console.log(`shipping the whole request as JSON text would cost (avoided: requests cross as deltas): ${parts.join("; ")}`);
    }
  }
  console.log();
}
const ok = boundary < FLOOR_US;
console.log(`JS boundary per model call (memory store): ${boundary.toFixed(1)} µs  ${ok ? "ok" : "FAIL"} (floor < ${FLOOR_US} µs)`);

const gov = JSON.parse(fs.readFileSync(`${work}/governance.json`, "utf8")).governance;
console.log();
const grows = [["Governance.decide", "rust ns", "js ns", "js − rust ns", "js/rust"]];
for (const [id, j] of Object.entries(gov)) {
  let r = NaN;
  try {
    if (kernel) r = JSON.parse(fs.readFileSync(`target/criterion/decide/${id}/new/estimates.json`, "utf8")).median.point_estimate;
  } catch {}
  grows.push([id, Number.isNaN(r) ? "-" : r.toFixed(1), j.toFixed(1), Number.isNaN(r) ? "-" : (j - r).toFixed(1), Number.isNaN(r) ? "-" : `${(j / r).toFixed(2)}x`]);
}
table(grows);
if (!ok) console.log("FAIL: the JS boundary is above its floor");
process.exit(ok ? 0 : 1);
JS

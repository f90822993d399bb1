#!/usr/bin/env bash
# The cost of the JS boundary of `createAgent`, in one run: the same 200-tool-call-step
# turn (same workflow, same scripted replies, the filesystem store, a fresh workspace
# per round) driven twice, both release builds:
#
#   1. builds the release addon: `cargo build --release -p archmax-napi`, copied to
#      target/bench-agent/harness.node and loaded through NAPI_RS_NATIVE_LIBRARY_PATH
#      (the debug ./harness.*.node the tests use is left alone; nothing else is built
#      or regenerated);
#   2. `cargo bench -p archmax-bench --bench agent`: the turn driven by an in-process
#      Rust scripted model (no HTTP); it writes the workflow and the replies to a temp
#      fixture directory;
#   3. `node scripts/bench-agent.mjs <fixture> --governance`: the same turn through
#      `createAgent` with a JS model function returning the same replies; then
#      `Governance.decide` from JS on the example workflow;
#   4. unless KERNEL=0, `cargo bench -p archmax-bench --bench kernel` (short criterion
#      run, output hidden) for the same four decisions in Rust;
#   5. one table: per step (the median time between two model calls) and per model
#      call (the whole turn / 201 calls), Rust, JS, JS − Rust (the boundary) and JS/Rust;
#      the size of the whole request at calls 10 and 200 and what serializing (Rust) and
#      parsing (JS) it would cost: what the request deltas (crates/machine/src/model/delta.rs)
#      avoid, since only the new messages cross.
# Floor: the JS boundary (JS − Rust, median time per step) adds under 50 µs per model
# call. Exits non-zero when it does not. ROUNDS (default 7) sets rounds per side.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build --release -p archmax-napi >/dev/null 2>&1 \
  || { echo "release build failed; rerun: cargo build --release -p archmax-napi" >&2; exit 2; }
case "$(uname -s)" in
  Darwin) lib=target/release/libarchmax_napi.dylib ;;
  MINGW* | MSYS* | CYGWIN*) lib=target/release/archmax_napi.dll ;;
  *) lib=target/release/libarchmax_napi.so ;;
esac
mkdir -p target/bench-agent
cp "$lib" target/bench-agent/harness.node
export NAPI_RS_NATIVE_LIBRARY_PATH="$PWD/target/bench-agent/harness.node"

fixture=$(mktemp -d "${TMPDIR:-/tmp}/archmax-bench-agent-fixture.XXXXXX")
trap 'rm -rf "$fixture"' EXIT

rust_out=$(BENCH_AGENT_FIXTURE="$fixture" cargo bench -p archmax-bench --bench agent 2>/dev/null) \
  || { echo "cargo bench failed; rerun: cargo bench -p archmax-bench --bench agent" >&2; exit 2; }
echo "$rust_out" | sed '$d'
rust_json=$(echo "$rust_out" | tail -n 1)

js_out=$(node scripts/bench-agent.mjs "$fixture" --governance)
echo "$js_out" | sed '$d'
js_json=$(echo "$js_out" | tail -n 1)

if [ "${KERNEL:-1}" != 0 ]; then
  cargo bench -p archmax-bench --bench kernel -- \
    --warm-up-time 1 --measurement-time 2 >/dev/null 2>&1 \
    || { echo "cargo bench failed; rerun: cargo bench -p archmax-bench --bench kernel" >&2; exit 2; }
fi

echo
node - "$rust_json" "$js_json" "${KERNEL:-1}" <<'JS'
const fs = require("node:fs");
const rust = JSON.parse(process.argv[2]);
const js = JSON.parse(process.argv[3]);
const kernel = process.argv[4] !== "0";
const FLOOR_US = 50;
const median = (v) => [...v].sort((a, b) => a - b)[v.length >> 1];
const table = (rows) => {
  const w = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
  for (const row of rows) console.log(row.map((c, i) => (i === 0 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  ").trimEnd());
};

console.log(`turn of ${rust.steps} tool-call steps + 1 answer (${rust.calls} model calls), filesystem store, release builds; medians of ${rust.rounds} rounds per side`);
const gapR = median(rust.gap_us), gapJ = median(js.gap_us);
const wallR = median(rust.wall_us), wallJ = median(js.wall_us);
const rows = [["", "rust µs", "js µs", "js − rust µs", "js/rust"]];
rows.push(["per step (between model calls)", gapR.toFixed(1), gapJ.toFixed(1), (gapJ - gapR).toFixed(1), `${(gapJ / gapR).toFixed(2)}x`]);
rows.push(["  steps 5-15", rust.gap_early_us.toFixed(1), js.gap_early_us.toFixed(1), (js.gap_early_us - rust.gap_early_us).toFixed(1), `${(js.gap_early_us / rust.gap_early_us).toFixed(2)}x`]);
rows.push([`  steps ${rust.steps - 10}-${rust.steps}`, rust.gap_late_us.toFixed(1), js.gap_late_us.toFixed(1), (js.gap_late_us - rust.gap_late_us).toFixed(1), `${(js.gap_late_us / rust.gap_late_us).toFixed(2)}x`]);
rows.push(["per model call (turn / calls)", wallR.toFixed(1), wallJ.toFixed(1), (wallJ - wallR).toFixed(1), `${(wallJ / wallR).toFixed(2)}x`]);
table(rows);
if (rust.request_bytes && js.parse_us) {
  const parts = rust.probe_calls.map((c, k) =>
    `call ${c}: ${(rust.request_bytes[k] / 1024).toFixed(0)} KiB, serde_json::to_string ${rust.serialize_us[k].toFixed(1)} µs + JSON.parse ${js.parse_us[k].toFixed(1)} µs`);
  console.log(`shipping the whole request as JSON text would cost (avoided: requests cross as deltas): ${parts.join("; ")}`);
}
const boundary = gapJ - gapR;
const ok = boundary < FLOOR_US;
console.log(`JS boundary per model call: ${boundary.toFixed(1)} µs  ${ok ? "ok" : "FAIL"} (floor < ${FLOOR_US} µs)`);

if (js.governance) {
  console.log();
  const grows = [["Governance.decide", "rust ns", "js ns", "js − rust ns", "js/rust"]];
  for (const [id, j] of Object.entries(js.governance)) {
    let r = NaN;
    try {
      if (kernel) r = JSON.parse(fs.readFileSync(`target/criterion/decide/${id}/new/estimates.json`, "utf8")).median.point_estimate;
    } catch {}
    grows.push([id, Number.isNaN(r) ? "-" : r.toFixed(1), j.toFixed(1), Number.isNaN(r) ? "-" : (j - r).toFixed(1), Number.isNaN(r) ? "-" : `${(j / r).toFixed(2)}x`]);
  }
  table(grows);
}
if (!ok) console.log("FAIL: the JS boundary is above its floor");
process.exit(ok ? 0 : 1);
JS

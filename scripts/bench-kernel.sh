#!/usr/bin/env bash
# The kernel's decide() on the example workflow against the Node baseline, in one run.
#
#   1. `cargo bench -p archmax-bench --bench kernel` (criterion; output hidden), then
#      the medians from target/criterion/decide/<case>/new/estimates.json;
#   2. `node scripts/bench-kernel.mjs`: the same four calls the way the original does
#      them (picomatch 4), median ns per call;
#   3. one table: case, Rust median, Node median, ratio Node/Rust, floor check.
# Floors (median): bare_grant and path_guard under 1 µs, variable_guard under 2 µs.
# Exits non-zero when a floor fails. WARMUP / MEASURE (seconds) tune criterion.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo bench -p archmax-bench --bench kernel -- \
  --warm-up-time "${WARMUP:-1}" --measurement-time "${MEASURE:-3}" >/dev/null 2>&1 \
  || { echo "cargo bench failed; rerun: cargo bench -p archmax-bench --bench kernel" >&2; exit 2; }
node_json=$(node scripts/bench-kernel.mjs | tail -n 1)

node - "$node_json" <<'JS'
const fs = require("node:fs");
const node = JSON.parse(process.argv[2]);
const floors = { bare_grant: 1000, path_guard: 1000, variable_guard: 2000 };
const rust = (id) =>
  JSON.parse(fs.readFileSync(`target/criterion/decide/${id}/new/estimates.json`, "utf8")).median.point_estimate;
const rows = [["case", "rust ns", "node ns", "node/rust", "floor"]];
let ok = true;
for (const id of ["bare_grant", "path_guard", "variable_guard", "denial"]) {
  const r = rust(id), n = node[id];
  let floor = "-";
  if (floors[id] !== undefined) {
    const pass = r < floors[id];
    ok &&= pass;
    floor = `${pass ? "ok" : "FAIL"} (< ${floors[id]})`;
  }
  rows.push([id, r.toFixed(1), n.toFixed(1), `${(n / r).toFixed(2)}x`, floor]);
}
const w = rows[0].map((_, i) => Math.max(...rows.map((row) => row[i].length)));
for (const row of rows) console.log(row.map((c, i) => (i === 0 || i === 4 ? c.padEnd(w[i]) : c.padStart(w[i]))).join("  ").trimEnd());
if (!ok) console.log("FAIL: a median is above its floor");
process.exit(ok ? 0 : 1);
JS

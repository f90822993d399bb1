#!/usr/bin/env bash
# End-to-end benchmark of `archmax validate` on the example workspace.
#
# Prints, measured in this run:
#   1. in-process validation (criterion) against the IO floor (reading the same files);
#   2. the Rust binary as a whole process, against `node -e ""` (the floor the npm path
#      cannot beat), and the npm bin shim (`node bin/archmax.js`) against the same floor;
#   3. `npx archmax`, for information (npx adds its own package resolution).
# Bounds checked: the binary validates the example in under 10 ms wall (median);
# the bin shim stays within 1.5x of bare Node start-up.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${RUNS:-30}
root=examples/customer-support

cargo bench -p archmax-bench --bench validate -- --warm-up-time 1 --measurement-time 3 >/dev/null 2>&1
cargo build -q --release -p archmax-cli
# The addon as shipped: a release build (this replaces a debug build in place).
npm run -s build:release >/dev/null 2>&1

export NO_COLOR=1 ARCHMAX_CLI_NO_BANNER=1
node - "$runs" "$root" <<'JS'
const { execFileSync, spawnSync } = require("node:child_process");
const fs = require("node:fs");
const [runs, root] = [Number(process.argv[2]), process.argv[3]];

const estimate = (id) => {
  const p = `target/criterion/validate/${id}/new/estimates.json`;
  return JSON.parse(fs.readFileSync(p, "utf8")).median.point_estimate; // ns
};
const inproc = estimate("workspace_disk"), io = estimate("read_files"), mem = estimate("workspace_memory");
console.log(`in-process validate (disk)    ${(inproc / 1e3).toFixed(1)} us`);
console.log(`in-process validate (memory)  ${(mem / 1e3).toFixed(1)} us`);
console.log(`baseline: reading the files   ${(io / 1e3).toFixed(1)} us   ratio ${(inproc / io).toFixed(2)}x`);

const median = (cmd, args) => {
  const times = [];
  for (let i = 0; i < runs; i++) {
    const t = process.hrtime.bigint();
    const r = spawnSync(cmd, args, { stdio: "ignore" });
    times.push(Number(process.hrtime.bigint() - t) / 1e6);
    if (r.status !== 0 && cmd !== "node") throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}`);
  }
  times.sort((a, b) => a - b);
  return times[Math.floor(times.length / 2)];
};
const bin = median("target/release/archmax", ["validate", "order-lookup", "--root", root]);
const node = median("node", ["-e", ""]);
const shim = median("node", ["bin/archmax.js", "validate", "order-lookup", "--root", root]);
const npx = median("npx", ["--no-install", "archmax", "validate", "order-lookup", "--root", root]);
console.log(`rust binary  archmax validate ${bin.toFixed(2)} ms (bound 10 ms)`);
console.log(`baseline     node -e ""       ${node.toFixed(2)} ms`);
console.log(`npm bin shim node bin/archmax ${shim.toFixed(2)} ms   ratio ${(shim / node).toFixed(2)}x (bound 1.50x)`);
console.log(`npx archmax  (info)           ${npx.toFixed(2)} ms   ratio ${(npx / node).toFixed(2)}x`);
let ok = true;
if (bin >= 10) { console.log("FAIL: the binary took 10 ms or more"); ok = false; }
if (shim / node > 1.5) { console.log("FAIL: the bin shim is above 1.5x bare Node start-up"); ok = false; }
process.exit(ok ? 0 : 1);
JS

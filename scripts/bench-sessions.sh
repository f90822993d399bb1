#!/usr/bin/env bash
# Many sessions at once through `createAgent` (issue 12 item 2): SESSIONS (1 000) concurrent
# sessions × CALLS (6) model calls, a JS model function answering after LATENCY (100) ms,
# once per store (filesystem, memory, a host JS store), on the release addon (built into
# target/bench-agent/ by scripts/release-addon.sh). Prints, per store, the wall time as a
# ratio of the latency floor, the longest event-loop stall and the memory per session
# (scripts/bench-sessions.mjs). Floors: filesystem wall ≤ 1.5× the floor; every store's
# longest stall < 50 ms. Exits non-zero when one is missed.
set -euo pipefail
cd "$(dirname "$0")/.."

. scripts/release-addon.sh

status=0
for store in filesystem memory host; do
  out=$(node scripts/bench-sessions.mjs "$store") || { echo "$store: the run failed" >&2; exit 2; }
  echo "$out" | sed '$d'
  json=$(echo "$out" | tail -n 1)
  node -e '
    const r = JSON.parse(process.argv[1])
    const misses = []
    if (r.store === "filesystem" && r.ratio > 1.5) misses.push(`wall ${r.ratio.toFixed(2)}× the floor (floor: ≤ 1.5×)`)
    if (r.stall_ms >= 50) misses.push(`event-loop stall ${r.stall_ms.toFixed(1)} ms (floor: < 50 ms)`)
    if (misses.length) { console.log(`  MISSED (${r.store}): ${misses.join("; ")}`); process.exit(1) }
  ' "$json" || status=1
done
exit $status

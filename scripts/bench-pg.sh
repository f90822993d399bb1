#!/usr/bin/env bash
# The PostgreSQL store beside the filesystem store: a step's commit (p50, p99) and
# store-level turns per second (crates/store-pg/examples/store_bench.rs), on a throwaway
# server unless ARCHMAX_TEST_PG_URL is set. Usage: scripts/bench-pg.sh [steps] [turns]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${ARCHMAX_TEST_PG_URL:-}" ]]; then
  eval "$(bash scripts/pg-test-server.sh start)"
  trap 'bash scripts/pg-test-server.sh stop "$ARCHMAX_TEST_PG_DIR"' EXIT
fi
cargo run --release -q -p archmax-store-pg --example store_bench -- "$ARCHMAX_TEST_PG_URL" "${1:-500}" "${2:-200}"

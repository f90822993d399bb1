#!/usr/bin/env bash
# The PostgreSQL store beside the filesystem store, in one run on one server:
#  1. store level (crates/store-pg/examples/store_bench.rs): a step's commit (p50, p99) and
#     turns per second without a model;
#  2. end to end (tests/examples/worker_bench.rs): turns per second of 4 workers with a model
#     (the scripted OpenAI-compatible server on 127.0.0.1) and the commits inside those turns.
# On a throwaway server unless ARCHMAX_TEST_PG_URL is set.
# Usage: scripts/bench-pg.sh [steps] [store-turns] [turns] [model-ms]
set -euo pipefail
cd "$(dirname "$0")/.."
if [[ -z "${ARCHMAX_TEST_PG_URL:-}" ]]; then
  eval "$(bash scripts/pg-test-server.sh start)"
  trap 'bash scripts/pg-test-server.sh stop "$ARCHMAX_TEST_PG_DIR"' EXIT
fi
cargo run --release -q -p archmax-store-pg --example store_bench -- "$ARCHMAX_TEST_PG_URL" "${1:-500}" "${2:-200}"
cargo run --release -q -p archmax-tests --example worker_bench -- "$ARCHMAX_TEST_PG_URL" "${3:-400}" "${4:-0}"

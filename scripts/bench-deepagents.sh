#!/usr/bin/env bash
# The deepagents middleware's added cost per model call and per tool call, beside the same
# Deep Agents agent without it, in one run, on the release addon
# (scripts/bench-deepagents.mjs says what is measured). ROUNDS / THREADS / STEPS tune it.
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/release-addon.sh
node scripts/bench-deepagents.mjs

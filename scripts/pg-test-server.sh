#!/usr/bin/env bash
# A throwaway PostgreSQL cluster for the PostgreSQL store's tests (crates/store-pg).
#
#   eval "$(bash scripts/pg-test-server.sh start)"   # exports ARCHMAX_TEST_PG_URL and ARCHMAX_TEST_PG_DIR
#   bash scripts/pg-test-server.sh stop "$ARCHMAX_TEST_PG_DIR"
#
# `start` finds initdb (PATH, then /usr/lib/postgresql/*/bin), installs the Debian package when
# none is there and it runs as root (as CI does), makes a cluster in a new folder under /tmp,
# listening on 127.0.0.1 on a free port only, and prints the two exports. PostgreSQL refuses to
# run as root, so as root the cluster belongs to the `postgres` user (else `nobody`).
# Trust authentication on loopback: the cluster is a test fixture that lives for one run.
set -euo pipefail

find_bin() {
  local name=$1 dir
  if command -v "$name" >/dev/null 2>&1; then command -v "$name"; return 0; fi
  for dir in /usr/lib/postgresql/*/bin; do
    if [[ -x "$dir/$name" ]]; then echo "$dir/$name"; return 0; fi
  done
  return 1
}

start() {
  if ! find_bin initdb >/dev/null; then
    if [[ $(id -u) -ne 0 ]]; then
      echo "pg-test-server: initdb not found; install PostgreSQL (apt-get install postgresql)" >&2
      exit 1
    fi
    echo "pg-test-server: installing postgresql" >&2
    DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  fi
  local initdb pg_ctl dir port user run
  initdb=$(find_bin initdb)
  pg_ctl=$(find_bin pg_ctl)
  # Not under /tmp/archmax-*: test clean-ups remove those.
  dir=$(mktemp -d /tmp/pg-test-cluster.XXXXXX)
  run=()
  if [[ $(id -u) -eq 0 ]]; then
    user=postgres
    id "$user" >/dev/null 2>&1 || user=nobody
    chown "$user" "$dir"
    run=(runuser -u "$user" --)
  fi
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "${run[@]}" "$initdb" -D "$dir/data" -U archmax -A trust -E UTF8 --no-locale >"$dir/initdb.log" 2>&1 ||
    { cat "$dir/initdb.log" >&2; exit 1; }
  "${run[@]}" "$pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=200" start >/dev/null ||
    { cat "$dir/server.log" >&2; exit 1; }
  echo "export ARCHMAX_TEST_PG_URL='postgres://archmax@127.0.0.1:$port/postgres'"
  echo "export ARCHMAX_TEST_PG_DIR='$dir'"
}

stop() {
  local dir=${1:?usage: pg-test-server.sh stop DIR} pg_ctl run=()
  [[ -d "$dir/data" ]] || return 0
  pg_ctl=$(find_bin pg_ctl)
  if [[ $(id -u) -eq 0 ]]; then run=(runuser -u "$(stat -c %U "$dir")" --); fi
  "${run[@]}" "$pg_ctl" -D "$dir/data" -m fast -w stop >/dev/null 2>&1 || true
  rm -rf "$dir"
}

case "${1:-}" in
  start) start ;;
  stop) stop "${2:-}" ;;
  *) echo "usage: $0 start | stop DIR" >&2; exit 2 ;;
esac

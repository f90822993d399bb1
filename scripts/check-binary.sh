#!/usr/bin/env bash
# The checks a Linux release binary must pass (issue 18 item 2), run by scripts/pack.sh on each
# addon and CLI it builds:
#   - built for the triple's architecture (x86_64 or aarch64);
#   - a glibc (`-gnu`) build needs no glibc symbol version above the 2.17 floor (PACK_GLIBC_FLOOR);
#     a musl build needs no glibc at all;
#   - no symbol table and no debug info left (a stripped release build).
#
#   bash scripts/check-binary.sh FILE TRIPLE     prints what it found; exit 1 naming what failed
# Needs readelf (binutils), which reads an ELF file of any architecture.
set -euo pipefail
file="${1:?check-binary: FILE TRIPLE}"
triple="${2:?check-binary: FILE TRIPLE}"
floor="${PACK_GLIBC_FLOOR:-2.17}"
what="$(basename "$file")"
fail() { echo "check-binary: $what ($triple): $*" >&2; exit 1; }

[[ -f "$file" ]] || fail "no such file"
command -v readelf >/dev/null || fail "needs readelf (binutils)"
machine="$(readelf -h "$file" 2>/dev/null | sed -n 's/^ *Machine: *//p' || true)"
[[ -n "$machine" ]] || fail "not an ELF file"
case "$triple" in
  x86_64-*-linux-*) want='Advanced Micro Devices X86-64' ;;
  aarch64-*-linux-*) want='AArch64' ;;
  *) fail "not a Linux x86_64 or aarch64 triple" ;;
esac
[[ "$machine" == "$want" ]] || fail "built for $machine, not ${triple%%-*}"

glibc="$(readelf -V "$file" | grep -o 'GLIBC_[0-9][0-9.]*' | sort -uV | tail -1 || true)"
case "$triple" in
  *-gnu)
    [[ -n "$glibc" ]] || fail "names no glibc symbol version: not a glibc build"
    [[ "$(printf '%s\n' "GLIBC_$floor" "$glibc" | sort -V | tail -1)" == "GLIBC_$floor" ]] \
      || fail "needs $glibc, above the glibc $floor floor"
    ;;
  *-musl) [[ -z "$glibc" ]] || fail "a musl build that needs $glibc" ;;
  *) fail "neither a -gnu nor a -musl triple" ;;
esac
left="$(readelf -S -W "$file" | grep -oE '\.(symtab|debug_[a-z]+)' | sort -u | tr '\n' ' ' || true)"
[[ -z "$left" ]] || fail "not stripped: it still has ${left% }"
if [[ -n "$glibc" ]]; then libc="highest glibc symbol version $glibc (floor $floor)"; else libc="no glibc"; fi
echo "check-binary: $what: $machine, $libc, stripped"

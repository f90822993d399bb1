#!/usr/bin/env bash
# Builds and packs what this machine can into dist/ (issue 18 items 2, 3 and 6):
#   dist/archmax-ai-harness-<version>.tgz               the main package (no .node; its
#                                                       optionalDependencies name every platform)
#   dist/archmax-ai-harness-<platform>-<version>.tgz    one platform package per target built
#   dist/archmax-<version>-<triple>.tar.gz              the standalone CLI binary per target
# Release builds with their symbols stripped. Linux targets build with cargo-zigbuild (zig is the
# linker and C compiler, from PyPI: scripts/release-tools.txt, installed with pip when missing):
# glibc targets against a glibc 2.17 floor, musl targets with a dynamic addon (Node loads it) and
# a static CLI (runs on any Linux). Each Linux binary is checked by scripts/check-binary.sh: built
# for its architecture, no glibc symbol version above the floor (none at all on musl), stripped.
# Each tarball is held to its size budget in docs/packaging.md. macOS and Windows build on their
# own machines (.github/workflows/release.yml runs this script there with --target).
#
#   bash scripts/pack.sh                   every target this machine builds: on Linux x64 the four
#                                          Linux triples of napi.targets, elsewhere the host's
#   bash scripts/pack.sh --target T ...    only these napi.targets triples (repeatable)
#   bash scripts/pack.sh --addon FILE      pack FILE as this machine's addon (no build, no checks,
#                                          no CLI archive: the smoke test packs the debug build)
# Env: PACK_OUT (default dist), CARGO_TARGET_DIR (default target).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
fail() { echo "pack: $*" >&2; exit 1; }
note() { echo "pack: $*"; }

GLIBC_FLOOR=2.17
addon=""
targets=()
while (($#)); do
  case "$1" in
    --addon) addon="${2:?--addon needs a file}"; [[ -f "$addon" ]] || fail "no addon at $addon"; shift 2 ;;
    --target) targets+=("${2:?--target needs a triple}"); shift 2 ;;
    -h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
    *) fail "unknown argument '$1' (bash scripts/pack.sh --help)" ;;
  esac
done
[[ -z "$addon" || ${#targets[@]} -eq 0 ]] || fail "--addon packs this machine's addon: it takes no --target"
out="${PACK_OUT:-$root/dist}"
target_dir="${CARGO_TARGET_DIR:-$root/target}"

node scripts/sync-platform-packages.mjs --check >/dev/null || fail "npm/ is out of step: node scripts/sync-platform-packages.mjs"
name="$(node -p 'require("./package.json").name')"
version="$(node -p 'require("./package.json").version')"
binary_name="$(node -p 'require("./package.json").napi.binaryName')"
stem="$(echo "${name#@}" | tr / -)"
platform_of() { node --input-type=module -e "import { platformOfTriple } from './js/native-platform.js'; console.log(platformOfTriple(process.argv[1]))" "$1"; }
known_targets="$(node -p 'require("./package.json").napi.targets.join(" ")')"

if [[ -z "$addon" && ${#targets[@]} -eq 0 ]]; then
  host="$(rustc -vV | sed -n 's/^host: //p')"
  if [[ "$host" == x86_64-unknown-linux-gnu ]]; then
    for t in $known_targets; do [[ "$t" == *-linux-* ]] && targets+=("$t"); done
  else
    targets=("$host")
  fi
fi
for t in "${targets[@]}"; do
  [[ " $known_targets " == *" $t "* ]] || fail "$t is not one of package.json's napi.targets ($known_targets)"
done

rm -rf "$out"
mkdir -p "$out"
# Staged beside the build (a temp folder may be swept while a release build runs).
mkdir -p "$target_dir"
stage="$(mktemp -d "$target_dir/pack-stage-XXXXXX")"
trap 'rm -rf "$stage"' EXIT

# zig and cargo-zigbuild, from PyPI, when a Linux target is to be built and they are missing.
zig_tools() {
  if command -v cargo-zigbuild >/dev/null && { command -v zig >/dev/null || python3 -m ziglang version >/dev/null 2>&1; }; then return; fi
  command -v python3 >/dev/null || fail "the Linux release builds need zig and cargo-zigbuild: pip install -r scripts/release-tools.txt (no python3 here)"
  note "installing zig and cargo-zigbuild: python3 -m pip install -r scripts/release-tools.txt"
  python3 -m pip install --quiet --disable-pip-version-check -r scripts/release-tools.txt \
    || fail "could not install zig and cargo-zigbuild: python3 -m pip install -r scripts/release-tools.txt"
  # pip puts cargo-zigbuild in Python's scripts folder, which need not be on PATH.
  PATH="$PATH:$(python3 -c 'import sysconfig; print(sysconfig.get_path("scripts"))')"
  hash -r
  command -v cargo-zigbuild >/dev/null || fail "cargo-zigbuild is installed but not found on PATH nor in Python's scripts folder"
}

# The Rust standard library for the target (rustup downloads it once).
rust_std() {
  if rustup target list --installed 2>/dev/null | grep -qx "$1"; then return; fi
  command -v rustup >/dev/null || fail "no Rust standard library for $1 and no rustup to fetch it"
  note "rustup target add $1"
  rustup target add "$1" || fail "could not fetch the Rust standard library for $1: rustup target add $1"
}

# Runs the CLI's --help when this machine can run it: same architecture (on Linux, a glibc
# build only on a glibc host), or a static musl build under qemu-user.
try_cli() {
  local exe="$1" triple="$2" arch="${2%%-*}" host_arch run=()
  host_arch="$(uname -m)"
  [[ "$host_arch" == arm64 ]] && host_arch=aarch64
  if [[ "$arch" == "$host_arch" && "$(uname -s)" != Linux ]]; then run=("$exe")
  elif [[ "$arch" == "$host_arch" ]] && { [[ "$triple" == *-musl ]] || ldd --version 2>&1 | grep -qi 'glibc\|gnu libc'; }; then run=("$exe")
  elif [[ "$triple" == *-musl ]] && command -v "qemu-$arch" >/dev/null; then run=("qemu-$arch" "$exe")
  elif [[ "$triple" == *-musl ]] && command -v "qemu-$arch-static" >/dev/null; then run=("qemu-$arch-static" "$exe")
  else note "$(basename "$exe") for $triple is not run on this machine"; return; fi
  "${run[@]}" --help | grep -q '^Usage: archmax' || fail "$triple: ${run[*]} --help does not print the usage"
  note "$triple: ${run[*]##*/} --help prints the usage"
}

# Builds the release addon and CLI for one triple into $stage/<platform>/ and $stage/cli-<triple>/.
build() {
  local triple="$1" platform lib exe cargo=(cargo build) spec="$1"
  platform="$(platform_of "$triple")"
  case "$triple" in
    *-apple-darwin) lib=libarchmax_napi.dylib; exe=archmax ;;
    *-windows-*) lib=archmax_napi.dll; exe=archmax.exe ;;
    *) lib=libarchmax_napi.so; exe=archmax ;;
  esac
  rust_std "$triple"
  if [[ "$triple" == *-linux-* ]]; then
    zig_tools
    cargo=(cargo zigbuild)
    [[ "$triple" == *-gnu ]] && spec="$triple.$GLIBC_FLOOR"
  fi
  # The zig-linked Linux builds come out with no symbol table or debug info as they are
  # (scripts/check-binary.sh holds them to it); elsewhere the profile strips.
  [[ "$triple" == *-linux-* ]] || export CARGO_PROFILE_RELEASE_STRIP=symbols
  local rustflags_var="CARGO_TARGET_$(echo "$triple" | tr 'a-z-' 'A-Z_')_RUSTFLAGS"
  if [[ "$triple" == *-musl ]]; then
    # Node loads the addon with dlopen, so it links musl dynamically; the CLI stays static.
    note "${cargo[*]} --release -p archmax-napi --target $spec (-crt-static)"
    env "$rustflags_var=-C target-feature=-crt-static" "${cargo[@]}" --release -p archmax-napi --target "$spec"
    cp "$target_dir/$triple/release/$lib" "$stage/$lib.$triple"
    note "${cargo[*]} --release -p archmax-cli --target $spec (static)"
    "${cargo[@]}" --release -p archmax-cli --target "$spec"
  else
    note "${cargo[*]} --release -p archmax-napi -p archmax-cli --target $spec"
    "${cargo[@]}" --release -p archmax-napi -p archmax-cli --target "$spec"
    cp "$target_dir/$triple/release/$lib" "$stage/$lib.$triple"
  fi
  mkdir -p "$stage/$platform" "$stage/cli-$triple"
  mv "$stage/$lib.$triple" "$stage/$platform/$binary_name.$platform.node"
  cp "$target_dir/$triple/release/$exe" "$stage/cli-$triple/$exe"
  if [[ "$triple" == *-linux-* ]]; then
    PACK_GLIBC_FLOOR="$GLIBC_FLOOR" bash scripts/check-binary.sh "$stage/$platform/$binary_name.$platform.node" "$triple"
    PACK_GLIBC_FLOOR="$GLIBC_FLOOR" bash scripts/check-binary.sh "$stage/cli-$triple/$exe" "$triple"
  fi
  try_cli "$stage/cli-$triple/$exe" "$triple"
}

# The main package as published: its packed files, package.json with optionalDependencies.
mkdir -p "$stage/main"
npm pack --dry-run --json --ignore-scripts | node -e '
  const { cpSync, mkdirSync } = require("fs"), { dirname, join } = require("path")
  for (const { path } of JSON.parse(require("fs").readFileSync(0, "utf8"))[0].files) {
    mkdirSync(dirname(join(process.argv[1], path)), { recursive: true })
    cpSync(path, join(process.argv[1], path))
  }' "$stage/main"
node scripts/sync-platform-packages.mjs --manifest "$stage/main/package.json"
(cd "$stage/main" && npm pack --silent --ignore-scripts --pack-destination "$out" >/dev/null)
main_tgz="$out/$stem-$version.tgz"
[[ -f "$main_tgz" ]] || { ls -la "$out"; fail "npm pack did not write $main_tgz"; }
if tar -tzf "$main_tgz" | grep -q '\.node$'; then fail "the main tarball carries a .node file"; fi
tarballs=("$main_tgz")

# One platform package: its package.json, README and addon, packed.
pack_platform() {
  local platform="$1" tgz="$out/$stem-$1-$version.tgz"
  [[ -f "npm/$platform/package.json" ]] || fail "$platform has no platform package in npm/"
  cp "npm/$platform/package.json" "npm/$platform/README.md" "$stage/$platform/"
  (cd "$stage/$platform" && npm pack --silent --ignore-scripts --pack-destination "$out" >/dev/null)
  [[ -f "$tgz" ]] || { ls -la "$out"; fail "npm pack did not write $tgz"; }
  tar -tzf "$tgz" | grep -qx "package/$binary_name.$platform.node" || fail "$tgz lacks $binary_name.$platform.node"
  tarballs+=("$tgz")
}

if [[ -n "$addon" ]]; then
  platform="$(node --input-type=module -e "import { currentPlatform } from './js/native-platform.js'; console.log(currentPlatform())")"
  mkdir -p "$stage/$platform"
  # The smoke test's debug build: its debug info is most of its size.
  if command -v strip >/dev/null; then strip --strip-debug -o "$stage/$platform/$binary_name.$platform.node" "$addon"; else cp "$addon" "$stage/$platform/$binary_name.$platform.node"; fi
  pack_platform "$platform"
else
  for triple in "${targets[@]}"; do
    build "$triple"
    pack_platform "$(platform_of "$triple")"
    cp LICENSE "$stage/cli-$triple/"
    tar -czf "$out/archmax-$version-$triple.tar.gz" -C "$stage/cli-$triple" .
  done
  node scripts/check-size.mjs "${tarballs[@]}"
fi
ls -la "$out" | sed 1d | awk '{print "pack: " $5 "\t" $9}' | grep -v '\.$'

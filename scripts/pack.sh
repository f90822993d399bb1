#!/usr/bin/env bash
# Builds and packs what this machine can into dist/ (issue 18 item 3):
#   dist/archmax-ai-harness-<version>.tgz               the main package (no .node; its
#                                                       optionalDependencies name every platform)
#   dist/archmax-ai-harness-<platform>-<version>.tgz    this machine's platform package
#   dist/archmax-<version>-<triple>.tar.gz              the standalone CLI binary (issue 18 item 6)
# The addon and the CLI are release builds with their symbols stripped; each tarball is held to
# its size budget in docs/packaging.md. The other platforms come from the release workflow.
#
#   bash scripts/pack.sh                   release build, pack, size check
#   bash scripts/pack.sh --addon FILE      pack FILE as this platform's addon (no build, no CLI
#                                          archive, no size check: the smoke test packs the
#                                          debug build this way)
# Env: PACK_OUT (default dist), CARGO_TARGET_DIR (default target).
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"
fail() { echo "pack: $*" >&2; exit 1; }

addon=""
if [[ "${1:-}" == "--addon" ]]; then addon="${2:?--addon needs a file}"; [[ -f "$addon" ]] || fail "no addon at $addon"; fi
out="${PACK_OUT:-$root/dist}"
target_dir="${CARGO_TARGET_DIR:-$root/target}"

node scripts/sync-platform-packages.mjs --check >/dev/null || fail "npm/ is out of step: node scripts/sync-platform-packages.mjs"
platform="$(node --input-type=module -e "import { currentPlatform } from './native-check.js'; console.log(currentPlatform())")"
name="$(node -p 'require("./package.json").name')"
version="$(node -p 'require("./package.json").version')"
binary="$(node -p 'require("./package.json").napi.binaryName').${platform}.node"
stem="$(echo "${name#@}" | tr / -)"
[[ -f "npm/$platform/package.json" ]] || fail "this machine ($platform) has no platform package in npm/"

rm -rf "$out"
mkdir -p "$out"
stage="$(mktemp -d "${TMPDIR:-/tmp}/archmax-pack-XXXXXX")"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/main" "$stage/platform" "$stage/cli"

if [[ -z "$addon" ]]; then
  echo "pack: cargo build --release -p archmax-napi -p archmax-cli"
  cargo build --release -p archmax-napi -p archmax-cli
  case "$(uname -s)" in
    Darwin) lib=libarchmax_napi.dylib; exe=archmax ;;
    MINGW* | MSYS* | CYGWIN*) lib=archmax_napi.dll; exe=archmax.exe ;;
    *) lib=libarchmax_napi.so; exe=archmax ;;
  esac
  cp "$target_dir/release/$lib" "$stage/platform/$binary"
  cp "$target_dir/release/$exe" "$stage/cli/$exe"
  if command -v strip >/dev/null; then strip --strip-unneeded "$stage/platform/$binary" "$stage/cli/$exe"; fi
else
  # The smoke test's debug build: its debug info is most of its size.
  if command -v strip >/dev/null; then strip --strip-debug -o "$stage/platform/$binary" "$addon"; else cp "$addon" "$stage/platform/$binary"; fi
fi

# The glibc the addon needs (issue 18 item 2 asks for a 2.17 floor: napi build --use-napi-cross).
if [[ "$platform" == linux-*-gnu ]] && command -v objdump >/dev/null; then
  glibc="$(objdump -T "$stage/platform/$binary" | grep -o 'GLIBC_[0-9.]*' | sort -uV | tail -1)"
  echo "pack: $binary needs ${glibc:-no versioned glibc symbol}"
  if [[ -n "${PACK_GLIBC_MAX:-}" ]] && [[ "$(printf '%s\n' "GLIBC_$PACK_GLIBC_MAX" "$glibc" | sort -V | tail -1)" != "GLIBC_$PACK_GLIBC_MAX" ]]; then
    fail "$binary needs $glibc, above PACK_GLIBC_MAX=$PACK_GLIBC_MAX"
  fi
fi

# The main package as published: its packed files, package.json with optionalDependencies.
npm pack --dry-run --json --ignore-scripts | node -e '
  const { cpSync, mkdirSync } = require("fs"), { dirname, join } = require("path")
  for (const { path } of JSON.parse(require("fs").readFileSync(0, "utf8"))[0].files) {
    mkdirSync(dirname(join(process.argv[1], path)), { recursive: true })
    cpSync(path, join(process.argv[1], path))
  }' "$stage/main"
node scripts/sync-platform-packages.mjs --manifest "$stage/main/package.json"
cp "npm/$platform/package.json" "npm/$platform/README.md" "$stage/platform/"
(cd "$stage/main" && npm pack --silent --ignore-scripts --pack-destination "$out" >/dev/null)
(cd "$stage/platform" && npm pack --silent --ignore-scripts --pack-destination "$out" >/dev/null)

main_tgz="$out/$stem-$version.tgz"
platform_tgz="$out/$stem-$platform-$version.tgz"
[[ -f "$main_tgz" && -f "$platform_tgz" ]] || { ls -la "$out"; fail "npm pack did not write the expected tarballs"; }
if tar -tzf "$main_tgz" | grep -q '\.node$'; then fail "the main tarball carries a .node file"; fi
tar -tzf "$platform_tgz" | grep -qx "package/$binary" || fail "the platform tarball lacks $binary"

if [[ -z "$addon" ]]; then
  triple="$(rustc -vV | sed -n 's/^host: //p')"
  cp LICENSE "$stage/cli/"
  tar -czf "$out/archmax-$version-$triple.tar.gz" -C "$stage/cli" .
  node scripts/check-size.mjs "$main_tgz" "$platform_tgz"
fi
ls -la "$out" | sed 1d | awk '{print "pack: " $5 "\t" $9}' | grep -v '\.$'

#!/usr/bin/env bash
# The install smoke test (issue 18 item 4): the main package and this machine's platform package,
# packed, installed into an empty app with `npm install --offline` (the package has no runtime
# dependencies, so nothing else is needed), then, with no Rust toolchain on PATH: `npx archmax
# --help`, `npx archmax validate` on a copy of the example, `import { createAgent }` with a
# one-turn run of a JS model function, and `require("@archmax-ai/harness")`. With --dist, the
# standalone CLI archive of this platform is unpacked and run too.
#
#   bash scripts/smoke-install.sh [addon.node]    pack this addon with scripts/pack.sh --addon
#                                                 (default: ./harness.<platform>.node, the build's)
#   bash scripts/smoke-install.sh --dist DIR      the tarballs scripts/pack.sh wrote into DIR
#                                                 (.ci/run and the release workflow's test jobs)
#
# Env: SMOKE_KEEP=1 keeps the temp folder and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

fail() { echo "smoke-install: $*" >&2; exit 1; }

platform="$(node --input-type=module -e "import { currentPlatform } from './js/native-platform.js'; console.log(currentPlatform())")"
# The napi target this platform's package is built from (for its standalone CLI archive).
triple="$(node --input-type=module -e "
  import { platformOfTriple } from './js/native-platform.js'
  import pkg from './package.json' with { type: 'json' }
  console.log(pkg.napi.targets.find((t) => platformOfTriple(t) === process.argv[1]) ?? '')" "$platform")"
name="$(node -p 'require("./package.json").name')"
version="$(node -p 'require("./package.json").version')"
binary="$(node -p 'require("./package.json").napi.binaryName').${platform}.node"
dist=""
addon=""
if [[ "${1:-}" == "--dist" ]]; then
  dist="$(cd "${2:?--dist needs the folder scripts/pack.sh wrote}" && pwd)"
else
  addon="${1:-$root/$binary}"
  [[ -f "$addon" ]] || fail "no addon at $addon: run npm run build first"
fi
[[ -f "npm/$platform/package.json" ]] || fail "npm/$platform/ is not a platform package (node scripts/sync-platform-packages.mjs)"
deps="$(node -p 'Object.keys(require("./package.json").dependencies ?? {}).join(" ")')"
[[ -z "$deps" ]] || fail "the package has runtime dependencies ($deps): an offline install would need them in the npm cache"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/archmax-smoke-XXXXXX")"
if [[ "${SMOKE_KEEP:-}" == 1 ]]; then echo "smoke-install: keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
mkdir -p "$tmp/app"

# The two tarballs as scripts/pack.sh makes them: with this addon, or as it made them.
if [[ -z "$dist" ]]; then
  dist="$tmp/dist"
  PACK_OUT="$dist" bash scripts/pack.sh --addon "$addon" >/dev/null
fi
main_tgz="$dist/$(echo "${name#@}" | tr / -)-$version.tgz"
platform_tgz="$dist/$(echo "${name#@}" | tr / -)-$platform-$version.tgz"
[[ -f "$main_tgz" && -f "$platform_tgz" ]] || { ls -la "$dist"; fail "no $(basename "$main_tgz") and $(basename "$platform_tgz") in $dist"; }
echo "smoke-install: main $(du -k "$main_tgz" | cut -f1) KiB, $platform $(du -k "$platform_tgz" | cut -f1) KiB"

# An empty app, outside the repository, with no Rust toolchain on PATH.
cd "$tmp/app"
echo '{ "name": "smoke-app", "version": "1.0.0", "private": true, "type": "module" }' > package.json
nodebin="$(dirname "$(command -v node)")"
case "$(uname -s)" in
  # Git Bash cannot link npm's shims elsewhere: keep Node's own folder (Rust lives in ~/.cargo).
  MINGW* | MSYS* | CYGWIN*) export PATH="$nodebin:/usr/bin:/bin:/c/Windows/System32" ;;
  *)
    mkdir -p "$tmp/bin"
    for tool in node npm npx; do ln -s "$(command -v "$tool")" "$tmp/bin/$tool"; done
    export PATH="$tmp/bin:/usr/bin:/bin"
    ;;
esac
if command -v cargo >/dev/null || command -v rustc >/dev/null; then fail "a Rust toolchain is still on PATH"; fi
[[ "$nodebin" != */.cargo/* ]] || fail "node lives in the Rust toolchain's folder"

npm install --offline --no-audit --no-fund --loglevel=error "$main_tgz" "$platform_tgz" > "$tmp/install.log" 2>&1 \
  || { cat "$tmp/install.log"; fail "npm install --offline of the two tarballs failed"; }
[[ -f "node_modules/$name-$platform/$binary" ]] || fail "the platform package was not installed"
if find "node_modules/$name" -name '*.node' | grep -q .; then fail "the main package brought a .node"; fi

out="$(npx --offline archmax --help)" || fail "npx archmax --help failed"
grep -q '^Usage: archmax' <<<"$out" || fail "npx archmax --help printed: $out"

cp -r "$root/examples/customer-support" ws
rm -rf ws/sessions
out="$(npx --offline archmax validate order-lookup --root ws 2>&1)" || fail "npx archmax validate failed: $out"
echo "smoke-install: archmax validate: $out"

cat > one-turn.mjs <<'EOF'
import assert from 'node:assert/strict'
import { createAgent } from '@archmax-ai/harness'
const requests = []
const model = async (request) => {
  requests.push(request)
  return { role: 'assistant', content: 'Hello from a JS model function.' }
}
const agent = await createAgent({ workflow: false, workspace: { rootDir: 'ws' }, model })
const result = await agent.invoke({ messages: [{ role: 'user', content: 'Say hello.' }] }, { configurable: { thread_id: 'smoke' } })
assert.equal(result.status, 'completed')
assert.equal(result.messages.at(-1).content, 'Hello from a JS model function.')
assert.equal(requests.length, 1)
agent.dispose()
console.log('createAgent: one turn completed')
EOF
node one-turn.mjs || fail "the one-turn createAgent run failed"

node -e '
  const h = require("@archmax-ai/harness")
  if (typeof h.createAgent !== "function" || typeof h.validateSpec !== "function") process.exit(3)
  const spec = require("@archmax-ai/harness/spec")
  if (typeof spec !== "object") process.exit(4)
  console.log("require: ok")
' || fail "require(\"$name\") failed"

# The standalone CLI archive pack.sh wrote beside the tarballs (none when it packed an addon).
archive="$dist/archmax-$version-$triple.tar.gz"
if [[ -n "$addon" ]]; then :
elif [[ ! -f "$archive" ]]; then fail "no standalone CLI archive $(basename "$archive") in $dist"
else
  mkdir -p cli && tar -xzf "$archive" -C cli
  exe=cli/archmax; [[ -f "$exe" ]] || exe=cli/archmax.exe
  [[ -f "$exe" ]] || fail "$(basename "$archive") holds no archmax binary"
  out="$("$exe" validate order-lookup --root ws 2>&1)" || fail "the standalone CLI's validate failed: $out"
  "$exe" --help | grep -q '^Usage: archmax' || fail "the standalone CLI's --help does not print the usage"
  echo "smoke-install: standalone $(basename "$archive"): archmax validate: $out"
fi

echo "smoke-install: passed ($platform, no Rust on PATH)"

#!/usr/bin/env bash
# The install smoke test (issue 18 item 4), run by .ci/run after the build: packs the main
# package and this machine's platform package with scripts/pack.sh (the addon the build left at
# the root, its debug info stripped to keep the tarball small), installs both tarballs into an empty app with
# `npm install --offline` (the package has no runtime dependencies, so nothing else is needed),
# then, with no Rust toolchain on PATH: `npx archmax --help`, `npx archmax validate` on a copy
# of the example, `import { createAgent }` with a one-turn run of a JS model function, and
# `require("@archmax-ai/harness")`.
#
#   bash scripts/smoke-install.sh [addon.node]    (default: ./harness.<platform>.node)
#
# Env: SMOKE_KEEP=1 keeps the temp folder and prints it.
set -euo pipefail
cd "$(dirname "$0")/.."
root="$PWD"

fail() { echo "smoke-install: $*" >&2; exit 1; }

platform="$(node --input-type=module -e "import { currentPlatform } from './native-check.js'; console.log(currentPlatform())")"
name="$(node -p 'require("./package.json").name')"
version="$(node -p 'require("./package.json").version')"
binary="$(node -p 'require("./package.json").napi.binaryName').${platform}.node"
addon="${1:-$root/$binary}"
[[ -f "$addon" ]] || fail "no addon at $addon: run npm run build first"
[[ -f "npm/$platform/package.json" ]] || fail "npm/$platform/ is not a platform package (node scripts/sync-platform-packages.mjs)"
deps="$(node -p 'Object.keys(require("./package.json").dependencies ?? {}).join(" ")')"
[[ -z "$deps" ]] || fail "the package has runtime dependencies ($deps): an offline install would need them in the npm cache"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/archmax-smoke-XXXXXX")"
if [[ "${SMOKE_KEEP:-}" == 1 ]]; then echo "smoke-install: keeping $tmp"; else trap 'rm -rf "$tmp"' EXIT; fi
mkdir -p "$tmp/app"

# The two tarballs as scripts/pack.sh makes them, with this addon.
PACK_OUT="$tmp/dist" bash scripts/pack.sh --addon "$addon" >/dev/null
main_tgz="$tmp/dist/$(echo "${name#@}" | tr / -)-$version.tgz"
platform_tgz="$tmp/dist/$(echo "${name#@}" | tr / -)-$platform-$version.tgz"
[[ -f "$main_tgz" && -f "$platform_tgz" ]] || { ls -la "$tmp/dist"; fail "scripts/pack.sh did not write the expected tarballs"; }
echo "smoke-install: main $(du -k "$main_tgz" | cut -f1) KiB, $platform $(du -k "$platform_tgz" | cut -f1) KiB"

# An empty app, outside the repository, with no Rust toolchain on PATH.
cd "$tmp/app"
echo '{ "name": "smoke-app", "version": "1.0.0", "private": true, "type": "module" }' > package.json
nodebin="$(dirname "$(command -v node)")"
mkdir -p "$tmp/bin"
for tool in node npm npx; do ln -s "$(command -v "$tool")" "$tmp/bin/$tool"; done
export PATH="$tmp/bin:/usr/bin:/bin"
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

echo "smoke-install: passed ($platform, no Rust on PATH)"

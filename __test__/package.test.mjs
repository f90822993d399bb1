// Package hygiene: a LICENSE, README links that resolve in the published tarball, and
// `engines.node` that every dependency and `require()` of the package agree with.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import { join } from 'node:path'
import { ROOT } from './helpers.mjs'

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const semver = createRequire(join(ROOT, 'package.json'))('semver')

function packed() {
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' })
  return new Set(JSON.parse(out)[0].files.map((f) => f.path))
}

test('the tarball has a LICENSE and every README link resolves in it or is absolute', () => {
  const files = packed()
  assert.ok(files.has('LICENSE'))
  assert.match(readFileSync(join(ROOT, 'LICENSE'), 'utf8'), /^MIT License/)
  assert.equal(pkg.license, 'MIT')
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
  const links = [...readme.matchAll(/\]\(([^)\s]+)\)/g)].map((m) => m[1])
  assert.ok(links.length > 0)
  for (const link of links) {
    if (/^https?:\/\//.test(link) || link.startsWith('#')) continue
    assert.ok(files.has(link.split('#')[0]), `${link} is not in the published package`)
  }
})

test('engines.node is what the dependencies and require() need', () => {
  const range = pkg.engines.node
  assert.ok(semver.subset(range, '>=20.19.0'), 'require() of an ES module needs Node 20.19+')
  assert.ok(semver.satisfies(process.version, range), `this Node (${process.version}) is supported`)
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8'))
  const narrower = Object.entries(lock.packages)
    .filter(([path, p]) => path && p.engines?.node && !p.optional)
    .filter(([, p]) => !semver.subset(range, p.engines.node))
    .map(([path, p]) => `${path} wants ${p.engines.node}`)
  assert.deepEqual(narrower, [], 'npm ci would warn EBADENGINE on a supported Node')
  const r = spawnSync(process.execPath, ['-e', "const h = require('@archmax-ai/harness'); if (typeof h.createAgent !== 'function') process.exit(3)"], { cwd: ROOT, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
})

test('the LangChain packages the middleware supports are optional peers, and CI checks the types against exactly those', () => {
  // deepagents.d.ts types the middleware with `langchain`'s AgentMiddleware; `npx tsc -p
  // __test__` (strict) passes it to createDeepAgent and LangChain's createAgent, against
  // what `npm ci` installs: the devDependencies, which must be the declared peer ranges.
  const peers = pkg.peerDependencies ?? {}
  for (const name of ['deepagents', 'langchain', '@langchain/core', '@langchain/langgraph']) {
    assert.ok(peers[name], `${name} is a declared peer`)
    assert.equal(pkg.peerDependenciesMeta?.[name]?.optional, true, `${name} is optional: createAgent needs none of them`)
    assert.equal(pkg.devDependencies[name], peers[name], `the tested ${name} is the supported range`)
    const installed = JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')).version
    assert.ok(semver.satisfies(installed, peers[name]), `${name} ${installed} is in ${peers[name]}`)
  }
  assert.deepEqual(pkg.dependencies ?? {}, {}, 'no runtime dependency')
  const tsconfig = JSON.parse(readFileSync(join(ROOT, '__test__', 'tsconfig.json'), 'utf8'))
  assert.equal(tsconfig.compilerOptions.strict, true)
  assert.ok(tsconfig.files.includes('types-subpaths.ts'))
  assert.match(readFileSync(join(ROOT, '__test__', 'types-subpaths.ts'), 'utf8'), /createDeepAgent\(\{[^\n]*middleware: \[archmaxMiddleware/)
  assert.match(readFileSync(join(ROOT, '.ci', 'run'), 'utf8'), /npx tsc -p __test__/)
})

// A clear failure off the supported list (issue 18 item 5): an installed package whose platform
// addon is missing, broken or unbuilt names the platform, the package it expected and how to
// install it, instead of napi's hint about an npm bug. Each case is a temp install of the
// package's published files (what `npm pack` would ship) with the addon taken away.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { ROOT } from './helpers.mjs'
import { currentPlatform, platformOfTriple, SUPPORTED } from '../js/native-platform.js'

const pkg = JSON.parse(execFileSync(process.execPath, ['-p', 'JSON.stringify(require("./package.json"))'], { cwd: ROOT, encoding: 'utf8' }))
const platform = currentPlatform()
const expected = `${pkg.name}-${platform}`

/** `<tmp>/node_modules/@archmax-ai/harness` holding the packed files and no `.node`. */
function install() {
  const app = mkdtempSync(join(tmpdir(), 'archmax-native-'))
  const dest = join(app, 'node_modules', ...pkg.name.split('/'))
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' })
  for (const { path } of JSON.parse(out)[0].files) {
    mkdirSync(dirname(join(dest, path)), { recursive: true })
    cpSync(join(ROOT, path), join(dest, path))
  }
  writeFileSync(join(app, 'package.json'), '{ "name": "app", "private": true }\n')
  return app
}

/** The platform package beside it, with `binary` as its addon (a path to link, or text to write). */
function platformPackage(app, binary) {
  const dir = join(app, 'node_modules', ...expected.split('/'))
  mkdirSync(dir, { recursive: true })
  cpSync(join(ROOT, 'npm', platform, 'package.json'), join(dir, 'package.json'))
  const file = join(dir, `${pkg.napi.binaryName}.${platform}.node`)
  if (binary.link) symlinkSync(binary.link, file)
  else writeFileSync(file, binary.text)
}

function run(app, args, env = {}) {
  const clean = { ...process.env, ...env }
  delete clean.NAPI_RS_NATIVE_LIBRARY_PATH
  return spawnSync(process.execPath, args, { cwd: app, encoding: 'utf8', env: clean })
}

const IMPORT = ['--input-type=module', '-e', `import { createAgent } from '${pkg.name}'; console.log(typeof createAgent)`]
const REQUIRE = ['-e', `console.log(typeof require('${pkg.name}').createAgent)`]

test('the supported list is napi.targets spelled as napi spells its packages', async () => {
  const { parseTriple } = await import(join(ROOT, 'node_modules', '@napi-rs', 'cli', 'dist', 'index.js'))
  for (const t of pkg.napi.targets) assert.equal(platformOfTriple(t), parseTriple(t).platformArchABI)
  assert.deepEqual([...SUPPORTED].sort(), readdirSync(join(ROOT, 'npm')).sort(), 'one platform package per supported platform')
  assert.ok(SUPPORTED.includes(platform), `this machine (${platform}) is a supported platform`)
})

test('a missing platform package names the platform, the package and the install command', () => {
  const app = install()
  try {
    for (const args of [IMPORT, REQUIRE, [join(app, 'node_modules', ...pkg.name.split('/'), 'bin', 'archmax.js'), '--help']]) {
      const r = run(app, args)
      assert.notEqual(r.status, 0, r.stdout)
      assert.ok(r.stderr.includes(`the native addon for this platform (${platform}:`), r.stderr)
      assert.ok(r.stderr.includes(`the package ${expected} is not installed`), r.stderr)
      assert.ok(r.stderr.includes(`npm install ${expected}@${pkg.version}`), r.stderr)
      assert.ok(r.stderr.includes('ERR_ARCHMAX_NATIVE_BINDING'), r.stderr)
      assert.doesNotMatch(r.stderr, /npm has a bug/)
    }
  } finally {
    rmSync(app, { recursive: true, force: true })
  }
})

test('a platform package whose addon does not load says so, with the loader error', () => {
  const app = install()
  try {
    platformPackage(app, { text: 'not an addon' })
    const r = run(app, IMPORT)
    assert.notEqual(r.status, 0)
    assert.ok(r.stderr.includes(`${expected} ${pkg.version} is installed but its addon does not load on this machine`), r.stderr)
    assert.match(r.stderr, /invalid ELF header|not a valid|file too short/i)
    assert.doesNotMatch(r.stderr, /npm has a bug/)
  } finally {
    rmSync(app, { recursive: true, force: true })
  }
})

test('a platform off the supported list is named with the list', () => {
  const app = install()
  try {
    const preload = `data:text/javascript,Object.defineProperty(process, 'arch', { value: 'mips' })`
    const r = run(app, ['--import', preload, ...IMPORT])
    assert.notEqual(r.status, 0)
    const off = platform.replace(process.arch, 'mips')
    assert.ok(r.stderr.includes(`has no native build for this platform (${off}:`), r.stderr)
    assert.ok(r.stderr.includes(`Supported: ${SUPPORTED.join(', ')}`), r.stderr)
    assert.doesNotMatch(r.stderr, /npm has a bug/)
  } finally {
    rmSync(app, { recursive: true, force: true })
  }
})

test('with the platform package in place, import and require load the addon from it', () => {
  const built = join(ROOT, `${pkg.napi.binaryName}.${platform}.node`)
  assert.ok(existsSync(built), 'npm run build put the addon at the root')
  const app = install()
  try {
    platformPackage(app, { link: built })
    for (const args of [IMPORT, REQUIRE]) {
      const r = run(app, args)
      assert.equal(r.status, 0, r.stderr)
      assert.equal(r.stdout.trim(), 'function')
    }
  } finally {
    rmSync(app, { recursive: true, force: true })
  }
})

test('the hand-written modules reach the generated loader only through native.js', () => {
  const pkgFiles = ['js', 'bin'].flatMap((dir) => readdirSync(join(ROOT, dir)).filter((f) => f.endsWith('.js')).map((f) => `${dir}/${f}`))
  for (const file of pkgFiles) {
    if (file === 'js/native.js') continue
    const text = readFileSync(join(ROOT, file), 'utf8')
    assert.doesNotMatch(text, /from '(\.\.?\/)+index\.js'/, `${file} imports index.js directly`)
  }
})

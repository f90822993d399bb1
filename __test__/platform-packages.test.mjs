// The per-platform packages (issue 18 item 1): one npm/<platform>/ package per napi target,
// in step with package.json (scripts/sync-platform-packages.mjs), and a main tarball that
// carries no `.node` file.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { execFileSync, spawnSync } from 'node:child_process'
import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { ROOT } from './helpers.mjs'
import { drift, platformPackages, publishedManifest } from '../scripts/sync-platform-packages.mjs'

const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
const SCRIPT = join(ROOT, 'scripts', 'sync-platform-packages.mjs')

const EXPECTED = {
  'x86_64-unknown-linux-gnu': { dir: 'linux-x64-gnu', os: ['linux'], cpu: ['x64'], libc: ['glibc'] },
  'aarch64-unknown-linux-gnu': { dir: 'linux-arm64-gnu', os: ['linux'], cpu: ['arm64'], libc: ['glibc'] },
  'x86_64-unknown-linux-musl': { dir: 'linux-x64-musl', os: ['linux'], cpu: ['x64'], libc: ['musl'] },
  'aarch64-unknown-linux-musl': { dir: 'linux-arm64-musl', os: ['linux'], cpu: ['arm64'], libc: ['musl'] },
  'aarch64-apple-darwin': { dir: 'darwin-arm64', os: ['darwin'], cpu: ['arm64'] },
  'x86_64-apple-darwin': { dir: 'darwin-x64', os: ['darwin'], cpu: ['x64'] },
  'x86_64-pc-windows-msvc': { dir: 'win32-x64-msvc', os: ['win32'], cpu: ['x64'] },
}

/** A scratch copy of package.json and npm/, for drifting on purpose. */
function scratchCopy() {
  const dir = mkdtempSync(join(tmpdir(), 'archmax-npm-'))
  cpSync(join(ROOT, 'package.json'), join(dir, 'package.json'))
  cpSync(join(ROOT, 'npm'), join(dir, 'npm'), { recursive: true })
  return dir
}

test('every napi target has its npm/<platform> package with os, cpu, libc, main and files', () => {
  assert.deepEqual(readdirSync(join(ROOT, 'npm')).sort(), pkg.napi.targets.map((t) => EXPECTED[t].dir).sort())
  for (const triple of pkg.napi.targets) {
    const want = EXPECTED[triple]
    assert.ok(want, `${triple} has an expectation here`)
    const p = JSON.parse(readFileSync(join(ROOT, 'npm', want.dir, 'package.json'), 'utf8'))
    const binary = `${pkg.napi.binaryName}.${want.dir}.node`
    assert.equal(p.name, `${pkg.name}-${want.dir}`)
    assert.equal(p.version, pkg.version, `${p.name} is at the main package's version`)
    assert.deepEqual(p.os, want.os)
    assert.deepEqual(p.cpu, want.cpu)
    assert.deepEqual(p.libc, want.libc, `${p.name} libc`)
    assert.equal(p.main, binary)
    assert.deepEqual(p.files, [binary])
    assert.equal(p.license, pkg.license)
    assert.deepEqual(p.engines, pkg.engines)
    assert.match(readFileSync(join(ROOT, 'npm', want.dir, 'README.md'), 'utf8'), new RegExp(`\\*\\*${triple}\\*\\*`))
  }
})

test('the generated loader asks for the same package names', async () => {
  const loader = readFileSync(join(ROOT, 'index.js'), 'utf8')
  for (const p of await platformPackages()) assert.ok(loader.includes(`require('${p.name}')`), `index.js loads ${p.name}`)
})

test('npm/ is in step with package.json, and a drift is caught', async () => {
  assert.deepEqual(await drift(), [])
  const dir = scratchCopy()
  try {
    const bumped = { ...pkg, version: '9.9.9' }
    writeFileSync(join(dir, 'package.json'), JSON.stringify(bumped, null, 2) + '\n')
    rmSync(join(dir, 'npm', 'darwin-x64'), { recursive: true })
    writeFileSync(join(dir, 'npm', 'stale-target'), '')
    const problems = await drift(dir)
    assert.ok(problems.includes('npm/linux-x64-gnu/package.json differs from what package.json asks for'), problems.join('\n'))
    assert.ok(problems.includes('npm/darwin-x64/ is missing'), problems.join('\n'))
    assert.ok(problems.includes('npm/stale-target/ is not a napi.targets platform'), problems.join('\n'))
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
  const r = spawnSync(process.execPath, [SCRIPT, '--check'], { cwd: ROOT, encoding: 'utf8' })
  assert.equal(r.status, 0, r.stderr)
})

test('the published manifest depends on every platform package at the same version', async () => {
  const manifest = await publishedManifest()
  const names = (await platformPackages()).map((p) => p.name)
  assert.deepEqual(Object.keys(manifest.optionalDependencies).sort(), names.sort())
  for (const v of Object.values(manifest.optionalDependencies)) assert.equal(v, pkg.version)
  const { optionalDependencies, ...rest } = manifest
  assert.deepEqual(rest, pkg)
})

test('the main tarball carries no .node file, though the build left one beside index.js', () => {
  const built = readdirSync(ROOT).filter((f) => f.endsWith('.node'))
  assert.ok(built.length > 0, 'the build put a .node at the root (run npm run build first)')
  assert.ok(!pkg.files.some((f) => f.includes('.node')), 'files does not name .node files')
  const out = execFileSync('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], { cwd: ROOT, encoding: 'utf8' })
  const files = JSON.parse(out)[0].files.map((f) => f.path)
  assert.ok(files.includes('index.js') && files.includes('js/main.js'))
  assert.deepEqual(files.filter((f) => f.endsWith('.node')), [])
})

test('docs/packaging.md gives every package a size budget, and check-size holds a tarball to it', async () => {
  const { budgets, overBudget } = await import('../scripts/check-size.mjs')
  const table = budgets()
  for (const p of ['main', ...(await platformPackages()).map((p) => p.platform)]) {
    assert.ok(table[p] && table[p].packed > 0 && table[p].unpacked >= table[p].packed, `${p} has a budget`)
  }
  const b = table['linux-x64-gnu']
  assert.deepEqual(overBudget('linux-x64-gnu', { packed: b.packed, unpacked: b.unpacked }, table), [])
  assert.equal(overBudget('linux-x64-gnu', { packed: b.packed + 1, unpacked: 1 }, table).length, 1)
  assert.equal(overBudget('linux-x64-gnu', { packed: 1, unpacked: b.unpacked + 1 }, table).length, 1)
  assert.match(overBudget('sunos-x64', { packed: 1, unpacked: 1 }, table)[0], /no size budget/)
})

// scripts/check-binary.sh, the release bar scripts/pack.sh holds each Linux addon and CLI to,
// tried on the debug addon the build left at the root (this machine's glibc, with symbols).
const CHECK = join(ROOT, 'scripts', 'check-binary.sh')
const LOCAL = join(ROOT, `${pkg.napi.binaryName}.linux-x64-gnu.node`)
const checkBinary = (file, triple, env = {}) =>
  spawnSync('bash', [CHECK, file, triple], { encoding: 'utf8', env: { ...process.env, ...env } })

test('check-binary refuses the wrong architecture, glibc in a musl build, and unstripped files', { skip: process.platform !== 'linux' || process.arch !== 'x64' }, () => {
  let r = checkBinary(LOCAL, 'aarch64-unknown-linux-gnu')
  assert.equal(r.status, 1, r.stdout)
  assert.match(r.stderr, /\(aarch64-unknown-linux-gnu\): built for Advanced Micro Devices X86-64, not aarch64/)
  r = checkBinary(LOCAL, 'x86_64-unknown-linux-musl')
  assert.equal(r.status, 1, r.stdout)
  assert.match(r.stderr, /a musl build that needs GLIBC_2\.\d+/)
  // Past the glibc check (a floor no build reaches), the debug build's symbols are left.
  r = checkBinary(LOCAL, 'x86_64-unknown-linux-gnu', { PACK_GLIBC_FLOOR: '99.0' })
  assert.equal(r.status, 1, r.stdout)
  assert.match(r.stderr, /not stripped: it still has .*\.symtab/)
  assert.match(r.stderr, /\.debug_info/)
  r = checkBinary(join(ROOT, 'package.json'), 'x86_64-unknown-linux-gnu')
  assert.equal(r.status, 1)
  assert.match(r.stderr, /package\.json \(x86_64-unknown-linux-gnu\): not an ELF file/)
  r = checkBinary(LOCAL, 'x86_64-apple-darwin')
  assert.match(r.stderr, /not a Linux x86_64 or aarch64 triple/)
})

test('check-binary holds a glibc build to the 2.17 floor and passes a stripped one within it', { skip: process.platform !== 'linux' || process.arch !== 'x64' }, () => {
  const versions = execFileSync('readelf', ['-V', LOCAL], { encoding: 'utf8' }).match(/GLIBC_\d[\d.]*/g) ?? []
  const highest = versions.map((v) => v.slice(6).split('.').map(Number)).sort((a, b) => a[0] - b[0] || (a[1] ?? 0) - (b[1] ?? 0) || (a[2] ?? 0) - (b[2] ?? 0)).at(-1)
  assert.ok(highest, 'the debug addon names glibc symbol versions')
  const above = highest[0] > 2 || (highest[0] === 2 && highest[1] > 17)
  const r = checkBinary(LOCAL, 'x86_64-unknown-linux-gnu')
  assert.equal(r.status, 1)
  // This machine's glibc (Debian 12: 2.36) gives the debug build symbols above the floor.
  if (above) assert.match(r.stderr, new RegExp(`needs GLIBC_${highest.join('\\.')}, above the glibc 2\\.17 floor`))
  const dir = mkdtempSync(join(tmpdir(), 'archmax-check-binary-'))
  try {
    const stripped = join(dir, 'stripped.node')
    execFileSync('strip', ['--strip-all', '-o', stripped, LOCAL])
    const floor = highest.join('.')
    const ok = checkBinary(stripped, 'x86_64-unknown-linux-gnu', { PACK_GLIBC_FLOOR: floor })
    assert.equal(ok.status, 0, ok.stderr)
    assert.equal(ok.stdout.trim(), `check-binary: stripped.node: Advanced Micro Devices X86-64, highest glibc symbol version GLIBC_${floor} (floor ${floor}), stripped`)
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
})

test('pack.sh refuses a target outside napi.targets before it builds anything', () => {
  const out = mkdtempSync(join(tmpdir(), 'archmax-pack-out-'))
  try {
    const r = spawnSync('bash', [join(ROOT, 'scripts', 'pack.sh'), '--target', 'sparc64-sun-solaris'], {
      cwd: ROOT,
      encoding: 'utf8',
      env: { ...process.env, PACK_OUT: join(out, 'dist') },
    })
    assert.equal(r.status, 1)
    assert.match(r.stderr, /^pack: sparc64-sun-solaris is not one of package\.json's napi\.targets \(x86_64-unknown-linux-gnu /)
    assert.deepEqual(readdirSync(out), [], 'nothing was written')
    const bad = spawnSync('bash', [join(ROOT, 'scripts', 'pack.sh'), '--frobnicate'], { cwd: ROOT, encoding: 'utf8' })
    assert.equal(bad.status, 1)
    assert.match(bad.stderr, /unknown argument '--frobnicate'/)
  } finally {
    rmSync(out, { recursive: true, force: true })
  }
})

#!/usr/bin/env node
// The per-platform packages (npm/<platform>/), kept in step with package.json.
//
//   node scripts/sync-platform-packages.mjs              rewrite npm/ from package.json
//   node scripts/sync-platform-packages.mjs --check      exit 1 and name every drift
//   node scripts/sync-platform-packages.mjs --manifest F write F: the main package.json as
//                                                        published (optionalDependencies added)
//
// One package per `napi.targets` triple, written by napi's own `napi create-npm-dirs` (name
// `<packageName>-<platform>`, the main package's version, `os`, `cpu`, `libc`, `main`, `files`),
// plus a README of ours. The main package's `optionalDependencies` (one per platform package,
// at the same version) are written at pack time, as the napi-rs template's `napi prepublish`
// does: in the committed package.json they would break `npm ci` until the platform packages
// are published (the lockfile cannot hold a package the registry does not have).
import { execFileSync } from 'node:child_process'
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')
const NAPI = join(ROOT, 'node_modules', '@napi-rs', 'cli', 'dist', 'cli.js')

/** The platform packages package.json asks for: `[{ triple, platform, name, version }]`. */
export async function platformPackages(root = ROOT) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const { parseTriple } = await import(join(ROOT, 'node_modules', '@napi-rs', 'cli', 'dist', 'index.js'))
  const packageName = pkg.napi.packageName ?? pkg.name
  return pkg.napi.targets.map((triple) => {
    const { platformArchABI } = parseTriple(triple)
    return { triple, platform: platformArchABI, name: `${packageName}-${platformArchABI}`, version: pkg.version }
  })
}

function readme(pkg, p) {
  return `# \`${p.name}\`

This is the **${p.triple}** binary of [\`${pkg.name}\`](https://www.npmjs.com/package/${pkg.name}).
Do not install it yourself: \`npm install ${pkg.name}\` picks the package for your platform
through its \`optionalDependencies\`.
`
}

/** Writes the npm/ folder package.json asks for into `<root>/npm` (the files only; `.node` files stay). */
async function write(root) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const wanted = await platformPackages(root)
  execFileSync(process.execPath, [NAPI, 'create-npm-dirs', '--cwd', root], { stdio: 'pipe' })
  for (const p of wanted) writeFileSync(join(root, 'npm', p.platform, 'README.md'), readme(pkg, p))
  // A target dropped from napi.targets leaves no package behind.
  const keep = new Set(wanted.map((p) => p.platform))
  for (const dir of readdirSync(join(root, 'npm'))) {
    if (!keep.has(dir)) rmSync(join(root, 'npm', dir), { recursive: true, force: true })
  }
}

/** Every difference between the committed npm/ and what package.json asks for, as sentences. */
export async function drift(root = ROOT) {
  const scratch = mkdtempSync(join(tmpdir(), 'archmax-npm-dirs-'))
  try {
    cpSync(join(root, 'package.json'), join(scratch, 'package.json'))
    await write(scratch)
    const problems = []
    const have = existsSync(join(root, 'npm')) ? readdirSync(join(root, 'npm')) : []
    for (const dir of readdirSync(join(scratch, 'npm'))) {
      if (!have.includes(dir)) {
        problems.push(`npm/${dir}/ is missing`)
        continue
      }
      for (const file of readdirSync(join(scratch, 'npm', dir))) {
        const path = join(root, 'npm', dir, file)
        if (!existsSync(path)) problems.push(`npm/${dir}/${file} is missing`)
        else if (readFileSync(path, 'utf8') !== readFileSync(join(scratch, 'npm', dir, file), 'utf8')) {
          problems.push(`npm/${dir}/${file} differs from what package.json asks for`)
        }
      }
    }
    for (const dir of have) {
      if (!existsSync(join(scratch, 'npm', dir))) problems.push(`npm/${dir}/ is not a napi.targets platform`)
    }
    return problems
  } finally {
    rmSync(scratch, { recursive: true, force: true })
  }
}

/** The main package.json as published: package.json plus one optional dependency per platform. */
export async function publishedManifest(root = ROOT) {
  const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'))
  const optionalDependencies = {}
  for (const p of await platformPackages(root)) optionalDependencies[p.name] = p.version
  return { ...pkg, optionalDependencies }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [flag, arg] = process.argv.slice(2)
  if (flag === '--check') {
    const problems = await drift()
    if (problems.length) {
      for (const p of problems) console.error(p)
      console.error('npm/ is out of step with package.json: run node scripts/sync-platform-packages.mjs')
      process.exit(1)
    }
    console.log('npm/ matches package.json')
  } else if (flag === '--manifest') {
    if (!arg) throw new Error('--manifest needs a file to write')
    writeFileSync(arg, JSON.stringify(await publishedManifest(), null, 2) + '\n')
  } else if (flag === undefined) {
    await write(ROOT)
    console.log(`npm/: ${(await platformPackages()).map((p) => p.platform).join(', ')}`)
  } else {
    console.error(`unknown option ${flag}`)
    process.exit(2)
  }
}

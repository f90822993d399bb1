#!/usr/bin/env node
// The size budget of each platform package (issue 18 item 2), read from the table in
// docs/packaging.md, checked against packed tarballs:
//
//   node scripts/check-size.mjs dist/archmax-ai-harness-linux-x64-gnu-0.9.0.tgz ...
//
// A tarball's platform is the npm/<platform> its name ends with; the main package's tarball
// (no platform) has its own row, `main`.
import { readFileSync, statSync } from 'node:fs'
import { execFileSync } from 'node:child_process'
import { basename, dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..')

/** `{ <platform|main>: { packed, unpacked } }` in bytes, from docs/packaging.md's budget table. */
export function budgets(doc = readFileSync(join(ROOT, 'docs', 'packaging.md'), 'utf8')) {
  const out = {}
  for (const m of doc.matchAll(/^\| `([a-z0-9-]+)` \| [^|]*\| ([\d.]+) MB \| ([\d.]+) MB \|/gm)) {
    out[m[1]] = { packed: Number(m[2]) * 1e6, unpacked: Number(m[3]) * 1e6 }
  }
  return out
}

/** The over-budget sentences for one package's sizes (`[]` when within). */
export function overBudget(which, { packed, unpacked }, table = budgets()) {
  const b = table[which]
  if (!b) return [`${which} has no size budget in docs/packaging.md`]
  const problems = []
  const mb = (n) => `${(n / 1e6).toFixed(1)} MB`
  if (packed > b.packed) problems.push(`${which}: packed ${mb(packed)} is over its ${mb(b.packed)} budget`)
  if (unpacked > b.unpacked) problems.push(`${which}: unpacked ${mb(unpacked)} is over its ${mb(b.unpacked)} budget`)
  return problems
}

/** A tarball's packed and unpacked sizes (the sum of its files). */
export function sizes(tgz) {
  const listing = execFileSync('tar', ['-tvzf', tgz], { encoding: 'utf8' })
  const unpacked = listing.split('\n').filter(Boolean).reduce((sum, line) => sum + Number(line.trim().split(/\s+/)[2]), 0)
  return { packed: statSync(tgz).size, unpacked }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8'))
  const stem = pkg.name.replace(/^@/, '').replace('/', '-')
  const table = budgets()
  let failed = false
  for (const tgz of process.argv.slice(2)) {
    const rest = basename(tgz).slice(stem.length).replace(`-${pkg.version}.tgz`, '').replace(/^-/, '')
    const which = rest || 'main'
    const s = sizes(tgz)
    const problems = overBudget(which, s, table)
    console.log(`${which}: packed ${(s.packed / 1e6).toFixed(1)} MB, unpacked ${(s.unpacked / 1e6).toFixed(1)} MB (budget ${table[which] ? `${table[which].packed / 1e6} / ${table[which].unpacked / 1e6} MB` : 'none'})`)
    for (const p of problems) console.error(p)
    failed ||= problems.length > 0
  }
  process.exit(failed ? 1 : 0)
}

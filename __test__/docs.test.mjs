// The documentation holds together: docs/ is a user's guide with no tracker or lab-notebook
// talk; every relative link (and its #anchor) in the docs, the README, CONTRIBUTING.md,
// ARCHITECTURE.md, the decision records and the benchmark history resolves; a link from docs/
// stays inside what the npm package ships; the decision records are numbered, complete and
// indexed; and every path to a doc or a decision record named in the code exists.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs'
import { dirname, join, relative, resolve, sep } from 'node:path'
import { ROOT } from './helpers.mjs'

const read = (p) => readFileSync(join(ROOT, p), 'utf8')
const DOCS = readdirSync(join(ROOT, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)
const RECORDS_DIR = 'design/decisions'
const RECORDS = readdirSync(join(ROOT, RECORDS_DIR)).filter((f) => f.endsWith('.md') && f !== 'README.md').sort()

/** The text outside fenced code blocks. */
function prose(text) {
  let fenced = false
  return text
    .split('\n')
    .map((line) => {
      if (/^\s*(```|~~~)/.test(line)) {
        fenced = !fenced
        return ''
      }
      return fenced ? '' : line
    })
    .join('\n')
}

/** GitHub's anchors for a markdown file's headings. */
function anchors(text) {
  const seen = new Map()
  const out = new Set()
  for (const [, heading] of prose(text).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = heading
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    out.add(n ? `${base}-${n}` : base)
  }
  return out
}

/** Relative links of a markdown file: `[text](target)` outside code, without URLs. */
function links(text) {
  const out = []
  for (const [, target] of prose(text).replace(/`[^`\n]*`/g, '').matchAll(/\]\(([^)\s]+)\)/g)) {
    if (/^[a-z]+:/i.test(target)) continue
    out.push(target)
  }
  return out
}

function checkLinks(file) {
  const problems = []
  const text = read(file)
  for (const link of links(text)) {
    const [path, anchor] = link.split('#')
    const target = path ? join(dirname(file), path) : file
    if (!existsSync(join(ROOT, target))) {
      problems.push(`${file}: ${link}: no such file`)
      continue
    }
    if (anchor && target.endsWith('.md') && !anchors(read(target)).has(anchor)) {
      problems.push(`${file}: ${link}: no heading with the anchor #${anchor} in ${target}`)
    }
  }
  return problems
}

test('docs/ has no tracker or lab-notebook talk', () => {
  const banned = [
    /\bissue \d/i,
    /\(issue\b/i,
    /\bstop \d/i,
    /\bslice of issue/i,
    /\bitem \d/i,
    /\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth) round\b/i,
    /\bthis machine\b/i,
    /\bdevelopment machine\b/i,
    /\bwithout a journal\b/i,
  ]
  const found = []
  for (const file of DOCS) {
    read(file)
      .split('\n')
      .forEach((line, i) => {
        for (const re of banned) if (re.test(line)) found.push(`${file}:${i + 1}: ${line.trim()}`)
      })
  }
  assert.deepEqual(found, [])
})

test('every relative link in the docs, the README, the guides, the records and the history resolves', () => {
  const files = [
    ...DOCS,
    'README.md',
    'CONTRIBUTING.md',
    'ARCHITECTURE.md',
    'benches/HISTORY.md',
    `${RECORDS_DIR}/README.md`,
    ...RECORDS.map((f) => `${RECORDS_DIR}/${f}`),
  ]
  assert.deepEqual(files.flatMap(checkLinks), [])
})

test('a link from docs/ stays inside what the npm package ships', () => {
  const pkg = JSON.parse(read('package.json'))
  const shipped = (rel) =>
    rel.startsWith(`docs${sep}`) ? rel.endsWith('.md') || existsSync(join(ROOT, rel)) : pkg.files.some((f) => rel === f || rel.startsWith(`${f}${sep}`))
  const outside = []
  for (const file of DOCS) {
    for (const link of links(read(file))) {
      const path = link.split('#')[0]
      if (!path) continue
      const rel = relative(ROOT, resolve(ROOT, dirname(file), path))
      if (!shipped(rel)) outside.push(`${file}: ${link}`)
    }
  }
  assert.deepEqual(outside, [])
})

test('the decision records are numbered in order, complete, and each listed once in the index', () => {
  RECORDS.forEach((f, i) => {
    const m = f.match(/^(\d{4})-[a-z0-9]+(?:-[a-z0-9]+)*\.md$/)
    assert.ok(m, `${f} is named NNNN-short-slug.md`)
    assert.equal(Number(m[1]), i + 1, `${f}: the records are numbered 0001, 0002, … with no gap`)
    const text = read(`${RECORDS_DIR}/${f}`)
    assert.ok(text.startsWith(`# ${m[1]}. `), `${f} opens with '# ${m[1]}. <title>'`)
    for (const section of ['## Decision', '## Why', '## Replaces']) {
      assert.ok(text.includes(`\n${section}\n`), `${f} has a '${section}' section`)
    }
  })
  const index = read(`${RECORDS_DIR}/README.md`)
  for (const f of RECORDS) {
    assert.equal(index.split(`](${f})`).length - 1, 1, `${f} is listed once in ${RECORDS_DIR}/README.md`)
  }
})

test('every doc or decision record the code names exists', () => {
  const skip = new Set(['node_modules', 'target', '.git', 'dist', 'npm'])
  const exts = /\.(rs|js|mjs|ts|sh|toml|md|yml|yaml)$/
  const missing = []
  const walk = (dir) => {
    for (const name of readdirSync(join(ROOT, dir))) {
      if (skip.has(name)) continue
      const rel = dir ? `${dir}/${name}` : name
      const st = statSync(join(ROOT, rel))
      if (st.isDirectory()) walk(rel)
      else if (exts.test(name)) {
        const text = read(rel)
        for (const [ref] of text.matchAll(/\b(?:docs\/[a-z0-9-]+\.md|design\/decisions\/\d{4}-[a-z0-9-]+\.md|benches\/HISTORY\.md)/g)) {
          if (!existsSync(join(ROOT, ref))) missing.push(`${rel}: ${ref}`)
        }
      }
    }
  }
  walk('')
  assert.deepEqual(missing, [])
})

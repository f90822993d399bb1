// The inbox's pure parts (crates/serve/src/inbox/markdown.js and when.js, served ahead of
// inbox.js): the safe markdown's tree and the relative times. Browser scripts, evaluated
// here on their own, with no DOM.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import vm from 'node:vm'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const read = (name) => readFileSync(join(ROOT, 'crates/serve/src/inbox', name), 'utf8')
const { markdownTree, relativeTime, instant, MARKDOWN_TAGS } = vm.runInNewContext(
  `${read('markdown.js')}\n${read('when.js')}\n;({ markdownTree, relativeTime, instant, MARKDOWN_TAGS })`, {})
const tree = (text) => JSON.parse(JSON.stringify(markdownTree(text)))

test('markdown: headings, joined paragraphs, lists with continued items, quotes, code', () => {
  assert.deepEqual(tree('## Check\nThe order number\nand the amount.\n\n- Approve to confirm the refund\n  as proposed.\n- Reject.\n\n2. two\n3. three\n> a note\n```\nx <b>\n```'), [
    { t: 'h4', c: ['Check'] },
    { t: 'p', c: ['The order number and the amount.'] },
    { t: 'ul', c: [{ t: 'li', c: ['Approve to confirm the refund as proposed.'] }, { t: 'li', c: ['Reject.'] }] },
    { t: 'ol', start: 2, c: [{ t: 'li', c: ['two'] }, { t: 'li', c: ['three'] }] },
    { t: 'blockquote', c: [{ t: 'p', c: ['a note'] }] },
    { t: 'pre', c: [{ t: 'code', c: ['x <b>'] }] },
  ])
})

test('markdown: inline code, strong, emphasis and http(s)/mailto links only', () => {
  assert.deepEqual(tree('Read `refund.json`, **check** the *amount* and snake_case_names, see [the policy](https://shop.example/policy).'), [
    { t: 'p', c: ['Read ', { t: 'code', c: ['refund.json'] }, ', ', { t: 'strong', c: ['check'] }, ' the ', { t: 'em', c: ['amount'] }, ' and snake_case_names, see ', { t: 'a', href: 'https://shop.example/policy', c: ['the policy'] }, '.'] },
  ])
  for (const bad of ['javascript:alert(1)', 'data:text/html,x', 'vbscript:x', '/relative']) {
    const [p] = tree(`[x](${bad})`)
    assert.ok(p.c.every((n) => typeof n === 'string'), `${bad} stays text: ${JSON.stringify(p)}`)
  }
})

test('markdown: raw HTML is text, and every node is of the short list of tags', () => {
  const nodes = tree('<script>window.pwned = 1</script>\n\n<img src=x onerror="window.pwned = 1">\n- **<b>bold</b>**')
  assert.deepEqual(nodes[0], { t: 'p', c: ['<script>window.pwned = 1</script>'] })
  assert.deepEqual(nodes[1], { t: 'p', c: ['<img src=x onerror="window.pwned = 1">'] })
  const walk = (n) => {
    if (typeof n === 'string') return
    assert.ok(MARKDOWN_TAGS.includes(n.t), n.t)
    assert.deepEqual(Object.keys(n).filter((k) => !['t', 'c', 'href', 'start'].includes(k)), [])
    n.c.forEach(walk)
  }
  nodes.forEach(walk)
})

test('relative times: seconds to days, past and to come', () => {
  const now = Date.parse('2026-03-10T12:00:00Z')
  assert.equal(relativeTime(now - 2000, now), 'just now')
  assert.equal(relativeTime(now - 42_000, now), '42 s ago')
  assert.equal(relativeTime(now - 3 * 60_000, now), '3 min ago')
  assert.equal(relativeTime(now - 3 * 3_600_000 - 5, now), '3 h ago')
  assert.equal(relativeTime(now - 2 * 86_400_000, now), '2 d ago')
  assert.equal(relativeTime(now + 20 * 60_000, now), 'in 20 min')
  assert.equal(instant('2026-03-10T09:00:00Z'), now - 3 * 3_600_000)
  assert.equal(instant(1767261600000), 1767261600000)
  assert.equal(instant('not a time'), null)
  assert.equal(instant(undefined), null)
})

// A small, safe markdown for the inbox (a decision's instructions, markdown evidence). Pure
// (no DOM): it answers a tree of `{ t, c }` nodes (`t` a tag of TAGS, `c` the children,
// strings are text) that inbox.js builds with createElement and text nodes, never with
// innerHTML; so raw HTML in the text (`<script>`, `<img onerror>`) is shown as the text it
// is. Served ahead of inbox.js, tested from Node (__test__/inbox-text.test.mjs).
//
// The subset: headings (#..####), paragraphs (wrapped lines joined), bullet and numbered
// lists (indented lines continue an item), block quotes, fenced code, and inline `code`,
// **strong**, *emphasis*/_emphasis_ and [links](https://…) (http, https and mailto only;
// any other link stays text).
'use strict'

const MARKDOWN_TAGS = ['h3', 'h4', 'h5', 'h6', 'p', 'ul', 'ol', 'li', 'blockquote', 'pre', 'code', 'strong', 'em', 'a']

// A link's address, when it is one the inbox may open: http, https or mailto.
function safeHref (url) {
  const u = String(url || '').trim()
  return /^(https?:\/\/|mailto:)[^\s"'<>`]+$/i.test(u) ? u : null
}

// Inline markup of one run of text, as nodes.
function inline (text) {
  const out = []
  let rest = String(text)
  // Underscores mark up only at word edges (snake_case and window.__name stay text).
  const pattern = /`([^`]+)`|\*\*([^*]+?)\*\*|(?:^|(?<=[\s(]))__([^_\s][^_]*?)__(?=$|[\s).,;:!?])|\*([^*\s][^*]*?)\*|(?:^|(?<=[\s(]))_([^_\s][^_]*?)_(?=$|[\s).,;:!?])|\[([^\]]+)\]\(([^)\s]+)\)/
  while (rest) {
    const m = rest.match(pattern)
    if (!m) { out.push(rest); break }
    if (m.index > 0) out.push(rest.slice(0, m.index))
    if (m[1] !== undefined) out.push({ t: 'code', c: [m[1]] })
    else if (m[2] !== undefined || m[3] !== undefined) out.push({ t: 'strong', c: inline(m[2] ?? m[3]) })
    else if (m[4] !== undefined || m[5] !== undefined) out.push({ t: 'em', c: inline(m[4] ?? m[5]) })
    else {
      const href = safeHref(m[7])
      out.push(href ? { t: 'a', href, c: inline(m[6]) } : m[0])
    }
    rest = rest.slice(m.index + m[0].length)
  }
  return out
}

// The text as block nodes.
function markdownTree (text) {
  const lines = String(text || '').replace(/\r\n?/g, '\n').split('\n')
  const blocks = []
  let para = null // lines of the open paragraph
  let list = null // { node, item: lines of the open item }
  let quote = null // lines of the open block quote
  const closePara = () => { if (para) { blocks.push({ t: 'p', c: inline(para.join(' ')) }); para = null } }
  const closeItem = () => { if (list && list.item) { list.node.c.push({ t: 'li', c: inline(list.item.join(' ')) }); list.item = null } }
  const closeList = () => { closeItem(); if (list) { blocks.push(list.node); list = null } }
  const closeQuote = () => { if (quote) { blocks.push({ t: 'blockquote', c: markdownTree(quote.join('\n')) }); quote = null } }
  const closeAll = () => { closePara(); closeList(); closeQuote() }
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]
    const fence = line.match(/^\s*```/)
    if (fence) {
      closeAll()
      const code = []
      for (i++; i < lines.length && !/^\s*```/.test(lines[i]); i++) code.push(lines[i])
      blocks.push({ t: 'pre', c: [{ t: 'code', c: [code.join('\n')] }] })
      continue
    }
    if (!line.trim()) { closeAll(); continue }
    const q = line.match(/^\s*>\s?(.*)$/)
    if (q) { closePara(); closeList(); (quote = quote || []).push(q[1]); continue }
    closeQuote()
    const h = line.match(/^(#{1,4})\s+(.*?)\s*#*\s*$/)
    if (h) { closeAll(); blocks.push({ t: `h${h[1].length + 2}`, c: inline(h[2]) }); continue }
    const bullet = line.match(/^\s*[-*+]\s+(.*)$/)
    const numbered = line.match(/^\s*(\d{1,9})[.)]\s+(.*)$/)
    if (bullet || numbered) {
      closePara()
      const tag = bullet ? 'ul' : 'ol'
      if (list && list.node.t !== tag) closeList()
      if (!list) {
        list = { node: { t: tag, c: [] }, item: null }
        if (numbered && numbered[1] !== '1') list.node.start = Number(numbered[1])
      }
      closeItem()
      list.item = [bullet ? bullet[1] : numbered[2]]
      continue
    }
    if (list && list.item && /^\s+\S/.test(line)) { list.item.push(line.trim()); continue }
    closeList()
    ;(para = para || []).push(line.trim())
  }
  closeAll()
  return blocks
}

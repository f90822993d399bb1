// The archmax inbox: pending decisions and waits, one decision in full, a button per
// declared edge, the result streamed live. Talks only to this server.
'use strict'

const $ = (id) => document.getElementById(id)
const el = (tag, attrs = {}, ...kids) => {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (k === 'text') node.textContent = v
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v)
    else node.setAttribute(k, v)
  }
  for (const kid of kids) if (kid != null) node.append(kid)
  return node
}

let token = sessionStorage.getItem('archmax-token') || ''
let sessions = []
let current = null

function headers (extra = {}) {
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra
}

async function api (path, options = {}) {
  const res = await fetch(path, { ...options, headers: headers(options.headers) })
  if (res.status === 401) {
    $('token-form').hidden = false
    throw new Error('This server needs a token.')
  }
  const kind = res.headers.get('content-type') || ''
  const body = kind.includes('json') ? await res.json() : await res.text()
  if (!res.ok) throw new Error(body && body.error ? body.error : `${res.status} ${res.statusText}`)
  return body
}

function status (text) { $('status').textContent = text || '' }

// Where a session stands, in words (the `standing` the server computes; docs/sessions.md).
function standingWords (st) {
  const at = st.state ? ` at '${st.state}'` : ''
  switch (st.kind) {
    case 'awaiting-decision': return `awaiting a decision${at}`
    case 'awaiting-input': return `awaiting input${at}`
    case 'waiting': return `waiting${at} until ${st.until || '?'}`
    case 'idle': return `idle${at} (not a terminal state)`
    case 'failed': return `failed${at}${st.resumable ? ', resumable' : ''}`
    case 'cancelled': return `cancelled${at}, resumable`
    default: return `${st.kind}${at}`
  }
}

function age (since) {
  if (typeof since !== 'number') return ''
  const s = Math.max(0, Math.floor((Date.now() - since) / 1000))
  if (s < 60) return `${s}s`
  if (s < 3600) return `${Math.floor(s / 60)}m`
  if (s < 86400) return `${Math.floor(s / 3600)}h`
  return `${Math.floor(s / 86400)}d`
}

async function refresh () {
  try {
    const [decisions, waits, attention] = await Promise.all([
      api('/sessions?awaiting=decision'),
      api('/sessions?awaiting=input'),
      api('/sessions?attention=true')
    ])
    sessions = decisions
    renderWorkflows(decisions.concat(waits, attention))
    renderList($('decisions'), decisions, (s) => s.park.title || s.park.state)
    renderList($('waits'), waits, (s) => `${s.park.title || s.park.state}: ${s.park.reason || ''}`, true)
    renderAttention($('attention'), attention)
    $('decision-count').textContent = `(${filtered(decisions).length})`
    status('')
  } catch (e) { status(e.message) }
}

// The attention view, read-only: a decision among them opens like the others.
function renderAttention (ul, list) {
  const w = $('filter-workflow').value
  const q = $('filter-text').value.trim().toLowerCase()
  const shown = list.filter((s) => (!w || s.workflow === w) &&
    (!q || [s.sessionId, s.workflowState || ''].some((t) => t.toLowerCase().includes(q))))
  const items = shown.map((s) => {
    const button = el('button', { type: 'button', 'data-session': s.sessionId, 'data-standing': s.standing.kind },
      standingWords(s.standing), el('small', { text: `${s.workflow || ''} · ${s.sessionId} · ${age(s.standing.since)}` }))
    if (s.standing.kind === 'awaiting-decision') button.addEventListener('click', () => open(s.sessionId))
    else button.disabled = true
    return el('li', {}, button)
  })
  $('attention-count').textContent = `(${shown.length})`
  ul.replaceChildren(...(items.length ? items : [el('li', { class: 'empty', text: 'Nothing is stalled.' })]))
}

function renderWorkflows (all) {
  const select = $('filter-workflow')
  const chosen = select.value
  const names = [...new Set(all.map((s) => s.workflow).filter(Boolean))].sort()
  select.replaceChildren(el('option', { value: '', text: 'all' }), ...names.map((n) => el('option', { value: n, text: n })))
  select.value = names.includes(chosen) ? chosen : ''
}

function filtered (list) {
  const w = $('filter-workflow').value
  const q = $('filter-text').value.trim().toLowerCase()
  return list.filter((s) => (!w || s.workflow === w) &&
    (!q || [s.sessionId, s.park.state, s.park.title || ''].some((t) => t.toLowerCase().includes(q))))
}

function renderList (ul, list, label, waits = false) {
  const items = filtered(list).map((s) => {
    const when = waits ? (s.park.resumeAt ? `due ${s.park.resumeAt}` : 'no due time') : `since ${s.park.createdAt}`
    const button = el('button', { type: 'button', 'data-session': s.sessionId },
      label(s), el('small', { text: `${s.workflow || ''} · ${s.sessionId} · ${when}` }))
    if (!waits) button.addEventListener('click', () => open(s.sessionId))
    else button.disabled = true
    if (current === s.sessionId) button.setAttribute('aria-current', 'true')
    return el('li', {}, button)
  })
  ul.replaceChildren(...(items.length ? items : [el('li', { class: 'empty', text: waits ? 'No session waits.' : 'Nothing to decide.' })]))
}

// A small, safe markdown: headings, lists, code blocks, paragraphs; all text escaped.
function markdown (text) {
  const root = el('div', { class: 'md' })
  let list = null
  let code = null
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) {
      if (code) { root.append(code); code = null } else code = el('pre')
      continue
    }
    if (code) { code.append(line + '\n'); continue }
    const h = line.match(/^(#{1,4})\s+(.*)$/)
    const li = line.match(/^\s*[-*]\s+(.*)$/)
    if (li) {
      if (!list) { list = el('ul'); root.append(list) }
      list.append(el('li', { text: li[1] }))
      continue
    }
    list = null
    if (h) root.append(el(`h${Math.min(6, h[1].length + 2)}`, { text: h[2] }))
    else if (line.trim()) root.append(el('p', { text: line }))
  }
  if (code) root.append(code)
  return root
}

async function evidence (id, path) {
  const box = el('div', { class: 'evidence' }, el('h3', { text: path }))
  try {
    const res = await fetch(`/sessions/${encodeURIComponent(id)}/evidence/${path.split('/').map(encodeURIComponent).join('/')}`, { headers: headers() })
    if (!res.ok) throw new Error((await res.json()).error)
    const kind = res.headers.get('content-type') || ''
    if (kind.startsWith('image/')) box.append(el('img', { src: URL.createObjectURL(await res.blob()), alt: path }))
    else if (kind.includes('json')) box.append(el('pre', { text: JSON.stringify(await res.json(), null, 2) }))
    else if (kind.includes('markdown')) box.append(markdown(await res.text()))
    else box.append(el('pre', { text: await res.text() }))
  } catch (e) { box.append(el('p', { class: 'empty', text: e.message })) }
  return box
}

async function diagram (workflow, state) {
  const box = el('div', { class: 'diagram' })
  try {
    const res = await fetch(`/workflows/${encodeURIComponent(workflow)}/graph?format=svg`, { headers: headers() })
    if (!res.ok) throw new Error('no diagram')
    const doc = new DOMParser().parseFromString(await res.text(), 'image/svg+xml')
    const svg = document.importNode(doc.documentElement, true)
    for (const g of svg.querySelectorAll('g.state')) if (g.dataset.state === state) g.classList.add('current')
    box.append(svg)
  } catch (e) { box.append(el('p', { class: 'empty', text: e.message })) }
  return box
}

function transcript (messages) {
  const items = messages.filter((m) => typeof m.content === 'string' && m.content.trim())
    .map((m) => el('li', {}, el('span', { class: 'role', text: m.role }), m.content))
  return el('ol', { class: 'transcript' }, ...items)
}

async function open (id) {
  current = id
  await refresh()
  const s = sessions.find((x) => x.sessionId === id)
  const detail = $('detail')
  if (!s) { detail.replaceChildren(el('p', { class: 'empty', text: `Session ${id} is not waiting for a decision.` })); return }
  const park = s.park
  const comment = el('textarea', { id: 'comment', placeholder: 'Why (recorded with the decision)' })
  const live = el('div', { class: 'live', id: 'live', 'aria-label': 'Live events' })
  const result = el('p', { class: 'result', id: 'result' })
  const buttons = (park.transitions || []).filter((t) => t.to !== park.state).map((t, i) =>
    el('button', { type: 'button', class: t.type || 'none', 'data-target': t.to, onclick: () => decide(id, t.to, comment.value, live, result) },
      el('kbd', { text: String(i + 1) }), `${t.description || t.to} `, el('small', { text: `→ ${t.to}` })))
  const [files, graph, messages, full] = await Promise.all([
    Promise.all((park.evidence || []).map((p) => evidence(id, p))),
    diagram(s.workflow, park.state),
    api(`/sessions/${encodeURIComponent(id)}/messages`).catch(() => []),
    api(`/sessions/${encodeURIComponent(id)}`).catch(() => ({}))
  ])
  const trail = el('ol', { class: 'trail' }, ...(full.trail || []).map((t) =>
    el('li', { text: `${new Date(t.ts).toISOString()} → ${t.to} (${t.kind})${t.reason ? ': ' + t.reason : ''}` })))
  detail.replaceChildren(
    el('h2', { text: park.title || park.state }),
    el('p', { text: `${s.workflow} · session ${id} · parked at ${park.state} since ${park.createdAt}` }),
    park.approvers ? el('p', { text: `Approvers: ${park.approvers.join(', ')}` }) : null,
    park.instructions ? el('div', { class: 'instructions', text: park.instructions }) : null,
    ...files,
    el('h3', { text: 'Decide' }),
    el('label', { for: 'comment', text: 'Comment' }), comment,
    el('div', { class: 'edges', role: 'group', 'aria-label': 'Transitions' }, ...buttons),
    result, live,
    el('h3', { text: 'Where the session is' }), graph,
    el('h3', { text: 'Trail' }), trail,
    el('h3', { text: 'Transcript' }), transcript(messages)
  )
  if (buttons[0]) buttons[0].focus()
}

// Reads the session's event stream (fetch, so the token goes in a header) until stopped.
async function follow (id, since, live, signal) {
  const res = await fetch(`/sessions/${encodeURIComponent(id)}/events?since=${since}`, { headers: headers(), signal })
  const reader = res.body.getReader()
  const decoder = new TextDecoder()
  let buffer = ''
  for (;;) {
    const { value, done } = await reader.read()
    if (done) return
    buffer += decoder.decode(value, { stream: true })
    let cut
    while ((cut = buffer.indexOf('\n\n')) >= 0) {
      const block = buffer.slice(0, cut)
      buffer = buffer.slice(cut + 2)
      const data = block.split('\n').filter((l) => l.startsWith('data:')).map((l) => l.slice(5).trimStart()).join('\n')
      if (!data) continue
      const e = JSON.parse(data)
      // In words (sentences.js): a refusal with its reason, streamed pieces left out.
      const line = eventSentence(e)
      if (!line) continue
      live.append(el('div', { text: line.text, class: line.refused ? 'refused' : 'event', 'data-type': e.type }))
      live.scrollTop = live.scrollHeight
    }
  }
}

async function decide (id, target, comment, live, result) {
  for (const b of document.querySelectorAll('.edges button')) b.disabled = true
  const stop = new AbortController()
  const streaming = follow(id, 0, live, stop.signal).catch(() => {})
  try {
    const outcome = await api(`/sessions/${encodeURIComponent(id)}/decision`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(comment.trim() ? { target, comment } : { target })
    })
    result.textContent = `Session ${outcome.status}${outcome.state ? ' at ' + outcome.state : ''}${outcome.reply ? ': ' + outcome.reply : ''}`
    result.dataset.status = outcome.status
  } catch (e) {
    result.textContent = e.message
    result.dataset.status = 'error'
    for (const b of document.querySelectorAll('.edges button')) b.disabled = false
  }
  setTimeout(() => stop.abort(), 500)
  await streaming
  current = null
  await refresh()
}

document.addEventListener('keydown', (e) => {
  if (e.target.tagName === 'TEXTAREA' || e.target.tagName === 'INPUT') return
  const n = Number(e.key)
  if (n >= 1 && n <= 9) {
    const button = document.querySelectorAll('.edges button')[n - 1]
    if (button && !button.disabled) button.focus()
  }
})

$('token-form').addEventListener('submit', (e) => {
  e.preventDefault()
  token = $('token').value.trim()
  sessionStorage.setItem('archmax-token', token)
  $('token-form').hidden = true
  refresh()
})
$('filter-workflow').addEventListener('change', refresh)
$('filter-text').addEventListener('input', refresh)
refresh()

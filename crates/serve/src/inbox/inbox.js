// The archmax inbox: the sessions that need a person (decisions, waits, stalled work) or any
// standing, filtered by workflow, state and status and kept current by the server's notices
// (GET /events); one session in full, with a button per declared edge (disabled, with the
// reason, for someone who may not decide), a reply box, the result streamed live. Talks only
// to this server. Served after sentences.js, markdown.js and when.js.
'use strict'

const $ = (id) => document.getElementById(id)
// Children to append: nothing for null, undefined or false (append would write "null").
const present = (kids) => kids.filter((k) => k != null && k !== false)
const el = (tag, attrs = {}, ...kids) => {
  const node = document.createElement(tag)
  for (const [k, v] of Object.entries(attrs)) {
    if (v == null || v === false) continue
    if (k === 'text') node.textContent = v
    else if (k.startsWith('on')) node.addEventListener(k.slice(2), v)
    else node.setAttribute(k, v === true ? '' : v)
  }
  node.append(...present(kids))
  return node
}

let token = sessionStorage.getItem('archmax-token') || ''
let me = null // GET /me: { identity, tokens, approverOf, mayPrune }
let lists = { decisions: [], waits: [], attention: [], status: [] }
let current = null // the id of the session shown in full
let busy = false // a decision, reply or message of this tab is running

const FILTERS = ['filter-workflow', 'filter-state', 'filter-status', 'filter-text']

function headers (extra = {}) {
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra
}

class Unauthorized extends Error {}

async function api (path, options = {}) {
  const res = await fetch(path, { ...options, headers: headers(options.headers) })
  const kind = res.headers.get('content-type') || ''
  const body = kind.includes('json') ? await res.json() : await res.text()
  if (res.status === 401) {
    showTokenForm()
    throw new Unauthorized(token ? 'That token is not one of this server\'s (ARCHMAX_SERVE_TOKENS).' : 'This server needs a token.')
  }
  if (!res.ok) throw new Error(body && body.error ? body.error : `${res.status} ${res.statusText}`)
  return body
}

const post = (path, body) => api(path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) })
const sessionPath = (id, rest = '') => `/sessions/${encodeURIComponent(id)}${rest}`

function status (text) { $('status').textContent = text || '' }

// A time, relative ("3 h ago"), the ISO time as its tooltip; kept current by tick().
function timeEl (when, prefix = '') {
  const ms = instant(when)
  if (ms == null) return null
  const iso = new Date(ms).toISOString()
  return el('time', { datetime: iso, title: iso, 'data-ms': String(ms), 'data-prefix': prefix, text: prefix + relativeTime(ms, Date.now()) })
}

function tick () {
  for (const t of document.querySelectorAll('time[data-ms]')) t.textContent = (t.dataset.prefix || '') + relativeTime(Number(t.dataset.ms), Date.now())
}

// Markdown (markdown.js's tree) as DOM: elements from its short list, text as text nodes.
function renderMarkdown (text, cls = 'md') {
  const build = (node) => {
    if (typeof node === 'string') return document.createTextNode(node)
    if (!MARKDOWN_TAGS.includes(node.t)) return document.createTextNode('')
    const out = document.createElement(node.t)
    if (node.t === 'a' && safeHref(node.href)) {
      out.setAttribute('href', node.href)
      out.setAttribute('rel', 'noopener noreferrer')
      out.setAttribute('target', '_blank')
    }
    if (node.t === 'ol' && node.start) out.setAttribute('start', String(node.start))
    for (const kid of node.c || []) out.append(build(kid))
    return out
  }
  const root = el('div', { class: cls })
  for (const block of markdownTree(text)) root.append(build(block))
  return root
}

// Where a session stands, in words (the `standing` the server computes; docs/sessions.md).
function standingWords (st) {
  if (!st) return 'unknown'
  const at = st.state ? ` at '${st.state}'` : ''
  switch (st.kind) {
    case 'awaiting-decision': return `awaiting a decision${at}`
    case 'awaiting-input': return `awaiting input${at}`
    case 'waiting': return `waiting${at}`
    case 'idle': return `idle${at} (not a terminal state)`
    case 'failed': return `failed${at}${st.resumable ? ', resumable' : ''}`
    case 'cancelled': return `cancelled${at}, resumable`
    default: return `${st.kind}${at}`
  }
}

// --- who you are ----------------------------------------------------------------------

function showTokenForm () {
  $('token-form').hidden = false
  $('who').replaceChildren()
}

async function loadMe () {
  me = await api('/me')
  $('token-form').hidden = true
  const who = $('who')
  who.dataset.identity = me.identity
  if (me.tokens) {
    who.replaceChildren('Signed in as ', el('strong', { id: 'identity', text: me.identity }), ' ',
      el('button', { type: 'button', id: 'sign-out', onclick: signOut, text: 'Use another token' }))
  } else {
    who.replaceChildren('You are ', el('strong', { id: 'identity', text: me.identity }),
      el('small', { text: ' (this server has no tokens)' }))
  }
}

function signOut () {
  token = ''
  sessionStorage.removeItem('archmax-token')
  me = null
  showTokenForm()
  $('token').focus()
}

// Whether `me` may decide a park, and if not, why (and, on a server without tokens, how to
// get the right to).
function permission (s) {
  const approvers = (s.park && s.park.approvers) || []
  if (!approvers.length || (me && approvers.includes(me.identity))) return { may: true }
  const who = me ? me.identity : 'you'
  const reason = `You (${who}) are not an approver of this state: its approvers are ${approvers.join(', ')}.`
  if (me && me.tokens) return { may: false, reason }
  return {
    may: false,
    reason,
    hint: [
      'This server runs without tokens, so everyone here is \'local\'. To decide in the inbox, restart ',
      el('code', { text: 'archmax serve' }), ' with ',
      el('code', { text: `ARCHMAX_SERVE_TOKENS='${approvers[0]}=<a secret token>'` }),
      ' and sign in with that token; or decide from a shell: ',
      el('code', { text: `archmax decide ${s.sessionId} --to <state>` }), '.'
    ]
  }
}

// --- the lists --------------------------------------------------------------------------

const filterValue = (id) => $(id).value
function saveFilters () {
  const saved = {}
  for (const id of FILTERS) saved[id] = $(id).value
  localStorage.setItem('archmax-inbox-filters', JSON.stringify(saved))
}

function restoreFilters () {
  let saved = {}
  try { saved = JSON.parse(localStorage.getItem('archmax-inbox-filters') || '{}') } catch {}
  for (const id of FILTERS) {
    const value = saved[id] || ''
    const node = $(id)
    if (node.tagName === 'SELECT' && value && ![...node.options].some((o) => o.value === value)) node.append(el('option', { value, text: value }))
    node.value = value
  }
}

function setOptions (select, values, allText) {
  const chosen = select.value
  const all = [...new Set(values.concat(chosen ? [chosen] : []))].filter(Boolean).sort()
  select.replaceChildren(el('option', { value: '', text: allText }), ...all.map((v) => el('option', { value: v, text: v })))
  select.value = chosen
}

const stateOf = (s) => (s.park && s.park.state) || (s.standing && s.standing.state) || s.workflowState || ''

function matches (s) {
  const w = filterValue('filter-workflow')
  const st = filterValue('filter-state')
  const q = filterValue('filter-text').trim().toLowerCase()
  const words = [s.sessionId, stateOf(s), (s.park && s.park.title) || '', s.title || '', (s.park && s.park.reason) || '']
  return (!w || s.workflow === w) && (!st || stateOf(s) === st) && (!q || words.some((t) => String(t).toLowerCase().includes(q)))
}

// Refreshes overlap (a filter change, the server's notices): only the latest one's answer is
// shown, so an earlier, slower answer never overwrites a later one.
let refreshes = 0

async function refresh () {
  if (!me) return
  const ticket = ++refreshes
  try {
    const kind = filterValue('filter-status')
    if (kind) {
      const status = await api(`/sessions?status=${encodeURIComponent(kind)}`)
      if (ticket !== refreshes) return
      status.sort((a, b) => ((b.standing && b.standing.since) || 0) - ((a.standing && a.standing.since) || 0))
      lists.status = status
    } else {
      const [decisions, waits, attention] = await Promise.all([
        api('/sessions?awaiting=decision'),
        api('/sessions?awaiting=input'),
        api('/sessions?attention=true')
      ])
      if (ticket !== refreshes) return
      lists = { decisions, waits, attention, status: [] }
    }
    render()
    status('')
  } catch (e) { status(e.message) }
}

function render () {
  const kind = filterValue('filter-status')
  const all = kind ? lists.status : lists.decisions.concat(lists.waits, lists.attention)
  setOptions($('filter-state'), all.map(stateOf), 'all')
  for (const section of document.querySelectorAll('[data-list]')) section.hidden = (section.dataset.list === 'status') !== Boolean(kind)
  if (kind) {
    $('status-title').textContent = `Sessions ${standingWords({ kind })}`
    renderList($('sessions'), lists.status, 'No session stands so.', (s) => (s.title || standingWords(s.standing)),
      (s) => timeEl(s.standing && s.standing.since))
    $('status-count').textContent = `(${lists.status.filter(matches).length})`
    return
  }
  renderList($('decisions'), lists.decisions, 'Nothing to decide.', (s) => s.park.title || s.park.state,
    (s) => timeEl(s.park.createdAt, 'parked '))
  renderList($('waits'), lists.waits, 'No session waits.', (s) => `${s.park.title || s.park.state}: ${s.park.reason || ''}`,
    (s) => s.park.resumeAt ? timeEl(s.park.resumeAt, 'due ') : 'no due time')
  renderList($('attention'), lists.attention, 'Nothing is stalled.', (s) => standingWords(s.standing),
    (s) => timeEl(s.standing && s.standing.since, 'since '))
  $('decision-count').textContent = `(${lists.decisions.filter(matches).length})`
  $('attention-count').textContent = `(${lists.attention.filter(matches).length})`
}

function renderList (ul, list, empty, label, when) {
  const items = list.filter(matches).map((s) => {
    const button = el('button', { type: 'button', 'data-session': s.sessionId, 'data-standing': s.standing && s.standing.kind, onclick: () => open(s.sessionId) },
      label(s), el('small', {}, `${s.workflow || ''} · ${s.sessionId} · `, when(s)))
    if (current === s.sessionId) button.setAttribute('aria-current', 'true')
    return el('li', {}, button)
  })
  ul.replaceChildren(...(items.length ? items : [el('li', { class: 'empty', text: empty })]))
}

async function loadWorkflows () {
  try {
    const workflows = await api('/workflows')
    setOptions($('filter-workflow'), workflows.map((w) => w.workflow), 'all')
  } catch (e) { status(e.message) }
}

// --- live: the server's notices ---------------------------------------------------------

// Reads a Server-Sent Events stream with fetch (so the token goes in a header), calling
// `onEvent(name, data, id)` per event (after `onOpen`), until it ends or `signal` aborts.
async function readStream (path, onEvent, signal, onOpen) {
  const res = await fetch(path, { headers: headers(), signal })
  if (res.status === 401) { showTokenForm(); throw new Unauthorized('This server needs a token.') }
  if (!res.ok) throw new Error(`${path}: ${res.status}`)
  if (onOpen) onOpen()
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
      let name = 'message'
      let id = null
      const data = []
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) name = line.slice(6).trim()
        else if (line.startsWith('id:')) id = line.slice(3).trim()
        else if (line.startsWith('data:')) data.push(line.slice(5).trimStart())
      }
      if (data.length) onEvent(name, JSON.parse(data.join('\n')), id)
    }
  }
}

let noticeSeq = 0
let pending = null
function soon () {
  clearTimeout(pending)
  pending = setTimeout(refresh, 120)
}

function liveState (state, text) {
  const node = $('live-state')
  node.dataset.state = state
  node.textContent = text
}

// Follows GET /events for as long as the page is open, reconnecting after a drop: each
// notice refreshes the lists, and the open session's header when it is the one that changed.
async function watch () {
  let wait = 1000
  for (;;) {
    try {
      liveState('connecting', 'connecting…')
      await readStream(`/events?since=${noticeSeq}`, (name, data, id) => {
        if (id) noticeSeq = Math.max(noticeSeq, Number(id) || 0)
        if (name !== 'session') return
        soon()
        if (data.sessionId === current && !busy) showStanding(current)
      }, undefined, () => liveState('live', 'live'))
    } catch (e) {
      if (e instanceof Unauthorized) return
    }
    liveState('offline', 'reconnecting…')
    await new Promise((resolve) => setTimeout(resolve, wait))
    wait = Math.min(wait * 2, 30000)
    if (!me) return
    refresh()
  }
}

// --- one session ------------------------------------------------------------------------

async function evidence (id, path) {
  const box = el('div', { class: 'evidence' }, el('h3', { text: path }))
  try {
    const res = await fetch(sessionPath(id, `/evidence/${path.split('/').map(encodeURIComponent).join('/')}`), { headers: headers() })
    if (!res.ok) throw new Error((await res.json()).error)
    const kind = res.headers.get('content-type') || ''
    if (kind.startsWith('image/')) box.append(el('img', { src: URL.createObjectURL(await res.blob()), alt: path }))
    else if (kind.includes('json')) box.append(el('pre', { text: JSON.stringify(await res.json(), null, 2) }))
    else if (kind.includes('markdown')) box.append(renderMarkdown(await res.text()))
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

function trail (full) {
  return el('ol', { class: 'trail' }, ...(full.trail || []).map((t) =>
    el('li', {}, timeEl(t.ts), ` → ${t.to} (${t.kind})${t.reason ? ': ' + t.reason : ''}`)))
}

// Every committed step of the session, each with a button that forks a new session from it.
function history (id, steps) {
  return el('ol', { class: 'history', id: 'history' }, ...steps.map((s) =>
    el('li', { 'data-step': String(s.step) },
      el('span', { class: 'step', text: `${s.step}` }), ' ', timeEl(s.at), ` ${s.state} · ${s.what} `,
      el('button', {
        type: 'button',
        class: 'fork',
        title: `A new session from step ${s.step}; this one stays as it is`,
        onclick: () => fork(id, s.step)
      }, 'Fork from here'))))
}

async function fork (id, step) {
  try {
    const made = await post(sessionPath(id, '/fork'), { at: step })
    await refresh()
    await open(made.sessionId)
  } catch (e) { status(e.message) }
}

// The header line under the title: where the session stands now and, once a person decided,
// the decision (the last step of its trail that a person made).
function standingLine (full, park) {
  const line = el('p', { id: 'standing', 'data-standing': full.standing && full.standing.kind })
  const from = full.forkedFrom ? ` (forked from ${full.forkedFrom.sessionId} step ${full.forkedFrom.step})` : ''
  const lead = `${full.workflow || ''} · session ${full.sessionId}${from} · `
  if (full.park && (!park || full.park.seq === park.seq)) {
    const p = full.park
    const when = p.createdAt || p.parkedAt
    line.append(...present([lead, p.channel === 'input' ? `waiting in ${p.state} ` : `parked at ${p.state} `, timeEl(when)]))
    if (p.resumeAt) line.append(...present([' · due ', timeEl(p.resumeAt)]))
    return line
  }
  const decided = park && [...(full.trail || [])].reverse().find((t) => t.kind === 'human')
  if (decided) {
    line.dataset.decided = decided.to
    line.append(...present([lead, el('strong', { text: `Decided for ${decided.to}` }), decided.reason ? ` (“${decided.reason}”)` : '', ' ', timeEl(decided.ts),
      ` · now ${standingWords(full.standing)}`]))
    return line
  }
  line.append(...present([lead, standingWords(full.standing), ' ', timeEl(full.standing && full.standing.since, 'since ')]))
  return line
}

let shown = null // { id, park } of the open session, for its header

async function showStanding (id) {
  try {
    const full = await api(sessionPath(id))
    if (current !== id) return
    const old = $('standing')
    if (old) old.replaceWith(standingLine(full, shown && shown.park))
    if (shown && shown.park && shown.park.channel === 'decision' && !(full.park && full.park.seq === shown.park.seq)) {
      for (const b of document.querySelectorAll('.edges button')) {
        b.disabled = true
        b.title = 'This decision has been made.'
      }
    }
    await showHistory(id)
  } catch (e) { status(e.message) }
}

// The open session's history again, with the steps committed since it was shown.
async function showHistory (id) {
  const steps = await api(sessionPath(id, '/history')).catch(() => null)
  const old = $('history')
  if (current === id && steps && old) old.replaceWith(history(id, steps))
}

async function open (id) {
  current = id
  for (const b of document.querySelectorAll('.list button')) {
    if (b.dataset.session === id) b.setAttribute('aria-current', 'true')
    else b.removeAttribute('aria-current')
  }
  const detail = $('detail')
  let full
  try { full = await api(sessionPath(id)) } catch (e) {
    detail.replaceChildren(el('p', { class: 'empty', text: e.message }))
    return
  }
  const park = full.park || null
  shown = { id, park }
  const state = park ? park.state : full.workflowState
  const [files, graph, messages, steps] = await Promise.all([
    park && park.channel === 'decision' ? Promise.all((park.evidence || []).map((p) => evidence(id, p))) : [],
    full.workflow ? diagram(full.workflow, state) : null,
    api(sessionPath(id, '/messages')).catch(() => []),
    api(sessionPath(id, '/history')).catch(() => null)
  ])
  if (current !== id) return
  const live = el('div', { class: 'live', id: 'live', 'aria-label': 'Live events' })
  const result = el('p', { class: 'result', id: 'result' })
  const kind = full.standing && full.standing.kind
  let act = []
  if (park && park.channel === 'decision') act = decisionPart(full, park, files, live, result)
  else if (park) act = [el('p', { class: 'reason', text: `Waiting for: ${park.reason || '(no reason given)'}` }), replyPart(id, 'message', live, result)]
  else if (['idle', 'failed', 'cancelled'].includes(kind) && (full.standing.resumable || kind !== 'failed')) act = [replyPart(id, 'message', live, result)]
  detail.dataset.session = id
  detail.replaceChildren(...present([
    el('h2', { id: 'title', text: (park && park.title) || full.title || (park && park.state) || id }),
    standingLine(full, park),
    ...act,
    result, live,
    graph ? el('h3', { text: 'Where the session is' }) : null, graph,
    el('h3', { text: 'Trail' }), trail(full),
    steps ? el('h3', { text: 'History' }) : null, steps ? history(id, steps) : null,
    el('h3', { text: 'Transcript' }), transcript(messages)
  ]))
  if (park && park.channel === 'decision') ($('edges').querySelector('button:not(:disabled)') || $('comment')).focus()
  else if ($('reply')) $('reply').focus()
}

function decisionPart (full, park, files, live, result) {
  const id = full.sessionId
  const can = permission({ ...full, park })
  const comment = el('textarea', { id: 'comment', placeholder: 'Why (recorded with the decision)' })
  const why = can.may ? null : el('div', { id: 'not-allowed', class: 'denied', role: 'note' },
    el('p', { text: can.reason }), can.hint ? el('p', { id: 'no-token-hint' }, ...can.hint) : null)
  const buttons = (park.transitions || []).filter((t) => t.to !== park.state).map((t, i) =>
    el('button', {
      type: 'button',
      class: t.type || 'none',
      'data-target': t.to,
      disabled: !can.may,
      title: can.may ? null : can.reason,
      'aria-describedby': can.may ? null : 'not-allowed',
      onclick: () => decide(id, t, comment.value, live, result)
    }, el('kbd', { text: String(i + 1) }), `${t.description || t.to} `, el('small', { text: `→ ${t.to}` })))
  return [
    park.approvers && park.approvers.length ? el('p', { id: 'approvers', text: `Approvers: ${park.approvers.join(', ')}` }) : null,
    park.instructions ? renderMarkdown(park.instructions, 'instructions md') : null,
    el('div', { id: 'evidence' }, ...files),
    el('h3', { text: 'Decide' }),
    why,
    el('label', { for: 'comment', text: 'Comment' }), comment,
    el('div', { class: 'edges', id: 'edges', role: 'group', 'aria-label': 'Transitions' }, ...buttons),
    replyPart(id, 'reply', live, result)
  ]
}

// A reply box: `reply` asks the agent at a human state (the session stays parked);
// `message` sends the session a message (a session awaiting input takes it as its input).
function replyPart (id, how, live, result) {
  const box = el('textarea', { id: 'reply', placeholder: how === 'reply' ? 'A question or a note for the agent; the decision stays open' : 'Your reply; the session goes on with it' })
  const send = el('button', { type: 'submit', id: 'send-reply', text: how === 'reply' ? 'Ask the agent' : 'Send reply' })
  const form = el('form', { class: 'reply', id: 'reply-form' },
    el('h3', { text: how === 'reply' ? 'Ask the agent' : 'Reply' }),
    el('label', { for: 'reply', class: 'sr', text: 'Reply' }), box, send)
  form.addEventListener('submit', async (e) => {
    e.preventDefault()
    const message = box.value.trim()
    if (!message) { box.focus(); return }
    send.disabled = true
    await run(id, live, result, () => post(sessionPath(id, how === 'reply' ? '/reply' : '/messages'), { message }))
    box.value = ''
    send.disabled = false
  })
  return form
}

// Runs one arrival from this tab, streaming the session's events into `live` until its
// Outcome comes, then shows the Outcome and the session's new standing.
async function run (id, live, result, call) {
  busy = true
  const stop = new AbortController()
  live.replaceChildren()
  const streaming = readStream(sessionPath(id, `/events?since=${noticeSeq}`), (name, e) => {
    // In words (sentences.js): a refusal with its reason, streamed pieces left out.
    const line = eventSentence(e)
    if (!line) return
    live.append(el('div', { text: line.text, class: line.refused ? 'refused' : 'event', 'data-type': e.type }))
    live.scrollTop = live.scrollHeight
  }, stop.signal).catch(() => {})
  let ok = false
  try {
    const outcome = await call()
    result.textContent = `Session ${outcome.status}${outcome.state ? ' at ' + outcome.state : ''}${outcome.reply ? ': ' + outcome.reply : ''}`
    result.dataset.status = outcome.status
    ok = true
  } catch (e) {
    result.textContent = e.message
    result.dataset.status = 'error'
  }
  setTimeout(() => stop.abort(), 500)
  await streaming
  busy = false
  if (current === id) await showStanding(id)
  await refresh()
  return ok
}

async function decide (id, edge, comment, live, result) {
  const buttons = [...document.querySelectorAll('.edges button')]
  for (const b of buttons) b.disabled = true
  const body = comment.trim() ? { target: edge.to, comment } : { target: edge.to }
  const ok = await run(id, live, result, () => post(sessionPath(id, '/decision'), body))
  if (!ok) for (const b of buttons) b.disabled = false
  else {
    const title = $('title')
    if (title) title.append(' ', el('span', { class: `badge ${edge.type || 'none'}`, id: 'outcome-badge', text: edge.type === 'approve' ? 'approved' : edge.type === 'reject' ? 'rejected' : edge.type === 'refine' ? 'sent back' : `→ ${edge.to}` }))
  }
}

// --- keys and start -----------------------------------------------------------------------

document.addEventListener('keydown', (e) => {
  if (e.target.tagName === 'TEXTAREA' || e.target.tagName === 'INPUT' || e.target.tagName === 'SELECT') return
  if (e.key === '/') { e.preventDefault(); $('filter-text').focus(); return }
  const n = Number(e.key)
  if (n >= 1 && n <= 9) {
    const button = document.querySelectorAll('.edges button')[n - 1]
    if (button && !button.disabled) button.focus()
  }
})

$('token-form').addEventListener('submit', async (e) => {
  e.preventDefault()
  token = $('token').value.trim()
  sessionStorage.setItem('archmax-token', token)
  await start()
})
for (const id of FILTERS) $(id).addEventListener(id === 'filter-text' ? 'input' : 'change', () => { saveFilters(); id === 'filter-status' ? refresh() : render() })

let watching = false
async function start () {
  try { await loadMe() } catch (e) { status(e.message); return }
  status('')
  await loadWorkflows()
  restoreFilters()
  await refresh()
  if (!watching) { watching = true; watch().finally(() => { watching = false }) }
}

setInterval(tick, 15000)
setInterval(() => { if (me && !busy) refresh() }, 60000)
start()

// The inbox in a real browser: `archmax serve` over a copy of the example workspace (plus a
// small `triage` workflow whose human state names no approvers and whose instructions hold
// markdown and HTML), the model a scripted endpoint answering each session from its own
// script, headless Chromium (Debian's) driven by playwright-core.
//
// With tokens: the page asks for one and says who you are; a new park appears without a
// reload; the filters; relative times; markdown rendered and a <script> in instructions not
// run; a non-approver sees the edges disabled with the reason; a session awaiting input is
// answered from the page; a decision's outcome shows in the header; "Fork from here" on a
// step of the history opens a fork parked again. Without tokens: no token
// field, you are 'local', and an approver-guarded decision says how to get the right to decide.
// `ARCHMAX_SCREENSHOTS=1` writes docs/inbox.png, docs/inbox-not-approver.png and docs/diagram.png.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { call, copyExample, ROOT, refundAnswers, say, serveArchmax, sseEndpoint, tools } from './helpers.mjs'

const CHROMIUM = process.env.ARCHMAX_TEST_CHROMIUM || '/usr/bin/chromium'
const SKIP = !existsSync(CHROMIUM) && !process.env.CI && `no Chromium at ${CHROMIUM} (apt-get install -y chromium)`
const LEAD = 'support-lead@kettleandkite.example'
const TOKEN = 'tok-lead'
const OTHER = 'someone@kettleandkite.example'
const ISO = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/

const TRIAGE = `title: Ticket triage
instructions: Triage one ticket.
mounts:
  allow_always: []
states:
  intake:
    title: Read the ticket
    triggers: { manual: }
    instructions: Read the ticket, then hand it to a person.
    transitions:
      - to: review
        description: Ready for a person.
  review:
    type: human
    title: Check the ticket
    instructions: |-
      ## What to check
      - the **order number** matches the customer's
      - the \`amount\` is in EUR
      <script>window.__pwned = true</script>
      <img src="x" onerror="window.__pwned = true">
      See [the policy](https://shop.example/policy).
    transitions:
      - { to: done, type: approve, description: The ticket is right. }
      - { to: intake, type: refine, description: Read it again. }
  done:
    title: Close the ticket
    instructions: Say the ticket is closed.
`

const advance = (to, reason, id) => tools(call('archmax_advance', { to, reason }, id))

// Each session's answers, keyed by its first message (the sessions' turns interleave).
const SCRIPTS = {
  'Order KK-2043 arrived late; I want my money back.': refundAnswers,
  'Order KK-2047 arrived late too.': refundAnswers,
  'Hello?': () => [say('Could you tell me more?')],
  'Ticket 7: wrong amount.': () => [advance('review', 'ready', 't1'), say('A colleague checks your ticket.')],
  'Ticket 8: wrong address.': () => [advance('review', 'ready', 't2'), say('A colleague checks your ticket.')],
  'Where is my order?': () => [
    tools(call('archmax_wait', { reason: 'the customer sends the order number' }, 'w1')),
    say('Could you send me your order number?'),
    say('Thanks, I will look KK-2043 up.'),
    say('Thanks, I will look KK-2043 up.'),
  ],
}

async function scriptedModel () {
  const queues = new Map()
  return sseEndpoint((body) => {
    const first = (body.messages ?? []).find((m) => m.role === 'user' && typeof m.content === 'string' && SCRIPTS[m.content])
    if (!first) throw new Error(`no script for this conversation: ${JSON.stringify(body.messages?.filter((m) => m.role === 'user'))}`)
    if (!queues.has(first.content)) queues.set(first.content, SCRIPTS[first.content]())
    const next = queues.get(first.content).shift()
    if (!next) throw new Error(`the script of '${first.content}' ran out`)
    return next
  })
}

function workspaceWithTriage () {
  const root = mkdtempSync(join(tmpdir(), 'archmax-inbox-'))
  copyExample(root)
  mkdirSync(join(root, 'workflows', 'triage'), { recursive: true })
  writeFileSync(join(root, 'workflows', 'triage', 'workflow.yaml'), TRIAGE)
  return root
}

async function browser () {
  const { chromium } = await import('playwright-core')
  const userDataDir = mkdtempSync(join(tmpdir(), 'archmax-chromium-'))
  return chromium.launchPersistentContext(userDataDir, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1400, height: 1000 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
}

function client (base, token) {
  const auth = token ? { authorization: `Bearer ${token}` } : {}
  return {
    async send (id, message, workflow) {
      const res = await fetch(`${base}/sessions/${id}/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...auth },
        body: JSON.stringify({ message, workflow }),
      })
      const body = await res.json()
      assert.equal(res.status, 200, JSON.stringify(body))
      return body
    },
    async post (path, body) {
      const res = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...auth }, body: JSON.stringify(body) })
      return { status: res.status, body: await res.json() }
    },
    async get (path) { return (await fetch(`${base}${path}`, { headers: auth })).json() },
  }
}

const shotsDir = (fallback) => (process.env.ARCHMAX_SCREENSHOTS ? join(ROOT, 'docs') : fallback)

test('with tokens: who you are, live updates, filters, markdown, permissions, replies and the outcome in the header', { skip: SKIP }, async () => {
  const root = workspaceWithTriage()
  const endpoint = await scriptedModel()
  const { base, child } = await serveArchmax(root, endpoint.url, { ARCHMAX_SERVE_TOKENS: `${LEAD}=${TOKEN},${OTHER}=tok-other` })
  const api = client(base, TOKEN)
  let context
  try {
    const parked = await api.send('refund-1', 'Order KK-2043 arrived late; I want my money back.', 'order-lookup')
    assert.equal(parked.status, 'awaiting_decision')
    assert.equal(parked.pending.state, 'refund-review')
    // A session whose turn answered mid-workflow: stalled, so the inbox lists it for attention.
    await api.send('idle-1', 'Hello?', 'order-lookup')
    // A session waiting for the customer.
    const waiting = await api.send('wait-1', 'Where is my order?', 'order-lookup')
    assert.equal(waiting.status, 'awaiting_input', JSON.stringify(waiting))

    context = await browser()
    const page = context.pages()[0] ?? (await context.newPage())
    const requested = []
    page.on('request', (r) => requested.push(r.url()))
    await page.goto(`${base}/`)

    // The server needs a token: the page asks for it, then says who you are.
    await page.locator('#token').fill(TOKEN)
    await page.keyboard.press('Enter')
    await page.locator('#identity').waitFor()
    assert.equal(await page.locator('#identity').innerText(), LEAD)
    assert.equal(await page.locator('#token-form').isVisible(), false)
    const item = page.locator('#decisions button[data-session="refund-1"]')
    await item.waitFor()
    assert.match(await item.innerText(), /Approve the proposed refund/)
    const idle = page.locator('#attention button[data-session="idle-1"]')
    await idle.waitFor()
    assert.equal(await idle.getAttribute('data-standing'), 'idle')
    assert.match(await idle.innerText(), /idle at '[a-z-]+' \(not a terminal state\)/)
    await page.locator('#waits button[data-session="wait-1"]').waitFor()

    // Times are relative, the ISO time their tooltip.
    const time = item.locator('time')
    assert.match(await time.innerText(), /^parked (just now|\d+ s ago)$/)
    assert.match(await time.getAttribute('title'), ISO)

    // Live: a new park appears without a reload.
    await page.locator('#live-state[data-state="live"]').waitFor()
    await page.evaluate(() => { window.__sameDocument = true })
    await api.send('triage-1', 'Ticket 7: wrong amount.', 'triage')
    await page.locator('#decisions button[data-session="triage-1"]').waitFor({ timeout: 10000 })
    assert.equal(await page.evaluate(() => window.__sameDocument), true, 'the page was not reloaded')

    // Filters: by workflow, by state, by status.
    const decisionIds = () => page.locator('#decisions button').evaluateAll((bs) => bs.map((b) => b.dataset.session))
    await page.selectOption('#filter-workflow', 'triage')
    assert.deepEqual(await decisionIds(), ['triage-1'])
    assert.equal(await page.locator('#waits button').count(), 0)
    await page.selectOption('#filter-workflow', '')
    await page.selectOption('#filter-state', 'refund-review')
    assert.deepEqual(await decisionIds(), ['refund-1'])
    await page.selectOption('#filter-state', '')
    await page.selectOption('#filter-status', 'idle')
    await page.locator('#sessions button[data-session="idle-1"]').waitFor()
    assert.deepEqual(await page.locator('#sessions button').evaluateAll((bs) => bs.map((b) => b.dataset.session)), ['idle-1'])
    assert.equal(await page.locator('#decisions').isVisible(), false)
    await page.selectOption('#filter-status', '')
    await page.locator('#decisions button[data-session="refund-1"]').waitFor()

    // Markdown instructions, safely: elements for the markup, the HTML shown as text, never run.
    await page.locator('#decisions button[data-session="triage-1"]').click()
    await page.locator('#detail[data-session="triage-1"]').waitFor()
    const instructions = page.locator('#detail .instructions')
    await instructions.waitFor()
    assert.equal(await instructions.locator('h4').innerText(), 'What to check')
    assert.equal(await instructions.locator('li strong').innerText(), 'order number')
    assert.equal(await instructions.locator('li code').innerText(), 'amount')
    assert.equal(await instructions.locator('a').getAttribute('href'), 'https://shop.example/policy')
    assert.match(await instructions.innerText(), /<script>window\.__pwned = true<\/script>/)
    assert.equal(await instructions.locator('script, img').count(), 0)
    assert.equal(await page.evaluate(() => window.__pwned), undefined)
    // No approvers: no approvers line (and no stray "null"), every edge open.
    assert.equal(await page.locator('#approvers').count(), 0)
    assert.doesNotMatch(await page.locator('#detail').innerText(), /\bnull\b/)
    assert.equal(await page.locator('.edges button:disabled').count(), 0)

    // The refund, as its approver: keyboard to open, edges open, evidence and diagram.
    await item.focus()
    await page.keyboard.press('Enter')
    const approve = page.locator('.edges button[data-target="refund-approved"]')
    await approve.waitFor()
    assert.match(await approve.innerText(), /Approve the refund as proposed\./)
    assert.equal(await page.locator('.edges button').count(), 3)
    assert.equal(await approve.isDisabled(), false)
    assert.equal(await page.locator('#not-allowed').count(), 0)
    await page.locator('.evidence pre').first().waitFor()
    assert.match(await page.locator('.evidence pre').first().innerText(), /"order_id": "KK-2043"/)
    assert.equal(await page.locator('.diagram g.state.current').getAttribute('data-state'), 'refund-review')
    assert.match(await page.locator('#approvers').innerText(), new RegExp(`Approvers: ${LEAD}`))
    assert.match(await page.locator('#standing').innerText(), /parked at refund-review (just now|\d+ s ago)/)
    const shots = shotsDir(root)
    await page.screenshot({ path: join(shots, 'inbox.png'), fullPage: true })
    await page.locator('.diagram').screenshot({ path: join(shots, 'diagram.png') })
    await page.keyboard.press('2')
    assert.equal(await page.evaluate(() => document.activeElement.dataset.target), 'refund-request', 'digits jump to the edges')

    // Someone who is not an approver sees the edges disabled, with the reason.
    const other = await context.newPage()
    await other.goto(`${base}/`)
    await other.locator('#token').fill('tok-other')
    await other.keyboard.press('Enter')
    await other.locator('#identity').waitFor()
    assert.equal(await other.locator('#identity').innerText(), OTHER)
    await other.locator('#decisions button[data-session="refund-1"]').click()
    const denied = other.locator('#not-allowed')
    await denied.waitFor()
    assert.equal(await denied.innerText(), `You (${OTHER}) are not an approver of this state: its approvers are ${LEAD}, finance@kettleandkite.example.`)
    assert.equal(await other.locator('.edges button:disabled').count(), 3)
    assert.equal(await other.locator('.edges button').first().getAttribute('title'), await denied.innerText())
    assert.equal(await other.locator('#no-token-hint').count(), 0, 'the server has tokens: no hint about them')
    await other.close()

    // A session awaiting input, answered from the page.
    await page.locator('#waits button[data-session="wait-1"]').click()
    await page.locator('#detail[data-session="wait-1"] #reply').waitFor()
    assert.match(await page.locator('#detail').innerText(), /Waiting for: the customer sends the order number/)
    await page.locator('#reply').fill('It is KK-2043.')
    await page.locator('#send-reply').click()
    await page.locator('#result[data-status="completed"]').waitFor()
    assert.match(await page.locator('#live').innerText(), /manual delivered, resuming classify/)
    await page.locator('#standing[data-standing="idle"]').waitFor()
    await page.locator('#waits button[data-session="wait-1"]').waitFor({ state: 'detached' })
    const transcript = await api.get('/sessions/wait-1/messages')
    assert.ok(transcript.some((m) => m.role === 'user' && String(m.content).includes('It is KK-2043.')), JSON.stringify(transcript))

    // The decision: the outcome replaces "parked at" in the header.
    await page.locator('#decisions button[data-session="refund-1"]').click()
    await page.locator('#detail[data-session="refund-1"]').waitFor()
    await approve.waitFor()
    await page.locator('#comment').fill('Within policy.')
    await approve.click()
    const result = page.locator('#result[data-status="completed"]')
    await result.waitFor()
    assert.match(await result.innerText(), /Session completed at refund-approved: Your refund of 10\.00 EUR is confirmed\./)
    const header = page.locator('#standing[data-decided="refund-approved"]')
    await header.waitFor()
    assert.match(await header.innerText(), /Decided for refund-approved \(“Within policy\.”\) (just now|\d+ s ago) · now done at 'refund-approved'/)
    assert.doesNotMatch(await header.innerText(), /parked at/)
    assert.equal(await page.locator('#outcome-badge').innerText(), 'approved')
    assert.match(await page.locator('#live').innerText(), /decided for refund-approved/)
    assert.match(await page.locator('#live').innerText(), /entered refund-approved/)
    assert.doesNotMatch(await page.locator('#live').innerText(), /state-enter/)
    await page.locator('#decisions button[data-session="refund-1"]').waitFor({ state: 'detached' })

    // History (of the session still open, the decision's steps added): every step, and "Fork from here" on the one that parked makes a new session
    // parked the same way, opened at once; the decided session stays as it is.
    // The decision's steps joined the history shown.
    await page.locator('#history li', { hasText: 'decided: refund-approved' }).waitFor()
    const parkedStep = page.locator('#history li', { hasText: 'parked for a decision at refund-review' }).first()
    await parkedStep.waitFor()
    const step = await parkedStep.getAttribute('data-step')
    assert.match(await page.locator('#history li').first().innerText(), /started by manual/)
    await parkedStep.locator('button.fork').click()
    const forkId = `refund-1-fork-${step}`
    await page.locator(`#detail[data-session="${forkId}"]`).waitFor()
    assert.match(await page.locator('#standing').innerText(), new RegExp(`session ${forkId} \\(forked from refund-1 step ${step}\\) · parked at refund-review`))
    await approve.waitFor()
    assert.equal(await approve.isDisabled(), false)
    await page.locator(`#decisions button[data-session="${forkId}"]`).waitFor()
    const forked = await api.get(`/sessions/${forkId}`)
    assert.equal(forked.status, 'awaiting_decision')
    assert.equal(forked.forkedFrom.sessionId, 'refund-1')
    // Nothing but this server was asked for anything.
    assert.ok(requested.length > 3)
    for (const url of requested) assert.ok(url.startsWith(`${base}/`) || url.startsWith('blob:'), url)

    const after = await api.get('/sessions/refund-1')
    assert.equal(after.status, 'completed')
    assert.equal(after.workflowState, 'refund-approved')
  } finally {
    await context?.close()
    child.kill()
    await endpoint.close()
  }
})

test('without tokens: no token field, you are local, and a guarded decision says how to get the right to decide', { skip: SKIP }, async () => {
  const root = workspaceWithTriage()
  const endpoint = await scriptedModel()
  const { base, child } = await serveArchmax(root, endpoint.url, { ARCHMAX_SERVE_TOKENS: '' })
  const api = client(base)
  let context
  try {
    await api.send('refund-2', 'Order KK-2047 arrived late too.', 'order-lookup')
    await api.send('triage-2', 'Ticket 8: wrong address.', 'triage')
    // The server refuses with the same hint.
    const refused = await api.post('/sessions/refund-2/decision', { target: 'refund-approved' })
    assert.equal(refused.status, 403)
    assert.equal(refused.body.code, 'NotAnApproverError')
    assert.match(refused.body.error, /^'local' may not decide the human state 'refund-review' of session 'refund-2': its approvers are support-lead@kettleandkite\.example, finance@kettleandkite\.example\. This server runs without tokens, so every request is 'local': start it with ARCHMAX_SERVE_TOKENS='support-lead@kettleandkite\.example=<a secret token>' and sign in with that token, or decide from a shell with 'archmax decide refund-2 --to <state>'$/)

    context = await browser()
    const page = context.pages()[0] ?? (await context.newPage())
    await page.goto(`${base}/`)
    await page.locator('#identity').waitFor()
    assert.equal(await page.locator('#identity').innerText(), 'local')
    assert.match(await page.locator('#who').innerText(), /no tokens/)
    assert.equal(await page.locator('#token-form').isVisible(), false, 'no token field on a server without tokens')

    await page.locator('#decisions button[data-session="refund-2"]').click()
    const denied = page.locator('#not-allowed')
    await denied.waitFor()
    assert.match(await denied.innerText(), /You \(local\) are not an approver of this state/)
    const hint = page.locator('#no-token-hint')
    assert.match(await hint.innerText(), /This server runs without tokens/)
    assert.match(await hint.innerText(), /ARCHMAX_SERVE_TOKENS='support-lead@kettleandkite\.example=<a secret token>'/)
    assert.match(await hint.innerText(), /archmax decide refund-2 --to <state>/)
    assert.equal(await page.locator('.edges button:disabled').count(), 3)
    await page.locator('.evidence pre').first().waitFor()
    await page.screenshot({ path: join(shotsDir(root), 'inbox-not-approver.png'), fullPage: false })

    // A state without approvers is anyone's to decide, here too.
    await page.locator('#decisions button[data-session="triage-2"]').click()
    await page.locator('#detail[data-session="triage-2"]').waitFor()
    const ok = page.locator('.edges button[data-target="done"]')
    await ok.waitFor()
    assert.equal(await ok.isDisabled(), false)
    assert.equal(await page.locator('#not-allowed').count(), 0)
    assert.doesNotMatch(await page.locator('#detail').innerText(), /\bnull\b/)
  } finally {
    await context?.close()
    child.kill()
    await endpoint.close()
  }
})

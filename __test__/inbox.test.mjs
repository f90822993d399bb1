// The inbox in a real browser: `archmax serve` over a copy of the example workspace, the
// model a scripted endpoint, headless Chromium (Debian's) driven by playwright-core. A
// refund parks at `refund-review`; the approver opens the inbox, clicks the approve edge
// and sees the session complete. `ARCHMAX_SCREENSHOTS=1` writes docs/inbox.png and docs/diagram.png.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { existsSync, mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

import { copyExample, EXAMPLE, ROOT, refundAnswers, say, serveArchmax, sseEndpoint } from './helpers.mjs'

const CHROMIUM = process.env.ARCHMAX_TEST_CHROMIUM || '/usr/bin/chromium'
const LEAD = 'support-lead@kettleandkite.example'
const TOKEN = 'tok-lead'

test('the inbox shows a pending refund, decides it by a click and shows the session complete', { skip: !existsSync(CHROMIUM) && !process.env.CI && `no Chromium at ${CHROMIUM} (apt-get install -y chromium)` }, async () => {
  const { chromium } = await import('playwright-core')
  const root = mkdtempSync(join(tmpdir(), 'archmax-inbox-'))
  copyExample(root)
  const answers = refundAnswers()
  const endpoint = await sseEndpoint(() => {
    const next = answers.shift()
    if (!next) throw new Error('the script ran out')
    return next
  })
  const { base, child } = await serveArchmax(root, endpoint.url, {
    ARCHMAX_SERVE_TOKENS: `${LEAD}=${TOKEN},someone@kettleandkite.example=tok-other`,
  })
  const userDataDir = mkdtempSync(join(tmpdir(), 'archmax-chromium-'))
  let context
  try {
    const start = await fetch(`${base}/sessions/refund-1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ message: 'Order KK-2043 arrived late; I want my money back.', workflow: 'order-lookup' }),
    })
    const parked = await start.json()
    assert.equal(start.status, 200, JSON.stringify(parked))
    assert.equal(parked.status, 'awaiting_decision')
    assert.equal(parked.pending.state, 'refund-review')
    // A session whose turn answered mid-workflow: stalled, so the inbox lists it for attention.
    answers.unshift(say('Could you tell me more?'))
    const stalled = await fetch(`${base}/sessions/idle-1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${TOKEN}` },
      body: JSON.stringify({ message: 'Hello?', workflow: 'order-lookup' }),
    })
    assert.equal(stalled.status, 200, await stalled.text())

    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      viewport: { width: 1400, height: 1000 },
      args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
    })
    const page = context.pages()[0] ?? (await context.newPage())
    const requested = []
    page.on('request', (r) => requested.push(r.url()))

    await page.goto(`${base}/`)
    // The server needs a token: the page asks for it.
    await page.locator('#token').fill(TOKEN)
    await page.keyboard.press('Enter')
    const item = page.locator('#decisions button[data-session="refund-1"]')
    await item.waitFor()
    assert.match(await item.innerText(), /Approve the proposed refund/)
    const idle = page.locator('#attention button[data-session="idle-1"]')
    await idle.waitFor()
    assert.equal(await idle.getAttribute('data-standing'), 'idle')
    assert.match(await idle.innerText(), /idle at '[a-z-]+' \(not a terminal state\)/)
    assert.equal(await page.locator('#attention button').count(), 1, 'a fresh park needs no attention yet')
    // Keyboard: focus the pending decision and open it with Enter.
    await item.focus()
    await page.keyboard.press('Enter')
    const approve = page.locator('.edges button[data-target="refund-approved"]')
    await approve.waitFor()
    assert.match(await approve.innerText(), /Approve the refund as proposed\./)
    assert.equal(await page.locator('.edges button').count(), 3)
    // The evidence (the proposal as JSON) and the diagram with the parked state marked.
    await page.locator('.evidence pre').first().waitFor()
    assert.match(await page.locator('.evidence pre').first().innerText(), /"order_id": "KK-2043"/)
    assert.equal(await page.locator('.diagram g.state.current').getAttribute('data-state'), 'refund-review')
    assert.match(await page.locator('#detail').innerText(), new RegExp(`Approvers: ${LEAD}`))

    // ARCHMAX_SCREENSHOTS=1 refreshes the committed ones in docs/; otherwise they go to the temp dir.
    const shots = process.env.ARCHMAX_SCREENSHOTS ? join(ROOT, 'docs') : root
    await page.screenshot({ path: join(shots, 'inbox.png'), fullPage: true })
    await page.locator('.diagram').screenshot({ path: join(shots, 'diagram.png') })

    await page.locator('#comment').fill('Within policy.')
    await approve.click()
    const result = page.locator('#result[data-status="completed"]')
    await result.waitFor()
    assert.match(await result.innerText(), /Session completed at refund-approved: Your refund of 10\.00 EUR is confirmed\./)
    // The live stream showed the decision's events as they happened, in words.
    assert.match(await page.locator('#live').innerText(), /decided for refund-approved/)
    assert.match(await page.locator('#live').innerText(), /entered refund-approved/)
    assert.doesNotMatch(await page.locator('#live').innerText(), /state-enter/)
    // Nothing but this server was asked for anything.
    assert.ok(requested.length > 3)
    for (const url of requested) assert.ok(url.startsWith(`${base}/`) || url.startsWith('blob:'), url)

    const after = await (await fetch(`${base}/sessions/refund-1`, { headers: { authorization: `Bearer ${TOKEN}` } })).json()
    assert.equal(after.status, 'completed')
    assert.equal(after.workflowState, 'refund-approved')
  } finally {
    await context?.close()
    child.kill()
    await endpoint.close()
  }
})

// The inbox's live log in words (crates/serve/src/inbox/sentences.js, served ahead of
// inbox.js): refusals with their reasons, every event type the runtime emits in a sentence.
// The file is a browser script; it is evaluated here on its own, with no DOM.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import vm from 'node:vm'

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..')
const source = readFileSync(join(ROOT, 'crates/serve/src/inbox/sentences.js'), 'utf8')
const { eventSentence } = vm.runInNewContext(`${source}\n;({ eventSentence })`, {})
const text = (e) => eventSentence(e)?.text ?? null

test('a refused move, tool or hook is a refusal with its reason', () => {
  const advance = eventSentence({
    type: 'tool-result',
    state: 'classify',
    tool: 'archmax_advance',
    callId: 'c1',
    status: 'ok',
    durationMs: 1,
    output: "archmax_advance rejected: cannot advance from 'classify' to 'refund-approved'. Valid target slugs: order-question, refund-request, escalation, general-question.",
    truncated: false,
  })
  assert.deepEqual(JSON.parse(JSON.stringify(advance)), {
    text: "refused archmax_advance: cannot advance from 'classify' to 'refund-approved'. Valid target slugs: order-question, refund-request, escalation, general-question.",
    refused: true,
  })
  assert.deepEqual(JSON.parse(JSON.stringify(eventSentence({
    type: 'tool-blocked',
    state: 'classify',
    tool: 'write_file',
    reason: "[workflow] BLOCKED: 'write_file' is forbidden by state 'classify' (tools.forbid). A denial beats every grant.\nMore for the model.",
    origin: 'script',
  }))), {
    text: "refused write_file from a script: 'write_file' is forbidden by state 'classify' (tools.forbid). A denial beats every grant.",
    refused: true,
  })
  assert.equal(text({ type: 'hook-rejected', state: 'refund-request', phase: 'after', reason: 'hook veto: the refund exceeds the order total' }),
    'refused by the after hook: hook veto: the refund exceeds the order total')
  assert.equal(eventSentence({ type: 'hook-verdict', state: 'a', phase: 'after', label: 'hooks/check.js', verdict: 'veto', reason: 'no date' }).refused, true)
  // An allowed move, or a host tool's words that look like a refusal, are not refusals.
  assert.equal(text({ type: 'tool-result', tool: 'archmax_advance', output: "Advanced to state 'b'.", status: 'ok' }), null)
  assert.equal(text({ type: 'tool-result', tool: 'lookup', output: 'lookup rejected: no', status: 'ok' }), null)
})

test('the rest of a turn reads as sentences, streamed pieces and usage left out', () => {
  assert.equal(text({ type: 'state-enter', state: 'refund-review' }), 'entered refund-review')
  assert.equal(text({ type: 'tool-called', state: 'classify', tool: 'mcp__shop__lookup_order' }), 'called mcp__shop__lookup_order')
  assert.equal(text({ type: 'tool-called', state: 'classify', tool: 'archmax_advance' }), null, 'a move shows as its outcome')
  assert.equal(text({ type: 'advance', from: 'refund-request', to: 'refund-review', reason: ' within policy ' }), 'moved on to refund-review: within policy')
  assert.equal(text({ type: 'advance', from: '__start__', to: 'classify' }), 'started at classify')
  assert.equal(text({ type: 'decided', state: 'refund-review', to: 'refund-approved', sessionId: 's' }), 'decided for refund-approved')
  assert.equal(text({ type: 'parked', state: 'refund-review', awaiting: 'decision', sessionId: 's' }), 'waiting for a decision at refund-review')
  assert.equal(text({ type: 'agent-text', state: 'a', text: 'Your refund is confirmed.' }), 'said: Your refund is confirmed.')
  assert.equal(text({ type: 'agent-text-delta', state: 'a', text: 'Your' }), null)
  assert.equal(text({ type: 'model-usage', state: 'a', inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheCreationTokens: 0 }), null)
  assert.equal(text({ type: 'state-leave', state: 'a', next: 'a' }), null, 'the turn ending in a state')
  // Untrusted text stays text: the page sets it with textContent, never as HTML.
  assert.equal(text({ type: 'agent-text', state: 'a', text: '<img src=x onerror=alert(1)>' }), 'said: <img src=x onerror=alert(1)>')
})

test('every event type the runtime emits has its own sentence (or is left out on purpose)', () => {
  const declared = readFileSync(join(ROOT, 'types/LifecycleEvent.ts'), 'utf8')
  const types = [...new Set([...declared.matchAll(/"type": "([a-z-]+)"/g)].map((m) => m[1]))]
  assert.ok(types.length > 20, types.join(', '))
  const filler = { state: 's', next: 'n', to: 't', from: 'f', tool: 'x', reason: 'r', code: 'c', text: 'hi', phase: 'after', label: 'l', verdict: 'ok', name: 'n', status: 'ok', awaiting: 'input', trigger: 'g', direction: 'inbound', names: ['a'], title: 'T', workflow: 'w', scope: 'sc', message: 'm', entry: 'e', line: 'l', output: 'o' }
  for (const type of types) {
    const said = text({ type, ...filler })
    assert.notEqual(said, `${type} s`, `'${type}' falls back to its raw name`)
  }
})

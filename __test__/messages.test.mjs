// `@archmax-ai/harness/messages`: the transcript readers over every message shape they accept,
// the root re-exports, and a real transcript written by the runtime.
import { test } from 'node:test'
import assert from 'node:assert/strict'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'

import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages'

import * as root from '@archmax-ai/harness'
import * as messages from '@archmax-ai/harness/messages'
import { ROOT, workspace } from './helpers.mjs'

const {
  contentToString,
  isAiMessage,
  isHumanMessage,
  isRuntimeNote,
  lastAgentText,
  lastTurn,
  messageTypeOf,
  messagesSince,
  opensTurn,
  runtimeNoteKind,
} = messages

// --- the four shapes -------------------------------------------------------------------------

/** A LangChain-like class instance: the type comes only from `_getType()`. */
class LikeLangChain {
  constructor(type, content, additional_kwargs = {}) {
    this._type = type
    this.content = content
    this.additional_kwargs = additional_kwargs
  }
  _getType() {
    return this._type
  }
}
/** Only `getType()` (no `_getType`, no `type`). */
class GetTypeOnly {
  constructor(type, content) {
    this.t = type
    this.content = content
  }
  getType() {
    return this.t
  }
}
const serialized = (cls, content, additional_kwargs = {}) => ({
  lc: 1,
  type: 'constructor',
  id: ['langchain_core', 'messages', cls],
  kwargs: { content, additional_kwargs },
})
/** This runtime's runtime note: an `archmax_note` call and its answer, both marked. */
const ourNote = (kind, text, id = `note_${kind}`) => [
  {
    role: 'assistant',
    content: '',
    tool_calls: [{ id, type: 'function', function: { name: 'archmax_note', arguments: JSON.stringify({ note: kind }) } }],
    archmax: { note: kind },
  },
  { role: 'tool', tool_call_id: id, content: text, archmax: { note: kind } },
]
const CHECKPOINT = { archmax_checkpoint: { transcript_len: 3, state: { status: 'running' } } }

test('messageTypeOf reads each shape, in order _getType, getType, serialized id, type, role', () => {
  assert.equal(messageTypeOf(new LikeLangChain('ai', 'x')), 'ai')
  assert.equal(messageTypeOf(new GetTypeOnly('human', 'x')), 'human')
  // _getType wins over a conflicting `type`/`role`.
  const both = Object.assign(new LikeLangChain('tool', 'x'), { type: 'ai', role: 'user' })
  assert.equal(messageTypeOf(both), 'tool')
  assert.equal(messageTypeOf(serialized('AIMessage', 'x')), 'ai')
  assert.equal(messageTypeOf(serialized('HumanMessage', 'x')), 'human')
  assert.equal(messageTypeOf(serialized('ToolMessage', 'x')), 'tool')
  assert.equal(messageTypeOf(serialized('AIMessageChunk', 'x')), 'ai')
  assert.equal(messageTypeOf(serialized('SomethingElse', 'x')), '')
  assert.equal(messageTypeOf({ type: 'human', content: 'x' }), 'human')
  // `type` wins over `role`.
  assert.equal(messageTypeOf({ type: 'ai', role: 'user' }), 'ai')
  assert.equal(messageTypeOf({ role: 'assistant', content: 'x' }), 'assistant')
  assert.equal(messageTypeOf({ role: 'user', content: 'x' }), 'user')
  assert.equal(messageTypeOf(ourNote('decision', 'x')[1]), 'tool')
  // Not a message: a checkpoint line, primitives, empty objects.
  for (const v of [CHECKPOINT, null, undefined, 'ai', 42, {}, [], { type: 7 }]) assert.equal(messageTypeOf(v), '', JSON.stringify(v))
})

test('messageTypeOf on real LangChain instances and their toJSON form', () => {
  assert.equal(messageTypeOf(new AIMessage('a')), 'ai')
  assert.equal(messageTypeOf(new HumanMessage('h')), 'human')
  assert.equal(messageTypeOf(new ToolMessage({ content: 't', tool_call_id: 'c' })), 'tool')
  const json = JSON.parse(JSON.stringify(new AIMessage({ content: 'a', additional_kwargs: { archmax: { note: 'event' } } })))
  assert.equal(json.type, 'constructor')
  assert.equal(messageTypeOf(json), 'ai')
  assert.equal(runtimeNoteKind(json), 'event')
})

test('isAiMessage / isHumanMessage over the four shapes', () => {
  const ai = [new LikeLangChain('ai', 'x'), serialized('AIMessage', 'x'), { role: 'assistant', content: 'x' }, { type: 'ai' }, ourNote('event', 'x')[0]]
  const human = [new LikeLangChain('human', 'x'), serialized('HumanMessage', 'x'), { role: 'user', content: 'x' }, { type: 'human' }]
  const neither = [new LikeLangChain('tool', 'x'), serialized('SystemMessage', 'x'), { role: 'system' }, { role: 'tool' }, CHECKPOINT, null]
  for (const m of ai) {
    assert.equal(isAiMessage(m), true, JSON.stringify(m))
    assert.equal(isHumanMessage(m), false, JSON.stringify(m))
  }
  for (const m of human) {
    assert.equal(isHumanMessage(m), true, JSON.stringify(m))
    assert.equal(isAiMessage(m), false, JSON.stringify(m))
  }
  for (const m of neither) {
    assert.equal(isAiMessage(m), false, JSON.stringify(m))
    assert.equal(isHumanMessage(m), false, JSON.stringify(m))
  }
})

test('runtimeNoteKind reads additional_kwargs, serialized kwargs and our top-level archmax', () => {
  assert.equal(runtimeNoteKind(new LikeLangChain('ai', '', { archmax: { note: 'decision' } })), 'decision')
  assert.equal(runtimeNoteKind(new AIMessage({ content: '', additional_kwargs: { archmax: { note: 'after' } } })), 'after')
  assert.equal(runtimeNoteKind({ role: 'assistant', content: '', additional_kwargs: { archmax: { note: 'opening' } } }), 'opening')
  assert.equal(runtimeNoteKind(serialized('AIMessage', '', { archmax: { note: 'sub-workflow' } })), 'sub-workflow')
  const [call, answer] = ourNote('error', '[error] The state failed.')
  assert.equal(runtimeNoteKind(call), 'error')
  assert.equal(runtimeNoteKind(answer), 'error')
  assert.equal(runtimeNoteKind(ourNote('budget', '[budget] 2 left')[1]), 'budget')
  // Not notes: no marker, an unknown kind, a non-string kind, the checkpoint line, primitives.
  for (const m of [
    { role: 'assistant', content: 'hi' },
    new LikeLangChain('ai', 'x'),
    serialized('AIMessage', 'x'),
    { role: 'tool', archmax: { note: 'gossip' } },
    { role: 'tool', archmax: { note: 1 } },
    { role: 'tool', archmax: 'decision' },
    CHECKPOINT,
    null,
    'decision',
  ]) {
    assert.equal(runtimeNoteKind(m), null, JSON.stringify(m))
    assert.equal(isRuntimeNote(m), false, JSON.stringify(m))
  }
  assert.equal(isRuntimeNote(call), true)
  assert.equal(isRuntimeNote(serialized('ToolMessage', 'x', { archmax: { note: 'event' } })), true)
})

test('contentToString: strings, text parts, nothing else', () => {
  assert.equal(contentToString('  plain  '), '  plain  ')
  assert.equal(contentToString([{ type: 'text', text: 'a' }, { type: 'image_url', image_url: { url: 'x' } }, 'b', { text: 'c' }, { type: 'reasoning', text: 'hidden' }]), 'abc')
  assert.equal(contentToString([]), '')
  for (const v of [undefined, null, 42, { text: 'obj' }, true]) assert.equal(contentToString(v), '', String(v))
})

// --- lastAgentText ---------------------------------------------------------------------------

test('lastAgentText: the last non-blank agent text, trimmed, in every shape', () => {
  assert.equal(lastAgentText([new LikeLangChain('human', 'q'), new LikeLangChain('ai', '  from an instance \n')]), 'from an instance')
  assert.equal(lastAgentText([serialized('HumanMessage', 'q'), serialized('AIMessage', [{ type: 'text', text: ' serialized ' }])]), 'serialized')
  assert.equal(lastAgentText([{ role: 'user', content: 'q' }, { role: 'assistant', content: [{ type: 'text', text: 'raw ' }, { type: 'text', text: 'parts' }] }]), 'raw parts')
  assert.equal(lastAgentText([new HumanMessage('q'), new AIMessage(' real ')]), 'real')
})

test('lastAgentText skips runtime notes and trailing blank agent messages', () => {
  const transcript = [
    { role: 'user', content: 'Please approve.' },
    { role: 'assistant', content: 'A colleague will review it.' },
    CHECKPOINT,
    ...ourNote('decision', '[decision] A human selected approve.'),
    { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'ls', arguments: '{}' } }] },
    { role: 'tool', tool_call_id: 'c', content: 'No files found in /' },
    { role: 'assistant', content: '   ' },
    { role: 'assistant', content: '' },
    CHECKPOINT,
  ]
  assert.equal(lastAgentText(transcript), 'A colleague will review it.')
  // A note whose call half carries text is still skipped, in every marker form.
  const noisyNotes = [
    { role: 'assistant', content: 'real answer' },
    { role: 'assistant', content: 'note text', archmax: { note: 'after' } },
    new LikeLangChain('ai', 'note text', { archmax: { note: 'decision' } }),
    serialized('AIMessage', 'note text', { archmax: { note: 'event' } }),
  ]
  assert.equal(lastAgentText(noisyNotes), 'real answer')
  assert.equal(lastAgentText([{ role: 'user', content: 'only a question' }, ...ourNote('event', 'x')]), '')
  assert.equal(lastAgentText([]), '')
  assert.equal(lastAgentText(undefined), '')
})

// --- turns -----------------------------------------------------------------------------------

test('opensTurn: a person or a runtime note', () => {
  assert.equal(opensTurn({ role: 'user', content: 'x' }), true)
  assert.equal(opensTurn(new LikeLangChain('human', 'x')), true)
  assert.equal(opensTurn(serialized('HumanMessage', 'x')), true)
  assert.equal(opensTurn(ourNote('decision', 'x')[0]), true)
  assert.equal(opensTurn(ourNote('decision', 'x')[1]), true)
  assert.equal(opensTurn({ role: 'assistant', content: 'x' }), false)
  assert.equal(opensTurn({ role: 'tool', content: 'x' }), false)
  assert.equal(opensTurn(CHECKPOINT), false)
})

test('messagesSince: floor(max(0, cursor))', () => {
  const list = ['a', 'b', 'c', 'd']
  assert.deepEqual(messagesSince(list, 2), ['c', 'd'])
  assert.deepEqual(messagesSince(list, -3), ['a', 'b', 'c', 'd'])
  assert.deepEqual(messagesSince(list, -0.5), ['a', 'b', 'c', 'd'])
  assert.deepEqual(messagesSince(list, 1.9), ['b', 'c', 'd'])
  assert.deepEqual(messagesSince(list, 0.2), ['a', 'b', 'c', 'd'])
  assert.deepEqual(messagesSince(list, 4), [])
  assert.deepEqual(messagesSince(list, 99), [])
  assert.deepEqual(messagesSince(list, Number.NaN), ['a', 'b', 'c', 'd'])
  // A copy, never the array itself.
  assert.notEqual(messagesSince(list, 0), list)
})

test('lastTurn starts at the first of the last run of openers', () => {
  const q1 = { role: 'user', content: 'first' }
  const a1 = { role: 'assistant', content: 'one' }
  const [noteCall, noteAnswer] = ourNote('event', '[event] arrived')
  const q2 = { role: 'user', content: 'second' }
  const q3 = { role: 'user', content: 'third' }
  const a2 = { role: 'assistant', content: 'two' }
  const tool = { role: 'tool', content: 'r' }
  // Several openers in a row (a note pair and two messages) open one turn.
  assert.deepEqual(lastTurn([q1, a1, noteCall, noteAnswer, q2, q3, a2, tool]), [noteCall, noteAnswer, q2, q3, a2, tool])
  // An opener at the very end is a turn of its own run.
  assert.deepEqual(lastTurn([q1, a1, q2]), [q2])
  // Checkpoint lines of a transcript file do not break the run.
  assert.deepEqual(lastTurn([q1, a1, q2, CHECKPOINT, noteCall, noteAnswer, a2]), [q2, CHECKPOINT, noteCall, noteAnswer, a2])
  // A non-opener does break it.
  assert.deepEqual(lastTurn([q1, a1, q2, a2, q3, a1]), [q3, a1])
  // Other shapes.
  const lc = [new LikeLangChain('human', 'a'), new LikeLangChain('ai', 'b'), serialized('HumanMessage', 'c'), new HumanMessage('d'), new AIMessage('e')]
  assert.deepEqual(lastTurn(lc), lc.slice(2))
  // No opener: everything.
  assert.deepEqual(lastTurn([a1, tool]), [a1, tool])
  assert.deepEqual(lastTurn([]), [])
})

// --- package shape ---------------------------------------------------------------------------

test('messages.js imports only the generated note kinds, which import nothing (browser-safe)', () => {
  const text = readFileSync(join(ROOT, 'js', 'messages.js'), 'utf8')
  const imports = [...text.matchAll(/\bfrom\s*['"]([^'"]+)['"]/g)].map((m) => m[1])
  assert.deepEqual(imports, ['../generated/note-kinds.js'])
  assert.doesNotMatch(text, /\brequire\b/)
  assert.match(text, /export function lastAgentText/)
  const kinds = readFileSync(join(ROOT, 'generated/note-kinds.js'), 'utf8')
  assert.doesNotMatch(kinds, /\bimport\b|\brequire\b/)
})

test('the root re-exports are the same bindings as the subpath', () => {
  for (const name of ['contentToString', 'isAiMessage', 'isRuntimeNote', 'runtimeNoteKind', 'lastAgentText']) {
    assert.equal(typeof root[name], 'function', name)
    assert.equal(root[name], messages[name], name)
  }
  // The subpath-only readers stay off the root.
  for (const name of ['messageTypeOf', 'isHumanMessage', 'opensTurn', 'messagesSince', 'lastTurn']) {
    assert.equal(root[name], undefined, name)
    assert.equal(typeof messages[name], 'function', name)
  }
  assert.deepEqual(Object.keys(messages).sort(), [
    'contentToString', 'isAiMessage', 'isHumanMessage', 'isRuntimeNote', 'lastAgentText',
    'lastTurn', 'messageTypeOf', 'messagesSince', 'opensTurn', 'runtimeNoteKind',
  ])
})

// --- a real transcript -----------------------------------------------------------------------

const PARK_SPEC = `title: Review
instructions: A test workflow.
mounts:
  allow_always: []
states:
  intake:
    triggers: { manual: }
    instructions: Route the request.
    transitions:
      - to: review
  review:
    type: human
    instructions: A person decides.
    transitions:
      - to: done
        type: approve
        description: Approve.
  done:
    instructions: Say goodbye.
`

test('the readers on a real transcript.jsonl: a park, a decision note, the reply', async () => {
  const advance = { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'archmax_advance', arguments: '{"to":"review","reason":"ready"}' } }] }
  const answers = [advance, { role: 'assistant', content: 'A colleague will review it.' }, { role: 'assistant', content: 'Approved, goodbye.' }]
  const rootDir = workspace({ 'workflows/desk/workflow.yaml': PARK_SPEC })
  const agent = await root.createAgent({ workflow: 'desk', workspace: { rootDir }, model: async () => answers.shift() })
  let parked, done
  try {
    parked = await agent.workflow.send('m1', { message: 'Please approve.' })
    done = await agent.workflow.decide('m1', { to: 'done', comment: 'Fine.' })
  } finally {
    agent.dispose()
  }
  assert.equal(parked.kind, 'parked')
  assert.equal(done.kind, 'completed')
  const lines = readFileSync(join(rootDir, 'sessions', 'm1', 'checkpoints', 'transcript.jsonl'), 'utf8')
    .split('\n')
    .filter((l) => l.trim() !== '')
    .map((l) => JSON.parse(l))
  const checkpoints = lines.filter((l) => 'archmax_checkpoint' in l)
  assert.ok(checkpoints.length > 0)
  for (const c of checkpoints) {
    assert.equal(messageTypeOf(c), '')
    assert.equal(isRuntimeNote(c), false)
  }
  // The decision note is a pair, both halves marked.
  const notes = lines.filter(isRuntimeNote)
  assert.deepEqual(notes.map((m) => [m.role, runtimeNoteKind(m)]), [['assistant', 'decision'], ['tool', 'decision']])
  assert.match(notes[1].content, /^\[decision\]/)
  // The reply the runtime computed is what the reader finds.
  assert.equal(done.reply, 'Approved, goodbye.')
  assert.equal(lastAgentText(lines), done.reply)
  // Up to the park, the reader finds the park's reply.
  const parkAt = lines.findIndex((m) => m === notes[0])
  assert.equal(lastAgentText(lines.slice(0, parkAt)), parked.reply)
  // The last turn is the decision's: it starts at the note, not at the person's first message.
  const turn = lastTurn(lines)
  assert.equal(turn[0], notes[0])
  assert.equal(lastAgentText(turn), 'Approved, goodbye.')
  assert.ok(!turn.some(isHumanMessage))
  assert.ok(lines.some(isHumanMessage))
})

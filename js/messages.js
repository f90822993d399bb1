// `@archmax-ai/harness/messages`: readers over transcripts. Browser-safe: this file imports
// only the generated list of note kinds, which imports nothing.
//
// Every reader is duck-typed and accepts, mixed in one array:
// - LangChain message instances (`_getType()` / `getType()`, `content`, `additional_kwargs`);
// - serialized LangChain messages (`{ lc: 1, type: "constructor", id: [..., "AIMessage"], kwargs }`);
// - plain `{ type | role, content }` objects;
// - this runtime's own OpenAI-format messages (`role: system | user | assistant | tool`), where a
//   runtime note is an assistant `archmax_note` call plus its tool answer, both carrying a
//   top-level `archmax: { note: <kind> }`;
// - the checkpoint lines of `sessions/<id>/transcript.jsonl` (`{ archmax_checkpoint: … }`), which
//   read as type "" and are never a message of any kind.

import { NOTE_KINDS as KINDS } from '../generated/note-kinds.js'

/** The note kinds a runtime note can carry (the harness's list). */
const NOTE_KINDS = new Set(KINDS)

/** LangChain class names (last `id` segment of a serialized message) → message type. */
const SERIALIZED_TYPES = {
  AIMessage: 'ai',
  AIMessageChunk: 'ai',
  HumanMessage: 'human',
  HumanMessageChunk: 'human',
  SystemMessage: 'system',
  SystemMessageChunk: 'system',
  ToolMessage: 'tool',
  ToolMessageChunk: 'tool',
  FunctionMessage: 'function',
  FunctionMessageChunk: 'function',
  ChatMessage: 'generic',
  ChatMessageChunk: 'generic',
  RemoveMessage: 'remove',
}

const isObject = (v) => v !== null && typeof v === 'object'

/** A serialized LangChain constructor record (`{ lc: 1, type: "constructor", id, kwargs }`). */
const isSerialized = (m) => m.lc === 1 && m.type === 'constructor' && Array.isArray(m.id)

/** Calls `m[name]()` when it is a method answering a string. */
function stringMethod(m, name) {
  if (typeof m[name] !== 'function') return undefined
  try {
    const v = m[name]()
    return typeof v === 'string' ? v : undefined
  } catch {
    return undefined
  }
}

/**
 * The type of a message: `_getType()`, else `getType()`, else (serialized) the class named by the
 * last `id` segment, else `type`, else `role`, else `""`. The value is returned as found, so
 * LangChain says `ai`/`human` where OpenAI-format messages say `assistant`/`user`.
 * @param {unknown} m
 * @returns {string}
 */
export function messageTypeOf(m) {
  if (!isObject(m)) return ''
  const fromMethod = stringMethod(m, '_getType') ?? stringMethod(m, 'getType')
  if (fromMethod !== undefined) return fromMethod
  if (isSerialized(m)) {
    const name = m.id[m.id.length - 1]
    if (typeof m.kwargs?.type === 'string') return m.kwargs.type
    if (name === 'ChatMessage' || name === 'ChatMessageChunk') {
      if (typeof m.kwargs?.role === 'string') return m.kwargs.role
    }
    return SERIALIZED_TYPES[name] ?? ''
  }
  if (typeof m.type === 'string') return m.type
  if (typeof m.role === 'string') return m.role
  return ''
}

/**
 * True for an agent message: type `ai` or `assistant`.
 * @param {unknown} m
 * @returns {boolean}
 */
export function isAiMessage(m) {
  const t = messageTypeOf(m)
  return t === 'ai' || t === 'assistant'
}

/**
 * True for a person's message: type `human` or `user`.
 * @param {unknown} m
 * @returns {boolean}
 */
export function isHumanMessage(m) {
  const t = messageTypeOf(m)
  return t === 'human' || t === 'user'
}

/**
 * The runtime-note kind of a message, or `null` when it is not a runtime note. Read from
 * `additional_kwargs.archmax.note` (LangChain), `kwargs.additional_kwargs.archmax.note`
 * (serialized) or the top-level `archmax.note` (this runtime's transcript); an unknown kind
 * is `null`.
 * @param {unknown} m
 * @returns {RuntimeNoteKind | null}
 */
export function runtimeNoteKind(m) {
  if (!isObject(m)) return null
  const kind = m.additional_kwargs?.archmax?.note ?? m.kwargs?.additional_kwargs?.archmax?.note ?? m.archmax?.note
  return typeof kind === 'string' && NOTE_KINDS.has(kind) ? kind : null
}

/**
 * True when the message is a runtime note (`runtimeNoteKind(m) !== null`).
 * @param {unknown} m
 * @returns {boolean}
 */
export function isRuntimeNote(m) {
  return runtimeNoteKind(m) !== null
}

/**
 * Message content as text: a string as is, the concatenated `text` of the text parts of a part
 * array (string parts count; parts of another `type`, such as reasoning or images, do not), `""`
 * otherwise.
 * @param {unknown} content
 * @returns {string}
 */
export function contentToString(content) {
  if (typeof content === 'string') return content
  if (!Array.isArray(content)) return ''
  let out = ''
  for (const part of content) {
    if (typeof part === 'string') out += part
    else if (isObject(part) && typeof part.text === 'string' && (part.type === undefined || part.type === 'text')) out += part.text
  }
  return out
}

/** The content of a message in any of the accepted shapes. */
function contentOf(m) {
  if (!isObject(m)) return undefined
  return isSerialized(m) ? m.kwargs?.content : m.content
}

/**
 * The agent's last words: the trimmed text of the last agent message with non-blank text,
 * runtime notes skipped; `""` when there is none.
 * @param {readonly unknown[]} messages
 * @returns {string}
 */
export function lastAgentText(messages) {
  if (!Array.isArray(messages)) return ''
  for (let i = messages.length - 1; i >= 0; i--) {
    const m = messages[i]
    if (!isAiMessage(m) || isRuntimeNote(m)) continue
    const text = contentToString(contentOf(m)).trim()
    if (text !== '') return text
  }
  return ''
}

/**
 * True when the message opens a turn: a person's message or a runtime note.
 * @param {unknown} m
 * @returns {boolean}
 */
export function opensTurn(m) {
  return isHumanMessage(m) || isRuntimeNote(m)
}

/**
 * The messages from index `floor(max(0, cursor))` on (a cursor that is not a number reads as 0).
 * @param {readonly unknown[]} messages
 * @param {number} cursor
 * @returns {unknown[]}
 */
export function messagesSince(messages, cursor) {
  if (!Array.isArray(messages)) return []
  const n = Number(cursor)
  return messages.slice(Number.isNaN(n) ? 0 : Math.floor(Math.max(0, n)))
}

/** A checkpoint line of `transcript.jsonl`. */
const isCheckpoint = (m) => isObject(m) && 'archmax_checkpoint' in m

/**
 * The last turn: from the first message of the last unbroken run of turn openers (see
 * `opensTurn`) to the end. Checkpoint lines of a transcript file do not break a run. With no
 * opener at all, every message.
 * @param {readonly unknown[]} messages
 * @returns {unknown[]}
 */
export function lastTurn(messages) {
  if (!Array.isArray(messages)) return []
  let last = messages.length - 1
  while (last >= 0 && !opensTurn(messages[last])) last--
  if (last < 0) return messages.slice()
  let start = last
  for (let i = last - 1; i >= 0; i--) {
    if (opensTurn(messages[i])) start = i
    else if (!isCheckpoint(messages[i])) break
  }
  return messages.slice(start)
}

// LangChain, duck-typed, for `agent.js` and `deepagents.js` (internal: not a subpath).
// `@langchain/core` is never required: the message classes and the zod converter are
// imported lazily when present, and plain objects LangChain coerces (`{ type: 'ai', ... }`)
// are used when it is absent.

import { modelText } from './native.js'

/** What a JS value is, for error texts. */
export function describe(value) {
  if (value === null) return 'null'
  if (value === undefined) return 'undefined'
  if (Array.isArray(value)) return 'an array'
  return typeof value === 'object' ? 'an object' : `${typeof value} ${String(value).slice(0, 40)}`
}

/**
 * Refuses option names `known` does not list (what TypeScript refuses in a typed caller),
 * naming them and the known ones, so a misspelling from plain JS is not silently ignored.
 */
export function checkOptionNames(params, known, what) {
  const unknown = Object.keys(params).filter((k) => !known.includes(k))
  if (!unknown.length) return
  const names = unknown.map((k) => `'${k}'`).join(', ')
  throw new TypeError(`${what}: unknown option${unknown.length > 1 ? 's' : ''} ${names}; the options are ${known.join(', ')}`)
}

/** What a thrown value says: an Error's message (or name), else the value described. */
export function errorText(e) {
  if (e instanceof Error) return e.message || e.name
  return `a non-Error value (${describe(e)})`
}

/** A LangChain chat model: has `bindTools` and `invoke`. */
export function isLangChainModel(value) {
  return !!value && typeof value === 'object' && typeof value.invoke === 'function' && typeof value.bindTools === 'function'
}

/** A LangChain tool: `name`, `schema`, `invoke`, and no `handler`. */
export function isLangChainTool(value) {
  return (
    !!value &&
    typeof value === 'object' &&
    typeof value.name === 'string' &&
    typeof value.invoke === 'function' &&
    typeof value.handler !== 'function'
  )
}

/** A schema that is not plain JSON Schema (zod 3 `_def`, zod 4 `_zod`, Standard Schema `~standard`). */
function isSchemaObject(schema) {
  return !!schema && typeof schema === 'object' && ('_def' in schema || '_zod' in schema || '~standard' in schema)
}

export async function optionalImport(specifier) {
  try {
    return await import(specifier)
  } catch {
    return null
  }
}

let jsonSchemaModule
/**
 * A tool's schema as JSON Schema: a zod or Standard schema is converted with
 * `@langchain/core`'s `toJsonSchema` (imported on demand); a JSON Schema is used as is.
 */
export async function jsonSchemaOf(schema, what) {
  if (schema === undefined || schema === null) return { type: 'object', properties: {} }
  if (!isSchemaObject(schema)) return schema
  jsonSchemaModule ??= optionalImport('@langchain/core/utils/json_schema')
  const toJsonSchema = (await jsonSchemaModule)?.toJsonSchema
  if (toJsonSchema) return toJsonSchema(schema)
  if (typeof schema.toJSONSchema === 'function') return schema.toJSONSchema()
  throw new TypeError(`${what}: its schema is a zod/Standard schema and @langchain/core is not installed to convert it`)
}

let messagesModule
/** `@langchain/core/messages`, or null when it is not installed. */
export async function langChainMessages() {
  messagesModule ??= optionalImport('@langchain/core/messages')
  return messagesModule
}

/** Concatenated text of a LangChain/OpenAI content (string or content blocks). */
export function contentText(content) {
  if (content === null || content === undefined) return ''
  if (typeof content === 'string') return content
  if (Array.isArray(content)) {
    return content
      .map((block) => {
        if (typeof block === 'string') return block
        if (block && (block.type === 'text' || block.type === 'text_delta' || block.type === 'output_text') && typeof block.text === 'string') return block.text
        return ''
      })
      .join('')
  }
  return String(content)
}

function parseArguments(text) {
  if (text === undefined || text === null || text === '') return {}
  if (typeof text !== 'string') return text
  try {
    return JSON.parse(text)
  } catch {
    return { input: text }
  }
}

/** OpenAI chat messages → LangChain messages (classes when available, else coercible plain objects). */
export function toLangChainMessages(messages, lc) {
  const make = (cls, type, fields) => (lc?.[cls] ? new lc[cls](fields) : { type, ...fields })
  return (messages ?? []).map((m) => {
    const content = m.content ?? ''
    switch (m.role) {
      case 'system':
        return make('SystemMessage', 'system', { content })
      case 'assistant': {
        const toolCalls = (m.tool_calls ?? []).map((c) => ({
          id: c.id,
          name: c.function?.name ?? c.name,
          args: parseArguments(c.function?.arguments ?? c.args),
          type: 'tool_call',
        }))
        return make('AIMessage', 'ai', toolCalls.length ? { content, tool_calls: toolCalls } : { content })
      }
      case 'tool':
        return make('ToolMessage', 'tool', { content, tool_call_id: m.tool_call_id ?? '' })
      default:
        return make('HumanMessage', 'human', { content })
    }
  })
}

/** A LangChain AIMessage → a `chat.completion` the runtime reads (text, tool calls, usage, model id). */
export function fromLangChainMessage(message) {
  if (!message || typeof message !== 'object') {
    throw new Error(`the LangChain model's invoke returned ${describe(message)}, expected an AIMessage`)
  }
  const toolCalls = (message.tool_calls ?? []).map((c, i) => ({
    id: c.id || `call_${i}_${Date.now().toString(36)}`,
    type: 'function',
    function: { name: c.name, arguments: typeof c.args === 'string' ? c.args : JSON.stringify(c.args ?? {}) },
  }))
  const text = contentText(message.content)
  const assistant = { role: 'assistant', content: text === '' && toolCalls.length ? null : text }
  if (toolCalls.length) assistant.tool_calls = toolCalls
  const completion = { choices: [{ message: assistant, finish_reason: toolCalls.length ? 'tool_calls' : 'stop' }] }
  const u = message.usage_metadata
  if (u && typeof u === 'object') {
    const usage = {
      prompt_tokens: u.input_tokens ?? 0,
      completion_tokens: u.output_tokens ?? 0,
      total_tokens: u.total_tokens ?? (u.input_tokens ?? 0) + (u.output_tokens ?? 0),
    }
    const details = u.input_token_details ?? {}
    if (details.cache_read !== undefined) usage.prompt_tokens_details = { cached_tokens: details.cache_read }
    if (details.cache_creation !== undefined) usage.cache_creation_input_tokens = details.cache_creation
    completion.usage = usage
  }
  const modelId = message.response_metadata?.model_name ?? message.response_metadata?.model
  if (typeof modelId === 'string' && modelId) completion.model = modelId
  return completion
}


/** The native stream of a model call, on its `info` (for the LangChain adapter; not enumerable). */
export const STREAM_ID = Symbol('archmax.streamId')

/**
 * `runnable.stream(messages)`: each chunk's text is shown as it comes; the chunks, joined
 * with `concat` (tool-call pieces and usage included), are the answer.
 */
async function streamLangChain(runnable, messages, id, config) {
  let whole
  for await (const chunk of await runnable.stream(messages, config)) {
    const text = contentText(chunk?.content)
    if (text) modelText(id, text)
    whole = whole === undefined ? chunk : typeof whole.concat === 'function' ? whole.concat(chunk) : chunk
  }
  if (whole === undefined) throw new Error("the LangChain model's stream() yielded no chunk, expected AIMessageChunks")
  return whole
}

/**
 * A LangChain chat model as a model function over the chat-completions request. `configOf(info)`
 * gives the LangChain run config of a call (its `callbacks`, `tags`, `metadata`), or nothing.
 */
export function langChainModelFunction(chatModel, configOf) {
  return async (request, info) => {
    const lc = await langChainMessages()
    const messages = toLangChainMessages(request.messages, lc)
    const tools = request.tools ?? []
    // OpenAI-format tool definitions: every LangChain provider's bindTools accepts them.
    const runnable = tools.length ? chatModel.bindTools(tools) : chatModel
    const streams = info?.stream && info[STREAM_ID] !== undefined && typeof runnable.stream === 'function'
    const config = typeof configOf === 'function' ? configOf(info) : undefined
    const message = streams ? await streamLangChain(runnable, messages, info[STREAM_ID], config) : await runnable.invoke(messages, config)
    const completion = fromLangChainMessage(message)
    // Without a model id in the answer, the instance's configured one prices and attributes the call.
    if (completion && typeof completion === 'object' && !completion.model) {
      const configured = [chatModel.model, chatModel.modelName, chatModel.model_name].find((m) => typeof m === 'string' && m)
      if (configured) completion.model = configured
    }
    return completion
  }
}

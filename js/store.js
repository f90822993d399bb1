// Session stores for `createAgent({ workspace: { sessionStore } })`. Hand-written.
// The filesystem and memory stores live in Rust; a host store is any object with the
// methods below, adapted here so nothing it does (throw, reject, answer garbage) can
// throw into Rust: every call answers an `{ ok, value | error }` envelope.
import { resolve } from 'node:path'
import { NativeSessionStore } from './native.js'
import { sliced } from './slices.js'
import { describe, errorText } from './langchain.js'

/** The Rust store behind a store made by the factories below. */
const NATIVE = Symbol('archmax.sessionStore')

/** The Rust side (leases, fallback spec snapshots, the sessions' files) of each host store object, shared by its agents. */
const hostSides = new WeakMap()

/**
 * Sessions as folders under `dir` (`<dir>/<id>/checkpoints/transcript.jsonl`, `checkpoints/state.json`, `scratchpad/`, …),
 * instead of `<rootDir>/sessions`.
 * @param {{ dir: string }} options
 */
export function createFilesystemSessionStore(options) {
  const dir = options?.dir
  if (typeof dir !== 'string' || !dir) {
    throw new TypeError(`createFilesystemSessionStore needs { dir: string }, got ${describe(dir)}`)
  }
  const abs = resolve(dir)
  return Object.freeze({ kind: 'filesystem', dir: abs, [NATIVE]: NativeSessionStore.filesystem(abs) })
}

/** Sessions and their files in this process's memory, shared by every agent given this store; nothing durable. */
export function createMemorySessionStore() {
  return Object.freeze({ kind: 'memory', [NATIVE]: NativeSessionStore.memory() })
}

/**
 * Sessions in PostgreSQL, shared by every agent and worker given the same database: one
 * writer per session across processes (a lease row), each step one transaction. The tables
 * are created or migrated now, so this throws when the database cannot be reached.
 * @param {{ url: string, schema?: string, leaseTtlMs?: number }} options
 */
export function createPostgresSessionStore(options) {
  const url = options?.url
  if (typeof url !== 'string' || !/^postgres(ql)?:\/\//.test(url)) {
    throw new TypeError(`createPostgresSessionStore needs { url: 'postgres://…' }, got ${describe(url)}`)
  }
  const schema = options.schema
  if (schema !== undefined && typeof schema !== 'string') {
    throw new TypeError(`createPostgresSessionStore: 'schema' must be a string, got ${describe(schema)}`)
  }
  const ttl = options.leaseTtlMs
  if (ttl !== undefined && !(Number.isInteger(ttl) && ttl > 0 && ttl <= 0xffffffff)) {
    throw new TypeError(`createPostgresSessionStore: 'leaseTtlMs' must be a positive integer, got ${describe(ttl)}`)
  }
  const native = NativeSessionStore.postgres(url, schema ?? null, ttl ?? null)
  return Object.freeze({
    kind: 'postgres',
    ...(schema ? { schema } : {}),
    [NATIVE]: native,
    /** Queues a delivery for `archmax worker`; resolves to its number in the queue. */
    enqueueDelivery(sessionId, delivery) {
      if (typeof sessionId !== 'string' || !sessionId) {
        return Promise.reject(new TypeError(`enqueueDelivery needs a session id, got ${describe(sessionId)}`))
      }
      const { trigger, variables, message, workflow } = delivery ?? {}
      if (typeof trigger !== 'string') {
        return Promise.reject(new TypeError(`enqueueDelivery needs { trigger: string }, got ${describe(trigger)}`))
      }
      if (message != null && typeof message !== 'string') {
        return Promise.reject(new TypeError(`enqueueDelivery: 'message' must be a string, got ${describe(message)}`))
      }
      if (workflow != null && typeof workflow !== 'string') {
        return Promise.reject(new TypeError(`enqueueDelivery: 'workflow' must be a string, got ${describe(workflow)}`))
      }
      return native.enqueueDelivery(sessionId, trigger, variables ?? null, message ?? null, workflow ?? null)
    },
    /** A queued delivery: `{ status, outcome, error }`, or null. */
    delivery(seq) {
      if (!Number.isSafeInteger(seq)) {
        return Promise.reject(new TypeError(`delivery needs the number enqueueDelivery answered, got ${describe(seq)}`))
      }
      return native.delivery(seq)
    },
  })
}

const REQUIRED = ['load', 'commit', 'list', 'delete']
const OPTIONAL = ['loadState', 'writeSpec', 'readSpec']

/** Checks a host store object; a `TypeError` naming what is missing. */
function checkHostStore(store) {
  if (!store || typeof store !== 'object') {
    throw new TypeError(`'workspace.sessionStore' must be a session store, got ${describe(store)}`)
  }
  for (const m of REQUIRED) {
    if (typeof store[m] !== 'function') {
      throw new TypeError(`'workspace.sessionStore' must have a '${m}' method (a host store has load, commit, list and delete)`)
    }
  }
  for (const m of OPTIONAL) {
    if (store[m] !== undefined && typeof store[m] !== 'function') {
      throw new TypeError(`'workspace.sessionStore.${m}' must be a function when given, got ${describe(store[m])}`)
    }
  }
  const hasSpecs = typeof store.writeSpec === 'function' || typeof store.readSpec === 'function'
  if (hasSpecs && (typeof store.writeSpec !== 'function' || typeof store.readSpec !== 'function')) {
    throw new TypeError("'workspace.sessionStore' must have both 'writeSpec' and 'readSpec', or neither")
  }
  return hasSpecs
}

/** Runs one store method; the envelope JSON the native side reads. Never throws. */
async function answer(method, fn) {
  let value
  try {
    value = await fn()
  } catch (e) {
    return JSON.stringify({ ok: false, error: `store.${method} threw: ${errorText(e)}` })
  }
  try {
    return JSON.stringify({ ok: true, value: value === undefined ? null : value })
  } catch (e) {
    return JSON.stringify({ ok: false, error: `store.${method} answered a value that is not JSON: ${errorText(e)}` })
  }
}

/** The native side's `{ method, id?, … }` calls dispatched to the host store's methods. */
function hostHandler(store) {
  return (callJson) => {
    let call
    try {
      call = JSON.parse(callJson)
    } catch {
      return Promise.resolve(JSON.stringify({ ok: false, error: 'unreadable store call' }))
    }
    const { method, id } = call
    return answer(method, async () => {
      switch (method) {
        case 'load':
          return store.load(id)
        case 'loadState': {
          if (typeof store.loadState === 'function') return store.loadState(id)
          const loaded = await store.load(id)
          return loaded === null || loaded === undefined ? null : loaded.state
        }
        case 'commit':
          await store.commit(id, { messages: call.messages, state: call.state })
          return null
        case 'list':
          return store.list()
        case 'delete':
          return store.delete(id)
        case 'writeSpec':
          await store.writeSpec(call.hash, call.spec)
          return null
        case 'readSpec':
          return store.readSpec(call.hash)
        default:
          throw new Error(`unknown store method '${method}'`)
      }
    })
  }
}

/**
 * Chooses `native`'s session store from the `workspace.sessionStore` option (before `open`);
 * nothing for `undefined`/`null` (the default, `<rootDir>/sessions`). Throws `TypeError` on a bad store.
 * @param {*} sessionStore
 * @returns {((native: import('../index.js').NativeAgent) => object) | null} the step that applies it
 */
export function sessionStoreBinding(sessionStore) {
  if (sessionStore === undefined || sessionStore === null) return null
  const made = sessionStore?.[NATIVE]
  if (made) return (native) => native.useSessionStore(made, null, false)
  const hasSpecs = checkHostStore(sessionStore)
  let side = hostSides.get(sessionStore)
  if (!side) hostSides.set(sessionStore, (side = NativeSessionStore.host()))
  const handler = sliced(hostHandler(sessionStore))
  return (native) => native.useSessionStore(side, handler, hasSpecs)
}

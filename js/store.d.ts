// Session stores for `createAgent({ workspace: { sessionStore } })`. Hand-written.

/** A store made by `createFilesystemSessionStore`, `createMemorySessionStore` or `createPostgresSessionStore`. */
export interface SessionStore {
  readonly kind: 'filesystem' | 'memory' | 'postgres'
  /** The sessions folder of a filesystem store (absolute). */
  readonly dir?: string
  /** The schema of a PostgreSQL store, when one was given. */
  readonly schema?: string
}

/** A session as a host store holds it: the last committed state and the whole transcript. */
export interface StoredSession {
  /** The runtime's state of the last committed step (opaque to the store; keep it as given). */
  state: unknown
  /** Every message committed so far, in order (OpenAI chat messages). */
  messages: Array<unknown>
}

/** One committed step: the messages it added (append them) and the whole new state (replace it). */
export interface SessionCommit {
  messages: Array<unknown>
  state: unknown
}

/**
 * A session store implemented by the host (this port's own interface; the original takes a
 * Deep Agents file backend, which is not ported). Each method may answer a value or a Promise.
 * A method that throws, rejects or answers something unreadable fails the call it served with a
 * `SessionStoreError` naming the method. The agent calls it from the runtime's threads while
 * the JS thread is free; it never blocks the JS thread. The sessions' files (`scratchpad/`,
 * offloaded results, written files) are not the store's: the addon keeps them in this
 * process's memory for this store object, as the memory store does.
 */
export interface HostSessionStore {
  /** The session as last committed, or `null`/`undefined` when it has none. */
  load(sessionId: string): StoredSession | null | undefined | Promise<StoredSession | null | undefined>
  /** Append `step.messages` to the session's transcript, then replace its state with `step.state`. */
  commit(sessionId: string, step: SessionCommit): unknown
  /** Every session id held (child sessions `<id>~…` included). */
  list(): Array<string> | Promise<Array<string>>
  /** Remove the session (its child sessions are deleted by further `delete` calls). */
  delete(sessionId: string): unknown
  /** The state only (default: `load(id)?.state`). */
  loadState?(sessionId: string): unknown
  /** Keep the spec snapshot `hash` if absent (with `readSpec`; without both, snapshots stay in memory). */
  writeSpec?(hash: string, spec: unknown): unknown
  /** The spec snapshot `hash`, or `null`/`undefined`. */
  readSpec?(hash: string): unknown
}

/** Sessions as folders under `dir` instead of `<rootDir>/sessions`. */
export declare function createFilesystemSessionStore(options: { dir: string }): SessionStore
/** Sessions and their files in this process's memory, shared by every agent given this store. Cannot seed. */
export declare function createMemorySessionStore(): SessionStore
/**
 * Sessions in PostgreSQL (`postgres://user:password@host:port/database`), shared by every agent
 * and worker on the same database: one writer per session across processes, each step one
 * transaction. Creates or migrates its tables now; throws when the database cannot be reached.
 */
export declare function createPostgresSessionStore(options: {
  url: string
  /** Keep the tables in this schema (created if absent). */
  schema?: string
  /** How long a writer lease outlives its holder's last renewal (default 30000). */
  leaseTtlMs?: number
}): PostgresSessionStore

/** A delivery for the workers of a PostgreSQL store (what `agent.workflow.deliver` takes, run later by a worker). */
export interface QueuedDelivery {
  /** The event that arrived: it becomes the session's trigger. */
  trigger: string
  /** Seeded locked, as a direct delivery's. */
  variables?: Record<string, unknown>
  /** A person's message with the event. */
  message?: string
  /** Only workers of this workflow serve it (`archmax worker <workflow>`); any worker when absent. */
  workflow?: string
}

/** A queued delivery as stored. */
export interface DeliveryRecord {
  /** `queued`, `claimed` (a worker has it), `applied` (its turn is under way) or `done`. */
  status: 'queued' | 'claimed' | 'applied' | 'done'
  /** The Outcome its turn settled with (as `--json` prints it: without `messages`). */
  outcome: Record<string, unknown> | null
  /** The refusal's text when the delivery did not run (a session not awaiting an event, …). */
  error: string | null
}

/** The PostgreSQL store, with the queue its workers (`archmax worker`) serve. */
export interface PostgresSessionStore extends SessionStore {
  readonly kind: 'postgres'
  /**
   * Queues a delivery: one worker runs it, after the session's earlier queued deliveries, and
   * stores its Outcome. Resolves to its number in the queue.
   */
  enqueueDelivery(sessionId: string, delivery: QueuedDelivery): Promise<number>
  /** A queued delivery by its number; null when there is none. */
  delivery(seq: number): Promise<DeliveryRecord | null>
}

// The package entry: the generated binding (index.js), the hand-written agent API (agent.js) and
// the root subset of the transcript readers (the same bindings as `@archmax-ai/harness/messages`).
export * from './index.js'
// Replaces Governance.prototype.decide with the faster path (same class, same answers).
import './governance.js'
export * from './agent.js'
export { createFilesystemSessionStore, createMemorySessionStore } from './store.js'
export { contentToString, isAiMessage, isRuntimeNote, lastAgentText, runtimeNoteKind } from './messages.js'

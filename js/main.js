// The package entry: the public part of the generated binding (index.js; its `Native*` classes
// and `__napiBindingTarget` stay internal), the hand-written agent API (agent.js) and the root
// subset of the transcript readers (the same bindings as `@archmax-ai/harness/messages`).
export {
  SIGNATURE_TYPES,
  connectionForTrigger,
  isSlug,
  messagePathForTrigger,
  parseCodeDescription,
  parseMachineSpec,
  readEnv,
  runCli,
  sessionIdForTrigger,
  signatureForTrigger,
  signatureJsonSchema,
  signatureValueIssues,
  specHash,
  validateSpec,
  validateWorkflow,
} from './native.js'
// Governance with the faster decide (same class, same answers) and the documented error classes.
export { Governance } from './governance.js'
export * from './agent.js'
export { createFilesystemSessionStore, createMemorySessionStore, createPostgresSessionStore } from './store.js'
export { contentToString, isAiMessage, isRuntimeNote, lastAgentText, runtimeNoteKind } from './messages.js'

export * from './index.js'
export * from './agent.js'
export { contentToString, isAiMessage, isRuntimeNote, lastAgentText, runtimeNoteKind } from './messages.js'
export type { RuntimeNoteKind } from './messages.js'

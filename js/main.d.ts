// The package entry's types. The generated binding's internals (`NativeAgent`, `NativeTurn`,
// `NativeSessionStore`, `__napiBindingTarget` and their option shapes) are not re-exported.
export {
  Governance,
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
} from '../index.js'
export type {
  DecisionObject,
  Diagnostic,
  GovernanceCall,
  GovernanceDecision,
  GovernanceRuleId,
  GovernanceSkill,
  GovernanceSpecOptions,
  GovernanceWorkspaceOptions,
  MountOptions,
  ParseMachineSpecResult,
  SignatureIssue,
  SignatureItem,
  SignatureJsonSchema,
  SpecLike,
  SpecValidation,
  TriggerSignature,
  ValidateWorkflowOptions,
  ValidationResult,
  Workflow,
} from '../index.js'
export * from './agent.js'
export { createFilesystemSessionStore, createMemorySessionStore, createPostgresSessionStore } from './store.js'
export type { SessionStore, HostSessionStore, StoredSession, SessionCommit, PostgresSessionStore, QueuedDelivery, DeliveryRecord } from './store.js'
export { contentToString, isAiMessage, isRuntimeNote, lastAgentText, runtimeNoteKind } from './messages.js'
export type { RuntimeNoteKind, TranscriptMessage } from './messages.js'

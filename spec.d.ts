// `@archmax-ai/harness/spec`: the pure spec functions (no file system access).
export {
  SIGNATURE_TYPES,
  isSlug,
  parseCodeDescription,
  parseMachineSpec,
  sessionIdForTrigger,
  signatureForTrigger,
  signatureJsonSchema,
  signatureValueIssues,
  specHash,
  validateSpec,
} from './index.js'
export type {
  Diagnostic,
  ParseMachineSpecResult,
  SignatureIssue,
  SignatureItem,
  SignatureJsonSchema,
  SpecLike,
  SpecValidation,
  TriggerSignature,
  Workflow,
} from './index.js'

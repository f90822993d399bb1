// `@archmax-ai/harness/spec`: the workflow language — validation, grammars, signatures.
// Everything here is pure except `validateWorkflow`, which reads the workspace it is given.
export {
  SIGNATURE_TYPES,
  connectionForTrigger,
  isSlug,
  messagePathForTrigger,
  parseCodeDescription,
  parseMachineSpec,
  sessionIdForTrigger,
  signatureForTrigger,
  signatureJsonSchema,
  signatureValueIssues,
  specHash,
  validateSpec,
  validateWorkflow,
} from '../index.js'
export type {
  Diagnostic,
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

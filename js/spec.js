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
} from './native.js'

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

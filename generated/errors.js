// Generated from archmax_machine::ErrorClass (crates/machine/src/error.rs) by
// `cargo test -p archmax-napi`: do not edit.
import { HarnessError } from '../js/harness-error.js'

/** The class named `code`: a `HarnessError` whose `name` and `code` are `code`. */
const define = (code) =>
  ({ [code]: class extends HarnessError { constructor(message) { super(message, code) } } })[code]

export const WorkflowLoadError = define('WorkflowLoadError')
export const WorkflowDisabledError = define('WorkflowDisabledError')
export const UnknownTriggerError = define('UnknownTriggerError')
export const ReservedToolNameError = define('ReservedToolNameError')
export const ToolPathsError = define('ToolPathsError')
export const InvalidVariableNameError = define('InvalidVariableNameError')
export const MountCollisionError = define('MountCollisionError')
export const SessionStoreIdError = define('SessionStoreIdError')
export const SessionStoreError = define('SessionStoreError')
export const SessionStoreCapabilityError = define('SessionStoreCapabilityError')
export const SessionForkError = define('SessionForkError')
export const SessionNotParkedError = define('SessionNotParkedError')
export const InvalidDecisionTargetError = define('InvalidDecisionTargetError')
export const EmptyMessageError = define('EmptyMessageError')
export const SessionNotAwaitingInputError = define('SessionNotAwaitingInputError')
export const MissingDeliveryTriggerError = define('MissingDeliveryTriggerError')
export const SessionNotResumableError = define('SessionNotResumableError')
export const SessionParkedError = define('SessionParkedError')
export const UnsupportedRuntimeContractError = define('UnsupportedRuntimeContractError')
export const AgentDisposedError = define('AgentDisposedError')
export const UnknownStateError = define('UnknownStateError')
const UnknownSessionTriggerError = define('UnknownSessionTriggerError')

/** The exported error classes by name. */
export const errors = {
  WorkflowLoadError,
  WorkflowDisabledError,
  UnknownTriggerError,
  ReservedToolNameError,
  ToolPathsError,
  InvalidVariableNameError,
  MountCollisionError,
  SessionStoreIdError,
  SessionStoreError,
  SessionStoreCapabilityError,
  SessionForkError,
  SessionNotParkedError,
  InvalidDecisionTargetError,
  EmptyMessageError,
  SessionNotAwaitingInputError,
  MissingDeliveryTriggerError,
  SessionNotResumableError,
  SessionParkedError,
  UnsupportedRuntimeContractError,
  AgentDisposedError,
  UnknownStateError,
}

/** Every class the native side may name, exported or not. */
export const errorClasses = {
  ...errors,
  UnknownSessionTriggerError,
}

//! [`RunError`]: why a harness cannot be assembled or a turn cannot start. It lives
//! apart from the harness so that the modules the harness assembles from (host tools,
//! the plain agent, hooks, scripts) can fail with it without importing the harness.

use archmax_spec::runtime_contract::RuntimeContract;
use ts_rs::TS;

/// Why a harness cannot be assembled or a turn cannot start. Each carries the
/// original's error class name as `code()`.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum RunError {
    /// The workflow is missing or does not load.
    #[error(transparent)]
    WorkflowLoad(#[from] archmax_spec::workspace::WorkflowLoadError),
    /// The workflow is disabled and a new turn would start.
    #[error(
        "workflow '{0}' is disabled ('disabled: true' in its workflow.yaml); no session started. Remove that flag to re-enable it. Parked sessions can still be decided, replied to and delivered to."
    )]
    WorkflowDisabled(String),
    /// No state declares the trigger.
    #[error("No start state for trigger '{id}'. {}", declared_triggers(.available))]
    UnknownTrigger {
        /// The trigger id.
        id: String,
        /// The declared start-state triggers, in document order.
        available: Vec<String>,
    },
    /// The session id breaks the id rules.
    #[error(transparent)]
    SessionId(#[from] crate::store::SessionIdError),
    /// A caller-supplied session path is not usable (the original's unexported
    /// `InvalidSessionPathError`; reported as `SessionStoreIdError` here).
    #[error("the caller-supplied path '{path}' is not a usable session path: {problem}")]
    SessionPath {
        /// The path as given.
        path: String,
        /// Why it is refused.
        problem: String,
    },
    /// A turn is already running on the session.
    #[error("{}", crate::store::busy_message(.id, .status))]
    Busy {
        /// The session.
        id: String,
        /// The stored state's `status`, or `unknown`.
        status: String,
    },
    /// The session is parked; parks are resumed by decide/reply/deliver.
    #[error("Session '{0}' is parked; resume it with a decision, a reply or a delivery.")]
    Parked(String),
    /// A decision or reply to a session not parked at a human state.
    #[error("Session '{0}' is not parked at a human state; there is nothing to decide.")]
    SessionNotParked(String),
    /// A decision target that is not one of the parked state's transitions.
    #[error(
        "'{target}' is not a valid decision target for session '{id}'. Choose one of: {valid}."
    )]
    InvalidDecisionTarget {
        /// The session.
        id: String,
        /// What was picked.
        target: String,
        /// The valid targets, comma-joined.
        valid: String,
    },
    /// A decision without a target.
    #[error("A decision target is required for session '{id}'. Choose one of: {valid}.")]
    MissingDecisionTarget {
        /// The session.
        id: String,
        /// The valid targets, comma-joined.
        valid: String,
    },
    /// A blank reply.
    #[error(
        "A message is required to reply to session '{0}': there is nothing to answer, and a parked session is not moved by an empty turn."
    )]
    EmptyMessage(String),
    /// A delivery to a session not parked for input.
    #[error(
        "Session '{0}' is not parked awaiting an event; there is nothing to deliver to. A session awaiting a human decision resumes through a decision instead."
    )]
    SessionNotAwaitingInput(String),
    /// A delivery without a trigger id.
    #[error(
        "A trigger id is required to deliver to session '{0}': it becomes the session's current trigger, which its hooks and guards read. Any id is accepted — a park awaits no particular one."
    )]
    MissingDeliveryTrigger(String),
    /// Host tools take reserved names (all of one reservation, the prefix first).
    #[error("{}", reserved_message(.names, *.reservation))]
    ReservedToolName {
        /// The offending tool names, in the order given.
        names: Vec<String>,
        /// Which reservation they break.
        reservation: Reservation,
    },
    /// A path declaration was refused.
    #[error(transparent)]
    ToolPaths(#[from] archmax_kernel::ToolPathsError),
    /// The session store failed.
    #[error("{0}")]
    Store(String),
    /// An authored file the harness reads (`AGENTS.md`) is there but is not one it reads:
    /// not a regular file, or larger than the bound.
    #[error("{path} {problem}")]
    AuthoredFile {
        /// The workspace-relative path.
        path: String,
        /// What is wrong (`is a named pipe (FIFO), not a regular file`).
        problem: String,
    },
    /// A mount collides with a run area or would serve the authoring plane.
    #[error("{}", collision_message(.key, .run_area.as_deref()))]
    MountCollision {
        /// The mount key (`/name/` or `/name`).
        key: String,
        /// The run area it shadows (`scratchpad`, …); `None` when it would serve
        /// the authoring plane (`workflows/`).
        run_area: Option<String>,
    },
    /// The configured store cannot do what was asked (seeding without a session folder).
    #[error("The configured {kind} session store does not support '{capability}'. {hint}")]
    StoreCapability {
        /// What store is configured (`in-memory`).
        kind: &'static str,
        /// The operation it lacks (`seed`).
        capability: &'static str,
        /// What to configure instead.
        hint: &'static str,
    },
    /// A fork cannot be made as asked (no such session or step, a child session, a step
    /// waiting on a child, a taken id).
    #[error("{0}")]
    Fork(String),
    /// A seeded file path is not an agent-visible session file (a plain `Error` in the original).
    #[error("{0}")]
    SeedPath(String),
    /// A seeded or delivered variable has a bad name.
    #[error(
        "'{name}' is not a valid variable name ({origin}). Use lowercase letters, digits and underscores, starting with a letter (e.g. 'from_email')."
    )]
    InvalidVariableName {
        /// The name as given.
        name: String,
        /// Where it came from: `seeded`, or `delivered to session '<id>'`.
        origin: String,
    },
    /// A firing for a session that has not run names a trigger no state declares
    /// (the original's unexported `UnknownSessionTriggerError`).
    #[error(
        "No state declares trigger '{0}', and no parked session is awaiting it, so there is nowhere for this firing to go. Declare it under the 'triggers:' of the state a run should start in, or deliver the firing to a session parked on it — naming the session, or a 'sessionPath' to find it by."
    )]
    UnknownSessionTrigger(String),
    /// A host registered a hook executor under a built-in kind (a plain `Error` in JS).
    #[error(
        "hookExecutors may not override built-in hook kind(s): {0}. Register a custom kind under a different name."
    )]
    BuiltinHookKind(String),
    /// The spec declares a runtime contract this harness does not implement.
    #[error("{}", archmax_spec::runtime_contract::unsupported_message(.0))]
    UnsupportedRuntimeContract(RuntimeContract),
    /// A setting the harness reads (an `ARCHMAX_*` variable, a cassette) cannot be used.
    #[error("{0}")]
    Settings(String),
    /// A host's option is out of its range (`requestTimeoutMs`, `maxRetries`, …).
    #[error("{0}")]
    Options(String),
}

/// Every error class the package raises, by the name a host matches on (an error's `code`
/// and `name`). The JS classes are generated from this list (`generated/errors.js`), and
/// its TypeScript union is `HarnessErrorCode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize, TS)]
#[ts(export, rename = "HarnessErrorCode")]
pub enum ErrorClass {
    /// The workflow is missing or does not load.
    WorkflowLoadError,
    /// The workflow is disabled.
    WorkflowDisabledError,
    /// No state starts on the trigger.
    UnknownTriggerError,
    /// A host tool takes a name the runtime keeps.
    ReservedToolNameError,
    /// A path declaration of a host tool is wrong.
    ToolPathsError,
    /// A seeded or set variable name is not a variable name.
    InvalidVariableNameError,
    /// A mount collides with a run area or the authoring plane.
    MountCollisionError,
    /// A session id (or session path) is refused.
    SessionStoreIdError,
    /// The session store failed.
    SessionStoreError,
    /// The session store cannot do what was asked.
    SessionStoreCapabilityError,
    /// A session fork cannot be made as asked.
    SessionForkError,
    /// A decision or reply for a session not parked at a human state.
    SessionNotParkedError,
    /// A decision names no valid target.
    InvalidDecisionTargetError,
    /// A message is blank.
    EmptyMessageError,
    /// A delivery for a session not awaiting input.
    SessionNotAwaitingInputError,
    /// A delivery names no trigger.
    MissingDeliveryTriggerError,
    /// A turn holds the session.
    SessionNotResumableError,
    /// A send on a parked session that must be resumed otherwise.
    SessionParkedError,
    /// The workflow asks for a runtime contract this build does not run.
    UnsupportedRuntimeContractError,
    /// The agent was disposed.
    AgentDisposedError,
    /// A state the workflow does not declare (`Governance`).
    UnknownStateError,
    /// A firing for a session that never ran names a trigger no state declares (the
    /// original does not export this class; neither do we).
    UnknownSessionTriggerError,
}

impl ErrorClass {
    /// Every class, in the order the package lists them.
    pub const ALL: [ErrorClass; 22] = [
        ErrorClass::WorkflowLoadError,
        ErrorClass::WorkflowDisabledError,
        ErrorClass::UnknownTriggerError,
        ErrorClass::ReservedToolNameError,
        ErrorClass::ToolPathsError,
        ErrorClass::InvalidVariableNameError,
        ErrorClass::MountCollisionError,
        ErrorClass::SessionStoreIdError,
        ErrorClass::SessionStoreError,
        ErrorClass::SessionStoreCapabilityError,
        ErrorClass::SessionForkError,
        ErrorClass::SessionNotParkedError,
        ErrorClass::InvalidDecisionTargetError,
        ErrorClass::EmptyMessageError,
        ErrorClass::SessionNotAwaitingInputError,
        ErrorClass::MissingDeliveryTriggerError,
        ErrorClass::SessionNotResumableError,
        ErrorClass::SessionParkedError,
        ErrorClass::UnsupportedRuntimeContractError,
        ErrorClass::AgentDisposedError,
        ErrorClass::UnknownStateError,
        ErrorClass::UnknownSessionTriggerError,
    ];

    /// The class name (`code`).
    pub fn name(self) -> &'static str {
        match self {
            ErrorClass::WorkflowLoadError => "WorkflowLoadError",
            ErrorClass::WorkflowDisabledError => "WorkflowDisabledError",
            ErrorClass::UnknownTriggerError => "UnknownTriggerError",
            ErrorClass::ReservedToolNameError => "ReservedToolNameError",
            ErrorClass::ToolPathsError => "ToolPathsError",
            ErrorClass::InvalidVariableNameError => "InvalidVariableNameError",
            ErrorClass::MountCollisionError => "MountCollisionError",
            ErrorClass::SessionStoreIdError => "SessionStoreIdError",
            ErrorClass::SessionStoreError => "SessionStoreError",
            ErrorClass::SessionStoreCapabilityError => "SessionStoreCapabilityError",
            ErrorClass::SessionForkError => "SessionForkError",
            ErrorClass::SessionNotParkedError => "SessionNotParkedError",
            ErrorClass::InvalidDecisionTargetError => "InvalidDecisionTargetError",
            ErrorClass::EmptyMessageError => "EmptyMessageError",
            ErrorClass::SessionNotAwaitingInputError => "SessionNotAwaitingInputError",
            ErrorClass::MissingDeliveryTriggerError => "MissingDeliveryTriggerError",
            ErrorClass::SessionNotResumableError => "SessionNotResumableError",
            ErrorClass::SessionParkedError => "SessionParkedError",
            ErrorClass::UnsupportedRuntimeContractError => "UnsupportedRuntimeContractError",
            ErrorClass::AgentDisposedError => "AgentDisposedError",
            ErrorClass::UnknownStateError => "UnknownStateError",
            ErrorClass::UnknownSessionTriggerError => "UnknownSessionTriggerError",
        }
    }

    /// Whether the package exports the class (all but the original's unexported one).
    pub fn exported(self) -> bool {
        self != ErrorClass::UnknownSessionTriggerError
    }
}

impl RunError {
    /// The original's error class name.
    pub fn code(&self) -> &'static str {
        self.class().map_or_else(
            || match self {
                RunError::Options(_) => "TypeError",
                _ => "Error",
            },
            ErrorClass::name,
        )
    }

    /// The error class a host sees, `None` for a plain `Error` (or a `TypeError`).
    pub fn class(&self) -> Option<ErrorClass> {
        Some(match self {
            RunError::WorkflowLoad(_) => ErrorClass::WorkflowLoadError,
            RunError::WorkflowDisabled(_) => ErrorClass::WorkflowDisabledError,
            RunError::UnknownTrigger { .. } => ErrorClass::UnknownTriggerError,
            RunError::SessionId(_) | RunError::SessionPath { .. } => {
                ErrorClass::SessionStoreIdError
            }
            RunError::Busy { .. } => ErrorClass::SessionNotResumableError,
            RunError::Parked(_) => ErrorClass::SessionParkedError,
            RunError::SessionNotParked(_) => ErrorClass::SessionNotParkedError,
            RunError::InvalidDecisionTarget { .. } | RunError::MissingDecisionTarget { .. } => {
                ErrorClass::InvalidDecisionTargetError
            }
            RunError::EmptyMessage(_) => ErrorClass::EmptyMessageError,
            RunError::SessionNotAwaitingInput(_) => ErrorClass::SessionNotAwaitingInputError,
            RunError::MissingDeliveryTrigger(_) => ErrorClass::MissingDeliveryTriggerError,
            RunError::ReservedToolName { .. } => ErrorClass::ReservedToolNameError,
            RunError::ToolPaths(_) => ErrorClass::ToolPathsError,
            RunError::Store(_) => ErrorClass::SessionStoreError,
            RunError::StoreCapability { .. } => ErrorClass::SessionStoreCapabilityError,
            RunError::Fork(_) => ErrorClass::SessionForkError,
            RunError::MountCollision { .. } => ErrorClass::MountCollisionError,
            RunError::InvalidVariableName { .. } => ErrorClass::InvalidVariableNameError,
            RunError::UnknownSessionTrigger(_) => ErrorClass::UnknownSessionTriggerError,
            RunError::UnsupportedRuntimeContract(_) => ErrorClass::UnsupportedRuntimeContractError,
            RunError::SeedPath(_)
            | RunError::BuiltinHookKind(_)
            | RunError::AuthoredFile { .. }
            | RunError::Settings(_)
            | RunError::Options(_) => return None,
        })
    }
}

/// `Declared triggers: a, b.`, or the sentence for a workflow that declares none.
fn declared_triggers(available: &[String]) -> String {
    if available.is_empty() {
        "The workflow declares no start-state triggers.".to_string()
    } else {
        format!("Declared triggers: {}.", available.join(", "))
    }
}

/// The two forms of the mount-collision message.
fn collision_message(key: &str, run_area: Option<&str>) -> String {
    match run_area {
        None => format!(
            "Mount '{key}' would serve the authoring plane to the agent. 'workflows/' holds machine specs, grading rubrics, hook scripts, and test cases; the runtime reads them through the authoring backend, and no agent tool may address them. Configure them with the 'authoring' option instead of mounting them."
        ),
        Some(top) => format!(
            "Mount '{key}' collides with the run area '{top}/', which the session store owns at the workspace root. Mount it under a different key."
        ),
    }
}

impl From<crate::store::StoreError> for RunError {
    /// A busy session is [`RunError::Busy`]; anything else a store failure.
    fn from(e: crate::store::StoreError) -> Self {
        match e {
            crate::store::StoreError::Busy { id, status } => RunError::Busy { id, status },
            other => RunError::Store(other.to_string()),
        }
    }
}

/// The names a host tool may not take (the original's `reservation` field).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reservation {
    /// The `archmax_` prefix of the runtime's control tools.
    Prefix,
    /// The runtime's own file operations (`copy_file`, `move_file`, `remove_file`).
    FileOperation,
}

impl Reservation {
    /// `prefix` or `file-operation`, as the original spells it.
    pub fn as_str(self) -> &'static str {
        match self {
            Reservation::Prefix => "prefix",
            Reservation::FileOperation => "file-operation",
        }
    }
}

/// The `ReservedToolNameError` message for `names` (singular or plural form).
pub(crate) fn reserved_message(names: &[String], reservation: Reservation) -> String {
    let quoted: Vec<String> = names.iter().map(|n| format!("'{n}'")).collect();
    let quoted = quoted.join(", ");
    let one = names.len() == 1;
    match (reservation, one) {
        (Reservation::Prefix, true) => format!(
            "Host tool {quoted} uses the reserved 'archmax_' prefix, which names the runtime's own control tools. Rename it."
        ),
        (Reservation::Prefix, false) => format!(
            "Host tools {quoted} use the reserved 'archmax_' prefix, which names the runtime's own control tools. Rename them."
        ),
        (Reservation::FileOperation, true) => format!(
            "Host tool {quoted} takes the name of the runtime's own file operation (copy_file, move_file, remove_file), which every agent already has. Drop it, or rename it."
        ),
        (Reservation::FileOperation, false) => format!(
            "Host tools {quoted} take the names of the runtime's own file operations (copy_file, move_file, remove_file), which every agent already has. Drop them, or rename them."
        ),
    }
}

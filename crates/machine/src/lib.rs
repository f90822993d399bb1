//! `archmax-machine`: the runtime. A [`Harness`] is one workflow assembled once;
//! [`Harness::send`] runs a turn: the prompt for the active state, the model call,
//! and every tool call governed by the kernel before it runs, each step committed
//! to the session store.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::panic))]

mod blocking;
pub(crate) mod cancel;
pub mod caps;
pub mod clock;
pub(crate) mod control;
mod error;
pub(crate) mod events;
pub mod files;
mod governed;
mod harness;
pub mod history;
pub mod hooks;
pub mod host_workspace;
pub mod images;
mod invoke;
pub mod mcp;
pub mod mocks;
pub mod model;
pub mod notes;
pub mod outcome;
pub(crate) mod park;
pub(crate) mod plain;
pub(crate) mod prompt;
pub(crate) mod ptc;
mod registry;
pub(crate) mod resolve;
pub mod run_artifacts;
mod scope;
mod script_thread;
pub(crate) mod sessions;
pub mod standing;
pub mod state;
pub mod store;
pub(crate) mod substitute;
#[cfg(any(test, feature = "test-support"))]
pub mod testing;
pub(crate) mod tooldefs;
pub mod tools;
pub mod trace;
mod turn;

pub use blocking::background_thread;
pub use error::{ErrorClass, Reservation, RunError};
pub use events::{Emitter, Envelope, Event, EventSink, NoEvents};
pub use harness::{
    AssemblyExtras, DEFAULT_WORKFLOW, FALLBACK_MODELS_VAR, FallbackModel, Governance, Harness,
    HarnessBuilder, HarnessOptions, HostRules, ModelSource, Recording, RequestOptions,
    SessionSource, Tape, ToolPathDecls, TurnSettings, UNNAMED_MODEL, default_model_id,
    mint_session_id,
};
pub use harness::{builder, env};
pub use history::HistoryStep;
pub use invoke::{DEFAULT_SESSION_ID, InvokeInput};
pub use outcome::{DelegatedPark, Outcome, OutcomeKind, SessionExit, VariableEntry};
pub use resolve::{Disposition, Firing, ResolvedSession};
pub use sessions::{
    Classification, PRUNE_DEFAULT, PruneOptions, PruneReport, PrunedSession, SessionQuery,
    SessionSummary, SkippedSession,
};
pub use standing::{Standing, StandingKind};
pub use state::ForkedFrom;
pub use state::{SessionState, Status};
pub use tools::{HostTool, ToolContext};
pub use turn::{DEFAULT_MAX_MODEL_CALLS, SendInput, step_limit};

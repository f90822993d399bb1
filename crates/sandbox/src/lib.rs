//! `archmax-sandbox`: the embedded QuickJS sandbox that runs workflow lifecycle hook scripts and
//! the agent's `archmax_eval` code.
//!
//! - [`Sandbox`] owns one QuickJS runtime and context. It is `Send + Sync`, reusable across runs,
//!   and serialises its own runs. Globals persist between runs of one sandbox (the original's
//!   per-session REPL), so use one sandbox per session and namespace (`agent` / `process`).
//! - Every `tools.*` call from JavaScript goes back to the host through a [`ToolBridge`].
//! - [`Limits`] bound each run: wall-clock time (QuickJS interrupt handler plus a tokio timeout),
//!   memory, native stack and the number of tool calls.
//!
//! No QuickJS value escapes this crate's API: inputs and outputs are JSON values and strings.

#![warn(missing_docs)]

mod bridge;
mod deadline;
mod error;
mod format;
mod input;
mod limits;
mod native_guard;
mod prelude;
mod sandbox;
mod source;
mod syntax;
mod verdict;

pub use bridge::{PTC_EXCLUDED_TOOLS, ToolBridge};
pub use error::SandboxError;
pub use format::EvalRun;
pub use input::{HookInput, HookMessage, HookPhase, HookToolCall, eval_args};
pub use limits::Limits;
pub use sandbox::Sandbox;
pub use source::{
    HARNESS_SPECIFIER, ImportError, camel_case, is_harness_specifier, strip_harness_imports,
};
pub use syntax::{SyntaxError, check_hook_syntax};
pub use verdict::{HookRun, HookVerdict, from_parts as verdict_from_parts};

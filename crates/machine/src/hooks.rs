//! The seam lifecycle hooks plug into: a [`HookRunner`] runs one declared hook
//! and answers a [`Verdict`]. The sandbox issue brings the QuickJS runner and the
//! rubric grader; until then [`NoSandbox`] answers every hook with an execution
//! error, so a state that declares hooks fails closed instead of running
//! unguarded.

use archmax_spec::model::Hook;
use serde_json::{Map, Value};

use crate::tools::BoxFuture;

/// Where a hook runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Phase {
    /// Gating entry to a state.
    Before,
    /// Gating the move out of a state (or its completion, for a terminal state).
    After,
}

impl Phase {
    /// `before` or `after`.
    pub fn as_str(self) -> &'static str {
        match self {
            Phase::Before => "before",
            Phase::After => "after",
        }
    }
}

/// What a hook is asked about.
#[derive(Debug, Clone)]
pub struct HookInput {
    /// The state the hook belongs to.
    pub state: String,
    /// Its phase.
    pub phase: Phase,
    /// The hook's position in the state's list for that phase.
    pub index: usize,
    /// The current trigger.
    pub trigger: String,
    /// The run's variables.
    pub variables: Map<String, Value>,
    /// For an `after` hook in the veto window: the move's target and reason.
    pub to: Option<String>,
    /// The agent's reason for the move.
    pub reason: Option<String>,
}

/// A hook's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Proceed.
    Ok,
    /// Give the agent another attempt (after hooks only).
    Correct(String),
    /// Refuse.
    Veto(String),
    /// The hook could not run: a terminal failure, routed through `on_error`.
    Error(String),
}

/// Runs declared hooks.
pub trait HookRunner: Send + Sync {
    /// Runs one hook.
    fn run<'a>(&'a self, hook: &'a Hook, input: HookInput) -> BoxFuture<'a, Verdict>;
}

/// The runner of a build without the sandbox: every hook is an execution error.
#[derive(Debug, Default)]
pub struct NoSandbox;

impl HookRunner for NoSandbox {
    fn run<'a>(&'a self, hook: &'a Hook, input: HookInput) -> BoxFuture<'a, Verdict> {
        let what = match hook {
            Hook::Script { script, .. } => format!("hook script '{script}'"),
            Hook::Rubric { .. } => "rubric".to_string(),
            Hook::Custom(m) => format!("'{}' hook", m.keys().next().map_or("", String::as_str)),
        };
        Box::pin(async move {
            Verdict::Error(format!(
                "the {} of state '{}' cannot run: lifecycle hooks need the sandbox, which this build does not include yet",
                what, input.state
            ))
        })
    }
}

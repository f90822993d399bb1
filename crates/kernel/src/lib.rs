//! `archmax-kernel`: the governance kernel. Every tool call the model makes, every
//! `tools.*` call from a script or a hook, is decided here first.
//!
//! ```
//! use archmax_kernel::{CallContext, Policy, PolicyOptions, ToolCall};
//! use serde_json::json;
//!
//! let spec = archmax_spec::parse_machine_spec(
//!     "states:\n  draft:\n    triggers: { manual: }\n    tools:\n      allow: [{ tool: write_file, paths: ['out/*.md'] }]\n",
//! ).expect("spec");
//! let policy = Policy::compile(&spec, PolicyOptions::default()).expect("policy");
//! let ctx = CallContext::agent("draft");
//! let ok = policy.decide(&ToolCall::new("write_file", &json!({ "file_path": "out/a.md" })), &ctx);
//! assert!(ok.allowed);
//! let no = policy.decide(&ToolCall::new("write_file", &json!({ "file_path": "etc/a.md" })), &ctx);
//! assert_eq!(no.rule.as_str(), "tool.not-allowed");
//! ```
//!
//! A [`Policy`] is compiled once per workflow (with the host's mount table, the
//! skill registry and the host's path declarations) and then answers
//! [`Policy::decide`] for each call: pure, synchronous, no IO, no clock. Denials
//! carry their rule id and the exact model-facing text.

pub mod canonical;
mod decide;
pub mod describe;
pub mod glob;
pub mod guard;
pub mod host;
pub mod host_rules;
mod inherit;
pub mod matching;
mod messages;
pub mod paths;
mod policy;
mod redact;
mod rule;
pub mod tools;
pub mod zones;

pub(crate) use archmax_spec::{grammar, jsfmt};

pub use describe::{DenyBy, Standing};
pub use host::{HostDecision, PathZone, ResolvedPath};
pub use inherit::Inherited;
pub use paths::{Access, NativeBase, ToolPaths, ToolPathsError};
pub use policy::{CustomRule, Policy, PolicyError, PolicyOptions};
pub use rule::RuleId;
pub use zones::{Mounts, SkillDir};

use serde::Serialize;

/// The run's variables as the kernel sees them: name → value.
pub type Variables = serde_json::Map<String, serde_json::Value>;

/// Who makes a call, which decides which rules bind it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Origin {
    /// The model's own call.
    #[default]
    Agent,
    /// A `tools.*` call from `archmax_eval` / `archmax_run` code: governed like the agent.
    Script,
    /// A `tools.*` call from a hook or a grader: runtime authority, exempt from the
    /// state's allow and forbid lists and from skill/mount enablement.
    Lifecycle,
}

/// One proposed tool call.
#[derive(Debug, Clone, Copy)]
pub struct ToolCall<'a> {
    /// The tool name.
    pub tool: &'a str,
    /// The arguments (a JSON object).
    pub args: &'a serde_json::Value,
}

impl<'a> ToolCall<'a> {
    /// A call of `tool` with `args`.
    pub fn new(tool: &'a str, args: &'a serde_json::Value) -> Self {
        ToolCall { tool, args }
    }
}

/// Where a call is made.
#[derive(Debug, Clone, Copy)]
pub struct CallContext<'a> {
    /// The active state.
    pub state: &'a str,
    /// Who calls.
    pub origin: Origin,
    /// The run is parked and a person decides: every call is refused.
    pub reply_only: bool,
    /// The run's variables; `None` = no snapshot, so every guard reference fails.
    pub variables: Option<&'a Variables>,
    /// The ancestors' workflow-wide denials, outermost first (empty outside a sub-workflow).
    pub inherited: &'a [Inherited],
}

impl<'a> CallContext<'a> {
    /// The model's own call in `state`, no variables.
    pub fn agent(state: &'a str) -> Self {
        CallContext {
            state,
            origin: Origin::Agent,
            reply_only: false,
            variables: None,
            inherited: &[],
        }
    }
    /// With variables.
    #[must_use]
    pub fn with_variables(mut self, variables: &'a Variables) -> Self {
        self.variables = Some(variables);
        self
    }
    /// Inside a sub-workflow: bound by its ancestors' workflow-wide denials.
    #[must_use]
    pub fn with_inherited(mut self, inherited: &'a [Inherited]) -> Self {
        self.inherited = inherited;
        self
    }
    /// With another origin.
    #[must_use]
    pub fn with_origin(mut self, origin: Origin) -> Self {
        self.origin = origin;
        self
    }
}

/// The kernel's answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decision {
    /// Allowed or not.
    pub allowed: bool,
    /// The rule that decided.
    pub rule: RuleId,
    /// The model-facing text (every denial has one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// A denial retrying cannot fix (an unresolvable guard): the turn ends.
    pub terminal: bool,
    /// The original's flag for a denial reported as a warning event (`tool.eval` is
    /// silent there); the runtime reports every denial, and `Governance.decide` answers it.
    pub warn: bool,
}

impl Decision {
    pub(crate) fn allow(rule: RuleId) -> Self {
        Decision {
            allowed: true,
            rule,
            message: None,
            terminal: false,
            warn: false,
        }
    }
    pub(crate) fn block(rule: RuleId, message: String) -> Self {
        let warn = rule != RuleId::Eval;
        Decision {
            allowed: false,
            rule,
            message: Some(message),
            terminal: false,
            warn,
        }
    }
    /// A denial by a host rule, with its own id and text.
    pub fn custom_block(id: &str, message: impl Into<String>) -> Self {
        Decision {
            allowed: false,
            rule: RuleId::Custom(id.to_string()),
            message: Some(message.into()),
            terminal: false,
            warn: true,
        }
    }
    /// A grant by a host rule.
    pub fn custom_allow(id: &str) -> Self {
        Decision::allow(RuleId::Custom(id.to_string()))
    }
}

//! The typed 0.9.0 `workflow.yaml`.
//!
//! Built only from a document that passed the shape checks, so every field here
//! already satisfies its schema rule. Serialized (camelCase where the file is
//! camelCase, snake_case where the file is) it is exactly the parsed spec the
//! original hands to hosts, and what the spec hash is computed over.

use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value as Json;
use ts_rs::TS;

/// Host data the runtime never reads.
pub type Metadata = serde_json::Map<String, Json>;

/// A whole workflow: the root of `workflow.yaml`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct Workflow {
    /// Human-readable name; identity is the workflow slug (its directory).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Standing instructions for the whole run.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// `true` = the workflow starts no new turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub disabled: Option<bool>,
    /// The runtime contract this workflow targets.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub runtime: Option<RuntimeDecl>,
    /// Bounds on one whole turn, and the spending caps of a turn and of a session.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<WorkflowBudget>,
    /// Model id and sandbox settings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub settings: Option<Settings>,
    /// Case-suite configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tests: Option<TestsConfig>,
    /// Workflow-wide tool governance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<WorkflowTools>,
    /// Workflow-wide skill governance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<WorkflowSkills>,
    /// Workflow-wide mount governance.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mounts: Option<WorkflowMounts>,
    /// Host-registered extensions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extensions: Option<Extensions>,
    /// Host data, never read, excluded from the spec hash.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(type = "Record<string, unknown>")]
    pub metadata: Option<Metadata>,
    /// The states, keyed by slug, in document order.
    pub states: IndexMap<String, State>,
}

/// `runtime: { engine?, version? }`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct RuntimeDecl {
    /// Engine id, `archmax-harness`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub engine: Option<String>,
    /// Contract version, a string or a number as written.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(type = "string | number")]
    pub version: Option<Json>,
}

/// Root `budget: { maxModelCalls, maxTurnTokens, maxTurnCostUsd, maxSessionTokens,
/// maxSessionCostUsd }`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
#[serde(rename_all = "camelCase")]
pub struct WorkflowBudget {
    /// Model calls one turn may make across every state (default 50).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_model_calls: Option<u64>,
    /// Tokens (input + output, as the endpoint reports them) one turn may spend.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turn_tokens: Option<u64>,
    /// US dollars one turn may spend, at the configured prices.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turn_cost_usd: Option<f64>,
    /// Tokens a session may spend over all its turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_session_tokens: Option<u64>,
    /// US dollars a session may spend over all its turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_session_cost_usd: Option<f64>,
}

/// `settings`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
#[serde(rename_all = "camelCase")]
pub struct Settings {
    /// Model id for every state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Per-script sandbox budget, ms.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Sandbox memory limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub memory_limit_bytes: Option<u64>,
    /// Bound on `tools.*` calls from one script; `null` = unbounded.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(type = "number | null")]
    pub max_ptc_calls: Option<Option<u64>>,
    /// Truncation bound for script results.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_result_chars: Option<u64>,
    /// Provider prompt caching.
    #[serde(skip_serializing_if = "Option::is_none", rename = "prompt_cache")]
    pub prompt_cache: Option<PromptCache>,
}

/// `settings.prompt_cache`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct PromptCache {
    /// Default true.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled: Option<bool>,
    /// `5m` or `1h`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
}

/// `tests`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
#[serde(rename_all = "camelCase")]
pub struct TestsConfig {
    /// Only 1 is supported.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_concurrency: Option<u64>,
    /// Per-case wall clock, ms (default 120000).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub case_timeout_ms: Option<u64>,
    /// The grader for `grade:` assertions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub judge: Option<Judge>,
}

/// `tests.judge`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
#[serde(rename_all = "camelCase")]
pub struct Judge {
    /// Model id for grading.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Sampling options over the env model configuration.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model_options: Option<JudgeModelOptions>,
}

/// `tests.judge.modelOptions`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
#[serde(rename_all = "camelCase")]
pub struct JudgeModelOptions {
    /// ≥ 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Positive integer.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
}

/// Root `tools`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct WorkflowTools {
    /// The workflow-wide grant; absent = the twelve default tools.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_always: Option<Vec<ToolEntry>>,
    /// Denied in every state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forbid_always: Option<Vec<ToolEntry>>,
}

/// A state's `tools`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct StateTools {
    /// Grants beyond the workflow-wide grant, or narrowings of it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<ToolEntry>>,
    /// Denied while the state is active.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forbid: Option<Vec<ToolEntry>>,
}

/// An allow or forbid entry: a bare tool name or a guarded entry.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
#[serde(untagged)]
pub enum ToolEntry {
    /// `- write_file`
    Name(String),
    /// `- { tool, args?, paths?, connection?, source? }`
    Guarded(GuardedTool),
}

impl ToolEntry {
    /// The tool the entry names.
    pub fn tool(&self) -> &str {
        match self {
            ToolEntry::Name(n) => n,
            ToolEntry::Guarded(g) => &g.tool,
        }
    }
    /// The guarded form, if any.
    pub fn guarded(&self) -> Option<&GuardedTool> {
        match self {
            ToolEntry::Name(_) => None,
            ToolEntry::Guarded(g) => Some(g),
        }
    }
}

/// `{ tool, args?, paths?, connection?, source? }`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct GuardedTool {
    /// The tool name (`*` only in forbid lists).
    pub tool: String,
    /// Argument name → globs (any matches).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub args: Option<IndexMap<String, GlobList>>,
    /// Globs over every declared path argument.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub paths: Option<GlobList>,
    /// Access connection the call must go through.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    /// Tool source qualifier.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
}

/// One glob or a list of globs, as written.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
#[serde(untagged)]
pub enum GlobList {
    /// A single glob.
    One(String),
    /// Several globs.
    Many(Vec<String>),
}

impl GlobList {
    /// The globs as a slice-like iterator.
    pub fn iter(&self) -> impl Iterator<Item = &str> {
        let (one, many): (Option<&str>, &[String]) = match self {
            GlobList::One(s) => (Some(s.as_str()), &[]),
            GlobList::Many(v) => (None, v.as_slice()),
        };
        one.into_iter().chain(many.iter().map(String::as_str))
    }
}

/// Root `skills`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct WorkflowSkills {
    /// Skill slugs enabled in every state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_always: Option<Vec<String>>,
    /// Skill slugs denied in every state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forbid_always: Option<Vec<String>>,
}

/// A state's `skills`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct StateSkills {
    /// Slugs this state adds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<String>>,
    /// Slugs this state subtracts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forbid: Option<Vec<String>>,
}

/// Root `mounts`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct WorkflowMounts {
    /// Mounts reachable in every state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow_always: Option<Vec<MountGrant>>,
    /// Mounts out of reach of every state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forbid_always: Option<Vec<String>>,
}

/// A state's `mounts`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct StateMounts {
    /// Mounts this state adds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub allow: Option<Vec<MountGrant>>,
    /// Mounts this state subtracts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forbid: Option<Vec<String>>,
}

/// A mount grant: a name, or a name with the access this level gives.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
#[serde(untagged)]
pub enum MountGrant {
    /// `- reference`
    Name(String),
    /// `- { mount: reference, access: read }`
    WithAccess {
        /// The mount name.
        mount: String,
        /// `read` or `read_write`.
        access: MountAccess,
    },
}

impl MountGrant {
    /// The mount name.
    pub fn name(&self) -> &str {
        match self {
            MountGrant::Name(n) | MountGrant::WithAccess { mount: n, .. } => n,
        }
    }
    /// The declared access, if any.
    pub fn access(&self) -> Option<MountAccess> {
        match self {
            MountGrant::Name(_) => None,
            MountGrant::WithAccess { access, .. } => Some(*access),
        }
    }
}

/// The access a mount grant gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
#[serde(rename_all = "snake_case")]
pub enum MountAccess {
    /// Read only.
    Read,
    /// Read and write.
    ReadWrite,
}

/// `extensions`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct Extensions {
    /// Custom hook kinds the host registers executors for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hooks: Option<Vec<String>>,
}

/// `agent` (default) or `human`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum StateType {
    /// The agent works the state.
    Agent,
    /// A person routes.
    Human,
}

/// One state of the machine.
#[derive(Debug, Clone, PartialEq, Default, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct State {
    /// `agent` (default) or `human`.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<StateType>,
    /// Human-readable label; reaches no model call.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Behaviour guidance (agent) or the decision to present (human).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// One-line label for authors and hosts; never prompted.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub summary: Option<String>,
    /// Paths always shown in a human state's decision packet.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub evidence: Option<Vec<String>>,
    /// Informational approvers of a human state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub approvers: Option<Vec<String>>,
    /// Trigger id → declaration (`null` = the id and nothing more).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub triggers: Option<IndexMap<String, Option<TriggerDecl>>>,
    /// Hooks gating entry.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub before: Option<HookSpec>,
    /// Hooks gating the advance out (or completion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub after: Option<HookSpec>,
    /// Per-state budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub budget: Option<StateBudget>,
    /// Model id for this state's turns.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Where a terminal failure routes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub on_error: Option<String>,
    /// Tool grants and denials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tools: Option<StateTools>,
    /// Skill grants and denials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skills: Option<StateSkills>,
    /// Mount grants and denials.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mounts: Option<StateMounts>,
    /// Variables that must be set before the state may be left.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires: Option<Vec<String>>,
    /// Variables only this state may write.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub locks: Option<Vec<String>>,
    /// Host data, never read.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(type = "Record<string, unknown>")]
    pub metadata: Option<Metadata>,
    /// Outgoing edges; none = terminal.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transitions: Option<Vec<Transition>>,
}

impl State {
    /// True for `type: human`.
    pub fn is_human(&self) -> bool {
        self.kind == Some(StateType::Human)
    }
    /// The outgoing edges (empty for a terminal state).
    pub fn edges(&self) -> &[Transition] {
        self.transitions.as_deref().unwrap_or(&[])
    }
    /// True when the state has no outgoing edge.
    pub fn is_terminal(&self) -> bool {
        self.edges().is_empty()
    }
    /// Non-blank instructions.
    pub fn has_instructions(&self) -> bool {
        self.instructions
            .as_deref()
            .is_some_and(|s| !s.trim().is_empty())
    }
}

/// A trigger declaration: which conversation a firing belongs to and what the run
/// owes its caller.
#[derive(Debug, Clone, PartialEq, Default, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct TriggerDecl {
    /// Dotted path into the firing's variables holding the session id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session: Option<String>,
    /// Dotted path to the firing's message, or `false`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(type = "string | false")]
    pub message: Option<Json>,
    /// Access connection name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub connection: Option<String>,
    /// What calling this entry does, for a caller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Inputs a firing must supply.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requires: Option<Vec<SignatureItem>>,
    /// Outputs the run owes its caller.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub returns: Option<Vec<SignatureItem>>,
    /// Host keys, preserved and never interpreted.
    #[serde(flatten)]
    #[ts(skip)]
    pub host: serde_json::Map<String, Json>,
}

/// A signature entry as written: a bare name or `{ name, type?, description? }`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
#[serde(untagged)]
pub enum SignatureItem {
    /// A bare, untyped name.
    Name(String),
    /// A typed entry.
    Typed {
        /// The variable name.
        name: String,
        /// One of the signature types.
        #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        ty: Option<String>,
        /// What the value means.
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        description: Option<String>,
    },
}

impl SignatureItem {
    /// The variable name.
    pub fn name(&self) -> &str {
        match self {
            SignatureItem::Name(n) | SignatureItem::Typed { name: n, .. } => n,
        }
    }
}

/// One hook or a list of hooks.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
#[serde(untagged)]
pub enum HookSpec {
    /// A single hook.
    One(Hook),
    /// Hooks run in order, stopping at the first non-ok.
    Many(Vec<Hook>),
}

impl HookSpec {
    /// The hooks in order.
    pub fn hooks(&self) -> &[Hook] {
        match self {
            HookSpec::One(h) => std::slice::from_ref(h),
            HookSpec::Many(v) => v,
        }
    }
}

/// A lifecycle hook.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export)]
#[serde(untagged)]
pub enum Hook {
    /// `{ script: hooks/x.js, max_iterations? }`
    Script {
        /// Workflow-relative path under `hooks/`.
        script: String,
        /// Corrections budget (after hooks only).
        #[serde(skip_serializing_if = "Option::is_none")]
        #[ts(optional)]
        max_iterations: Option<u64>,
    },
    /// `{ rubric: { instructions, max_iterations?, model?, metadata? } }`
    Rubric {
        /// The inline grader declaration.
        rubric: Rubric,
    },
    /// A host-registered kind: `{ <kind>: <value> }`.
    Custom(IndexMap<String, String>),
}

impl Hook {
    /// `script`, `rubric` or the custom kind.
    pub fn kind(&self) -> &str {
        match self {
            Hook::Script { .. } => "script",
            Hook::Rubric { .. } => "rubric",
            Hook::Custom(m) => m.keys().next().map_or("", String::as_str),
        }
    }
    /// The correction budget declared for the hook.
    pub fn max_iterations(&self) -> Option<u64> {
        match self {
            Hook::Script { max_iterations, .. } => *max_iterations,
            Hook::Rubric { rubric } => rubric.max_iterations,
            Hook::Custom(_) => None,
        }
    }
}

/// An inline grading rubric.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct Rubric {
    /// The criteria and the verdict to return.
    pub instructions: String,
    /// The grade-and-retry budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u64>,
    /// A model id to grade on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// Host data.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(type = "Record<string, unknown>")]
    pub metadata: Option<Metadata>,
}

/// A state's `budget`.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
#[serde(rename_all = "camelCase")]
pub struct StateBudget {
    /// Bounds this state's agent loop.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_turns: Option<u64>,
    /// Aborts the state's segment when exceeded.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub timeout_ms: Option<u64>,
    /// Bounds the parks counted in this state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_parks: Option<u64>,
}

/// An outgoing edge.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, optional_fields)]
pub struct Transition {
    /// The target state's slug.
    pub to: String,
    /// When to take it; absent = route on the target's instructions.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Semantic type on human states.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<TransitionType>,
}

impl Transition {
    /// True when the edge carries a non-blank description.
    pub fn is_described(&self) -> bool {
        self.description
            .as_deref()
            .is_some_and(|d| !d.trim().is_empty())
    }
}

/// `approve | reject | refine | none`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[ts(export)]
#[serde(rename_all = "lowercase")]
pub enum TransitionType {
    /// Approve.
    Approve,
    /// Reject.
    Reject,
    /// Send back for another pass.
    Refine,
    /// No semantic type.
    None,
}

impl TransitionType {
    /// The name as written.
    pub fn as_str(self) -> &'static str {
        match self {
            TransitionType::Approve => "approve",
            TransitionType::Reject => "reject",
            TransitionType::Refine => "refine",
            TransitionType::None => "none",
        }
    }
}

//! The keys each object of `workflow.yaml` accepts, in the order the original
//! checked them. The walkers read these lists; [`OBJECTS`] names every one, so the
//! language reference and the JSON Schema are checked against what the parser
//! really accepts.

/// The document root.
pub(crate) const WORKFLOW: &[&str] = &[
    "title",
    "instructions",
    "disabled",
    "runtime",
    "budget",
    "settings",
    "tools",
    "skills",
    "mounts",
    "tests",
    "extensions",
    "metadata",
    "states",
];
pub(crate) const RUNTIME: &[&str] = &["engine", "version"];
pub(crate) const WORKFLOW_BUDGET: &[&str] = &[
    "maxModelCalls",
    "maxTurnTokens",
    "maxTurnCostUsd",
    "maxSessionTokens",
    "maxSessionCostUsd",
];
pub(crate) const SETTINGS: &[&str] = &[
    "model",
    "timeoutMs",
    "memoryLimitBytes",
    "maxPtcCalls",
    "maxResultChars",
    "prompt_cache",
];
pub(crate) const PROMPT_CACHE: &[&str] = &["enabled", "ttl"];
pub(crate) const TESTS: &[&str] = &["maxConcurrency", "caseTimeoutMs", "judge"];
pub(crate) const JUDGE: &[&str] = &["model", "modelOptions"];
pub(crate) const JUDGE_MODEL_OPTIONS: &[&str] = &["temperature", "maxTokens"];
pub(crate) const EXTENSIONS: &[&str] = &["hooks"];
/// `tools`, `skills` and `mounts` at the root.
pub(crate) const WORKFLOW_GOVERNANCE: &[&str] = &["allow_always", "forbid_always"];
/// `tools`, `skills` and `mounts` of a state.
pub(crate) const STATE_GOVERNANCE: &[&str] = &["allow", "forbid"];
pub(crate) const TOOL_ENTRY: &[&str] = &["tool", "args", "paths", "connection", "source"];
pub(crate) const MOUNT_GRANT: &[&str] = &["mount", "access"];
pub(crate) const STATE: &[&str] = &[
    "type",
    "title",
    "instructions",
    "summary",
    "evidence",
    "approvers",
    "triggers",
    "before",
    "after",
    "budget",
    "model",
    "on_error",
    "tools",
    "skills",
    "mounts",
    "requires",
    "locks",
    "metadata",
    "transitions",
];
pub(crate) const STATE_BUDGET: &[&str] = &["maxTurns", "timeoutMs", "maxParks"];
pub(crate) const TRANSITION: &[&str] = &["to", "description", "type"];
/// The sidecar every hook spelling may carry.
pub(crate) const SIDECAR: &str = "max_iterations";
pub(crate) const SCRIPT_HOOK: &[&str] = &["script", SIDECAR];
pub(crate) const RUBRIC_HOOK: &[&str] = &["rubric"];
pub(crate) const RUBRIC: &[&str] = &["instructions", SIDECAR, "model", "metadata"];
/// Keys a trigger declaration's reader understands; others are kept for the host
/// and lint-warned.
pub(crate) const TRIGGER: &[&str] = &[
    "session",
    "message",
    "connection",
    "description",
    "requires",
    "returns",
];
pub(crate) const SIGNATURE_ENTRY: &[&str] = &["name", "type", "description"];

/// Every object of the language by its name in the reference, with the keys the
/// shape checker accepts in it. The names are the reference's section names and
/// the JSON Schema's `$defs`.
pub const OBJECTS: &[(&str, &[&str])] = &[
    ("workflow", WORKFLOW),
    ("runtime", RUNTIME),
    ("budget", WORKFLOW_BUDGET),
    ("settings", SETTINGS),
    ("settings.prompt_cache", PROMPT_CACHE),
    ("tests", TESTS),
    ("tests.judge", JUDGE),
    ("tests.judge.modelOptions", JUDGE_MODEL_OPTIONS),
    ("extensions", EXTENSIONS),
    ("tools", WORKFLOW_GOVERNANCE),
    ("skills", WORKFLOW_GOVERNANCE),
    ("mounts", WORKFLOW_GOVERNANCE),
    ("tool_entry", TOOL_ENTRY),
    ("mount_grant", MOUNT_GRANT),
    ("state", STATE),
    ("state.budget", STATE_BUDGET),
    ("state.tools", STATE_GOVERNANCE),
    ("state.skills", STATE_GOVERNANCE),
    ("state.mounts", STATE_GOVERNANCE),
    ("transition", TRANSITION),
    ("script_hook", SCRIPT_HOOK),
    ("rubric_hook", RUBRIC_HOOK),
    ("rubric", RUBRIC),
    ("trigger", TRIGGER),
    ("signature_entry", SIGNATURE_ENTRY),
];

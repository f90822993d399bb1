//! Tool names the kernel knows by heart.

/// The prefix of the runtime's own tools; no host tool may use it.
pub const RESERVED_PREFIX: &str = "archmax_";
/// The prefix of delegation tools: `archmax_workflow_<slug>`.
pub const WORKFLOW_TOOL_PREFIX: &str = "archmax_workflow_";

/// The control tool that moves a state.
pub const ADVANCE: &str = "archmax_advance";
/// Back to the entry state.
pub const RESET: &str = "archmax_reset";
/// Park for an outside event.
pub const WAIT: &str = "archmax_wait";
/// End the session failed.
pub const RAISE: &str = "archmax_raise";
/// Read the run's variables.
pub const GET_VARIABLES: &str = "archmax_get_variables";
/// Write the run's variables.
pub const SET_VARIABLES: &str = "archmax_set_variables";
/// The code interpreter.
pub const EVAL: &str = "archmax_eval";
/// Run a skill script file.
pub const RUN: &str = "archmax_run";
/// The synthetic runtime-note name; not a tool.
pub const NOTE: &str = "archmax_note";

/// Controls every state has; no grant needed, argument guards ignored.
/// The order is the order `describeAllowed` lists them in.
pub const ALWAYS_ALLOWED: [&str; 6] = [ADVANCE, RESET, WAIT, RAISE, GET_VARIABLES, SET_VARIABLES];

/// The runtime's control tools (never callable from scripts or hooks).
pub const CONTROL_TOOLS: [&str; 8] = [
    ADVANCE,
    RESET,
    WAIT,
    RAISE,
    EVAL,
    RUN,
    GET_VARIABLES,
    SET_VARIABLES,
];

/// The twelve default tools: the workflow-wide grant when `tools.allow_always` is absent.
pub const DEFAULT_TOOLS: [&str; 12] = [
    "ls",
    "read_file",
    "write_file",
    "edit_file",
    "copy_file",
    "move_file",
    "remove_file",
    "glob",
    "grep",
    "write_todos",
    EVAL,
    RUN,
];

/// The runtime's own file operations (a host tool may not take these names).
pub const FILE_OPERATIONS: [&str; 3] = ["copy_file", "move_file", "remove_file"];

/// An unnamespaced `eval`, never governed.
pub const BARE_EVAL: &str = "eval";

/// True for a default tool.
pub fn is_default_tool(tool: &str) -> bool {
    DEFAULT_TOOLS.contains(&tool)
}

/// True for an always-allowed control.
pub fn is_always_allowed(tool: &str) -> bool {
    ALWAYS_ALLOWED.contains(&tool)
}

//! Tool names the kernel knows by heart, and [`BUILTINS`]: the one table of the tools the
//! runtime runs itself, which the kernel, dispatch, the tool definitions and the JS side read.

use std::sync::LazyLock;

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

/// What a runtime tool is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum BuiltinKind {
    /// A control of the run (`archmax_advance`, `archmax_set_variables`, …).
    Control,
    /// A file tool over the session's workspace (`ls`, `read_file`, …, `remove_file`).
    File,
    /// The agent's todo list (`write_todos`).
    Todos,
    /// Code in the sandbox (`archmax_eval`, `archmax_run`).
    Code,
}

/// One tool the runtime runs itself, and every fact the kernel, dispatch, tool definitions
/// and the JS side read about it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Builtin {
    /// The name the model calls it by.
    pub name: &'static str,
    /// What it is.
    pub kind: BuiltinKind,
    /// Every state has it: no grant needed, argument guards ignored.
    pub always_allowed: bool,
    /// One of the default tools: the workflow-wide grant when `tools.allow_always` is absent.
    pub default: bool,
    /// A script's or a hook's `tools.*` may call it.
    pub from_scripts: bool,
    /// It only reads: it runs beside a batch's other such calls.
    pub reads_only: bool,
    /// Its answer lists paths, redacted to what the caller may see.
    pub lists_paths: bool,
}

const fn control(name: &'static str, always_allowed: bool) -> Builtin {
    Builtin {
        name,
        kind: BuiltinKind::Control,
        always_allowed,
        default: false,
        from_scripts: false,
        reads_only: false,
        lists_paths: false,
    }
}

const fn file(name: &'static str, reads_only: bool, lists_paths: bool) -> Builtin {
    Builtin {
        name,
        kind: BuiltinKind::File,
        always_allowed: false,
        default: true,
        from_scripts: true,
        reads_only,
        lists_paths,
    }
}

/// Every tool the runtime runs itself, in the order the lists below keep: the always-allowed
/// controls in `describeAllowed`'s order, then the default tools in theirs.
pub const BUILTINS: [Builtin; 18] = [
    control(ADVANCE, true),
    control(RESET, true),
    control(WAIT, true),
    control(RAISE, true),
    control(GET_VARIABLES, true),
    control(SET_VARIABLES, true),
    file("ls", true, true),
    file("read_file", true, false),
    file("write_file", false, false),
    file("edit_file", false, false),
    file("copy_file", false, false),
    file("move_file", false, false),
    file("remove_file", false, false),
    file("glob", true, true),
    file("grep", true, true),
    Builtin {
        name: "write_todos",
        kind: BuiltinKind::Todos,
        always_allowed: false,
        default: true,
        from_scripts: false,
        reads_only: false,
        lists_paths: false,
    },
    Builtin {
        name: EVAL,
        kind: BuiltinKind::Code,
        always_allowed: false,
        default: true,
        from_scripts: false,
        reads_only: false,
        lists_paths: false,
    },
    Builtin {
        name: RUN,
        kind: BuiltinKind::Code,
        always_allowed: false,
        default: true,
        from_scripts: false,
        reads_only: false,
        lists_paths: false,
    },
];

/// The runtime tool named `name`.
pub fn builtin(name: &str) -> Option<&'static Builtin> {
    BUILTINS.iter().find(|b| b.name == name)
}

/// The names of the runtime tools `keep` selects, in [`BUILTINS`]' order.
fn names(keep: fn(&Builtin) -> bool) -> Vec<&'static str> {
    BUILTINS
        .iter()
        .filter(|b| keep(b))
        .map(|b| b.name)
        .collect()
}

/// Controls every state has; no grant needed, argument guards ignored.
/// The order is the order `describeAllowed` lists them in.
pub static ALWAYS_ALLOWED: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| names(|b| b.always_allowed));

/// The runtime's control tools, code included (never callable from scripts or hooks).
pub static CONTROL_TOOLS: LazyLock<Vec<&'static str>> =
    LazyLock::new(|| names(|b| matches!(b.kind, BuiltinKind::Control | BuiltinKind::Code)));

/// The twelve default tools: the workflow-wide grant when `tools.allow_always` is absent.
pub static DEFAULT_TOOLS: LazyLock<Vec<&'static str>> = LazyLock::new(|| names(|b| b.default));

/// The runtime's own file operations (a host tool may not take these names).
pub const FILE_OPERATIONS: [&str; 3] = ["copy_file", "move_file", "remove_file"];

/// An unnamespaced `eval`, never governed.
pub const BARE_EVAL: &str = "eval";

/// True for a default tool.
pub fn is_default_tool(tool: &str) -> bool {
    builtin(tool).is_some_and(|b| b.default)
}

/// True for an always-allowed control.
pub fn is_always_allowed(tool: &str) -> bool {
    builtin(tool).is_some_and(|b| b.always_allowed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_lists_read_from_the_table_keep_their_order() {
        assert_eq!(
            *ALWAYS_ALLOWED,
            [ADVANCE, RESET, WAIT, RAISE, GET_VARIABLES, SET_VARIABLES]
        );
        assert_eq!(
            *DEFAULT_TOOLS,
            [
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
                RUN
            ]
        );
        assert_eq!(CONTROL_TOOLS.len(), 8);
        for op in FILE_OPERATIONS {
            assert_eq!(builtin(op).map(|b| b.kind), Some(BuiltinKind::File));
        }
        for b in &BUILTINS {
            assert!(
                b.name.starts_with(RESERVED_PREFIX)
                    == matches!(b.kind, BuiltinKind::Control | BuiltinKind::Code),
                "{}",
                b.name
            );
        }
    }
}

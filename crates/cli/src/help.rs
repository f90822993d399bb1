//! Help texts, generated from the [command table](crate::commands).

use crate::args::{OptKind, OptSpec};
use crate::commands::{COMMANDS, Command, GLOBAL_OPTIONS};

/// Lays out rows in two columns: two-space indent, the left cell padded to the
/// widest left cell, two spaces, the text.
fn table(rows: &[(String, &str)]) -> String {
    let width = rows
        .iter()
        .map(|(left, _)| left.chars().count())
        .max()
        .unwrap_or(0);
    rows.iter()
        .map(|(left, text)| {
            let pad = " ".repeat(width - left.chars().count());
            format!("  {left}{pad}  {text}\n")
        })
        .collect()
}

fn option_cell(o: &OptSpec) -> String {
    let mut cell = format!("--{}", o.name);
    if let Some(c) = o.short {
        cell.push_str(&format!(", -{c}"));
    }
    if o.kind == OptKind::Str && !o.placeholder.is_empty() {
        cell.push(' ');
        cell.push_str(o.placeholder);
    }
    cell
}

fn option_rows(options: &[OptSpec]) -> String {
    let rows: Vec<(String, &str)> = options
        .iter()
        .map(|o| (option_cell(o), o.description))
        .collect();
    table(&rows)
}

/// The top-level help, ending with a newline.
pub fn top_level() -> String {
    let rows: Vec<(String, &str)> = COMMANDS
        .iter()
        .map(|c| (format!("{} {}", c.name, c.positional_syntax()), c.summary))
        .collect();
    format!(
        "Usage: archmax <command> [arguments] [options]\n\nCommands:\n{}\nGlobal options:\n{}\n\
         Exit codes:\n{}\n\
         'archmax --version' prints the version.\n\
         Run 'archmax help <command>' for a command's arguments and options.\n",
        table(&rows),
        option_rows(GLOBAL_OPTIONS),
        exit_codes(),
    )
}

/// The process exit codes, as the top-level help documents them.
pub const EXIT_CODES: &[(i32, &str)] = &[
    (
        0,
        "done, or parked: a session waiting for a decision or an event is not a failure",
    ),
    (
        1,
        "failed: an invalid workflow, a refused, rejected or failed run, a configuration error",
    ),
    (
        2,
        "usage error: an unknown command or option, a missing argument",
    ),
];

fn exit_codes() -> String {
    let rows: Vec<(String, &str)> = EXIT_CODES
        .iter()
        .map(|(c, t)| (c.to_string(), *t))
        .collect();
    table(&rows)
}

/// The help of one command, ending with a newline.
pub fn command(cmd: &Command) -> String {
    let mut out = format!(
        "Usage: archmax {} {} [options]\n\n",
        cmd.name,
        cmd.positional_syntax()
    );
    out.push_str(cmd.long.unwrap_or(cmd.summary));
    out.push('\n');
    if !cmd.positionals.is_empty() {
        let rows: Vec<(String, &str)> = cmd
            .positionals
            .iter()
            .map(|p| (format!("<{}>", p.name), p.description))
            .collect();
        out.push_str("\nArguments:\n");
        out.push_str(&table(&rows));
    }
    out.push_str("\nOptions:\n");
    out.push_str(&option_rows(&cmd.all_options()));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::commands::find;

    #[test]
    fn top_level_help_lists_every_command() {
        let expected = "\
Usage: archmax <command> [arguments] [options]

Commands:
  init [dir]                    Write a starter workspace that 'archmax validate' passes
  skill <action> [dir]          Install the workflow-authoring skill for a coding agent
  run <workflow> <prompt...>    Run a workflow on a prompt; the reply goes to stdout
  test <workflow> [filter]      Run a workflow's cases
  validate <workflow>           Statically validate a workflow — no model calls
  graph <workflow>              Print a workflow's diagram: states, edges, human and terminal states, hooks
  tools <workflow>              Show every tool the workspace can reach and how each state stands toward it
  sessions [session] [id]       List durable sessions and where they stand, show one in full or its steps, fork one, or prune them
  decide <session>              Resume a session parked at a human state by picking a transition
  reply <session> <message...>  Send a message to a session parked at a human state; it stays parked
  deliver <session>             Resume a session parked for input by delivering a trigger
  worker [workflow]             Finish interrupted turns, run queued deliveries, wake due waits (PostgreSQL session store)
  serve                         Serve the workspace over HTTP, with the web inbox at /
  mcp                           Serve the workspace's workflows as MCP tools over stdio (for an MCP client)
  help [command]                Show help for the CLI or one command

Global options:
  --root <dir>  Workspace root (default: the current directory)
  --help, -h    Show help

Exit codes:
  0  done, or parked: a session waiting for a decision or an event is not a failure
  1  failed: an invalid workflow, a refused, rejected or failed run, a configuration error
  2  usage error: an unknown command or option, a missing argument

'archmax --version' prints the version.
Run 'archmax help <command>' for a command's arguments and options.
";
        assert_eq!(top_level(), expected);
    }

    fn help_of(name: &str) -> String {
        command(find(name).expect("known command"))
    }

    #[test]
    fn decide_help_has_its_options() {
        let h = help_of("decide");
        assert!(
            h.starts_with("Usage: archmax decide <session> [options]\n\n"),
            "{h}"
        );
        for needle in [
            "--to <state>",
            "--comment <text>",
            "--root <dir>",
            "--help, -h",
            "Arguments:\n  <session>",
        ] {
            assert!(h.contains(needle), "{needle} missing from {h}");
        }
    }

    #[test]
    fn pinned_help_strings() {
        assert!(help_of("run").contains("exactly one"));
        assert!(help_of("reply").contains("stays parked"));
        assert!(!help_of("reply").contains("--to"));
        assert!(help_of("sessions").contains("locked"));
        assert!(help_of("run").contains("  <prompt>  "));
    }

    #[test]
    fn validate_help_uses_the_summary() {
        let expected = "\
Usage: archmax validate <workflow> [options]

Statically validate a workflow — no model calls

Arguments:
  <workflow>  Workflow slug, a directory under workflows/ (inferred when there is exactly one)

Options:
  --json        Print the result as JSON on stdout
  --root <dir>  Workspace root (default: the current directory)
  --help, -h    Show help
";
        assert_eq!(help_of("validate"), expected);
    }
}

//! Argument checks of the runtime commands (run, test, sessions, decide,
//! reply, deliver). Every usage error of cli digest §4 is reported exactly.
//! `run` and `sessions` continue in [`crate::run`] and [`crate::sessions`];
//! for the others a clean invocation fails with
//! `'<cmd>' is not available in this build yet`.

use serde_json::{Map, Value};

use crate::args::Parsed;
use crate::checks::{check_session_id, parse_variables};
use crate::commands::Command;
use crate::workspace::{resolve_root, workflow_slot};
use crate::{Cli, Failure};

fn slot(parsed: &Parsed, cli: &Cli<'_>, given: Option<&str>) -> Result<String, Failure> {
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    workflow_slot(given, &root).map_err(Failure::Usage)
}

fn variables(parsed: &Parsed) -> Result<Map<String, Value>, Failure> {
    match parsed.text("variables") {
        Some(raw) => parse_variables(raw).map_err(Failure::Usage),
        None => Ok(Map::new()),
    }
}

/// The checked arguments of `archmax run`.
#[derive(Debug)]
pub(crate) struct RunArgs {
    /// The workflow slug.
    pub workflow: String,
    /// The prompt (rest positionals joined, trimmed, non-empty).
    pub prompt: String,
    /// `--variables`, or an empty object.
    pub variables: Map<String, Value>,
}

/// `run`'s checks in order: workflow slot, prompt, `--variables`.
pub(crate) fn check_run(
    cli: &Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<RunArgs, Failure> {
    let pos = |i: usize| positionals.get(i).and_then(Option::as_deref);
    let workflow = slot(parsed, cli, pos(0))?;
    let Some(prompt) = pos(1) else {
        return Err(Failure::Usage("a prompt is required".to_string()));
    };
    let variables = variables(parsed)?;
    Ok(RunArgs {
        workflow,
        prompt: prompt.to_string(),
        variables,
    })
}

/// `sessions`' checks in order: the session id (when given), the workflow
/// slot. Returns the workflow slug.
pub(crate) fn check_sessions(
    cli: &Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<String, Failure> {
    if let Some(id) = positionals.first().and_then(Option::as_deref) {
        session_check(id)?;
    }
    slot(parsed, cli, parsed.text("workflow"))
}

fn session(positionals: &[Option<String>]) -> Result<&str, Failure> {
    positionals
        .first()
        .and_then(Option::as_deref)
        .ok_or_else(|| Failure::Usage("a session id is required".to_string()))
}

fn session_check(id: &str) -> Result<(), Failure> {
    check_session_id(id).map_err(Failure::Usage)
}

fn required(parsed: &Parsed, name: &str, message: &str) -> Result<(), Failure> {
    match parsed.non_empty(name) {
        Some(_) => Ok(()),
        None => Err(Failure::Usage(message.to_string())),
    }
}

/// Checks the arguments of `cmd` in the documented order, then reports that
/// the command is not available.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    cmd: &Command,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let pos = |i: usize| positionals.get(i).and_then(Option::as_deref);
    match cmd.name {
        "run" => {
            check_run(cli, parsed, positionals)?;
        }
        "test" => {
            slot(parsed, cli, pos(0))?;
        }
        "sessions" => {
            check_sessions(cli, parsed, positionals)?;
        }
        "decide" => {
            let id = session(positionals)?;
            required(
                parsed,
                "to",
                "--to <state> is required (the target the person picks)",
            )?;
            session_check(id)?;
            slot(parsed, cli, parsed.text("workflow"))?;
        }
        "reply" => {
            let id = session(positionals)?;
            if pos(1).is_none() {
                return Err(Failure::Usage(
                    "a message is required — there is nothing to answer otherwise".to_string(),
                ));
            }
            session_check(id)?;
            slot(parsed, cli, parsed.text("workflow"))?;
        }
        "deliver" => {
            let id = session(positionals)?;
            required(
                parsed,
                "trigger",
                "--trigger <id> is required (the event that arrived)",
            )?;
            variables(parsed)?;
            session_check(id)?;
            slot(parsed, cli, parsed.text("workflow"))?;
        }
        _ => {}
    }
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    cli.load_root_env(&root);
    Err(Failure::Command(format!(
        "'{}' is not available in this build yet",
        cmd.name
    )))
}

//! Argument checks of the commands whose runtime is not in this build yet
//! (run, test, sessions, decide, reply, deliver). Every usage error of cli
//! digest §4 is reported exactly; a clean invocation then fails with
//! `'<cmd>' is not available in this build yet`.

use crate::args::Parsed;
use crate::checks::{check_session_id, parse_variables};
use crate::commands::Command;
use crate::workspace::{resolve_root, workflow_slot};
use crate::{Cli, Failure};

fn slot(parsed: &Parsed, cli: &Cli<'_>, given: Option<&str>) -> Result<(), Failure> {
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    workflow_slot(given, &root)
        .map(|_| ())
        .map_err(Failure::Usage)
}

fn variables(parsed: &Parsed) -> Result<(), Failure> {
    match parsed.text("variables") {
        Some(raw) => parse_variables(raw).map(|_| ()).map_err(Failure::Usage),
        None => Ok(()),
    }
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
            slot(parsed, cli, pos(0))?;
            if pos(1).is_none() {
                return Err(Failure::Usage("a prompt is required".to_string()));
            }
            variables(parsed)?;
        }
        "test" => slot(parsed, cli, pos(0))?,
        "sessions" => {
            if let Some(id) = pos(0) {
                session_check(id)?;
            }
            slot(parsed, cli, parsed.text("workflow"))?;
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

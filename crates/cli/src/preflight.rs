//! Argument checks of the runtime commands (run, test, sessions, decide,
//! reply, deliver). Every usage error of cli digest §4 is reported exactly.
//! `run`, `sessions` and the park commands continue in [`crate::run`],
//! [`crate::sessions`] and [`crate::park`]; `test` in [`crate::test`].

use serde_json::{Map, Value};

use crate::args::Parsed;
use crate::checks::{check_session_id, parse_variables};
use crate::commands::Command;
use crate::record::{Needs, check_park, load, workflow_of};
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

/// `sessions`' checks in order: the session id (when given), then its record
/// (whose workflow is the one assembled), else the workflow slot. Returns the
/// workflow slug.
pub(crate) fn check_sessions(
    cli: &Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<String, Failure> {
    if let Some(id) = positionals.first().and_then(Option::as_deref) {
        session_check(id)?;
        return recorded(cli, parsed, id, Needs::Anything, None).map(|(w, _)| w);
    }
    slot(parsed, cli, parsed.text("workflow"))
}

/// The workflow of session `id` from its record, and the refusal to report
/// (after the header) when the record shows the session is not parked as
/// `needs` says (or `target` is not a valid choice).
fn recorded(
    cli: &Cli<'_>,
    parsed: &Parsed,
    id: &str,
    needs: Needs,
    target: Option<&str>,
) -> Result<(String, Option<Failure>), Failure> {
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    let store = crate::store::open_given(cli, &root, parsed.non_empty("store"))?;
    let session = load(store.as_ref(), id)?;
    let workflow = workflow_of(id, &session, parsed.text("workflow"))?;
    Ok((workflow, check_park(id, &session, needs, target).err()))
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

fn required<'p>(parsed: &'p Parsed, name: &str, message: &str) -> Result<&'p str, Failure> {
    parsed
        .non_empty(name)
        .ok_or_else(|| Failure::Usage(message.to_string()))
}

/// The checked arguments of `decide`, `reply` and `deliver`.
#[derive(Debug)]
pub(crate) struct ParkArgs {
    /// The session id.
    pub session: String,
    /// The workflow slug (the session's own).
    pub workflow: String,
    /// Why the runtime would refuse the call, known from the session's record:
    /// reported after the header, before the model variables are needed.
    pub refusal: Option<Failure>,
}

/// `decide`'s checks in order: session id present, `--to`, the session-id
/// rules, then the session's record (its workflow, its park, the target). Returns the session and workflow, and the target.
pub(crate) fn check_decide(
    cli: &Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<(ParkArgs, String), Failure> {
    let id = session(positionals)?;
    let to = required(
        parsed,
        "to",
        "--to <state> is required (the target the person picks)",
    )?;
    session_check(id)?;
    let (workflow, refusal) = recorded(cli, parsed, id, Needs::Decision, Some(to))?;
    let args = ParkArgs {
        session: id.to_string(),
        workflow,
        refusal,
    };
    Ok((args, to.to_string()))
}

/// `reply`'s checks in order: session id present, a non-blank message, the
/// session-id rules, the session's record. Returns the session and workflow,
/// and the message.
pub(crate) fn check_reply(
    cli: &Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<(ParkArgs, String), Failure> {
    let id = session(positionals)?;
    let Some(message) = positionals.get(1).and_then(Option::as_deref) else {
        return Err(Failure::Usage(
            "a message is required — there is nothing to answer otherwise".to_string(),
        ));
    };
    session_check(id)?;
    let (workflow, refusal) = recorded(cli, parsed, id, Needs::Decision, None)?;
    let args = ParkArgs {
        session: id.to_string(),
        workflow,
        refusal,
    };
    Ok((args, message.to_string()))
}

/// `deliver`'s checks in order: session id present, `--trigger`,
/// `--variables`, the session-id rules, the session's record. Returns the session
/// and workflow, the trigger and the variables.
pub(crate) fn check_deliver(
    cli: &Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<(ParkArgs, String, Map<String, Value>), Failure> {
    let id = session(positionals)?;
    let trigger = required(
        parsed,
        "trigger",
        "--trigger <id> is required (the event that arrived)",
    )?;
    let vars = variables(parsed)?;
    session_check(id)?;
    let (workflow, refusal) = recorded(cli, parsed, id, Needs::Input, None)?;
    let args = ParkArgs {
        session: id.to_string(),
        workflow,
        refusal,
    };
    Ok((args, trigger.to_string(), vars))
}

/// A command that has no runtime wiring reports that it is not available.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    cmd: &Command,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let _ = positionals;
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    cli.load_root_env(&root);
    Err(Failure::Command(format!(
        "'{}' is not available in this build yet",
        cmd.name
    )))
}

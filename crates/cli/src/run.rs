//! `archmax run <workflow> <prompt...>` (cli digest §4.1). The turn is driven
//! live by [`crate::live`]; a session parked at a human state takes the prompt
//! as a reply, one parked for input as a delivery (the runtime's `send`
//! dispatches), and [`run_report`] reports each disposition.

use std::sync::Arc;

use archmax_machine::{Envelope, Event, SendInput, SessionSource};

use crate::args::Parsed;
use crate::assembly::failure;
use crate::cassette::Tape;
use crate::checks::check_session_id;
use crate::live::connect;
use crate::outcome::run_report;
use crate::preflight::check_run;
use crate::workspace::resolve_root;
use crate::{Cli, Failure};

/// Runs the command; the exit code, or the failure to report.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let args = check_run(cli, parsed, positionals)?;
    let explicit = parsed.non_empty("session");
    if let Some(id) = explicit {
        check_session_id(id).map_err(Failure::Usage)?;
    }
    let trigger = parsed.non_empty("trigger").unwrap_or("manual").to_string();
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    cli.load_root_env(&root);
    let tape = Tape::of(cli, parsed)?;
    let model_line = tape.model_line(cli);
    cli.header(&args.workflow, &root, Some(&model_line));

    let (harness, mut live) = connect(cli, &root, &args.workflow, parsed.flag("verbose"), &tape)?;

    let (id, source) = harness
        .resolve_session(
            explicit,
            &trigger,
            &args.variables,
            parsed.non_empty("session-path"),
        )
        .map_err(|e| Failure::Command(e.to_string()))?;
    if let SessionSource::Minted {
        unresolved: Some(path),
    } = &source
    {
        let warning = Envelope {
            event: Event::Warning {
                scope: "session".to_string(),
                message: format!(
                    "the session path '{path}' does not resolve over this firing's variables; started a new session '{id}'"
                ),
            },
            level: "warn",
            ts: 0,
            seq: 0,
            session_id: Some(id.clone()),
            sub_workflow_dispatch_id: None,
        };
        live.render(cli, &warning);
    }

    let harness = Arc::new(harness);
    let input = SendInput {
        message: args.prompt,
        trigger: Some(trigger),
        variables: args.variables,
    };
    let sid = id.clone();
    let before = crate::written::Before::take(&root, &id);
    let result = live.drive(
        cli,
        &harness,
        move |h| async move { h.send(&sid, input).await },
    )?;
    let outcome = result.map_err(|e| failure(&e))?;
    let report =
        run_report(&cli.style, &outcome, &harness).with_json(parsed.flag("json"), &outcome);
    cli.err(&report.err);
    cli.out(&report.out);
    let files = before.changed(&root, &id);
    cli.err(&crate::written::line(&cli.style, &files));
    let footer = live.tally.session(&id).footer(&cli.style);
    cli.err(&footer);
    Ok(report.code)
}

//! The park commands (cli digest §4.5–§4.7): `decide <session> --to <state>`,
//! `reply <session> <message...>` and `deliver <session> --trigger <id>`.
//!
//! Each checks its arguments (`crate::preflight`), prints the session header
//! without the model line, assembles the workflow with the real model (the
//! resumed turn calls it, so the `ARCHMAX_*` variables are required), drives
//! the call live and reports it (§5). The runtime's refusals are one
//! `Error: <text>` line, exit 1. None of them prints a token footer.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::args::Parsed;
use crate::assembly::failure;
use crate::cassette::Tape;
use crate::live::{Live, connect};
use crate::outcome::{Report, reply_report, resumed_report};
use crate::preflight::{ParkArgs, check_decide, check_deliver, check_reply};
use crate::workspace::resolve_root;
use crate::written::Before;
use crate::{Cli, Failure};

/// Header, `.env` of the root, assembly.
fn open(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    args: &ParkArgs,
) -> Result<(Arc<archmax_machine::Harness>, Live, PathBuf), Failure> {
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    cli.load_root_env(&root);
    cli.header(&args.workflow, &root, None);
    if let Some(refusal) = args.refusal.clone() {
        return Err(refusal);
    }
    let tape = Tape::of(cli, parsed)?;
    let (harness, live) = connect(cli, &root, &args.workflow, parsed.flag("verbose"), &tape)?;
    Ok((Arc::new(harness), live, root))
}

/// Prints the report, then the files the resumed turn wrote.
fn finish(cli: &mut Cli<'_>, report: &Report, root: &Path, id: &str, before: &Before) -> i32 {
    cli.err(&report.err);
    cli.out(&report.out);
    let files = before.changed(root, id);
    cli.err(&crate::written::line(&cli.style, &files));
    report.code
}

/// `archmax decide`: routes the parked session to `--to`; the target state's
/// work runs in the same call.
pub(crate) fn decide(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let (args, to) = check_decide(cli, parsed, positionals)?;
    let comment = parsed.non_empty("comment").map(str::to_string);
    let (harness, mut live, root) = open(cli, parsed, &args)?;
    let before = Before::take(&root, &args.session);
    let id = args.session.clone();
    let result = live.drive(cli, &harness, move |h| async move {
        h.decide(&id, &to, comment.as_deref()).await
    })?;
    let outcome = result.map_err(|e| failure(&e))?;
    let report =
        resumed_report(&cli.style, &outcome, "decided").with_json(parsed.flag("json"), &outcome);
    Ok(finish(cli, &report, &root, &args.session, &before))
}

/// `archmax reply`: one reply-only turn; the session stays parked.
pub(crate) fn reply(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let (args, message) = check_reply(cli, parsed, positionals)?;
    let (harness, mut live, root) = open(cli, parsed, &args)?;
    let before = Before::take(&root, &args.session);
    let id = args.session.clone();
    let result = live.drive(cli, &harness, move |h| async move {
        h.reply(&id, &message).await
    })?;
    let outcome = result.map_err(|e| failure(&e))?;
    let report = reply_report(&cli.style, &outcome).with_json(parsed.flag("json"), &outcome);
    finish(cli, &report, &root, &args.session, &before);
    Ok(0)
}

/// `archmax deliver`: the session resumes in the state it parked in, with the
/// trigger recorded and the variables seeded locked.
pub(crate) fn deliver(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let url = if parsed.flag("enqueue") {
        // The queue is the database's: refused before the session is looked up elsewhere.
        let root = resolve_root(&cli.cwd, parsed.text("root"));
        let url = crate::store::choice(cli, &root).ok_or_else(|| {
            Failure::Command(format!(
                "--enqueue needs {}=postgres://…: the queue is a table the workers share",
                crate::store::STORE_VAR
            ))
        })?;
        Some(url)
    } else {
        None
    };
    let (args, trigger, variables) = check_deliver(cli, parsed, positionals)?;
    if let Some(url) = url {
        return enqueue(cli, parsed, &url, args, trigger, variables);
    }
    if parsed.flag("wait") {
        return Err(Failure::Usage(
            "--wait waits for a queued delivery: use it with --enqueue".to_string(),
        ));
    }
    let (harness, mut live, root) = open(cli, parsed, &args)?;
    let before = Before::take(&root, &args.session);
    let id = args.session.clone();
    let result = live.drive(cli, &harness, move |h| async move {
        h.deliver(&id, &trigger, variables, None).await
    })?;
    let outcome = result.map_err(|e| failure(&e))?;
    let report =
        resumed_report(&cli.style, &outcome, "delivered").with_json(parsed.flag("json"), &outcome);
    Ok(finish(cli, &report, &root, &args.session, &before))
}

/// `archmax deliver --enqueue [--wait]`: the delivery goes into the PostgreSQL store's queue
/// for the workers (`archmax worker`); with `--wait`, this waits until one ran it and
/// reports its Outcome (`--json`: the Outcome itself) or its refusal, as a direct
/// `deliver` would. The session's state is not checked here: a session in a turn now may
/// be parked when its delivery's turn comes.
fn enqueue(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    url: &str,
    args: ParkArgs,
    trigger: String,
    variables: serde_json::Map<String, serde_json::Value>,
) -> Result<i32, Failure> {
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    cli.load_root_env(&root);
    cli.header(&args.workflow, &root, None);
    let store = crate::store::postgres(url)?;
    let delivery = archmax_store_pg::Delivery {
        session: args.session.clone(),
        workflow: Some(args.workflow.clone()),
        trigger: trigger.trim().to_string(),
        variables,
        message: None,
    };
    let seq = store
        .enqueue_delivery(&delivery)
        .map_err(|e| Failure::Command(e.to_string()))?;
    let check = crate::style::CHECK;
    cli.err(&format!(
        "{check} queued delivery {seq} of '{}' for session {}\n",
        delivery.trigger, args.session
    ));
    if !parsed.flag("wait") {
        if parsed.flag("json") {
            cli.out(&format!(
                "{{\"delivery\": {seq}, \"status\": \"queued\"}}\n"
            ));
        }
        return Ok(0);
    }
    loop {
        let record = store
            .delivery(seq)
            .map_err(|e| Failure::Command(e.to_string()))?
            .ok_or_else(|| Failure::Command(format!("delivery {seq} is no longer queued")))?;
        if record.status == "done" {
            if let Some(error) = record.error {
                return Err(Failure::Command(error));
            }
            let outcome = record.outcome.unwrap_or(serde_json::Value::Null);
            let status = outcome
                .get("status")
                .and_then(serde_json::Value::as_str)
                .unwrap_or("unknown");
            cli.err(&format!(
                "{check} delivery {seq} ran: session {} is {status}\n",
                args.session
            ));
            if parsed.flag("json") {
                let text = serde_json::to_string_pretty(&outcome).unwrap_or_default();
                cli.out(&format!("{text}\n"));
            } else if let Some(reply) = outcome
                .get("reply")
                .and_then(serde_json::Value::as_str)
                .filter(|r| !r.is_empty())
            {
                cli.out(&format!("{reply}\n"));
            }
            // As a direct `deliver`: a session that ended rejected or failed exits 1.
            let kind = outcome.get("kind").and_then(serde_json::Value::as_str);
            return Ok(i32::from(matches!(kind, Some("failed" | "rejected"))));
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

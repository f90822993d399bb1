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
    let (args, trigger, variables) = check_deliver(cli, parsed, positionals)?;
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

//! `archmax worker [workflow] [--trigger <id>] [--once] [--poll <ms>]`: wakes the sessions
//! of a workflow whose `archmax_wait` fell due, in the PostgreSQL store that
//! `ARCHMAX_SESSION_STORE` names. Run as many as you like, on as many machines: each due
//! session is claimed by one of them (`PgStore::claim_due`, `FOR UPDATE SKIP LOCKED`) and
//! resumed under its writer lease with a delivery of `--trigger` (default `timer`), as a
//! host's scheduler would deliver it; the agent continues in the parked state.
//!
//! A claimed session is resumed only if it still awaits input with a due time that has
//! passed (an earlier delivery may have resumed it meanwhile); the delivery then takes the
//! session's writer lease, so a session another writer holds is left to it. (A delivery
//! that lands between that check and the lease and parks the session again with a later
//! due time can still be followed by this wake: the window is one read.) A worker that dies
//! before resuming leaves its claim to expire (one lease time to live); the session is then
//! due again for any worker.

use std::sync::Arc;
use std::time::Duration;

use archmax_machine::state::Park;
use archmax_machine::store::SessionStore;
use archmax_machine::{Harness, RunError, Status};
use serde_json::Map;

use crate::args::Parsed;
use crate::live::{Live, connect_to};
use crate::store::{STORE_VAR, choice, postgres};
use crate::workspace::resolve_root;
use crate::{Cli, Failure};

/// Sessions claimed per round.
const BATCH: u32 = 8;
/// The longest sleep between rounds by default.
const DEFAULT_POLL_MS: u64 = 1000;

/// Runs the command; the exit code, or the failure to report.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    let workflow =
        crate::workspace::workflow_slot(positionals.first().and_then(Option::as_deref), &root)
            .map_err(Failure::Usage)?;
    let trigger = parsed
        .non_empty("trigger")
        .unwrap_or("timer")
        .trim()
        .to_string();
    let poll = match parsed.text("poll") {
        None => Duration::from_millis(DEFAULT_POLL_MS),
        Some(ms) => match ms.trim().parse::<u64>() {
            Ok(ms) if ms > 0 => Duration::from_millis(ms),
            _ => {
                return Err(Failure::Usage(format!(
                    "--poll must be a positive number of milliseconds, got '{ms}'"
                )));
            }
        },
    };
    cli.load_root_env(&root);
    let url = choice(cli, &root).ok_or_else(|| {
        Failure::Command(format!(
            "archmax worker needs {STORE_VAR}=postgres://…: it wakes sessions other processes parked, which the filesystem store cannot hand out to one worker at a time"
        ))
    })?;
    let store = Arc::new(postgres(&url)?);
    cli.header(&workflow, &root, None);
    let (harness, mut live) = connect_to(
        cli,
        &root,
        Arc::clone(&store) as Arc<dyn SessionStore>,
        &workflow,
        parsed.flag("verbose"),
        &crate::cassette::Tape::Live,
    )?;
    let harness = Arc::new(harness);
    let once = parsed.flag("once");
    let mut woken = 0usize;
    loop {
        let due = store
            .claim_due(BATCH, Some(&workflow))
            .map_err(|e| Failure::Command(e.to_string()))?;
        let idle = due.is_empty();
        for session in due {
            if wake(
                cli,
                &harness,
                &mut live,
                &session.id,
                &session.due_at,
                &trigger,
            )? {
                woken += 1;
            }
        }
        if idle {
            if once {
                break;
            }
            let next = store
                .next_due_in()
                .map_err(|e| Failure::Command(e.to_string()))?;
            std::thread::sleep(next.map_or(poll, |n| n.min(poll)));
        }
    }
    cli.err(&format!(
        "\n{} woke {woken} session{}\n",
        crate::style::CHECK,
        if woken == 1 { "" } else { "s" }
    ));
    Ok(0)
}

/// Whether the session still waits on a passed due time (it may have been resumed since).
fn still_due(harness: &Harness, id: &str) -> Result<bool, RunError> {
    let Some(state) = harness.session_state(id)? else {
        return Ok(false);
    };
    let due = match (&state.status, &state.park) {
        (
            Status::AwaitingInput,
            Some(Park::Input {
                resume_at: Some(at),
                ..
            }),
        ) => at.clone(),
        _ => return Ok(false),
    };
    // Both are the runtime's ISO-8601 UTC with milliseconds, so text order is time order.
    let now = archmax_machine::clock::iso(archmax_machine::clock::now_ms());
    Ok(due <= now)
}

/// Delivers `trigger` to a claimed session; whether it was woken.
fn wake(
    cli: &mut Cli<'_>,
    harness: &Arc<Harness>,
    live: &mut Live,
    id: &str,
    due_at: &str,
    trigger: &str,
) -> Result<bool, Failure> {
    match still_due(harness, id) {
        Ok(true) => {}
        Ok(false) => return Ok(false),
        Err(e) => {
            cli.err(&format!("  {id}: {e}\n"));
            return Ok(false);
        }
    }
    cli.err(&format!(
        "  waking {id} (due {due_at}) with trigger '{trigger}'\n"
    ));
    let (sid, trig) = (id.to_string(), trigger.to_string());
    let result = live.drive(cli, harness, move |h| async move {
        h.deliver(&sid, &trig, Map::new(), None).await
    })?;
    match result {
        Ok(outcome) => {
            cli.err(&format!("  {id}: {}\n", outcome.status));
            Ok(true)
        }
        // Another writer holds it: it is theirs now (the claim expires if they fail).
        Err(RunError::Busy { .. }) => Ok(false),
        Err(e) => {
            cli.err(&format!("  {id}: {e}\n"));
            Ok(false)
        }
    }
}

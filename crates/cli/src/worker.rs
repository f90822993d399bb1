//! `archmax worker [workflow] [--trigger <id>] [--once] [--poll <ms>]`: serves the sessions
//! of a workflow in the PostgreSQL store that `ARCHMAX_SESSION_STORE` names. Run as many as
//! you like, on as many machines; each round it takes, in this order:
//!
//! 1. **turns a stopped worker interrupted**: sessions left `running` whose writer lease
//!    expired (`PgStore::claim_interrupted`); the turn goes on from its last committed step
//!    (`Harness::resume_interrupted`);
//! 2. **queued deliveries** (`archmax deliver --enqueue`, `PgStore::claim_deliveries`): the
//!    oldest open delivery of each session no writer holds, delivered as `archmax deliver`
//!    would; the commit that applies it marks it applied, the Outcome (or refusal) is stored;
//! 3. **due waits** (`PgStore::claim_due`): a delivery of `--trigger` (default `timer`), as
//!    a host's scheduler would deliver it; the agent continues in the parked state.
//!
//! Every claim is one worker's (`FOR UPDATE SKIP LOCKED`) for one lease time to live: a
//! worker that dies before serving it leaves it to another once that passes. A claimed due
//! session is resumed only if it still awaits input with a due time that has passed (an
//! earlier delivery may have resumed it meanwhile); the delivery then takes the session's
//! writer lease, so a session another writer holds is left to it. (A delivery that lands
//! between that check and the lease and parks the session again with a later due time can
//! still be followed by this wake: the window is one read.)

use std::sync::Arc;
use std::time::Duration;

use archmax_machine::state::Park;
use archmax_machine::store::SessionStore;
use archmax_machine::{Harness, Outcome, RunError, Status};
use archmax_store_pg::{ClaimedDelivery, PgStore};
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
/// The shortest sleep of an idle round (a delivery waiting on a busy session is "ready").
const MIN_IDLE: Duration = Duration::from_millis(20);

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
        let fail = |e: archmax_machine::store::StoreError| Failure::Command(e.to_string());
        let mut idle = true;
        for session in store
            .claim_interrupted(BATCH, Some(&workflow))
            .map_err(fail)?
        {
            // Only a turn that ran is progress: a session that cannot be resumed (its claim
            // dropped, its error printed) would be claimed again at once.
            if resume(cli, &harness, &mut live, &store, &session.id)? {
                woken += 1;
                idle = false;
            }
        }
        for claimed in store
            .claim_deliveries(BATCH, Some(&workflow))
            .map_err(fail)?
        {
            idle = false;
            if serve(cli, &harness, &mut live, &store, claimed)? {
                woken += 1;
            }
        }
        for session in store.claim_due(BATCH, Some(&workflow)).map_err(fail)? {
            idle = false;
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
            let next = store.next_wake_in().map_err(fail)?;
            std::thread::sleep(next.map_or(poll, |n| n.clamp(MIN_IDLE, poll.max(MIN_IDLE))));
        }
    }
    cli.err(&format!(
        "\n{} woke {woken} session{}\n",
        crate::style::CHECK,
        if woken == 1 { "" } else { "s" }
    ));
    Ok(0)
}

/// Finishes the interrupted turn of a claimed session; whether it ran.
fn resume(
    cli: &mut Cli<'_>,
    harness: &Arc<Harness>,
    live: &mut Live,
    store: &PgStore,
    id: &str,
) -> Result<bool, Failure> {
    cli.err(&format!(
        "  resuming {id}: its turn was interrupted (the worker running it stopped)\n"
    ));
    let sid = id.to_string();
    let result = live.drive(cli, harness, move |h| async move {
        match h.resume_interrupted(&sid).await? {
            Some(outcome) => Ok(outcome),
            None => Err(RunError::Store(format!(
                "session '{sid}' has no interrupted turn any more"
            ))),
        }
    })?;
    let ran = match result {
        Ok(outcome) => {
            cli.err(&format!("  {id}: {}\n", outcome.status));
            // A queued delivery whose turn this was is done now.
            if let Err(e) = store.finish_applied(id, &crate::outcome::outcome_value(&outcome)) {
                cli.err(&format!("  {id}: {e}\n"));
            }
            true
        }
        Err(RunError::Busy { .. }) => false,
        Err(e) => {
            cli.err(&format!("  {id}: {e}\n"));
            false
        }
    };
    if let Err(e) = store.drop_claim(id) {
        cli.err(&format!("  {id}: {e}\n"));
    }
    Ok(ran)
}

/// Runs a claimed queued delivery and records what it came to; whether it ran.
fn serve(
    cli: &mut Cli<'_>,
    harness: &Arc<Harness>,
    live: &mut Live,
    store: &PgStore,
    claimed: ClaimedDelivery,
) -> Result<bool, Failure> {
    let ClaimedDelivery {
        seq,
        delivery,
        applied,
    } = claimed;
    let id = delivery.session.clone();
    let record = |cli: &mut Cli<'_>, result: Result<&serde_json::Value, &str>| {
        if let Err(e) = store.finish_delivery(seq, result) {
            cli.err(&format!("  {id}: {e}\n"));
        }
    };
    if applied {
        // Applied by a turn whose worker stopped, finished since: its outcome is the session's.
        match settled(harness, &id) {
            Ok(outcome) => record(cli, Ok(&crate::outcome::outcome_value(&outcome))),
            Err(e) => record(cli, Err(&e.to_string())),
        }
        return Ok(false);
    }
    cli.err(&format!(
        "  delivering '{}' to {id} (delivery {seq})\n",
        delivery.trigger
    ));
    store.apply_on_commit(&id, seq);
    let (sid, trigger, variables, message) = (
        id.clone(),
        delivery.trigger.clone(),
        delivery.variables.clone(),
        delivery.message.clone(),
    );
    let result = live.drive(cli, harness, move |h| async move {
        h.deliver(&sid, &trigger, variables, message.as_deref())
            .await
    })?;
    match result {
        Ok(outcome) => {
            cli.err(&format!("  {id}: {}\n", outcome.status));
            record(cli, Ok(&crate::outcome::outcome_value(&outcome)));
            Ok(true)
        }
        // A writer took the session between the claim and the lease: later, in order.
        Err(RunError::Busy { .. }) => {
            if let Err(e) = store.release_delivery(seq) {
                cli.err(&format!("  {id}: {e}\n"));
            }
            Ok(false)
        }
        Err(e) => {
            cli.err(&format!("  {id}: {e}\n"));
            record(cli, Err(&e.to_string()));
            Ok(false)
        }
    }
}

/// The Outcome a session's stored state and transcript give (its last turn's, settled).
fn settled(harness: &Harness, id: &str) -> Result<Outcome, RunError> {
    let state = harness
        .session_state(id)?
        .ok_or_else(|| RunError::Store(format!("session '{id}' is gone")))?;
    let messages = harness.session_messages(id)?;
    Ok(Outcome::from_session(id, &state, &messages).with_disposition("deliver"))
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

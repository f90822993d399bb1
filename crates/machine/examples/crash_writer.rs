//! Crash-test driver: commits steps to a session in a loop, forever, so a test can `kill -9` it
//! at any instant and check that the store still loads the last complete step.
//!
//! Usage: `crash_writer <workspace_root> <session_id>`. Resumes from the stored `step`, takes the
//! session's writer lease (a killed run's lock is gone with it), prints
//! `committed <step>` after its first commit, then never stops. Exit 3 if the session is busy.
//!
//! Step `s` appends `1 + s % 3` messages `{"i": <index>, "step": s, "pad": "..."}` (index
//! counts from 0 across the whole transcript, pads of varying size so appends straddle pages)
//! and writes the state `{"status": "running", "step": s, "total": <messages so far>}`.

use std::error::Error;
use std::io::Write;
use std::process::ExitCode;

use archmax_machine::store::{FsStore, SessionId, SessionStore, Step, StoreError};
use serde_json::{Value, json};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("crash_writer: {e}");
            if matches!(
                e.downcast_ref::<StoreError>(),
                Some(StoreError::Busy { .. })
            ) {
                ExitCode::from(3)
            } else {
                ExitCode::FAILURE
            }
        }
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let mut args = std::env::args().skip(1);
    let (Some(root), Some(raw_id)) = (args.next(), args.next()) else {
        return Err("usage: crash_writer <workspace_root> <session_id>".into());
    };
    let id = SessionId::parse(&raw_id)?;
    let store = FsStore::new(&root);
    let _lease = store.acquire(&id)?;
    let prev = store.load_state(&id)?.unwrap_or(Value::Null);
    let mut step = prev.get("step").and_then(Value::as_u64).unwrap_or(0);
    let mut total = prev.get("total").and_then(Value::as_u64).unwrap_or(0);
    let mut announced = false;
    loop {
        step += 1;
        let count = 1 + step % 3;
        let messages: Vec<Value> = (0..count)
            .map(|k| {
                let i = total + k;
                json!({"i": i, "step": step, "pad": "x".repeat(((i * 977) % 6000) as usize)})
            })
            .collect();
        total += count;
        let state = json!({"status": "running", "step": step, "total": total});
        store.commit(
            &id,
            Step {
                new_messages: &messages,
                state: &state,
            },
        )?;
        if !announced {
            let mut out = std::io::stdout().lock();
            writeln!(out, "committed {step}")?;
            out.flush()?;
            announced = true;
        }
    }
}

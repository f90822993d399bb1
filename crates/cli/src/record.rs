//! A durable session's own record, read before anything is assembled: the
//! session commands take their workflow from it, and refuse an unknown id or a
//! session that is not parked the way the command needs without asking for the
//! model variables (none of those refusals calls a model).

use archmax_machine::state::Park;
use archmax_machine::store::{SessionId, SessionStore};
use archmax_machine::{RunError, SessionState};

use crate::Failure;

/// What a command needs the session's park to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Needs {
    /// Any session (`sessions <id>`).
    Anything,
    /// Parked at a human state (`decide`, `reply`).
    Decision,
    /// Parked for input (`deliver`).
    Input,
}

/// The message of an id with no committed state under `<root>/sessions/`.
pub(crate) fn no_session(id: &str) -> String {
    format!("no durable session '{id}'. Use 'archmax sessions' to list them.")
}

/// The committed state of session `id` in `store`.
pub(crate) fn load(store: &dyn SessionStore, id: &str) -> Result<SessionState, Failure> {
    let sid = SessionId::parse(id).map_err(|e| Failure::Usage(e.cli_message()))?;
    let value = store
        .load_state(&sid)
        .map_err(|e| Failure::Command(e.to_string()))?
        .ok_or_else(|| Failure::Command(no_session(id)))?;
    serde_json::from_value(value)
        .map_err(|e| Failure::Command(format!("session '{id}' has an unreadable state: {e}")))
}

/// The workflow a session command works on: the session's own, checked against
/// an explicit `--workflow` when one is given.
pub(crate) fn workflow_of(
    id: &str,
    session: &SessionState,
    given: Option<&str>,
) -> Result<String, Failure> {
    let recorded = session.workflow.as_str();
    match given.filter(|g| !g.is_empty()) {
        Some(g) if !recorded.is_empty() && g != recorded => Err(Failure::Usage(format!(
            "session '{id}' runs the workflow '{recorded}', not '{g}' (omit --workflow)"
        ))),
        Some(g) => Ok(g.to_string()),
        None if recorded.is_empty() => Err(Failure::Command(format!(
            "session '{id}' does not record its workflow; pass --workflow <slug>"
        ))),
        None => Ok(recorded.to_string()),
    }
}

/// The runtime's refusal when the session is not parked as `needs` says, or
/// when `target` is not one of the parked decision's choices.
pub(crate) fn check_park(
    id: &str,
    session: &SessionState,
    needs: Needs,
    target: Option<&str>,
) -> Result<(), Failure> {
    let refused = |e: RunError| Err(Failure::Command(e.to_string()));
    match (needs, &session.park) {
        (Needs::Anything, _) | (Needs::Input, Some(Park::Input { .. })) => Ok(()),
        (
            Needs::Decision,
            Some(Park::Decision {
                state, transitions, ..
            }),
        ) => {
            let valid: Vec<&str> = transitions
                .iter()
                .map(|t| t.to.as_str())
                .filter(|to| to != state)
                .collect();
            match target {
                Some(t) if !valid.contains(&t) => refused(RunError::InvalidDecisionTarget {
                    id: id.to_string(),
                    target: t.to_string(),
                    valid: valid.join(", "),
                }),
                _ => Ok(()),
            }
        }
        (Needs::Decision, _) => refused(RunError::SessionNotParked(id.to_string())),
        (Needs::Input, _) => refused(RunError::SessionNotAwaitingInput(id.to_string())),
    }
}

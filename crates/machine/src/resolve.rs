//! How a firing lands on its session, decided without running anything
//! (`agent.workflow.resolveSession`): a `turn` (a session that has not run, or
//! whose last turn finished), a `reply` (a session parked at a human state) or a
//! `resume` (a session parked awaiting an event). A session with a turn in
//! progress is refused: a session has a single writer.
//!
//! ```ignore
//! let r = harness.resolve_firing(&Firing { trigger: Some("manual"), ..Firing::default() })?;
//! assert_eq!(r.disposition, Disposition::Turn);
//! assert!(r.native); // no id given, none declared: minted for this firing
//! ```

use serde::Serialize;
use serde_json::{Map, Value};
use ts_rs::TS;

use crate::events::Event;
use crate::state::Status;
use crate::{
    error::RunError,
    harness::{Harness, SessionSource},
};

/// One firing, as a host describes it.
#[derive(Debug, Default, Clone)]
pub struct Firing<'a> {
    /// The trigger id (default `manual`).
    pub trigger: Option<&'a str>,
    /// The variables the firing carries.
    pub variables: Map<String, Value>,
    /// An explicit session id; it wins over every path.
    pub session_id: Option<&'a str>,
    /// Where to read the id from, overriding the trigger's `session:` declaration.
    pub session_path: Option<&'a str>,
}

/// How a firing enters its session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "snake_case")]
#[ts(export, rename = "SessionDisposition")]
pub enum Disposition {
    /// A new turn (a session that has not run, or whose last turn finished).
    Turn,
    /// A delivery to a session parked awaiting an event.
    Resume,
    /// A reply to a session parked at a human state.
    Reply,
}

/// The session a firing belongs to and how it lands there.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields)]
pub struct ResolvedSession {
    /// The session to run or resume.
    pub session_id: String,
    /// How the firing lands.
    pub disposition: Disposition,
    /// `turn` only: where the turn begins (the retained state of a finished session, else
    /// the trigger's start state).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_state: Option<String>,
    /// `resume` and `reply` only: the state the session is parked at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// Whether the id was minted for this firing because it named or declared none
    /// that resolved.
    pub native: bool,
}

impl Harness {
    /// Resolves a firing to its session and disposition; runs nothing. Emits a `session`
    /// warning when a session path does not resolve over the firing's variables.
    pub fn resolve_firing(&self, firing: &Firing<'_>) -> Result<ResolvedSession, RunError> {
        let trigger = firing.trigger.unwrap_or("manual");
        let (session_id, source) = self.derive_session_id(
            firing.session_id,
            trigger,
            &firing.variables,
            firing.session_path,
        )?;
        let native = matches!(source, SessionSource::Minted { .. });
        if let SessionSource::Minted {
            unresolved: Some(path),
        } = &source
        {
            self.emitter.emit(
                Some(&session_id),
                Event::Warning {
                    scope: "session".to_string(),
                    message: format!(
                        "Trigger '{trigger}' declares session path '{path}', which this firing's variables do not resolve. The firing is its own session ('{session_id}') and cannot be continued by a later firing for the same conversation."
                    ),
                },
            );
        }
        let entry = self.start_state(trigger).ok();
        let turn_at = |start: String| ResolvedSession {
            session_id: session_id.clone(),
            disposition: Disposition::Turn,
            start_state: Some(start),
            state: None,
            native,
        };
        let first_turn = || match &entry {
            Some(start) => Ok(turn_at(start.clone())),
            None => Err(RunError::UnknownSessionTrigger(trigger.to_string())),
        };
        if native {
            return first_turn();
        }
        let Some(session) = self.session_state(&session_id)? else {
            return first_turn();
        };
        if session.workflow_state.is_empty() {
            return first_turn();
        }
        let parked = |disposition| ResolvedSession {
            session_id: session_id.clone(),
            disposition,
            start_state: None,
            state: Some(session.workflow_state.clone()),
            native: false,
        };
        match session.status {
            s if s.is_finished() => {
                // The next turn continues where the last one left the session, if the
                // current spec still has that state.
                let retained = &session.workflow_state;
                let start = if self.spec.states.contains_key(retained) {
                    retained.clone()
                } else {
                    entry
                        .clone()
                        .or_else(|| self.spec.states.keys().next().cloned())
                        .unwrap_or_default()
                };
                Ok(turn_at(start))
            }
            Status::AwaitingDecision => Ok(parked(Disposition::Reply)),
            Status::AwaitingInput => Ok(parked(Disposition::Resume)),
            other => Err(RunError::Busy {
                id: session_id.clone(),
                status: other.as_str().to_string(),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dispositions_serialize_as_the_original_names() {
        let r = ResolvedSession {
            session_id: "s".into(),
            disposition: Disposition::Resume,
            start_state: None,
            state: Some("wait".into()),
            native: false,
        };
        assert_eq!(
            serde_json::to_value(&r).unwrap(),
            serde_json::json!({ "sessionId": "s", "disposition": "resume", "state": "wait", "native": false })
        );
    }
}

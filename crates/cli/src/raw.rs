//! `--verbose` raw event lines (cli digest §7.3): unstyled, printed before the
//! state-flow line of the same event; `None` when the event prints nothing.

use archmax_machine::{Envelope, Event};

/// The raw line of one event, without a trailing newline.
pub fn raw_line(envelope: &Envelope) -> Option<String> {
    let sid = envelope.session_id.as_deref().unwrap_or("?");
    let line = match &envelope.event {
        Event::AgentText { state, text, .. } => format!("[agent:{state}] {text}"),
        Event::ToolCalled {
            state,
            tool,
            detail,
            ..
        } => {
            let detail = detail
                .as_deref()
                .filter(|d| !d.is_empty())
                .map(|d| format!(" {d}"))
                .unwrap_or_default();
            format!("[workflow:{state}] tool {tool}{detail}")
        }
        Event::Warning { scope, message } => format!("[{scope}] {message}"),
        Event::ModelFallback {
            state,
            from,
            to,
            reason,
        } => format!("[model:{state}] '{from}' failed, falling back to '{to}': {reason}"),
        Event::ModelQueued {
            state,
            waited_ms,
            limit,
        } => format!(
            "[model:{state}] waited {waited_ms}ms for a slot of the endpoint ({limit} calls at once)"
        ),
        Event::SkillsLoaded { names } => format!("[skills] loaded: {}", names.join(", ")),
        Event::WorkflowReset { entry } => format!("[workflow] reset to entry '{entry}'"),
        Event::StateEnter { state } => format!("[workflow] entering node '{state}'"),
        Event::StateLeave { state, next } => {
            format!("[workflow] leaving node '{state}' -> workflowState={next}")
        }
        Event::StateErrorRouted { state, to, reason } => {
            format!("[workflow] '{state}' failed -> routing to on_error '{to}': {reason}")
        }
        Event::Advance {
            from, to, reason, ..
        } => {
            if from == "__start__" {
                format!("[workflow] entering start state '{to}'")
            } else {
                let reason = reason
                    .as_deref()
                    .filter(|r| !r.is_empty())
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default();
                format!("[workflow] advanced '{from}' -> '{to}'{reason}")
            }
        }
        Event::Raised {
            state,
            code,
            reason,
            ..
        } => format!(
            "[workflow] '{state}' raised '{code}', the session failed: {reason} (session {sid})"
        ),
        Event::VariablesSet {
            state,
            names,
            locked,
            ..
        } => format!(
            "[workflow] variables set{}: {}{}",
            state
                .as_deref()
                .map(|s| format!(" in {s}"))
                .unwrap_or_default(),
            names.join(", "),
            if *locked { " (locked)" } else { "" }
        ),
        Event::TitleSet { title, state, .. } => format!(
            "[workflow] title set{}: {title}",
            state
                .as_deref()
                .map(|s| format!(" in {s}"))
                .unwrap_or_default()
        ),
        Event::ToolBlocked { reason, origin, .. } => match origin {
            Some(o) => format!("{reason} (called from a {o})"),
            None => reason.clone(),
        },
        Event::HookOutput { state, line } => format!("[workflow:{state}] {line}"),
        Event::Parked {
            state,
            session_id,
            awaiting,
            reason,
            resume_at,
            ..
        } => {
            if awaiting == "input" {
                let why = reason
                    .as_deref()
                    .filter(|r| !r.is_empty())
                    .map(|r| format!(": {r}"))
                    .unwrap_or_default();
                let due = resume_at
                    .as_deref()
                    .map(|t| format!(" (due {t})"))
                    .unwrap_or_default();
                format!(
                    "[workflow] parked in '{state}' awaiting an event{why}{due} (session {session_id})"
                )
            } else {
                format!(
                    "[workflow] parked at human node '{state}' awaiting a decision (session {session_id})"
                )
            }
        }
        Event::Decided {
            state,
            to,
            session_id,
        } => format!("[workflow] decision at '{state}' routed to '{to}' (session {session_id})"),
        Event::ParkMessage {
            state,
            session_id,
            direction,
            ..
        } => {
            let way = if direction == "inbound" {
                "message to"
            } else {
                "reply from"
            };
            format!("[workflow] {way} the run parked at '{state}' (session {session_id})")
        }
        Event::Delivered {
            state,
            trigger,
            session_id,
            ..
        } => format!(
            "[workflow] '{trigger}' delivered to '{state}', resuming it (session {session_id})"
        ),
        _ => return None,
    };
    (!line.is_empty()).then_some(line)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn line(event: Event) -> Option<String> {
        raw_line(&Envelope {
            event,
            level: "info",
            ts: 0,
            seq: 1,
            session_id: Some("s-1".into()),
            sub_workflow_dispatch_id: None,
        })
    }

    #[test]
    fn lines() {
        assert_eq!(
            line(Event::Advance {
                from: "__start__".into(),
                to: "a".into(),
                reason: None,
                call_id: None
            })
            .as_deref(),
            Some("[workflow] entering start state 'a'")
        );
        assert_eq!(
            line(Event::Advance {
                from: "a".into(),
                to: "b".into(),
                reason: Some("ok".into()),
                call_id: None
            })
            .as_deref(),
            Some("[workflow] advanced 'a' -> 'b': ok")
        );
        assert_eq!(
            line(Event::VariablesSet {
                state: Some("a".into()),
                names: vec!["x".into(), "y".into()],
                locked: true,
                call_id: None
            })
            .as_deref(),
            Some("[workflow] variables set in a: x, y (locked)")
        );
        assert_eq!(
            line(Event::Raised {
                state: "a".into(),
                session_id: "s-1".into(),
                code: "c".into(),
                reason: "r".into(),
                call_id: None
            })
            .as_deref(),
            Some("[workflow] 'a' raised 'c', the session failed: r (session s-1)")
        );
        assert_eq!(
            line(Event::ToolBlocked {
                state: "a".into(),
                tool: "t".into(),
                reason: String::new(),
                call_id: None,
                args: None,
                origin: None,
            }),
            None,
            "empty lines are skipped"
        );
    }

    #[test]
    fn park_lines() {
        assert_eq!(
            line(Event::Parked {
                state: "poll".into(),
                session_id: "s-1".into(),
                awaiting: "input".into(),
                reason: Some("the payment".into()),
                resume_at: Some("2030-01-01T09:00:00.000Z".into()),
                call_id: None
            })
            .as_deref(),
            Some(
                "[workflow] parked in 'poll' awaiting an event: the payment (due 2030-01-01T09:00:00.000Z) (session s-1)"
            )
        );
        assert_eq!(
            line(Event::Parked {
                state: "review".into(),
                session_id: "s-1".into(),
                awaiting: "decision".into(),
                reason: None,
                resume_at: None,
                call_id: None
            })
            .as_deref(),
            Some("[workflow] parked at human node 'review' awaiting a decision (session s-1)")
        );
        assert_eq!(
            line(Event::Decided {
                state: "review".into(),
                to: "paid".into(),
                session_id: "s-1".into()
            })
            .as_deref(),
            Some("[workflow] decision at 'review' routed to 'paid' (session s-1)")
        );
        assert_eq!(
            line(Event::ParkMessage {
                state: "review".into(),
                session_id: "s-1".into(),
                direction: "outbound".into(),
                text: "x".into()
            })
            .as_deref(),
            Some("[workflow] reply from the run parked at 'review' (session s-1)")
        );
        assert_eq!(
            line(Event::Delivered {
                state: "poll".into(),
                trigger: "payment".into(),
                to: "poll".into(),
                session_id: "s-1".into()
            })
            .as_deref(),
            Some("[workflow] 'payment' delivered to 'poll', resuming it (session s-1)")
        );
    }
}

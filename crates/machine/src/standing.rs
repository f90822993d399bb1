//! Where a session stands, in words an operator can act on: one [`Standing`] computed here
//! from the session's state and its workflow's spec, read by every host (the `standing` of
//! a [`SessionSummary`](crate::SessionSummary): `archmax sessions`, `GET /sessions`,
//! `agent.sessions.*`, the inbox). The original's `status` and `classification` stay as
//! they were; the standing tells apart what they do not: a turn that ended mid-workflow
//! (`idle`) from one at a terminal state (`done`), a cancelled or broken turn that resumes
//! (`cancelled`, `failed` with `resumable`) from the agent's own failure, a wait with a due
//! time (`waiting`) from one without.
//!
//! ```
//! use archmax_machine::standing::{StandingKind, parse_status_words, parse_age};
//! assert_eq!(parse_status_words("idle, failed").unwrap(), vec![StandingKind::Idle, StandingKind::Failed]);
//! // The original's status values name the standings they cover.
//! assert_eq!(parse_status_words("completed").unwrap(), vec![StandingKind::Idle, StandingKind::Done]);
//! assert_eq!(parse_age("7d"), Ok(7 * 24 * 3600 * 1000));
//! ```

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::state::{Park, SessionState, Status};

/// The exit codes of a turn the harness ended (a model or process failure, a cancellation,
/// the step limit), as opposed to a code the agent raised: the work did not fail, the turn
/// did, and the next message continues where the session stood.
pub const HARNESS_FAILURES: [&str; 3] = ["turn-error", "turn-cancelled", "recursion-limit"];

/// The exit code of a cancelled turn (Ctrl-C, `agent.cancel`).
pub const CANCELLED_CODE: &str = "turn-cancelled";

/// A parked session (`awaiting-decision`, `awaiting-input`) needs attention once it has
/// waited this long (24 hours).
pub const ATTENTION_PARKED_AFTER_MS: u64 = 24 * 3600 * 1000;

/// A `running` session needs attention once its turn has run this long (1 hour): no turn
/// of a healthy process runs so long, so its process most likely stopped mid-turn.
pub const ATTENTION_RUNNING_AFTER_MS: u64 = 3600 * 1000;

/// The word for where a session stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
#[ts(export)]
pub enum StandingKind {
    /// A turn is in progress (or its process stopped mid-turn: the next arrival records it
    /// failed, a PostgreSQL worker finishes it).
    Running,
    /// Parked at a human state: a person decides.
    AwaitingDecision,
    /// Parked for an outside event with no due time.
    AwaitingInput,
    /// Parked for an outside event with a due time (`until`).
    Waiting,
    /// The last turn completed at a state that is not terminal: the workflow is unfinished
    /// and nothing is pending; a message continues it.
    Idle,
    /// The last turn completed at a terminal state (one with no transitions).
    Done,
    /// The session failed: the agent raised (`resumable` false), or the harness ended the
    /// turn (`turn-error`, `recursion-limit`: `resumable` true).
    Failed,
    /// The turn was cancelled (exit code `turn-cancelled`); a message continues it.
    Cancelled,
    /// Governance or a budget ended the turn.
    Rejected,
}

impl StandingKind {
    /// Every kind, in the order help and errors list them.
    pub const ALL: [StandingKind; 9] = [
        StandingKind::Running,
        StandingKind::AwaitingDecision,
        StandingKind::AwaitingInput,
        StandingKind::Waiting,
        StandingKind::Idle,
        StandingKind::Done,
        StandingKind::Failed,
        StandingKind::Cancelled,
        StandingKind::Rejected,
    ];

    /// The word (`awaiting-decision`, `idle`, …).
    pub fn as_str(self) -> &'static str {
        match self {
            StandingKind::Running => "running",
            StandingKind::AwaitingDecision => "awaiting-decision",
            StandingKind::AwaitingInput => "awaiting-input",
            StandingKind::Waiting => "waiting",
            StandingKind::Idle => "idle",
            StandingKind::Done => "done",
            StandingKind::Failed => "failed",
            StandingKind::Cancelled => "cancelled",
            StandingKind::Rejected => "rejected",
        }
    }

    /// The kind a word names; `None` for anything else.
    pub fn parse(word: &str) -> Option<StandingKind> {
        StandingKind::ALL.into_iter().find(|k| k.as_str() == word)
    }

    /// A turn in progress or a park: what a prune by status never removes.
    pub fn is_live(self) -> bool {
        matches!(
            self,
            StandingKind::Running
                | StandingKind::AwaitingDecision
                | StandingKind::AwaitingInput
                | StandingKind::Waiting
        )
    }
}

/// Where a session stands (`SessionSummary.standing`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields)]
pub struct Standing {
    /// The word.
    pub kind: StandingKind,
    /// The state it stands at: the parked state when parked, else the current state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// When a `waiting` session's wait falls due (ISO-8601 UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// Whether the work is unfinished and an arrival moves it on: a decision
    /// (`awaiting-decision`), a delivery (`awaiting-input`, `waiting`), a message (`idle`,
    /// `cancelled`, `failed` by the harness). False for `running`, `done`, `rejected` and a
    /// failure the agent raised.
    pub resumable: bool,
    /// Since when it stands so (epoch milliseconds): when its status last changed; for a
    /// session written before that was recorded, its park's time or its last trail step's.
    /// Absent when none is known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<u64>,
}

impl Standing {
    /// The standing of session state `s`; `terminal` says whether its current state has no
    /// transitions (`None`: its workflow is not known, so a completed session counts as
    /// `idle`, the word that asks for a look).
    pub fn of(s: &SessionState, terminal: Option<bool>) -> Standing {
        let current = (!s.workflow_state.is_empty()).then(|| s.workflow_state.clone());
        let parked = s.park.as_ref().map(|p| p.state().to_string());
        let (kind, until, resumable) = match s.status {
            Status::Running => (StandingKind::Running, None, false),
            Status::AwaitingDecision => (StandingKind::AwaitingDecision, None, true),
            Status::AwaitingInput => match &s.park {
                Some(Park::Input {
                    resume_at: Some(at),
                    ..
                }) => (StandingKind::Waiting, Some(at.clone()), true),
                _ => (StandingKind::AwaitingInput, None, true),
            },
            Status::Completed if terminal == Some(true) => (StandingKind::Done, None, false),
            Status::Completed => (StandingKind::Idle, None, true),
            Status::Failed => match s.exit.as_ref().map(|e| e.code.as_str()) {
                Some(CANCELLED_CODE) => (StandingKind::Cancelled, None, true),
                Some(code) if HARNESS_FAILURES.contains(&code) => {
                    (StandingKind::Failed, None, true)
                }
                _ => (StandingKind::Failed, None, false),
            },
            Status::Rejected => (StandingKind::Rejected, None, false),
        };
        Standing {
            kind,
            state: parked.or(current),
            until,
            resumable,
            since: since(s),
        }
    }

    /// How long it has stood so at `now` (epoch ms); `None` when `since` is unknown.
    pub fn age(&self, now: u64) -> Option<u64> {
        self.since.map(|t| now.saturating_sub(t))
    }

    /// Whether it needs a person's attention at `now`, and how urgently: `Some(0)` for
    /// stalled work (`idle`, `cancelled`, `failed` with `resumable`, `waiting` past its due
    /// time, `running` for longer than [`ATTENTION_RUNNING_AFTER_MS`]), `Some(1)` for a park
    /// waiting longer than [`ATTENTION_PARKED_AFTER_MS`]; `None` otherwise.
    pub fn attention(&self, now: u64) -> Option<u8> {
        let older = |ms: u64| self.age(now).is_some_and(|a| a >= ms);
        match self.kind {
            StandingKind::Idle | StandingKind::Cancelled => Some(0),
            StandingKind::Failed if self.resumable => Some(0),
            StandingKind::Waiting
                if self
                    .until
                    .as_deref()
                    .and_then(crate::clock::parse_iso)
                    .is_some_and(|due| due <= now) =>
            {
                Some(0)
            }
            StandingKind::Running if older(ATTENTION_RUNNING_AFTER_MS) => Some(0),
            StandingKind::AwaitingDecision
            | StandingKind::AwaitingInput
            | StandingKind::Waiting
                if older(ATTENTION_PARKED_AFTER_MS) =>
            {
                Some(1)
            }
            _ => None,
        }
    }

    /// The standing in words, as `archmax sessions` prints it: `idle at 'draft' (not a
    /// terminal state)`, `waiting at 'poll' until 2026-03-02T09:30:00.000Z`, …
    pub fn words(&self) -> String {
        let at = self
            .state
            .as_deref()
            .map(|s| format!(" at '{s}'"))
            .unwrap_or_default();
        match self.kind {
            StandingKind::Running => format!("running{at}"),
            StandingKind::AwaitingDecision => format!("awaiting a decision{at}"),
            StandingKind::AwaitingInput => format!("awaiting input{at}"),
            StandingKind::Waiting => {
                format!("waiting{at} until {}", self.until.as_deref().unwrap_or("?"))
            }
            StandingKind::Idle => format!("idle{at} (not a terminal state)"),
            StandingKind::Done => format!("done{at}"),
            StandingKind::Failed if self.resumable => format!("failed{at}, resumable"),
            StandingKind::Failed => format!("failed{at}"),
            StandingKind::Cancelled => format!("cancelled{at}, resumable"),
            StandingKind::Rejected => format!("rejected{at}"),
        }
    }
}

/// When the session's status last changed: the stamp its commits keep, else (a session
/// written before the stamp) its park's time, else its last trail step's.
fn since(s: &SessionState) -> Option<u64> {
    if s.status_since > 0 {
        return Some(s.status_since);
    }
    let parked = match &s.park {
        Some(Park::Decision { created_at, .. }) => crate::clock::parse_iso(created_at),
        Some(Park::Input { parked_at, .. }) => crate::clock::parse_iso(parked_at),
        None => None,
    };
    parked.or_else(|| s.trail.last().map(|t| t.ts).filter(|&t| t > 0))
}

/// The standings a comma-separated list of words names (`--status`, `?status=`, `{ status }`),
/// in the order [`StandingKind::ALL`] lists them, each once. A word is a standing
/// (`idle`, `awaiting-decision`, …) or one of the original's status values not spelled like
/// one, which names every standing it covers: `completed` (`idle`, `done`),
/// `awaiting_decision` (`awaiting-decision`), `awaiting_input` (`awaiting-input`,
/// `waiting`). `failed` is the standing: a cancelled turn is `cancelled`.
///
/// Errors: the message naming the unknown word and the known ones, or that none was given.
pub fn parse_status_words(text: &str) -> Result<Vec<StandingKind>, String> {
    let mut kinds = Vec::new();
    for word in text.split(',').map(str::trim).filter(|w| !w.is_empty()) {
        let named: &[StandingKind] = match word {
            "completed" => &[StandingKind::Idle, StandingKind::Done],
            "awaiting_decision" => &[StandingKind::AwaitingDecision],
            "awaiting_input" => &[StandingKind::AwaitingInput, StandingKind::Waiting],
            other => match StandingKind::ALL.iter().find(|k| k.as_str() == other) {
                Some(k) => std::slice::from_ref(k),
                None => {
                    return Err(format!(
                        "'{word}' is not a session status; use {} (or the original's completed, awaiting_decision, awaiting_input)",
                        known_words()
                    ));
                }
            },
        };
        kinds.extend_from_slice(named);
    }
    if kinds.is_empty() {
        return Err(format!("a status is required: {}", known_words()));
    }
    kinds.sort_unstable();
    kinds.dedup();
    Ok(kinds)
}

/// `running, awaiting-decision, …, rejected`.
pub fn known_words() -> String {
    StandingKind::ALL
        .iter()
        .map(|k| k.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}

/// Milliseconds of an age written as a whole number and a unit: `30s`, `15m`, `12h`, `7d`,
/// `2w` (`--older-than`, `?olderThan=`, `{ olderThan }`).
///
/// Errors: the message saying what was expected.
pub fn parse_age(text: &str) -> Result<u64, String> {
    let t = text.trim();
    let bad = || {
        format!("'{text}' is not an age; write a whole number and a unit: 30s, 15m, 12h, 7d or 2w")
    };
    let split = t.find(|c: char| !c.is_ascii_digit()).ok_or_else(bad)?;
    let (n, unit) = t.split_at(split);
    let n: u64 = n.parse().map_err(|_| bad())?;
    let ms: u64 = match unit {
        "s" => 1000,
        "m" => 60 * 1000,
        "h" => 3600 * 1000,
        "d" => 24 * 3600 * 1000,
        "w" => 7 * 24 * 3600 * 1000,
        _ => return Err(bad()),
    };
    n.checked_mul(ms).ok_or_else(bad)
}

/// An age in the largest whole unit: `45s`, `12m`, `3h`, `2d`.
pub fn short_age(ms: u64) -> String {
    let s = ms / 1000;
    match s {
        0..60 => format!("{s}s"),
        60..3600 => format!("{}m", s / 60),
        3600..86_400 => format!("{}h", s / 3600),
        _ => format!("{}d", s / 86_400),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::state::{Exit, TrailStep};

    fn state(status: Status, at: &str) -> SessionState {
        SessionState {
            status,
            workflow_state: at.to_string(),
            status_since: 1_000,
            ..SessionState::default()
        }
    }

    fn failed(code: &str) -> SessionState {
        let mut s = state(Status::Failed, "draft");
        s.exit = Some(Exit {
            code: code.to_string(),
            reason: "why".to_string(),
        });
        s
    }

    #[test]
    fn a_completed_turn_is_done_only_at_a_terminal_state() {
        let s = state(Status::Completed, "draft");
        let idle = Standing::of(&s, Some(false));
        assert_eq!(
            (idle.kind, idle.state.as_deref(), idle.resumable),
            (StandingKind::Idle, Some("draft"), true)
        );
        assert_eq!(idle.words(), "idle at 'draft' (not a terminal state)");
        let done = Standing::of(&s, Some(true));
        assert_eq!((done.kind, done.resumable), (StandingKind::Done, false));
        // Unknown workflow: the word that asks for a look.
        assert_eq!(Standing::of(&s, None).kind, StandingKind::Idle);
    }

    #[test]
    fn failures_tell_a_broken_turn_from_the_agents_own() {
        let c = Standing::of(&failed("turn-cancelled"), Some(false));
        assert_eq!((c.kind, c.resumable), (StandingKind::Cancelled, true));
        assert_eq!(c.words(), "cancelled at 'draft', resumable");
        for code in ["turn-error", "recursion-limit"] {
            let f = Standing::of(&failed(code), Some(false));
            assert_eq!(
                (f.kind, f.resumable),
                (StandingKind::Failed, true),
                "{code}"
            );
        }
        let raised = Standing::of(&failed("orders-unavailable"), Some(false));
        assert_eq!(
            (raised.kind, raised.resumable),
            (StandingKind::Failed, false)
        );
        assert_eq!(raised.words(), "failed at 'draft'");
    }

    #[test]
    fn parks_name_their_state_and_due_time() {
        let mut s = state(Status::AwaitingInput, "poll");
        s.park = Some(Park::Input {
            state: "poll".into(),
            title: None,
            reason: "the statement".into(),
            parked_at: "2026-03-01T09:30:00.000Z".into(),
            resume_at: Some("2026-03-02T09:30:00.000Z".into()),
        });
        let due = crate::clock::parse_iso("2026-03-02T09:30:00.000Z").unwrap_or(0);
        s.status_since = due - 3600 * 1000;
        let w = Standing::of(&s, Some(false));
        assert_eq!(w.kind, StandingKind::Waiting);
        assert_eq!(w.until.as_deref(), Some("2026-03-02T09:30:00.000Z"));
        assert_eq!(
            w.words(),
            "waiting at 'poll' until 2026-03-02T09:30:00.000Z"
        );
        assert_eq!(w.attention(due - 1), None);
        assert_eq!(w.attention(due), Some(0));
        if let Some(Park::Input { resume_at, .. }) = &mut s.park {
            *resume_at = None;
        }
        s.status_since = 1_000;
        let a = Standing::of(&s, Some(false));
        assert_eq!((a.kind, a.resumable), (StandingKind::AwaitingInput, true));
        assert_eq!(a.attention(1_000 + ATTENTION_PARKED_AFTER_MS - 1), None);
        assert_eq!(a.attention(1_000 + ATTENTION_PARKED_AFTER_MS), Some(1));
    }

    #[test]
    fn since_falls_back_to_the_park_then_the_trail() {
        let mut s = state(Status::Completed, "draft");
        s.status_since = 0;
        assert_eq!(Standing::of(&s, Some(false)).since, None);
        s.trail.push(TrailStep {
            to: "draft".into(),
            kind: "agent".into(),
            reason: None,
            workflow: None,
            status: None,
            ts: 42,
        });
        assert_eq!(Standing::of(&s, Some(false)).since, Some(42));
        s.status = Status::AwaitingDecision;
        s.park = Some(Park::Decision {
            state: "review".into(),
            title: None,
            seq: 1,
            transitions: Vec::new(),
            evidence: Vec::new(),
            created_at: "1970-01-01T00:00:01.000Z".into(),
        });
        let p = Standing::of(&s, Some(false));
        assert_eq!((p.since, p.state.as_deref()), (Some(1000), Some("review")));
    }

    #[test]
    fn attention_is_stalled_work_then_old_parks() {
        let now = 10 * ATTENTION_PARKED_AFTER_MS;
        let at = |s: SessionState| Standing::of(&s, Some(false)).attention(now);
        assert_eq!(at(state(Status::Completed, "draft")), Some(0));
        assert_eq!(at(failed("turn-cancelled")), Some(0));
        assert_eq!(at(failed("turn-error")), Some(0));
        assert_eq!(at(failed("raised-code")), None);
        assert_eq!(at(state(Status::Rejected, "draft")), None);
        assert_eq!(at(state(Status::AwaitingDecision, "review")), Some(1));
        assert_eq!(at(state(Status::Running, "draft")), Some(0));
        let mut fresh = state(Status::Running, "draft");
        fresh.status_since = now - 1;
        assert_eq!(at(fresh), None);
        assert_eq!(
            Standing::of(&state(Status::Completed, "end"), Some(true)).attention(now),
            None
        );
    }

    #[test]
    fn status_words_and_ages_parse_or_say_why() {
        assert_eq!(
            parse_status_words("failed,idle,idle").unwrap_or_default(),
            vec![StandingKind::Idle, StandingKind::Failed]
        );
        assert_eq!(
            parse_status_words("awaiting_input").unwrap_or_default(),
            vec![StandingKind::AwaitingInput, StandingKind::Waiting]
        );
        let e = parse_status_words("stuck").unwrap_err();
        assert!(
            e.starts_with("'stuck' is not a session status; use running, awaiting-decision"),
            "{e}"
        );
        assert!(parse_status_words(" , ").is_err());
        assert_eq!(parse_age("12h"), Ok(12 * 3600 * 1000));
        assert_eq!(parse_age("0s"), Ok(0));
        for bad in ["", "7", "d", "7days", "-1d", "1.5h"] {
            assert!(parse_age(bad).is_err(), "{bad}");
        }
        assert_eq!(short_age(59_999), "59s");
        assert_eq!(short_age(3 * 3600 * 1000 + 5), "3h");
        assert_eq!(short_age(50 * 3600 * 1000), "2d");
    }
}

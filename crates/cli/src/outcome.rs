//! How a call's outcome is reported (cli digest §5): narration on stderr, the
//! reply on stdout, and the exit code. `run` reports a turn, a reply or a
//! delivery by the outcome's disposition; `decide` and `deliver` report a
//! resume, `reply` a reply.

use archmax_machine::state::{DecisionOption, Park};
use archmax_machine::{Harness, Outcome, OutcomeKind};
use serde_json::Value;

use crate::style::{CHECK, CROSS, Style, WARN};

/// A rendered report: what goes to each stream, and the exit code.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Report {
    /// stderr text.
    pub err: String,
    /// stdout text.
    pub out: String,
    /// The exit code.
    pub code: i32,
}

impl Report {
    fn err_line(&mut self, line: &str) {
        self.err.push_str(line);
        self.err.push('\n');
    }
    fn out_line(&mut self, line: &str) {
        self.out.push_str(line);
        self.out.push('\n');
    }
}

fn label(style: &Style, kind: &str, text: &str) -> String {
    match kind {
        "ok" => style.green(&style.bold(&format!("{CHECK} {text}"))),
        "warn" => style.yellow(&style.bold(&format!("{WARN} {text}"))),
        _ => style.red(&style.bold(&format!("{CROSS} {text}"))),
    }
}

fn in_state(state: &str) -> String {
    if state.is_empty() {
        String::new()
    } else {
        format!(" in the '{state}' state")
    }
}

/// The report of a `run` call: a turn, or what the session's park made of it
/// (a reply to a decision park, a delivery to an input park).
pub(crate) fn run_report(style: &Style, outcome: &Outcome, harness: &Harness) -> Report {
    match outcome.disposition {
        "reply" => return reply_report(style, outcome),
        "deliver" => return resumed_report(style, outcome, "delivered"),
        _ => {}
    }
    let mut r = Report::default();
    match outcome.kind {
        OutcomeKind::Completed => {
            r.err_line("");
            r.err_line(&label(style, "ok", "answer"));
            if outcome.reply.is_empty() {
                r.out_line("(no textual answer)");
            } else {
                r.out_line(&outcome.reply);
            }
        }
        OutcomeKind::Rejected | OutcomeKind::Failed => {
            r.err_line("");
            ended(style, outcome, &mut r);
        }
        OutcomeKind::Parked => park_report(style, outcome, harness, &mut r),
    }
    r
}

/// A session that ended rejected or failed (without the leading blank line):
/// why on stderr, whatever it last said on stdout, exit 1.
fn ended(style: &Style, outcome: &Outcome, r: &mut Report) {
    let id = &outcome.session_id;
    if outcome.kind == OutcomeKind::Rejected {
        r.err_line(&label(style, "bad", "rejected"));
        let tail = match outcome.rejected.as_deref() {
            Some(reason) => format!(": {reason}"),
            None => ".".to_string(),
        };
        r.err_line(&format!(
            "Session {id} was rejected{}{tail}",
            in_state(&outcome.state)
        ));
    } else {
        r.err_line(&label(style, "bad", "failed"));
        let exit = outcome.exit.as_ref();
        let text = |k: &str| exit.and_then(|e| e.get(k)).and_then(Value::as_str);
        let tail = match (text("code"), text("reason")) {
            (Some(code), Some(reason)) => format!(" with code '{code}': {reason}"),
            _ => ".".to_string(),
        };
        r.err_line(&format!(
            "Session {id} failed{}{tail}",
            in_state(&outcome.state)
        ));
    }
    if !outcome.reply.is_empty() {
        r.out_line(&outcome.reply);
    }
    r.code = 1;
}

/// The decide hint (3 lines; the placeholders are printed literally).
fn decide_hint(id: &str) -> String {
    format!(
        "Decide it with:\n  archmax decide {id} --to <state> [--comment \"why\"]\n  archmax reply {id} \"<message>\"   (answer without deciding)\n"
    )
}

/// The deliver hint (2 lines; the placeholders are printed literally).
fn deliver_hint(id: &str) -> String {
    format!(
        "Resume it with:\n  archmax deliver {id} --trigger <id> [--variables '{{\"…\":\"…\"}}']\n"
    )
}

/// A `run` turn that parked: what the park said, then where it waits and what
/// resumes it.
fn park_report(style: &Style, outcome: &Outcome, harness: &Harness, r: &mut Report) {
    let id = &outcome.session_id;
    let state = &outcome.state;
    if !outcome.reply.is_empty() {
        r.err_line("");
        r.err_line(&label(style, "ok", "message"));
        r.out_line(&outcome.reply);
    }
    let title = |t: &Option<String>| t.as_deref().map(|t| format!(" ({t})")).unwrap_or_default();
    r.err_line("");
    match &outcome.pending {
        Some(Park::Input {
            title: t,
            reason,
            resume_at,
            ..
        }) => {
            r.err_line(&label(style, "warn", "awaiting input"));
            r.err_line(&format!(
                "Session {id} is parked in the '{state}' state{} awaiting an external event.",
                title(t)
            ));
            if !reason.is_empty() {
                r.err_line(&format!("  waiting for: {reason}"));
            }
            if let Some(at) = resume_at {
                r.err_line(&format!(
                    "  due:         {at} (whoever schedules the wake-up)"
                ));
            }
            r.err.push_str(&deliver_hint(id));
        }
        pending => {
            let (t, choices, evidence) = match pending {
                Some(Park::Decision {
                    title,
                    transitions,
                    evidence,
                    ..
                }) => (
                    title.clone(),
                    transitions.clone(),
                    Some(evidence.as_slice()),
                ),
                _ => (None, Vec::new(), None),
            };
            r.err_line(&label(style, "warn", "awaiting human decision"));
            r.err_line(&format!(
                "Session {id} is parked at the '{state}' human state{} awaiting a decision.",
                title(&t)
            ));
            // Looked up where the parked state is declared: a caller presenting its
            // child's decision names the child's state.
            let decl = harness
                .parked_declaration(id)
                .ok()
                .flatten()
                .or_else(|| harness.spec().states.get(state).cloned());
            r.err.push_str(&decision_context(
                decl.as_ref(),
                &choices,
                evidence.filter(|e| !e.is_empty()),
            ));
            r.err.push_str(&decide_hint(id));
        }
    }
}

/// The report of a resume (`decide`, `deliver`, and `run` landing on an input
/// park): re-parked, ended, or resumed with `verb`.
pub(crate) fn resumed_report(style: &Style, outcome: &Outcome, verb: &str) -> Report {
    let mut r = Report::default();
    let id = &outcome.session_id;
    r.err_line("");
    match outcome.kind {
        OutcomeKind::Parked => {
            let place = if outcome.state.is_empty() {
                "its current state".to_string()
            } else {
                format!("'{}'", outcome.state)
            };
            if outcome.parked_channel == Some("input") {
                r.err_line(&label(style, "warn", "awaiting input"));
                r.out_line(&format!("Session {id} parked again in the {place} state."));
                r.err.push_str(&deliver_hint(id));
            } else {
                r.err_line(&label(style, "warn", "awaiting human decision"));
                r.out_line(&format!("Session {id} parked at the {place} human state."));
                r.err.push_str(&decide_hint(id));
            }
        }
        OutcomeKind::Rejected | OutcomeKind::Failed => ended(style, outcome, &mut r),
        OutcomeKind::Completed => {
            r.err_line(&label(style, "ok", verb));
            if outcome.reply.is_empty() {
                let state = if outcome.state.is_empty() {
                    "?"
                } else {
                    &outcome.state
                };
                r.out_line(&format!("Session {id} resumed (state={state})."));
            } else {
                r.out_line(&outcome.reply);
            }
        }
    }
    r
}

/// The report of a reply to a session parked at a human state: the answer,
/// and that the decision is still pending.
pub(crate) fn reply_report(style: &Style, outcome: &Outcome) -> Report {
    let mut r = Report::default();
    r.err_line("");
    r.err_line(&label(style, "ok", "replied"));
    if outcome.reply.is_empty() {
        r.out_line("(the session had nothing to say)");
    } else {
        r.out_line(&outcome.reply);
    }
    r.err_line("");
    r.err_line(&style.yellow(&format!(
        "Session {} is still parked at the '{}' human state — a decision is pending.",
        outcome.session_id, outcome.state
    )));
    r
}

/// The choices of a human state as its spec declares them.
pub(crate) fn declared_choices(state: &archmax_spec::model::State) -> Vec<DecisionOption> {
    state
        .edges()
        .iter()
        .map(|t| DecisionOption {
            to: t.to.clone(),
            description: t.description.clone(),
            kind: t.kind.map(|k| k.as_str().to_string()),
        })
        .collect()
}

/// The decision context of a human state: its instructions and approvers from
/// the spec, the evidence (the pending record's when given, else the state's
/// declared evidence), one line per choice.
pub(crate) fn decision_context(
    decl: Option<&archmax_spec::model::State>,
    choices: &[DecisionOption],
    evidence: Option<&[String]>,
) -> String {
    let mut out = String::new();
    if let Some(text) = decl
        .and_then(|s| s.instructions.as_deref())
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        out.push_str(&format!("  Instructions: {text}\n"));
    }
    if let Some(a) = decl
        .and_then(|s| s.approvers.as_ref())
        .filter(|a| !a.is_empty())
    {
        out.push_str(&format!("  Approvers: {}\n", a.join(", ")));
    }
    let declared = decl.and_then(|s| s.evidence.as_deref());
    if let Some(e) = evidence.or(declared).filter(|e| !e.is_empty()) {
        out.push_str(&format!("  Evidence: {}\n", e.join(", ")));
    }
    for t in choices {
        let kind = match t.kind.as_deref() {
            Some(k @ ("approve" | "reject" | "refine")) => format!("[{k}] "),
            _ => String::new(),
        };
        let description = t
            .description
            .as_deref()
            .filter(|d| !d.is_empty())
            .map(|d| format!(" — {d}"))
            .unwrap_or_default();
        out.push_str(&format!("  {kind}{}{description}\n", t.to));
    }
    out
}

/// `--json`: the Outcome as the JS API returns it, without the transcript
/// (`messages`; it is in `sessions/<id>/checkpoints/transcript.jsonl`).
pub(crate) fn outcome_json(outcome: &Outcome) -> String {
    let mut value = serde_json::to_value(outcome).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.remove("messages");
    }
    let text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| "null".to_string());
    format!("{text}\n")
}

impl Report {
    /// With `--json`, stdout carries the Outcome instead of the reply.
    pub(crate) fn with_json(mut self, json: bool, outcome: &Outcome) -> Self {
        if json {
            self.out = outcome_json(outcome);
        }
        self
    }
}

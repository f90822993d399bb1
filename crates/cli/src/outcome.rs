//! How a turn's outcome is reported (cli digest §5, "run outcome"): narration
//! on stderr, the reply on stdout, and the exit code.

use archmax_machine::{Harness, Outcome, OutcomeKind};
use archmax_spec::model::TransitionType;
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

/// The report of a `run` turn.
pub(crate) fn run_report(style: &Style, outcome: &Outcome, harness: &Harness) -> Report {
    let mut r = Report::default();
    let id = &outcome.session_id;
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
        OutcomeKind::Rejected => {
            r.err_line("");
            r.err_line(&label(style, "bad", "rejected"));
            let tail = match outcome.rejected.as_deref() {
                Some(reason) => format!(": {reason}"),
                None => ".".to_string(),
            };
            r.err_line(&format!(
                "Session {id} was rejected{}{tail}",
                in_state(&outcome.state)
            ));
            if !outcome.reply.is_empty() {
                r.out_line(&outcome.reply);
            }
            r.code = 1;
        }
        OutcomeKind::Failed => {
            r.err_line("");
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
            if !outcome.reply.is_empty() {
                r.out_line(&outcome.reply);
            }
            r.code = 1;
        }
        OutcomeKind::Parked => park_report(style, outcome, harness, &mut r),
    }
    r
}

/// A park, as far as the outcome tells it (parks are not produced by this
/// build's runtime; the wait reason and due time are not in the outcome).
fn park_report(style: &Style, outcome: &Outcome, harness: &Harness, r: &mut Report) {
    let id = &outcome.session_id;
    let state = &outcome.state;
    let decl = harness.spec().states.get(state);
    let title = decl
        .and_then(|s| s.title.as_deref())
        .map(|t| format!(" ({t})"))
        .unwrap_or_default();
    if !outcome.reply.is_empty() {
        r.err_line("");
        r.err_line(&label(style, "ok", "message"));
        r.out_line(&outcome.reply);
    }
    r.err_line("");
    if outcome.status == "awaiting_input" {
        r.err_line(&label(style, "warn", "awaiting input"));
        r.err_line(&format!(
            "Session {id} is parked in the '{state}' state{title} awaiting an external event."
        ));
        r.err_line("Resume it with:");
        r.err_line(&format!(
            "  archmax deliver {id} --trigger <id> [--variables '{{\"…\":\"…\"}}']"
        ));
    } else {
        r.err_line(&label(style, "warn", "awaiting human decision"));
        r.err_line(&format!(
            "Session {id} is parked at the '{state}' human state{title} awaiting a decision."
        ));
        if let Some(decl) = decl {
            r.err.push_str(&decision_context(decl));
        }
        r.err_line("Decide it with:");
        r.err_line(&format!(
            "  archmax decide {id} --to <state> [--comment \"why\"]"
        ));
        r.err_line(&format!(
            "  archmax reply {id} \"<message>\"   (answer without deciding)"
        ));
    }
}

/// The decision context of a human state: instructions, approvers, evidence,
/// one line per transition.
pub(crate) fn decision_context(state: &archmax_spec::model::State) -> String {
    let mut out = String::new();
    if let Some(text) = state
        .instructions
        .as_deref()
        .map(str::trim)
        .filter(|t| !t.is_empty())
    {
        out.push_str(&format!("  Instructions: {text}\n"));
    }
    if let Some(a) = state.approvers.as_ref().filter(|a| !a.is_empty()) {
        out.push_str(&format!("  Approvers: {}\n", a.join(", ")));
    }
    if let Some(e) = state.evidence.as_ref().filter(|e| !e.is_empty()) {
        out.push_str(&format!("  Evidence: {}\n", e.join(", ")));
    }
    for t in state.transitions.iter().flatten() {
        let kind = match t.kind {
            Some(TransitionType::Approve) => "[approve] ",
            Some(TransitionType::Reject) => "[reject] ",
            Some(TransitionType::Refine) => "[refine] ",
            _ => "",
        };
        let description = t
            .description
            .as_deref()
            .map(|d| format!(" — {d}"))
            .unwrap_or_default();
        out.push_str(&format!("  {kind}{}{description}\n", t.to));
    }
    out
}

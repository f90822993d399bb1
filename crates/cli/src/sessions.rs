//! `archmax sessions [session] [--workflow] [--json]` (cli digest §4.4).
//!
//! Decision: unlike the original (cli digest §12, §13 #9), `sessions` does not
//! require the `ARCHMAX_*` model variables. It never calls a model, so the
//! harness is assembled with [`NoModel`], a model that fails if called, and
//! listing works on a machine with no credentials.

use std::sync::Arc;

use archmax_machine::state::Park;
use archmax_machine::store::parent_of;
use archmax_machine::{Harness, SessionState, Status};
use serde_json::{Map, Value, json};

use crate::args::Parsed;
use crate::assembly::{NoModel, failure};
use crate::outcome::{decision_context, declared_choices};
use crate::preflight::check_sessions;
use crate::style::{CHECK, Style};
use crate::workspace::resolve_root;
use crate::{Cli, Failure};

/// Runs the command; the exit code, or the failure to report.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let workflow = check_sessions(cli, parsed, positionals)?;
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    cli.load_root_env(&root);
    cli.header(&workflow, &root, None);
    let store = crate::store::open(cli, &root)?;
    let harness = crate::live::builder(cli, &root, &workflow)
        .store(store)
        .model(archmax_machine::ModelSource::Given(Arc::new(NoModel)))
        .build()
        .map_err(|e| failure(&e))?;
    let json = parsed.flag("json");
    match positionals.first().and_then(Option::as_deref) {
        Some(id) => detail(cli, &harness, id, json),
        None => list(cli, &harness, json),
    }
}

fn pretty(value: &Value) -> Result<String, Failure> {
    serde_json::to_string_pretty(value)
        .map(|t| format!("{t}\n"))
        .map_err(|e| Failure::Crash(format!("cannot encode the sessions: {e}")))
}

/// The state a parked session waits in: its park record's, else (a parked
/// status without a record) its current state.
fn parked_state(s: &SessionState) -> Option<&str> {
    match &s.park {
        Some(Park::Decision { state, .. } | Park::Input { state, .. }) => Some(state),
        None if matches!(s.status, Status::AwaitingDecision | Status::AwaitingInput) => {
            Some(&s.workflow_state)
        }
        None => None,
    }
}

/// What a session parked for input waits for, and when it is due.
fn waiting(s: &SessionState) -> Option<(&str, Option<&str>)> {
    match &s.park {
        Some(Park::Input {
            reason, resume_at, ..
        }) if !reason.is_empty() => Some((reason, resume_at.as_deref())),
        _ => None,
    }
}

fn due(resume_at: Option<&str>) -> String {
    resume_at.map(|t| format!("  due={t}")).unwrap_or_default()
}

/// The SessionSummary object; absent keys omitted.
pub(crate) fn summary(id: &str, s: &SessionState) -> Value {
    let mut m = Map::new();
    m.insert("sessionId".into(), json!(id));
    m.insert("status".into(), json!(s.status.as_str()));
    let class = if s.status.is_finished() {
        "finished"
    } else {
        "open"
    };
    m.insert("classification".into(), json!(class));
    if !s.workflow_state.is_empty() {
        m.insert("workflowState".into(), json!(s.workflow_state));
    }
    if !s.spec_hash.is_empty() {
        m.insert("specHash".into(), json!(s.spec_hash));
    }
    if let Some(state) = parked_state(s) {
        m.insert("state".into(), json!(state));
    }
    if let Some((reason, resume_at)) = waiting(s) {
        m.insert("waitReason".into(), json!(reason));
        if let Some(at) = resume_at {
            m.insert("resumeAt".into(), json!(at));
        }
    }
    if let (Status::Failed, Some(exit)) = (s.status, &s.exit) {
        m.insert(
            "exit".into(),
            json!({ "success": false, "code": exit.code, "reason": exit.reason }),
        );
    }
    if !s.variables.is_empty() {
        let vars: Map<String, Value> = s
            .variables
            .iter()
            .map(|(k, v)| (k.clone(), json!({ "value": v.value, "locked": v.locked() })))
            .collect();
        m.insert("variables".into(), Value::Object(vars));
    }
    if !s.usage.is_empty() {
        m.insert(
            "usage".into(),
            serde_json::to_value(s.usage).unwrap_or(Value::Null),
        );
    }
    if let Some(parent) = parent_of(id) {
        m.insert("parentSessionId".into(), json!(parent));
    }
    Value::Object(m)
}

fn detail(cli: &mut Cli<'_>, harness: &Harness, id: &str, json: bool) -> Result<i32, Failure> {
    let state = harness.session_state(id).map_err(|e| failure(&e))?;
    let Some(s) = state else {
        return Err(Failure::Command(format!(
            "no durable session '{id}'. Use 'archmax sessions' to list them."
        )));
    };
    if json {
        let text = pretty(&summary(id, &s))?;
        cli.out(&text);
        return Ok(0);
    }
    let style = cli.style;
    cli.err(&format!(
        "\n{}\n",
        style.green(&style.bold(&format!("{CHECK} session {id}")))
    ));
    cli.out(&detail_lines(&s));
    Ok(0)
}

/// The stdout lines of the detail view.
pub(crate) fn detail_lines(s: &SessionState) -> String {
    let or_q = |t: &str| if t.is_empty() { "?" } else { t }.to_string();
    let class = if s.status.is_finished() {
        "finished"
    } else {
        "open"
    };
    let mut out = format!("  status   {}  ({class})\n", s.status.as_str());
    out.push_str(&format!("  state    {}\n", or_q(&s.workflow_state)));
    if let Some(state) = parked_state(s) {
        out.push_str(&format!("  awaiting {state}\n"));
    }
    if let Some((reason, resume_at)) = waiting(s) {
        out.push_str(&format!("  waiting  {reason}{}\n", due(resume_at)));
    }
    if let (Status::Failed, Some(exit)) = (s.status, &s.exit) {
        out.push_str(&format!("  raised   {}: {}\n", exit.code, exit.reason));
    }
    if !s.spec_hash.is_empty() {
        out.push_str(&format!("  spec     {}\n", s.spec_hash));
    }
    if s.variables.is_empty() {
        out.push_str("  variables  none set\n");
    } else {
        out.push_str("  variables\n");
        for (name, v) in &s.variables {
            let lock = if v.locked() { " (locked)" } else { "" };
            let value = serde_json::to_string(&v.value).unwrap_or_else(|_| "null".to_string());
            out.push_str(&format!("    {name}{lock} = {value}\n"));
        }
    }
    out
}

fn list(cli: &mut Cli<'_>, harness: &Harness, json: bool) -> Result<i32, Failure> {
    let ids = harness.session_ids().map_err(|e| failure(&e))?;
    let rows: Vec<(String, SessionState)> = ids
        .into_iter()
        .filter_map(|id| match harness.session_state(&id) {
            Ok(Some(s)) => Some((id, s)),
            _ => None,
        })
        .collect();
    if json {
        let all: Vec<Value> = rows.iter().map(|(id, s)| summary(id, s)).collect();
        let text = pretty(&Value::Array(all))?;
        cli.out(&text);
        return Ok(0);
    }
    let style = cli.style;
    if rows.is_empty() {
        cli.err("\n");
        cli.out("No durable sessions found.\n");
        return Ok(0);
    }
    cli.err(&format!(
        "\n{}\n",
        style.green(&style.bold(&format!("{CHECK} sessions")))
    ));
    let mut out = String::new();
    for (id, s) in &rows {
        out.push_str(&list_line(&style, id, s));
        if let Some((reason, resume_at)) = waiting(s) {
            out.push_str(&format!("    waiting for: {reason}{}\n", due(resume_at)));
        } else if let Some(state) = parked_state(s) {
            // The state's declared choices from the assembled spec; the
            // evidence the pending record carries (declared, then attached).
            let decl = harness
                .parked_declaration(id)
                .ok()
                .flatten()
                .or_else(|| harness.spec().states.get(state).cloned());
            let decl = decl.as_ref();
            let choices = decl.map(declared_choices).unwrap_or_default();
            let evidence = match &s.park {
                Some(Park::Decision { evidence, .. }) if !evidence.is_empty() => {
                    Some(evidence.as_slice())
                }
                _ => None,
            };
            out.push_str(&decision_context(decl, &choices, evidence));
        }
    }
    cli.out(&out);
    Ok(0)
}

/// One listing line.
pub(crate) fn list_line(style: &Style, id: &str, s: &SessionState) -> String {
    let class = if s.status.is_finished() {
        "finished"
    } else {
        "open"
    };
    let state = if s.workflow_state.is_empty() {
        "?"
    } else {
        &s.workflow_state
    };
    let mut line = format!("  {id}  {}  {class}  state={state}", s.status.as_str());
    if let Some(parked) = parked_state(s) {
        line.push_str(&format!(
            "  {}",
            style.yellow(&format!("awaiting={parked}"))
        ));
    }
    if let (Status::Failed, Some(exit)) = (s.status, &s.exit) {
        line.push_str(&format!("  {}", style.red(&format!("exit={}", exit.code))));
    }
    if !s.variables.is_empty() {
        let names: Vec<&str> = s.variables.keys().map(String::as_str).collect();
        line.push_str(&format!("  vars={}", names.join(",")));
    }
    line.push('\n');
    line
}

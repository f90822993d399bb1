//! What the HTTP routes and the MCP tools do alike with the workspace's sessions: pick the
//! harness of a workflow or session, describe and list sessions, settle a turn into the
//! metrics and notices, check an approver, read a webhook firing's message and a pending
//! decision's evidence. Both faces call these, so they answer the same.

use std::path::{Component, Path as FsPath};
use std::sync::Arc;
use std::time::Instant;

use archmax_machine::standing::{parse_age, parse_status_words};
use archmax_machine::{Harness, Outcome, SessionQuery, SessionSummary};
use axum::http::StatusCode;
use serde_json::{Map, Value, json};

use crate::api_error::ApiError;
use crate::{AppState, Loaded, outcome_value};

impl AppState {
    /// The harness of `slug`, or why not.
    pub(crate) fn harness(&self, slug: &str) -> Result<Arc<Harness>, ApiError> {
        match self.workflows.get(slug) {
            Some(Loaded::Ready(h)) => Ok(Arc::clone(h)),
            Some(Loaded::Broken(e)) => Err(ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "WorkflowLoadError",
                e.clone(),
            )),
            None => Err(ApiError::not_found(format!(
                "no workflow '{slug}' in this workspace (workflows: {})",
                self.slugs().join(", ")
            ))),
        }
    }

    fn slugs(&self) -> Vec<String> {
        self.workflows.keys().cloned().collect()
    }

    /// Any assembled harness: the store reads are the same through each.
    pub(crate) fn any(&self) -> Result<Arc<Harness>, ApiError> {
        self.workflows
            .values()
            .find_map(|w| match w {
                Loaded::Ready(h) => Some(Arc::clone(h)),
                Loaded::Broken(_) => None,
            })
            .ok_or_else(|| {
                ApiError::new(
                    StatusCode::SERVICE_UNAVAILABLE,
                    "WorkflowLoadError",
                    "no workflow of the workspace loads",
                )
            })
    }

    /// The workflow a session records, if it has run.
    fn recorded(&self, id: &str) -> Result<Option<String>, ApiError> {
        let state = self.any()?.session_state(id)?;
        Ok(state.map(|s| s.workflow).filter(|w| !w.is_empty()))
    }

    /// The harness for session `id`: `given`, else the session's own workflow, else the
    /// workspace's only one.
    pub(crate) fn harness_for(
        &self,
        id: &str,
        given: Option<&str>,
    ) -> Result<Arc<Harness>, ApiError> {
        let recorded = self.recorded(id)?;
        let given = given.map(str::trim).filter(|g| !g.is_empty());
        let slug = match (given, recorded) {
            (Some(g), Some(r)) if g != r => {
                return Err(ApiError::bad_request(format!(
                    "session '{id}' runs the workflow '{r}', not '{g}' (omit workflow)"
                )));
            }
            (Some(g), _) => g.to_string(),
            (None, Some(r)) => r,
            (None, None) if self.workflows.len() == 1 => self.slugs().remove(0),
            (None, None) => {
                return Err(ApiError::bad_request(format!(
                    "this workspace has several workflows ({}); name one in 'workflow'",
                    self.slugs().join(", ")
                )));
            }
        };
        self.harness(&slug)
    }

    /// The harness of a session that must exist.
    pub(crate) fn existing(&self, id: &str) -> Result<Arc<Harness>, ApiError> {
        match self.recorded(id)? {
            Some(slug) => self.harness(&slug),
            None if self.any()?.session_state(id)?.is_some() => self.harness_for(id, None),
            None => Err(no_session(id)),
        }
    }

    /// A turn that ran (over HTTP or MCP): timed into the metrics, told to the notices'
    /// listeners; its Outcome as the answer shows it.
    pub(crate) fn settled(&self, arrival: &str, started: Instant, outcome: &Outcome) -> Value {
        self.metrics.on_turn(arrival, started.elapsed());
        let value = outcome_value(outcome);
        let field = |name: &str| value.get(name).cloned().unwrap_or(Value::Null);
        self.hub.notice(
            &outcome.session_id,
            json!({ "change": arrival, "status": field("status"), "state": field("state") }),
        );
        value
    }
}

pub(crate) fn no_session(id: &str) -> ApiError {
    ApiError::not_found(format!("no durable session '{id}'"))
}

/// A session summary with its workflow and, when parked, its park record.
pub(crate) fn described(st: &AppState, id: &str) -> Result<Option<Value>, ApiError> {
    // The summary through the session's own workflow, which knows its terminal states.
    let own = st
        .recorded(id)?
        .and_then(|w| st.harness(&w).ok())
        .map_or_else(|| st.any(), Ok)?;
    let Some(summary) = own.session_summary(id)? else {
        return Ok(None);
    };
    with_park(st, summary).map(Some)
}

/// A summary with its workflow and, when parked, its park record.
fn with_park(st: &AppState, summary: SessionSummary) -> Result<Value, ApiError> {
    let any = st.any()?;
    let id = summary.session_id.clone();
    let id = id.as_str();
    let mut value = serde_json::to_value(&summary).unwrap_or(Value::Null);
    let workflow = st.recorded(id)?;
    let park = match workflow.as_deref().map(|w| st.harness(w)) {
        Some(Ok(h)) => h.session_park(id)?,
        _ => any.session_park(id)?,
    };
    if let Value::Object(m) = &mut value {
        if let Some(w) = workflow {
            m.insert("workflow".into(), Value::String(w));
        }
        if let Some(p) = park {
            m.insert("park".into(), p);
        }
    }
    Ok(value)
}

/// `?status=` as standings; absent or blank: every standing.
pub(crate) fn kinds(status: Option<&str>) -> Result<Vec<archmax_machine::StandingKind>, ApiError> {
    match status.filter(|s| !s.trim().is_empty()) {
        None => Ok(Vec::new()),
        Some(words) => {
            parse_status_words(words).map_err(|e| ApiError::bad_request(format!("status: {e}")))
        }
    }
}

/// `?olderThan=` as milliseconds.
pub(crate) fn age(text: Option<&str>) -> Result<Option<u64>, ApiError> {
    text.filter(|t| !t.trim().is_empty())
        .map(|t| parse_age(t).map_err(|e| ApiError::bad_request(format!("olderThan: {e}"))))
        .transpose()
}

/// When a session parked, for the oldest-first order of pending ones.
fn parked_at(v: &Value) -> String {
    let park = v.get("park");
    park.and_then(|p| p.get("createdAt").or_else(|| p.get("parkedAt")))
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string()
}

/// The sessions `GET /sessions` lists (and the MCP `sessions` tool): each summary with its
/// workflow and park, filtered by workflow, standing words, age and park channel; pending
/// ones oldest first, the attention view stalled-longest first.
pub(crate) fn session_list(
    st: &AppState,
    workflow: Option<&str>,
    status: Option<&str>,
    older_than: Option<&str>,
    awaiting: Option<&str>,
    attention: bool,
) -> Result<Vec<Value>, ApiError> {
    let query = SessionQuery {
        kinds: kinds(status)?,
        older_than_ms: age(older_than)?,
        attention,
    };
    let mut out = Vec::new();
    for summary in st.any()?.list_sessions(&query)? {
        let Ok(v) = with_park(st, summary) else {
            continue;
        };
        let field = |name: &str| {
            v.get(name)
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string()
        };
        if workflow.is_some_and(|w| field("workflow") != w) {
            continue;
        }
        if let Some(a) = awaiting {
            let channel = v
                .get("park")
                .and_then(|p| p.get("channel"))
                .and_then(Value::as_str)
                .unwrap_or("");
            if channel != a {
                continue;
            }
        }
        out.push(v);
    }
    if awaiting.is_some() && !attention {
        out.sort_by_key(parked_at);
    }
    Ok(out)
}

/// Refuses `who` when the parked state names approvers and `who` is not one of them.
pub(crate) fn check_approver(
    h: &Harness,
    id: &str,
    who: &str,
    tokens: bool,
) -> Result<(), ApiError> {
    let Some(park) = h.session_park(id)? else {
        return Ok(());
    };
    let approvers: Vec<&str> = park
        .get("approvers")
        .and_then(Value::as_array)
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if approvers.is_empty() || approvers.contains(&who) {
        return Ok(());
    }
    let state = park.get("state").and_then(Value::as_str).unwrap_or("");
    let mut message = format!(
        "'{who}' may not decide the human state '{state}' of session '{id}': its approvers are {}",
        approvers.join(", ")
    );
    if !tokens {
        message.push_str(&no_token_hint(id, approvers.first().copied().unwrap_or("")));
    }
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        "NotAnApproverError",
        message,
    ))
}

/// How to get the right to decide on a server without tokens, where everyone is `local`.
fn no_token_hint(id: &str, approver: &str) -> String {
    format!(
        ". This server runs without tokens, so every request is '{}': start it with {}='{approver}=<a secret token>' and sign in with that token, or decide from a shell with 'archmax decide {id} --to <state>'",
        crate::auth::LOCAL_IDENTITY,
        crate::TOKENS_VAR
    )
}

/// The value at a dotted path of `vars`.
fn at_path<'v>(vars: &'v Map<String, Value>, path: &str) -> Option<&'v Value> {
    let mut parts = path.split('.');
    let mut here = vars.get(parts.next()?)?;
    for part in parts {
        here = here.get(part)?;
    }
    Some(here)
}

/// The message of a webhook firing: the string at the trigger's `message:` path, else the
/// body's `message`, else the body itself as JSON text.
pub(crate) fn firing_message(h: &Harness, trigger: &str, vars: &Map<String, Value>) -> String {
    let declared = h
        .spec()
        .states
        .values()
        .filter_map(|s| s.triggers.as_ref()?.get(trigger)?.as_ref())
        .find_map(|d| d.message.as_ref()?.as_str().map(str::to_string));
    let from = |v: Option<&Value>| v.and_then(Value::as_str).map(str::to_string);
    declared
        .and_then(|p| from(at_path(vars, &p)))
        .or_else(|| from(vars.get("message")))
        .unwrap_or_else(|| Value::Object(vars.clone()).to_string())
}

/// A relative path of plain components (no `..`, no root).
fn plain_path(path: &str) -> bool {
    let p = FsPath::new(path);
    !path.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

/// One evidence file of session `id`'s pending decision and its content type: only a path
/// the park lists, a plain relative one, read from the session's files.
pub(crate) fn evidence_file(
    st: &AppState,
    id: &str,
    path: &str,
) -> Result<(Vec<u8>, &'static str), ApiError> {
    let h = st.existing(id)?;
    let park = h.session_park(id)?.ok_or_else(|| {
        ApiError::not_found(format!(
            "session '{id}' is not parked; it has no evidence to show"
        ))
    })?;
    let listed = park
        .get("evidence")
        .and_then(Value::as_array)
        .is_some_and(|a| a.iter().any(|e| e.as_str() == Some(path)));
    if !listed || !plain_path(path) {
        return Err(ApiError::not_found(format!(
            "'{path}' is not evidence of session '{id}'s decision"
        )));
    }
    let sid = archmax_machine::store::SessionId::parse(id)
        .map_err(|e| ApiError::bad_request(e.to_string()))?;
    let files = st.store.session_files(&sid).ok_or_else(|| {
        ApiError::not_found(format!(
            "the {} store keeps no session files",
            st.store.kind()
        ))
    })?;
    let bytes = files
        .backend
        .read(&files.dir.join(path))
        .map_err(|e| ApiError::not_found(format!("evidence '{path}' of session '{id}': {e}")))?;
    let kind = match FsPath::new(path).extension().and_then(|e| e.to_str()) {
        Some("json") => "application/json",
        Some("md") | Some("markdown") => "text/markdown; charset=utf-8",
        Some("png") => "image/png",
        Some("jpg") | Some("jpeg") => "image/jpeg",
        Some("gif") => "image/gif",
        Some("webp") => "image/webp",
        Some("svg") => "text/plain; charset=utf-8",
        _ => "text/plain; charset=utf-8",
    };
    Ok((bytes, kind))
}

//! The routes. Each handler picks the session's harness, makes one harness call and
//! answers its result as JSON; runtime refusals are `{ error, code }` with a status.

use std::convert::Infallible;
use std::path::{Component, Path as FsPath};
use std::sync::Arc;
use std::time::Instant;

use archmax_machine::standing::{parse_age, parse_status_words};
use archmax_machine::{
    Firing, Harness, Outcome, PruneOptions, RunError, SendInput, SessionQuery, SessionSummary,
};
use archmax_spec::graph::{Format, Graph};
use axum::extract::rejection::JsonRejection;
use axum::extract::{DefaultBodyLimit, Extension, Path, Query, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::response::sse::{Event as SseEvent, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use futures_util::stream::{self, Stream, StreamExt};
use serde::Deserialize;
use serde_json::{Map, Value, json};
use tokio_stream::wrappers::BroadcastStream;
use tower_http::cors::{AllowOrigin, CorsLayer};

use crate::auth::Identity;
use crate::{AppState, Loaded, outcome_value};

/// An error answer: `{ "error": <text>, "code": <class name> }` with a status.
#[derive(Debug)]
pub(crate) struct ApiError {
    status: StatusCode,
    code: String,
    message: String,
}

impl ApiError {
    pub fn new(status: StatusCode, code: &str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            code: code.to_string(),
            message: message.into(),
        }
    }
    pub(crate) fn bad_request(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::BAD_REQUEST, "BadRequestError", message)
    }
    /// What went wrong, in words.
    pub(crate) fn message(&self) -> &str {
        &self.message
    }
    /// The error's class name (`NotAnApproverError`, …).
    pub(crate) fn code(&self) -> &str {
        &self.code
    }
    fn not_found(message: impl Into<String>) -> ApiError {
        ApiError::new(StatusCode::NOT_FOUND, "NotFoundError", message)
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let body = json!({ "error": self.message, "code": self.code });
        (self.status, Json(body)).into_response()
    }
}

impl From<RunError> for ApiError {
    fn from(e: RunError) -> ApiError {
        let status = match &e {
            RunError::UnknownTrigger { .. }
            | RunError::UnknownSessionTrigger(_)
            | RunError::InvalidDecisionTarget { .. }
            | RunError::MissingDecisionTarget { .. }
            | RunError::EmptyMessage(_)
            | RunError::MissingDeliveryTrigger(_)
            | RunError::SessionId(_)
            | RunError::SessionPath { .. }
            | RunError::Options(_)
            | RunError::InvalidVariableName { .. } => StatusCode::BAD_REQUEST,
            RunError::Busy { .. }
            | RunError::Parked(_)
            | RunError::SessionNotParked(_)
            | RunError::SessionNotAwaitingInput(_)
            | RunError::WorkflowDisabled(_) => StatusCode::CONFLICT,
            RunError::WorkflowLoad(_) | RunError::UnsupportedRuntimeContract(_) => {
                StatusCode::UNPROCESSABLE_ENTITY
            }
            _ => StatusCode::INTERNAL_SERVER_ERROR,
        };
        ApiError::new(status, e.code(), e.to_string())
    }
}

type ApiResult = Result<Response, ApiError>;

/// A JSON body, its rejection (malformed, too large, wrong type) as an [`ApiError`].
fn body<T>(given: Result<Json<T>, JsonRejection>) -> Result<T, ApiError> {
    given.map(|Json(v)| v).map_err(|r| {
        let status = r.status();
        let code = if status == StatusCode::PAYLOAD_TOO_LARGE {
            "PayloadTooLargeError"
        } else {
            "BadRequestError"
        };
        ApiError::new(status, code, r.body_text())
    })
}

pub(crate) fn router(state: Arc<AppState>, cors_origin: Option<&str>, body_limit: usize) -> Router {
    let mut app = Router::new()
        .route("/", get(crate::inbox::page))
        .route("/inbox.js", get(crate::inbox::script))
        .route("/inbox.css", get(crate::inbox::style))
        .route("/health", get(health))
        .route("/me", get(me))
        .route("/events", get(notices))
        .route("/metrics", get(metrics))
        .route("/openapi.json", get(openapi))
        .route("/workflows", get(workflows))
        .route("/workflows/{workflow}/graph", get(graph))
        .route("/sessions", get(list_sessions).delete(prune_sessions))
        .route("/sessions/{id}", get(session).delete(prune_session))
        .route("/sessions/{id}/messages", get(messages).post(send))
        .route("/sessions/{id}/decision", post(decide))
        .route("/sessions/{id}/reply", post(reply))
        .route("/sessions/{id}/deliveries", post(deliver))
        .route("/sessions/{id}/events", get(events))
        .route("/sessions/{id}/evidence/{*path}", get(evidence))
        .route("/triggers/{workflow}/{trigger}", post(trigger))
        .nest_service("/mcp", crate::mcp::http(Arc::clone(&state)))
        .layer(axum::middleware::from_fn_with_state(
            Arc::clone(&state),
            crate::auth::require_token,
        ))
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(state);
    if let Some(origin) = cors_origin.and_then(|o| HeaderValue::from_str(o).ok()) {
        app = app.layer(
            CorsLayer::new()
                .allow_origin(AllowOrigin::exact(origin))
                .allow_methods([
                    axum::http::Method::GET,
                    axum::http::Method::POST,
                    axum::http::Method::DELETE,
                ])
                .allow_headers([header::AUTHORIZATION, header::CONTENT_TYPE]),
        );
    }
    app
}

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
    fn any(&self) -> Result<Arc<Harness>, ApiError> {
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

    /// Runs one turn, timed into the metrics, and answers its Outcome.
    async fn turn<F>(&self, arrival: &str, call: F) -> ApiResult
    where
        F: std::future::Future<Output = Result<Outcome, RunError>>,
    {
        let started = Instant::now();
        // A refused arrival (not parked, a bad target) ran no turn: only turns are counted.
        let outcome = call.await?;
        Ok(Json(self.settled(arrival, started, &outcome)).into_response())
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

async fn health() -> Response {
    Json(json!({ "status": "ok" })).into_response()
}

async fn metrics(State(st): State<Arc<AppState>>) -> Response {
    st.metrics.on_request("metrics");
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        st.metrics.render(),
    )
        .into_response()
}

/// Who the request acts as, whether the server has tokens, and what the identity may do:
/// the human states it is an approver of, and whether it may prune (what the inbox shows and
/// which buttons it disables; the routes check the same again).
async fn me(
    State(st): State<Arc<AppState>>,
    Extension(Identity(who)): Extension<Identity>,
) -> Response {
    let mut approver_of = Vec::new();
    for (slug, w) in &st.workflows {
        let Loaded::Ready(h) = w else { continue };
        for (state, s) in &h.spec().states {
            if s.approvers
                .as_ref()
                .is_some_and(|a| a.iter().any(|x| x == &who))
            {
                approver_of.push(json!({ "workflow": slug, "state": state }));
            }
        }
    }
    let prune = check_pruner(&st, &who).is_ok();
    Json(json!({
        "identity": who,
        "tokens": !st.tokens.is_empty(),
        "approverOf": approver_of,
        "mayPrune": prune,
    }))
    .into_response()
}

/// `GET /events`: the server's notices, one each time a session changed through this server
/// (`event: session`, its JSON `{ seq, sessionId, change, status?, state? }`): the kept ones
/// after `since` (or `Last-Event-ID`), then live ones.
async fn notices(
    State(st): State<Arc<AppState>>,
    Query(q): Query<EventsQuery>,
    headers: HeaderMap,
) -> Sse<impl Stream<Item = Result<SseEvent, Infallible>>> {
    st.metrics.on_request("events");
    let since = q.since.or_else(|| last_event_id(&headers)).unwrap_or(0);
    let (kept, rx) = st.hub.subscribe_notices(since);
    let last = kept.last().map_or(since, |e| e.seq);
    let live = BroadcastStream::new(rx).filter_map(move |item| {
        std::future::ready(match item {
            Ok(e) if e.seq > last => Some(e),
            _ => None,
        })
    });
    let all = stream::iter(kept).chain(live).map(|e| {
        Ok::<_, Infallible>(
            SseEvent::default()
                .event("session")
                .id(e.seq.to_string())
                .data(&*e.json),
        )
    });
    Sse::new(all).keep_alive(KeepAlive::default())
}

/// A reconnecting client's `Last-Event-ID`.
fn last_event_id(headers: &HeaderMap) -> Option<u64> {
    headers
        .get("last-event-id")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse().ok())
}

async fn openapi() -> Response {
    Json(crate::openapi::document()).into_response()
}

async fn workflows(State(st): State<Arc<AppState>>) -> Response {
    let list: Vec<Value> = st
        .workflows
        .iter()
        .map(|(slug, w)| match w {
            Loaded::Ready(h) => {
                json!({ "workflow": slug, "title": h.spec().title, "loaded": true })
            }
            Loaded::Broken(e) => json!({ "workflow": slug, "loaded": false, "error": e }),
        })
        .collect();
    Json(Value::Array(list)).into_response()
}

#[derive(Deserialize)]
struct GraphQuery {
    format: Option<String>,
}

async fn graph(
    State(st): State<Arc<AppState>>,
    Path(workflow): Path<String>,
    Query(q): Query<GraphQuery>,
) -> ApiResult {
    let name = q.format.as_deref().unwrap_or("svg");
    let format = Format::parse(name).ok_or_else(|| {
        ApiError::bad_request(format!("format must be mermaid, svg or dot, got '{name}'"))
    })?;
    let h = st.harness(&workflow)?;
    let text = Graph::of(h.spec()).render(format);
    let kind = match format {
        Format::Svg => "image/svg+xml",
        Format::Mermaid | Format::Dot => "text/plain; charset=utf-8",
    };
    Ok(([(header::CONTENT_TYPE, kind)], text).into_response())
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

#[derive(Deserialize)]
struct ListQuery {
    workflow: Option<String>,
    status: Option<String>,
    awaiting: Option<String>,
    #[serde(rename = "olderThan")]
    older_than: Option<String>,
    attention: Option<String>,
}

/// A boolean query parameter: present and not `false` or `0`.
fn on(v: Option<&str>) -> bool {
    v.is_some_and(|v| !matches!(v.trim(), "false" | "0"))
}

/// `?status=` as standings; absent or blank: every standing.
fn kinds(status: Option<&str>) -> Result<Vec<archmax_machine::StandingKind>, ApiError> {
    match status.filter(|s| !s.trim().is_empty()) {
        None => Ok(Vec::new()),
        Some(words) => {
            parse_status_words(words).map_err(|e| ApiError::bad_request(format!("status: {e}")))
        }
    }
}

/// `?olderThan=` as milliseconds.
fn age(text: Option<&str>) -> Result<Option<u64>, ApiError> {
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

async fn list_sessions(State(st): State<Arc<AppState>>, Query(q): Query<ListQuery>) -> ApiResult {
    st.metrics.on_request("sessions");
    let out = session_list(
        &st,
        q.workflow.as_deref(),
        q.status.as_deref(),
        q.older_than.as_deref(),
        q.awaiting.as_deref(),
        on(q.attention.as_deref()),
    )?;
    Ok(Json(Value::Array(out)).into_response())
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

/// Refuses `who` unless it may prune: an identity named in the server's admins, or an
/// approver of some state of a workflow the server loaded.
fn check_pruner(st: &AppState, who: &str) -> Result<(), ApiError> {
    if st.admins.iter().any(|a| a == who) {
        return Ok(());
    }
    let approver = st.workflows.values().any(|w| match w {
        crate::Loaded::Ready(h) => h.spec().states.values().any(|s| {
            s.approvers
                .as_ref()
                .is_some_and(|a| a.iter().any(|x| x == who))
        }),
        crate::Loaded::Broken(_) => false,
    });
    if approver {
        return Ok(());
    }
    Err(ApiError::new(
        StatusCode::FORBIDDEN,
        "NotAllowedToPruneError",
        format!(
            "'{who}' may not prune sessions: that takes an approver of some state, or an identity listed in {}",
            crate::ADMINS_VAR
        ),
    ))
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PruneQuery {
    status: Option<String>,
    #[serde(rename = "olderThan")]
    older_than: Option<String>,
    #[serde(rename = "dryRun")]
    dry_run: Option<String>,
}

/// `DELETE /sessions?status=&olderThan=&dryRun=`: a prune by standing and age.
async fn prune_sessions(
    State(st): State<Arc<AppState>>,
    Extension(Identity(who)): Extension<Identity>,
    query: Result<Query<PruneQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult {
    st.metrics.on_request("prune");
    let Query(q) = query.map_err(|r| ApiError::bad_request(r.body_text()))?;
    check_pruner(&st, &who)?;
    let opts = PruneOptions {
        kinds: kinds(q.status.as_deref())?,
        older_than_ms: age(q.older_than.as_deref())?,
        dry_run: on(q.dry_run.as_deref()),
        session_id: None,
    };
    let report = st.any()?.prune_sessions(&opts)?;
    notice_pruned(&st, &report);
    Ok(Json(report).into_response())
}

/// A notice for each session a prune removed (a dry run removed none).
fn notice_pruned(st: &AppState, report: &archmax_machine::PruneReport) {
    if report.dry_run {
        return;
    }
    for p in &report.pruned {
        st.hub.notice(&p.session_id, json!({ "change": "prune" }));
    }
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct PruneOneQuery {
    #[serde(rename = "dryRun")]
    dry_run: Option<String>,
}

/// `DELETE /sessions/{id}?dryRun=`: one session, whatever it stands as, unless a turn holds it.
async fn prune_session(
    State(st): State<Arc<AppState>>,
    Extension(Identity(who)): Extension<Identity>,
    Path(id): Path<String>,
    query: Result<Query<PruneOneQuery>, axum::extract::rejection::QueryRejection>,
) -> ApiResult {
    st.metrics.on_request("prune");
    let Query(q) = query.map_err(|r| ApiError::bad_request(r.body_text()))?;
    check_pruner(&st, &who)?;
    let opts = PruneOptions {
        dry_run: on(q.dry_run.as_deref()),
        session_id: Some(id.clone()),
        ..PruneOptions::default()
    };
    let report = st.any()?.prune_sessions(&opts)?;
    if report.pruned.is_empty() {
        let reason = report
            .skipped
            .first()
            .map_or("it was not removed", |s| s.reason.as_str());
        return Err(if reason == "there is no such session" {
            no_session(&id)
        } else {
            ApiError::new(
                StatusCode::CONFLICT,
                "SessionNotResumableError",
                format!("session '{id}' was not pruned: {reason}"),
            )
        });
    }
    notice_pruned(&st, &report);
    Ok(Json(report).into_response())
}

async fn session(State(st): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    st.metrics.on_request("session");
    let Some(mut v) = described(&st, &id)? else {
        return Err(no_session(&id));
    };
    let trail = st
        .any()?
        .session_state(&id)?
        .map(|s| serde_json::to_value(&s.trail).unwrap_or(Value::Null));
    if let (Value::Object(m), Some(t)) = (&mut v, trail) {
        m.insert("trail".into(), t);
    }
    Ok(Json(v).into_response())
}

async fn messages(State(st): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    st.metrics.on_request("messages");
    let h = st.existing(&id)?;
    Ok(Json(Value::Array(h.session_messages(&id)?)).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct MessageBody {
    message: String,
    workflow: Option<String>,
    trigger: Option<String>,
    #[serde(default)]
    variables: Map<String, Value>,
}

async fn send(
    State(st): State<Arc<AppState>>,
    Path(id): Path<String>,
    given: Result<Json<MessageBody>, JsonRejection>,
) -> ApiResult {
    st.metrics.on_request("send");
    let b = body(given)?;
    let h = st.harness_for(&id, b.workflow.as_deref())?;
    let input = SendInput {
        message: b.message,
        trigger: Some(b.trigger.unwrap_or_else(|| "manual".to_string())),
        variables: b.variables,
    };
    st.turn("message", h.send(&id, input)).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DecisionBody {
    target: String,
    comment: Option<String>,
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

async fn decide(
    State(st): State<Arc<AppState>>,
    Extension(Identity(who)): Extension<Identity>,
    Path(id): Path<String>,
    given: Result<Json<DecisionBody>, JsonRejection>,
) -> ApiResult {
    st.metrics.on_request("decision");
    let b = body(given)?;
    let h = st.existing(&id)?;
    check_approver(&h, &id, &who, !st.tokens.is_empty())?;
    let comment = b.comment.filter(|c| !c.trim().is_empty());
    st.turn("decision", h.decide(&id, &b.target, comment.as_deref()))
        .await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ReplyBody {
    message: String,
}

async fn reply(
    State(st): State<Arc<AppState>>,
    Path(id): Path<String>,
    given: Result<Json<ReplyBody>, JsonRejection>,
) -> ApiResult {
    st.metrics.on_request("reply");
    let b = body(given)?;
    let h = st.existing(&id)?;
    st.turn("reply", h.reply(&id, &b.message)).await
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct DeliveryBody {
    trigger: String,
    #[serde(default)]
    variables: Map<String, Value>,
    message: Option<String>,
}

async fn deliver(
    State(st): State<Arc<AppState>>,
    Path(id): Path<String>,
    given: Result<Json<DeliveryBody>, JsonRejection>,
) -> ApiResult {
    st.metrics.on_request("delivery");
    let b = body(given)?;
    let h = st.existing(&id)?;
    st.turn(
        "delivery",
        h.deliver(&id, &b.trigger, b.variables, b.message.as_deref()),
    )
    .await
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

async fn trigger(
    State(st): State<Arc<AppState>>,
    Path((workflow, trigger)): Path<(String, String)>,
    given: Result<Json<Map<String, Value>>, JsonRejection>,
) -> ApiResult {
    st.metrics.on_request("trigger");
    let vars = body(given)?;
    let h = st.harness(&workflow)?;
    let resolved = h.resolve_firing(&Firing {
        trigger: Some(&trigger),
        variables: vars.clone(),
        session_id: None,
        session_path: None,
    })?;
    let message = firing_message(&h, &trigger, &vars);
    let input = SendInput {
        message,
        trigger: Some(trigger),
        variables: vars,
    };
    st.turn("trigger", h.send(&resolved.session_id, input))
        .await
}

#[derive(Deserialize)]
struct EventsQuery {
    since: Option<u64>,
}

async fn events(
    State(st): State<Arc<AppState>>,
    Path(id): Path<String>,
    Query(q): Query<EventsQuery>,
    headers: HeaderMap,
) -> Result<Sse<impl Stream<Item = Result<SseEvent, Infallible>>>, ApiError> {
    st.metrics.on_request("events");
    st.any()?.session_state(&id)?;
    let since = q.since.or_else(|| last_event_id(&headers));
    let (kept, rx) = st.hub.subscribe(&id, since.unwrap_or(0));
    let last = kept.last().map_or(since.unwrap_or(0), |e| e.seq);
    let child = format!("{id}~");
    let to_sse = |e: crate::hub::Stamped| {
        Ok::<_, Infallible>(SseEvent::default().id(e.seq.to_string()).data(&*e.json))
    };
    let live = BroadcastStream::new(rx).filter_map(move |item| {
        let keep = match item {
            Ok(e)
                if e.seq > last
                    && e.session
                        .as_deref()
                        .is_some_and(|s| s == id || s.starts_with(&child)) =>
            {
                Some(e)
            }
            _ => None,
        };
        std::future::ready(keep)
    });
    let all = stream::iter(kept).chain(live).map(to_sse);
    Ok(Sse::new(all).keep_alive(KeepAlive::default()))
}

/// A relative path of plain components (no `..`, no root).
fn plain_path(path: &str) -> bool {
    let p = FsPath::new(path);
    !path.is_empty() && p.components().all(|c| matches!(c, Component::Normal(_)))
}

async fn evidence(
    State(st): State<Arc<AppState>>,
    Path((id, path)): Path<(String, String)>,
) -> ApiResult {
    let (bytes, kind) = evidence_file(&st, &id, &path)?;
    Ok((
        [
            (header::CONTENT_TYPE, kind),
            (header::X_CONTENT_TYPE_OPTIONS, "nosniff"),
        ],
        bytes,
    )
        .into_response())
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

//! The routes. Each handler picks the session's harness, makes one harness call and
//! answers its result as JSON; runtime refusals are `{ error, code }` with a status
//! ([`ApiError`]). What a route shares with the MCP tools is in [`crate::sessions`].

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Instant;

use archmax_machine::{Firing, Outcome, PruneOptions, RunError, SendInput};
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

use crate::api_error::ApiError;
use crate::auth::Identity;
use crate::sessions::{
    age, check_approver, described, evidence_file, firing_message, kinds, no_session, session_list,
};
use crate::{AppState, Loaded};

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
        .route("/sessions/{id}/history", get(history))
        .route("/sessions/{id}/fork", post(fork))
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

/// `GET /sessions/{id}/history`: every committed step.
async fn history(State(st): State<Arc<AppState>>, Path(id): Path<String>) -> ApiResult {
    st.metrics.on_request("history");
    let h = st.existing(&id)?;
    let steps = h.session_history(&id)?.ok_or_else(|| no_session(&id))?;
    Ok(Json(steps).into_response())
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct ForkBody {
    at: u64,
    #[serde(rename = "as")]
    new_id: Option<String>,
}

/// `POST /sessions/{id}/fork`: a new session from one step; 201 with its summary.
async fn fork(
    State(st): State<Arc<AppState>>,
    Path(id): Path<String>,
    given: Result<Json<ForkBody>, JsonRejection>,
) -> ApiResult {
    st.metrics.on_request("fork");
    let b = body(given)?;
    let h = st.existing(&id)?;
    let made = h.fork_session(&id, b.at, b.new_id.as_deref())?;
    let fork = made.session_id;
    st.hub.notice(
        &fork,
        json!({ "change": "fork", "status": made.status.as_str(), "state": made.workflow_state }),
    );
    let summary = described(&st, &fork)?.ok_or_else(|| no_session(&fork))?;
    Ok((StatusCode::CREATED, Json(summary)).into_response())
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

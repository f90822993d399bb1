//! One `tools/call`: the arguments checked, the request sent with a progress
//! token, and the answer awaited against the deadline, the caller's token and
//! the server's end. A call that stops waiting (deadline, cancellation, or its
//! future dropped) sends `notifications/cancelled` for its request.

use std::sync::Arc;
use std::time::Duration;

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, CallToolResult, CancelledNotificationParam,
    ClientRequest, ProgressToken, RequestId, ServerResult,
};
use rmcp::service::{Peer, PeerRequestOptions, RoleClient};
use serde_json::Value;
use tokio::time::Instant;
use tracing::Instrument;

use super::CallOptions;
use super::connection::Connection;
use super::handler::HandlerState;
use super::server::Server;
use crate::error::McpError;
use crate::result::CallResult;

/// How long sending `notifications/cancelled` may take before the call answers anyway.
const CANCEL_SEND_LIMIT: Duration = Duration::from_secs(1);

/// Why the call stopped waiting.
enum Stop {
    Deadline,
    Cancelled,
}

pub(crate) async fn call(
    server: &Arc<Server>,
    tool: &str,
    args: Value,
    opts: CallOptions,
) -> Result<CallResult, McpError> {
    let span = tracing::info_span!(
        "mcp.call",
        otel.name = %format_args!("tools/call {tool}"),
        otel.kind = "client",
        otel.status_code = tracing::field::Empty,
        mcp.method.name = "tools/call",
        mcp.server = server.name(),
        mcp.tool = tool,
        error.type = tracing::field::Empty,
    );
    let result = run(server, tool, args, opts).instrument(span.clone()).await;
    if let Err(e) = &result
        && !span.is_disabled()
    {
        span.record("otel.status_code", "ERROR");
        span.record("error.type", error_type(e));
    }
    result
}

fn error_type(e: &McpError) -> &'static str {
    match e {
        McpError::UnknownServer { .. } => "unknown_server",
        McpError::UnknownTool { .. } => "unknown_tool",
        McpError::InvalidArguments { .. } => "invalid_arguments",
        McpError::Start { .. } => "start",
        McpError::Exited { .. } => "exited",
        McpError::Server { .. } => "server",
        McpError::Transport { .. } => "transport",
        McpError::Protocol { .. } => "protocol",
        McpError::TimedOut { .. } => "timeout",
        McpError::Cancelled { .. } => "cancelled",
        McpError::Closed => "closed",
    }
}

async fn run(
    server: &Arc<Server>,
    tool: &str,
    args: Value,
    opts: CallOptions,
) -> Result<CallResult, McpError> {
    let limit = opts.timeout.unwrap_or(server.entry.timeout);
    let deadline = Instant::now() + limit;
    let cancel = opts.cancel.clone().unwrap_or_default();
    let stopped = |stop: Stop| match stop {
        Stop::Deadline => McpError::TimedOut {
            server: server.name().to_string(),
            tool: tool.to_string(),
            after: limit,
        },
        Stop::Cancelled => McpError::Cancelled {
            server: server.name().to_string(),
            tool: tool.to_string(),
        },
    };
    // Nothing is sent before the request, so there is nothing to cancel yet.
    let (conn, arguments) = tokio::select! {
        prepared = prepare(server, tool, args) => prepared?,
        () = tokio::time::sleep_until(deadline) => return Err(stopped(Stop::Deadline)),
        () = cancel.cancelled() => return Err(stopped(Stop::Cancelled)),
    };
    let mut params = CallToolRequestParams::new(tool.to_string());
    if let Some(a) = arguments {
        params = params.with_arguments(a);
    }
    let request = ClientRequest::CallToolRequest(CallToolRequest::new(params));
    let handle = match conn
        .peer()
        .send_request_with_option(request, PeerRequestOptions::no_options())
        .await
    {
        Ok(h) => h,
        Err(e) => return Err(server.failure(e, &conn).await),
    };
    let mut guard = Pending {
        peer: conn.peer().clone(),
        request: Some(handle.id.clone()),
        token: handle.progress_token.clone(),
        handler: conn.handler.clone(),
    };
    if let Some(cb) = opts.on_progress.clone() {
        conn.handler.route(guard.token.clone(), cb);
    }
    let answer = tokio::select! {
        answer = handle.rx => answer,
        () = tokio::time::sleep_until(deadline) => {
            guard.cancel(&format!("timed out after {} ms", limit.as_millis())).await;
            return Err(stopped(Stop::Deadline));
        }
        () = cancel.cancelled() => {
            guard.cancel("cancelled by the caller").await;
            return Err(stopped(Stop::Cancelled));
        }
    };
    guard.request = None;
    match answer {
        Ok(Ok(result)) => outcome(server, &conn, result),
        Ok(Err(e)) => Err(server.failure(e, &conn).await),
        // The service dropped the request unanswered: it ended.
        Err(_) => Err(server.ended(&conn).await),
    }
}

/// The live connection and the arguments, checked against the tool's schema.
async fn prepare(
    server: &Arc<Server>,
    tool: &str,
    args: Value,
) -> Result<(Arc<Connection>, Option<rmcp::model::JsonObject>), McpError> {
    let invalid = |message: String| McpError::InvalidArguments {
        server: server.name().to_string(),
        tool: tool.to_string(),
        message,
    };
    let args = match args {
        Value::Null => Value::Object(serde_json::Map::new()),
        Value::Object(_) => args,
        other => {
            return Err(invalid(format!(
                "the arguments must be a JSON object; found {}",
                kind(&other)
            )));
        }
    };
    let conn = server.connection().await?;
    let tools = server.tools(&conn).await?;
    let info = tools.tool(tool).ok_or_else(|| McpError::UnknownTool {
        server: server.name().to_string(),
        tool: tool.to_string(),
    })?;
    info.check(&args).map_err(invalid)?;
    // Always an object, `{}` included: servers parse `arguments` with their schema.
    let arguments = match args {
        Value::Object(map) => Some(map),
        _ => None,
    };
    Ok((conn, arguments))
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

fn outcome(
    server: &Server,
    conn: &Connection,
    result: ServerResult,
) -> Result<CallResult, McpError> {
    let unexpected = |what: &str| McpError::Protocol {
        server: server.name().to_string(),
        message: conn.redactor().redact(what),
    };
    match result {
        ServerResult::CallToolResult(r) => Ok(CallResult::from_mcp(r)),
        // A reply without `content` decodes as one of these; it is an empty result.
        ServerResult::EmptyResult(_) => Ok(CallResult::default()),
        ServerResult::CustomResult(custom) => serde_json::from_value::<CallToolResult>(custom.0)
            .map(CallResult::from_mcp)
            .map_err(|e| unexpected(&format!("a result that is not a tool result ({e})"))),
        ServerResult::CreateTaskResult(_) => {
            Err(unexpected("a task (the tasks extension is not supported)"))
        }
        ServerResult::InputRequiredResult(_) => Err(unexpected(
            "an input_required round (multi-round tool calls are not supported)",
        )),
        _ => Err(unexpected("a result of another request type")),
    }
}

/// A request under way: its progress route, and the `notifications/cancelled`
/// owed if the call stops waiting for it, even by being dropped.
struct Pending {
    peer: Peer<RoleClient>,
    request: Option<RequestId>,
    token: ProgressToken,
    handler: Arc<HandlerState>,
}

impl Pending {
    async fn cancel(&mut self, reason: &str) {
        if let Some(id) = self.request.take() {
            let note = CancelledNotificationParam::new(Some(id), Some(reason.to_string()));
            let _ = tokio::time::timeout(CANCEL_SEND_LIMIT, self.peer.notify_cancelled(note)).await;
        }
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        self.handler.unroute(&self.token);
        if let Some(id) = self.request.take()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
        {
            let peer = self.peer.clone();
            rt.spawn(async move {
                let note = CancelledNotificationParam::new(
                    Some(id),
                    Some("the caller stopped waiting".to_string()),
                );
                let _ = tokio::time::timeout(CANCEL_SEND_LIMIT, peer.notify_cancelled(note)).await;
            });
        }
    }
}

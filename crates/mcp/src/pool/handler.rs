//! The client side of one connection, as rmcp calls it: progress notifications
//! routed to the call that asked for them, `tools/list_changed` turned into a new
//! generation of the tool list, and the server's own requests (elicitation,
//! sampling, roots) answered by the host or declined.

// Sampling and roots are deprecated by SEP-2577 in rmcp; servers still use them.
#![allow(deprecated)]

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::ClientHandler;
use rmcp::model::{
    ClientCapabilities, ClientConfig, CreateMessageRequestParams, CreateMessageResult,
    ElicitRequestParams, ElicitResult, ElicitationAction, ErrorCode, ErrorData, Implementation,
    ListRootsResult, ProgressNotificationParam, ProgressToken, ProtocolVersion, Root,
};
use rmcp::service::{NotificationContext, RequestContext, RoleClient};
use serde_json::{Value, json};

use super::{McpEvent, Progress, ProgressFn, Shared};
use crate::host::ElicitAnswer;

/// Progress notifications that arrive before their call registered (the token
/// is only known once the request is queued) wait here, a bounded few.
const MAX_EARLY_PROGRESS: usize = 64;

#[derive(Default)]
struct Routes {
    calls: HashMap<ProgressToken, Route>,
    early: VecDeque<ProgressNotificationParam>,
}

struct Route {
    callback: ProgressFn,
    /// Notifications are handled on separate tasks and may arrive out of order;
    /// progress only ever grows, so an older one is dropped.
    last: Option<f64>,
}

impl Route {
    /// The callback to run for `p`, if it is news.
    fn accept(&mut self, p: &ProgressNotificationParam) -> Option<ProgressFn> {
        if self.last.is_some_and(|last| p.progress <= last) {
            return None;
        }
        self.last = Some(p.progress);
        Some(self.callback.clone())
    }
}

fn progress_of(p: ProgressNotificationParam) -> Progress {
    Progress {
        progress: p.progress,
        total: p.total,
        message: p.message,
    }
}

/// One connection's handler state.
pub(crate) struct HandlerState {
    server: String,
    shared: Arc<Shared>,
    routes: Mutex<Routes>,
    /// Bumped by every `notifications/tools/list_changed`.
    pub(crate) tools_generation: AtomicU64,
}

impl HandlerState {
    /// Sends `token`'s progress to `callback` from now on (and any that came early).
    pub(crate) fn route(&self, token: ProgressToken, callback: ProgressFn) {
        let mut route = Route {
            callback,
            last: None,
        };
        let mut due = Vec::new();
        {
            let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
            let early = std::mem::take(&mut routes.early);
            for p in early {
                if p.progress_token == token {
                    if let Some(cb) = route.accept(&p) {
                        due.push((cb, p));
                    }
                } else {
                    routes.early.push_back(p);
                }
            }
            routes.calls.insert(token, route);
        }
        for (cb, p) in due {
            cb(progress_of(p));
        }
    }

    /// Stops routing `token`.
    pub(crate) fn unroute(&self, token: &ProgressToken) {
        let mut routes = self.routes.lock().unwrap_or_else(PoisonError::into_inner);
        routes.calls.remove(token);
    }
}

/// What rmcp holds: cheap to clone, shared with the connection.
#[derive(Clone)]
pub(crate) struct Handler {
    pub(crate) state: Arc<HandlerState>,
    info: Arc<ClientConfig>,
}

impl Handler {
    pub(crate) fn new(server: &str, shared: Arc<Shared>) -> Handler {
        let mut caps = json!({});
        if let Some(host) = &shared.host {
            if host.elicits() {
                caps["elicitation"] = json!({"form": {}});
            }
            if host.samples() {
                caps["sampling"] = json!({});
            }
        }
        if shared.roots.is_some() {
            caps["roots"] = json!({"listChanged": false});
        }
        let capabilities: ClientCapabilities = serde_json::from_value(caps).unwrap_or_default();
        let client = Implementation::new(shared.client_name.clone(), env!("CARGO_PKG_VERSION"));
        // The newest version that has the `initialize` handshake: rmcp's default
        // (its LATEST, 2026-07-28) names a revision without one, and the official
        // conformance suite fails an `initialize` that names it.
        let info = ClientConfig::new(capabilities, client)
            .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE);
        Handler {
            state: Arc::new(HandlerState {
                server: server.to_string(),
                shared,
                routes: Mutex::new(Routes::default()),
                tools_generation: AtomicU64::new(0),
            }),
            info: Arc::new(info),
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        (*self.info).clone()
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let due = {
            let mut routes = self
                .state
                .routes
                .lock()
                .unwrap_or_else(PoisonError::into_inner);
            match routes.calls.get_mut(&params.progress_token) {
                Some(route) => route.accept(&params),
                None => {
                    if routes.early.len() >= MAX_EARLY_PROGRESS {
                        routes.early.pop_front();
                    }
                    routes.early.push_back(params);
                    return;
                }
            }
        };
        // Outside the lock: the callback is the caller's code.
        if let Some(cb) = due {
            cb(progress_of(params));
        }
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.state.tools_generation.fetch_add(1, Ordering::AcqRel);
        self.state.shared.emit(McpEvent::ToolsChanged {
            server: self.state.server.clone(),
        });
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let (answer, schema) = match &self.state.shared.host {
            Some(host) if host.elicits() => {
                let params = serde_json::to_value(&request).unwrap_or_default();
                let schema = params.get("requestedSchema").cloned();
                (host.elicit(&self.state.server, params).await, schema)
            }
            _ => (ElicitAnswer::Decline, None),
        };
        Ok(match answer {
            ElicitAnswer::Accept(content) => ElicitResult::new(ElicitationAction::Accept)
                .with_content(with_defaults(content, schema.as_ref())),
            ElicitAnswer::Decline => ElicitResult::new(ElicitationAction::Decline),
            ElicitAnswer::Cancel => ElicitResult::new(ElicitationAction::Cancel),
        })
    }

    async fn create_message(
        &self,
        params: CreateMessageRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<CreateMessageResult, ErrorData> {
        let Some(host) = self.state.shared.host.as_ref().filter(|h| h.samples()) else {
            return Err(refusal("the client declines sampling requests"));
        };
        let params = serde_json::to_value(&params).unwrap_or_default();
        match host.sample(&self.state.server, params).await {
            Ok(value) => serde_json::from_value(value).map_err(|e| {
                ErrorData::new(
                    ErrorCode::INTERNAL_ERROR,
                    format!("the client's sampling answer is not a CreateMessageResult: {e}"),
                    None,
                )
            }),
            Err(reason) => Err(refusal(&reason)),
        }
    }

    async fn list_roots(
        &self,
        _context: RequestContext<RoleClient>,
    ) -> Result<ListRootsResult, ErrorData> {
        let roots = self
            .state
            .shared
            .roots
            .iter()
            .flatten()
            .map(|uri| Root::new(uri.clone()))
            .collect();
        Ok(ListRootsResult::new(roots))
    }
}

/// An accepted elicitation's content with the requested schema's `default` for
/// every property the answer leaves out, as a form shows them pre-filled
/// (SEP-1034). A `null` answer is an empty form; an answer that is not an
/// object is sent as it is.
fn with_defaults(content: Value, schema: Option<&Value>) -> Value {
    let mut content = match content {
        Value::Null => Value::Object(serde_json::Map::new()),
        other => other,
    };
    let properties = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object);
    if let (Value::Object(answer), Some(properties)) = (&mut content, properties) {
        for (name, property) in properties {
            if let Some(default) = property.get("default")
                && !answer.contains_key(name)
            {
                answer.insert(name.clone(), default.clone());
            }
        }
    }
    content
}

fn refusal(reason: &str) -> ErrorData {
    // -1: the code the MCP specification's examples give a user-rejected sampling request.
    ErrorData::new(ErrorCode(-1), reason.to_string(), None)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_accepted_answer_gets_the_defaults_of_the_fields_it_leaves_out() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "string", "default": "John Doe"},
            "age": {"type": "integer", "default": 30},
            "status": {"type": "string", "enum": ["active", "inactive"], "default": "active"},
            "verified": {"type": "boolean", "default": true},
            "email": {"type": "string"}
        }});
        assert_eq!(
            with_defaults(json!({"name": "Ada", "verified": false}), Some(&schema)),
            json!({"name": "Ada", "age": 30, "status": "active", "verified": false})
        );
        assert_eq!(
            with_defaults(Value::Null, Some(&schema)),
            json!({"name": "John Doe", "age": 30, "status": "active", "verified": true})
        );
        // No schema, or an answer that is not an object: sent as it is.
        assert_eq!(with_defaults(json!({"a": 1}), None), json!({"a": 1}));
        assert_eq!(with_defaults(json!("yes"), Some(&schema)), json!("yes"));
    }

    #[test]
    fn the_handshake_names_a_version_that_has_one() {
        let shared = Arc::new(Shared {
            root: ".".into(),
            inherit_env: Vec::new(),
            host: None,
            roots: None,
            on_event: None,
            client_name: "test".to_string(),
            http: std::sync::OnceLock::new(),
        });
        let info = Handler::new("srv", shared).get_info();
        assert_eq!(info.protocol_version, ProtocolVersion::V_2025_11_25);
        assert!(info.protocol_version.has_initialize());
    }
}

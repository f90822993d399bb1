//! The workspace's workflows as MCP tools (`archmax mcp` over stdio, `/mcp` of `archmax serve`
//! over streamable HTTP), on the official Rust SDK's server side.
//!
//! One tool per entry a host may fire (a start state's `manual` trigger as `<workflow>`, each
//! other trigger as `<workflow>__<trigger>`), its input the trigger's signature as
//! `signatureJsonSchema` maps it plus `message` and `session`; and `decide`, `reply`,
//! `deliver` and `sessions` for what a turn leaves parked. Every call is one harness call
//! through the same [`AppState`] the HTTP routes use (the same store, event hub, metrics and
//! approver check), so a calling agent governs nothing: the workflow's kernel decides every
//! tool call inside the session, and a human state is left only by `decide`, by an approver.

use std::sync::Arc;

use archmax_machine::{Harness, Outcome, OutcomeKind, SendInput};
use archmax_spec::signature::{normalize_signature, signature_json_schema};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ElicitRequestParams,
    ElicitationAction, Implementation, InitializeResult, JsonObject, ListResourceTemplatesResult,
    ListResourcesResult, ListToolsResult, PaginatedRequestParams, ProgressNotificationParam,
    ReadResourceRequestParams, ReadResourceResponse, ReadResourceResult, ServerCapabilities, Tool,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value, json};

use crate::api_error::ApiError;
use crate::auth::Identity;
use crate::{AppState, Loaded};

/// The tools that act on a session a turn left behind.
const OPERATIONS: [&str; 4] = ["decide", "reply", "deliver", "sessions"];

/// What a workflow tool starts: a workflow, through one of its triggers.
#[derive(Debug, Clone)]
struct Entry {
    workflow: String,
    trigger: String,
    /// The names of the variables the trigger's `returns` declares.
    returns: Vec<String>,
    /// Whether the signature declares `message` / `session` itself (then the tool's own
    /// argument of that name is not added).
    declares_message: bool,
    declares_session: bool,
}

/// The server: the app's state and the tools made from its workflows.
#[derive(Clone)]
pub struct McpServer {
    state: Arc<AppState>,
    tools: Arc<Vec<(Tool, Option<Entry>)>>,
    /// The identity of every call when the transport carries none (stdio: the local user,
    /// who decides as `archmax decide` does).
    local: bool,
}

fn object(v: Value) -> Arc<JsonObject> {
    Arc::new(match v {
        Value::Object(m) => m,
        _ => Map::new(),
    })
}

fn tool(name: &str, description: &str, input: Value, output: Option<Value>) -> Tool {
    let mut t = Tool::new(name.to_string(), description.to_string(), object(input));
    t.output_schema = output.map(object);
    t
}

/// The schema of a turn's answer (`structuredContent`): nothing in it is required beyond the
/// session and how the turn ended, so a parked turn (its returns not yet set) conforms.
fn outcome_schema(returns: Value) -> Value {
    json!({
        "type": "object",
        "properties": {
            "sessionId": { "type": "string", "description": "The session: pass it as 'session' to continue it." },
            "kind": { "type": "string", "enum": ["completed", "parked", "rejected", "failed"] },
            "state": { "type": "string", "description": "The state the session stands in." },
            "reply": { "type": "string", "description": "The agent's last text." },
            "returns": returns,
            "park": { "type": "object", "description": "What the session waits for, when parked: a decision (its options) or input." },
            "rejected": { "type": "string" },
        },
        "required": ["sessionId", "kind", "state", "reply"],
    })
}

/// The schema of `returns` for an answer: the declared names typed, none required.
fn returns_schema(entries: &[archmax_spec::signature::SignatureEntry]) -> Value {
    let mut schema = signature_json_schema(entries);
    if let Value::Object(m) = &mut schema {
        m.remove("required");
    }
    schema
}

/// The tools of the loaded workflows, in workflow order, then the operations.
fn tools_of(state: &AppState) -> Vec<(Tool, Option<Entry>)> {
    let mut out = Vec::new();
    for (slug, loaded) in &state.workflows {
        let Loaded::Ready(h) = loaded else { continue };
        let spec = h.spec();
        let title = spec.title.clone().unwrap_or_else(|| slug.clone());
        for state in spec.states.values() {
            let Some(triggers) = state.triggers.as_ref() else {
                continue;
            };
            for (trigger, decl) in triggers {
                let decl = decl.as_ref();
                let signature = |list: Option<&Vec<archmax_spec::model::SignatureItem>>| {
                    normalize_signature(&serde_json::to_value(list).unwrap_or(Value::Null))
                };
                let requires = signature(decl.and_then(|d| d.requires.as_ref()));
                let returns = signature(decl.and_then(|d| d.returns.as_ref()));
                let mut input = signature_json_schema(&requires);
                let declares = |n: &str| requires.iter().any(|e| e.name == n);
                let entry = Entry {
                    workflow: slug.clone(),
                    trigger: trigger.clone(),
                    returns: returns.iter().map(|e| e.name.clone()).collect(),
                    declares_message: declares("message"),
                    declares_session: declares("session"),
                };
                if let Some(props) = input.get_mut("properties").and_then(Value::as_object_mut) {
                    if !entry.declares_message {
                        props.insert("message".into(), json!({ "type": "string", "description": "What to tell the agent: the start of the conversation, or the next message of a session." }));
                    }
                    if !entry.declares_session {
                        props.insert("session".into(), json!({ "type": "string", "description": "A session to continue (its sessionId); omitted, a new session starts." }));
                    }
                }
                let name = if trigger == "manual" && !OPERATIONS.contains(&slug.as_str()) {
                    slug.clone()
                } else {
                    format!("{slug}__{trigger}")
                };
                let description = decl
                    .and_then(|d| d.description.clone())
                    .unwrap_or_else(|| format!("Run the workflow '{title}' ({trigger})."));
                let description = format!(
                    "{description} Runs one governed turn of the workflow '{slug}' and answers its outcome; a session that parks for a person is continued with 'decide' (or 'reply')."
                );
                out.push((
                    tool(
                        &name,
                        &description,
                        input,
                        Some(outcome_schema(returns_schema(&returns))),
                    ),
                    Some(entry),
                ));
            }
        }
    }
    let session =
        json!({ "type": "string", "description": "The session's id (sessionId of an answer)." });
    out.push((tool("decide", "Decide a session parked at a human state: move it to one of the park's options (its 'to'), with an optional comment, and run the turn that follows. Only an approver of the state may decide it.", json!({
        "type": "object",
        "properties": { "session": session, "target": { "type": "string", "description": "The option's target state." }, "comment": { "type": "string" } },
        "required": ["session", "target"],
    }), Some(outcome_schema(json!({ "type": "object" })))), None));
    out.push((tool("reply", "Answer a session awaiting input (or add to a parked decision's conversation without deciding).", json!({
        "type": "object",
        "properties": { "session": session, "message": { "type": "string" } },
        "required": ["session", "message"],
    }), Some(outcome_schema(json!({ "type": "object" })))), None));
    out.push((tool("deliver", "Deliver an event to a session waiting for one: its trigger, the variables it carries and an optional message.", json!({
        "type": "object",
        "properties": { "session": session, "trigger": { "type": "string" }, "variables": { "type": "object" }, "message": { "type": "string" } },
        "required": ["session", "trigger"],
    }), Some(outcome_schema(json!({ "type": "object" })))), None));
    out.push((tool("sessions", "List the sessions (filtered by 'status': running, awaiting-decision, awaiting-input, waiting, idle, done, failed, cancelled, rejected; 'attention': stalled ones first), or show one ('session') with its pending decision.", json!({
        "type": "object",
        "properties": {
            "session": session,
            "workflow": { "type": "string" },
            "status": { "type": "string", "description": "Comma-separated standings." },
            "attention": { "type": "boolean" },
        },
    }), None), None));
    out
}

impl McpServer {
    /// The server over `state`; `local`: calls carry no identity (stdio), and decide as
    /// the local user.
    pub(crate) fn new(state: Arc<AppState>, local: bool) -> McpServer {
        let tools = Arc::new(tools_of(&state));
        McpServer {
            state,
            tools,
            local,
        }
    }

    /// Who calls: the bearer token's identity over HTTP, none over stdio.
    fn identity(&self, context: &RequestContext<RoleServer>) -> Option<String> {
        if self.local {
            return None;
        }
        let parts = context.extensions.get::<axum::http::request::Parts>();
        Some(
            parts
                .and_then(|p| p.extensions.get::<Identity>())
                .map_or_else(|| crate::auth::LOCAL_IDENTITY.to_string(), |i| i.0.clone()),
        )
    }
}

/// A string argument.
fn text_arg(args: &Map<String, Value>, name: &str) -> Option<String> {
    args.get(name)
        .and_then(Value::as_str)
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

fn required(args: &Map<String, Value>, name: &str) -> Result<String, ApiError> {
    text_arg(args, name).ok_or_else(|| ApiError::bad_request(format!("'{name}' is required")))
}

/// A refusal the caller reads (`isError`), not a protocol error: `<code>: <what to change>`.
/// Text only: a tool's output schema describes its outcomes, and a client checks any
/// structured content against it, an error's too.
fn refusal(e: &ApiError) -> CallToolResult {
    CallToolResult::error(vec![rmcp::model::ContentBlock::text(format!(
        "{}: {}",
        e.code(),
        e.message()
    ))])
}

/// The answer of a turn: its outcome as text for the calling model and as
/// `structuredContent` (`isError` when it was rejected or failed).
fn answer(turned: &Turned, returns: &[String]) -> CallToolResult {
    let (outcome, full) = (&turned.outcome, &turned.shown);
    let mut structured = Map::new();
    for key in ["sessionId", "kind", "state", "reply", "rejected", "exit"] {
        if let Some(v) = full.get(key) {
            structured.insert(key.into(), v.clone());
        }
    }
    if !returns.is_empty() {
        let set: Map<String, Value> = returns
            .iter()
            .filter_map(|n| {
                let entry = outcome.variables.get(n)?;
                Some((
                    n.clone(),
                    entry.get("value").cloned().unwrap_or(Value::Null),
                ))
            })
            .collect();
        structured.insert("returns".into(), Value::Object(set));
    }
    if let Some(park) = full.get("pending") {
        structured.insert("park".into(), park.clone());
    }
    let mut text = outcome.reply.clone();
    let status = match (&outcome.kind, outcome.pending.as_ref()) {
        (OutcomeKind::Parked, Some(_)) => park_line(full),
        (OutcomeKind::Rejected, _) => format!(
            "[session {} rejected at {}: {}]",
            outcome.session_id,
            outcome.state,
            outcome.rejected.as_deref().unwrap_or("")
        ),
        (kind, _) => format!(
            "[session {} {} at {}]",
            outcome.session_id,
            serde_json::to_value(kind)
                .ok()
                .and_then(|v| v.as_str().map(str::to_string))
                .unwrap_or_default(),
            outcome.state
        ),
    };
    if !text.is_empty() {
        text.push_str("\n\n");
    }
    text.push_str(&status);
    let failed = matches!(outcome.kind, OutcomeKind::Rejected | OutcomeKind::Failed);
    let mut result = if failed {
        CallToolResult::structured_error(Value::Object(structured))
    } else {
        CallToolResult::structured(Value::Object(structured))
    };
    result.content = vec![rmcp::model::ContentBlock::text(text)];
    // The evidence of a pending decision, as links a client reads (`resources/read`).
    let evidence = full
        .get("pending")
        .and_then(|p| p.get("evidence"))
        .and_then(Value::as_array);
    for path in evidence.into_iter().flatten().filter_map(Value::as_str) {
        let link = json!({
            "type": "resource_link",
            "uri": evidence_uri(&outcome.session_id, path),
            "name": path,
            "description": "Evidence of the pending decision",
        });
        if let Ok(block) = serde_json::from_value(link) {
            result.content.push(block);
        }
    }
    result
}

/// The URI of an evidence file of a session's pending decision.
fn evidence_uri(session: &str, path: &str) -> String {
    format!("{SCHEME}sessions/{session}/evidence/{path}")
}

/// The scheme of the server's resources.
const SCHEME: &str = "archmax://";

/// What a parked session waits for, in a line the calling model can act on.
fn park_line(full: &Value) -> String {
    let id = full.get("sessionId").and_then(Value::as_str).unwrap_or("");
    let Some(park) = full.get("pending") else {
        return String::new();
    };
    let state = park.get("state").and_then(Value::as_str).unwrap_or("");
    if park.get("channel").and_then(Value::as_str) == Some("decision") {
        let options: Vec<String> = park
            .get("transitions")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|t| {
                let to = t.get("to")?.as_str()?;
                Some(match t.get("description").and_then(Value::as_str) {
                    Some(d) => format!("'{to}' ({d})"),
                    None => format!("'{to}'"),
                })
            })
            .collect();
        format!(
            "[session {id} parked at {state}, awaiting a person's decision: {}. A person (an approver) decides it with the 'decide' tool.]",
            options.join(", ")
        )
    } else {
        let reason = park.get("reason").and_then(Value::as_str).unwrap_or("");
        format!(
            "[session {id} parked at {state}, awaiting input: {reason}. Continue it with 'reply' or 'deliver'.]"
        )
    }
}

/// The progress line of an event of the turn, if it is one a caller follows.
fn progress_line(json: &str) -> Option<String> {
    let v: Value = serde_json::from_str(json).ok()?;
    let field = |k: &str| v.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    Some(match v.get("type")?.as_str()? {
        "state-enter" => format!("entered {}", field("state")),
        "tool-called" => format!("called {}", field("tool")),
        "tool-blocked" => format!("refused {}: {}", field("tool"), field("reason")),
        "sub-workflow-start" => format!("started sub-workflow {}", field("workflow")),
        "parked" => format!("parked at {}", field("state")),
        _ => return None,
    })
}

/// A turn that ran: its outcome, and the outcome as the HTTP API answers it (what the answer
/// and the park are read from, serialized once).
struct Turned {
    outcome: Outcome,
    shown: Value,
}

impl McpServer {
    /// Runs `turn` for session `id`, telling the caller its flow as progress notifications
    /// (when it asked for them) and stopping it when the caller cancels the request.
    async fn run_turn<F>(
        &self,
        h: &Harness,
        id: &str,
        arrival: &str,
        context: &RequestContext<RoleServer>,
        turn: F,
    ) -> Result<Turned, ApiError>
    where
        F: std::future::Future<Output = Result<Outcome, archmax_machine::RunError>>,
    {
        let progress = context.meta.get_progress_token().map(|token| {
            let (_, mut rx) = self.state.hub.subscribe(id, self.state.hub.last_seq());
            let peer = context.peer.clone();
            let session = id.to_string();
            tokio::spawn(async move {
                let mut n = 0.0;
                while let Ok(event) = rx.recv().await {
                    if event.session.as_deref() != Some(session.as_str()) {
                        continue;
                    }
                    let Some(line) = progress_line(&event.json) else {
                        continue;
                    };
                    n += 1.0;
                    let mut p = ProgressNotificationParam::new(token.clone(), n);
                    p.message = Some(line);
                    if peer.notify_progress(p).await.is_err() {
                        break;
                    }
                }
            })
        });
        let started = std::time::Instant::now();
        let cancelled = context.ct.clone();
        let turn = std::pin::pin!(turn);
        let mut turn = turn;
        let outcome = tokio::select! {
            out = &mut turn => out,
            () = cancelled.cancelled() => {
                // The caller gave up: stop the turn as Ctrl-C does and let it end there, its
                // last completed step kept (dropping it would leave the session running).
                h.cancel(id);
                turn.await
            }
        };
        if let Some(task) = progress {
            task.abort();
        }
        let outcome = outcome?;
        let shown = self.state.settled(arrival, started, &outcome);
        Ok(Turned { outcome, shown })
    }

    async fn start(
        &self,
        entry: &Entry,
        args: Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ApiError> {
        let h = self.state.harness(&entry.workflow)?;
        let mut vars = args;
        let given = if entry.declares_session {
            None
        } else {
            vars.remove("session")
        };
        let said = if entry.declares_message {
            None
        } else {
            vars.remove("message")
        };
        let id = match given.as_ref().and_then(Value::as_str) {
            Some(id) => {
                // A continued session must run this workflow.
                self.state.harness_for(id, Some(&entry.workflow))?;
                id.to_string()
            }
            None => {
                h.resolve_firing(&archmax_machine::Firing {
                    trigger: Some(&entry.trigger),
                    variables: vars.clone(),
                    session_id: None,
                    session_path: None,
                })?
                .session_id
            }
        };
        let message = match said.as_ref().and_then(Value::as_str) {
            Some(m) => m.to_string(),
            None => crate::sessions::firing_message(&h, &entry.trigger, &vars),
        };
        let input = SendInput {
            message,
            trigger: Some(entry.trigger.clone()),
            variables: vars,
        };
        self.state.metrics.on_request("mcp");
        let turned = self
            .run_turn(&h, &id, "mcp", context, h.send(&id, input))
            .await?;
        let turned = self.ask_decisions(&h, turned, context).await?;
        Ok(answer(&turned, &entry.returns))
    }

    async fn operation(
        &self,
        name: &str,
        args: Map<String, Value>,
        context: &RequestContext<RoleServer>,
    ) -> Result<CallToolResult, ApiError> {
        self.state.metrics.on_request("mcp");
        if name == "sessions" {
            let found = match text_arg(&args, "session") {
                Some(id) => crate::sessions::described(&self.state, &id)?
                    .ok_or_else(|| crate::sessions::no_session(&id))?,
                None => Value::Array(crate::sessions::session_list(
                    &self.state,
                    text_arg(&args, "workflow").as_deref(),
                    text_arg(&args, "status").as_deref(),
                    None,
                    None,
                    args.get("attention").and_then(Value::as_bool) == Some(true),
                )?),
            };
            let wrapped = match found {
                Value::Array(list) => json!({ "sessions": list }),
                one => json!({ "session": one }),
            };
            return Ok(CallToolResult::structured(wrapped));
        }
        let id = required(&args, "session")?;
        let h = self.state.existing(&id)?;
        let turned = match name {
            "decide" => {
                let target = required(&args, "target")?;
                if let Some(who) = self.identity(context) {
                    crate::sessions::check_approver(&h, &id, &who, !self.state.tokens.is_empty())?;
                }
                let comment = text_arg(&args, "comment");
                self.run_turn(
                    &h,
                    &id,
                    "decision",
                    context,
                    h.decide(&id, &target, comment.as_deref()),
                )
                .await?
            }
            "reply" => {
                let message = required(&args, "message")?;
                self.run_turn(&h, &id, "reply", context, h.reply(&id, &message))
                    .await?
            }
            _ => {
                let trigger = required(&args, "trigger")?;
                let variables = match args.get("variables") {
                    Some(Value::Object(m)) => m.clone(),
                    None | Some(Value::Null) => Map::new(),
                    Some(_) => return Err(ApiError::bad_request("'variables' must be an object")),
                };
                let message = text_arg(&args, "message");
                self.run_turn(
                    &h,
                    &id,
                    "delivery",
                    context,
                    h.deliver(&id, &trigger, variables, message.as_deref()),
                )
                .await?
            }
        };
        let turned = self.ask_decisions(&h, turned, context).await?;
        Ok(answer(&turned, &[]))
    }

    /// While `outcome` is parked for a decision that the caller may make and its client can
    /// ask its person (elicitation), asks, decides as answered and runs the turn that follows;
    /// a person who declines or cancels leaves the session parked. The outcome it ends with.
    async fn ask_decisions(
        &self,
        h: &Harness,
        mut turned: Turned,
        context: &RequestContext<RoleServer>,
    ) -> Result<Turned, ApiError> {
        let asks = context
            .peer
            .peer_info()
            .is_some_and(|info| info.capabilities.elicitation.is_some());
        // A bound on decisions asked in one call (a workflow may park again after each).
        for _ in 0..MAX_ASKED_DECISIONS {
            if !asks || turned.outcome.kind != OutcomeKind::Parked {
                break;
            }
            let Some(park) = turned
                .shown
                .get("pending")
                .filter(|p| p.get("channel").and_then(Value::as_str) == Some("decision"))
            else {
                break;
            };
            let id = turned.outcome.session_id.clone();
            if let Some(who) = self.identity(context)
                && crate::sessions::check_approver(h, &id, &who, !self.state.tokens.is_empty())
                    .is_err()
            {
                break;
            }
            let Some(params) = decision_question(park, &turned.outcome.reply) else {
                break;
            };
            let Ok(asked) = context.peer.create_elicitation(params).await else {
                break;
            };
            let content = asked.content.unwrap_or(Value::Null);
            let Some(target) = content
                .get("target")
                .and_then(Value::as_str)
                .map(str::to_string)
                .filter(|_| asked.action == ElicitationAction::Accept)
            else {
                break;
            };
            let comment = text_arg(content.as_object().unwrap_or(&Map::new()), "comment");
            turned = self
                .run_turn(
                    h,
                    &id,
                    "decision",
                    context,
                    h.decide(&id, &target, comment.as_deref()),
                )
                .await?;
        }
        Ok(turned)
    }
}

/// The most decisions one call asks its client's person for.
const MAX_ASKED_DECISIONS: usize = 8;

/// The form asking the person at the client for a pending decision: the options as an enum
/// (titled by their descriptions) and an optional comment.
fn decision_question(park: &Value, reply: &str) -> Option<ElicitRequestParams> {
    let options: Vec<&Value> = park.get("transitions")?.as_array()?.iter().collect();
    let one_of: Vec<Value> = options
        .iter()
        .filter_map(|t| {
            let to = t.get("to")?.as_str()?;
            let title = t.get("description").and_then(Value::as_str).unwrap_or(to);
            Some(json!({ "const": to, "title": title }))
        })
        .collect();
    if one_of.is_empty() {
        return None;
    }
    let state = park.get("state").and_then(Value::as_str).unwrap_or("");
    let title = park.get("title").and_then(Value::as_str).unwrap_or(state);
    let mut message = format!("Decide: {title}");
    if !reply.trim().is_empty() {
        message.push_str(&format!("\n\nThe agent says: {reply}"));
    }
    if let Some(evidence) = park.get("evidence").and_then(Value::as_array) {
        let paths: Vec<&str> = evidence.iter().filter_map(Value::as_str).collect();
        if !paths.is_empty() {
            message.push_str(&format!("\n\nEvidence: {}", paths.join(", ")));
        }
    }
    serde_json::from_value(json!({
        "mode": "form",
        "message": message,
        "requestedSchema": {
            "type": "object",
            "properties": {
                "target": { "type": "string", "title": "Decision", "oneOf": one_of },
                "comment": { "type": "string", "title": "Comment" },
            },
            "required": ["target"],
        },
    }))
    .ok()
}

impl ServerHandler for McpServer {
    fn get_info(&self) -> InitializeResult {
        let caps = ServerCapabilities::builder()
            .enable_tools()
            .enable_resources()
            .build();
        let mut info = InitializeResult::new(caps)
            .with_instructions("Each workflow tool runs one governed turn of a workflow of this workspace; the workflow, not the caller, decides what its agent may do. A session that parks for a person is decided with 'decide' by one of the state's approvers.");
        info.server_info = Implementation::new("archmax", env!("CARGO_PKG_VERSION"));
        info
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(
            self.tools.iter().map(|(t, _)| t.clone()).collect(),
        ))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tools
            .iter()
            .find(|(t, _)| t.name == name)
            .map(|(t, _)| t.clone())
    }

    async fn list_resources(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourcesResult, ErrorData> {
        let diagrams: Vec<Value> = self
            .state
            .workflows
            .keys()
            .map(|slug| {
                json!({
                    "uri": format!("{SCHEME}workflows/{slug}/diagram"),
                    "name": format!("{slug} diagram"),
                    "description": format!("The workflow '{slug}' as a Mermaid flowchart."),
                    "mimeType": "text/plain",
                })
            })
            .collect();
        serde_json::from_value(json!({ "resources": diagrams }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn list_resource_templates(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListResourceTemplatesResult, ErrorData> {
        let templates = json!({ "resourceTemplates": [
            { "uriTemplate": format!("{SCHEME}sessions/{{session}}/transcript"), "name": "transcript", "description": "A session's transcript (the chat messages, as JSON).", "mimeType": "application/json" },
            { "uriTemplate": format!("{SCHEME}sessions/{{session}}/trail"), "name": "trail", "description": "A session's summary and trail: the states it entered, how and why (JSON).", "mimeType": "application/json" },
            { "uriTemplate": format!("{SCHEME}sessions/{{session}}/evidence/{{path}}"), "name": "evidence", "description": "An evidence file of a session's pending decision." },
        ] });
        serde_json::from_value(templates)
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))
    }

    async fn read_resource(
        &self,
        request: ReadResourceRequestParams,
        _context: RequestContext<RoleServer>,
    ) -> Result<ReadResourceResponse, ErrorData> {
        let uri = request.uri;
        let contents = self
            .resource(&uri)
            .map_err(|e| ErrorData::resource_not_found(format!("{uri}: {}", e.message()), None))?;
        let result: ReadResourceResult = serde_json::from_value(json!({ "contents": [contents] }))
            .map_err(|e| ErrorData::internal_error(e.to_string(), None))?;
        Ok(result.into())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let Some((_, entry)) = self.tools.iter().find(|(t, _)| t.name == request.name) else {
            return Err(ErrorData::invalid_params(
                format!("no tool '{}'", request.name),
                None,
            ));
        };
        let args = request.arguments.unwrap_or_default();
        let done = match entry {
            Some(entry) => self.start(entry, args, &context).await,
            None => self.operation(&request.name, args, &context).await,
        };
        Ok(done.unwrap_or_else(|e| refusal(&e)).into())
    }
}

impl McpServer {
    /// The contents of resource `uri` (`archmax://workflows/<slug>/diagram`,
    /// `archmax://sessions/<id>/transcript|trail|evidence/<path>`), read with the same checks
    /// as the HTTP routes that show them.
    fn resource(&self, uri: &str) -> Result<Value, ApiError> {
        let unknown = || ApiError::bad_request(format!("no resource '{uri}'"));
        let rest = uri.strip_prefix(SCHEME).ok_or_else(unknown)?;
        let text = |mime: &str, text: String| json!({ "uri": uri, "mimeType": mime, "text": text });
        if let Some(slug) = rest
            .strip_prefix("workflows/")
            .and_then(|r| r.strip_suffix("/diagram"))
        {
            let h = self.state.harness(slug)?;
            let diagram = archmax_spec::graph::Graph::of(h.spec())
                .render(archmax_spec::graph::Format::Mermaid);
            return Ok(text("text/plain", diagram));
        }
        let (id, what) = rest
            .strip_prefix("sessions/")
            .and_then(|r| r.split_once('/'))
            .ok_or_else(unknown)?;
        match what {
            "transcript" => {
                let h = self.state.existing(id)?;
                let messages = Value::Array(h.session_messages(id)?);
                Ok(text("application/json", messages.to_string()))
            }
            "trail" => {
                let shown = crate::sessions::described(&self.state, id)?
                    .ok_or_else(|| crate::sessions::no_session(id))?;
                Ok(text("application/json", shown.to_string()))
            }
            _ => {
                let path = what.strip_prefix("evidence/").ok_or_else(unknown)?;
                let (bytes, kind) = crate::sessions::evidence_file(&self.state, id, path)?;
                let mime = kind.split(';').next().unwrap_or(kind);
                Ok(match String::from_utf8(bytes) {
                    Ok(t) if !mime.starts_with("image/") => text(mime, t),
                    Ok(t) => json!({ "uri": uri, "mimeType": mime, "blob": base64(t.as_bytes()) }),
                    Err(e) => {
                        json!({ "uri": uri, "mimeType": mime, "blob": base64(e.as_bytes()) })
                    }
                })
            }
        }
    }
}

/// Standard base64 with padding (a resource's binary contents).
fn base64(bytes: &[u8]) -> String {
    use base64::Engine as _;
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

/// Serves `state` over this process's stdin and stdout until the client closes them.
pub(crate) async fn stdio(state: Arc<AppState>) -> std::io::Result<()> {
    use rmcp::ServiceExt;
    let server = McpServer::new(state, true)
        .serve(rmcp::transport::io::stdio())
        .await
        .map_err(|e| std::io::Error::other(e.to_string()))?;
    server
        .waiting()
        .await
        .map(|_| ())
        .map_err(|e| std::io::Error::other(e.to_string()))
}

/// The streamable-HTTP service of `/mcp` (behind the server's bearer tokens). Without tokens
/// the server listens on loopback only, and `/mcp` also refuses a `Host` that is not a
/// loopback name (DNS rebinding: a page in the user's browser reaching a local server); with
/// tokens any host may be served, as every request must carry one.
pub(crate) fn http(
    state: Arc<AppState>,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    McpServer,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    let mut config = rmcp::transport::streamable_http_server::StreamableHttpServerConfig::default();
    if !state.tokens.is_empty() {
        config = config.disable_allowed_hosts();
    }
    let server = McpServer::new(state, false);
    rmcp::transport::streamable_http_server::StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::default(),
        config,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn progress_lines_name_what_happened() {
        assert_eq!(
            progress_line(r#"{"type":"state-enter","state":"classify"}"#).as_deref(),
            Some("entered classify")
        );
        assert_eq!(
            progress_line(r#"{"type":"tool-blocked","tool":"x","reason":"no"}"#).as_deref(),
            Some("refused x: no")
        );
        assert_eq!(
            progress_line(r#"{"type":"agent-text-delta","text":"a"}"#),
            None
        );
    }

    #[test]
    fn a_decision_park_names_its_options_and_the_tool_that_decides() {
        let full = json!({
            "sessionId": "s-1",
            "pending": { "channel": "decision", "state": "review", "transitions": [
                { "to": "approved", "description": "Approve." }, { "to": "draft" }
            ] },
        });
        assert_eq!(
            park_line(&full),
            "[session s-1 parked at review, awaiting a person's decision: 'approved' (Approve.), 'draft'. A person (an approver) decides it with the 'decide' tool.]"
        );
    }
}

//! One live connection to a server: the rmcp client service, the child process
//! behind a stdio server, the tool list it last gave.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use reqwest::header::{HeaderName, HeaderValue};
use rmcp::ServiceExt;
use rmcp::service::{ClientInitializeError, Peer, RoleClient, RunningService};
use rmcp::transport::DynamicTransportError;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::async_rw::AsyncRwTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

use super::handler::{Handler, HandlerState};
use super::process::{self, KillSwitch, Process, Spawn};
use super::tools::ServerTools;
use super::{McpEvent, Shared};
use crate::config::{HttpTransport, ServerEntry, StdioTransport, Transport};
use crate::error::McpError;
use crate::secret::Redactor;

/// A server has at least this long to complete its handshake (its `timeoutMs`
/// when longer): `npx` may be downloading it.
const MIN_START_TIMEOUT: Duration = Duration::from_secs(60);
/// How long a closed stdio server gets to exit by itself before it is killed.
const EXIT_GRACE: Duration = Duration::from_secs(2);

pub(crate) struct Connection {
    server: String,
    service: RunningService<RoleClient, Handler>,
    pub(crate) handler: Arc<HandlerState>,
    process: Option<Process>,
    redactor: Redactor,
    /// The tool list and the generation of `tools/list_changed` it was read at.
    pub(crate) tools: tokio::sync::Mutex<Option<(u64, Arc<ServerTools>)>>,
    /// Its end was reported (once, whoever noticed it first).
    ended: AtomicBool,
    /// Closed on purpose (shutdown): its end is no news.
    closing: AtomicBool,
}

impl Connection {
    /// Starts the server and completes the MCP handshake.
    /// `spawned` sees a stdio server's kill switch as soon as the child runs, so
    /// a pool dropped mid-start can still end it.
    pub(crate) async fn open(
        entry: &ServerEntry,
        shared: &Arc<Shared>,
        spawned: &(dyn Fn(&KillSwitch) + Send + Sync),
    ) -> Result<Arc<Connection>, McpError> {
        let limit = entry.timeout.max(MIN_START_TIMEOUT);
        match &entry.transport {
            Transport::Stdio(stdio) => Self::open_stdio(entry, stdio, shared, limit, spawned).await,
            Transport::Http(http) => Self::open_http(entry, http, shared, limit).await,
        }
    }

    async fn open_stdio(
        entry: &ServerEntry,
        stdio: &StdioTransport,
        shared: &Arc<Shared>,
        limit: Duration,
        spawned: &(dyn Fn(&KillSwitch) + Send + Sync),
    ) -> Result<Arc<Connection>, McpError> {
        let redactor = entry.redactor();
        let start_error = |message: String| McpError::Start {
            server: entry.name.clone(),
            message: redactor.redact(&message),
        };
        let how = Spawn {
            root: &shared.root,
            inherit: &shared.inherit_env,
        };
        let (process, stdout, stdin) = Process::spawn(stdio, &how)
            .map_err(|e| start_error(format!("cannot run '{}': {e}", stdio.command)))?;
        spawned(&process.switch);
        let handler = Handler::new(&entry.name, shared.clone());
        let state = handler.state.clone();
        let transport = AsyncRwTransport::new_client(stdout, stdin);
        let service = match tokio::time::timeout(limit, handler.serve(transport)).await {
            Ok(Ok(service)) => service,
            Ok(Err(e)) => {
                let exit = process.exited(Duration::from_millis(500)).await;
                let what = match exit {
                    Some(_) => format!(
                        "it {} before completing the MCP handshake",
                        process::describe(exit)
                    ),
                    None => handshake_failure(&e),
                };
                return Err(start_error(with_stderr(what, &process, redactor)));
            }
            Err(_) => {
                return Err(start_error(with_stderr(
                    format!(
                        "it did not complete the MCP handshake within {} s",
                        limit.as_secs()
                    ),
                    &process,
                    redactor,
                )));
            }
        };
        Ok(Arc::new(Connection {
            server: entry.name.clone(),
            service,
            handler: state,
            process: Some(process),
            redactor: redactor.clone(),
            tools: tokio::sync::Mutex::new(None),
            ended: AtomicBool::new(false),
            closing: AtomicBool::new(false),
        }))
    }

    async fn open_http(
        entry: &ServerEntry,
        http: &HttpTransport,
        shared: &Arc<Shared>,
        limit: Duration,
    ) -> Result<Arc<Connection>, McpError> {
        let redactor = entry.redactor();
        let start_error = |message: String| McpError::Start {
            server: entry.name.clone(),
            message: redactor.redact(&message),
        };
        let client = shared.http_client().map_err(start_error)?;
        let mut headers = HashMap::new();
        for (name, value) in &http.headers {
            // The config checked both; a failure here is a header added since.
            let name = HeaderName::from_bytes(name.as_bytes())
                .map_err(|_| start_error(format!("'{name}' is not a valid header name")))?;
            let value = HeaderValue::from_str(value.expose())
                .map_err(|_| start_error(format!("header '{name}' has an invalid value")))?;
            headers.insert(name, value);
        }
        let config =
            StreamableHttpClientTransportConfig::with_uri(http.url.clone()).custom_headers(headers);
        let transport = StreamableHttpClientTransport::with_client(client, config);
        let handler = Handler::new(&entry.name, shared.clone());
        let state = handler.state.clone();
        let service = match tokio::time::timeout(limit, handler.serve(transport)).await {
            Ok(Ok(service)) => service,
            Ok(Err(e)) => return Err(start_error(handshake_failure(&e))),
            Err(_) => {
                return Err(start_error(format!(
                    "it did not complete the MCP handshake within {} s",
                    limit.as_secs()
                )));
            }
        };
        Ok(Arc::new(Connection {
            server: entry.name.clone(),
            service,
            handler: state,
            process: None,
            redactor: redactor.clone(),
            tools: tokio::sync::Mutex::new(None),
            ended: AtomicBool::new(false),
            closing: AtomicBool::new(false),
        }))
    }

    pub(crate) fn peer(&self) -> &Peer<RoleClient> {
        self.service.peer()
    }

    pub(crate) fn redactor(&self) -> &Redactor {
        &self.redactor
    }

    /// The child's pid, for a stdio server.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.process.as_ref().and_then(|p| p.switch.pid())
    }

    /// Watches a stdio server's child for its end.
    pub(crate) fn exit_watch(&self) -> Option<tokio::sync::watch::Receiver<Option<process::Exit>>> {
        self.process.as_ref().map(Process::exit_watch)
    }

    /// True while requests can reach the server.
    pub(crate) fn is_alive(&self) -> bool {
        !self.peer().is_transport_closed()
            && !self.service.is_closed()
            && self.process.as_ref().is_none_or(|p| p.exit().is_none())
    }

    /// How the server ended, for a message: `exited with status 1; its stderr
    /// ends: ...`. Waits a moment for the child's status.
    pub(crate) async fn end_message(&self) -> String {
        match &self.process {
            Some(p) => {
                let exit = p.exited(Duration::from_millis(500)).await;
                with_stderr(process::describe(exit), p, &self.redactor)
            }
            None => "closed its connection".to_string(),
        }
    }

    /// Reports the server's end once (the first caller to notice it), unless
    /// the pool closed it.
    pub(crate) async fn report_end(&self, shared: &Shared) -> String {
        let message = self.end_message().await;
        if !self.closing.load(Ordering::Acquire) && !self.ended.swap(true, Ordering::AcqRel) {
            shared.emit(McpEvent::Exited {
                server: self.server.clone(),
                message: message.clone(),
            });
        }
        message
    }

    /// Kills the child (if any) and stops the service, at once.
    pub(crate) fn kill_now(&self) {
        self.closing.store(true, Ordering::Release);
        if let Some(p) = &self.process {
            p.switch.kill();
        }
        self.service.cancellation_token().cancel();
    }

    /// Closes the connection: the service stops (for a stdio server its stdin
    /// closes, the MCP way to ask it to exit), the child gets a moment to exit,
    /// then it is killed.
    pub(crate) async fn close(&self) {
        self.closing.store(true, Ordering::Release);
        self.service.cancellation_token().cancel();
        if let Some(p) = &self.process {
            if p.exited(EXIT_GRACE).await.is_none() {
                p.switch.kill();
            }
            let _ = p.exited(EXIT_GRACE).await;
        }
    }
}

/// Why a handshake failed, without rmcp's type names.
fn handshake_failure(e: &ClientInitializeError) -> String {
    match e {
        ClientInitializeError::TransportError { error, .. } => {
            format!("cannot reach it: {}", transport_text(error))
        }
        other => format!("the MCP handshake failed: {other}"),
    }
}

/// A transport error and its causes, `a: b: c` (rmcp's own text names the
/// transport's Rust type).
pub(crate) fn transport_text(e: &DynamicTransportError) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut next: Option<&(dyn std::error::Error + 'static)> = Some(e.error.as_ref());
    while let Some(err) = next {
        let text = err.to_string();
        if !parts.iter().any(|p| p.contains(&text)) {
            parts.push(text);
        }
        next = err.source();
    }
    parts.join(": ")
}

/// `what`, followed by the end of the child's stderr when it wrote any.
fn with_stderr(what: String, process: &Process, redactor: &Redactor) -> String {
    let tail = process.stderr.quote(redactor);
    if tail.is_empty() {
        what
    } else {
        format!("{what}; its stderr ends:\n{tail}")
    }
}

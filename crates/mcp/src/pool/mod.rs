//! The pool: the configured servers, shared by every session of a process.
//!
//! A server starts on first use (its tools listed or a tool called), once
//! however many callers ask at the same moment; its tool list is read once and
//! again after it sends `notifications/tools/list_changed`. A stdio server whose
//! process died is started again by the next call; the calls it cut short fail
//! with its exit status and the end of its stderr, and its end is reported once
//! ([`McpEvent::Exited`]). [`McpPool::shutdown`], or dropping the pool, ends
//! every child.

mod call;
mod connection;
mod handler;
mod process;
mod server;
mod tools;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use serde_json::Value;
use tokio_util::sync::CancellationToken;

pub use tools::{ServerTools, SkippedTool, ToolInfo};

use crate::config::{McpConfig, ServerEntry};
use crate::error::McpError;
use crate::host::McpHost;
use crate::names;
use crate::result::CallResult;
use server::Server;

/// The progress of a call, as the server reports it.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Grows with every notification.
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// The server's words, when it gives some.
    pub message: Option<String>,
}

/// A progress callback. Called on a tokio worker, in increasing `progress`
/// (a notification that arrives after a later one is dropped).
pub type ProgressFn = Arc<dyn Fn(Progress) + Send + Sync>;

/// An event callback.
pub type EventFn = Arc<dyn Fn(McpEvent) + Send + Sync>;

/// What the pool reports about its servers. No event carries a secret.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum McpEvent {
    /// A server started and completed the MCP handshake.
    Started {
        /// The server.
        server: String,
        /// Its child's pid, for a stdio server.
        pid: Option<u32>,
    },
    /// A server started again after it had ended.
    Restarted {
        /// The server.
        server: String,
        /// Its new child's pid, for a stdio server.
        pid: Option<u32>,
    },
    /// A start failed.
    Failed {
        /// The server.
        server: String,
        /// Why, as the failing calls were told.
        message: String,
    },
    /// A running server ended without the pool asking (its process exited, its
    /// connection closed). Reported once; the next call starts it again.
    Exited {
        /// The server.
        server: String,
        /// How (`exited with status 1; its stderr ends: ...`).
        message: String,
    },
    /// The server sent `notifications/tools/list_changed`; its tools are read
    /// again when next needed.
    ToolsChanged {
        /// The server.
        server: String,
    },
    /// A tool of the server is not offered (its name, mapped, collides or is too
    /// long). Reported once per tool.
    ToolSkipped {
        /// The server.
        server: String,
        /// The tool's name as the server lists it.
        tool: String,
        /// Why.
        reason: String,
    },
}

/// How a pool runs its servers.
#[derive(Clone)]
pub struct PoolOptions {
    /// The workspace root: a server's relative `cwd` is taken from it, and it is
    /// the working directory of a server without one.
    pub root: PathBuf,
    /// The variables a stdio server gets from the pool's own environment, besides
    /// those its entry declares (an entry's own value wins). By default `PATH` and
    /// `HOME` (and, on Windows, the few a process needs to start: `SYSTEMROOT`,
    /// `TEMP`, ...). Nothing else leaks: the inherited environment is cleared.
    pub inherit_env: Vec<String>,
    /// Answers elicitation and sampling requests; without one the pool
    /// advertises neither capability and declines both.
    pub host: Option<Arc<dyn McpHost>>,
    /// The roots (`file://` URIs) to answer `roots/list` with; with `None` the
    /// pool does not advertise the capability and answers an empty list.
    pub roots: Option<Vec<String>>,
    /// Called with every [`McpEvent`], on whichever task saw it.
    pub on_event: Option<EventFn>,
    /// The `clientInfo.name` the servers see.
    pub client_name: String,
}

impl PoolOptions {
    /// The defaults for a workspace at `root`.
    pub fn new(root: impl Into<PathBuf>) -> PoolOptions {
        let mut inherit_env = vec!["PATH".to_string(), "HOME".to_string()];
        if cfg!(windows) {
            inherit_env.extend(
                [
                    "SYSTEMROOT",
                    "SYSTEMDRIVE",
                    "WINDIR",
                    "TEMP",
                    "TMP",
                    "USERPROFILE",
                    "APPDATA",
                    "LOCALAPPDATA",
                    "PATHEXT",
                    "COMSPEC",
                ]
                .map(String::from),
            );
        }
        PoolOptions {
            root: root.into(),
            inherit_env,
            host: None,
            roots: None,
            on_event: None,
            client_name: "archmax".to_string(),
        }
    }
}

/// How one call runs.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// The limit of this call, instead of the server's `timeoutMs`. It counts
    /// from the call, the server's start and tool listing included.
    pub timeout: Option<Duration>,
    /// Cancels the call; the server is sent `notifications/cancelled`.
    pub cancel: Option<CancellationToken>,
    /// Receives the server's progress notifications for this call (a progress
    /// token is sent with every call).
    pub on_progress: Option<ProgressFn>,
}

/// What every server of a pool shares.
pub(crate) struct Shared {
    root: PathBuf,
    inherit_env: Vec<String>,
    host: Option<Arc<dyn McpHost>>,
    roots: Option<Vec<String>>,
    on_event: Option<EventFn>,
    client_name: String,
    http: OnceLock<Result<reqwest::Client, String>>,
}

impl Shared {
    fn emit(&self, event: McpEvent) {
        if let Some(f) = &self.on_event {
            f(event);
        }
    }

    /// One HTTP client for every remote server: rustls with ring and the webpki
    /// roots (as the workspace's own reqwest), no redirects followed (a redirect
    /// would replay the headers elsewhere).
    fn http_client(&self) -> Result<reqwest::Client, String> {
        self.http.get_or_init(build_http_client).clone()
    }
}

fn build_http_client() -> Result<reqwest::Client, String> {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut roots = rustls::RootCertStore::empty();
    roots.extend(webpki_roots::TLS_SERVER_ROOTS.iter().cloned());
    let tls = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("cannot set up TLS: {e}"))?
        .with_root_certificates(roots)
        .with_no_client_auth();
    reqwest::Client::builder()
        .tls_backend_preconfigured(tls)
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .map_err(|e| format!("cannot set up the HTTP client: {e}"))
}

/// The configured servers, shared by every session of a process. Built once
/// ([`McpPool::new`]); every method takes `&self`.
pub struct McpPool {
    servers: Vec<Arc<Server>>,
    by_name: HashMap<String, usize>,
}

impl McpPool {
    /// A pool of `config`'s servers. Nothing starts until it is used.
    pub fn new(config: McpConfig, options: PoolOptions) -> Arc<McpPool> {
        let shared = Arc::new(Shared {
            root: options.root,
            inherit_env: options.inherit_env,
            host: options.host,
            roots: options.roots,
            on_event: options.on_event,
            client_name: options.client_name,
            http: OnceLock::new(),
        });
        let servers: Vec<Arc<Server>> = config
            .servers
            .into_iter()
            .map(|e| Arc::new(Server::new(e, shared.clone())))
            .collect();
        let by_name = servers
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name().to_string(), i))
            .collect();
        Arc::new(McpPool { servers, by_name })
    }

    fn server(&self, name: &str) -> Result<&Arc<Server>, McpError> {
        self.by_name
            .get(name)
            .and_then(|&i| self.servers.get(i))
            .ok_or_else(|| McpError::UnknownServer {
                server: name.to_string(),
            })
    }

    /// The servers' names, in declaration order.
    pub fn server_names(&self) -> Vec<&str> {
        self.servers.iter().map(|s| s.name()).collect()
    }

    /// A server's configuration.
    pub fn entry(&self, server: &str) -> Option<&ServerEntry> {
        self.server(server).ok().map(|s| &s.entry)
    }

    /// A server's tools (starting it if needed).
    pub async fn tools(&self, server: &str) -> Result<Arc<ServerTools>, McpError> {
        let s = self.server(server)?;
        let conn = s.connection().await?;
        s.tools(&conn).await
    }

    /// The server and the server's own tool name behind a full name
    /// `mcp__<server>__<tool>`, from the tool lists read so far (`None` for a
    /// server not started yet; see [`McpPool::resolve`]).
    pub fn parse_tool_name(&self, name: &str) -> Option<(String, String)> {
        let (server, _) = names::split_tool_name(name)?;
        let s = self.server(server).ok()?;
        s.tool_for(name).map(|tool| (server.to_string(), tool))
    }

    /// Like [`McpPool::parse_tool_name`], reading the server's tools (starting
    /// it) when they have not been read yet. `Ok(None)`: no such tool.
    pub async fn resolve(&self, name: &str) -> Result<Option<(String, String)>, McpError> {
        if let Some(found) = self.parse_tool_name(name) {
            return Ok(Some(found));
        }
        let Some((server, _)) = names::split_tool_name(name) else {
            return Ok(None);
        };
        if self.server(server).is_err() {
            return Ok(None);
        }
        let tools = self.tools(server).await?;
        Ok(tools
            .by_name(name)
            .map(|t| (server.to_string(), t.tool.clone())))
    }

    /// Calls `tool` (the server's own name for it) with `args` (a JSON object;
    /// `null` is `{}`), after checking them against its `inputSchema`.
    pub async fn call(
        &self,
        server: &str,
        tool: &str,
        args: Value,
        opts: CallOptions,
    ) -> Result<CallResult, McpError> {
        let s = self.server(server)?;
        call::call(s, tool, args, opts).await
    }

    /// The running stdio children: server name and pid.
    pub fn pids(&self) -> Vec<(String, u32)> {
        self.servers
            .iter()
            .filter_map(|s| s.pid().map(|p| (s.name().to_string(), p)))
            .collect()
    }

    /// Ends every server: a stdio server's stdin is closed (the MCP way to ask
    /// it to exit), it gets two seconds, then its process group is killed. The
    /// pool refuses calls afterwards ([`McpError::Closed`]).
    pub async fn shutdown(&self) {
        futures_util::future::join_all(self.servers.iter().map(|s| s.shutdown())).await;
    }
}

impl Drop for McpPool {
    /// Kills every child's process group at once (no runtime needed).
    fn drop(&mut self) {
        for s in &self.servers {
            s.close_now();
        }
    }
}

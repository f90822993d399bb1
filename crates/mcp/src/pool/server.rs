//! One configured server's life in the pool: idle until first used, started
//! once however many callers wait, restarted by the first call after it died.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared as SharedFuture};
use rmcp::service::ServiceError;

use super::connection::Connection;
use super::process::KillSwitch;
use super::tools::ServerTools;
use super::{McpEvent, Shared};
use crate::config::ServerEntry;
use crate::error::McpError;

type Starting = SharedFuture<BoxFuture<'static, Result<Arc<Connection>, McpError>>>;

enum State {
    Idle,
    Starting(Starting),
    Running(Arc<Connection>),
    Closed,
}

pub(crate) struct Server {
    pub(crate) entry: ServerEntry,
    pub(crate) shared: Arc<Shared>,
    state: Mutex<State>,
    /// The child of a start under way, so closing the pool can end it.
    starting: Mutex<Option<KillSwitch>>,
    /// Full tool name → the server's own, from the last tool list.
    names: RwLock<HashMap<String, String>>,
    /// Skipped tools already reported.
    reported: Mutex<HashSet<String>>,
    /// It has run before: the next start is a restart.
    has_run: AtomicBool,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl Server {
    pub(crate) fn new(entry: ServerEntry, shared: Arc<Shared>) -> Server {
        Server {
            entry,
            shared,
            state: Mutex::new(State::Idle),
            starting: Mutex::new(None),
            names: RwLock::new(HashMap::new()),
            reported: Mutex::new(HashSet::new()),
            has_run: AtomicBool::new(false),
        }
    }

    pub(crate) fn name(&self) -> &str {
        &self.entry.name
    }

    /// A live connection: the running one, or the one a start under way gives,
    /// or a new start (a restart when the last connection died).
    pub(crate) async fn connection(self: &Arc<Self>) -> Result<Arc<Connection>, McpError> {
        let (start, dead) = {
            let mut st = lock(&self.state);
            match &*st {
                State::Closed => return Err(McpError::Closed),
                State::Running(c) if c.is_alive() => return Ok(c.clone()),
                State::Running(c) => {
                    let dead = c.clone();
                    (self.begin_start(&mut st), Some(dead))
                }
                State::Starting(f) => (f.clone(), None),
                State::Idle => (self.begin_start(&mut st), None),
            }
        };
        if let Some(dead) = dead {
            dead.report_end(&self.shared).await;
            dead.kill_now();
        }
        start.await
    }

    fn begin_start(self: &Arc<Self>, st: &mut State) -> Starting {
        let this = self.clone();
        // Its own task: a caller that gives up waiting does not abort the start
        // others wait for.
        let task = tokio::spawn(async move { this.start().await });
        let server = self.entry.name.clone();
        let start = async move {
            task.await.unwrap_or_else(|e| {
                Err(McpError::Start {
                    server,
                    message: format!("the start task ended: {e}"),
                })
            })
        }
        .boxed()
        .shared();
        *st = State::Starting(start.clone());
        start
    }

    async fn start(self: Arc<Self>) -> Result<Arc<Connection>, McpError> {
        let this = self.clone();
        let spawned = move |k: &KillSwitch| *lock(&this.starting) = Some(k.clone());
        let result = Connection::open(&self.entry, &self.shared, &spawned).await;
        *lock(&self.starting) = None;
        {
            let mut st = lock(&self.state);
            if matches!(*st, State::Closed) {
                if let Ok(c) = &result {
                    c.kill_now();
                }
                return Err(McpError::Closed);
            }
            *st = match &result {
                Ok(c) => State::Running(c.clone()),
                Err(_) => State::Idle,
            };
        }
        match &result {
            Ok(c) => {
                let restarted = self.has_run.swap(true, Ordering::AcqRel);
                let server = self.entry.name.clone();
                let pid = c.pid();
                self.shared.emit(if restarted {
                    McpEvent::Restarted { server, pid }
                } else {
                    McpEvent::Started { server, pid }
                });
                self.watch(c);
            }
            Err(e) => self.shared.emit(McpEvent::Failed {
                server: self.entry.name.clone(),
                message: e.to_string(),
            }),
        }
        result
    }

    /// Reports a stdio server's exit when it happens, not at the next call.
    fn watch(&self, conn: &Arc<Connection>) {
        let Some(mut exit) = conn.exit_watch() else {
            return;
        };
        let weak = Arc::downgrade(conn);
        let shared = self.shared.clone();
        tokio::spawn(async move {
            let _ = exit.wait_for(Option::is_some).await;
            if let Some(conn) = weak.upgrade() {
                conn.report_end(&shared).await;
            }
        });
    }

    /// The tool list, read once per generation of `tools/list_changed`.
    pub(crate) async fn tools(
        self: &Arc<Self>,
        conn: &Connection,
    ) -> Result<Arc<ServerTools>, McpError> {
        let mut cache = conn.tools.lock().await;
        let generation = conn.handler.tools_generation.load(Ordering::Acquire);
        if let Some((g, tools)) = &*cache
            && *g == generation
        {
            return Ok(tools.clone());
        }
        let listed = match conn.peer().list_all_tools().await {
            Ok(listed) => listed,
            Err(e) => return Err(self.failure(e, conn).await),
        };
        let tools = Arc::new(ServerTools::build(&self.entry.name, listed));
        self.learn(&tools);
        *cache = Some((generation, tools.clone()));
        Ok(tools)
    }

    /// Takes in a new tool list: the name table, and skipped tools reported once.
    fn learn(&self, tools: &ServerTools) {
        let table = tools
            .tools
            .iter()
            .map(|t| (t.name.clone(), t.tool.clone()))
            .collect();
        *self.names.write().unwrap_or_else(PoisonError::into_inner) = table;
        let mut reported = lock(&self.reported);
        for s in &tools.skipped {
            if reported.insert(s.tool.clone()) {
                self.shared.emit(McpEvent::ToolSkipped {
                    server: self.entry.name.clone(),
                    tool: s.tool.clone(),
                    reason: s.reason.clone(),
                });
            }
        }
    }

    /// The server's own name for the full tool name `name`, from the last list.
    pub(crate) fn tool_for(&self, name: &str) -> Option<String> {
        self.names
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .get(name)
            .cloned()
    }

    /// An rmcp error as the pool's. A closed transport means the server went
    /// away: that is reported once and named with its exit and stderr.
    pub(crate) async fn failure(&self, e: ServiceError, conn: &Connection) -> McpError {
        let server = self.entry.name.clone();
        let redact = |s: &str| conn.redactor().redact(s);
        match e {
            ServiceError::McpError(data) => McpError::Server {
                server,
                code: data.code.0,
                message: redact(&data.message),
            },
            ServiceError::TransportClosed => self.ended(conn).await,
            ServiceError::TransportSend(_) if !conn.is_alive() => self.ended(conn).await,
            ServiceError::TransportSend(e) => McpError::Transport {
                server,
                message: redact(&super::connection::transport_text(&e)),
            },
            other => McpError::Protocol {
                server,
                message: redact(&other.to_string()),
            },
        }
    }

    /// The error of a call the server's end cut short (its end reported once).
    pub(crate) async fn ended(&self, conn: &Connection) -> McpError {
        McpError::Exited {
            server: self.entry.name.clone(),
            message: conn.report_end(&self.shared).await,
        }
    }

    /// The running child's pid.
    pub(crate) fn pid(&self) -> Option<u32> {
        match &*lock(&self.state) {
            State::Running(c) => c.pid(),
            _ => None,
        }
    }

    /// Closes the server for good: gracefully (stdin closed, a moment to exit,
    /// then killed).
    pub(crate) async fn shutdown(&self) {
        let running = self.close_state();
        if let Some(c) = running {
            c.close().await;
        }
    }

    /// Closes the server for good, at once, without waiting (for `Drop`).
    pub(crate) fn close_now(&self) {
        if let Some(c) = self.close_state() {
            c.kill_now();
        }
    }

    fn close_state(&self) -> Option<Arc<Connection>> {
        if let Some(k) = lock(&self.starting).take() {
            k.kill();
        }
        match std::mem::replace(&mut *lock(&self.state), State::Closed) {
            State::Running(c) => Some(c),
            _ => None,
        }
    }
}

//! MCP tools in a harness: the workspace's servers (`.mcp.json`, or a host's `mcpServers`)
//! in one [`McpPool`] every harness of a process shares, their tools offered where a state
//! grants them (`mcp__<server>__<tool>`, or `mcp__<server>` for all of a server's) and each
//! call governed by the kernel exactly as a host tool's, its declared path arguments under
//! the zones and mounts.
//!
//! A server starts when a state that grants one of its tools first needs the list (its
//! tools' definitions for the model), or at the first call; the list is kept by the pool and
//! read again when the server says it changed. A call runs under the turn's cancel switch and
//! the state's time left (dropping it sends the server `notifications/cancelled`), its
//! progress notifications become `tool-progress` events, and its answer becomes text for the
//! model: an `isError` result or a server's error is a tool error the model can correct,
//! never a failed turn.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, RwLock};

use archmax_kernel::{NativeBase, ToolPaths};
use archmax_mcp::config;
pub use archmax_mcp::{
    CallOptions, CallResult, ElicitAnswer, McpConfig, McpError, McpEvent, McpHost, McpPool,
    PoolOptions, Progress, ProgressFn,
};
use serde_json::Value;

use crate::error::RunError;
pub use crate::model::cassette::{McpRecord, McpToolRecord};
use crate::tools::{BoxFuture, HostTool, ToolContext};

/// The file a workspace declares its MCP servers in.
pub const CONFIG_FILE: &str = ".mcp.json";

/// The MCP tools of a harness: the shared pool and the tools listed so far.
pub struct McpTools {
    pool: Arc<McpPool>,
    /// The cassette that records or replays the servers' answers, if any.
    tape: RwLock<Option<Arc<dyn McpTape>>>,
    listed: RwLock<BTreeMap<String, Arc<McpTool>>>,
    /// The path arguments the servers declare (real paths), for the kernel and the calls.
    paths: Arc<ToolPaths>,
    /// Moves on whenever the listed tools change, so cached tool definitions are rebuilt.
    version: AtomicU64,
}

impl std::fmt::Debug for McpTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTools")
            .field("servers", &self.pool.server_names())
            .finish_non_exhaustive()
    }
}

/// One tool of a server, as the harness offers and calls it.
pub struct McpTool {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    /// The server.
    pub server: String,
    /// The tool's name as the server lists it.
    pub tool: String,
    /// What the server says it does.
    pub description: String,
    /// Its input schema.
    pub schema: Value,
    pool: Arc<McpPool>,
    tape: Option<Arc<dyn McpTape>>,
    paths: Arc<ToolPaths>,
}

impl std::fmt::Debug for McpTool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpTool")
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

impl McpTools {
    /// The tools of `pool`'s servers, run for the workspace at `root`.
    pub fn new(pool: Arc<McpPool>, root: &Path) -> Arc<McpTools> {
        let paths = Arc::new(declared_paths(&pool, root));
        Arc::new(McpTools {
            pool,
            tape: RwLock::default(),
            listed: RwLock::default(),
            paths,
            version: AtomicU64::new(0),
        })
    }

    /// The servers of the `.mcp.json` at the workspace `root` (none when there is no file),
    /// its `${VAR}`s read through `lookup`; a file that does not read is refused with every
    /// problem, file, line and column named.
    pub fn from_workspace(
        root: &Path,
        lookup: &dyn Fn(&str) -> Option<String>,
        host: Option<Arc<dyn McpHost>>,
    ) -> Result<Option<Arc<McpTools>>, RunError> {
        let text = archmax_spec::disk::read_text_within(
            root,
            Path::new(CONFIG_FILE),
            archmax_spec::disk::MAX_AUTHORED_FILE_BYTES,
        )
        .map_err(|why| RunError::Settings(format!("{CONFIG_FILE} {why}")))?;
        let Some(text) = text else {
            return Ok(None);
        };
        let config = parse(&text, CONFIG_FILE, lookup)?;
        Ok(Some(Self::of(config, root, host)))
    }

    /// The tools of the servers `config` declares, started under `root` (a stdio server's
    /// relative `cwd`), answering elicitation and sampling through `host` when given.
    pub fn of(config: McpConfig, root: &Path, host: Option<Arc<dyn McpHost>>) -> Arc<McpTools> {
        let mut options = PoolOptions::new(root);
        options.host = host;
        Self::new(McpPool::new(config, options), root)
    }

    /// Records the servers' answers into a cassette, or answers from one instead of the
    /// servers (set before any tool is listed).
    pub fn set_tape(&self, tape: Option<Arc<dyn McpTape>>) {
        if let Ok(mut t) = self.tape.write() {
            *t = tape;
        }
    }

    fn tape(&self) -> Option<Arc<dyn McpTape>> {
        self.tape.read().ok().and_then(|t| t.clone())
    }

    /// The pool.
    pub fn pool(&self) -> &Arc<McpPool> {
        &self.pool
    }

    /// The servers declared, in declaration order.
    pub fn servers(&self) -> Vec<String> {
        self.pool
            .server_names()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// The path arguments the servers declare (`paths` of each entry), as the kernel's
    /// declarations of tools given real paths.
    pub fn declared_paths(&self) -> &ToolPaths {
        &self.paths
    }

    /// Whether the listed tools changed since `version`.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// Lists the tools of every server one of `names` is about (`mcp__<server>…`), starting
    /// a server that has not started. What could not be listed comes back, one line a
    /// server, for a warning; its tools are then not offered.
    pub async fn list(&self, names: &[String]) -> Vec<String> {
        let mut servers: Vec<&str> = names
            .iter()
            .filter_map(|n| archmax_spec::grammar::mcp_server(n))
            .filter(|s| self.pool.entry(s).is_some())
            .collect();
        servers.sort_unstable();
        servers.dedup();
        let mut problems = Vec::new();
        let tape = self.tape();
        for server in servers {
            if let Some(recorded) = tape.as_ref().and_then(|t| t.tools(server)) {
                self.keep_list(server, recorded);
                continue;
            }
            match self.pool.tools(server).await {
                Ok(tools) => {
                    let list: Vec<McpToolRecord> = tools
                        .tools
                        .iter()
                        .map(|t| McpToolRecord {
                            name: t.name.clone(),
                            tool: t.tool.clone(),
                            description: description(t),
                            input_schema: t.input_schema.clone(),
                        })
                        .collect();
                    if let Some(tape) = &tape {
                        tape.keep(McpRecord::Tools {
                            server: server.to_string(),
                            tools: list.clone(),
                        });
                    }
                    self.keep_list(server, list);
                }
                Err(e) => problems.push(e.to_string()),
            }
        }
        problems
    }

    /// Keeps `server`'s list, bumping the version when it differs from what was kept.
    fn keep_list(&self, server: &str, tools: Vec<McpToolRecord>) {
        let Ok(mut listed) = self.listed.write() else {
            return;
        };
        let unchanged = listed.values().filter(|t| t.server == server).count() == tools.len()
            && tools.iter().all(|t| {
                listed.get(&t.name).is_some_and(|kept| {
                    kept.tool == t.tool
                        && kept.description == t.description
                        && kept.schema == t.input_schema
                })
            });
        if unchanged {
            return;
        }
        listed.retain(|_, t| t.server != server);
        let tape = self.tape();
        for t in tools {
            listed.insert(
                t.name.clone(),
                Arc::new(McpTool {
                    name: t.name,
                    server: server.to_string(),
                    tool: t.tool,
                    description: t.description,
                    schema: t.input_schema,
                    pool: Arc::clone(&self.pool),
                    tape: tape.clone(),
                    paths: Arc::clone(&self.paths),
                }),
            );
        }
        self.version.fetch_add(1, Ordering::AcqRel);
    }

    /// The listed tool named `name`.
    pub fn get(&self, name: &str) -> Option<Arc<McpTool>> {
        self.listed.read().ok()?.get(name).cloned()
    }

    /// The listed tools an entry of a state's surface stands for: the tool it names, or
    /// every tool of the server `mcp__<server>` names, by name.
    pub fn expand(&self, entry: &str) -> Vec<Arc<McpTool>> {
        let Ok(listed) = self.listed.read() else {
            return Vec::new();
        };
        listed
            .values()
            .filter(|t| archmax_spec::grammar::entry_covers(entry, &t.name))
            .cloned()
            .collect()
    }

    /// Every listed tool.
    pub fn listed(&self) -> Vec<Arc<McpTool>> {
        self.listed
            .read()
            .map(|l| l.values().cloned().collect())
            .unwrap_or_default()
    }
}

/// A tool's description for the model: the server's, else its title.
fn description(t: &archmax_mcp::ToolInfo) -> String {
    t.description
        .clone()
        .or_else(|| t.title.clone())
        .unwrap_or_default()
}

/// Reads an `.mcp.json` text: the servers, or every problem in one refusal.
pub fn parse(
    text: &str,
    file: &str,
    lookup: &dyn Fn(&str) -> Option<String>,
) -> Result<McpConfig, RunError> {
    let (config, diagnostics) = config::parse(text, file, lookup);
    match config {
        Some(config) if diagnostics.iter().all(|d| !d.is_error()) => Ok(config),
        _ => {
            let lines: Vec<String> = diagnostics
                .iter()
                .filter(|d| d.is_error())
                .map(|d| match (d.line, d.column) {
                    (Some(l), Some(c)) => format!("{} [{file}:{l}:{c}]", d.message),
                    _ => format!("{} [{file}]", d.message),
                })
                .collect();
            Err(RunError::Settings(format!(
                "{file} does not read: {}",
                lines.join("; ")
            )))
        }
    }
}

/// The `paths` of every server entry, by full tool name, under `root`: a stdio server's
/// relative paths are read from its `cwd` (the root by default).
fn declared_paths(pool: &McpPool, root: &Path) -> ToolPaths {
    let spell = |p: &Path| {
        let text = p.to_string_lossy().replace('\\', "/");
        text.trim_end_matches('/').to_string()
    };
    let given = std::path::absolute(root).unwrap_or_else(|_| root.to_path_buf());
    let mut roots = vec![spell(&given)];
    if let Ok(resolved) = std::fs::canonicalize(&given) {
        let resolved = spell(&resolved);
        if !roots.contains(&resolved) {
            roots.push(resolved);
        }
    }
    let mut out = ToolPaths::new();
    for server in pool.server_names() {
        let Some(entry) = pool.entry(server) else {
            continue;
        };
        let whole = NativeBase {
            roots: roots.clone(),
            cwd: Some(String::new()),
        };
        let cwd = match &entry.transport {
            archmax_mcp::Transport::Stdio(stdio) => match &stdio.cwd {
                Some(dir) => whole.view(&dir.to_string_lossy()),
                None => Some(String::new()),
            },
            archmax_mcp::Transport::Http(_) => Some(String::new()),
        };
        let base = NativeBase {
            roots: roots.clone(),
            cwd,
        };
        for p in &entry.paths {
            let Some(name) = archmax_mcp::tool_name(server, &p.tool) else {
                continue;
            };
            let args: Vec<(String, String)> = p
                .args
                .iter()
                .map(|(arg, access)| (arg.clone(), access.as_str().to_string()))
                .collect();
            // Each access is one the kernel reads (the config only parses those).
            let _ = out.declare_native(&name, &args, base.clone());
        }
    }
    out
}

/// What a cassette does with a run's MCP traffic: a recording keeps it, a replay answers
/// it, so a replayed run needs no server running.
pub trait McpTape: Send + Sync {
    /// Replaying: `server`'s recorded tools (`None`: not replaying, ask the server).
    fn tools(&self, server: &str) -> Option<Vec<McpToolRecord>>;
    /// Replaying: the recorded answer to this call (`None`: not replaying, call the server).
    fn answer(&self, server: &str, tool: &str, args: &Value) -> Option<Answered>;
    /// Recording: keeps a server's list or a call's answer.
    fn keep(&self, record: McpRecord);
}

/// What one call answered, for the model.
#[derive(Debug, Clone, PartialEq)]
pub struct Answered {
    /// The text: the server's, its structured content, named resource links.
    pub text: String,
    /// The result was an error (`isError`, a server's error, a refused argument, a timeout).
    pub is_error: bool,
    /// The images it returned, `(mime type, base64 data)`.
    pub images: Vec<(String, String)>,
}

impl McpTool {
    /// Calls the tool with `args`, `on_progress` told each progress notification. The
    /// caller bounds it (dropping the future cancels the call at the server).
    pub async fn run(&self, args: Value, on_progress: Option<archmax_mcp::ProgressFn>) -> Answered {
        if let Some(recorded) = self
            .tape
            .as_ref()
            .and_then(|t| t.answer(&self.server, &self.tool, &args))
        {
            return recorded;
        }
        let options = CallOptions {
            on_progress,
            ..CallOptions::default()
        };
        // The decided workspace paths, as the real paths the server reads.
        let sent = self.paths.native_args(&self.name, args.clone());
        let answer = match self
            .pool
            .call(&self.server, &self.tool, sent, options)
            .await
        {
            Ok(result) => answered(result),
            Err(e) => Answered {
                text: format!("Error: {e}"),
                is_error: true,
                images: Vec::new(),
            },
        };
        if let Some(tape) = &self.tape {
            tape.keep(McpRecord::Call {
                server: self.server.clone(),
                tool: self.tool.clone(),
                arguments: args,
                text: answer.text.clone(),
                is_error: answer.is_error,
                images: answer.images.clone(),
            });
        }
        answer
    }
}

/// A result as the model reads it.
fn answered(result: CallResult) -> Answered {
    let mut text = result.text;
    if text.trim().is_empty()
        && let Some(structured) = &result.structured
    {
        text = structured.to_string();
    }
    Answered {
        text,
        is_error: result.is_error,
        images: result
            .images
            .into_iter()
            .map(|i| (i.mime_type, i.data))
            .collect(),
    }
}

/// An MCP tool is a host tool to the scripts and hooks that call it (`tools.*`): its text.
impl HostTool for McpTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn schema(&self) -> Value {
        self.schema.clone()
    }
    fn mcp(&self) -> Option<crate::events::McpRef> {
        Some(crate::events::McpRef {
            server: self.server.clone(),
            tool: self.tool.clone(),
        })
    }
    fn call<'a>(&'a self, args: Value, _ctx: ToolContext) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let a = self.run(args, None).await;
            let mut text = a.text;
            if !a.images.is_empty() {
                text.push_str(&format!(
                    "\n[{} image(s) not shown to a script]",
                    a.images.len()
                ));
            }
            if a.is_error { Err(text) } else { Ok(text) }
        })
    }
}

/// What `validate` says about a workspace's MCP servers: every problem of its `.mcp.json`
/// (file, field, line, column), read with every `${VAR}` standing for itself (a variable is
/// the run's business, not the file's), and a warning for each server a grant of `workflow`
/// names that the file does not declare.
pub fn validate(
    root: &Path,
    workflow: Option<&archmax_spec::Workflow>,
) -> Vec<archmax_spec::Diagnostic> {
    use archmax_spec::Diagnostic;
    let mut out = Vec::new();
    let text = match archmax_spec::disk::read_text_within(
        root,
        Path::new(CONFIG_FILE),
        archmax_spec::disk::MAX_AUTHORED_FILE_BYTES,
    ) {
        Ok(text) => text,
        Err(why) => {
            out.push(Diagnostic::error("", format!("{CONFIG_FILE} {why}")).in_file(CONFIG_FILE));
            return out;
        }
    };
    let placeholder = |name: &str| Some(format!("<{name}>"));
    let declared: Vec<String> = match &text {
        Some(text) => {
            let (config, diagnostics) = config::parse(text, CONFIG_FILE, &placeholder);
            out.extend(diagnostics);
            config
                .map(|c| c.servers.iter().map(|s| s.name.clone()).collect())
                .unwrap_or_default()
        }
        None => Vec::new(),
    };
    let Some(wf) = workflow else {
        return out;
    };
    let mut named = std::collections::BTreeSet::new();
    let lists = wf.tools.iter().flat_map(|t| {
        t.allow_always
            .iter()
            .chain(t.forbid_always.iter())
            .flatten()
    });
    let states = wf
        .states
        .values()
        .filter_map(|s| s.tools.as_ref())
        .flat_map(|t| t.allow.iter().chain(t.forbid.iter()).flatten());
    for entry in lists.chain(states) {
        if let Some(server) = archmax_spec::grammar::mcp_server(entry.tool())
            && !declared.iter().any(|d| d == server)
        {
            named.insert(server.to_string());
        }
    }
    for server in named {
        out.push(Diagnostic::warning(
            "",
            format!(
                "The workflow names MCP server '{server}' (mcp__{server}…), which {CONFIG_FILE} does not declare: its tools are never offered. Declare it under 'mcpServers' in {CONFIG_FILE}, or fix the name."
            ),
        ));
    }
    out
}

/// `validate` of a workflow of the workspace at `root`, as `archmax validate` and
/// `validateWorkflow` run it: the language's checks (with every hook script parsed by the
/// sandbox, unless `opts` names another parser), then the workspace's MCP servers.
pub fn validate_workspace(
    root: &Path,
    opts: &archmax_spec::ValidateOptions,
) -> archmax_spec::ValidationResult {
    let files = archmax_spec::DiskFiles::new(root);
    let mut opts = opts.clone();
    opts.parse_script.get_or_insert(crate::hooks::parse_script);
    let opts = &opts;
    let mut result = archmax_spec::validate_workflow(&files, opts);
    let loaded = archmax_spec::workspace::load_workflow(&files, &opts.workflow, &opts.skills).ok();
    result
        .diagnostics
        .extend(validate(root, loaded.as_ref().map(|l| &l.spec)));
    result.valid = !result
        .diagnostics
        .iter()
        .any(archmax_spec::Diagnostic::is_error);
    result
}

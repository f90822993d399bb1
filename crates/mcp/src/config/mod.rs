//! `.mcp.json`: the servers a workspace declares, in the format users keep for
//! Claude Code and Cursor, plus two keys of the harness's own.
//!
//! ```json
//! {
//!   "mcpServers": {
//!     "fs": {
//!       "command": "npx",
//!       "args": ["-y", "@modelcontextprotocol/server-filesystem", "${ROOT:-.}"],
//!       "env": { "LOG_LEVEL": "warn" },
//!       "cwd": "tools",
//!       "timeoutMs": 30000,
//!       "paths": { "read_text_file": { "path": "read" }, "write_file": { "path": "write" } }
//!     },
//!     "tracker": {
//!       "type": "http",
//!       "url": "https://tracker.example.com/mcp",
//!       "headers": { "Authorization": "Bearer ${TRACKER_TOKEN}" }
//!     }
//!   }
//! }
//! ```
//!
//! A stdio server has `command` (required), `args`, `env`, `cwd` (relative to the
//! workspace root) and an optional `"type": "stdio"`. A remote server has `url`
//! (required), `headers` and `"type": "http"` (streamable HTTP; a `url` without a
//! `type` is taken as `http`, as Cursor does). `"type": "sse"`, the older HTTP+SSE
//! transport, is refused: rmcp 3 has no client for it.
//!
//! The harness's keys: `timeoutMs`, the limit of one call in milliseconds (default
//! 60000), and `paths`, `{ "<tool>": { "<argument>": "read" | "list" | "search" |
//! "write" | "remove" | "execute" } }`, the path arguments of the server's tools
//! (the MCP tool names, as the server lists them), so the harness can govern them
//! like a host tool's.
//!
//! `${VAR}` and `${VAR:-default}` are expanded in `command`, `args`, `env` values,
//! `cwd`, `url` and `headers` values, as Claude Code does: no escape, no `$VAR`,
//! and `:-` also replaces an empty value. An unset variable without a default is
//! an error naming it and the field (Claude Code would pass `${VAR}` through).

mod expand;
pub mod keys;
mod walk;

use std::fmt;
use std::path::PathBuf;
use std::time::Duration;

use archmax_spec::Diagnostic;

pub use expand::Lookup;

use crate::secret::{Redactor, Secret};

/// The default limit of one call.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(60_000);
/// The largest `timeoutMs` accepted (a day).
pub const MAX_TIMEOUT_MS: u64 = 86_400_000;

/// Reads a `.mcp.json` text. `file` names it in the diagnostics; `lookup` answers
/// the `${VAR}` references. The config is `Some` only when there is no error.
pub fn parse(text: &str, file: &str, lookup: Lookup<'_>) -> (Option<McpConfig>, Vec<Diagnostic>) {
    walk::parse(text, file, lookup)
}

/// The servers of one `.mcp.json`.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct McpConfig {
    /// In declaration order.
    pub servers: Vec<ServerEntry>,
}

impl McpConfig {
    /// The server called `name`.
    pub fn server(&self, name: &str) -> Option<&ServerEntry> {
        self.servers.iter().find(|s| s.name == name)
    }
}

/// One server of `mcpServers`, its references expanded.
#[derive(Debug, Clone, PartialEq)]
pub struct ServerEntry {
    /// The key under `mcpServers`.
    pub name: String,
    /// How to reach it.
    pub transport: Transport,
    /// The limit of one call (`timeoutMs`).
    pub timeout: Duration,
    /// The path arguments of its tools (`paths`), in declaration order.
    pub paths: Vec<ToolPaths>,
}

impl ServerEntry {
    /// What to cut out of any text about this server: its environment values,
    /// header values and every value a `${VAR}` produced.
    pub fn redactor(&self) -> &Redactor {
        match &self.transport {
            Transport::Stdio(s) => &s.redactor,
            Transport::Http(h) => &h.redactor,
        }
    }
}

/// How a server is reached.
#[derive(Debug, Clone, PartialEq)]
pub enum Transport {
    /// A child process speaking MCP on its stdin and stdout.
    Stdio(StdioTransport),
    /// Streamable HTTP.
    Http(HttpTransport),
}

/// A child process. Its `Debug` cuts out every secret.
#[derive(Clone, PartialEq)]
pub struct StdioTransport {
    /// The program: a name looked up in `PATH`, or a path (a relative one is
    /// taken from the server's working directory).
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// The variables it gets besides `PATH` and `HOME`; nothing else of the
    /// harness's environment reaches it.
    pub env: Vec<(String, Secret)>,
    /// Its working directory as written (relative to the workspace root); the
    /// root when absent.
    pub cwd: Option<PathBuf>,
    redactor: Redactor,
}

/// A remote server over streamable HTTP. Its `Debug` cuts out every secret.
#[derive(Clone, PartialEq)]
pub struct HttpTransport {
    /// The endpoint (`http://` or `https://`).
    pub url: String,
    /// Sent with every request.
    pub headers: Vec<(String, Secret)>,
    redactor: Redactor,
}

impl fmt::Debug for StdioTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let r = &self.redactor;
        f.debug_struct("StdioTransport")
            .field("command", &r.redact(&self.command))
            .field(
                "args",
                &self.args.iter().map(|a| r.redact(a)).collect::<Vec<_>>(),
            )
            .field("env", &self.env)
            .field(
                "cwd",
                &self.cwd.as_ref().map(|c| r.redact(&c.to_string_lossy())),
            )
            .finish()
    }
}

impl fmt::Debug for HttpTransport {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("HttpTransport")
            .field("url", &self.redactor.redact(&self.url))
            .field("headers", &self.headers)
            .finish()
    }
}

/// How a tool uses a path argument: the six accesses of the harness's path
/// declarations (`archmax_kernel::paths::Access` parses [`PathAccess::as_str`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathAccess {
    /// Reads the file.
    Read,
    /// Lists the directory.
    List,
    /// Searches under it.
    Search,
    /// Writes it.
    Write,
    /// Removes it.
    Remove,
    /// Executes it.
    Execute,
}

impl PathAccess {
    /// Every access, in the order messages list them.
    pub const ALL: [PathAccess; 6] = [
        PathAccess::Read,
        PathAccess::List,
        PathAccess::Search,
        PathAccess::Write,
        PathAccess::Remove,
        PathAccess::Execute,
    ];
    /// The name written in `paths`.
    pub fn as_str(self) -> &'static str {
        match self {
            PathAccess::Read => "read",
            PathAccess::List => "list",
            PathAccess::Search => "search",
            PathAccess::Write => "write",
            PathAccess::Remove => "remove",
            PathAccess::Execute => "execute",
        }
    }
    /// Parses a name.
    pub fn parse(s: &str) -> Option<PathAccess> {
        Self::ALL.into_iter().find(|a| a.as_str() == s)
    }
}

/// The declared path arguments of one tool (`paths.<tool>`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolPaths {
    /// The tool's name as the server lists it.
    pub tool: String,
    /// Each argument and its access, in declaration order.
    pub args: Vec<(String, PathAccess)>,
}

#[cfg(test)]
mod tests;

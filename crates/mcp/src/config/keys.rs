//! The keys each object of `.mcp.json` accepts. Claude Code's and Cursor's keys
//! first, then the harness's own (camelCase, like the rest of our JSON).

/// The file's root.
pub const ROOT: &[&str] = &["mcpServers"];
/// A stdio server (`command`).
pub const STDIO: &[&str] = &["type", "command", "args", "env", "cwd", TIMEOUT_MS, PATHS];
/// A remote server (`url`).
pub const HTTP: &[&str] = &["type", "url", "headers", TIMEOUT_MS, PATHS];
/// Per call, in milliseconds (harness key).
pub const TIMEOUT_MS: &str = "timeoutMs";
/// The path arguments of the server's tools (harness key).
pub const PATHS: &str = "paths";
/// Headers the MCP transport sets itself.
pub const RESERVED_HEADERS: &[&str] = &[
    "accept",
    "mcp-session-id",
    "mcp-protocol-version",
    "last-event-id",
];

//! Why a pool operation failed. Every message names the server (and the tool,
//! where there is one) and carries no secret: texts that come from the server
//! side or the transport pass through the server's [`crate::secret::Redactor`].

use std::time::Duration;

/// Why a call, a tool listing or a start failed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[non_exhaustive]
pub enum McpError {
    /// No server of that name in the configuration.
    #[error("there is no MCP server '{server}'")]
    UnknownServer {
        /// The name asked for.
        server: String,
    },
    /// The server lists no tool of that name.
    #[error("MCP server '{server}' has no tool '{tool}'")]
    UnknownTool {
        /// The server.
        server: String,
        /// The tool asked for.
        tool: String,
    },
    /// The arguments do not match the tool's `inputSchema`; nothing was sent.
    #[error("invalid arguments for tool '{tool}' of MCP server '{server}': {message}")]
    InvalidArguments {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// Each mismatch with its JSON pointer, in words a model can act on.
        message: String,
    },
    /// The server could not be started or did not complete the MCP handshake.
    #[error("MCP server '{server}' could not start: {message}")]
    Start {
        /// The server.
        server: String,
        /// What happened, with the end of its stderr for a stdio server.
        message: String,
    },
    /// The server went away (its process exited, its connection closed) while
    /// the call was under way. The next call starts it again.
    #[error("MCP server '{server}' {message}")]
    Exited {
        /// The server.
        server: String,
        /// How it ended (`exited with status 1`), with the end of its stderr.
        message: String,
    },
    /// The server answered the request with a JSON-RPC error.
    #[error("MCP server '{server}' answered with error {code}: {message}")]
    Server {
        /// The server.
        server: String,
        /// The JSON-RPC error code.
        code: i32,
        /// Its message.
        message: String,
    },
    /// The transport failed (an HTTP error, a broken pipe).
    #[error("MCP server '{server}': {message}")]
    Transport {
        /// The server.
        server: String,
        /// What failed.
        message: String,
    },
    /// The server answered something a tool call cannot be (a task, an
    /// `input_required` round, another result type).
    #[error("MCP server '{server}' answered unexpectedly: {message}")]
    Protocol {
        /// The server.
        server: String,
        /// What came back.
        message: String,
    },
    /// The call passed its limit; `notifications/cancelled` was sent.
    #[error("tool '{tool}' of MCP server '{server}' timed out after {} ms", after.as_millis())]
    TimedOut {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
        /// The limit.
        after: Duration,
    },
    /// The caller cancelled the call; `notifications/cancelled` was sent.
    #[error("tool '{tool}' of MCP server '{server}' was cancelled")]
    Cancelled {
        /// The server.
        server: String,
        /// The tool.
        tool: String,
    },
    /// The pool was shut down.
    #[error("the MCP pool is shut down")]
    Closed,
}

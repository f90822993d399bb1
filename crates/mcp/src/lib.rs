//! `archmax-mcp`: the MCP client side of the harness. It reads a workspace's
//! `.mcp.json`, runs its servers in a pool every session of a process shares, and
//! calls their tools. It knows nothing of workflows, sessions, the kernel or
//! N-API: the harness decides which tools a state may call and with which paths.
//!
//! ```no_run
//! # async fn demo() -> Result<(), archmax_mcp::McpError> {
//! use archmax_mcp::{CallOptions, McpPool, PoolOptions, config};
//! use serde_json::json;
//!
//! let text = r#"{"mcpServers": {"everything": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-everything"]}}}"#;
//! let env = |name: &str| std::env::var(name).ok();
//! let (config, diagnostics) = config::parse(text, ".mcp.json", &env);
//! assert!(diagnostics.is_empty());
//! let pool = McpPool::new(config.unwrap_or_default(), PoolOptions::new("."));
//!
//! let tools = pool.tools("everything").await?;
//! assert!(tools.by_name("mcp__everything__echo").is_some());
//! let result = pool
//!     .call("everything", "echo", json!({"message": "hi"}), CallOptions::default())
//!     .await?;
//! assert_eq!(result.text, "Echo: hi");
//! pool.shutdown().await;
//! # Ok(())
//! # }
//! ```
//!
//! The pool needs a tokio runtime (rmcp's client runs on tasks it spawns); its
//! `Drop` does not.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::panic))]

pub mod config;
mod error;
mod host;
pub mod names;
mod pool;
mod result;
mod schema;
pub mod secret;

pub use config::{McpConfig, PathAccess, ServerEntry, ToolPaths, Transport};
pub use error::McpError;
pub use host::{ElicitAnswer, McpHost};
pub use names::{split_tool_name, tool_name};
pub use pool::{
    CallOptions, EventFn, McpEvent, McpPool, PoolOptions, Progress, ProgressFn, ServerTools,
    SkippedTool, ToolInfo,
};
pub use result::{CallResult, ImageItem};
pub use secret::Secret;
pub use tokio_util::sync::CancellationToken;

//! archmax-mcp against real MCP servers from npm (the repository's
//! devDependencies): server-everything over stdio and streamable HTTP,
//! server-filesystem over stdio. No network beyond 127.0.0.1.
//!
//! Without `node_modules` (run `npm install` at the repository root) every test
//! here is skipped with a printed reason, except under `CI=true`, where that fails.

// Linux only: the tests read /proc and run `sh` and `tee`.
#![cfg(target_os = "linux")]
#![allow(clippy::unwrap_used, clippy::panic)]

mod support;

mod concurrency;
mod everything_http;
mod everything_stdio;
mod filesystem;
mod lifecycle;

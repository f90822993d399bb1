//! `archmax-mcp`: the MCP client side of the harness.
#![cfg_attr(test, allow(clippy::unwrap_used, clippy::panic))]

pub mod config;
pub mod names;
pub mod secret;

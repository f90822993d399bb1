//! `archmax-napi`: the Node binding of the archmax harness.
//!
//! This crate is a translation layer. It converts JS values into the core
//! crates' inputs (binding-local DTOs in [`dto`]), calls them, and converts the
//! results back as JSON whose TypeScript types are the ts-rs files in `types/`.
//! No rule of the harness lives here.

mod agent;
mod callback;
mod cases;
mod cli;
mod dto;
mod events;
#[cfg(test)]
mod generated;
mod governance;
mod hook_kinds;
mod host_tool;
mod js_model;
mod mcp_host;
mod model_stream;
mod policy;
mod pump;
mod result;
mod settings;
mod spec;
mod store;
mod telemetry;
mod tool_workspace;

pub use agent::*;
pub use cases::*;
pub use cli::run_cli;
pub use governance::*;
pub use pump::*;
pub use settings::*;
pub use spec::*;
pub use store::*;

/// mimalloc, not the system allocator: on Node's main thread glibc's malloc shares its arena
/// with V8 and roughly doubled the harness's time per step
/// (design/decisions/0075-mimalloc-without-huge-pages.md).
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

//! Integration tests of the `archmax` CLI, one binary (one link on 2 cores).

mod cases;
mod cassette;
mod delegation;
mod env_files;
mod first_hour;
mod graph;
mod history;
#[cfg(unix)]
mod hostile_files;
mod mcp;
#[allow(dead_code)]
// The OTLP/HTTP receiver, shared with the workspace's integration tests and benchmarks.
#[path = "../../../../tests/src/otlp.rs"]
mod otlp;
mod parks;
mod postgres;
mod run;
#[allow(dead_code)]
// The scripted OpenAI-compatible server, shared with the workspace's integration tests.
#[path = "../../../../tests/src/scripted.rs"]
mod scripted;
mod serve;
mod sessions;
#[cfg(unix)]
mod signals;
mod skill;
mod support;
mod telemetry;
mod validate;

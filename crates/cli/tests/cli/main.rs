//! Integration tests of the `archmax` CLI, one binary (one link on 2 cores).

mod env_files;
mod parks;
mod run;
#[allow(dead_code)]
mod scripted;
mod sessions;
mod support;
mod validate;

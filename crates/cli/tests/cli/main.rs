//! Integration tests of the `archmax` CLI, one binary (one link on 2 cores).

mod env_files;
mod validate;

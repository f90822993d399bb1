//! Shared helpers for the integration tests.

use std::path::PathBuf;

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The example workspace.
pub fn example_root() -> PathBuf {
    repo_root().join("examples/customer-support")
}

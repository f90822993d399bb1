//! Errors raised while building a sandbox.

/// A sandbox could not be created.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// QuickJS refused to create the runtime or context (for example, the memory limit is too
    /// small to hold a context).
    #[error("cannot create the QuickJS sandbox: {0}")]
    Engine(String),
}

impl From<rquickjs::Error> for SandboxError {
    fn from(e: rquickjs::Error) -> Self {
        SandboxError::Engine(e.to_string())
    }
}

//! A session store whose commits go through a hook, every other call straight to the store
//! it wraps: for tests and benchmarks that slow, time or break commits.

use std::sync::Arc;

use archmax_machine::files::SessionFiles;
use archmax_machine::store::{SessionId, SessionStore, Snapshot, Step, StoreError, WriterLease};
use serde_json::Value;

/// What a commit does instead: given the wrapped store, the session and the step.
pub type CommitHook =
    dyn Fn(&dyn SessionStore, &SessionId, Step<'_>) -> Result<(), StoreError> + Send + Sync;

/// `inner`, its commits through `hook`.
pub struct Hooked {
    inner: Arc<dyn SessionStore>,
    hook: Box<CommitHook>,
}

impl Hooked {
    /// Wraps `inner`; `hook` runs in place of every commit (call the store it is given to
    /// commit for real).
    pub fn new(
        inner: Arc<dyn SessionStore>,
        hook: impl Fn(&dyn SessionStore, &SessionId, Step<'_>) -> Result<(), StoreError>
        + Send
        + Sync
        + 'static,
    ) -> Hooked {
        Hooked {
            inner,
            hook: Box::new(hook),
        }
    }
}

impl SessionStore for Hooked {
    fn load(&self, id: &SessionId) -> Result<Option<Snapshot>, StoreError> {
        self.inner.load(id)
    }
    fn load_state(&self, id: &SessionId) -> Result<Option<Value>, StoreError> {
        self.inner.load_state(id)
    }
    fn commit(&self, id: &SessionId, step: Step<'_>) -> Result<(), StoreError> {
        (self.hook)(self.inner.as_ref(), id, step)
    }
    fn list(&self) -> Result<Vec<String>, StoreError> {
        self.inner.list()
    }
    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        self.inner.delete(id)
    }
    fn acquire(&self, id: &SessionId) -> Result<WriterLease, StoreError> {
        self.inner.acquire(id)
    }
    fn write_spec_snapshot(&self, hash: &str, spec: &Value) -> Result<(), StoreError> {
        self.inner.write_spec_snapshot(hash, spec)
    }
    fn read_spec_snapshot(&self, hash: &str) -> Result<Option<Value>, StoreError> {
        self.inner.read_spec_snapshot(hash)
    }
    fn session_dir(&self, id: &SessionId) -> Option<std::path::PathBuf> {
        self.inner.session_dir(id)
    }
    fn session_files(&self, id: &SessionId) -> Option<SessionFiles> {
        self.inner.session_files(id)
    }
    fn seedable_files(&self, id: &SessionId) -> Option<SessionFiles> {
        self.inner.seedable_files(id)
    }
    fn kind(&self) -> &'static str {
        self.inner.kind()
    }
    fn waits_on_disk(&self) -> bool {
        self.inner.waits_on_disk()
    }
}

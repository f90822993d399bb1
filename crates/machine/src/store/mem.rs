//! The in-memory store: same behaviour as the filesystem store, nothing durable. A
//! session's files (`scratchpad/`, offloads, written files) are kept beside its state,
//! in a [`MemArea`](crate::files::MemArea).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use super::lease::Holders;
use super::{
    SessionId, SessionStore, Snapshot, Step, StoreError, WriterLease, busy, check_spec_hash,
    is_descendant,
};
use crate::files::{MemAreas, SessionFiles};

/// An in-memory session store (tests, ephemeral hosts). Lists sessions in id order.
#[derive(Debug, Default)]
pub struct MemStore {
    inner: Mutex<Inner>,
    holders: Holders,
    files: MemAreas,
}

#[derive(Debug, Default)]
struct Inner {
    sessions: BTreeMap<String, Snapshot>,
    specs: BTreeMap<String, Value>,
}

impl MemStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SessionStore for MemStore {
    fn load(&self, id: &SessionId) -> Result<Option<Snapshot>, StoreError> {
        Ok(self.inner().sessions.get(id.as_str()).cloned())
    }

    fn load_state(&self, id: &SessionId) -> Result<Option<Value>, StoreError> {
        Ok(self
            .inner()
            .sessions
            .get(id.as_str())
            .map(|s| s.state.clone()))
    }

    fn commit(&self, id: &SessionId, step: Step<'_>) -> Result<(), StoreError> {
        let mut inner = self.inner();
        let session = inner
            .sessions
            .entry(id.as_str().to_owned())
            .or_insert_with(|| Snapshot {
                state: Value::Null,
                messages: Vec::new(),
            });
        session.messages.extend_from_slice(step.new_messages);
        session.state = step.state.clone();
        drop(inner);
        // The first commit makes `scratchpad/`, as the filesystem store's does.
        self.files.committed(id.as_str()).map_err(StoreError::io(
            id.as_str(),
            "create folder",
            crate::store::SCRATCHPAD_DIR,
        ))
    }

    fn list(&self) -> Result<Vec<String>, StoreError> {
        Ok(self.inner().sessions.keys().cloned().collect())
    }

    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        self.inner()
            .sessions
            .retain(|k, _| k != id.as_str() && !is_descendant(id.as_str(), k));
        self.files.remove(id.as_str());
        Ok(())
    }

    fn acquire(&self, id: &SessionId) -> Result<WriterLease, StoreError> {
        if self.holders.claim(id.as_str()) {
            Ok(WriterLease::new(
                id.as_str().to_owned(),
                self.holders.clone(),
                None,
            ))
        } else {
            Err(busy(self, id))
        }
    }

    fn write_spec_snapshot(&self, hash: &str, spec: &Value) -> Result<(), StoreError> {
        check_spec_hash(hash)?;
        self.inner()
            .specs
            .entry(hash.to_owned())
            .or_insert_with(|| spec.clone());
        Ok(())
    }

    fn read_spec_snapshot(&self, hash: &str) -> Result<Option<Value>, StoreError> {
        check_spec_hash(hash)?;
        Ok(self.inner().specs.get(hash).cloned())
    }

    fn session_dir(&self, _id: &SessionId) -> Option<PathBuf> {
        None
    }

    fn session_files(&self, id: &SessionId) -> Option<SessionFiles> {
        Some(self.files.session_files(id.as_str()))
    }

    fn kind(&self) -> &'static str {
        "in-memory"
    }
}

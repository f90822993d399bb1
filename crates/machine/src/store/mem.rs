//! The in-memory store: same behaviour as the filesystem store, nothing durable. A
//! session's files (`scratchpad/`, offloads, written files) are kept beside its state,
//! in a [`MemArea`](crate::files::MemArea).

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

use serde_json::Value;

use super::lease::Holders;
use super::{
    Checkpoint, History, OwnedStep, SessionId, SessionStore, Snapshot, Step, StoreError,
    WriterLease, busy, check_spec_hash, is_descendant,
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
    sessions: BTreeMap<String, Kept>,
    specs: BTreeMap<String, Value>,
}

/// A session as the memory store keeps it: its state, the transcript, and every step, each
/// step's state as JSON text (a tenth of a `Value` tree's allocations, read back only by
/// `history`).
#[derive(Debug, Default)]
struct Kept {
    state: Value,
    messages: Vec<Value>,
    steps: Vec<KeptStep>,
}

#[derive(Debug)]
struct KeptStep {
    transcript_len: u64,
    at: u64,
    state: Box<str>,
}

impl Kept {
    fn state(&self) -> Value {
        self.state.clone()
    }
}

impl MemStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn inner(&self) -> MutexGuard<'_, Inner> {
        self.inner.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A commit: `add` appends the step's messages, `state` replaces the state. The first
    /// commit makes `scratchpad/` first, as the filesystem store's does; a failure there
    /// leaves the session as it was.
    fn put(
        &self,
        id: &SessionId,
        state: Value,
        add: impl FnOnce(&mut Vec<Value>),
    ) -> Result<(), StoreError> {
        self.files.committed(id.as_str()).map_err(StoreError::io(
            id.as_str(),
            "create folder",
            crate::store::SCRATCHPAD_DIR,
        ))?;
        let at = crate::clock::now_ms();
        let text = serde_json::to_string(&state).map_err(|source| StoreError::Encode {
            id: id.as_str().to_owned(),
            source,
        })?;
        let mut inner = self.inner();
        let session = inner.sessions.entry(id.as_str().to_owned()).or_default();
        add(&mut session.messages);
        session.steps.push(KeptStep {
            transcript_len: session.messages.len() as u64,
            at,
            state: text.into_boxed_str(),
        });
        session.state = state;
        Ok(())
    }
}

impl SessionStore for MemStore {
    fn load(&self, id: &SessionId) -> Result<Option<Snapshot>, StoreError> {
        Ok(self.inner().sessions.get(id.as_str()).map(|s| Snapshot {
            state: s.state(),
            messages: s.messages.clone(),
        }))
    }

    fn load_state(&self, id: &SessionId) -> Result<Option<Value>, StoreError> {
        Ok(self.inner().sessions.get(id.as_str()).map(Kept::state))
    }

    fn history(&self, id: &SessionId) -> Result<Option<History>, StoreError> {
        let inner = self.inner();
        let Some(s) = inner.sessions.get(id.as_str()) else {
            return Ok(None);
        };
        let checkpoints = s
            .steps
            .iter()
            .zip(1u64..)
            .map(|(k, step)| Checkpoint {
                step,
                transcript_len: k.transcript_len,
                // Written by `put` from a `Value`, so it reads back.
                state: serde_json::from_str(&k.state).unwrap_or(Value::Null),
                at: Some(k.at),
            })
            .collect();
        Ok(Some(History {
            checkpoints,
            messages: s.messages.clone(),
        }))
    }

    fn commit(&self, id: &SessionId, step: Step<'_>) -> Result<(), StoreError> {
        self.put(id, step.state.clone(), |m| {
            m.extend_from_slice(step.new_messages)
        })
    }

    /// The messages are moved in (none come back on success); the state is kept as a copy,
    /// the caller keeping the one it gave.
    fn commit_owned(
        &self,
        id: &SessionId,
        mut step: OwnedStep,
    ) -> (Result<(), StoreError>, OwnedStep) {
        let result = self.put(id, step.state.clone(), |m| m.append(&mut step.new_messages));
        (result, step)
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

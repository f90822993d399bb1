//! Session store: every step of a turn is checkpointed so a session can stop and resume later,
//! in another process (runtime §6).
//!
//! The store does not know the runtime's state shape. Per session it keeps
//! * the **state** — a small JSON value rewritten whole at each step, atomically;
//! * the **transcript** — messages appended one JSON line each, never rewritten.
//!
//! Filesystem layout ([`FsStore`], the default; runtime §6.1, kernel §7.4):
//! ```text
//! <root>/sessions/_specs/<hash>.json                  spec snapshots, written only if absent
//! <root>/sessions/.layout                             marks a store whose folders are storage keys
//! <root>/sessions/<id>/checkpoints/transcript.jsonl   one message per line, and after each step's
//!                                                     messages a checkpoint line {"archmax_checkpoint": {transcript_len, state}};
//!                                                     on Unix, OS-locked while a turn holds the session
//! <root>/sessions/<id>/checkpoints/state.json         cache of the last checkpoint: {"format", "transcript_len", "transcript_bytes", "state"}
//! <root>/sessions/<id>/checkpoints/turn.lock          Windows only: OS-locked while a turn holds the session (made once, kept)
//! <root>/sessions/<id>/scratchpad/                    agent working area (made when a turn first loads the session)
//! ```
//! `<id>` is the id's storage key ([`SessionId::key`]): the id itself for ids of lowercase
//! letters, digits and `-_.~@+=,`; escaped otherwise, so one id never names another's folder.
//! The memory store ([`MemStore`]) keeps the same per session in memory, its files
//! (`scratchpad/`, offloads, written files) in a [`MemArea`](crate::files::MemArea) each,
//! bounded per session (`crate::files::MAX_BYTES`, `MAX_ENTRIES`).
//! A commit appends the step's messages and its checkpoint line in one write and one
//! `sync_data`: the step is durable exactly when its checkpoint line is. `state.json` is a
//! cache (temp + rename, unsynced) rewritten when the session leaves `running` and at least
//! every 32 commits; a reader takes the cache and advances it past any complete checkpoint
//! lines beyond it, so a stale, torn or missing cache costs a short tail scan, never a step.
//! Lines past the last checkpoint (a crash mid-append, a torn line) are ignored by a load and
//! truncated by the next commit. The writer remembers where its transcript ends, so a commit
//! reads nothing: its cost is that of the new lines plus the fixed-size state.

mod committer;
pub mod confine;
mod error;
mod fs;
mod group_sync;
pub(crate) mod id;
pub(crate) mod layout;
mod lease;
mod mem;

#[cfg(any(test, feature = "store-contract"))]
pub mod contract;
#[cfg(test)]
mod tests;

use std::path::PathBuf;

use serde_json::Value;

pub use committer::CommitReceipt;
pub use error::{StoreError, busy_message};
pub use fs::FsStore;
pub use id::{
    CHILD_SEPARATOR, DEFAULT_SESSION_ID, IdRules, MAX_KEY_BYTES, RESERVED_AREAS, SessionId,
    SessionIdError, SessionIdReason, id_of_key, is_child_identity, is_descendant, parent_of,
    storage_key,
};
pub use layout::{
    LAYOUT_FILE, SCRATCHPAD_DIR, SESSIONS_DIR, SPECS_DIR, STATE_FILE, STATE_TMP_FILE,
    TRANSCRIPT_FILE,
};
pub use lease::{Hold, Holders, LOCK_FILE, WriterLease};
pub use mem::MemStore;

/// A session as loaded: its last committed state and the transcript that state covers.
#[derive(Debug, Clone, PartialEq)]
pub struct Snapshot {
    /// The state of the last complete step.
    pub state: Value,
    /// The transcript messages covered by that state, in order.
    pub messages: Vec<Value>,
}

/// One committed step as the store keeps it ([`SessionStore::history`]).
#[derive(Debug, Clone, PartialEq)]
pub struct Checkpoint {
    /// 1-based, in commit order.
    pub step: u64,
    /// The transcript messages this step's state covers.
    pub transcript_len: u64,
    /// The state the step committed.
    pub state: Value,
    /// When the step was committed (epoch milliseconds); `None` for a step written before
    /// the store recorded it.
    pub at: Option<u64>,
}

/// Every committed step of a session and its whole transcript ([`SessionStore::history`]).
#[derive(Debug, Clone, PartialEq)]
pub struct History {
    /// The steps, oldest first; the last is the session's state ([`SessionStore::load`]).
    pub checkpoints: Vec<Checkpoint>,
    /// The transcript the last step covers.
    pub messages: Vec<Value>,
}

/// One step to commit: the messages added since the previous step and the new whole state.
#[derive(Debug, Clone, Copy)]
pub struct Step<'a> {
    /// Messages appended by this step (may be empty).
    pub new_messages: &'a [Value],
    /// The whole new state.
    pub state: &'a Value,
}

/// A [`Step`] that owns its parts, for a commit that completes on another thread
/// ([`SessionStore::commit_queued`]).
#[derive(Debug, Clone)]
pub struct OwnedStep {
    /// Messages appended by this step (may be empty).
    pub new_messages: Vec<Value>,
    /// The whole new state.
    pub state: Value,
}

impl OwnedStep {
    /// The step, borrowed.
    pub fn as_step(&self) -> Step<'_> {
        Step {
            new_messages: &self.new_messages,
            state: &self.state,
        }
    }
}

/// A load that answers later ([`SessionStore::load_later`]).
pub type LoadLater = std::pin::Pin<
    Box<dyn std::future::Future<Output = Result<Option<Snapshot>, StoreError>> + Send>,
>;

/// Durable per-session storage. Callers hold a [`WriterLease`] (from [`SessionStore::acquire`])
/// around the commits of a turn; the store does not re-check it on every commit.
pub trait SessionStore: Send + Sync {
    /// The last complete step of a session, or `None` when it has no committed state.
    fn load(&self, id: &SessionId) -> Result<Option<Snapshot>, StoreError>;

    /// The last committed state only (does not read the transcript).
    fn load_state(&self, id: &SessionId) -> Result<Option<Value>, StoreError>;

    /// Append `step.new_messages` to the transcript, then replace the state.
    fn commit(&self, id: &SessionId, step: Step<'_>) -> Result<(), StoreError>;

    /// [`commit`](Self::commit) of a step the caller gives away: the step comes back with
    /// the result (its state for the caller to keep as the committed one, its messages to
    /// restore when the commit failed), so neither side copies it. A store that keeps the
    /// messages (in memory) may move them in and give back none on success.
    fn commit_owned(&self, id: &SessionId, step: OwnedStep) -> (Result<(), StoreError>, OwnedStep) {
        let result = self.commit(id, step.as_step());
        (result, step)
    }

    /// Queues the commit on the store's own writer, which shares one sync among the
    /// commits waiting with it, and answers it through the receipt once the step is
    /// durable (what [`commit`](Self::commit) guarantees on return), with the step as
    /// [`commit_owned`](Self::commit_owned) gives it back (a durable one's messages are
    /// freed on the writer). The step comes back at once when the store has no such
    /// writer: the caller then commits it (the default).
    fn commit_queued(
        self: std::sync::Arc<Self>,
        id: &SessionId,
        step: OwnedStep,
    ) -> Result<CommitReceipt, OwnedStep> {
        let _ = id;
        Err(step)
    }

    /// The [`load`](Self::load) of a store whose answer comes later with no thread waiting
    /// for it (a host's JS store, answered on the JS thread): the turn awaits it instead of
    /// blocking the thread that polls it. `None` (the default): the caller calls `load`.
    fn load_later(self: std::sync::Arc<Self>, id: &SessionId) -> Option<LoadLater> {
        let _ = id;
        None
    }

    /// Every committed step of a session with the transcript its last step covers, for
    /// its history and a fork from any step; `None` when the session has no committed state.
    /// The default, for a store that keeps only the latest step (a host's store), answers
    /// [`StoreError::NoHistory`].
    fn history(&self, id: &SessionId) -> Result<Option<History>, StoreError> {
        Err(StoreError::NoHistory {
            id: id.as_str().to_owned(),
            store: self.kind(),
        })
    }

    /// Session ids in the store's directory order, skipping reserved names and folders without
    /// a readable state.
    fn list(&self) -> Result<Vec<String>, StoreError>;

    /// Delete a session and all its descendants (`<id>~…` child sessions). Absent is not an error.
    fn delete(&self, id: &SessionId) -> Result<(), StoreError>;

    /// Take the session's single writer slot; released when the lease is dropped. A second
    /// arrival gets [`StoreError::Busy`] naming the stored `status` (or `unknown`).
    fn acquire(&self, id: &SessionId) -> Result<WriterLease, StoreError>;

    /// Record the spec snapshot `_specs/<hash>.json`, only if absent.
    fn write_spec_snapshot(&self, hash: &str, spec: &Value) -> Result<(), StoreError>;

    /// Read a spec snapshot, `None` when absent.
    fn read_spec_snapshot(&self, hash: &str) -> Result<Option<Value>, StoreError>;

    /// The session's folder (`<root>/sessions/<id>` for the filesystem store; `None` in memory).
    fn session_dir(&self, id: &SessionId) -> Option<PathBuf>;

    /// Where the session's own files live (`scratchpad/`, offloaded results, whatever
    /// the agent writes): its folder on disk by default, the store's memory for the
    /// memory store. `None` for a store that keeps no files (the file tools then answer
    /// that they need a store that does).
    fn session_files(&self, id: &SessionId) -> Option<crate::files::SessionFiles> {
        self.session_dir(id)
            .map(crate::files::SessionFiles::on_disk)
    }

    /// The session files a host may seed (`Harness::seed_session`): files kept beyond
    /// this process. By default the session folder on disk; `None` for a store whose files
    /// live and die with it (the in-memory store).
    fn seedable_files(&self, id: &SessionId) -> Option<crate::files::SessionFiles> {
        self.session_dir(id)
            .map(crate::files::SessionFiles::on_disk)
    }

    /// What the store is, for messages (`filesystem`, `in-memory`, `host`).
    fn kind(&self) -> &'static str {
        "filesystem"
    }

    /// True when the store's operations wait on the disk (a commit's sync, a lock file, a
    /// read): an async caller then runs them on a blocking thread, so its own thread (Node's
    /// event loop, for a JS-driven turn) is not held, and concurrent sessions' syncs overlap.
    fn waits_on_disk(&self) -> bool {
        false
    }
}

/// The stored `status` of a session for a [`StoreError::Busy`] message, `unknown` if none.
pub fn busy(store: &dyn SessionStore, id: &SessionId) -> StoreError {
    let status = store
        .load_state(id)
        .ok()
        .flatten()
        .and_then(|s| s.get("status").and_then(Value::as_str).map(str::to_owned))
        .unwrap_or_else(|| "unknown".to_owned());
    StoreError::Busy {
        id: id.as_str().to_owned(),
        status,
    }
}

/// Spec hashes name files: ASCII letters and digits only, non-empty.
pub fn check_spec_hash(hash: &str) -> Result<(), StoreError> {
    if !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Ok(())
    } else {
        Err(StoreError::InvalidSpecHash {
            hash: hash.to_owned(),
        })
    }
}

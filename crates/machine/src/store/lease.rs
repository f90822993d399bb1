//! Single writer per session: an in-process registry plus, for the filesystem store, an
//! exclusive lock (`flock` on Unix, `LockFileEx` on Windows) on a session's `turn.lock`,
//! held for the lease's life. The kernel drops the lock when its holder dies, so a killed
//! writer's session is free at once, with no pid to judge and no file to take over.

use std::collections::HashSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::io::Write;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::StoreError;

/// Name of the cross-process lock file inside a session's `checkpoints/` folder. It stays
/// once made; its content (the last writer's pid) is for people, the lock is what counts.
pub const LOCK_FILE: &str = "turn.lock";

/// Unique suffixes for temporary file names within this process.
static COUNTER: AtomicU64 = AtomicU64::new(0);

/// A process-unique suffix `{pid}.{n}` for temporary file names.
pub(crate) fn unique_suffix() -> String {
    format!(
        "{}.{}",
        std::process::id(),
        COUNTER.fetch_add(1, Ordering::Relaxed)
    )
}

/// The sessions whose writer slot is held in this process (per store instance). A store
/// without a cross-process lock (in memory, a host's store) leases from one of these.
#[derive(Debug, Clone, Default)]
pub struct Holders(Arc<Mutex<HashSet<String>>>);

impl Holders {
    /// The writer slot of `id`, in process only; `None` while another lease holds it.
    pub fn lease(&self, id: &str) -> Option<WriterLease> {
        self.claim(id)
            .then(|| WriterLease::new(id.to_owned(), self.clone(), None))
    }

    /// Claim `id`; `false` when already held.
    pub fn claim(&self, id: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id.to_owned())
    }

    /// Whether `id` is held in this process.
    pub fn holds(&self, id: &str) -> bool {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .contains(id)
    }

    /// Release `id` (a claim that did not become a lease).
    pub fn release(&self, id: &str) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(id);
    }
}

/// What a store keeps for as long as a lease lives (the filesystem store: the locked
/// `turn.lock` and its open transcript; a database store: a value whose drop deletes its
/// lease row), dropped before the writer slot is released.
pub type Hold = Box<dyn Send + Sync>;

/// The single-writer slot of a session, released (the store's hold, then the registry
/// entry) on drop.
pub struct WriterLease {
    id: String,
    holders: Holders,
    hold: Option<Hold>,
}

impl std::fmt::Debug for WriterLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriterLease")
            .field("id", &self.id)
            .field("cross_process", &self.hold.is_some())
            .finish()
    }
}

impl WriterLease {
    pub(crate) fn new(id: String, holders: Holders, hold: Option<Hold>) -> Self {
        Self { id, holders, hold }
    }

    /// A lease whose slot in `holders` the caller has claimed ([`Holders::claim`]) and
    /// whose cross-process part `hold` keeps (a store outside this crate, e.g. a database
    /// row deleted when `hold` drops). On drop `hold` goes first, then the slot.
    pub fn with_hold(id: String, holders: Holders, hold: Hold) -> Self {
        Self::new(id, holders, Some(hold))
    }

    /// The session this lease holds.
    pub fn id(&self) -> &str {
        &self.id
    }
}

impl Drop for WriterLease {
    fn drop(&mut self) {
        // The cross-process lock goes first: once the slot is free in this process, a new
        // lease of this store must find the file unlocked too.
        drop(self.hold.take());
        self.holders.release(&self.id);
    }
}

/// Lock `<dir>/turn.lock` (made, with `dir`, when absent); `None` while another open
/// lock, in this process or another, holds it.
pub(crate) fn lock_file(id: &str, base: &Path, dir: &Path) -> Result<Option<File>, StoreError> {
    let path = dir.join(LOCK_FILE);
    let mut file = super::confine::open(
        base,
        &path,
        OpenOptions::new().write(true).create(true).truncate(false),
    )
    .map_err(StoreError::io(id, "open", &path))?;
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(None),
        Err(TryLockError::Error(e)) => return Err(StoreError::io(id, "lock", &path)(e)),
    }
    // For people looking at a busy session: who holds it. Not synced, and not read back.
    let pid = format!("{}\n", std::process::id());
    file.set_len(0)
        .and_then(|()| file.write_all(pid.as_bytes()))
        .map_err(StoreError::io(id, "write", &path))?;
    Ok(Some(file))
}

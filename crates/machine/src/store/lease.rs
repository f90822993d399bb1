//! Single writer per session: an in-process registry plus, for the filesystem store, an
//! exclusive lock (`flock` on Unix, `LockFileEx` on Windows) on a file of the session's
//! `checkpoints/` folder ([`LOCK_FILE`]), held for the lease's life. The kernel drops the
//! lock when its holder dies, so a killed writer's session is free at once, with no pid to
//! judge and no file to take over.

use std::collections::HashSet;
use std::fs::{File, OpenOptions, TryLockError};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use super::StoreError;

/// The file a filesystem lease locks, inside a session's `checkpoints/` folder.
///
/// On Unix it is the transcript itself. `flock` is advisory and belongs to the descriptor
/// that took it (unlike `fcntl`'s record locks, which any `close` of the file by the
/// process drops), so readers and the store's own writes through other descriptors go on
/// as before, and a new session makes one file fewer: a file created is the costliest
/// thing a new session does to the disk (an inode, a data block for a lock file's pid, and
/// on ext4 without a journal a scan past every recently freed inode).
#[cfg(unix)]
pub const LOCK_FILE: &str = super::layout::TRANSCRIPT_FILE;
/// The file a filesystem lease locks, inside a session's `checkpoints/` folder.
///
/// On Windows a lock is mandatory (it would refuse every other reader of the file), so the
/// lease locks a file of its own, which stays once made and names its last writer's pid
/// (for people; nothing reads it).
#[cfg(not(unix))]
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

/// What a store keeps for as long as a lease lives (the filesystem store: its locked
/// [`LOCK_FILE`] and the session's open transcript; a database store: a value whose drop
/// deletes its lease row), dropped before the writer slot is released.
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

/// A held session keeps two descriptors open (its lock and its transcript for writing), so
/// a process serving many sessions at once has thousands. On Linux a thread that grows a
/// shared descriptor table waits for an RCU grace period (milliseconds) with every other
/// thread's `open` queued behind it, and the table doubles several times on the way to a
/// thousand sessions. The first lock grows it once to this many slots (or the process's
/// limit): a few tens of KiB, never given back, as the kernel never shrinks the table.
#[cfg(target_os = "linux")]
const RESERVED_FDS: u64 = 8192;

/// Grows the descriptor table once per process (see [`RESERVED_FDS`]): a descriptor
/// duplicated at the top slot, closed at once. Best effort: a failure costs only speed.
fn reserve_fd_table(file: &File) {
    #[cfg(target_os = "linux")]
    {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let limit = rustix::process::getrlimit(rustix::process::Resource::Nofile)
                .current
                .unwrap_or(RESERVED_FDS);
            let top = RESERVED_FDS.min(limit).saturating_sub(1);
            if let Ok(top) = i32::try_from(top) {
                drop(rustix::io::fcntl_dupfd_cloexec(file, top));
            }
        });
    }
    #[cfg(not(target_os = "linux"))]
    let _ = file;
}

/// Lock `<dir>/`[`LOCK_FILE`] (made empty, with `dir`, when absent; on Unix, where it is the
/// transcript, never written); `None` while another open lock, in this process or another,
/// holds it.
pub(crate) fn lock_file(id: &str, base: &Path, dir: &Path) -> Result<Option<File>, StoreError> {
    let path = dir.join(LOCK_FILE);
    let file = super::confine::open(
        base,
        &path,
        OpenOptions::new().write(true).create(true).truncate(false),
    )
    .map_err(StoreError::io(id, "open", &path))?;
    reserve_fd_table(&file);
    match file.try_lock() {
        Ok(()) => {}
        Err(TryLockError::WouldBlock) => return Ok(None),
        Err(TryLockError::Error(e)) => return Err(StoreError::io(id, "lock", &path)(e)),
    }
    #[cfg(not(unix))]
    {
        // For people looking at a busy session: who holds it. Not synced, and not read back.
        use std::io::Write;
        let pid = format!("{}\n", std::process::id());
        let mut file = &file;
        file.set_len(0)
            .and_then(|()| file.write_all(pid.as_bytes()))
            .map_err(StoreError::io(id, "write", &path))?;
    }
    Ok(Some(file))
}

//! Single writer per session: an in-process registry plus, for the filesystem store, a
//! cross-process `turn.lock` file holding the writer's pid.

use std::collections::HashSet;
use std::fs::{self, OpenOptions};
use std::io::{ErrorKind, Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, SystemTime};

use super::StoreError;

/// Name of the cross-process lock file inside a session folder (holds the writer's pid).
pub const LOCK_FILE: &str = "turn.lock";

/// A lock file whose content cannot be read as a pid is taken over after this age (its creator
/// died between creating and writing it).
const UNREADABLE_LOCK_GRACE: Duration = Duration::from_secs(5);

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

/// What a store outside this crate runs when a lease is dropped (a database store deletes its
/// lease row), before the in-process slot is freed.
pub type Release = Box<dyn FnOnce() + Send + Sync>;

/// The single-writer slot of a session, released (registry entry and lock file) on drop.
pub struct WriterLease {
    id: String,
    holders: Holders,
    lock_file: Option<PathBuf>,
    release: Option<Release>,
}

impl std::fmt::Debug for WriterLease {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("WriterLease")
            .field("id", &self.id)
            .field("lock_file", &self.lock_file)
            .field("release", &self.release.is_some())
            .finish()
    }
}

impl WriterLease {
    pub(crate) fn new(id: String, holders: Holders, lock_file: Option<PathBuf>) -> Self {
        Self {
            id,
            holders,
            lock_file,
            release: None,
        }
    }

    /// A lease whose slot in `holders` the caller has claimed ([`Holders::claim`]) and whose
    /// cross-process part `release` gives back (a store keeping its lease elsewhere, e.g. a
    /// database row). On drop `release` runs first, then the in-process slot is freed.
    pub fn with_release(id: String, holders: Holders, release: Release) -> Self {
        Self {
            id,
            holders,
            lock_file: None,
            release: Some(release),
        }
    }

    /// The session this lease holds.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The cross-process lock file, when the store keeps one.
    pub fn lock_file(&self) -> Option<&Path> {
        self.lock_file.as_deref()
    }
}

impl Drop for WriterLease {
    fn drop(&mut self) {
        if let Some(release) = self.release.take() {
            release();
        }
        if let Some(path) = &self.lock_file {
            // Best effort: a missing file (session deleted meanwhile) is fine.
            let _ = fs::remove_file(path);
        }
        self.holders.release(&self.id);
    }
}

/// Result of trying to take a session folder's lock file.
pub(crate) enum LockAttempt {
    /// Created; holds our pid.
    Acquired(PathBuf),
    /// Held by a live writer.
    Held,
}

/// Take `<dir>/turn.lock` with `create_new`, taking over a stale one (dead pid).
pub(crate) fn acquire_lock_file(
    id: &str,
    base: &Path,
    dir: &Path,
) -> Result<LockAttempt, StoreError> {
    let path = dir.join(LOCK_FILE);
    for _ in 0..16 {
        super::confine::ensure_dir(base, dir).map_err(StoreError::io(id, "create folder", dir))?;
        match super::confine::no_follow(OpenOptions::new().write(true).create_new(true)).open(&path)
        {
            Ok(mut file) => {
                // Not synced: the lock only excludes live writers, and a machine that loses
                // power ends every one of them. (A sync here was an fdatasync on the turn's
                // thread, Node's event loop for a JS-driven turn, at every turn's start.)
                let written = file.write_all(own_lock_content().as_bytes());
                if let Err(e) = written {
                    let _ = fs::remove_file(&path);
                    return Err(StoreError::io(id, "write", &path)(e));
                }
                return Ok(LockAttempt::Acquired(path));
            }
            Err(e) if e.kind() == ErrorKind::AlreadyExists => {}
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(StoreError::io(id, "create", &path)(e)),
        }
        // Someone holds (or held) the lock: is it stale?
        let Some(content) = read_lock(id, &path)? else {
            continue; // released meanwhile
        };
        if !is_stale(&content, &path) {
            return Ok(LockAttempt::Held);
        }
        // Take over: move the stale file aside, then check that what we moved is what we judged.
        let aside = dir.join(format!("{LOCK_FILE}.{}.stale", unique_suffix()));
        match fs::rename(&path, &aside) {
            Ok(()) => {}
            Err(e) if e.kind() == ErrorKind::NotFound => continue,
            Err(e) => return Err(StoreError::io(id, "rename", &path)(e)),
        }
        let moved = read_lock(id, &aside)?;
        if moved.as_deref() == Some(content.as_str()) {
            let _ = fs::remove_file(&aside);
            continue; // retry create_new
        }
        // A racing writer replaced the stale lock with a live one: put it back and yield.
        let _ = fs::hard_link(&aside, &path);
        let _ = fs::remove_file(&aside);
        return Ok(LockAttempt::Held);
    }
    Ok(LockAttempt::Held)
}

/// The lock file's content, `None` when it does not exist.
fn read_lock(id: &str, path: &Path) -> Result<Option<String>, StoreError> {
    let mut text = String::new();
    match fs::File::open(path).and_then(|mut f| f.read_to_string(&mut text)) {
        Ok(_) => Ok(Some(text)),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
        // Non-UTF-8 garbage: judged by age like an empty file.
        Err(e) if e.kind() == ErrorKind::InvalidData => Ok(Some(String::new())),
        Err(e) => Err(StoreError::io(id, "read", path)(e)),
    }
}

/// `{pid}\n` plus, on Linux, `{start time}\n` (guards against pid reuse).
fn own_lock_content() -> String {
    let pid = std::process::id();
    match process_start_time("self") {
        Some(start) => format!("{pid}\n{start}\n"),
        None => format!("{pid}\n"),
    }
}

/// A lock is stale when its pid is not alive; unreadable content is stale once old enough.
fn is_stale(content: &str, path: &Path) -> bool {
    let mut lines = content.lines();
    let pid = lines.next().and_then(|l| l.trim().parse::<u32>().ok());
    let start = lines.next().and_then(|l| l.trim().parse::<u64>().ok());
    match pid {
        Some(pid) => !pid_alive(pid, start),
        None => fs::metadata(path)
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| SystemTime::now().duration_since(t).ok())
            .is_some_and(|age| age > UNREADABLE_LOCK_GRACE),
    }
}

/// Whether `pid` is a live process (and, when known, the one that started at `start`).
/// Without `/proc` liveness cannot be told and the pid is assumed alive.
pub(crate) fn pid_alive(pid: u32, start: Option<u64>) -> bool {
    if !Path::new("/proc/self/stat").exists() {
        return true;
    }
    let stat = match fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => stat,
        Err(e) => return e.kind() != ErrorKind::NotFound,
    };
    let Some(fields) = stat_fields(&stat) else {
        return true;
    };
    if matches!(fields.first(), Some(&"Z") | Some(&"X")) {
        return false; // zombie or dead
    }
    match (start, fields.get(19).and_then(|s| s.parse::<u64>().ok())) {
        (Some(recorded), Some(actual)) => recorded == actual,
        _ => true,
    }
}

/// The fields of `/proc/<pid>/stat` after the `(comm)` field: state first, start time at 19.
fn stat_fields(stat: &str) -> Option<Vec<&str>> {
    let (_, rest) = stat.rsplit_once(')')?;
    Some(rest.split_whitespace().collect())
}

/// A process's start time (clock ticks since boot) from `/proc/<pid>/stat`.
fn process_start_time(pid: &str) -> Option<u64> {
    let stat = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat_fields(&stat)?.get(19)?.parse().ok()
}

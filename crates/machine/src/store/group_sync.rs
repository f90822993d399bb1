//! Group commit: concurrent commits of one store share a filesystem sync.
//!
//! A commit writes its step (unsynced), then calls [`GroupSync::durable`]. The first caller
//! to find no sync running becomes the leader: it syncs the whole filesystem the store lives
//! on once (`syncfs`), which makes durable every write made before it started, and wakes
//! the callers whose writes that covers. Callers arriving meanwhile wait for the next sync,
//! which one of them leads. So N sessions committing at once pay about two syncs, not N,
//! and each commit still returns only when its own write is durable.
//!
//! Where `syncfs` does not exist (not Linux), each caller syncs its own file: the same
//! guarantee, without the sharing.

use std::fs::File;
use std::io;
use std::sync::{Condvar, Mutex, MutexGuard, PoisonError};

/// Tickets: every write is numbered once it is complete; a sync that starts after write
/// `n` completed makes writes `1..=n` durable.
#[derive(Debug, Default)]
struct Tickets {
    /// The number of the last complete write.
    written: u64,
    /// Every write up to this number is durable.
    synced: u64,
    /// A leader is syncing.
    syncing: bool,
    /// How many syncs ran (for tests of the sharing).
    syncs: u64,
}

/// The group commit of one store (see the module doc).
#[derive(Debug, Default)]
pub(crate) struct GroupSync {
    tickets: Mutex<Tickets>,
    done: Condvar,
}

impl GroupSync {
    fn lock(&self) -> MutexGuard<'_, Tickets> {
        self.tickets.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Returns once everything written to `file` before this call is durable (and, with
    /// `syncfs`, everything else written to its filesystem before the sync started).
    pub(crate) fn durable(&self, file: &File) -> io::Result<()> {
        if !SHARED {
            return file.sync_data();
        }
        let mut t = self.lock();
        t.written += 1;
        let mine = t.written;
        loop {
            if t.synced >= mine {
                return Ok(());
            }
            if t.syncing {
                t = self.done.wait(t).unwrap_or_else(PoisonError::into_inner);
                continue;
            }
            // Lead: sync for every write complete by now, this one included.
            t.syncing = true;
            let upto = t.written;
            drop(t);
            let result = sync_filesystem(file);
            t = self.lock();
            t.syncing = false;
            t.syncs += 1;
            if result.is_ok() {
                t.synced = t.synced.max(upto);
            }
            self.done.notify_all();
            // A failed sync fails its leader; the others try again and lead themselves.
            result?;
        }
    }
}

impl GroupSync {
    /// How many shared syncs ran so far.
    #[cfg(test)]
    pub(crate) fn syncs(&self) -> u64 {
        self.lock().syncs
    }

    /// Returns once everything written to each of `files` before this call is durable:
    /// one shared sync for all of them where a sync covers the whole filesystem (a
    /// batch of the store's commit thread), else each file's own.
    pub(crate) fn durable_all(&self, files: &[&File]) -> io::Result<()> {
        match files {
            [] => Ok(()),
            [first, ..] if SHARED => self.durable(first),
            _ => files.iter().try_for_each(|f| f.sync_data()),
        }
    }
}

/// True when one sync covers every file of the filesystem, folders included.
#[cfg(target_os = "linux")]
pub(crate) const SHARED: bool = true;
#[cfg(not(target_os = "linux"))]
pub(crate) const SHARED: bool = false;

#[cfg(target_os = "linux")]
fn sync_filesystem(file: &File) -> io::Result<()> {
    rustix::fs::syncfs(file).map_err(io::Error::from)
}

#[cfg(not(target_os = "linux"))]
fn sync_filesystem(file: &File) -> io::Result<()> {
    file.sync_data()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;
    use std::sync::Arc;

    /// Many threads committing at once all return, every write covered by a sync, and no
    /// leader left behind.
    #[test]
    fn concurrent_commits_all_return_and_share_syncs() {
        let dir = std::env::temp_dir().join(format!("archmax-group-sync-{}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("dir");
        let group = Arc::new(GroupSync::default());
        let threads: Vec<_> = (0..32)
            .map(|i| {
                let (group, path) = (Arc::clone(&group), dir.join(format!("f{i}")));
                std::thread::spawn(move || {
                    let mut f = File::create(&path).expect("create");
                    for _ in 0..10 {
                        f.write_all(b"step\n").expect("write");
                        group.durable(&f).expect("durable");
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().expect("thread");
        }
        let t = group.lock();
        assert_eq!(t.written, 320);
        assert_eq!(t.synced, 320, "every write is covered by a sync");
        assert!(!t.syncing);
        drop(t);
        let _ = std::fs::remove_dir_all(&dir);
    }
}

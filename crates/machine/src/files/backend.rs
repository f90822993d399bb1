//! Where a workspace's files are kept: the disk, or a session's files in the store's
//! memory (`super::memory`).
//!
//! The file tools, offloads, image reads and `archmax_run` reach files only through a
//! [`Backend`], one per [`Route`](super::route::Route): mounts and authored files are
//! always on disk; the session area is served by whatever the session store gives
//! ([`SessionFiles`]). A backend answers the few `std::fs` calls the tools make, with the
//! same [`io::ErrorKind`]s, so every result and refusal text is worded in one place
//! (`tools.rs`, `ops.rs`) whatever holds the bytes.
//!
//! ```
//! use std::path::Path;
//! use archmax_machine::files::{Backend, MemArea};
//!
//! let area = MemArea::new("/memory/s1");
//! area.create_dir_all(Path::new("/memory/s1/scratchpad")).unwrap();
//! area.write(Path::new("/memory/s1/scratchpad/a.md"), b"alpha").unwrap();
//! assert_eq!(area.read(Path::new("/memory/s1/scratchpad/a.md")).unwrap(), b"alpha");
//! assert!(area.meta(Path::new("/memory/s1/scratchpad")).unwrap().is_dir());
//! ```

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, LazyLock};

pub use archmax_spec::disk::ReadError;

/// What a path names, without following a link.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A regular file.
    File,
    /// A directory.
    Dir,
    /// A symbolic link (only on disk).
    Symlink,
    /// Anything else (a device, a socket, a pipe: only on disk).
    Other,
}

/// The metadata the file tools read: what a path is and, for a file, its size.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Meta {
    /// What the path names.
    pub kind: Kind,
    /// Size in bytes (files; 0 for directories in memory).
    pub len: u64,
}

impl Meta {
    /// A regular file.
    pub fn is_file(&self) -> bool {
        self.kind == Kind::File
    }

    /// A directory.
    pub fn is_dir(&self) -> bool {
        self.kind == Kind::Dir
    }

    /// A symbolic link.
    pub fn is_symlink(&self) -> bool {
        self.kind == Kind::Symlink
    }
}

/// Which part of [`Backend::write_making_folders`] failed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WriteStage {
    /// Making the file's folders.
    Folders,
    /// Writing the file.
    File,
}

/// The file operations the workspace tools use, on absolute paths. Each behaves as its
/// `std::fs` namesake on Linux, error kinds included (`NotFound`, `NotADirectory`,
/// `IsADirectory`, `PermissionDenied`), and never follows a link unless said so.
pub trait Backend: Send + Sync + fmt::Debug {
    /// True when an operation may wait on a disk, so an async caller runs the tools on a
    /// blocking thread (`files::run_tool_async`); false for memory.
    fn waits_on_disk(&self) -> bool {
        true
    }
    /// `fs::symlink_metadata`.
    fn meta(&self, path: &Path) -> io::Result<Meta>;
    /// `fs::read`.
    fn read(&self, path: &Path) -> io::Result<Vec<u8>>;
    /// The names in a directory (`fs::read_dir`), in no particular order; names that
    /// are not UTF-8 are left out.
    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>>;
    /// `fs::create_dir_all`.
    fn create_dir_all(&self, path: &Path) -> io::Result<()>;
    /// `fs::write`: creates or replaces a file whose parent exists.
    fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// `fs::remove_file`.
    fn remove_file(&self, path: &Path) -> io::Result<()>;
    /// [`Backend::write`], making the file's folders only when the write finds one missing
    /// (most writes land in a folder that exists: no look-ups or `mkdir`s for them). The
    /// error says which part failed.
    fn write_making_folders(
        &self,
        path: &Path,
        bytes: &[u8],
    ) -> Result<(), (WriteStage, io::Error)> {
        match self.write(path, bytes) {
            Err(e) if e.kind() == io::ErrorKind::NotFound => {
                if let Some(parent) = path.parent() {
                    self.create_dir_all(parent)
                        .map_err(|e| (WriteStage::Folders, e))?;
                }
                self.write(path, bytes).map_err(|e| (WriteStage::File, e))
            }
            other => other.map_err(|e| (WriteStage::File, e)),
        }
    }
    /// The runtime's own write (an offloaded result, a seeded file) of `path` under
    /// `base`, creating its folders and never following a link on the way
    /// (`store::confine::write_file` on disk).
    fn write_confined(&self, base: &Path, path: &Path, bytes: &[u8]) -> io::Result<()>;
    /// A regular file of at most `limit` bytes, following links
    /// (`archmax_spec::disk::read_regular`); `None` when nothing is there.
    fn read_regular(&self, path: &Path, limit: u64) -> Result<Option<Vec<u8>>, ReadError>;
}

/// The disk, through `std::fs`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

/// The one disk backend every route on disk shares.
pub fn disk() -> Arc<dyn Backend> {
    static DISK: LazyLock<Arc<dyn Backend>> = LazyLock::new(|| Arc::new(Disk));
    Arc::clone(&DISK)
}

impl Backend for Disk {
    fn meta(&self, path: &Path) -> io::Result<Meta> {
        let meta = std::fs::symlink_metadata(path)?;
        let ft = meta.file_type();
        let kind = if ft.is_symlink() {
            Kind::Symlink
        } else if ft.is_dir() {
            Kind::Dir
        } else if ft.is_file() {
            Kind::File
        } else {
            Kind::Other
        };
        Ok(Meta {
            kind,
            len: meta.len(),
        })
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        std::fs::read(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        Ok(std::fs::read_dir(path)?
            .flatten()
            .filter_map(|item| item.file_name().into_string().ok())
            .collect())
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        std::fs::create_dir_all(path)
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        std::fs::write(path, bytes)
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        std::fs::remove_file(path)
    }

    fn write_confined(&self, base: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
        crate::store::confine::write_file(base, path, bytes)
    }

    fn read_regular(&self, path: &Path, limit: u64) -> Result<Option<Vec<u8>>, ReadError> {
        archmax_spec::disk::read_regular(path, limit)
    }
}

/// Where a session's own files live (`scratchpad/`, `large_tool_results/`,
/// `conversation_history/`, whatever the agent writes), as its store gives them.
#[derive(Debug, Clone)]
pub struct SessionFiles {
    /// The session's folder: on disk `<store>/<id>`; in memory a path no disk serves.
    pub dir: PathBuf,
    /// What serves paths under `dir` (and the store root's `_specs/` beside it).
    pub backend: Arc<dyn Backend>,
}

impl SessionFiles {
    /// A session folder on disk.
    pub fn on_disk(dir: PathBuf) -> Self {
        SessionFiles {
            dir,
            backend: disk(),
        }
    }
}

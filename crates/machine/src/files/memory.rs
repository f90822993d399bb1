//! A session's files in memory: the area the memory store (and a host store) keeps for
//! each session, as the original's state backend keeps them.
//!
//! A [`MemArea`] is a small tree of folders and files under one virtual folder (the
//! session's). It answers exactly what the disk answers the same calls, error kinds
//! included, so the file tools' texts are the same byte for byte; it has no links, no
//! permissions and no clock. [`MemAreas`] holds one area per session of a store.
//!
//! **Bound.** One session's area holds at most [`MAX_BYTES`] of file content and
//! [`MAX_ENTRIES`] files and folders, each named by a path of at most [`MAX_PATH_BYTES`]
//! (names of at most [`MAX_NAME_BYTES`], as on disk); a write past a count fails with
//! [`io::ErrorKind::StorageFull`] and a text naming the limit ([`over_limit`]), which the
//! tools pass on to the model.

use std::collections::BTreeMap;
use std::fmt;
use std::io::{self, ErrorKind};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use super::backend::{Backend, Kind, Meta, ReadError};

/// The most file content one session's area holds: 64 MiB.
pub const MAX_BYTES: u64 = 64 * 1024 * 1024;
/// The most files and folders one session's area holds.
pub const MAX_ENTRIES: usize = 10_000;
/// The longest name in an area (the disk's `NAME_MAX`).
pub const MAX_NAME_BYTES: usize = 255;
/// The longest path in an area, relative to it (the disk's `PATH_MAX` less its NUL).
pub const MAX_PATH_BYTES: usize = 4095;
/// The virtual folder memory sessions live under; no disk serves it.
pub const MEMORY_ROOT: &str = "/archmax-memory/sessions";

/// The error of a write past an area's bound.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AreaFull {
    /// The content would pass [`MAX_BYTES`].
    Bytes,
    /// The files and folders would pass [`MAX_ENTRIES`].
    Entries,
}

impl fmt::Display for AreaFull {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            AreaFull::Bytes => write!(
                f,
                "the session's files would pass their limit of {} MiB in memory",
                MAX_BYTES / (1024 * 1024)
            ),
            AreaFull::Entries => write!(
                f,
                "the session's files would pass their limit of {MAX_ENTRIES} files and folders in memory"
            ),
        }
    }
}

impl std::error::Error for AreaFull {}

/// The reason to give when `e` is a memory area's bound, `None` for any other error.
pub fn over_limit(e: &io::Error) -> Option<String> {
    e.get_ref()
        .and_then(|inner| inner.downcast_ref::<AreaFull>())
        .map(ToString::to_string)
}

fn full(why: AreaFull) -> io::Error {
    io::Error::new(ErrorKind::StorageFull, why)
}

fn err(kind: ErrorKind) -> io::Error {
    io::Error::from(kind)
}

/// Why a path has no key in an area.
enum Miss {
    Outside,
    TooLong,
}

#[derive(Debug, Clone)]
enum Node {
    Dir,
    File(Vec<u8>),
}

#[derive(Debug, Default)]
struct Tree {
    /// Path (relative to the area, `/`-separated) → node; the area's own folder is implied.
    nodes: BTreeMap<String, Node>,
    /// Sum of the files' lengths.
    bytes: u64,
    /// Whether the store committed a step of the session yet.
    committed: bool,
}

impl Tree {
    /// Every proper ancestor of `key` must be a folder: `NotFound` for a missing one,
    /// `NotADirectory` for a file, as the disk answers.
    fn check_parents(&self, key: &str) -> io::Result<()> {
        for (i, _) in key.match_indices('/') {
            match self.nodes.get(&key[..i]) {
                Some(Node::Dir) => {}
                Some(Node::File(_)) => return Err(err(ErrorKind::NotADirectory)),
                None => return Err(err(ErrorKind::NotFound)),
            }
        }
        Ok(())
    }

    fn get(&self, key: &str) -> io::Result<&Node> {
        static ROOT: Node = Node::Dir;
        if key.is_empty() {
            return Ok(&ROOT);
        }
        self.check_parents(key)?;
        self.nodes.get(key).ok_or_else(|| err(ErrorKind::NotFound))
    }

    fn room_for_entry(&self) -> io::Result<()> {
        if self.nodes.len() >= MAX_ENTRIES {
            return Err(full(AreaFull::Entries));
        }
        Ok(())
    }
}

/// One session's files in memory, under the virtual folder `base`.
pub struct MemArea {
    base: PathBuf,
    tree: Mutex<Tree>,
}

impl fmt::Debug for MemArea {
    // The files' bytes stay out of debug output (a route or a workspace prints its backend).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let tree = self.tree();
        f.debug_struct("MemArea")
            .field("base", &self.base)
            .field("entries", &tree.nodes.len())
            .field("bytes", &tree.bytes)
            .finish()
    }
}

impl MemArea {
    /// An empty area serving the folder `base`.
    pub fn new(base: impl Into<PathBuf>) -> Self {
        MemArea {
            base: base.into(),
            tree: Mutex::default(),
        }
    }

    /// The folder the area serves.
    pub fn base(&self) -> &Path {
        &self.base
    }

    /// Bytes of file content held.
    pub fn bytes(&self) -> u64 {
        self.tree().bytes
    }

    fn tree(&self) -> MutexGuard<'_, Tree> {
        self.tree.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The area-relative key of `path`: `Outside` when the path is not under the area,
    /// `TooLong` for a name or a path the disk would refuse as too long.
    fn locate(&self, path: &Path) -> Result<String, Miss> {
        let rel = path.strip_prefix(&self.base).map_err(|_| Miss::Outside)?;
        let mut parts = Vec::new();
        for comp in rel.components() {
            match comp {
                Component::Normal(name) => {
                    let name = name.to_str().ok_or(Miss::Outside)?;
                    if name.len() > MAX_NAME_BYTES {
                        return Err(Miss::TooLong);
                    }
                    parts.push(name);
                }
                _ => return Err(Miss::Outside),
            }
        }
        let key = parts.join("/");
        if key.len() > MAX_PATH_BYTES {
            return Err(Miss::TooLong);
        }
        Ok(key)
    }

    /// The key of a path the area is asked to read: nothing outside it is there.
    fn key(&self, path: &Path) -> io::Result<String> {
        self.locate(path).map_err(|miss| match miss {
            Miss::Outside => err(ErrorKind::NotFound),
            Miss::TooLong => err(ErrorKind::InvalidFilename),
        })
    }

    /// The key of a path the area is asked to change: nothing outside it may be written.
    fn writable_key(&self, path: &Path) -> io::Result<String> {
        self.locate(path).map_err(|miss| match miss {
            Miss::Outside => err(ErrorKind::PermissionDenied),
            Miss::TooLong => err(ErrorKind::InvalidFilename),
        })
    }

    /// Marks the session's first commit: its `scratchpad/` is created then, as the
    /// filesystem store creates it. Later calls do nothing.
    pub fn first_commit(&self) -> io::Result<()> {
        let mut tree = self.tree();
        if tree.committed {
            return Ok(());
        }
        tree.committed = true;
        if !tree.nodes.contains_key(crate::store::SCRATCHPAD_DIR) {
            tree.room_for_entry()?;
            tree.nodes
                .insert(crate::store::SCRATCHPAD_DIR.to_string(), Node::Dir);
        }
        Ok(())
    }
}

impl Backend for MemArea {
    fn waits_on_disk(&self) -> bool {
        false
    }

    fn meta(&self, path: &Path) -> io::Result<Meta> {
        let key = self.key(path)?;
        Ok(match self.tree().get(&key)? {
            Node::Dir => Meta {
                kind: Kind::Dir,
                len: 0,
            },
            Node::File(bytes) => Meta {
                kind: Kind::File,
                len: bytes.len() as u64,
            },
        })
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        let key = self.key(path)?;
        match self.tree().get(&key)? {
            Node::Dir => Err(err(ErrorKind::IsADirectory)),
            Node::File(bytes) => Ok(bytes.clone()),
        }
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        let key = self.key(path)?;
        let tree = self.tree();
        if let Node::File(_) = tree.get(&key)? {
            return Err(err(ErrorKind::NotADirectory));
        }
        let prefix = if key.is_empty() {
            String::new()
        } else {
            format!("{key}/")
        };
        Ok(tree
            .nodes
            .range(prefix.clone()..)
            .take_while(|(k, _)| k.starts_with(&prefix))
            .filter_map(|(k, _)| {
                let name = &k[prefix.len()..];
                (!name.contains('/')).then(|| name.to_string())
            })
            .collect())
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        let key = self.writable_key(path)?;
        if key.is_empty() {
            return Ok(());
        }
        let mut tree = self.tree();
        let ends = key
            .match_indices('/')
            .map(|(i, _)| i)
            .chain(std::iter::once(key.len()));
        for end in ends {
            let sub = &key[..end];
            match tree.nodes.get(sub) {
                Some(Node::Dir) => {}
                Some(Node::File(_)) if end == key.len() => {
                    return Err(err(ErrorKind::AlreadyExists));
                }
                Some(Node::File(_)) => return Err(err(ErrorKind::NotADirectory)),
                None => {
                    tree.room_for_entry()?;
                    tree.nodes.insert(sub.to_string(), Node::Dir);
                }
            }
        }
        Ok(())
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        let key = self.writable_key(path)?;
        if key.is_empty() {
            return Err(err(ErrorKind::IsADirectory));
        }
        let mut tree = self.tree();
        tree.check_parents(&key)?;
        let old = match tree.nodes.get(&key) {
            Some(Node::Dir) => return Err(err(ErrorKind::IsADirectory)),
            Some(Node::File(old)) => Some(old.len() as u64),
            None => None,
        };
        if old.is_none() {
            tree.room_for_entry()?;
        }
        let total = tree.bytes - old.unwrap_or(0) + bytes.len() as u64;
        if total > MAX_BYTES {
            return Err(full(AreaFull::Bytes));
        }
        tree.bytes = total;
        tree.nodes.insert(key, Node::File(bytes.to_vec()));
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        let key = self.writable_key(path)?;
        let mut tree = self.tree();
        let len = match tree.get(&key)? {
            Node::Dir => return Err(err(ErrorKind::IsADirectory)),
            Node::File(bytes) => bytes.len() as u64,
        };
        tree.nodes.remove(&key);
        tree.bytes -= len;
        Ok(())
    }

    fn write_confined(&self, _base: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
        // Nothing in memory is a link, so confinement is the area itself.
        if let Some(parent) = path.parent() {
            self.create_dir_all(parent)?;
        }
        self.write(path, bytes)
    }

    fn read_regular(&self, path: &Path, limit: u64) -> Result<Option<Vec<u8>>, ReadError> {
        let key = match self.locate(path) {
            Ok(key) => key,
            Err(Miss::Outside) => return Ok(None),
            Err(Miss::TooLong) => {
                return Err(ReadError::Io(err(ErrorKind::InvalidFilename).to_string()));
            }
        };
        let tree = self.tree();
        match tree.get(&key) {
            Ok(Node::Dir) => Err(ReadError::NotRegular("a folder")),
            Ok(Node::File(bytes)) if bytes.len() as u64 > limit => Err(ReadError::TooLarge(limit)),
            Ok(Node::File(bytes)) => Ok(Some(bytes.clone())),
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(ReadError::Io(e.to_string())),
        }
    }
}

/// One [`MemArea`] per session of a store, made on first use.
#[derive(Debug, Default)]
pub struct MemAreas {
    areas: Mutex<BTreeMap<String, Arc<MemArea>>>,
}

impl MemAreas {
    /// No areas yet.
    pub fn new() -> Self {
        Self::default()
    }

    fn areas(&self) -> MutexGuard<'_, BTreeMap<String, Arc<MemArea>>> {
        self.areas.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The area of session `id` (served at `MEMORY_ROOT/<key>`, the id's storage key), made
    /// empty if it has none.
    pub fn area(&self, id: &str) -> Arc<MemArea> {
        Arc::clone(self.areas().entry(id.to_string()).or_insert_with(|| {
            Arc::new(MemArea::new(
                Path::new(MEMORY_ROOT).join(&*crate::store::storage_key(id)),
            ))
        }))
    }

    /// The area of session `id` if it has one (nothing is made).
    pub fn existing(&self, id: &str) -> Option<Arc<MemArea>> {
        self.areas().get(id).cloned()
    }

    /// The session files of `id`, for [`SessionStore::session_files`](crate::store::SessionStore::session_files).
    pub fn session_files(&self, id: &str) -> super::SessionFiles {
        let area = self.area(id);
        super::SessionFiles {
            dir: area.base().to_path_buf(),
            backend: area,
        }
    }

    /// Records a commit of session `id` (its first creates `scratchpad/`).
    pub fn committed(&self, id: &str) -> io::Result<()> {
        self.area(id).first_commit()
    }

    /// Drops the area of session `id` when a commit made it, for a store whose sessions
    /// can vanish behind its back (a host store that answers "no such session" for one
    /// whose files are still here): a new session of that id starts with no files.
    pub fn forget_committed(&self, id: &str) {
        let mut areas = self.areas();
        if areas.get(id).is_some_and(|a| a.tree().committed) {
            areas.remove(id);
        }
    }

    /// Drops the areas of session `id` and of its child sessions (`<id>~…`).
    pub fn remove(&self, id: &str) {
        self.areas()
            .retain(|k, _| k != id && !crate::store::is_descendant(id, k));
    }
}

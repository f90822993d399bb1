//! The one place this crate touches the file system: [`DiskFiles`], and the one reader every
//! file the harness reads goes through ([`read_within`]): workflows, `AGENTS.md`, hooks,
//! skills, case files and their fixtures, cassettes, `.env`, and a session store's records.
//! It reads a regular file only (never a FIFO, a device or a socket, which could block or
//! stream forever), at most a named number of bytes, and follows a link only when it stays
//! inside the folder the file is read from.

use std::fs::{File, OpenOptions};
use std::io::{ErrorKind, Read};
use std::path::{Component, Path, PathBuf};

use crate::workspace::{DirEntry, Files};

/// A workspace on disk, read through workspace-relative `/`-separated paths.
#[derive(Debug, Clone)]
pub struct DiskFiles {
    root: PathBuf,
}

impl DiskFiles {
    /// A workspace rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DiskFiles { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute path of a workspace-relative path; `None` if it climbs out.
    fn resolve(&self, rel: &str) -> Option<PathBuf> {
        let rel = Path::new(rel.trim_start_matches('/'));
        if rel
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return None;
        }
        Some(self.root.join(rel))
    }
}

impl Files for DiskFiles {
    fn read(&self, path: &str) -> Option<String> {
        self.read_checked(path).ok().flatten()
    }

    fn read_checked(&self, path: &str) -> Result<Option<String>, String> {
        let Some(p) = self.resolve(path) else {
            return Ok(None);
        };
        match read_within(&self.root, &p, MAX_AUTHORED_FILE_BYTES) {
            Ok(bytes) => Ok(bytes.map(|b| String::from_utf8_lossy(&b).into_owned())),
            Err(ReadError::NotFound) => Ok(None),
            Err(e) => Err(e.to_string()),
        }
    }

    fn list(&self, dir: &str) -> Vec<DirEntry> {
        let Some(p) = self.resolve(dir) else {
            return Vec::new();
        };
        let Ok(rd) = std::fs::read_dir(p) else {
            return Vec::new();
        };
        let mut out: Vec<DirEntry> = rd
            .filter_map(Result::ok)
            .filter_map(|e| {
                // Symlinked directories are not followed, as in the original.
                let ft = e.file_type().ok()?;
                Some(DirEntry {
                    name: e.file_name().to_string_lossy().into_owned(),
                    is_dir: ft.is_dir(),
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

/// The largest authored file the workspace reads (`workflow.yaml`, `WORKFLOW.md`, hook
/// scripts, `SKILL.md`, skill scripts, `AGENTS.md`, case files and fixtures, `.env`): 8 MiB.
pub const MAX_AUTHORED_FILE_BYTES: u64 = 8 * 1024 * 1024;

/// The largest cassette read (`*.cassette.json`, recorded model exchanges): 64 MiB.
pub const MAX_CASSETTE_BYTES: u64 = 64 * 1024 * 1024;

/// Why a file could not be read by [`read_regular`].
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ReadError {
    /// Nothing is there.
    #[error("does not exist")]
    NotFound,
    /// It is there, but not a regular file (after following links).
    #[error("is {0}, not a regular file")]
    NotRegular(&'static str),
    /// It holds more than the bound (in bytes).
    #[error("is larger than {}, the most this kind of file may hold", size(*.0))]
    TooLarge(u64),
    /// It is a link (or lies under one) that leads out of the folder it is read from.
    #[error("is a link that leads out of {}; links are followed only within it", .0.display())]
    Outside(PathBuf),
    /// Any other failure, as the system words it.
    #[error("cannot be read: {0}")]
    Io(String),
}

/// A byte count in words: `8 MiB`, `64 KiB`, `100 bytes`.
fn size(bytes: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    match bytes {
        b if b >= MIB && b % MIB == 0 => format!("{} MiB", b / MIB),
        b if b >= 1024 && b % 1024 == 0 => format!("{} KiB", b / 1024),
        b => format!("{b} bytes"),
    }
}

/// What a non-regular file is, in words.
fn kind_of(ft: std::fs::FileType) -> &'static str {
    if ft.is_dir() {
        return "a folder";
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::FileTypeExt;
        if ft.is_fifo() {
            return "a named pipe (FIFO)";
        }
        if ft.is_char_device() || ft.is_block_device() {
            return "a device";
        }
        if ft.is_socket() {
            return "a socket";
        }
    }
    "a special file"
}

fn io_error(e: &std::io::Error) -> ReadError {
    if e.kind() == ErrorKind::NotFound {
        ReadError::NotFound
    } else {
        ReadError::Io(e.to_string())
    }
}

/// Opens for reading without blocking on a FIFO that slipped in after the check.
fn open_nonblocking(path: &Path) -> std::io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    opts.open(path)
}

/// The bytes of the regular file at `path` (links followed), at most `limit` of them:
/// a FIFO, a device, a socket or a folder is refused before it is read (so nothing
/// blocks or streams forever), and so is a file longer than `limit`.
pub fn read_regular(path: &Path, limit: u64) -> Result<Option<Vec<u8>>, ReadError> {
    let meta = std::fs::metadata(path).map_err(|e| io_error(&e));
    let meta = match meta {
        Err(ReadError::NotFound) => return Ok(None),
        other => other?,
    };
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_of(meta.file_type())));
    }
    let file = open_nonblocking(path).map_err(|e| io_error(&e))?;
    // The file opened may not be the file checked: look again at what is open.
    let meta = file.metadata().map_err(|e| io_error(&e))?;
    if !meta.is_file() {
        return Err(ReadError::NotRegular(kind_of(meta.file_type())));
    }
    if meta.len() > limit {
        return Err(ReadError::TooLarge(limit));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    file.take(limit.saturating_add(1))
        .read_to_end(&mut bytes)
        .map_err(|e| io_error(&e))?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge(limit));
    }
    Ok(Some(bytes))
}

/// The bytes of the regular file at `path` (absolute, or relative to `dir`), read as
/// [`read_regular`] reads, when it lies inside `dir` once every link is resolved: a link that
/// leads out of `dir` is [`ReadError::Outside`], a dangling one is absent. `dir` itself may
/// be reached through links (a workspace in a linked folder).
pub fn read_within(dir: &Path, path: &Path, limit: u64) -> Result<Option<Vec<u8>>, ReadError> {
    let full = dir.join(path);
    let real = match std::fs::canonicalize(&full) {
        Ok(real) => real,
        Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_error(&e)),
    };
    let base = std::fs::canonicalize(dir).map_err(|e| io_error(&e))?;
    if !real.starts_with(&base) {
        return Err(ReadError::Outside(dir.to_path_buf()));
    }
    read_regular(&real, limit)
}

/// [`read_within`] as text (invalid UTF-8 replaced).
pub fn read_text_within(dir: &Path, path: &Path, limit: u64) -> Result<Option<String>, ReadError> {
    Ok(
        read_within(dir, path, limit)?.map(|b| match String::from_utf8(b) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }),
    )
}

#[cfg(all(test, unix))]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_within_the_bound_are_read() {
        let dir = std::env::temp_dir().join(format!("disk-read-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("ok.txt"), "hello").unwrap();
        std::os::unix::fs::symlink("/dev/zero", dir.join("zero")).unwrap();
        std::os::unix::fs::symlink(dir.join("ok.txt"), dir.join("link.txt")).unwrap();
        let fifo = std::process::Command::new("mkfifo")
            .arg(dir.join("fifo"))
            .status()
            .unwrap();
        assert!(fifo.success());
        assert_eq!(
            read_regular(&dir.join("ok.txt"), 5).unwrap().unwrap(),
            b"hello"
        );
        assert_eq!(
            read_regular(&dir.join("link.txt"), 5).unwrap().unwrap(),
            b"hello"
        );
        assert_eq!(
            read_regular(&dir.join("ok.txt"), 4),
            Err(ReadError::TooLarge(4))
        );
        assert_eq!(read_regular(&dir.join("none"), 4), Ok(None));
        assert_eq!(
            read_regular(&dir.join("fifo"), 4).unwrap_err().to_string(),
            "is a named pipe (FIFO), not a regular file"
        );
        assert_eq!(
            read_regular(&dir.join("zero"), 4).unwrap_err().to_string(),
            "is a device, not a regular file"
        );
        assert_eq!(
            read_regular(&dir, 4).unwrap_err().to_string(),
            "is a folder, not a regular file"
        );
        let _ = std::fs::remove_dir_all(&dir);
    }

    #[test]
    fn links_are_followed_only_within_the_folder_read_from() {
        let dir = std::env::temp_dir().join(format!("disk-within-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let inside = dir.join("ws");
        std::fs::create_dir_all(inside.join("sub")).unwrap();
        std::fs::write(dir.join("secret.txt"), "outside").unwrap();
        std::fs::write(inside.join("sub/a.txt"), "inside").unwrap();
        std::os::unix::fs::symlink("sub/a.txt", inside.join("near")).unwrap();
        std::os::unix::fs::symlink("../secret.txt", inside.join("far")).unwrap();
        std::os::unix::fs::symlink(&dir, inside.join("up")).unwrap();
        std::os::unix::fs::symlink("/dev/zero", inside.join("zero")).unwrap();
        std::os::unix::fs::symlink("missing", inside.join("dangling")).unwrap();
        let read = |p: &str| read_text_within(&inside, Path::new(p), 1024);
        assert_eq!(read("near").unwrap().as_deref(), Some("inside"));
        assert_eq!(read("sub/a.txt").unwrap().as_deref(), Some("inside"));
        assert_eq!(read("dangling").unwrap(), None);
        assert_eq!(read("none").unwrap(), None);
        for out in ["far", "up/secret.txt", "zero", "../secret.txt"] {
            assert_eq!(
                read(out).unwrap_err(),
                ReadError::Outside(inside.clone()),
                "{out}"
            );
        }
        assert_eq!(
            read("far").unwrap_err().to_string(),
            format!(
                "is a link that leads out of {}; links are followed only within it",
                inside.display()
            )
        );
        // The folder itself may sit behind a link.
        let linked = dir.join("linked-ws");
        std::os::unix::fs::symlink(&inside, &linked).unwrap();
        assert_eq!(
            read_text_within(&linked, Path::new("near"), 1024)
                .unwrap()
                .as_deref(),
            Some("inside")
        );
        assert_eq!(
            read_within(&inside, Path::new("sub/a.txt"), 3)
                .unwrap_err()
                .to_string(),
            "is larger than 3 bytes, the most this kind of file may hold"
        );
        assert_eq!(size(MAX_AUTHORED_FILE_BYTES), "8 MiB");
        let _ = std::fs::remove_dir_all(&dir);
    }
}

//! The runtime's own writes (checkpoints, the writer lease, spec snapshots, offloaded
//! results, seeded files, the scratchpad) stay inside the session store: every folder
//! between the store root and the target is created one at a time and must be a real
//! folder, and the file itself is opened without following a link. A symbolic link
//! planted anywhere on the way is refused, never followed.
//!
//! ```no_run
//! # use std::path::Path;
//! # fn demo() -> std::io::Result<()> {
//! use archmax_machine::store::confine;
//! let store = Path::new("/ws/sessions");
//! confine::write_file(store, &store.join("s1/large_tool_results/call_1"), b"...")?;
//! # Ok(()) }
//! ```

use std::fs::{self, File, OpenOptions};
use std::io::{self, ErrorKind, Write};
use std::path::{Component, Path};

/// The error for a link on the way: names the path.
fn link_error(path: &Path) -> io::Error {
    io::Error::other(format!(
        "'{}' is a symbolic link; the runtime writes only inside the session store and never follows a link",
        path.display()
    ))
}

fn not_a_folder(path: &Path) -> io::Error {
    io::Error::other(format!(
        "'{}' is not a folder; the runtime writes only inside the session store",
        path.display()
    ))
}

/// Creates `dir` (equal to or under `base`) one folder at a time, refusing any folder on
/// the way that is a symbolic link or not a folder. `base` itself is the host's choice
/// and may be reached through a link; it is created when missing.
pub fn ensure_dir(base: &Path, dir: &Path) -> io::Result<()> {
    let rel = dir.strip_prefix(base).map_err(|_| {
        io::Error::other(format!(
            "'{}' is outside the session store '{}'",
            dir.display(),
            base.display()
        ))
    })?;
    // One look-up when it exists (the usual case), instead of a failing `mkdir` and a stat.
    if !base.is_dir() {
        fs::create_dir_all(base)?;
    }
    let mut cur = base.to_path_buf();
    for comp in rel.components() {
        let Component::Normal(name) = comp else {
            return Err(io::Error::other(format!(
                "'{}' is not a plain path below the session store",
                dir.display()
            )));
        };
        cur.push(name);
        match fs::symlink_metadata(&cur) {
            Ok(meta) if meta.file_type().is_symlink() => return Err(link_error(&cur)),
            Ok(meta) if meta.is_dir() => {}
            Ok(_) => return Err(not_a_folder(&cur)),
            Err(e) if e.kind() == ErrorKind::NotFound => match fs::create_dir(&cur) {
                Ok(()) => {}
                // Another writer made it first: it must still be a real folder.
                Err(e) if e.kind() == ErrorKind::AlreadyExists => {
                    let meta = fs::symlink_metadata(&cur)?;
                    if meta.file_type().is_symlink() {
                        return Err(link_error(&cur));
                    }
                    if !meta.is_dir() {
                        return Err(not_a_folder(&cur));
                    }
                }
                Err(e) => return Err(e),
            },
            Err(e) => return Err(e),
        }
    }
    Ok(())
}

/// `opts` set not to follow a link at the file itself (the open fails on one).
pub fn no_follow(opts: &mut OpenOptions) -> &mut OpenOptions {
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NOFOLLOW);
    }
    opts
}

/// Opens `path` (under `base`) with `opts`, after [`ensure_dir`] on its folder and
/// without following a link at the file.
pub fn open(base: &Path, path: &Path, opts: &mut OpenOptions) -> io::Result<File> {
    if let Some(parent) = path.parent() {
        ensure_dir(base, parent)?;
    }
    // Without O_NOFOLLOW (not unix), look first.
    #[cfg(not(unix))]
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(link_error(path));
    }
    no_follow(opts).open(path).map_err(|e| named_link(path, e))
}

/// An open's failure, or the link error when `path` is a link (O_NOFOLLOW on a link fails
/// with ELOOP: say what it is).
fn named_link(path: &Path, e: io::Error) -> io::Error {
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        link_error(path)
    } else {
        e
    }
}

/// Opens the store's own record `path` for reading: never through a link at the file, and
/// only a regular file (a FIFO or a device is refused, not waited on). `NotFound` when
/// nothing is there.
pub fn open_record(path: &Path) -> io::Result<File> {
    let mut opts = OpenOptions::new();
    opts.read(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        opts.custom_flags(libc::O_NONBLOCK);
    }
    #[cfg(not(unix))]
    if fs::symlink_metadata(path).is_ok_and(|m| m.file_type().is_symlink()) {
        return Err(link_error(path));
    }
    let file = no_follow(&mut opts)
        .open(path)
        .map_err(|e| named_link(path, e))?;
    if !file.metadata()?.is_file() {
        return Err(io::Error::other(format!(
            "'{}' is not a regular file; the store reads only its own records",
            path.display()
        )));
    }
    Ok(file)
}

/// The bytes of the record `path` ([`open_record`]), at most `limit` of them.
pub fn read_record(path: &Path, limit: u64) -> io::Result<Vec<u8>> {
    use std::io::Read;
    let file = open_record(path)?;
    let len = file.metadata()?.len();
    let too_large = || {
        io::Error::other(format!(
            "'{}' is larger than {} MiB, the most a session record may hold",
            path.display(),
            limit / (1024 * 1024)
        ))
    };
    if len > limit {
        return Err(too_large());
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(limit.saturating_add(1)).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(too_large());
    }
    Ok(bytes)
}

/// Creates or truncates `path` (under `base`) and writes `bytes`, never through a link.
pub fn write_file(base: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
    let mut file = open(
        base,
        path,
        OpenOptions::new().write(true).create(true).truncate(true),
    )?;
    file.write_all(bytes)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn temp(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("confine-{}-{name}", std::process::id()));
        let _ = fs::remove_dir_all(&dir);
        fs::create_dir_all(&dir).unwrap();
        dir
    }

    #[cfg(unix)]
    #[test]
    fn a_link_on_the_way_or_at_the_file_is_refused_and_nothing_lands_outside() {
        let root = temp("links");
        let outside = root.join("outside");
        fs::create_dir_all(&outside).unwrap();
        let store = root.join("sessions");
        fs::create_dir_all(store.join("s1")).unwrap();
        std::os::unix::fs::symlink(&outside, store.join("s1/large_tool_results")).unwrap();
        let err = write_file(&store, &store.join("s1/large_tool_results/r"), b"x").unwrap_err();
        assert!(err.to_string().contains("is a symbolic link"), "{err}");
        std::os::unix::fs::symlink(outside.join("f"), store.join("s1/state.json")).unwrap();
        let err = write_file(&store, &store.join("s1/state.json"), b"x").unwrap_err();
        assert!(err.to_string().contains("s1/state.json"), "{err}");
        assert_eq!(fs::read_dir(&outside).unwrap().count(), 0);
        write_file(&store, &store.join("s1/scratchpad/a/b.txt"), b"ok").unwrap();
        assert_eq!(
            fs::read(store.join("s1/scratchpad/a/b.txt")).unwrap(),
            b"ok"
        );
        let _ = fs::remove_dir_all(&root);
    }
}

//! The filesystem store (the default): `<root>/sessions/<id>/`.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::lease::{self, Holders, LockAttempt, unique_suffix};
use super::{
    SessionId, SessionStore, Snapshot, Step, StoreError, WriterLease, busy, check_spec_hash,
    is_descendant,
};

/// Folder of the session store under the workspace root.
pub const SESSIONS_DIR: &str = "sessions";
/// Spec snapshot folder at the store root.
pub const SPECS_DIR: &str = "_specs";
/// The state file of a session.
pub const STATE_FILE: &str = "state.json";
/// The temporary state file renamed over [`STATE_FILE`].
pub const STATE_TMP_FILE: &str = "state.json.tmp";
/// The append-only transcript of a session.
pub const TRANSCRIPT_FILE: &str = "transcript.jsonl";
/// The agent working area, created on first commit.
pub const SCRATCHPAD_DIR: &str = "scratchpad";
/// Format tag of `state.json`.
const STATE_FORMAT: &str = "archmax-session-state/1";

/// The filesystem session store: `<root>/sessions/<id>/` per session, `_specs/` at the store root.
#[derive(Debug)]
pub struct FsStore {
    sessions: PathBuf,
    holders: Holders,
}

/// What `state.json` holds: the runtime's state and the transcript prefix it covers.
struct Envelope {
    transcript_len: u64,
    transcript_bytes: u64,
    state: Value,
}

impl FsStore {
    /// A store for the workspace at `workspace_root`: sessions under `<root>/sessions/`.
    /// Nothing is created until the first write.
    pub fn new(workspace_root: impl AsRef<Path>) -> Self {
        Self::with_sessions_dir(workspace_root.as_ref().join(SESSIONS_DIR))
    }

    /// A store rooted directly at `sessions_dir` (holds `_specs/` and the session folders).
    pub fn with_sessions_dir(sessions_dir: impl Into<PathBuf>) -> Self {
        Self {
            sessions: sessions_dir.into(),
            holders: Holders::default(),
        }
    }

    /// The store root (`<root>/sessions`).
    pub fn sessions_dir(&self) -> &Path {
        &self.sessions
    }

    /// The spec snapshot folder (`<root>/sessions/_specs`).
    pub fn specs_dir(&self) -> PathBuf {
        self.sessions.join(SPECS_DIR)
    }

    fn dir(&self, id: &SessionId) -> PathBuf {
        self.sessions.join(id.as_str())
    }

    /// Read `state.json`; `None` when absent.
    fn read_envelope(id: &str, dir: &Path) -> Result<Option<Envelope>, StoreError> {
        let path = dir.join(STATE_FILE);
        let bytes = match fs::read(&path) {
            Ok(bytes) => bytes,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(StoreError::io(id, "read", path)(e)),
        };
        let corrupt = |detail: String| StoreError::Corrupt {
            id: id.to_owned(),
            path: path.clone(),
            detail,
        };
        let value: Value =
            serde_json::from_slice(&bytes).map_err(|e| corrupt(format!("not JSON: {e}")))?;
        let mut obj = match value {
            Value::Object(obj) => obj,
            _ => return Err(corrupt("not a JSON object".to_owned())),
        };
        if obj.get("format").and_then(Value::as_str) != Some(STATE_FORMAT) {
            return Err(corrupt(format!("format is not '{STATE_FORMAT}'")));
        }
        let num = |key: &str| obj.get(key).and_then(Value::as_u64);
        let (Some(transcript_len), Some(transcript_bytes)) =
            (num("transcript_len"), num("transcript_bytes"))
        else {
            return Err(corrupt(
                "missing transcript_len / transcript_bytes".to_owned(),
            ));
        };
        let state = obj.remove("state").unwrap_or(Value::Null);
        Ok(Some(Envelope {
            transcript_len,
            transcript_bytes,
            state,
        }))
    }

    /// Replace `state.json` atomically: temp + fsync + rename, and a directory
    /// fsync when the folder's entries are new (`sync_folder`).
    ///
    /// Later steps skip the directory fsync: the rename is atomic either way, and
    /// if a power loss drops it, the previous `state.json` is still complete and
    /// simply covers one step fewer (its transcript prefix was synced before it was
    /// written). A killed process loses nothing: the page cache survives it.
    fn write_envelope(
        id: &str,
        dir: &Path,
        env: &Envelope,
        sync_folder: bool,
    ) -> Result<(), StoreError> {
        let mut obj = Map::new();
        obj.insert("format".to_owned(), Value::from(STATE_FORMAT));
        obj.insert("transcript_len".to_owned(), Value::from(env.transcript_len));
        obj.insert(
            "transcript_bytes".to_owned(),
            Value::from(env.transcript_bytes),
        );
        obj.insert("state".to_owned(), env.state.clone());
        let mut bytes =
            serde_json::to_vec(&Value::Object(obj)).map_err(|source| StoreError::Encode {
                id: id.to_owned(),
                source,
            })?;
        bytes.push(b'\n');
        let tmp = dir.join(STATE_TMP_FILE);
        let target = dir.join(STATE_FILE);
        write_synced(&tmp, &bytes).map_err(StoreError::io(id, "write", &tmp))?;
        fs::rename(&tmp, &target).map_err(StoreError::io(id, "rename", &tmp))?;
        if sync_folder {
            sync_dir(dir).map_err(StoreError::io(id, "sync folder", dir))?;
        }
        Ok(())
    }

    /// Read the covered transcript prefix: `len` lines in the first `bytes` bytes.
    fn read_transcript(
        id: &str,
        dir: &Path,
        len: u64,
        bytes: u64,
    ) -> Result<Vec<Value>, StoreError> {
        let path = dir.join(TRANSCRIPT_FILE);
        let corrupt = |detail: String| StoreError::Corrupt {
            id: id.to_owned(),
            path: path.clone(),
            detail,
        };
        if bytes == 0 {
            return if len == 0 {
                Ok(Vec::new())
            } else {
                Err(corrupt(format!("state covers {len} lines in 0 bytes")))
            };
        }
        let file = match File::open(&path) {
            Ok(file) => file,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                return Err(corrupt(format!(
                    "missing, but the state covers {len} lines"
                )));
            }
            Err(e) => return Err(StoreError::io(id, "open", &path)(e)),
        };
        let mut buf = Vec::with_capacity(usize::try_from(bytes).unwrap_or(0));
        file.take(bytes)
            .read_to_end(&mut buf)
            .map_err(StoreError::io(id, "read", &path))?;
        if (buf.len() as u64) < bytes {
            return Err(corrupt(format!(
                "holds {} bytes, but the state covers {bytes}",
                buf.len()
            )));
        }
        let Some(body) = buf.strip_suffix(b"\n") else {
            return Err(corrupt(format!("byte {bytes} does not end a line")));
        };
        let mut messages = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
        for (n, line) in body.split(|b| *b == b'\n').enumerate() {
            let msg = serde_json::from_slice(line)
                .map_err(|e| corrupt(format!("line {}: {e}", n + 1)))?;
            messages.push(msg);
        }
        if messages.len() as u64 != len {
            return Err(corrupt(format!(
                "{} lines in the covered bytes, but the state covers {len}",
                messages.len()
            )));
        }
        Ok(messages)
    }
}

impl SessionStore for FsStore {
    fn load(&self, id: &SessionId) -> Result<Option<Snapshot>, StoreError> {
        let dir = self.dir(id);
        let Some(env) = Self::read_envelope(id.as_str(), &dir)? else {
            return Ok(None);
        };
        let messages =
            Self::read_transcript(id.as_str(), &dir, env.transcript_len, env.transcript_bytes)?;
        Ok(Some(Snapshot {
            state: env.state,
            messages,
        }))
    }

    fn load_state(&self, id: &SessionId) -> Result<Option<Value>, StoreError> {
        Ok(Self::read_envelope(id.as_str(), &self.dir(id))?.map(|env| env.state))
    }

    fn commit(&self, id: &SessionId, step: Step<'_>) -> Result<(), StoreError> {
        let sid = id.as_str();
        let dir = self.dir(id);
        let prev = Self::read_envelope(sid, &dir)?;
        let first = prev.is_none();
        if first {
            let scratch = dir.join(SCRATCHPAD_DIR);
            fs::create_dir_all(&scratch).map_err(StoreError::io(sid, "create folder", &scratch))?;
        }
        let (mut len, mut bytes) = prev
            .map(|e| (e.transcript_len, e.transcript_bytes))
            .unwrap_or((0, 0));

        if !step.new_messages.is_empty() {
            let mut buf = Vec::new();
            for msg in step.new_messages {
                serde_json::to_writer(&mut buf, msg).map_err(|source| StoreError::Encode {
                    id: sid.to_owned(),
                    source,
                })?;
                buf.push(b'\n');
            }
            let path = dir.join(TRANSCRIPT_FILE);
            let mut file = OpenOptions::new()
                .write(true)
                .create(true)
                .truncate(false)
                .open(&path)
                .map_err(StoreError::io(sid, "open", &path))?;
            let on_disk = file
                .metadata()
                .map_err(StoreError::io(sid, "stat", &path))?
                .len();
            if on_disk < bytes {
                return Err(StoreError::Corrupt {
                    id: sid.to_owned(),
                    path,
                    detail: format!("holds {on_disk} bytes, but the state covers {bytes}"),
                });
            }
            if on_disk > bytes {
                // Lines of a step that crashed before its state write, or a torn line.
                file.set_len(bytes)
                    .map_err(StoreError::io(sid, "truncate", &path))?;
            }
            file.seek(SeekFrom::Start(bytes))
                .map_err(StoreError::io(sid, "seek", &path))?;
            file.write_all(&buf)
                .and_then(|()| file.sync_data())
                .map_err(StoreError::io(sid, "append to", &path))?;
            len += step.new_messages.len() as u64;
            bytes += buf.len() as u64;
        }

        let env = Envelope {
            transcript_len: len,
            transcript_bytes: bytes,
            state: step.state.clone(),
        };
        Self::write_envelope(sid, &dir, &env, first)?;
        if first && let Some(parent) = dir.parent() {
            // Make the new session folder's entry durable too.
            sync_dir(parent).map_err(StoreError::io(sid, "sync folder", parent))?;
        }
        Ok(())
    }

    fn list(&self) -> Result<Vec<String>, StoreError> {
        let entries = match fs::read_dir(&self.sessions) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(Vec::new()),
            Err(e) => return Err(StoreError::store_io("list", &self.sessions)(e)),
        };
        let mut ids = Vec::new();
        for entry in entries {
            let entry = entry.map_err(StoreError::store_io("list", &self.sessions))?;
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            // Reserved names (`_specs`, session areas) and otherwise invalid names are skipped.
            let Ok(id) = SessionId::parse(&name) else {
                continue;
            };
            if id.as_str() != name || !entry.path().is_dir() {
                continue;
            }
            if let Ok(Some(_)) = Self::read_envelope(&name, &entry.path()) {
                ids.push(name);
            }
        }
        Ok(ids)
    }

    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        let sid = id.as_str();
        let dir = self.dir(id);
        remove_tree(sid, &dir)?;
        let (Some(parent), Some(base)) = (dir.parent(), dir.file_name().and_then(|b| b.to_str()))
        else {
            return Ok(());
        };
        let entries = match fs::read_dir(parent) {
            Ok(entries) => entries,
            Err(e) if e.kind() == ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(StoreError::io(sid, "list", parent)(e)),
        };
        for entry in entries {
            let entry = entry.map_err(StoreError::io(sid, "list", parent))?;
            if let Ok(name) = entry.file_name().into_string()
                && is_descendant(base, &name)
            {
                remove_tree(sid, &entry.path())?;
            }
        }
        Ok(())
    }

    fn acquire(&self, id: &SessionId) -> Result<WriterLease, StoreError> {
        if !self.holders.claim(id.as_str()) {
            return Err(busy(self, id));
        }
        match lease::acquire_lock_file(id.as_str(), &self.dir(id)) {
            Ok(LockAttempt::Acquired(path)) => Ok(WriterLease::new(
                id.as_str().to_owned(),
                self.holders.clone(),
                Some(path),
            )),
            Ok(LockAttempt::Held) => {
                self.holders.release(id.as_str());
                Err(busy(self, id))
            }
            Err(e) => {
                self.holders.release(id.as_str());
                Err(e)
            }
        }
    }

    fn write_spec_snapshot(&self, hash: &str, spec: &Value) -> Result<(), StoreError> {
        check_spec_hash(hash)?;
        let dir = self.specs_dir();
        let path = dir.join(format!("{hash}.json"));
        if path.exists() {
            return Ok(());
        }
        fs::create_dir_all(&dir).map_err(StoreError::store_io("create folder", &dir))?;
        let mut bytes = serde_json::to_vec_pretty(spec).map_err(|source| StoreError::Encode {
            id: hash.to_owned(),
            source,
        })?;
        bytes.push(b'\n');
        let tmp = dir.join(format!(".{hash}.json.{}.tmp", unique_suffix()));
        write_synced(&tmp, &bytes).map_err(StoreError::store_io("write", &tmp))?;
        // Same hash ⇒ same content, so a racing writer's rename is harmless.
        if let Err(e) = fs::rename(&tmp, &path) {
            let _ = fs::remove_file(&tmp);
            return Err(StoreError::store_io("rename", &tmp)(e));
        }
        sync_dir(&dir).map_err(StoreError::store_io("sync folder", &dir))
    }

    fn read_spec_snapshot(&self, hash: &str) -> Result<Option<Value>, StoreError> {
        check_spec_hash(hash)?;
        let path = self.specs_dir().join(format!("{hash}.json"));
        match fs::read(&path) {
            Ok(bytes) => {
                serde_json::from_slice(&bytes)
                    .map(Some)
                    .map_err(|e| StoreError::StoreIo {
                        path,
                        op: "parse",
                        source: e.into(),
                    })
            }
            Err(e) if e.kind() == ErrorKind::NotFound => Ok(None),
            Err(e) => Err(StoreError::store_io("read", path)(e)),
        }
    }

    fn session_dir(&self, id: &SessionId) -> Option<PathBuf> {
        Some(self.dir(id))
    }
}

/// Create/truncate `path`, write `bytes`, fsync.
fn write_synced(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = File::create(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Fsync a folder so renames and new entries in it are durable (no-op off Unix).
fn sync_dir(dir: &Path) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        File::open(dir)?.sync_all()
    }
    #[cfg(not(unix))]
    {
        let _ = dir;
        Ok(())
    }
}

/// Remove a folder tree; absent is fine.
fn remove_tree(id: &str, path: &Path) -> Result<(), StoreError> {
    match fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == ErrorKind::NotFound => Ok(()),
        Err(e) => Err(StoreError::io(id, "remove", path)(e)),
    }
}

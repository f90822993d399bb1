//! The filesystem store (the default): `<root>/sessions/<id>/`.

use std::collections::HashMap;
use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::Value;

use super::confine;
use super::layout::{
    CHECKPOINTS_DIR, SCRATCHPAD_DIR, SESSIONS_DIR, SPECS_DIR, STATE_FILE, STATE_TMP_FILE,
    TRANSCRIPT_FILE,
};
use super::lease::{self, Holders, unique_suffix};
use super::{
    Checkpoint, CommitReceipt, History, OwnedStep, SessionId, SessionStore, Snapshot, Step,
    StoreError, WriterLease, busy, check_spec_hash,
};

/// The largest `state.json` read (the state of one step: position, variables, park): 64 MiB.
const MAX_STATE_BYTES: u64 = 64 * 1024 * 1024;
/// Format tag of `state.json`.
const STATE_FORMAT: &str = "archmax-session-state/1";
/// The key of a checkpoint line in the transcript: `{"archmax_checkpoint": {…}}`.
const CHECKPOINT_KEY: &str = "archmax_checkpoint";

/// The filesystem session store: `<root>/sessions/<id>/` per session, `_specs/` at the store root.
#[derive(Debug)]
pub struct FsStore {
    sessions: PathBuf,
    holders: Holders,
    /// The last durable step of each session this store wrote since it acquired
    /// it, so a commit needs no read.
    tips: Tips,
    /// Concurrent commits share a filesystem sync (group commit).
    group: super::group_sync::GroupSync,
    /// The thread that runs queued commits ([`SessionStore::commit_queued`]).
    committer: Arc<super::committer::Committer<FsStore>>,
}

type Tips = Arc<Mutex<HashMap<String, Tip>>>;

/// Where a session's transcript ends, and how many commits ago `state.json` was
/// last written; while a lease of this store holds the session, its open transcript too,
/// so a commit is one positioned write and one (shared) sync.
#[derive(Debug, Clone)]
struct Tip {
    len: u64,
    bytes: u64,
    since_cache: u32,
    /// The last commit's state was `running`.
    running: bool,
    transcript: Option<Arc<File>>,
    /// The session has no checkpoint on disk yet: its `scratchpad/` and transcript (cut
    /// of whatever a crashed first commit left) are made by the lease's load, or by the
    /// next commit when the load could not.
    fresh: bool,
}

/// What a filesystem lease holds: its locked [`LOCK_FILE`](lease::LOCK_FILE), and (through
/// the store's tip) the session's open transcript, closed when the lease ends.
struct FsHold {
    id: String,
    tips: Tips,
    _lock: File,
}

impl Drop for FsHold {
    fn drop(&mut self) {
        if let Ok(mut tips) = self.tips.lock() {
            tips.remove(&self.id);
        }
    }
}

/// A step written to the transcript, not yet durable: what the commit's second half needs.
pub(super) struct Written {
    id: String,
    session: PathBuf,
    dir: PathBuf,
    path: PathBuf,
    file: Arc<File>,
    first: bool,
    /// The `state.json` cache to write once the step is durable ([`envelope_bytes`]).
    cache: Option<Vec<u8>>,
    /// The session's tip after this step (its open transcript set by `finish`).
    tip: Tip,
}

impl Written {
    pub(super) fn file(&self) -> &File {
        &self.file
    }
    pub(super) fn path(&self) -> &Path {
        &self.path
    }
}

/// `state.json` is rewritten at least every this many commits (and whenever the
/// session leaves `running`), which bounds a reader's tail scan.
const CACHE_EVERY: u32 = 32;

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
    /// Folders of an earlier layout (named by their ids, not their keys) are renamed once
    /// (`store/layout.rs`).
    pub fn with_sessions_dir(sessions_dir: impl Into<PathBuf>) -> Self {
        let sessions = sessions_dir.into();
        super::layout::upgrade(&sessions);
        Self {
            sessions,
            holders: Holders::default(),
            tips: Tips::default(),
            group: super::group_sync::GroupSync::default(),
            committer: Arc::default(),
        }
    }

    /// The group commit its commits share.
    pub(super) fn group(&self) -> &super::group_sync::GroupSync {
        &self.group
    }

    /// The store root (`<root>/sessions`).
    pub fn sessions_dir(&self) -> &Path {
        &self.sessions
    }

    /// The spec snapshot folder (`<root>/sessions/_specs`).
    pub fn specs_dir(&self) -> PathBuf {
        self.sessions.join(SPECS_DIR)
    }

    /// The session's folder, named by its storage key (never by the id itself).
    fn dir(&self, id: &SessionId) -> PathBuf {
        self.sessions.join(&*id.key())
    }

    /// Where the session's state, transcript and lease live.
    fn checkpoints(&self, id: &SessionId) -> PathBuf {
        self.dir(id).join(CHECKPOINTS_DIR)
    }

    /// Read `state.json`; `None` when absent.
    fn read_envelope(id: &str, dir: &Path) -> Result<Option<Envelope>, StoreError> {
        let path = dir.join(STATE_FILE);
        let bytes = match confine::read_record(&path, MAX_STATE_BYTES) {
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

    /// Replace `state.json` atomically (temp + rename) with `bytes` (from
    /// [`envelope_bytes`]). It is a cache of the transcript's last checkpoint line, which is
    /// what makes a step durable, so it is not synced: a killed process loses nothing (the
    /// page cache survives it), and after a power loss a missing, stale or torn cache is
    /// rebuilt from the transcript's checkpoint lines.
    fn write_envelope(id: &str, base: &Path, dir: &Path, bytes: &[u8]) -> Result<(), StoreError> {
        let tmp = dir.join(STATE_TMP_FILE);
        let target = dir.join(STATE_FILE);
        confine::write_file(base, &tmp, bytes).map_err(StoreError::io(id, "write", &tmp))?;
        fs::rename(&tmp, &target).map_err(StoreError::io(id, "rename", &tmp))
    }

    /// The last durable step: `state.json`'s envelope, advanced past any complete
    /// checkpoint lines the transcript holds beyond it (a crash between a synced
    /// append and the cache write leaves such lines). Reads only the transcript's
    /// tail past the cache, so the cost does not grow with the transcript. Without
    /// a usable cache the whole transcript is scanned.
    fn durable_envelope(id: &str, dir: &Path) -> Result<Option<Envelope>, StoreError> {
        let cache = match Self::read_envelope(id, dir) {
            Ok(env) => env,
            Err(StoreError::Corrupt { .. }) => None,
            Err(e) => return Err(e),
        };
        let path = dir.join(TRANSCRIPT_FILE);
        let (start, base_len) = cache
            .as_ref()
            .map_or((0, 0), |e| (e.transcript_bytes, e.transcript_len));
        let mut file = match confine::open_record(&path) {
            Ok(f) => f,
            Err(e) if e.kind() == ErrorKind::NotFound => {
                if start > 0 {
                    return Err(StoreError::Corrupt {
                        id: id.to_owned(),
                        path,
                        detail: format!("missing, but the state covers {base_len} lines"),
                    });
                }
                return Ok(cache);
            }
            Err(e) => return Err(StoreError::io(id, "open", &path)(e)),
        };
        let size = file
            .metadata()
            .map_err(StoreError::io(id, "stat", &path))?
            .len();
        if size < start {
            return Err(StoreError::Corrupt {
                id: id.to_owned(),
                path,
                detail: format!("holds {size} bytes, but the state covers {start}"),
            });
        }
        if size == start {
            return Ok(cache);
        }
        file.seek(SeekFrom::Start(start))
            .map_err(StoreError::io(id, "seek", &path))?;
        let mut tail = Vec::new();
        file.read_to_end(&mut tail)
            .map_err(StoreError::io(id, "read", &path))?;
        let mut latest = cache;
        let (mut offset, mut lines) = (start, base_len);
        let mut rest: &[u8] = &tail;
        while let Some(end) = rest.iter().position(|b| *b == b'\n') {
            let (line, after) = rest.split_at(end + 1);
            rest = after;
            offset += line.len() as u64;
            let Ok(value) = serde_json::from_slice::<Value>(line) else {
                break;
            };
            match checkpoint_state(&value) {
                Some(state) => {
                    latest = Some(Envelope {
                        transcript_len: lines,
                        transcript_bytes: offset,
                        state: state.clone(),
                    })
                }
                None => lines += 1,
            }
        }
        Ok(latest)
    }

    /// Open the transcript for a commit that holds no open one: through real folders only
    /// (a link planted in the session folder is refused, not followed), made with its
    /// folders for a new session, and cut back to the last checkpoint when a crashed step
    /// left lines (or a torn line) past it.
    fn open_transcript(
        &self,
        sid: &str,
        session: &Path,
        path: &Path,
        bytes: u64,
        first: bool,
    ) -> Result<File, StoreError> {
        if first {
            let folder = session.join(SCRATCHPAD_DIR);
            confine::ensure_dir(&self.sessions, &folder).map_err(StoreError::io(
                sid,
                "create folder",
                &folder,
            ))?;
        }
        let file = confine::open(
            &self.sessions,
            path,
            OpenOptions::new().write(true).create(true).truncate(false),
        )
        .map_err(StoreError::io(sid, "open", path))?;
        let on_disk = file
            .metadata()
            .map_err(StoreError::io(sid, "stat", path))?
            .len();
        if on_disk < bytes {
            return Err(StoreError::Corrupt {
                id: sid.to_owned(),
                path: path.to_owned(),
                detail: format!("holds {on_disk} bytes, but the state covers {bytes}"),
            });
        }
        if on_disk > bytes {
            file.set_len(bytes)
                .map_err(StoreError::io(sid, "truncate", path))?;
        }
        Ok(file)
    }

    /// Read the covered transcript prefix: `len` lines in the first `bytes` bytes.
    fn read_transcript(
        id: &str,
        dir: &Path,
        len: u64,
        bytes: u64,
    ) -> Result<Vec<Value>, StoreError> {
        Self::read_lines(id, dir, len, bytes, None)
    }

    /// Read the covered transcript prefix, `len` messages in the first `bytes` bytes, and,
    /// into `steps` when given, the checkpoint lines between them (numbered from 1).
    fn read_lines(
        id: &str,
        dir: &Path,
        len: u64,
        bytes: u64,
        mut steps: Option<&mut Vec<Checkpoint>>,
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
        let file = match confine::open_record(&path) {
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
            let msg: Value = serde_json::from_slice(line)
                .map_err(|e| corrupt(format!("line {}: {e}", n + 1)))?;
            match into_checkpoint(msg) {
                Ok(mut checkpoint) => {
                    if let Some(steps) = steps.as_deref_mut() {
                        checkpoint.step = steps.len() as u64 + 1;
                        steps.push(checkpoint);
                    }
                }
                Err(msg) => messages.push(msg),
            }
        }
        if messages.len() as u64 != len {
            return Err(corrupt(format!(
                "{} lines in the covered bytes, but the state covers {len}",
                messages.len()
            )));
        }
        Ok(messages)
    }

    /// A load under this store's lease tells the lease's first commit where the session
    /// stands, so that commit (on the commit thread, which every session's commits share)
    /// reads nothing: a new session's tip says it has no checkpoint yet; an existing one's
    /// that its cache is due (as when the commit reads the envelope itself). Only a
    /// session with no tip gets one: a tip set by a commit of the lease stays as it is.
    ///
    /// A new session's `scratchpad/` is made here too, and its transcript opened for the
    /// commits (made, where the lease's lock is not the transcript itself), on the loading
    /// thread rather than by its first commit on the shared commit thread, where a
    /// thousand new sessions' file creations would queue one after another. Best effort:
    /// when that fails, the first commit makes them itself and reports what stops it.
    fn seed_tip(&self, id: &SessionId, env: Option<&Envelope>) {
        let sid = id.as_str();
        if !self.holders.holds(sid) {
            return;
        }
        if self.tips.lock().map_or(true, |t| t.contains_key(sid)) {
            return;
        }
        // The files are made outside the lock, which every session's commits take.
        let transcript = match env {
            Some(_) => None,
            None => {
                let session = self.dir(id);
                let path = session.join(CHECKPOINTS_DIR).join(TRANSCRIPT_FILE);
                self.open_transcript(sid, &session, &path, 0, true)
                    .ok()
                    .map(Arc::new)
            }
        };
        if let Ok(mut tips) = self.tips.lock() {
            tips.entry(sid.to_owned()).or_insert_with(|| Tip {
                len: env.map_or(0, |e| e.transcript_len),
                bytes: env.map_or(0, |e| e.transcript_bytes),
                since_cache: if env.is_some() { CACHE_EVERY } else { 0 },
                running: true,
                transcript,
                fresh: env.is_none(),
            });
        }
    }

    /// A commit's first half: the step's messages and checkpoint line written to the
    /// transcript (not yet durable), and what its second half ([`finish`](Self::finish))
    /// needs once they are.
    pub(super) fn write_step(&self, id: &SessionId, step: Step<'_>) -> Result<Written, StoreError> {
        let sid = id.as_str();
        let session = self.dir(id);
        let dir = session.join(CHECKPOINTS_DIR);
        let tip = self.tips.lock().ok().and_then(|t| t.get(sid).cloned());
        let (first, len, bytes, since_cache, was_running, held) = match tip {
            Some(t) => (
                t.fresh,
                t.len,
                t.bytes,
                t.since_cache,
                t.running,
                t.transcript,
            ),
            None => match Self::durable_envelope(sid, &dir)? {
                Some(e) => (
                    false,
                    e.transcript_len,
                    e.transcript_bytes,
                    CACHE_EVERY,
                    true,
                    None,
                ),
                // A new session has no cache yet: its reader scans the transcript from
                // the start, which the same bound keeps short.
                None => (true, 0, 0, 0, true, None),
            },
        };
        let encode = |source| StoreError::Encode {
            id: sid.to_owned(),
            source,
        };
        // The step's messages and its checkpoint line go out in one write and one
        // `sync_data`: the step is durable exactly when its checkpoint line is.
        let mut buf = Vec::new();
        for msg in step.new_messages {
            serde_json::to_writer(&mut buf, msg).map_err(encode)?;
            buf.push(b'\n');
        }
        let len = len + step.new_messages.len() as u64;
        // The state is serialized once, for the checkpoint line and the cache alike.
        let state = serde_json::to_vec(step.state).map_err(encode)?;
        buf.extend_from_slice(&checkpoint_line(len, crate::clock::now_ms(), &state));

        let path = dir.join(TRANSCRIPT_FILE);
        let file = match held {
            Some(file) => file,
            None => Arc::new(self.open_transcript(sid, &session, &path, bytes, first)?),
        };
        write_at(&file, &buf, bytes).map_err(StoreError::io(sid, "append to", &path))?;
        let end = bytes + buf.len() as u64;
        let running = step.state.get("status").and_then(Value::as_str) == Some("running");
        // Leaving `running` rewrites the cache (a parked or finished session is read from
        // it); a later commit that is not `running` either (a turn's closing bookkeeping)
        // leaves the reader one more line to scan instead of another temp file and rename.
        let write_cache = (was_running && !running) || since_cache + 1 >= CACHE_EVERY;
        Ok(Written {
            id: sid.to_owned(),
            session,
            dir,
            path,
            file,
            first,
            cache: write_cache.then(|| envelope_bytes(len, end, &state)),
            tip: Tip {
                len,
                bytes: end,
                since_cache: if write_cache { 0 } else { since_cache + 1 },
                running,
                transcript: None,
                fresh: false,
            },
        })
    }

    /// A commit's second half, once its write is durable: new folders made durable where
    /// one sync does not cover them, the `state.json` cache, the session's tip.
    pub(super) fn finish(&self, w: Written) -> Result<(), StoreError> {
        let Written {
            id: sid,
            session,
            dir,
            file,
            first,
            cache,
            mut tip,
            ..
        } = w;
        // A filesystem-wide sync made the new folders' entries durable too.
        if first && !super::group_sync::SHARED {
            for folder in [&dir, &session] {
                sync_dir(folder).map_err(StoreError::io(&sid, "sync folder", folder))?;
            }
            if let Some(parent) = session.parent() {
                sync_dir(parent).map_err(StoreError::io(&sid, "sync folder", parent))?;
            }
        }
        if let Some(bytes) = cache {
            Self::write_envelope(&sid, &self.sessions, &dir, &bytes)?;
        }
        if let Ok(mut tips) = self.tips.lock() {
            // The transcript stays open only while a lease of this store holds the
            // session (the lease's end removes the tip); a commit without one reopens it.
            tip.transcript = self.holders.holds(&sid).then_some(file);
            tips.insert(sid, tip);
        }
        Ok(())
    }
}

impl super::committer::TwoPhaseCommit for FsStore {
    type Written = Written;

    fn write_step(&self, id: &SessionId, step: Step<'_>) -> Result<Written, StoreError> {
        FsStore::write_step(self, id, step)
    }

    fn written_file(written: &Written) -> &File {
        written.file()
    }

    fn written_path(written: &Written) -> &Path {
        written.path()
    }

    fn group(&self) -> &super::group_sync::GroupSync {
        FsStore::group(self)
    }

    fn finish(&self, written: Written) -> Result<(), StoreError> {
        FsStore::finish(self, written)
    }
}

impl SessionStore for FsStore {
    fn load(&self, id: &SessionId) -> Result<Option<Snapshot>, StoreError> {
        let dir = self.checkpoints(id);
        let env = Self::durable_envelope(id.as_str(), &dir)?;
        self.seed_tip(id, env.as_ref());
        let Some(env) = env else {
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
        Ok(Self::durable_envelope(id.as_str(), &self.checkpoints(id))?.map(|env| env.state))
    }

    /// The transcript read once up to the last durable step, its checkpoint lines kept.
    fn history(&self, id: &SessionId) -> Result<Option<History>, StoreError> {
        let dir = self.checkpoints(id);
        let Some(env) = Self::durable_envelope(id.as_str(), &dir)? else {
            return Ok(None);
        };
        let mut checkpoints = Vec::new();
        let messages = Self::read_lines(
            id.as_str(),
            &dir,
            env.transcript_len,
            env.transcript_bytes,
            Some(&mut checkpoints),
        )?;
        Ok(Some(History {
            checkpoints,
            messages,
        }))
    }

    fn commit(&self, id: &SessionId, step: Step<'_>) -> Result<(), StoreError> {
        let written = self.write_step(id, step)?;
        self.group.durable(&written.file).map_err(StoreError::io(
            id.as_str(),
            "append to",
            &written.path,
        ))?;
        self.finish(written)
    }

    fn commit_queued(
        self: Arc<Self>,
        id: &SessionId,
        step: OwnedStep,
    ) -> Result<CommitReceipt, OwnedStep> {
        let committer = Arc::clone(&self.committer);
        committer.queue(self, id.clone(), step)
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
            // Reserved names (`_specs`, session areas) and names no key spells are skipped.
            let Some(id) = SessionId::from_key(&name) else {
                continue;
            };
            if !entry.path().is_dir() {
                continue;
            }
            if let Ok(Some(_)) =
                Self::durable_envelope(id.as_str(), &entry.path().join(CHECKPOINTS_DIR))
            {
                ids.push(id.as_str().to_owned());
            }
        }
        Ok(ids)
    }

    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        let sid = id.as_str();
        let dir = self.dir(id);
        remove_tree(sid, &dir)?;
        let Some(parent) = dir.parent() else {
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
                && SessionId::from_key(&name).is_some_and(|other| id.is_ancestor_of(other.as_str()))
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
        // Another process may have written since: the next commit reads from disk.
        if let Ok(mut tips) = self.tips.lock() {
            tips.remove(id.as_str());
        }
        match lease::lock_file(id.as_str(), &self.sessions, &self.checkpoints(id)) {
            Ok(Some(lock)) => {
                let hold = FsHold {
                    id: id.as_str().to_owned(),
                    tips: self.tips.clone(),
                    _lock: lock,
                };
                Ok(WriterLease::new(
                    id.as_str().to_owned(),
                    self.holders.clone(),
                    Some(Box::new(hold)),
                ))
            }
            Ok(None) => {
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
        confine::ensure_dir(&self.sessions, &dir)
            .map_err(StoreError::store_io("create folder", &dir))?;
        let mut bytes = serde_json::to_vec_pretty(spec).map_err(|source| StoreError::Encode {
            id: hash.to_owned(),
            source,
        })?;
        bytes.push(b'\n');
        let tmp = dir.join(format!(".{hash}.json.{}.tmp", unique_suffix()));
        write_synced(&self.sessions, &tmp, &bytes).map_err(StoreError::store_io("write", &tmp))?;
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
        match confine::read_record(&path, MAX_STATE_BYTES) {
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

    fn waits_on_disk(&self) -> bool {
        true
    }

    fn session_dir(&self, id: &SessionId) -> Option<PathBuf> {
        Some(self.dir(id))
    }
}

/// A checkpoint line (`{"archmax_checkpoint":{"transcript_len":…,"at":…,"state":…}}` and
/// its newline) around `state`, the state's JSON text; `at` is the commit's time (epoch
/// milliseconds; a line written before it was recorded has none).
fn checkpoint_line(len: u64, at: u64, state: &[u8]) -> Vec<u8> {
    let head = format!("{{\"{CHECKPOINT_KEY}\":{{\"transcript_len\":{len},\"at\":{at},\"state\":");
    let mut line = Vec::with_capacity(head.len() + state.len() + 3);
    line.extend_from_slice(head.as_bytes());
    line.extend_from_slice(state);
    line.extend_from_slice(b"}}\n");
    line
}

/// `state.json`'s content (and its newline): the envelope around `state`, the state's JSON
/// text, covering `len` messages in the transcript's first `bytes` bytes.
fn envelope_bytes(len: u64, bytes: u64, state: &[u8]) -> Vec<u8> {
    let head = format!(
        "{{\"format\":\"{STATE_FORMAT}\",\"transcript_len\":{len},\"transcript_bytes\":{bytes},\"state\":"
    );
    let mut out = Vec::with_capacity(head.len() + state.len() + 2);
    out.extend_from_slice(head.as_bytes());
    out.extend_from_slice(state);
    out.extend_from_slice(b"}\n");
    out
}

/// The state a checkpoint line carries; `None` for a message line.
fn checkpoint_state(line: &Value) -> Option<&Value> {
    line.get(CHECKPOINT_KEY)?.get("state")
}

/// A checkpoint line as a [`Checkpoint`] (its `step` left 0 for the reader to number), or
/// the message line given back.
fn into_checkpoint(mut line: Value) -> Result<Checkpoint, Value> {
    if checkpoint_state(&line).is_none() {
        return Err(line);
    }
    let mut cp = line
        .get_mut(CHECKPOINT_KEY)
        .and_then(Value::as_object_mut)
        .map(std::mem::take)
        .unwrap_or_default();
    Ok(Checkpoint {
        step: 0,
        transcript_len: cp
            .get("transcript_len")
            .and_then(Value::as_u64)
            .unwrap_or(0),
        at: cp.get("at").and_then(Value::as_u64),
        state: cp.remove("state").unwrap_or(Value::Null),
    })
}

/// Write all of `buf` at `offset` (a positioned write: the file's own position is not used).
fn write_at(file: &File, buf: &[u8], offset: u64) -> std::io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
    }
    #[cfg(not(unix))]
    {
        let mut file = file;
        file.seek(SeekFrom::Start(offset))?;
        file.write_all(buf)
    }
}

/// Create/truncate `path`, write `bytes`, fsync.
fn write_synced(base: &Path, path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let mut file = confine::open(
        base,
        path,
        OpenOptions::new().write(true).create(true).truncate(true),
    )?;
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

//! Behaviour suite run against both stores, then filesystem-only crash and lock tests.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::contract::{commit, msg, sid, state};
use super::*;

static DIRS: AtomicU64 = AtomicU64::new(0);

/// A temporary workspace root, removed on drop.
pub(crate) struct TempDir(PathBuf);

impl TempDir {
    pub(crate) fn new(tag: &str) -> Self {
        let path = std::env::temp_dir().join(format!(
            "store-test-{}-{}-{tag}",
            std::process::id(),
            DIRS.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&path);
        fs::create_dir_all(&path).expect("create temp dir");
        Self(path)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn fs_store() -> (FsStore, TempDir) {
    let dir = TempDir::new("suite");
    (FsStore::new(dir.path()), dir)
}

crate::store_contract_suite!(fs_suite, fs_store());
crate::store_contract_suite!(mem_suite, (MemStore::new(), ()));

// ---------------------------------------------------------------- filesystem only

fn fs_with_session(tag: &str, steps: u64) -> (FsStore, TempDir, SessionId, PathBuf) {
    let dir = TempDir::new(tag);
    let store = FsStore::new(dir.path());
    let id = sid("s");
    for n in 1..=steps {
        commit(&store, &id, &[msg(n)], &state(n, "running"));
    }
    let sdir = store.session_dir(&id).expect("fs dir");
    (store, dir, id, sdir)
}

/// [`fs_with_session`] whose last step parks the session, so it has a `state.json` cache.
fn fs_with_cached_session(tag: &str, steps: u64) -> (FsStore, TempDir, SessionId, PathBuf) {
    let (store, dir, id, sdir) = fs_with_session(tag, steps - 1);
    commit(&store, &id, &[msg(steps)], &state(steps, "parked"));
    assert!(sdir.join("checkpoints/state.json").is_file());
    (store, dir, id, sdir)
}

#[test]
fn fs_layout() {
    let (store, root, id, sdir) = fs_with_session("layout", 1);
    assert_eq!(sdir, root.path().join("sessions").join("s"));
    // A running session has no cache until it leaves `running` (or CACHE_EVERY commits).
    assert!(!sdir.join("checkpoints/state.json").exists());
    assert!(sdir.join("checkpoints/transcript.jsonl").is_file());
    commit(&store, &id, &[msg(2)], &state(2, "done"));
    assert!(sdir.join("checkpoints/state.json").is_file());
    assert!(sdir.join("scratchpad").is_dir());
    assert!(!sdir.join("checkpoints/state.json.tmp").exists());
    store
        .write_spec_snapshot("abc123", &json!({"a": 1}))
        .expect("spec");
    assert!(root.path().join("sessions/_specs/abc123.json").is_file());
    let env: Value =
        serde_json::from_slice(&fs::read(sdir.join("checkpoints/state.json")).expect("read"))
            .expect("json");
    assert_eq!(env["format"], json!("archmax-session-state/1"));
    assert_eq!(env["transcript_len"], json!(2));
    assert_eq!(env["state"], state(2, "done"));
    // Byte for byte what serializing the envelope as a JSON object gives.
    let transcript = fs::read(sdir.join("checkpoints/transcript.jsonl")).expect("transcript");
    let mut expected = serde_json::to_vec(&json!({
        "format": "archmax-session-state/1",
        "transcript_len": 2,
        "transcript_bytes": transcript.len(),
        "state": state(2, "done"),
    }))
    .expect("json");
    expected.push(b'\n');
    assert_eq!(
        fs::read(sdir.join("checkpoints/state.json")).expect("read"),
        expected
    );
    assert_eq!(MemStore::new().session_dir(&id), None);
}

/// The commit time [`checkpoint_line`] writes: as many digits as a time of this century's.
const ANY_AT: u64 = 1_000_000_000_000;

/// The checkpoint line a commit appends after its messages, its time [`ANY_AT`].
fn checkpoint_line(len: u64, st: &Value) -> Vec<u8> {
    let mut line = format!(
        "{{\"archmax_checkpoint\":{{\"transcript_len\":{len},\"at\":{ANY_AT},\"state\":{}}}}}",
        serde_json::to_string(st).expect("json")
    )
    .into_bytes();
    line.push(b'\n');
    line
}

/// `bytes` with every checkpoint line's commit time replaced by [`ANY_AT`].
fn any_time(bytes: &[u8]) -> Vec<u8> {
    let re = regex::bytes::Regex::new(r#""at":\d{13}"#).expect("regex");
    re.replace_all(bytes, format!("\"at\":{ANY_AT}").as_bytes())
        .into_owned()
}

#[test]
fn fs_the_cache_is_written_when_the_session_leaves_running_not_after() {
    let (store, _root, id, sdir) = fs_with_session("leave", 2);
    let cache = |sdir: &Path| -> Value {
        let env: Value =
            serde_json::from_slice(&fs::read(sdir.join("checkpoints/state.json")).expect("read"))
                .expect("json");
        env["state"].clone()
    };
    // Not written while the session runs.
    assert!(!sdir.join("checkpoints/state.json").exists());
    commit(&store, &id, &[msg(3)], &state(3, "parked"));
    assert_eq!(
        cache(&sdir),
        state(3, "parked"),
        "leaving running writes it"
    );
    commit(&store, &id, &[msg(4)], &state(4, "parked"));
    assert_eq!(
        cache(&sdir),
        state(3, "parked"),
        "staying parked appends only"
    );
    // Readers take the cache and the line past it.
    assert_eq!(
        store.load_state(&id).expect("state"),
        Some(state(4, "parked"))
    );
    let other = FsStore::new(_root.path());
    assert_eq!(
        other.load_state(&id).expect("state"),
        Some(state(4, "parked"))
    );
    assert_eq!(other.list().expect("list"), vec!["s"]);
    // Running again, then leaving once more, writes it again.
    commit(&store, &id, &[msg(5)], &state(5, "running"));
    commit(&store, &id, &[msg(6)], &state(6, "done"));
    assert_eq!(cache(&sdir), state(6, "done"));
    assert_eq!(
        store.load(&id).expect("load").expect("present").messages,
        (1..=6).map(msg).collect::<Vec<_>>()
    );
}

#[test]
fn fs_a_synced_checkpoint_beyond_a_stale_cache_wins() {
    // A crash after the step's synced append but before the state.json cache write.
    let (store, _root, id, sdir) = fs_with_cached_session("stale", 2);
    let stale = fs::read(sdir.join("checkpoints/state.json")).expect("cache");
    commit(&store, &id, &[msg(3)], &state(3, "running"));
    fs::write(sdir.join("checkpoints/state.json"), &stale).expect("restore the stale cache");
    let snap = store.load(&id).expect("load").expect("present");
    assert_eq!(snap.state, state(3, "running"));
    assert_eq!(snap.messages, vec![msg(1), msg(2), msg(3)]);
    assert_eq!(
        store.load_state(&id).expect("state"),
        Some(state(3, "running"))
    );
    // A torn or missing cache is rebuilt from the transcript alone.
    fs::write(sdir.join("checkpoints/state.json"), b"{\"format\":\"archm").expect("torn cache");
    assert_eq!(
        store
            .load(&id)
            .expect("load")
            .expect("present")
            .messages
            .len(),
        3
    );
    fs::remove_file(sdir.join("checkpoints/state.json")).expect("no cache");
    assert_eq!(
        store.load_state(&id).expect("state"),
        Some(state(3, "running"))
    );
    commit(&store, &id, &[msg(4)], &state(4, "done"));
    assert_eq!(
        store.load(&id).expect("load").expect("present").messages,
        vec![msg(1), msg(2), msg(3), msg(4)]
    );
}

#[test]
fn fs_crash_leftovers_are_ignored_then_truncated() {
    let (store, _root, id, sdir) = fs_with_session("crash", 2);
    let transcript = sdir.join("checkpoints/transcript.jsonl");
    let committed_len = fs::metadata(&transcript).expect("stat").len();

    // A step that crashed after its append and mid-way through its state write,
    // followed by a torn line of yet another append.
    let mut extra = Vec::new();
    for n in [3, 4] {
        extra.extend(serde_json::to_vec(&msg(n)).expect("json"));
        extra.push(b'\n');
    }
    extra.extend(br#"{"role":"user","content":"torn mid-js"#);
    let mut body = fs::read(&transcript).expect("read");
    body.extend(&extra);
    fs::write(&transcript, &body).expect("write");
    fs::write(
        sdir.join("checkpoints/state.json.tmp"),
        br#"{"format":"archmax-sess"#,
    )
    .expect("tmp");

    let snap = store.load(&id).expect("load").expect("present");
    assert_eq!(snap.state, state(2, "running"));
    assert_eq!(snap.messages, vec![msg(1), msg(2)]);

    // The next commit truncates the uncovered tail before appending.
    commit(&store, &id, &[msg(30)], &state(3, "running"));
    let line = serde_json::to_vec(&msg(30)).expect("json").len() as u64 + 1;
    let checkpoint = checkpoint_line(3, &state(3, "running")).len() as u64;
    assert_eq!(
        fs::metadata(&transcript).expect("stat").len(),
        committed_len + line + checkpoint
    );
    let snap = store.load(&id).expect("load").expect("present");
    assert_eq!(snap.messages, vec![msg(1), msg(2), msg(30)]);
    // The cache is rewritten when the session leaves `running`, replacing the leftover.
    commit(&store, &id, &[], &state(4, "completed"));
    assert!(!sdir.join("checkpoints/state.json.tmp").exists());
}

/// A new session `fresh` whose first commit crashed: a transcript with no checkpoint line.
fn fs_with_orphan_transcript(tag: &str) -> (FsStore, TempDir, SessionId, PathBuf) {
    let dir = TempDir::new(tag);
    let store = FsStore::new(dir.path());
    let id = sid("fresh");
    let sdir = store.session_dir(&id).expect("dir");
    fs::create_dir_all(sdir.join("checkpoints")).expect("mkdir");
    fs::write(
        sdir.join("checkpoints/transcript.jsonl"),
        b"{\"orphan\":1}\n{\"tor",
    )
    .expect("write");
    (store, dir, id, sdir)
}

#[test]
fn fs_crash_before_first_state_write() {
    let (store, _root, id, _sdir) = fs_with_orphan_transcript("first");
    assert!(store.load(&id).expect("load").is_none());
    assert!(store.list().expect("list").is_empty());
    commit(&store, &id, &[msg(1)], &state(1, "running"));
    let snap = store.load(&id).expect("load").expect("present");
    assert_eq!(snap.messages, vec![msg(1)]);
}

/// A new session's lease and load make its transcript and `scratchpad/` (off the shared
/// commit thread): the first commit then only writes, through the file the load opened.
/// A link where the transcript goes is refused, never followed.
#[test]
fn fs_a_leased_load_of_a_new_session_makes_its_files_for_the_first_commit() {
    let root = TempDir::new("made-by-load");
    let store = FsStore::new(root.path());
    let id = sid("new");
    let sdir = store.session_dir(&id).expect("dir");
    let transcript = sdir.join("checkpoints").join(TRANSCRIPT_FILE);
    let lease = store.acquire(&id).expect("lease");
    // On Unix the lease's lock is the transcript, made empty; elsewhere the load makes it.
    assert_eq!(transcript.exists(), cfg!(unix));
    assert!(!sdir.join(SCRATCHPAD_DIR).exists());
    assert!(store.load(&id).expect("load").is_none());
    assert!(sdir.join(SCRATCHPAD_DIR).is_dir(), "made by the load");
    assert_eq!(fs::metadata(&transcript).expect("made").len(), 0);
    // The commit writes through the file the load opened, not through the name.
    let moved = sdir.join("checkpoints/moved.jsonl");
    fs::rename(&transcript, &moved).expect("rename");
    commit(&store, &id, &[msg(1)], &state(1, "running"));
    assert!(!transcript.exists(), "the first commit opened nothing");
    assert!(
        fs::read_to_string(&moved)
            .expect("read")
            .contains("archmax_checkpoint")
    );
    drop(lease);

    // A link where the transcript goes: the lease that locks it refuses it.
    #[cfg(unix)]
    {
        let other = sid("linked");
        let odir = store.session_dir(&other).expect("dir");
        fs::create_dir_all(odir.join("checkpoints")).expect("mkdir");
        std::os::unix::fs::symlink(
            root.path().join("elsewhere"),
            odir.join("checkpoints").join(TRANSCRIPT_FILE),
        )
        .expect("link");
        let err = store.acquire(&other).expect_err("a link is refused");
        assert!(err.to_string().contains("symbolic link"), "{err}");
        assert!(!root.path().join("elsewhere").exists());
        // Nothing is left held: with the link gone, the session leases.
        fs::remove_file(odir.join("checkpoints").join(TRANSCRIPT_FILE)).expect("unlink");
        drop(store.acquire(&other).expect("free"));
    }
}

/// A turn's load under its lease tells the first commit where the session stands: that
/// commit reads neither `state.json` nor the transcript (here a `state.json` it could not
/// read appears after the load and is never touched), and still cuts a crashed step's
/// leftovers, for a new session as for an existing one.
#[test]
fn fs_a_leases_first_commit_reads_nothing_after_its_load() {
    let (store, _root, id, sdir) = fs_with_orphan_transcript("seeded");
    let lease = store.acquire(&id).expect("lease");
    assert!(store.load(&id).expect("load").is_none());
    fs::create_dir(sdir.join("checkpoints/state.json")).expect("an unreadable state.json");
    commit(&store, &id, &[msg(1)], &state(1, "running"));
    fs::remove_dir(sdir.join("checkpoints/state.json")).expect("rmdir");
    drop(lease);
    let snap = store.load(&id).expect("load").expect("present");
    assert_eq!(snap.messages, vec![msg(1)], "the orphan lines are cut");

    // An existing session with a crashed step's lines past its last checkpoint.
    let transcript = sdir.join("checkpoints/transcript.jsonl");
    let mut body = fs::read(&transcript).expect("read");
    body.extend_from_slice(b"{\"role\":\"user\",\"content\":\"lost\"}\n{\"torn");
    fs::write(&transcript, &body).expect("write");
    let lease = store.acquire(&id).expect("lease");
    assert_eq!(
        store.load(&id).expect("load").expect("present").messages,
        vec![msg(1)]
    );
    commit(&store, &id, &[msg(2)], &state(2, "running"));
    // The first commit of a lease over an existing session writes the cache, as before.
    assert!(sdir.join("checkpoints/state.json").is_file());
    drop(lease);
    let snap = store.load(&id).expect("load").expect("present");
    assert_eq!(snap.messages, vec![msg(1), msg(2)]);
    assert_eq!(snap.state, state(2, "running"));
}

#[test]
fn fs_commit_cost_is_independent_of_transcript_length() {
    let (store, _root, id, sdir) = fs_with_session("cost", 0);
    let many: Vec<Value> = (0..2000).map(msg).collect();
    // Parked: the cache covers these 2000 messages.
    commit(&store, &id, &many, &state(1, "parked"));
    let transcript = sdir.join("checkpoints/transcript.jsonl");
    let before = fs::read(&transcript).expect("read");

    // Scribble over the covered prefix (same length): a commit that read or rewrote the
    // transcript would notice or repair it; an append-only commit does neither.
    let scribbled: Vec<u8> = before
        .iter()
        .map(|b| if *b == b'\n' { b'\n' } else { b'x' })
        .collect();
    fs::write(&transcript, &scribbled).expect("scribble");

    let new = [msg(5000), msg(5001)];
    commit(&store, &id, &new, &state(2, "running"));
    let after = fs::read(&transcript).expect("read");
    let mut expected_tail = Vec::new();
    for m in &new {
        expected_tail.extend(serde_json::to_vec(m).expect("json"));
        expected_tail.push(b'\n');
    }
    expected_tail.extend(checkpoint_line(2002, &state(2, "running")));
    assert_eq!(after.len(), before.len() + expected_tail.len());
    assert_eq!(&after[..before.len()], &scribbled[..]);
    assert_eq!(any_time(&after[before.len()..]), expected_tail);
    // load_state does not touch the transcript either; a full load reports the damage.
    assert_eq!(
        store.load_state(&id).expect("state"),
        Some(state(2, "running"))
    );
    let err = store.load(&id).expect_err("scribbled prefix");
    assert!(matches!(err, StoreError::Corrupt { .. }), "{err}");
}

#[test]
fn fs_lock_held_by_another_open_file_refuses_and_its_release_frees_the_session() {
    let (store, _root, id, sdir) = fs_with_session("lock", 1);
    let lock = sdir.join("checkpoints").join(LOCK_FILE);
    #[cfg(unix)]
    assert_eq!(
        LOCK_FILE, TRANSCRIPT_FILE,
        "on Unix the transcript is the lock"
    );
    let transcript = sdir.join("checkpoints").join(TRANSCRIPT_FILE);
    let before = fs::read(&transcript).expect("transcript");

    // Locked through another open file (another store instance or process does the same).
    let other = fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(false)
        .open(&lock)
        .expect("open");
    other.try_lock().expect("lock");
    let err = store.acquire(&id).expect_err("locked");
    assert_eq!(
        err.to_string(),
        "Session 's' has a turn in progress (status 'running'). A session has a single writer: retry once the turn parks or ends."
    );
    // The holder goes (a killed process's locks go with it): the session is free.
    drop(other);
    let lease = store.acquire(&id).expect("free once the holder is gone");
    #[cfg(not(unix))]
    assert_eq!(
        fs::read_to_string(&lock).expect("read"),
        format!("{}\n", std::process::id()),
        "the lock names its holder"
    );
    // While the lease lives, the file is locked for everyone else, but not closed to them:
    // another store reads the session, and this store's commit writes through a
    // descriptor of its own. Neither, nor closing a descriptor of the file in this
    // process (the reader's), lets go of the lock.
    let probe = fs::File::open(&lock).expect("open");
    let held = |probe: &fs::File| matches!(probe.try_lock(), Err(fs::TryLockError::WouldBlock));
    assert!(held(&probe));
    assert_eq!(
        fs::read(&transcript).expect("read"),
        before,
        "taking the lock writes nothing"
    );
    let reader = FsStore::new(_root.path());
    assert_eq!(
        reader.load(&id).expect("load").expect("there").messages,
        vec![msg(1)]
    );
    commit(&store, &id, &[msg(2)], &state(2, "running"));
    assert!(held(&probe));
    drop(lease);
    probe.try_lock().expect("released with the lease");
    drop(probe);
    assert_eq!(
        reader.load(&id).expect("load").expect("there").messages,
        vec![msg(1), msg(2)]
    );

    // A `turn.lock` an older build left (a pid, or nothing) is no lock: only a held lock
    // on the lease's file counts.
    let old = sdir.join("checkpoints/turn.lock");
    fs::write(&old, "4000000000\n").expect("lock");
    drop(store.acquire(&id).expect("old content is not a lock"));
    assert!(
        lock.exists(),
        "the lock file stays, so no lease makes or removes one"
    );
}

#[test]
fn fs_two_store_instances_share_the_lock() {
    let (store, root, id, _sdir) = fs_with_session("two", 1);
    let other = FsStore::new(root.path());
    let lease = store.acquire(&id).expect("first");
    assert!(matches!(other.acquire(&id), Err(StoreError::Busy { .. })));
    drop(lease);
    drop(other.acquire(&id).expect("after release"));
}

#[test]
fn fs_list_skips_reserved_and_stateless_folders() {
    let (store, root, _id, _sdir) = fs_with_cached_session("list", 1);
    let sessions = root.path().join("sessions");
    store.write_spec_snapshot("feed", &json!({})).expect("spec");
    for name in ["empty", "scratchpad", "checkpoints"] {
        fs::create_dir_all(sessions.join(name)).expect("mkdir");
    }
    fs::create_dir_all(sessions.join("garbage/checkpoints")).expect("mkdir");
    fs::write(sessions.join("garbage/checkpoints/state.json"), b"not json").expect("write");
    fs::create_dir_all(sessions.join("artifacts/checkpoints")).expect("mkdir");
    fs::write(
        sessions.join("artifacts/checkpoints/state.json"),
        fs::read(sessions.join("s/checkpoints/state.json")).expect("read"),
    )
    .expect("write");
    fs::write(sessions.join("loose-file"), b"x").expect("write");
    // A folder that was only acquired (never committed) is not a session either.
    drop(store.acquire(&sid("acquired-only")).expect("acquire"));
    assert_eq!(store.list().expect("list"), vec!["s"]);
}

#[test]
fn fs_io_errors_name_session_and_path() {
    let dir = TempDir::new("ioerr");
    let store = FsStore::new(dir.path());
    fs::create_dir_all(dir.path().join("sessions")).expect("mkdir");
    // The session folder is a plain file: nothing below it can be created.
    fs::write(dir.path().join("sessions/blocked"), b"x").expect("write");
    let id = sid("blocked");
    let err = store
        .commit(
            &id,
            Step {
                new_messages: &[msg(1)],
                state: &state(1, "running"),
            },
        )
        .expect_err("cannot commit");
    let text = err.to_string();
    assert!(text.contains("session 'blocked'"), "{text}");
    assert!(
        text.contains(&dir.path().join("sessions/blocked").display().to_string()),
        "{text}"
    );
    assert!(matches!(err, StoreError::Io { .. }));
}

#[test]
fn fs_state_claiming_more_than_the_transcript_is_corrupt() {
    let (store, _root, id, sdir) = fs_with_cached_session("short", 2);
    let transcript = sdir.join("checkpoints/transcript.jsonl");
    let body = fs::read(&transcript).expect("read");
    // Cut below even the first step: no durable step is left whole.
    fs::write(&transcript, &body[..10]).expect("cut");
    let err = store.load(&id).expect_err("corrupt");
    assert!(matches!(err, StoreError::Corrupt { .. }));
    assert!(err.to_string().contains("session 's'"));
    let err = store
        .commit(
            &id,
            Step {
                new_messages: &[msg(3)],
                state: &state(3, "running"),
            },
        )
        .expect_err("refuses to append after a hole");
    assert!(matches!(err, StoreError::Corrupt { .. }));
}

// ---------------------------------------------------------------- session ids

#[test]
fn session_id_rules_and_texts() {
    let cases: [(&str, &str); 9] = [
        ("", "it must not be empty"),
        ("///", "it must not be empty"),
        (
            "a/../b",
            "it must stay within the session zone (no absolute paths or '..' traversal)",
        ),
        (
            "..",
            "it must stay within the session zone (no absolute paths or '..' traversal)",
        ),
        (
            "x\\..\\y",
            "it must stay within the session zone (no absolute paths or '..' traversal)",
        ),
        (
            "\\abs",
            "it must stay within the session zone (no absolute paths or '..' traversal)",
        ),
        (
            "C:\\win",
            "it must stay within the session zone (no absolute paths or '..' traversal)",
        ),
        (
            "_specs/x",
            "'_specs' is reserved at the workspace root (a session area or an authored mount)",
        ),
        (
            "/scratchpad",
            "'scratchpad' is reserved at the workspace root (a session area or an authored mount)",
        ),
    ];
    for (raw, reason) in cases {
        let err = SessionId::parse(raw).expect_err(raw);
        assert_eq!(err.reason().to_string(), reason, "{raw}");
        assert_eq!(
            err.to_string(),
            format!("Invalid session id \"{raw}\": {reason}.")
        );
        assert_eq!(
            err.cli_message(),
            format!("invalid session id '{raw}' - {reason}. Use one from 'archmax sessions'.")
        );
    }
    for area in RESERVED_AREAS {
        assert!(SessionId::parse(area).is_err(), "{area}");
        assert!(SessionId::parse(&format!("{area}\\x")).is_err(), "{area}");
    }
    for ok in [
        "abc",
        "/abc",
        "a/b",
        "a..b",
        "..a",
        "my-session_1",
        "p~s:w:1",
        "Scratchpad",
    ] {
        assert!(SessionId::parse(ok).is_ok(), "{ok}");
    }
    assert_eq!(sid("//abc").as_str(), "abc");
    assert_eq!(SessionId::default_id().as_str(), "__default__");

    // Mount names are reserved by the runtime rules, not by the CLI-stage rules.
    let rules = IdRules::with_mounts(["docs", "/data/raw", "skills\\x"]);
    for raw in ["docs", "data/x", "skills"] {
        let err = SessionId::parse_with(raw, &rules).expect_err(raw);
        assert!(matches!(err.reason(), SessionIdReason::Reserved(_)));
        assert!(SessionId::parse(raw).is_ok());
    }
    assert_eq!(
        SessionId::parse_with("data/x", &rules)
            .expect_err("mount")
            .to_string(),
        "Invalid session id \"data/x\": 'data' is reserved at the workspace root (a session area or an authored mount)."
    );
    assert!(SessionId::parse_with("checkpoints", &rules).is_err());
}

#[test]
fn child_ids() {
    assert_eq!(parent_of("p~review:triage:1"), Some("p"));
    assert_eq!(parent_of("p~a:b:1~c:d:22"), Some("p~a:b:1"));
    assert_eq!(parent_of("p"), None);
    assert_eq!(parent_of("p~notachild"), None);
    assert_eq!(parent_of("p~a:b:x"), None);
    assert_eq!(parent_of("p~a:b:1:2"), None);
    assert_eq!(parent_of("~a:b:1"), None);
    assert_eq!(parent_of("p~:b:1"), None);
    let g = sid("p~a:b:1~c:d:2");
    assert_eq!(g.parent(), Some(sid("p~a:b:1")));
    assert_eq!(g.root(), sid("p"));
    assert!(sid("p").is_ancestor_of("p~a:b:1~c:d:2"));
    assert!(!sid("p").is_ancestor_of("pp~a:b:1"));
    assert!(!sid("p").is_ancestor_of("p~x"));
    assert!(!sid("p").is_ancestor_of("p"));
    assert_eq!(sid("p").child("a:x", "b", 1), None);
    assert_eq!(sid("p").child("a", "", 1), None);
    assert!(is_child_identity("state:wf:0"));
}

// ---------------------------------------------------------------- queued commits

fn owned(n: u64, status: &str) -> OwnedStep {
    OwnedStep {
        new_messages: vec![msg(n)],
        state: state(n, status),
    }
}

/// Sessions committing at once through the store's commit thread: every commit is
/// answered, every session loads back whole, and the commits shared their syncs.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn fs_queued_commits_of_many_sessions_all_land_and_share_syncs() {
    let dir = TempDir::new("queued");
    let store = std::sync::Arc::new(FsStore::new(dir.path()));
    const SESSIONS: u64 = 64;
    const STEPS: u64 = 5;
    let tasks: Vec<_> = (0..SESSIONS)
        .map(|s| {
            let store = std::sync::Arc::clone(&store);
            tokio::spawn(async move {
                let id = sid(&format!("q{s}"));
                let _lease = store.acquire(&id).expect("lease");
                for n in 1..=STEPS {
                    let status = if n == STEPS { "done" } else { "running" };
                    let receipt = std::sync::Arc::clone(&store)
                        .commit_queued(&id, owned(n, status))
                        .expect("the filesystem store queues commits");
                    let (result, step) = receipt.wait().await;
                    result.expect("commit");
                    let step = step.expect("the step comes back");
                    // A durable step's messages are freed on the commit thread.
                    assert!(step.new_messages.is_empty(), "its messages come back");
                    assert_eq!(step.state, state(n, status), "its state comes back");
                }
                id
            })
        })
        .collect();
    for task in tasks {
        let id = task.await.expect("task");
        let snap = store.load(&id).expect("load").expect("committed");
        assert_eq!(snap.state, state(STEPS, "done"));
        assert_eq!(snap.messages, (1..=STEPS).map(msg).collect::<Vec<_>>());
    }
    let syncs = store.group().syncs();
    assert!(
        syncs < SESSIONS * STEPS,
        "{} commits took {syncs} syncs: none shared",
        SESSIONS * STEPS
    );
}

/// A commit that cannot be written fails alone, with its messages back; the commits
/// queued beside it land.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fs_a_failed_queued_commit_fails_alone() {
    let dir = TempDir::new("queued-fail");
    let store = std::sync::Arc::new(FsStore::new(dir.path()));
    // A file where the session's folder would be: its first commit cannot make it.
    fs::create_dir_all(dir.path().join("sessions")).expect("sessions");
    fs::write(dir.path().join("sessions/broken"), "not a folder").expect("file");
    let ids = ["ok1", "broken", "ok2"].map(sid);
    let receipts: Vec<_> = ids
        .iter()
        .map(|id| {
            std::sync::Arc::clone(&store)
                .commit_queued(id, owned(1, "running"))
                .expect("queued")
        })
        .collect();
    let mut results = Vec::new();
    for receipt in receipts {
        results.push(receipt.wait().await);
    }
    let (broken, broken_step) = &results[1];
    let text = broken
        .as_ref()
        .expect_err("the broken session fails")
        .to_string();
    assert!(text.contains("session 'broken'"), "{text}");
    assert_eq!(
        broken_step.as_ref().map(|s| &s.new_messages),
        Some(&vec![msg(1)])
    );
    for (i, id) in [(0, &ids[0]), (2, &ids[2])] {
        assert!(results[i].0.is_ok(), "{:?}", results[i].0);
        assert_eq!(
            store.load(id).expect("load").expect("state").state,
            state(1, "running")
        );
    }
}

/// The commit thread holds the store only while it runs a commit: once the last owner
/// drops it, the store goes (and with it the thread's channel, which ends the thread).
#[tokio::test]
async fn fs_the_commit_thread_does_not_keep_the_store() {
    let dir = TempDir::new("queued-drop");
    let store = std::sync::Arc::new(FsStore::new(dir.path()));
    let id = sid("s");
    let (result, _) = std::sync::Arc::clone(&store)
        .commit_queued(&id, owned(1, "running"))
        .expect("queued")
        .wait()
        .await;
    result.expect("commit");
    let weak = std::sync::Arc::downgrade(&store);
    drop(store);
    // The thread drops its job's handle right after answering it.
    for _ in 0..1000 {
        if weak.upgrade().is_none() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(1)).await;
    }
    assert!(
        weak.upgrade().is_none(),
        "the commit thread kept the store alive"
    );
}

/// Two commits of one session queued without waiting for the first (no turn does this,
/// the lease keeps other writers out): the second is written only once the first is
/// answered, so both land, in order, and the session loads back whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn fs_back_to_back_queued_commits_of_one_session_land_in_order() {
    let dir = TempDir::new("queued-twice");
    let store = std::sync::Arc::new(FsStore::new(dir.path()));
    for round in 0..20u64 {
        let id = sid(&format!("twice{round}"));
        let first = std::sync::Arc::clone(&store)
            .commit_queued(&id, owned(1, "running"))
            .expect("queued");
        let second = std::sync::Arc::clone(&store)
            .commit_queued(&id, owned(2, "done"))
            .expect("queued");
        let waited = tokio::time::timeout(std::time::Duration::from_secs(20), async {
            (first.wait().await, second.wait().await)
        })
        .await
        .expect("both commits are answered (no lost wake-up)");
        waited.0.0.expect("first commit");
        waited.1.0.expect("second commit");
        let snap = store.load(&id).expect("load").expect("committed");
        assert_eq!(snap.messages, vec![msg(1), msg(2)]);
        assert_eq!(snap.state, state(2, "done"));
    }
}

#[test]
fn ids_that_no_storage_keeps_apart_are_refused() {
    let cases: [(&str, &str); 7] = [
        (".", "it must not be made of dots alone"),
        ("/...", "it must not be made of dots alone"),
        (" ", "it must not be empty"),
        (
            "a\r\nb",
            "it must not contain control or bidirectional-formatting characters (U+000D at character 2)",
        ),
        (
            "invoice\u{202E}fdp.exe",
            "it must not contain control or bidirectional-formatting characters (U+202E at character 8)",
        ),
        (
            "x\u{0}",
            "it must not contain control or bidirectional-formatting characters (U+0000 at character 2)",
        ),
        (
            &"/".repeat(3)
                .chars()
                .chain("a/".repeat(90).chars())
                .collect::<String>(),
            "it is too long: stored, it takes 360 bytes, at most 255 (a character other than a-z, 0-9 and - _ . ~ @ + = , takes 2 to 12)",
        ),
    ];
    for (raw, reason) in cases {
        let err = SessionId::parse(raw).expect_err(raw);
        assert_eq!(err.reason().to_string(), reason, "{raw:?}");
    }
    // The message never carries the raw control characters it refuses.
    let err = SessionId::parse("a\u{1b}[2Kb").expect_err("escape");
    assert_eq!(
        err.cli_message(),
        "invalid session id 'a\\u{1b}[2Kb' - it must not contain control or bidirectional-formatting characters (U+001B at character 2). Use one from 'archmax sessions'."
    );
    assert!(!err.to_string().contains('\u{1b}'));
    // The longest key is accepted; one byte more is not.
    assert!(SessionId::parse(&"k".repeat(MAX_KEY_BYTES)).is_ok());
    assert!(SessionId::parse(&"k".repeat(MAX_KEY_BYTES + 1)).is_err());
}

#[test]
fn storage_keys_are_one_segment_distinct_and_reversible() {
    let plain = [
        "session-0b6c",
        "__default__",
        "t-1.2",
        "a~b",
        "x@y.example",
        "q+r=s,t",
    ];
    for id in plain {
        assert_eq!(storage_key(id), id, "{id} is its own key");
    }
    let escaped = [
        ("customer/123", "customer%2F123"),
        ("p1/", "p1%2F"),
        ("./p1", "%2E%2Fp1"),
        ("p1/.", "p1%2F%2E"),
        ("Acme", "!acme"),
        ("p~s:w:1", "p~s%3Aw%3A1"),
        ("a b", "a%20b"),
        ("100%", "100%25"),
        ("hi!", "hi%21"),
        ("a\\b", "a%5Cb"),
        ("con", "%63on"),
        ("NUL.txt", "%4E!u!l.txt"),
        ("com1", "%63om1"),
        ("kundé", "kund%C3%A9"),
        (".hidden", "%2Ehidden"),
        ("trailing.", "trailing%2E"),
        ("~", "~"),
    ];
    let mut keys = std::collections::BTreeSet::new();
    for (id, key) in escaped {
        assert_eq!(storage_key(id), key, "{id}");
        assert_eq!(id_of_key(key).as_deref(), Some(id), "{key}");
        assert!(!key.contains(['/', '\\', ':']) && !key.starts_with('.'));
        // No two keys differ only in case, so no two share a folder on any file system.
        assert!(keys.insert(key.to_ascii_lowercase()), "{key}");
    }
    // Only a key's own spelling names a session.
    for not_a_key in ["%41", "A", "a/b", "!A", "%2", "%zz", "!", "p~s:w:1", ".x"] {
        assert_eq!(id_of_key(not_a_key), None, "{not_a_key}");
    }
    assert_eq!(
        SessionId::from_key("!acme").map(|s| s.as_str().to_owned()),
        Some("Acme".into())
    );
    assert_eq!(SessionId::from_key("_specs"), None, "reserved");
    // A child id's key extends its parent's.
    let child = sid("Acme").child("s", "w", 1).expect("child");
    assert_eq!(child.key(), "!acme~s%3Aw%3A1");
    assert!(sid(&"k".repeat(250)).child("state", "wf", 1).is_none());
}

#[test]
fn fs_an_earlier_layouts_folders_are_renamed_to_their_keys() {
    let dir = TempDir::new("layout-upgrade");
    let sessions = dir.path().join("sessions");
    // An earlier layout: folders named by ids as given.
    for (name, n) in [("Acme", 1u64), ("p~s:w:1", 2), ("plain", 3)] {
        let cp = sessions.join(name).join("checkpoints");
        fs::create_dir_all(&cp).expect("mkdir");
        let envelope = json!({"format": "archmax-session-state/1", "transcript_len": 0,
            "transcript_bytes": 0, "state": state(n, "completed")});
        fs::write(cp.join("state.json"), envelope.to_string()).expect("state");
        fs::write(cp.join("transcript.jsonl"), "").expect("transcript");
    }
    // A folder that is not a session, and a name already taken by its key, stay.
    fs::create_dir_all(sessions.join("Notes")).expect("mkdir");
    fs::create_dir_all(sessions.join("_specs")).expect("mkdir");
    let store = FsStore::new(dir.path());
    assert!(sessions.join("!acme/checkpoints").is_dir());
    assert!(sessions.join("p~s%3Aw%3A1/checkpoints").is_dir());
    assert!(sessions.join("plain/checkpoints").is_dir());
    assert!(!sessions.join("Acme").exists());
    assert!(sessions.join("Notes").is_dir());
    assert!(sessions.join(LAYOUT_FILE).is_file());
    for (id, n) in [("Acme", 1), ("p~s:w:1", 2), ("plain", 3)] {
        let st = store.load_state(&sid(id)).expect("load").expect("present");
        assert_eq!(st["step"], n, "{id}");
    }
    let mut listed = store.list().expect("list");
    listed.sort();
    assert_eq!(listed, ["Acme", "plain", "p~s:w:1"]);
    // Opening again renames nothing (a key is never taken for an earlier name).
    fs::remove_file(sessions.join(LAYOUT_FILE)).expect("rm marker");
    let _again = FsStore::new(dir.path());
    assert!(sessions.join("!acme/checkpoints").is_dir());
}

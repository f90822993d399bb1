//! Spawns `examples/crash_writer`, kills it with SIGKILL mid-flight, and checks that the store
//! loads the last complete step; repeats, alternating who takes the session after the kill.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use archmax_machine::store::{FsStore, SessionId, SessionStore};
use serde_json::Value;

/// `target/<profile>/examples/crash_writer`, built on demand when the test run did not build it.
fn writer_binary() -> PathBuf {
    let exe = std::env::current_exe().expect("test exe");
    let profile_dir = exe
        .parent()
        .and_then(Path::parent)
        .expect("target/<profile>")
        .to_path_buf();
    let bin = profile_dir
        .join("examples")
        .join(format!("crash_writer{}", std::env::consts::EXE_SUFFIX));
    if !bin.exists() {
        let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
        let status = Command::new(cargo)
            .args(["build", "--example", "crash_writer", "--manifest-path"])
            .arg(Path::new(env!("CARGO_MANIFEST_DIR")).join("Cargo.toml"))
            .status()
            .expect("run cargo build");
        assert!(status.success(), "building crash_writer failed");
    }
    assert!(bin.exists(), "missing {}", bin.display());
    bin
}

fn check_consistent(store: &FsStore, id: &SessionId) -> u64 {
    let snap = store.load(id).expect("load").expect("a committed step");
    let step = snap.state["step"].as_u64().expect("step");
    let total = snap.state["total"].as_u64().expect("total");
    assert_eq!(snap.messages.len() as u64, total, "state covers every line");
    for (i, m) in snap.messages.iter().enumerate() {
        assert_eq!(m["i"].as_u64(), Some(i as u64), "line {i} in order");
    }
    assert_eq!(
        snap.messages.last().and_then(|m| m["step"].as_u64()),
        Some(step),
        "last line belongs to the last step"
    );
    step
}

#[test]
fn kill_9_leaves_the_last_complete_step_loadable() {
    let root = std::env::temp_dir().join(format!("store-crash-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let bin = writer_binary();
    let id = SessionId::parse("crash").expect("id");
    let store = FsStore::new(&root);
    let mut last_step = 0;
    for round in 0..6u64 {
        let mut child = Command::new(&bin)
            .arg(&root)
            .arg(id.as_str())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn crash_writer");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read");
        assert!(
            line.starts_with("committed "),
            "writer did not start: {line:?}"
        );
        std::thread::sleep(Duration::from_millis(100 + round * 17));
        child.kill().expect("kill -9");
        child.wait().expect("reap");

        let step = check_consistent(&store, &id);
        assert!(
            step > last_step,
            "round {round}: progress {last_step} -> {step}"
        );
        last_step = step;

        // The killed writer's lock went with it (the kernel drops a dead process's locks):
        // the session is free at once. Alternate between this process and the next writer
        // taking it.
        let lock = store
            .session_dir(&id)
            .expect("dir")
            .join("checkpoints")
            .join(archmax_machine::store::LOCK_FILE);
        let probe = std::fs::File::open(&lock).expect("lock file");
        probe.try_lock().expect("a killed writer's lock is free");
        drop(probe);
        if round % 2 == 0 {
            drop(store.acquire(&id).expect("a killed writer's lock is free"));
            assert!(lock.exists(), "the lock file stays");
        }
    }
    let final_state: Value = store.load_state(&id).expect("state").expect("present");
    assert_eq!(final_state["status"], "running");
    let _ = std::fs::remove_dir_all(&root);
}

//! The filesystem store grows the process's descriptor table once, at its first lease,
//! instead of doubling it several times while sessions arrive (each doubling of a shared
//! table waits for an RCU grace period with every other thread's `open` behind it).
//! Its own process: the table's size is process-wide and never shrinks.
#![cfg(target_os = "linux")]

use archmax_machine::store::{FsStore, SessionId, SessionStore};

/// `FDSize` of `/proc/self/status`: the slots the descriptor table has now.
fn fd_slots() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix("FDSize:"))
        .and_then(|v| v.trim().parse().ok())
        .expect("an FDSize line")
}

/// The soft `RLIMIT_NOFILE`, from `/proc/self/limits` ("Max open files  <soft>  <hard>  files").
fn fd_limit() -> u64 {
    let limits = std::fs::read_to_string("/proc/self/limits").expect("/proc/self/limits");
    limits
        .lines()
        .find_map(|l| l.strip_prefix("Max open files"))
        .and_then(|v| v.split_whitespace().next())
        .map(|soft| soft.parse().unwrap_or(u64::MAX))
        .expect("a Max open files line")
}

#[test]
fn the_first_lease_grows_the_descriptor_table_once_for_thousands_of_sessions() {
    let want = fd_limit().min(8192);
    let before = fd_slots();
    assert!(
        before < want,
        "a fresh test process starts with a small table ({before} slots)"
    );
    let root = std::env::temp_dir().join(format!("archmax-fd-table-{}", std::process::id()));
    let store = FsStore::new(&root);
    let id = SessionId::parse("first").expect("id");
    let lease = store.acquire(&id).expect("lease");
    let after = fd_slots();
    drop(lease);
    let _ = std::fs::remove_dir_all(&root);
    assert!(
        after >= want,
        "the table has {after} slots after the first lease, want at least {want}"
    );
}

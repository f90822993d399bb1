//! The behaviour every [`SessionStore`] must show, as functions over a store, and
//! [`store_contract_suite!`](crate::store_contract_suite) to run them all as `#[test]`s
//! against one store. The filesystem and memory stores run it in `store/tests.rs`; a store
//! in another crate (PostgreSQL) turns on this crate's `store-contract` feature in its
//! dev-dependencies and runs the same suite. Test support: these functions panic on a
//! broken contract, as assertions do.
#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use std::sync::Arc;

use serde_json::{Value, json};

use super::*;

/// What a suite's maker expression answers: a store and a guard dropped after the test
/// (`(store, guard)`), or `None` when the store cannot be had here (the test then returns
/// early; the maker says why, and fails instead where the store is required).
pub trait Fixture<S, G> {
    /// The store and its guard, if any.
    fn into_fixture(self) -> Option<(S, G)>;
}

impl<S, G> Fixture<S, G> for (S, G) {
    fn into_fixture(self) -> Option<(S, G)> {
        Some(self)
    }
}

impl<S, G> Fixture<S, G> for Option<(S, G)> {
    fn into_fixture(self) -> Option<(S, G)> {
        self
    }
}

pub fn sid(s: &str) -> SessionId {
    SessionId::parse(s).expect("valid id")
}

pub fn msg(n: u64) -> Value {
    json!({"role": "user", "content": format!("message {n}"), "n": n})
}

pub fn state(step: u64, status: &str) -> Value {
    json!({"workflowState": "draft", "status": status, "step": step})
}

pub fn commit(store: &dyn SessionStore, id: &SessionId, msgs: &[Value], st: &Value) {
    store
        .commit(
            id,
            Step {
                new_messages: msgs,
                state: st,
            },
        )
        .expect("commit");
}

// ---------------------------------------------------------------- shared behaviour suite

pub fn missing_session_is_none(store: &dyn SessionStore) {
    let id = sid("nobody");
    assert!(store.load(&id).expect("load").is_none());
    assert!(store.load_state(&id).expect("load_state").is_none());
    assert!(store.list().expect("list").is_empty());
}

pub fn commit_then_load(store: &dyn SessionStore) {
    let id = sid("s1");
    commit(store, &id, &[msg(1), msg(2)], &state(1, "running"));
    commit(store, &id, &[msg(3)], &state(2, "running"));
    commit(store, &id, &[], &state(3, "completed"));
    let snap = store.load(&id).expect("load").expect("present");
    assert_eq!(snap.state, state(3, "completed"));
    assert_eq!(snap.messages, vec![msg(1), msg(2), msg(3)]);
    assert_eq!(
        store.load_state(&id).expect("load_state"),
        Some(state(3, "completed"))
    );
    // Messages with newlines and unicode survive the line format.
    let odd = json!({"content": "line1\nline2\r\n\u{2028} é 🚀", "k": [1, {"z": null}]});
    commit(store, &id, std::slice::from_ref(&odd), &state(4, "running"));
    let snap = store.load(&id).expect("load").expect("present");
    assert_eq!(snap.messages.last(), Some(&odd));
    assert_eq!(snap.messages.len(), 4);
    // A step given away comes back with its state, and lands as a borrowed one does.
    let step = OwnedStep {
        new_messages: vec![msg(5)],
        state: state(5, "running"),
    };
    let (result, back) = store.commit_owned(&id, step);
    result.expect("commit_owned");
    assert_eq!(back.state, state(5, "running"), "the state comes back");
    let snap = store.load(&id).expect("load").expect("present");
    assert_eq!(snap.state, state(5, "running"));
    assert_eq!(snap.messages.len(), 5);
    assert_eq!(snap.messages.last(), Some(&msg(5)));
}

pub fn state_key_order_preserved(store: &dyn SessionStore) {
    let id = sid("ordered");
    let st: Value = serde_json::from_str(r#"{"z":1,"a":2,"m":{"y":1,"b":2}}"#).expect("json");
    commit(store, &id, &[], &st);
    let back = store.load_state(&id).expect("load").expect("present");
    assert_eq!(
        serde_json::to_string(&back).expect("json"),
        r#"{"z":1,"a":2,"m":{"y":1,"b":2}}"#
    );
}

pub fn single_writer(store: &dyn SessionStore) {
    let id = sid("busy");
    let lease = store.acquire(&id).expect("first acquire");
    assert_eq!(lease.id(), "busy");
    let err = store.acquire(&id).expect_err("second acquire refused");
    assert_eq!(
        err.to_string(),
        "Session 'busy' has a turn in progress (status 'unknown'). A session has a single writer: retry once the turn parks or ends."
    );
    commit(store, &id, &[msg(1)], &state(1, "running"));
    match store.acquire(&id) {
        Err(StoreError::Busy { id, status }) => {
            assert_eq!((id.as_str(), status.as_str()), ("busy", "running"));
        }
        other => panic!("expected Busy, got {other:?}"),
    }
    // Another session is independent.
    let other = store.acquire(&sid("other")).expect("other session");
    drop(lease);
    let again = store.acquire(&id).expect("released on drop");
    drop(again);
    drop(other);
}

pub fn single_writer_across_threads(store: Arc<dyn SessionStore>) {
    let id = sid("race");
    let barrier = Arc::new(std::sync::Barrier::new(8));
    let handles: Vec<_> = (0..8)
        .map(|_| {
            let store = Arc::clone(&store);
            let id = id.clone();
            let barrier = Arc::clone(&barrier);
            std::thread::spawn(move || {
                barrier.wait();
                let got = store.acquire(&id);
                // Hold until every thread has tried.
                std::thread::sleep(std::time::Duration::from_millis(50));
                got.is_ok()
            })
        })
        .collect();
    let wins = handles
        .into_iter()
        .map(|h| h.join().expect("thread"))
        .filter(|ok| *ok)
        .count();
    assert_eq!(wins, 1);
    assert!(store.acquire(&id).is_ok());
}

pub fn list_and_delete_children(store: &dyn SessionStore) {
    let parent = sid("p");
    let child = parent.child("review", "triage", 1).expect("child id");
    let grandchild = child.child("check", "qa", 2).expect("grandchild id");
    assert_eq!(grandchild.as_str(), "p~review:triage:1~check:qa:2");
    let lookalikes = [sid("p~notachild"), sid("pp~review:triage:1"), sid("q")];
    for id in [&parent, &child, &grandchild]
        .into_iter()
        .chain(lookalikes.iter())
    {
        commit(store, id, &[msg(1)], &state(1, "completed"));
    }
    let mut listed = store.list().expect("list");
    listed.sort();
    assert_eq!(
        listed,
        vec![
            "p",
            "pp~review:triage:1",
            "p~notachild",
            "p~review:triage:1",
            "p~review:triage:1~check:qa:2",
            "q"
        ]
    );
    store.delete(&parent).expect("delete");
    let mut listed = store.list().expect("list");
    listed.sort();
    assert_eq!(listed, vec!["pp~review:triage:1", "p~notachild", "q"]);
    assert!(store.load(&child).expect("load").is_none());
    assert!(store.load(&grandchild).expect("load").is_none());
    // Deleting a child leaves its parent; deleting an absent session is fine.
    store.delete(&sid("nobody")).expect("absent");
}

pub fn spec_snapshot_only_if_absent(store: &dyn SessionStore) {
    let hash = "0123456789abcdef0123456789abcdef";
    assert!(store.read_spec_snapshot(hash).expect("read").is_none());
    store
        .write_spec_snapshot(hash, &json!({"name": "first"}))
        .expect("write");
    store
        .write_spec_snapshot(hash, &json!({"name": "second"}))
        .expect("second write is a no-op");
    assert_eq!(
        store.read_spec_snapshot(hash).expect("read"),
        Some(json!({"name": "first"}))
    );
    for bad in ["", "../x", "a/b", "abc.json"] {
        assert!(matches!(
            store.write_spec_snapshot(bad, &json!({})),
            Err(StoreError::InvalidSpecHash { .. })
        ));
    }
    // Spec snapshots are not sessions.
    assert!(store.list().expect("list").is_empty());
}

pub fn nested_ids(store: &dyn SessionStore) {
    let id = sid("/team/alpha");
    assert_eq!(id.as_str(), "team/alpha");
    commit(store, &id, &[msg(1)], &state(1, "running"));
    let snap = store.load(&id).expect("load").expect("present");
    assert_eq!(snap.messages, vec![msg(1)]);
    let child = id.child("s", "w", 3).expect("child");
    commit(store, &child, &[msg(2)], &state(1, "running"));
    store.delete(&id).expect("delete");
    assert!(store.load(&child).expect("load").is_none());
}

/// Ids that once named one folder, or one inside another's, are sessions of their own: their
/// records, files and listing entries never mix, and deleting one leaves the others.
pub fn ids_never_share_storage(store: &dyn SessionStore) {
    let ids = [
        "p1",
        "p1/",
        "./p1",
        "p1/.",
        "p1/checkpoints",
        "p1/scratchpad",
        "P1",
        "p1~s:w:1/x",
        "a b",
        "con",
        "kundé",
    ];
    let ids: Vec<SessionId> = ids.iter().map(|raw| sid(raw)).collect();
    for (n, id) in ids.iter().enumerate() {
        let n = n as u64 + 1;
        commit(store, id, &[msg(n)], &state(n, "running"));
        let files = store.session_files(id).expect("the store keeps files");
        files
            .backend
            .write(&files.dir.join("scratchpad/own.md"), id.as_str().as_bytes())
            .expect("write");
    }
    let listed = store.list().expect("list");
    for (n, id) in ids.iter().enumerate() {
        let snap = store.load(id).expect("load").expect("present");
        assert_eq!(snap.messages, vec![msg(n as u64 + 1)], "{id}");
        let files = store.session_files(id).expect("files");
        assert_eq!(
            files
                .backend
                .read(&files.dir.join("scratchpad/own.md"))
                .expect("read"),
            id.as_str().as_bytes(),
            "{id}"
        );
        assert!(
            listed.iter().any(|l| l == id.as_str()),
            "{id} in {listed:?}"
        );
    }
    store.delete(&ids[0]).expect("delete");
    assert!(store.load(&ids[0]).expect("load").is_none());
    for id in &ids[1..] {
        assert!(store.load(id).expect("load").is_some(), "{id} kept");
    }
}

/// A session's files: `scratchpad/` from the first commit on, kept across commits, gone
/// with the session and with its parent, never shared between sessions.
pub fn session_files_live_and_die_with_their_session(store: &dyn SessionStore) {
    let id = sid("f");
    let child = id.child("s", "w", 1).expect("child");
    let files = store.session_files(&id).expect("the store keeps files");
    let scratch = files.dir.join(SCRATCHPAD_DIR);
    assert!(
        files.backend.meta(&scratch).is_err(),
        "before the first commit"
    );
    let lease = store.acquire(&id).expect("lease");
    commit(store, &id, &[msg(1)], &state(1, "running"));
    assert!(files.backend.meta(&scratch).expect("scratchpad").is_dir());
    let note = scratch.join("n.md");
    files.backend.write(&note, b"kept").expect("write");
    commit(store, &id, &[msg(2)], &state(2, "running"));
    let again = store.session_files(&id).expect("files");
    assert_eq!(
        again
            .backend
            .read(&again.dir.join("scratchpad/n.md"))
            .expect("read"),
        b"kept"
    );
    let other = store.session_files(&sid("g")).expect("files");
    assert!(
        other
            .backend
            .meta(&other.dir.join("scratchpad/n.md"))
            .is_err()
    );
    commit(store, &child, &[msg(1)], &state(1, "running"));
    let child_files = store.session_files(&child).expect("files");
    let child_note = child_files.dir.join("scratchpad/c.md");
    child_files.backend.write(&child_note, b"c").expect("write");
    drop(lease);
    store.delete(&id).expect("delete");
    let gone = store.session_files(&id).expect("files");
    assert!(
        gone.backend
            .meta(&gone.dir.join("scratchpad/n.md"))
            .is_err()
    );
    let child_gone = store.session_files(&child).expect("files");
    assert!(child_gone.backend.meta(&child_note).is_err());
}

/// Every commit is a step of the session's history, numbered from 1, with the state it
/// committed, the transcript it covered and when; the last step is what a load answers;
/// a deleted session has none.
pub fn history_keeps_every_step(store: &dyn SessionStore) {
    let id = sid("h");
    assert!(store.history(&id).expect("history").is_none());
    let before = crate::clock::now_ms();
    commit(store, &id, &[msg(1), msg(2)], &state(1, "running"));
    commit(store, &id, &[], &state(2, "running"));
    commit(store, &id, &[msg(3)], &state(3, "awaiting_decision"));
    let after = crate::clock::now_ms();
    let h = store.history(&id).expect("history").expect("present");
    assert_eq!(h.messages, vec![msg(1), msg(2), msg(3)]);
    let steps: Vec<(u64, u64, Value)> = h
        .checkpoints
        .iter()
        .map(|c| (c.step, c.transcript_len, c.state.clone()))
        .collect();
    assert_eq!(
        steps,
        vec![
            (1, 2, state(1, "running")),
            (2, 2, state(2, "running")),
            (3, 3, state(3, "awaiting_decision")),
        ]
    );
    for c in &h.checkpoints {
        let at = c.at.expect("a commit time");
        // A database's clock may differ from this process's by a little.
        assert!(
            at + 5_000 >= before && at <= after + 5_000,
            "step {} at {at}, committed between {before} and {after}",
            c.step
        );
    }
    let snap = store.load(&id).expect("load").expect("present");
    assert_eq!(Some(&snap.state), h.checkpoints.last().map(|c| &c.state));
    // Another session's steps are its own.
    commit(store, &sid("h2"), &[msg(9)], &state(1, "completed"));
    assert_eq!(h, store.history(&id).expect("history").expect("present"));
    store.delete(&id).expect("delete");
    assert!(store.history(&id).expect("history").is_none());
    assert_eq!(
        store
            .history(&sid("h2"))
            .expect("history")
            .expect("present")
            .checkpoints
            .len(),
        1
    );
}

/// `store_contract_suite!(module, maker)`: a module of `#[test]`s, one per contract
/// function, each making its store with `maker` (`(store, guard)` or `Option` of it).
#[macro_export]
macro_rules! store_contract_suite {
    ($store_mod:ident, $make:expr) => {
        mod $store_mod {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            fn missing_session_is_none() {
                let Some((store, _guard)) = $crate::store::contract::Fixture::into_fixture($make)
                else {
                    return;
                };
                $crate::store::contract::missing_session_is_none(&store);
            }
            #[test]
            fn commit_then_load() {
                let Some((store, _guard)) = $crate::store::contract::Fixture::into_fixture($make)
                else {
                    return;
                };
                $crate::store::contract::commit_then_load(&store);
            }
            #[test]
            fn state_key_order_preserved() {
                let Some((store, _guard)) = $crate::store::contract::Fixture::into_fixture($make)
                else {
                    return;
                };
                $crate::store::contract::state_key_order_preserved(&store);
            }
            #[test]
            fn single_writer() {
                let Some((store, _guard)) = $crate::store::contract::Fixture::into_fixture($make)
                else {
                    return;
                };
                $crate::store::contract::single_writer(&store);
            }
            #[test]
            fn single_writer_across_threads() {
                let Some((store, _guard)) = $crate::store::contract::Fixture::into_fixture($make)
                else {
                    return;
                };
                $crate::store::contract::single_writer_across_threads(::std::sync::Arc::new(store));
            }
            #[test]
            fn list_and_delete_children() {
                let Some((store, _guard)) = $crate::store::contract::Fixture::into_fixture($make)
                else {
                    return;
                };
                $crate::store::contract::list_and_delete_children(&store);
            }
            #[test]
            fn spec_snapshot_only_if_absent() {
                let Some((store, _guard)) = $crate::store::contract::Fixture::into_fixture($make)
                else {
                    return;
                };
                $crate::store::contract::spec_snapshot_only_if_absent(&store);
            }
            #[test]
            fn nested_ids() {
                let Some((store, _guard)) = $crate::store::contract::Fixture::into_fixture($make)
                else {
                    return;
                };
                $crate::store::contract::nested_ids(&store);
            }
            #[test]
            fn ids_never_share_storage() {
                let Some((store, _guard)) = $crate::store::contract::Fixture::into_fixture($make)
                else {
                    return;
                };
                $crate::store::contract::ids_never_share_storage(&store);
            }
            #[test]
            fn session_files_live_and_die_with_their_session() {
                let Some((store, _guard)) = $crate::store::contract::Fixture::into_fixture($make)
                else {
                    return;
                };
                $crate::store::contract::session_files_live_and_die_with_their_session(&store);
            }
            #[test]
            fn history_keeps_every_step() {
                let Some((store, _guard)) = $crate::store::contract::Fixture::into_fixture($make)
                else {
                    return;
                };
                $crate::store::contract::history_keeps_every_step(&store);
            }
        }
    };
}

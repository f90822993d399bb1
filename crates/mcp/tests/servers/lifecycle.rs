//! A server's life: started on first use, restarted after it died (its end
//! reported once), ended by shutdown or by dropping the pool.

use std::path::Path;
use std::time::Duration;

use archmax_mcp::{CallOptions, McpError, McpEvent, McpPool};
use serde_json::json;

use crate::need;
use crate::support::{Events, alive, gone, node_server, pool, repo_root};

fn kill(pid: u32) {
    let pid = rustix::process::Pid::from_raw(i32::try_from(pid).unwrap()).unwrap();
    rustix::process::kill_process(pid, rustix::process::Signal::KILL).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nothing_starts_before_first_use() {
    let script = need!("server-everything");
    let (pool, events) = pool(node_server("everything", &script, &["stdio"]));
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert_eq!(pool.pids(), []);
    assert_eq!(events.all(), []);
    pool.call(
        "everything",
        "echo",
        json!({"message": "x"}),
        CallOptions::default(),
    )
    .await
    .unwrap();
    assert_eq!(pool.pids().len(), 1);
    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_killed_server_is_reported_once_and_restarted_by_the_next_call() {
    let script = need!("server-everything");
    let (pool, events) = pool(node_server("everything", &script, &["stdio"]));
    let echo = |m: &str| {
        pool.call(
            "everything",
            "echo",
            json!({"message": m}),
            CallOptions::default(),
        )
    };
    assert_eq!(echo("one").await.unwrap().text, "Echo: one");
    let [(_, first)] = pool.pids()[..] else {
        panic!("one child: {:?}", pool.pids())
    };

    kill(first);
    let exited = events
        .wait_for(|e| matches!(e, McpEvent::Exited { .. }))
        .await;
    let McpEvent::Exited { server, message } = exited else {
        unreachable!()
    };
    assert_eq!(server, "everything");
    assert!(message.starts_with("was killed by signal 9"), "{message}");
    assert!(
        message.contains("its stderr ends:\nStarting default (STDIO) server..."),
        "{message}"
    );

    assert_eq!(echo("two").await.unwrap().text, "Echo: two");
    let [(_, second)] = pool.pids()[..] else {
        panic!("one child: {:?}", pool.pids())
    };
    assert_ne!(first, second);
    assert!(!alive(first));
    // server-everything also says its tool list changed after each handshake.
    let log: Vec<McpEvent> = events
        .all()
        .into_iter()
        .filter(|e| !matches!(e, McpEvent::ToolsChanged { .. }))
        .collect();
    assert_eq!(
        log.iter()
            .filter(|e| matches!(e, McpEvent::Exited { .. }))
            .count(),
        1,
        "{log:?}"
    );
    assert!(
        matches!(&log[..], [
        McpEvent::Started { pid: Some(a), .. },
        McpEvent::Exited { .. },
        McpEvent::Restarted { pid: Some(b), .. },
    ] if *a == first && *b == second),
        "{log:?}"
    );
    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_under_way_when_the_server_dies_fail_with_its_exit_and_stderr() {
    let script = need!("server-everything");
    let (pool, events) = pool(node_server("everything", &script, &["stdio"]));
    pool.tools("everything").await.unwrap();
    let [(_, pid)] = pool.pids()[..] else {
        panic!("one child")
    };
    let long = || {
        pool.call(
            "everything",
            "trigger-long-running-operation",
            json!({"duration": 10, "steps": 10}),
            CallOptions::default(),
        )
    };
    let killer = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        kill(pid);
    };
    let (a, b, ()) = tokio::join!(long(), long(), killer);
    for r in [a, b] {
        let e = r.unwrap_err();
        let McpError::Exited { server, message } = &e else {
            panic!("{e:?}")
        };
        assert_eq!(server, "everything");
        assert!(
            message.starts_with("was killed by signal 9; its stderr ends:"),
            "{message}"
        );
        assert!(
            e.to_string()
                .starts_with("MCP server 'everything' was killed by signal 9"),
            "{e}"
        );
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let exits = events
        .all()
        .into_iter()
        .filter(|e| matches!(e, McpEvent::Exited { .. }))
        .count();
    assert_eq!(exits, 1, "reported once: {:?}", events.all());
    // And the next call brings it back.
    let r = pool
        .call(
            "everything",
            "echo",
            json!({"message": "back"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.text, "Echo: back");
    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_cannot_start_fails_with_its_stderr() {
    let config = crate::support::config_of(
        &json!({"mcpServers": {"broken": {
            "command": "node",
            "args": ["-e", "console.error('cannot open the database with ' + process.env.DB_TOKEN); process.exit(3)"],
            "env": {"DB_TOKEN": "token-in-env"}
        }}}),
        &|_| None,
    );
    let (pool, events) = pool(config);
    let e = pool.tools("broken").await.unwrap_err();
    assert_eq!(
        e.to_string(),
        "MCP server 'broken' could not start: it exited with status 3 before completing the MCP handshake; its stderr ends:\ncannot open the database with <redacted>"
    );
    assert!(
        matches!(&events.all()[..], [McpEvent::Failed { server, message }]
        if server == "broken" && message == &e.to_string())
    );

    let (pool, _) = pool_of_missing_program();
    let e = pool.tools("missing").await.unwrap_err();
    assert!(
        e.to_string().starts_with(
            "MCP server 'missing' could not start: cannot run 'archmax-no-such-program': "
        ),
        "{e}"
    );
}

fn pool_of_missing_program() -> (std::sync::Arc<McpPool>, Events) {
    pool(crate::support::config_of(
        &json!({"mcpServers": {"missing": {"command": "archmax-no-such-program"}}}),
        &|_| None,
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_ends_every_child_and_refuses_later_calls() {
    let everything = need!("server-everything");
    let filesystem = need!("server-filesystem");
    let root = repo_root();
    let config = crate::support::config_of(
        &json!({"mcpServers": {
            "a": {"command": "node", "args": [everything, "stdio"]},
            "b": {"command": "node", "args": [everything, "stdio"]},
            "fs": {"command": "node", "args": [filesystem, root.join("crates/mcp")]}
        }}),
        &|_| None,
    );
    let (pool, events) = pool(config);
    for s in ["a", "b", "fs"] {
        pool.tools(s).await.unwrap();
    }
    let pids: Vec<u32> = pool.pids().into_iter().map(|(_, p)| p).collect();
    assert_eq!(pids.len(), 3);
    assert!(pids.iter().all(|p| alive(*p)));
    pool.shutdown().await;
    for pid in &pids {
        // Exited and reaped: no /proc entry at all, not even a zombie.
        assert!(
            !Path::new(&format!("/proc/{pid}")).exists(),
            "{pid} is gone"
        );
    }
    assert_eq!(pool.pids(), []);
    assert!(
        !events
            .all()
            .iter()
            .any(|e| matches!(e, McpEvent::Exited { .. })),
        "a shutdown is no news: {:?}",
        events.all()
    );
    assert_eq!(
        pool.call("a", "echo", json!({"message": "x"}), CallOptions::default())
            .await
            .unwrap_err(),
        McpError::Closed
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn dropping_the_pool_kills_its_children() {
    let script = need!("server-everything");
    let (pool, _) = pool(node_server("everything", &script, &["stdio"]));
    pool.tools("everything").await.unwrap();
    let [(_, pid)] = pool.pids()[..] else {
        panic!("one child")
    };
    drop(pool);
    assert!(gone(pid).await, "{pid} survived the pool");
}

#[test]
fn dropping_the_pool_after_its_runtime_kills_its_children() {
    let Some(script) = crate::support::server_script("server-everything") else {
        return;
    };
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (pool, _) = pool(node_server("everything", &script, &["stdio"]));
    let pid = rt.block_on(async {
        pool.tools("everything").await.unwrap();
        pool.pids()[0].1
    });
    drop(rt);
    drop(pool);
    let until = std::time::Instant::now() + Duration::from_secs(5);
    while alive(pid) && std::time::Instant::now() < until {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(pid), "{pid} survived");
}

//! Many sessions, one server: 100 concurrent calls on a pool that has not
//! started its server yet share one start and one process.

use std::sync::Arc;

use archmax_mcp::{CallOptions, McpEvent};
use serde_json::json;

use crate::need;
use crate::support::{marker, node_server, pool, processes_with};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_hundred_concurrent_calls_share_one_server_process() {
    let script = need!("server-everything");
    let mark = marker("hundred");
    let (pool, events) = pool(node_server("everything", &script, &["stdio", &mark]));
    let tasks: Vec<_> = (0..100)
        .map(|i| {
            let pool = Arc::clone(&pool);
            tokio::spawn(async move {
                pool.call(
                    "everything",
                    "echo",
                    json!({"message": format!("call {i}")}),
                    CallOptions::default(),
                )
                .await
            })
        })
        .collect();
    for (i, t) in tasks.into_iter().enumerate() {
        let r = t.await.unwrap().unwrap();
        assert_eq!(r.text, format!("Echo: call {i}"));
    }
    assert_eq!(processes_with(&mark).len(), 1, "one process");
    assert_eq!(pool.pids().len(), 1);
    let starts = events
        .all()
        .into_iter()
        .filter(|e| matches!(e, McpEvent::Started { .. } | McpEvent::Restarted { .. }))
        .count();
    assert_eq!(starts, 1, "{:?}", events.all());
    pool.shutdown().await;
    assert_eq!(processes_with(&mark), Vec::<u32>::new());
}

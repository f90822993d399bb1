//! server-filesystem over stdio, rooted in a scratch directory.

use archmax_mcp::{CallOptions, PathAccess};
use serde_json::json;

use crate::need;
use crate::support::{TempDir, config_of, pool};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn lists_and_reads_files_under_its_root() {
    let script = need!("server-filesystem");
    let dir = TempDir::new("filesystem");
    std::fs::write(dir.0.join("notes.txt"), "hello from disk\n").unwrap();
    std::fs::create_dir(dir.0.join("sub")).unwrap();
    let config = config_of(
        &json!({"mcpServers": {"fs": {
            "command": "node",
            "args": [script, dir.0],
            "paths": {
                "read_text_file": {"path": "read"},
                "list_directory": {"path": "list"},
                "move_file": {"source": "remove", "destination": "write"}
            }
        }}}),
        &|_| None,
    );
    let (pool, _) = pool(config);
    let entry = pool.entry("fs").unwrap();
    assert_eq!(
        entry.paths[2].args[1],
        ("destination".to_string(), PathAccess::Write)
    );

    let tools = pool.tools("fs").await.unwrap();
    for t in [
        "mcp__fs__read_text_file",
        "mcp__fs__list_directory",
        "mcp__fs__write_file",
    ] {
        assert!(tools.by_name(t).is_some(), "{t}");
    }
    let r = pool
        .call(
            "fs",
            "list_directory",
            json!({"path": dir.0}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    let mut lines: Vec<&str> = r.text.lines().collect();
    lines.sort_unstable();
    assert_eq!(lines, ["[DIR] sub", "[FILE] notes.txt"]);

    let r = pool
        .call(
            "fs",
            "read_text_file",
            json!({"path": dir.0.join("notes.txt")}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.text, "hello from disk\n");
    assert!(!r.is_error);

    // Outside its root, the server refuses: a tool error, not a protocol error.
    let r = pool
        .call(
            "fs",
            "read_text_file",
            json!({"path": "/etc/hostname"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert!(r.is_error, "{r:?}");
    assert!(r.text.contains("Access denied"), "{}", r.text);
    pool.shutdown().await;
}

//! server-everything over streamable HTTP on 127.0.0.1, behind a small proxy
//! that records what the client sends (to see the configured headers and the
//! cancellation on the wire).

use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use archmax_mcp::{CallOptions, CancellationToken, McpError};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::process::{Child, Command};

use crate::need;
use crate::support::{config_of, fixture, free_port, pool};

/// The server, listening on 127.0.0.1 only (the loopback preload).
async fn start_server(script: &std::path::Path) -> (Child, u16) {
    let port = free_port();
    let child = Command::new("node")
        .arg(script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .env(
            "NODE_OPTIONS",
            format!("--require {}", fixture("loopback.cjs").display()),
        )
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let until = Instant::now() + Duration::from_secs(10);
    while TcpStream::connect(("127.0.0.1", port)).await.is_err() {
        assert!(Instant::now() < until, "the HTTP server did not listen");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    (child, port)
}

/// A proxy on 127.0.0.1 to `target`, recording every byte the client sends.
async fn recording_proxy(target: u16) -> (u16, Arc<Mutex<Vec<u8>>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen: Arc<Mutex<Vec<u8>>> = Arc::default();
    let log = seen.clone();
    tokio::spawn(async move {
        while let Ok((inbound, _)) = listener.accept().await {
            let log = log.clone();
            tokio::spawn(async move {
                let Ok(outbound) = TcpStream::connect(("127.0.0.1", target)).await else {
                    return;
                };
                let (mut ri, mut wi) = inbound.into_split();
                let (mut ro, mut wo) = outbound.into_split();
                let up = async {
                    let mut buf = [0u8; 8192];
                    while let Ok(n) = ri.read(&mut buf).await {
                        if n == 0 {
                            break;
                        }
                        log.lock().unwrap().extend_from_slice(&buf[..n]);
                        if wo.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = wo.shutdown().await;
                };
                let down = tokio::io::copy(&mut ro, &mut wi);
                let _ = tokio::join!(up, down);
            });
        }
    });
    (port, seen)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn calls_tools_over_streamable_http_with_the_configured_headers() {
    let script = need!("server-everything");
    let (_server, port) = start_server(&script).await;
    let (proxy, seen) = recording_proxy(port).await;
    let lookup = |name: &str| (name == "TEST_KEY").then(|| "header-value-123".to_string());
    let config = config_of(
        &json!({"mcpServers": {"remote": {
            "type": "http",
            "url": format!("http://127.0.0.1:{proxy}/mcp"),
            "headers": {"X-Archmax-Test": "key ${TEST_KEY}"}
        }}}),
        &lookup,
    );
    let (pool, _) = pool(config);
    assert_eq!(pool.pids(), []);
    let tools = pool.tools("remote").await.unwrap();
    assert!(tools.by_name("mcp__remote__get-sum").is_some());

    let r = pool
        .call(
            "remote",
            "echo",
            json!({"message": "over http"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.text, "Echo: over http");
    let r = pool
        .call(
            "remote",
            "get-structured-content",
            json!({"location": "New York"}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.structured.as_ref().unwrap()["temperature"], 33);
    let r = pool
        .call(
            "remote",
            "get-tiny-image",
            json!({}),
            CallOptions::default(),
        )
        .await
        .unwrap();
    assert_eq!(r.images.len(), 1);

    // Progress and cancellation travel over HTTP too.
    let cancel = CancellationToken::new();
    let on_first = cancel.clone();
    let started = Instant::now();
    let e = pool
        .call(
            "remote",
            "trigger-long-running-operation",
            json!({"duration": 10, "steps": 10}),
            CallOptions {
                cancel: Some(cancel),
                on_progress: Some(Arc::new(move |_| on_first.cancel())),
                ..CallOptions::default()
            },
        )
        .await
        .unwrap_err();
    assert!(matches!(e, McpError::Cancelled { .. }), "{e:?}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    tokio::time::sleep(Duration::from_millis(300)).await;

    let sent = String::from_utf8_lossy(&seen.lock().unwrap()).to_lowercase();
    assert!(
        sent.contains("x-archmax-test: key header-value-123"),
        "the header went out"
    );
    assert!(
        sent.contains("\"method\":\"notifications/cancelled\""),
        "the cancellation went out"
    );
    pool.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_unreachable_server_fails_to_start_without_leaking_the_url_secret() {
    let port = free_port();
    let lookup = |name: &str| (name == "KEY").then(|| "url-secret-999".to_string());
    let config = config_of(
        &json!({"mcpServers": {"down": {
            "url": format!("http://127.0.0.1:{port}/mcp?key=${{KEY}}")
        }}}),
        &lookup,
    );
    let (pool, events) = pool(config);
    let e = pool.tools("down").await.unwrap_err();
    let text = e.to_string();
    assert!(
        text.starts_with("MCP server 'down' could not start: "),
        "{text}"
    );
    assert!(!text.contains("url-secret-999"), "{text}");
    assert!(!format!("{:?}", events.all()).contains("url-secret-999"));
}

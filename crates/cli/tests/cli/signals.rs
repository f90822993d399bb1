//! The cargo binary under SIGINT/SIGTERM mid-stream: the first signal cancels the turn
//! (`turn-cancelled`, a hint, exit 1) and a second exits at once with 128 + the signal.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::run::workspace;
use crate::scripted::{Reply, ScriptedServer};

/// Starts `archmax run` against `server`; its stderr arrives on the receiver as it grows.
fn spawn(ws: &crate::support::Workspace, server: &ScriptedServer) -> (Child, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_archmax"))
        .args(["run", "orders", "Where is KK-1?", "--session", "s-1", "--root"])
        .arg(ws.root())
        .env("ARCHMAX_API_BASE_URL", server.url())
        .env("ARCHMAX_API_KEY", "k")
        .env("ARCHMAX_MODEL", "scripted-model")
        .env("ARCHMAX_CLI_NO_BANNER", "1")
        .env("NO_COLOR", "1")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("the binary starts");
    let mut stderr = child.stderr.take().expect("stderr");
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut text = String::new();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stderr.read(&mut buf) {
            if n == 0 {
                break;
            }
            text.push_str(&String::from_utf8_lossy(&buf[..n]));
            if tx.send(text.clone()).is_err() {
                break;
            }
        }
    });
    (child, rx)
}

/// Waits until stderr contains `needle`; the stderr so far.
fn wait_for(rx: &mpsc::Receiver<String>, needle: &str) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut last = String::new();
    while Instant::now() < deadline {
        match rx.recv_timeout(Duration::from_millis(50)) {
            Ok(text) => {
                if text.contains(needle) {
                    return text;
                }
                last = text;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {}
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
        }
    }
    panic!("stderr never showed {needle:?}: {last}");
}

fn signal(child: &Child, name: &str) {
    let ok = Command::new("kill")
        .args([&format!("-{name}"), &child.id().to_string()])
        .status()
        .expect("kill runs")
        .success();
    assert!(ok, "kill -{name}");
}

/// The turn's two steps, then an answer streamed one piece every 300 ms.
fn slow_script() -> Vec<Reply> {
    let mut script = crate::run::completed_script();
    script.pop();
    script.push(
        Reply::stream_text(&["Your ", "order ", "KK-1 ", "has ", "shipped."])
            .with_gap(Duration::from_millis(300)),
    );
    script
}

#[test]
fn the_first_signal_cancels_the_turn_mid_stream_and_a_second_exits_at_once() {
    for (name, code) in [("INT", 130), ("TERM", 143)] {
        let ws = workspace();
        let server = ScriptedServer::start(slow_script()).expect("server");
        let (mut child, rx) = spawn(&ws, &server);
        wait_for(&rx, "    │ Your");
        signal(&child, name);
        let status = child.wait().expect("exits");
        // Everything it wrote: the reader ends at the pipe's end.
        let err = rx.iter().last().unwrap_or_default();
        assert_eq!(status.code(), Some(1), "SIG{name}: {err}");
        assert!(err.contains("cancelling the turn: the last completed step is kept"), "{err}");
        assert!(err.contains("with code 'turn-cancelled'"), "{err}");
        assert!(err.contains("    │ Your"), "{err}");
        assert!(!err.contains("shipped."), "the stream stopped: {err}");

        // A hook that holds the turn: the second signal does not wait for it.
        let ws = crate::support::Workspace::new(&[
            ("workflows/orders/workflow.yaml", &format!("{}    before:\n      script: hooks/slow.js\n", crate::run::SPEC)),
            ("workflows/orders/hooks/slow.js", "export default async () => { const end = Date.now() + 4000; while (Date.now() < end) {} return { verdict: 'ok', reason: 'slow' } }\n"),
        ]);
        let server = ScriptedServer::start(slow_script()).expect("server");
        let started = Instant::now();
        let (mut child, rx) = spawn(&ws, &server);
        wait_for(&rx, "› before");
        signal(&child, name);
        wait_for(&rx, "cancelling the turn");
        signal(&child, name);
        let status = child.wait().expect("exits");
        assert_eq!(status.code(), Some(code), "SIG{name} twice");
        assert!(started.elapsed() < Duration::from_millis(3500), "it did not wait for the hook");
    }
}

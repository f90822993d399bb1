//! A stdio server's child process: spawned with only the environment it is
//! given, in a process group of its own (so `npx` and what it starts go
//! together), its stderr kept in a bounded tail, its exit watched.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{ChildStdin, ChildStdout, Command};
use tokio::sync::watch;
use tokio_util::sync::CancellationToken;

use crate::config::StdioTransport;
use crate::secret::Redactor;

/// How much of a child's stderr is kept.
const STDERR_TAIL_BYTES: usize = 8 * 1024;
/// How many of its last lines a failure message quotes.
const QUOTED_LINES: usize = 12;

/// The end of a child's stderr.
#[derive(Default)]
pub(crate) struct StderrTail {
    bytes: Mutex<VecDeque<u8>>,
}

impl StderrTail {
    fn push(&self, chunk: &[u8]) {
        let mut b = self.bytes.lock().unwrap_or_else(PoisonError::into_inner);
        b.extend(chunk);
        let over = b.len().saturating_sub(STDERR_TAIL_BYTES);
        b.drain(..over);
    }

    /// The last lines, redacted; empty when the child wrote nothing.
    pub(crate) fn quote(&self, redactor: &Redactor) -> String {
        let bytes: Vec<u8> = self
            .bytes
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .iter()
            .copied()
            .collect();
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = &lines[lines.len().saturating_sub(QUOTED_LINES)..];
        redactor.redact(&tail.join("\n"))
    }
}

/// How a child ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Exit {
    /// It exited by itself (or by a signal someone else sent).
    Status(ExitStatus),
    /// We killed it.
    Killed,
    /// Its status could not be read.
    Unknown,
}

/// What kills a child: cheap to clone, usable from `Drop` without a runtime.
#[derive(Clone)]
pub(crate) struct KillSwitch {
    pid: Option<u32>,
    token: CancellationToken,
    /// Set once the child is reaped: its pid (the group's id) may then be reused.
    reaped: Arc<AtomicBool>,
}

impl KillSwitch {
    /// Kills the child's whole process group now (synchronously, on Unix) and
    /// tells its monitor to reap it.
    pub(crate) fn kill(&self) {
        if self.token.is_cancelled() {
            return;
        }
        self.token.cancel();
        if !self.reaped.load(Ordering::Acquire) {
            kill_group(self.pid);
        }
    }

    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }
}

/// A running child. Dropping it kills it.
pub(crate) struct Process {
    pub(crate) switch: KillSwitch,
    pub(crate) stderr: Arc<StderrTail>,
    exit: watch::Receiver<Option<Exit>>,
}

impl Drop for Process {
    fn drop(&mut self) {
        self.switch.kill();
    }
}

/// What the pool gives every child besides its declared environment.
pub(crate) struct Spawn<'a> {
    /// The workspace root: a relative `cwd` is taken from it, and it is the
    /// working directory of a server without one.
    pub(crate) root: &'a Path,
    /// Variables passed through from the pool's own environment.
    pub(crate) inherit: &'a [String],
}

impl Process {
    /// Starts `stdio`'s command; its stdout and stdin are the MCP transport.
    pub(crate) fn spawn(
        stdio: &StdioTransport,
        how: &Spawn<'_>,
    ) -> std::io::Result<(Process, ChildStdout, ChildStdin)> {
        let cwd = match &stdio.cwd {
            Some(c) => how.root.join(c),
            None => how.root.to_path_buf(),
        };
        let mut cmd = Command::new(program(&stdio.command, &cwd));
        cmd.args(&stdio.args)
            .current_dir(&cwd)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true);
        for name in how.inherit {
            if let Some(v) = std::env::var_os(name) {
                cmd.env(name, v);
            }
        }
        for (k, v) in &stdio.env {
            cmd.env(k, OsString::from(v.expose()));
        }
        #[cfg(unix)]
        cmd.process_group(0);
        let mut child = cmd.spawn()?;
        let (Some(stdout), Some(stdin), Some(mut err)) =
            (child.stdout.take(), child.stdin.take(), child.stderr.take())
        else {
            return Err(std::io::Error::other("the child's pipes were not set up"));
        };
        let stderr = Arc::new(StderrTail::default());
        let tail = stderr.clone();
        tokio::spawn(async move {
            let mut buf = [0u8; 4096];
            while let Ok(n) = err.read(&mut buf).await {
                if n == 0 {
                    break;
                }
                if let Some(chunk) = buf.get(..n) {
                    tail.push(chunk);
                }
            }
        });
        let switch = KillSwitch {
            pid: child.id(),
            token: CancellationToken::new(),
            reaped: Arc::new(AtomicBool::new(false)),
        };
        let (exit_tx, exit) = watch::channel(None);
        let (token, reaped, pid) = (switch.token.clone(), switch.reaped.clone(), switch.pid);
        tokio::spawn(async move {
            let exit = tokio::select! {
                status = child.wait() => status.map_or(Exit::Unknown, Exit::Status),
                () = token.cancelled() => {
                    let _ = child.start_kill();
                    let _ = child.wait().await;
                    Exit::Killed
                }
            };
            // The leader is gone; whatever it started in its group goes with it.
            kill_group(pid);
            reaped.store(true, Ordering::Release);
            let _ = exit_tx.send(Some(exit));
        });
        Ok((
            Process {
                switch,
                stderr,
                exit,
            },
            stdout,
            stdin,
        ))
    }

    /// Watches for its end.
    pub(crate) fn exit_watch(&self) -> watch::Receiver<Option<Exit>> {
        self.exit.clone()
    }

    /// How it ended, once it has (and been reaped).
    pub(crate) fn exit(&self) -> Option<Exit> {
        *self.exit.borrow()
    }

    /// Waits up to `within` for the child to end.
    pub(crate) async fn exited(&self, within: Duration) -> Option<Exit> {
        let mut rx = self.exit.clone();
        let wait = rx.wait_for(Option::is_some);
        match tokio::time::timeout(within, wait).await {
            Ok(Ok(exit)) => *exit,
            _ => None,
        }
    }
}

/// SIGKILL to the process group led by `pid` (the child's own group).
#[cfg(unix)]
fn kill_group(pid: Option<u32>) {
    if let Some(pgid) = pid
        .and_then(|p| i32::try_from(p).ok())
        .and_then(rustix::process::Pid::from_raw)
    {
        let _ = rustix::process::kill_process_group(pgid, rustix::process::Signal::KILL);
    }
}

#[cfg(not(unix))]
fn kill_group(_: Option<u32>) {}

/// The program to run: a name is looked up in `PATH`; a relative path is taken
/// from the server's working directory (not the harness's).
fn program(command: &str, cwd: &Path) -> PathBuf {
    let p = Path::new(command);
    if p.is_relative() && p.components().count() > 1 {
        cwd.join(p)
    } else {
        p.to_path_buf()
    }
}

/// `exited with status 1`, `was killed by signal 9`, for a message.
pub(crate) fn describe(exit: Option<Exit>) -> String {
    match exit {
        Some(Exit::Status(s)) => match s.code() {
            Some(code) => format!("exited with status {code}"),
            None => signal_of(s).map_or_else(
                || "exited".to_string(),
                |sig| format!("was killed by signal {sig}"),
            ),
        },
        Some(Exit::Killed) => "was stopped by the pool".to_string(),
        Some(Exit::Unknown) => "exited (status unknown)".to_string(),
        None => "closed its connection".to_string(),
    }
}

#[cfg(unix)]
fn signal_of(s: ExitStatus) -> Option<i32> {
    use std::os::unix::process::ExitStatusExt;
    s.signal()
}

#[cfg(not(unix))]
fn signal_of(_: ExitStatus) -> Option<i32> {
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_tail_keeps_the_last_lines_redacted() {
        let tail = StderrTail::default();
        for i in 0..2000 {
            tail.push(format!("line {i} token-abc\n").as_bytes());
        }
        let mut r = Redactor::default();
        r.add("token-abc");
        let q = tail.quote(&r);
        assert_eq!(q.lines().count(), QUOTED_LINES);
        assert!(q.ends_with("line 1999 <redacted>"), "{q}");
        assert!(!q.contains("token-abc"));
    }

    #[test]
    fn relative_programs_come_from_the_server_directory() {
        let cwd = Path::new("/ws/tools");
        assert_eq!(program("node", cwd), PathBuf::from("node"));
        assert_eq!(
            program("./run.sh", cwd),
            PathBuf::from("/ws/tools/./run.sh")
        );
        assert_eq!(program("/usr/bin/env", cwd), PathBuf::from("/usr/bin/env"));
    }
}

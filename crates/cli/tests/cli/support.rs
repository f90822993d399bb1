//! Shared helpers: temporary workspaces and CLI runs against the scripted server.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};

use archmax_cli::{BufferIo, run};

use crate::scripted::ScriptedServer;

/// A workspace in a fresh temporary directory, removed on drop.
pub struct Workspace {
    root: PathBuf,
}

impl Workspace {
    /// Writes `files` (workspace-relative path, content).
    pub fn new(files: &[(&str, &str)]) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let root = std::env::temp_dir().join(format!("archmax-cli-ws-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        std::fs::create_dir_all(&root).expect("create root");
        for (path, content) in files {
            let p = root.join(path);
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir).expect("create dir");
            }
            std::fs::write(&p, content).expect("write file");
        }
        Workspace { root }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The session header of `workflow`, with or without the model line.
    pub fn header(&self, workflow: &str, model: Option<&str>) -> String {
        let model = model
            .map(|m| format!("  model      {m}\n"))
            .unwrap_or_default();
        format!(
            "◆ {workflow}\n  directory  {}\n{model}\n",
            self.root.display()
        )
    }
}

impl Drop for Workspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

/// What a CLI run produced.
#[derive(Debug)]
pub struct Ran {
    pub code: i32,
    pub out: String,
    pub err: String,
}

/// Runs the CLI in `ws` with a plain (non-TTY, no banner) process; the model
/// variables point at `server` when given.
pub fn cli(ws: &Workspace, server: Option<&ScriptedServer>, args: &[&str]) -> Ran {
    cli_with(ws, server, &[], false, args)
}

/// [`cli`] with extra real environment variables and a chosen stderr TTY flag.
pub fn cli_with(
    ws: &Workspace,
    server: Option<&ScriptedServer>,
    env: &[(&str, &str)],
    tty: bool,
    args: &[&str],
) -> Ran {
    let mut io = BufferIo::new(ws.root()).with_env("ARCHMAX_CLI_NO_BANNER", "1");
    io.tty = tty;
    for (k, v) in env {
        io = io.with_env(k, v);
    }
    if let Some(server) = server {
        io = io
            .with_env("ARCHMAX_API_BASE_URL", &server.url())
            .with_env("ARCHMAX_API_KEY", "test-key")
            .with_env("ARCHMAX_MODEL", "scripted-model");
    }
    let args: Vec<String> = args.iter().map(|s| (*s).to_string()).collect();
    let code = run(&args, &mut io);
    Ran {
        code,
        out: io.stdout_text(),
        err: io.stderr_text(),
    }
}

/// `text` with the times a session listing prints made fixed: an age after `· ` or in
/// `(… ago)` becomes `<age>`, a time after `since ` becomes `<t>`.
pub fn no_times(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    loop {
        let next = ["· ", "(", "since "]
            .iter()
            .filter_map(|m| rest.find(m).map(|at| (at, *m)))
            .min_by_key(|(at, _)| *at);
        let Some((at, marker)) = next else {
            out.push_str(rest);
            return out;
        };
        out.push_str(&rest[..at + marker.len()]);
        rest = &rest[at + marker.len()..];
        let digits = rest.bytes().take_while(u8::is_ascii_digit).count();
        let unit = rest[digits..].chars().next();
        if marker == "since " && rest.len() >= 24 && rest.as_bytes().get(23) == Some(&b'Z') {
            out.push_str("<t>");
            rest = &rest[24..];
        } else if digits > 0 && matches!(unit, Some('s' | 'm' | 'h' | 'd')) {
            let after = &rest[digits + 1..];
            if marker != "(" || after.starts_with(" ago)") {
                out.push_str("<age>");
                rest = after;
            }
        }
    }
}

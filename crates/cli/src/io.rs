//! The process surface the CLI talks to: [`Io`], with [`StdIo`] for the real
//! process and [`BufferIo`] for tests and embedders.

use std::collections::HashMap;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;

/// Everything the CLI reads from or writes to its process. Library code never
/// touches `std::io::stdout`, `std::env` or `std::process` directly.
pub trait Io {
    /// Where results go.
    fn stdout(&mut self) -> &mut dyn Write;
    /// Where narration, warnings and errors go.
    fn stderr(&mut self) -> &mut dyn Write;
    /// A variable of the real process environment (`None` when unset).
    fn env_var(&self, name: &str) -> Option<String>;
    /// The real environment as an owned lookup, for a harness that outlives this borrow.
    fn env_lookup(&self) -> archmax_machine::env::Lookup;
    /// The current working directory.
    fn cwd(&self) -> std::io::Result<PathBuf>;
    /// Whether stderr is a terminal; decides color and the banner.
    fn stderr_is_tty(&self) -> bool;
}

/// The real process: unlocked handles on stdout and stderr, `std::env`.
#[derive(Debug)]
pub struct StdIo {
    stdout: std::io::Stdout,
    stderr: std::io::Stderr,
}

impl StdIo {
    /// Handles on the process's stdout and stderr.
    pub fn new() -> Self {
        StdIo {
            stdout: std::io::stdout(),
            stderr: std::io::stderr(),
        }
    }
}

impl Default for StdIo {
    fn default() -> Self {
        Self::new()
    }
}

impl Io for StdIo {
    fn stdout(&mut self) -> &mut dyn Write {
        &mut self.stdout
    }
    fn stderr(&mut self) -> &mut dyn Write {
        &mut self.stderr
    }
    fn env_var(&self, name: &str) -> Option<String> {
        std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
    }
    fn env_lookup(&self) -> archmax_machine::env::Lookup {
        std::sync::Arc::new(|name: &str| {
            std::env::var_os(name).map(|v| v.to_string_lossy().into_owned())
        })
    }
    fn cwd(&self) -> std::io::Result<PathBuf> {
        std::env::current_dir()
    }
    fn stderr_is_tty(&self) -> bool {
        self.stderr.is_terminal()
    }
}

/// An in-memory process: captured output, a fixed environment and cwd.
#[derive(Debug, Clone, Default)]
pub struct BufferIo {
    /// Everything written to stdout.
    pub out: Vec<u8>,
    /// Everything written to stderr.
    pub err: Vec<u8>,
    /// The real environment.
    pub env: HashMap<String, String>,
    /// The working directory.
    pub cwd: PathBuf,
    /// Whether stderr pretends to be a terminal.
    pub tty: bool,
}

impl BufferIo {
    /// A non-TTY process in `cwd` with an empty environment.
    pub fn new(cwd: impl Into<PathBuf>) -> Self {
        BufferIo {
            cwd: cwd.into(),
            ..Self::default()
        }
    }
    /// Sets a real environment variable.
    #[must_use]
    pub fn with_env(mut self, name: &str, value: &str) -> Self {
        self.env.insert(name.to_string(), value.to_string());
        self
    }
    /// stdout as text.
    pub fn stdout_text(&self) -> String {
        String::from_utf8_lossy(&self.out).into_owned()
    }
    /// stderr as text.
    pub fn stderr_text(&self) -> String {
        String::from_utf8_lossy(&self.err).into_owned()
    }
}

impl Io for BufferIo {
    fn stdout(&mut self) -> &mut dyn Write {
        &mut self.out
    }
    fn stderr(&mut self) -> &mut dyn Write {
        &mut self.err
    }
    fn env_var(&self, name: &str) -> Option<String> {
        self.env.get(name).cloned()
    }
    fn env_lookup(&self) -> archmax_machine::env::Lookup {
        let env = self.env.clone();
        std::sync::Arc::new(move |name: &str| env.get(name).cloned())
    }
    fn cwd(&self) -> std::io::Result<PathBuf> {
        Ok(self.cwd.clone())
    }
    fn stderr_is_tty(&self) -> bool {
        self.tty
    }
}

//! Finding the servers, building pools, watching processes.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use archmax_mcp::{McpConfig, McpEvent, McpPool, PoolOptions, config};

/// The repository root (where `node_modules` is).
pub fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// `node_modules/@modelcontextprotocol/<name>/dist/index.js`, or `None` (after
/// saying why) when it is not installed; under `CI=true` a missing server fails.
pub fn server_script(name: &str) -> Option<PathBuf> {
    let path = repo_root()
        .join("node_modules/@modelcontextprotocol")
        .join(name)
        .join("dist/index.js");
    if path.is_file() {
        return Some(path.canonicalize().unwrap_or(path));
    }
    let why = format!(
        "{} is not installed: run `npm install` at the repository root",
        path.display()
    );
    if std::env::var("CI").is_ok_and(|v| v == "true") {
        panic!("{why}");
    }
    eprintln!("skipped: {why}");
    None
}

/// The fixture file `name`.
pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}

/// Returns from the test when the server is not installed.
#[macro_export]
macro_rules! need {
    ($name:expr) => {
        match $crate::support::server_script($name) {
            Some(p) => p,
            None => return,
        }
    };
}

/// A config from JSON (which must be clean).
pub fn config_of(json: &serde_json::Value, lookup: &dyn Fn(&str) -> Option<String>) -> McpConfig {
    let (config, diags) = config::parse(&json.to_string(), ".mcp.json", lookup);
    assert_eq!(diags, [], "the test's config is clean");
    config.expect("config")
}

/// A config of one stdio server `name` running `node <script> <args...>`.
pub fn node_server(name: &str, script: &Path, args: &[&str]) -> McpConfig {
    let mut all = vec![script.to_string_lossy().to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    config_of(
        &serde_json::json!({"mcpServers": {name: {"command": "node", "args": all}}}),
        &|_| None,
    )
}

/// The events a pool reported.
#[derive(Clone, Default)]
pub struct Events(Arc<Mutex<Vec<McpEvent>>>);

impl Events {
    pub fn options(&self, root: &Path) -> PoolOptions {
        let mut o = PoolOptions::new(root);
        let sink = self.0.clone();
        o.on_event = Some(Arc::new(move |e| sink.lock().unwrap().push(e)));
        o
    }
    pub fn all(&self) -> Vec<McpEvent> {
        self.0.lock().unwrap().clone()
    }
    /// Waits up to 5 s for an event that `f` accepts.
    pub async fn wait_for(&self, f: impl Fn(&McpEvent) -> bool) -> McpEvent {
        let until = Instant::now() + Duration::from_secs(5);
        loop {
            if let Some(e) = self.all().into_iter().find(|e| f(e)) {
                return e;
            }
            assert!(Instant::now() < until, "no such event in {:?}", self.all());
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
}

/// A pool of `config` with an event log, in the repository root.
pub fn pool(config: McpConfig) -> (Arc<McpPool>, Events) {
    let events = Events::default();
    let pool = McpPool::new(config, events.options(&repo_root()));
    (pool, events)
}

/// True while `pid` runs (a zombie counts as gone).
pub fn alive(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        // `pid (comm) S ...`: the state follows the last ')'.
        Ok(stat) => stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().next())
            .is_some_and(|state| state != "Z" && state != "X"),
        Err(_) => false,
    }
}

/// Waits up to 5 s for `pid` to be gone.
pub async fn gone(pid: u32) -> bool {
    let until = Instant::now() + Duration::from_secs(5);
    while alive(pid) {
        if Instant::now() > until {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    true
}

/// The pids of processes whose command line holds `marker`.
pub fn processes_with(marker: &str) -> Vec<u32> {
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.filter_map(Result::ok)
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .is_ok_and(|c| String::from_utf8_lossy(&c).contains(marker))
                && alive(*pid)
        })
        .collect()
}

/// A marker unique to this test run, for finding its processes.
pub fn marker(test: &str) -> String {
    format!("archmax-mcp-test-{test}-{}", std::process::id())
}

/// A free port on 127.0.0.1.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A scratch directory, removed on drop.
pub struct TempDir(pub PathBuf);

impl TempDir {
    pub fn new(test: &str) -> TempDir {
        let dir = std::env::temp_dir().join(marker(test));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir.canonicalize().unwrap())
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

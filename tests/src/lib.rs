//! Shared helpers for the integration tests.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use archmax_machine::model::{Model, ModelConfig, OpenAiClient, RetryPolicy};
use archmax_machine::store::FsStore;
use archmax_machine::{Harness, HarnessOptions, NoEvents, Outcome, SendInput};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The repository root.
pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The example workspace.
pub fn example_root() -> PathBuf {
    repo_root().join("examples/customer-support")
}

/// A workspace written to a fresh temporary directory, removed on drop.
pub struct TempWorkspace {
    root: PathBuf,
}

impl TempWorkspace {
    /// Writes `files` (workspace-relative path, content) under a new directory.
    pub fn new(files: &[(&str, &str)]) -> Self {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        let n = NEXT.fetch_add(1, Ordering::SeqCst);
        let root = std::env::temp_dir().join(format!("archmax-test-{}-{n}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for (path, content) in files {
            let p = root.join(path);
            if let Some(dir) = p.parent() {
                std::fs::create_dir_all(dir).expect("create dir");
            }
            std::fs::write(&p, content).expect("write file");
        }
        std::fs::create_dir_all(&root).expect("create root");
        TempWorkspace { root }
    }

    /// A copy of the workspace at `from` (sessions written there stay in the copy), without
    /// its own `sessions/` store: the README's main job leaves one in the example.
    pub fn copy_of(from: &Path) -> Self {
        fn copy(from: &Path, to: &Path, top: bool) {
            std::fs::create_dir_all(to).expect("create dir");
            for entry in std::fs::read_dir(from).expect("read dir").flatten() {
                if top && entry.file_name() == "sessions" {
                    continue;
                }
                let target = to.join(entry.file_name());
                if entry.path().is_dir() {
                    copy(&entry.path(), &target, false);
                } else {
                    std::fs::copy(entry.path(), &target).expect("copy file");
                }
            }
        }
        let ws = TempWorkspace::new(&[]);
        copy(from, ws.root(), true);
        link_mcp_sdk(ws.root());
        ws
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }
}

/// A copy of the example workspace runs its MCP server (`mcp/shop.mjs`), which imports the
/// MCP SDK: a link to the repository's `node_modules` beside the script lets it resolve from a
/// copy outside the repository. Nothing for a workspace without `mcp/`.
pub fn link_mcp_sdk(root: &Path) {
    let mcp = root.join("mcp");
    if mcp.is_dir() {
        #[cfg(unix)]
        let _ =
            std::os::unix::fs::symlink(repo_root().join("node_modules"), mcp.join("node_modules"));
    }
}

impl Drop for TempWorkspace {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

pub mod hooked;
pub mod in_process;
pub mod otlp;
pub mod scripted;

/// Where a test harness's model calls go, one attempt per call: an [`InProcessModel`]'s
/// script (no HTTP: the turn-behaviour tests), or over HTTP a [`ScriptedServer`] or any base
/// URL (the tests of the model client, and those needing the wire).
///
/// [`InProcessModel`]: in_process::InProcessModel
/// [`ScriptedServer`]: scripted::ScriptedServer
pub trait ModelEndpoint {
    /// The model a harness whose default model id is `model` calls.
    fn model(&self, model: &str) -> Arc<dyn Model>;
}

impl ModelEndpoint for in_process::InProcessModel {
    fn model(&self, model: &str) -> Arc<dyn Model> {
        Arc::new(self.client(config(in_process::IN_PROCESS_URL, model)))
    }
}

impl ModelEndpoint for scripted::ScriptedServer {
    fn model(&self, model: &str) -> Arc<dyn Model> {
        Arc::new(client(&self.url(), model))
    }
}

/// A base URL: the HTTP client of the endpoint there.
impl ModelEndpoint for str {
    fn model(&self, model: &str) -> Arc<dyn Model> {
        Arc::new(client(self, model))
    }
}

impl ModelEndpoint for String {
    fn model(&self, model: &str) -> Arc<dyn Model> {
        self.as_str().model(model)
    }
}

/// A harness for `workflow` of the workspace at `root`, its model `endpoint`'s (one attempt
/// per call, no retries; `model` the default model id), its sessions on disk; `customize`
/// adjusts the options (events, tools, mounts) before assembly.
pub fn harness(
    root: &Path,
    workflow: &str,
    endpoint: &(impl ModelEndpoint + ?Sized),
    model: &str,
    customize: impl FnOnce(&mut HarnessOptions),
) -> Harness {
    let mut opts = HarnessOptions {
        root: root.to_path_buf(),
        workflow: workflow.to_string(),
        model: endpoint.model(model),
        default_model: model.to_string(),
        store: Arc::new(FsStore::new(root)),
        events: Arc::new(NoEvents),
        tools: Vec::new(),
        essential_tools: Vec::new(),
        mounts: None,
        skills: vec!["skills/".to_string()],
    };
    customize(&mut opts);
    // The workspace's MCP servers, as the builder reads them.
    let mcp =
        archmax_machine::mcp::McpTools::from_workspace(root, &|n| std::env::var(n).ok(), None)
            .expect("the .mcp.json reads");
    Harness::assemble_with(
        opts,
        archmax_machine::AssemblyExtras {
            mcp,
            ..Default::default()
        },
    )
    .expect("harness")
}

/// The HTTP client of the server at `model_url`: one attempt per call, no retries.
pub fn client(model_url: &str, model: &str) -> OpenAiClient {
    OpenAiClient::new(config(model_url, model)).expect("client")
}

/// The model configuration of the tests' clients: `model_url`, a test key, `model` the
/// default model id, one attempt per call.
pub fn config(model_url: &str, model: &str) -> ModelConfig {
    let mut config = ModelConfig::new(model_url, "test-key", model);
    config.retry = RetryPolicy {
        attempts: 1,
        base_delay: std::time::Duration::from_millis(1),
        ..RetryPolicy::default()
    };
    config
}

/// The example's refund flow as the model answers it (five calls): to `refund-request`, a
/// proposal above what was paid (the hook vetoes it), a deny sent to `refund-review` (the
/// hook corrects it), on to `closed`, then `last`, the reply.
pub fn refund_flow(last: scripted::Reply) -> Vec<scripted::Reply> {
    use scripted::Reply;
    use serde_json::json;
    let decision = |decision: &str, amount: f64| {
        let file = json!({ "order_id": "KK-2046", "decision": decision, "amount": amount, "currency": "EUR", "limit": 0, "reason": "Cancelled orders are not refunded." });
        json!({ "file_path": "scratchpad/refund.json", "content": file.to_string() })
    };
    vec![
        Reply::tool_calls(vec![(
            "c1",
            "archmax_advance",
            json!({ "to": "refund-request", "reason": "wants money back" }),
        )]),
        Reply::tool_calls(vec![
            (
                "c2",
                "archmax_set_variables",
                json!({ "variables": { "order_id": "KK-2046" } }),
            ),
            ("c3", "write_file", decision("partial_refund", 999.0)),
            (
                "c4",
                "archmax_advance",
                json!({ "to": "refund-review", "reason": "proposal written" }),
            ),
        ]),
        Reply::tool_calls(vec![
            ("c5", "write_file", decision("deny", 0.0)),
            (
                "c6",
                "archmax_advance",
                json!({ "to": "refund-review", "reason": "deny written" }),
            ),
        ]),
        Reply::tool_calls(vec![(
            "c7",
            "archmax_advance",
            json!({ "to": "closed", "reason": "deny needs no approval" }),
        )]),
        last,
    ]
}

/// A current-thread runtime for driving a harness from a test.
pub fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// Sends `message` to session `id` and waits for the outcome.
pub fn send(h: &Harness, id: &str, message: &str) -> Outcome {
    rt().block_on(h.send(
        id,
        SendInput {
            message: message.into(),
            ..SendInput::default()
        },
    ))
    .expect("turn")
}

pub use scripted::tool_results;

#![allow(dead_code)]

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use archmax_sandbox::{Limits, Sandbox, ToolBridge};
use serde_json::Value;

pub const BLOCKED: &str = "[workflow] BLOCKED: 'write_file' is not allowed in state 'review'.";

/// A bridge that records calls and answers by tool name.
#[derive(Default)]
pub struct TestBridge {
    pub names: Vec<String>,
    pub calls: Mutex<Vec<(String, Value)>>,
    /// (tool, start, end) of every `sleep` call.
    pub spans: Mutex<Vec<(Instant, Instant)>>,
}

impl TestBridge {
    pub fn new(names: &[&str]) -> Arc<Self> {
        Arc::new(Self {
            names: names.iter().map(|s| (*s).to_owned()).collect(),
            ..Self::default()
        })
    }

    pub fn standard() -> Arc<Self> {
        Self::new(&[
            "read_file",
            "write_file",
            "sleep",
            "archmax_advance",
            "archmax_workflow_enrich-order",
        ])
    }

    pub fn calls(&self) -> Vec<(String, Value)> {
        self.calls.lock().map(|c| c.clone()).unwrap_or_default()
    }
}

impl ToolBridge for TestBridge {
    fn tools(&self) -> Vec<String> {
        self.names.clone()
    }

    fn call<'a>(
        &'a self,
        name: &'a str,
        args: Value,
    ) -> Pin<Box<dyn Future<Output = Result<String, String>> + Send + 'a>> {
        Box::pin(async move {
            if let Ok(mut c) = self.calls.lock() {
                c.push((name.to_owned(), args.clone()));
            }
            match name {
                "read_file" => Ok(format!(
                    "contents of {}",
                    args.get("file_path").and_then(Value::as_str).unwrap_or("?")
                )),
                "write_file" => Err(BLOCKED.to_owned()),
                "sleep" => {
                    let ms = args.get("ms").and_then(Value::as_u64).unwrap_or(0);
                    let start = Instant::now();
                    tokio::time::sleep(Duration::from_millis(ms)).await;
                    if let Ok(mut s) = self.spans.lock() {
                        s.push((start, Instant::now()));
                    }
                    Ok(format!("slept {ms}"))
                }
                other => Ok(format!("called {other} with {args}")),
            }
        })
    }
}

pub async fn sandbox() -> Sandbox {
    Sandbox::new(Limits::default()).await.expect("sandbox")
}

pub async fn sandbox_with(limits: Limits) -> Sandbox {
    Sandbox::new(limits).await.expect("sandbox")
}

pub fn short_limits(ms: u64) -> Limits {
    Limits {
        timeout: Duration::from_millis(ms),
        ..Limits::default()
    }
}

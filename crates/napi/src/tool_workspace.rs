//! `context.workspace` of a host tool's handler: while a host tool call runs, its governed
//! workspace handle (`archmax_machine::host_workspace`) is registered under a number the
//! handler's JS context carries; `toolWorkspace` serves the handler's accesses through it
//! (on the JS thread, like the file tools of a JS-driven turn). The entry is dropped and the
//! handle closed once the call settles.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use archmax_machine::host_workspace::{CLOSED, HostWorkspace, UploadRefusal};
use base64::Engine;
use serde_json::{Value, json};

/// The handles of the host tool calls in flight, by context id.
#[derive(Default)]
pub(crate) struct ToolWorkspaces {
    next: AtomicU32,
    live: Mutex<HashMap<u32, Arc<HostWorkspace>>>,
}

/// A registered handle: unregistered and closed when dropped (the call settled).
pub(crate) struct Registered {
    owner: Arc<ToolWorkspaces>,
    id: u32,
}

impl Registered {
    /// The id the handler's context carries.
    pub(crate) fn id(&self) -> u32 {
        self.id
    }
}

impl Drop for Registered {
    fn drop(&mut self) {
        let removed = self
            .owner
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
        if let Some(ws) = removed {
            ws.close();
        }
    }
}

impl ToolWorkspaces {
    /// Registers `ws` for the call about to run.
    pub(crate) fn register(owner: &Arc<ToolWorkspaces>, ws: Arc<HostWorkspace>) -> Registered {
        let id = owner.next.fetch_add(1, Ordering::Relaxed).wrapping_add(1);
        owner
            .live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, ws);
        Registered {
            owner: Arc::clone(owner),
            id,
        }
    }

    /// The handle of the call `id`, while it runs.
    pub(crate) fn get(&self, id: u32) -> Option<Arc<HostWorkspace>> {
        self.live
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(&id)
            .cloned()
    }
}

fn str_arg<'a>(args: &'a Value, name: &str) -> Option<&'a str> {
    args.get(name).and_then(Value::as_str)
}

/// One access: `read` `{ path, offset?, limit? }` → `{ content } | { error }`; `download`
/// `{ paths }` → `[{ path, content: base64 | null, error: string | null }]`; `upload`
/// `{ files: [[path, base64]] }` → `[{ path, error: null } | { path: '/<path>', error:
/// 'permission_denied', reason }]`; `delete` `{ path }` → `{ error? }`.
pub(crate) fn serve(ws: Option<&HostWorkspace>, op: &str, args: &Value) -> Value {
    let b64 = base64::engine::general_purpose::STANDARD;
    let Some(ws) = ws else {
        return match op {
            "download" | "upload" => Value::Array(Vec::new()),
            _ => json!({ "error": CLOSED }),
        };
    };
    match op {
        "read" => {
            let path = str_arg(args, "path").unwrap_or_default();
            let offset = args.get("offset").and_then(Value::as_u64);
            let limit = args.get("limit").and_then(Value::as_u64);
            match ws.read(path, offset, limit) {
                Ok(content) => json!({ "content": content }),
                Err(error) => json!({ "error": error }),
            }
        }
        "download" => {
            let paths = args
                .get("paths")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            paths
                .iter()
                .map(|p| {
                    let path = p.as_str().unwrap_or_default();
                    match ws.download(path) {
                        Ok(bytes) => {
                            json!({ "path": path, "content": b64.encode(bytes), "error": null })
                        }
                        Err(error) => json!({ "path": path, "content": null, "error": error }),
                    }
                })
                .collect()
        }
        "upload" => {
            let files = args
                .get("files")
                .and_then(Value::as_array)
                .cloned()
                .unwrap_or_default();
            files
                .iter()
                .map(|f| {
                    let path = f.get(0).and_then(Value::as_str).unwrap_or_default();
                    let bytes = f
                        .get(1)
                        .and_then(Value::as_str)
                        .map(|t| b64.decode(t).unwrap_or_default())
                        .unwrap_or_default();
                    match ws.upload(path, &bytes) {
                        Ok(()) => json!({ "path": path, "error": null }),
                        Err(reason) => json!(UploadRefusal::new(path, reason)),
                    }
                })
                .collect()
        }
        "delete" => match ws.delete(str_arg(args, "path").unwrap_or_default()) {
            Ok(()) => json!({}),
            Err(error) => json!({ "error": error }),
        },
        other => json!({ "error": format!("Error: '{other}' is not a workspace operation.") }),
    }
}

//! The workspace a host tool's handler is handed (`context.workspace` in JS): the turn's
//! files, routed as the agent's own file tools route them (mounts, the session's folder,
//! read-only authored content), every access decided by the kernel as that file tool's
//! call would be in the calling state, from the caller's origin (the agent, its script
//! code, a hook).
//!
//! ```text
//! read(path, offset?, limit?)  as read_file    → the file's text, lines offset.. (at most limit)
//! download(path)               as read_file    → the file's bytes
//! upload(path, bytes)          as write_file   → written (base64 for a binary-typed path)
//! delete(path)                 as remove_file  → removed
//! ```
//!
//! A handle serves the one host tool call it was made for: once the call settles it is
//! closed and every access is refused, as the original's context is unreadable outside a
//! turn.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use archmax_kernel::{CallContext, Origin, Policy, Variables};
use base64::Engine;
use serde_json::{Value, json};

use crate::files::Workspace;

/// The refusal of an access through a handle whose call has settled.
pub const CLOSED: &str =
    "Error: this tool call has finished; its context.workspace is no longer usable.";

/// The most lines `read` answers when no `limit` is given (a Deep Agents backend's default).
pub const READ_LIMIT: u64 = 500;

/// A refused upload as a Deep Agents backend reports it (`FileUploadResponse`): the path in
/// its canonical workspace form with a leading `/`, the error `permission_denied`, and the
/// reason the harness refused it kept beside them.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct UploadRefusal {
    /// `/<path>`.
    pub path: String,
    /// Always `permission_denied`.
    pub error: &'static str,
    /// The kernel's refusal, or the workspace's.
    pub reason: String,
}

impl UploadRefusal {
    /// The refusal of uploading `path` for `reason`.
    pub fn new(path: &str, reason: String) -> UploadRefusal {
        UploadRefusal {
            path: format!("/{}", archmax_kernel::canonical::canonicalize(path).path),
            error: "permission_denied",
            reason,
        }
    }
}

/// A host tool call's view of the turn's workspace.
pub struct HostWorkspace {
    policy: Arc<Policy>,
    session_id: String,
    state: String,
    origin: Origin,
    variables: Variables,
    inherited: Arc<[archmax_kernel::Inherited]>,
    reply_only: bool,
    files: Option<Workspace>,
    open: AtomicBool,
}

impl std::fmt::Debug for HostWorkspace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostWorkspace")
            .field("session_id", &self.session_id)
            .field("state", &self.state)
            .finish_non_exhaustive()
    }
}

impl HostWorkspace {
    /// The workspace of a call made in `state` of session `session_id` by `origin` (the
    /// agent, its script code, a hook); `files` is `None` when the session store keeps no
    /// folder.
    pub(crate) fn new(
        policy: Arc<Policy>,
        session_id: &str,
        state: &str,
        origin: Origin,
        variables: Variables,
        reply_only: bool,
        files: Option<Workspace>,
    ) -> HostWorkspace {
        HostWorkspace {
            policy,
            session_id: session_id.to_string(),
            state: state.to_string(),
            origin,
            variables,
            inherited: Arc::new([]),
            reply_only,
            files,
            open: AtomicBool::new(true),
        }
    }

    /// Inside a sub-workflow: its ancestors' workflow-wide denials bind the calls too.
    #[must_use]
    pub(crate) fn with_inherited(mut self, inherited: Arc<[archmax_kernel::Inherited]>) -> Self {
        self.inherited = inherited;
        self
    }

    /// Refuses every later access (the call it served has settled).
    pub fn close(&self) {
        self.open.store(false, Ordering::Release);
    }

    /// The call's arguments as the kernel scoped them, or its refusal text.
    fn governed(&self, tool: &str, args: Value) -> Result<(&Workspace, Value), String> {
        if !self.open.load(Ordering::Acquire) {
            return Err(CLOSED.to_string());
        }
        let ctx = CallContext {
            state: &self.state,
            origin: self.origin,
            reply_only: self.reply_only,
            variables: Some(&self.variables),
            inherited: &self.inherited,
        };
        let (args, verdict) =
            crate::scope::decide(&self.policy, &self.session_id, tool, args, &ctx);
        if !verdict.allowed {
            return Err(verdict.message.unwrap_or_default());
        }
        let files = self
            .files
            .as_ref()
            .ok_or_else(|| format!("Error: '{tool}' needs a filesystem session store."))?;
        Ok((files, args))
    }

    fn run(&self, tool: &str, args: Value) -> Result<String, String> {
        let (files, args) = self.governed(tool, args)?;
        let out = crate::files::run_tool(files, tool, &args);
        if out.is_error {
            Err(out.text)
        } else {
            Ok(out.text)
        }
    }

    /// The text of `path`, read where `read_file` may read, as it is in the file (no line
    /// numbers): from line `offset` (0-based, default 0), at most `limit` lines (default
    /// [`READ_LIMIT`]), as a Deep Agents backend's `read` answers. A file that is not text
    /// answers `read_file`'s notice as the error.
    pub fn read(
        &self,
        path: &str,
        offset: Option<u64>,
        limit: Option<u64>,
    ) -> Result<String, String> {
        let bytes = self.download(path)?;
        let text = match String::from_utf8(bytes) {
            Ok(t) if !crate::files::text::is_binary_path(path) && !t.contains('\0') => t,
            _ => {
                return Err(self
                    .run("read_file", json!({ "file_path": path }))
                    .unwrap_or_else(|e| e));
            }
        };
        let lines: Vec<&str> = text.split('\n').collect();
        let total = if text.ends_with('\n') {
            lines.len() - 1
        } else {
            lines.len()
        };
        let offset = usize::try_from(offset.unwrap_or(0)).unwrap_or(usize::MAX);
        let limit = usize::try_from(limit.unwrap_or(READ_LIMIT)).unwrap_or(usize::MAX);
        if offset > 0 && offset >= total {
            return Err(format!(
                "Line offset {offset} exceeds file length ({total} lines)"
            ));
        }
        let end = offset.saturating_add(limit).min(lines.len());
        Ok(lines.get(offset..end).unwrap_or_default().join("\n"))
    }

    /// The bytes of `path`, read where `read_file` may read.
    pub fn download(&self, path: &str) -> Result<Vec<u8>, String> {
        let (files, args) = self.governed("read_file", json!({ "file_path": path }))?;
        let scoped = args
            .get("file_path")
            .and_then(Value::as_str)
            .unwrap_or(path);
        let route = crate::files::route::resolve(files, scoped)?;
        crate::files::tools::read_bytes(&route).map_err(|out| out.text)
    }

    /// Writes `bytes` to `path` where `write_file` may write: a binary-typed path takes them
    /// as they are, any other path takes UTF-8 text. A refusal is the kernel's (or the
    /// workspace's) text; [`UploadRefusal`] is how a Deep Agents backend reports it.
    pub fn upload(&self, path: &str, bytes: &[u8]) -> Result<(), String> {
        let content = if crate::files::text::is_binary_path(path) {
            base64::engine::general_purpose::STANDARD.encode(bytes)
        } else {
            String::from_utf8(bytes.to_vec()).map_err(|_| {
                format!("Error: Cannot write '{path}': its bytes are not UTF-8 text, and the path is not of a binary file type.")
            })?
        };
        self.run(
            "write_file",
            json!({ "file_path": path, "content": content }),
        )
        .map(|_| ())
    }

    /// Removes the file at `path` where `remove_file` may.
    pub fn delete(&self, path: &str) -> Result<(), String> {
        self.run("remove_file", json!({ "file_path": path }))
            .map(|_| ())
    }
}

//! The runtime's file tools over a workspace (kernel digest §7.4–§7.7, §8).
//!
//! Governance is not decided here: the kernel has already allowed the call.
//! This module does what the tool does, plus the router's own refusals
//! (escaping paths, read-only mounts, binary reads).

mod backend;
mod glob;
mod memory;
mod ops;
pub(crate) mod route;
pub(crate) mod text;
pub(crate) mod tools;

#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod tests;

use std::path::PathBuf;
use std::sync::Arc;

use serde_json::Value;

pub use backend::{Backend, Disk, Kind, Meta, ReadError, SessionFiles, WriteStage, disk};
pub use glob::Glob;
pub use memory::{AreaFull, MAX_BYTES, MAX_ENTRIES, MEMORY_ROOT, MemArea, MemAreas, over_limit};
pub use route::escape_error;
pub use text::{TRUNCATION_GUIDANCE, format_size, locale_cmp, mime_of};

/// Grep's default total match cap.
pub const GREP_DEFAULT_MAX_COUNT: u64 = 1000;

/// Directory of the session folder holding evicted tool results.
pub const LARGE_TOOL_RESULTS_DIR: &str = "large_tool_results";

/// One mount of the authored workspace, served from `<root>/<name>`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountRoute {
    /// Mount name without leading/trailing `/` (`skills`, `.platform`, `AGENTS.md`).
    pub name: String,
    /// True for a directory mount, false for an exact file mount.
    pub is_dir: bool,
    /// True when writes, edits and deletes are refused.
    pub read_only: bool,
}

impl MountRoute {
    /// A read-only directory mount.
    pub fn dir(name: &str) -> Self {
        MountRoute {
            name: name.trim_matches('/').to_string(),
            is_dir: true,
            read_only: true,
        }
    }

    /// A read-only exact file mount.
    pub fn file(name: &str) -> Self {
        MountRoute {
            name: name.trim_matches('/').to_string(),
            is_dir: false,
            read_only: true,
        }
    }

    /// The same mount, writable.
    pub fn writable(mut self) -> Self {
        self.read_only = false;
        self
    }
}

/// The workspace a turn's file tools work on.
#[derive(Debug, Clone)]
pub struct Workspace {
    /// The workspace directory on disk (authored files, mounts).
    pub root: PathBuf,
    /// The bound session's folder, `<root>/sessions/<id>` by default.
    pub session: PathBuf,
    /// What serves the session's folder (and `_specs/` beside it): the disk, or the
    /// session store's memory. Mounts are always served from the disk under `root`.
    pub files: Arc<dyn Backend>,
    /// The mount table.
    pub mounts: Vec<MountRoute>,
}

impl Workspace {
    /// A workspace at `root` bound to session `session_id` (session folder
    /// `<root>/sessions/<key>`, the id's storage key).
    pub fn new(root: impl Into<PathBuf>, session_id: &str, mounts: Vec<MountRoute>) -> Self {
        let root = root.into();
        let session = root
            .join(crate::store::layout::SESSIONS_DIR)
            .join(&*crate::store::id::storage_key(session_id));
        Workspace {
            root,
            session,
            files: disk(),
            mounts,
        }
    }

    /// A workspace at `root` whose session area is `files` (the store's).
    pub fn with_files(
        root: impl Into<PathBuf>,
        files: SessionFiles,
        mounts: Vec<MountRoute>,
    ) -> Self {
        Workspace {
            root: root.into(),
            session: files.dir,
            files: files.backend,
            mounts,
        }
    }

    /// The default authored mounts: `skills/`, `.platform/` and `AGENTS.md`,
    /// all read-only.
    pub fn default_mounts() -> Vec<MountRoute> {
        vec![
            MountRoute::dir("skills"),
            MountRoute::dir(".platform"),
            MountRoute::file("AGENTS.md"),
        ]
    }
}

/// What a tool answers the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The tool message text.
    pub text: String,
    /// True when the call failed or was refused.
    pub is_error: bool,
}

impl ToolOutput {
    /// A successful result.
    pub fn ok(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            is_error: false,
        }
    }

    /// A failed or refused result.
    pub fn err(text: impl Into<String>) -> Self {
        ToolOutput {
            text: text.into(),
            is_error: true,
        }
    }
}

/// [`run_tool`] for an async caller: on a blocking thread when the session's files may
/// wait on a disk (`crate::blocking`), so the caller's thread (Node's, for a JS-driven
/// turn) is not held; in place when they are in memory.
pub(crate) async fn run_tool_async(ws: &Workspace, tool: &str, args: &Value) -> ToolOutput {
    if !ws.files.waits_on_disk() {
        return run_tool(ws, tool, args);
    }
    let (ws, owned, args) = (ws.clone(), tool.to_owned(), args.clone());
    crate::blocking::run(move || run_tool(&ws, &owned, &args))
        .await
        .unwrap_or_else(|e| ToolOutput {
            text: format!("Error: '{tool}' failed: {e}"),
            is_error: true,
        })
}

/// Runs file tool `tool` with JSON arguments `args` over `ws`.
pub fn run_tool(ws: &Workspace, tool: &str, args: &Value) -> ToolOutput {
    let result = match tool {
        "ls" => tools::ls(ws, args),
        "read_file" => tools::read_file(ws, args),
        "write_file" => tools::write_file(ws, args),
        "edit_file" => tools::edit_file(ws, args),
        "glob" => tools::glob(ws, args),
        "grep" => tools::grep(ws, args),
        "write_todos" => tools::write_todos(args),
        "copy_file" => ops::copy_or_move(ws, args, ops::Verb::Copy),
        "move_file" => ops::copy_or_move(ws, args, ops::Verb::Move),
        "remove_file" => ops::remove(ws, args),
        other => Err(ToolOutput::err(format!(
            "Error: '{other}' is not a file tool."
        ))),
    };
    result.unwrap_or_else(|e| e)
}

/// Replaces `.`, `/` and `\` of a tool call id with `_` (Deep Agents'
/// `sanitizeToolCallId`); an empty id becomes `tool_result`.
pub fn sanitize_call_id(call_id: &str) -> String {
    let s: String = call_id
        .chars()
        .map(|c| {
            if matches!(c, '.' | '/' | '\\') {
                '_'
            } else {
                c
            }
        })
        .collect();
    if s.is_empty() {
        "tool_result".to_string()
    } else {
        s
    }
}

/// Evicts an oversized tool result: when `text` is longer than `limit_chars`
/// characters, writes it to `large_tool_results/<sanitized call id>` in the
/// session folder and returns the pointer text that replaces it. `Ok(None)` when
/// the text fits; `Err` with the text that replaces the result when it could not be
/// saved (the write never follows a link out of the session folder).
pub fn offload(
    ws: &Workspace,
    call_id: &str,
    text: &str,
    limit_chars: usize,
) -> Result<Option<String>, String> {
    let len = text.chars().count();
    if len <= limit_chars {
        return Ok(None);
    }
    let id = sanitize_call_id(call_id);
    let dir = ws.session.join(LARGE_TOOL_RESULTS_DIR);
    let base = ws.session.parent().unwrap_or(&ws.session);
    if let Err(e) = ws
        .files
        .write_confined(base, &dir.join(&id), text.as_bytes())
    {
        return Err(format!(
            "Error: the tool result was too large to show ({len} characters) and could not be saved to '/{LARGE_TOOL_RESULTS_DIR}/{id}': {e}. The result is lost; narrow the call and try again."
        ));
    }
    let path = format!("/{LARGE_TOOL_RESULTS_DIR}/{id}");
    let sample_lines: Vec<String> = text
        .split('\n')
        .take(10)
        .map(|l| l.chars().take(1000).collect())
        .collect();
    let sample_refs: Vec<&str> = sample_lines.iter().map(String::as_str).collect();
    let sample = text::format_numbered(&sample_refs, 1);
    Ok(Some(format!(
        "Tool result too large ({len} characters), so it was saved to the file '{path}' instead of being shown here.\n\
         Read it with read_file, a part at a time: read_file(file_path=\"{path}\", offset=0, limit=100) shows the first 100 lines; raise offset to continue.\n\n\
         The first lines of the result:\n{sample}"
    )))
}

// ---- argument helpers -------------------------------------------------

pub(crate) fn bad_args(tool: &str, detail: &str) -> ToolOutput {
    ToolOutput::err(format!("Error: invalid arguments for {tool}: {detail}"))
}

/// A required string argument.
pub(crate) fn req_str<'a>(tool: &str, args: &'a Value, name: &str) -> Result<&'a str, ToolOutput> {
    match args.get(name) {
        Some(Value::String(s)) => Ok(s),
        _ => Err(bad_args(
            tool,
            &format!("'{name}' is required and must be a string"),
        )),
    }
}

/// An optional string argument (absent or null ⇒ `None`).
pub(crate) fn opt_str<'a>(
    tool: &str,
    args: &'a Value,
    name: &str,
) -> Result<Option<&'a str>, ToolOutput> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(_) => Err(bad_args(tool, &format!("'{name}' must be a string"))),
    }
}

/// An optional boolean argument.
pub(crate) fn opt_bool(tool: &str, args: &Value, name: &str) -> Result<Option<bool>, ToolOutput> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Bool(b)) => Ok(Some(*b)),
        Some(_) => Err(bad_args(tool, &format!("'{name}' must be a boolean"))),
    }
}

/// An optional number argument (numeric strings are coerced, like zod's
/// `z.coerce.number()`).
pub(crate) fn opt_num(tool: &str, args: &Value, name: &str) -> Result<Option<f64>, ToolOutput> {
    match args.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::Number(n)) => n
            .as_f64()
            .map(Some)
            .ok_or_else(|| bad_args(tool, &format!("'{name}' must be a number"))),
        Some(Value::String(s)) => s
            .trim()
            .parse::<f64>()
            .ok()
            .filter(|f| f.is_finite())
            .map(Some)
            .ok_or_else(|| bad_args(tool, &format!("'{name}' must be a number"))),
        Some(_) => Err(bad_args(tool, &format!("'{name}' must be a number"))),
    }
}

//! The Deep Agents file tools (§8.1) with the router's text-only reads (§8.2).

use std::io::ErrorKind;

use serde_json::Value;

use super::WriteStage;
use super::glob::Glob;
use super::route::{Route, list_dir, resolve, walk_files};
use super::text::{
    EMPTY_CONTENT_WARNING, binary_refusal, decode_base64, format_numbered, is_binary_path,
    is_blank, is_text_mime, mime_of, truncate_lines,
};
use super::{
    GREP_DEFAULT_MAX_COUNT, ToolOutput, Workspace, bad_args, opt_bool, opt_num, opt_str, req_str,
};

/// Default `read_file` line limit.
pub const DEFAULT_READ_LIMIT: usize = 100;

/// The note appended when grep hits `max_count`: hosts and tests match the original's
/// fragment `hit the maximum match count`.
pub const GREP_CAP_NOTE: &str = "Note: the search stopped early because it hit the maximum match count (max_count); the matches above are valid but incomplete. Narrow the pattern or the path, or raise max_count, to see the rest.";

type ToolResult = Result<ToolOutput, ToolOutput>;

fn routed(ws: &Workspace, path: &str) -> Result<Route, ToolOutput> {
    resolve(ws, path).map_err(ToolOutput::err)
}

/// The read-only mount refusal of §7.5.
pub fn read_only_refusal(verb: &str, route: &Route) -> ToolOutput {
    ToolOutput::err(format!(
        "Cannot {verb} '{}': it is served by a read-only mount. Only run state is writable in this workspace.",
        route.shown()
    ))
}

/// `ls`: one entry per line, directories `{path} (directory)`, files
/// `{path} ({size} bytes)` (size omitted when 0).
pub fn ls(ws: &Workspace, args: &Value) -> ToolResult {
    let given = opt_str("ls", args, "path")?
        .filter(|p| !p.is_empty())
        .unwrap_or("/");
    let route = routed(ws, given)?;
    let entries = list_dir(ws, &route).unwrap_or_default();
    if entries.is_empty() {
        return Ok(ToolOutput::ok(format!("No files found in {given}")));
    }
    let lines = entries
        .iter()
        .map(|e| {
            if e.is_dir {
                format!("{} (directory)", e.shown())
            } else if e.size > 0 {
                format!("{} ({} bytes)", e.shown(), e.size)
            } else {
                e.shown()
            }
        })
        .collect();
    Ok(ToolOutput::ok(truncate_lines(lines)))
}

fn not_found(route: &Route) -> ToolOutput {
    ToolOutput::err(format!("Error: File '{}' not found", route.shown()))
}

fn symlink_refusal(route: &Route) -> ToolOutput {
    ToolOutput::err(format!(
        "Error: Symlinks are not allowed: {}",
        route.shown()
    ))
}

/// Reads a routed file's bytes, answering Deep Agents' read errors.
/// A routed file's bytes: refused through a symbolic link, missing when not a regular file.
pub(crate) fn read_bytes(route: &Route) -> Result<Vec<u8>, ToolOutput> {
    let meta = route.fs.meta(&route.disk).map_err(|_| not_found(route))?;
    if meta.is_symlink() || route.through_symlink() {
        return Err(symlink_refusal(route));
    }
    if !meta.is_file() {
        return Err(not_found(route));
    }
    route.fs.read(&route.disk).map_err(|e| match e.kind() {
        ErrorKind::NotFound => not_found(route),
        ErrorKind::PermissionDenied => ToolOutput::err(format!(
            "Error: Error reading file '{}': permission was denied",
            route.shown()
        )),
        _ => ToolOutput::err(format!(
            "Error: Error reading file '{}': it could not be read",
            route.shown()
        )),
    })
}

fn offset_arg(tool: &str, args: &Value, name: &str, default: usize) -> Result<usize, ToolOutput> {
    Ok(match opt_num(tool, args, name)? {
        None => default,
        Some(f) if f <= 0.0 => 0,
        Some(f) => f.floor() as usize,
    })
}

/// `read_file`: `cat -n` rows of `limit` lines from `offset` (0-based).
pub fn read_file(ws: &Workspace, args: &Value) -> ToolResult {
    let path = match opt_str("read_file", args, "file_path")? {
        Some(p) => p,
        None => req_str("read_file", args, "path")
            .map_err(|_| bad_args("read_file", "'file_path' is required and must be a string"))?,
    };
    let offset = offset_arg("read_file", args, "offset", 0)?;
    let limit = offset_arg("read_file", args, "limit", DEFAULT_READ_LIMIT)?;
    let route = routed(ws, path)?;
    let bytes = read_bytes(&route)?;
    let mime = mime_of(&route.rel);
    // The binary notice is a read that answered, not a failed call (as in the original):
    // its text keeps the `Error: ` prefix, its status is ok.
    if !is_text_mime(mime) {
        return Ok(ToolOutput::ok(format!(
            "Error: {}",
            binary_refusal(&route.rel, mime, Some(bytes.len() as u64))
        )));
    }
    let text = String::from_utf8_lossy(&bytes);
    if text.contains('\0') {
        return Ok(ToolOutput::ok(format!(
            "Error: {}",
            binary_refusal(&route.rel, "application/octet-stream", None)
        )));
    }
    if is_blank(&text) {
        return Ok(ToolOutput::ok(EMPTY_CONTENT_WARNING));
    }
    let lines: Vec<&str> = text.split('\n').collect();
    if offset >= lines.len() {
        return Err(ToolOutput::err(format!(
            "Error: Line offset {offset} exceeds file length ({} lines)",
            lines.len()
        )));
    }
    let end = offset.saturating_add(limit).min(lines.len());
    Ok(ToolOutput::ok(format_numbered(
        &lines[offset..end],
        offset + 1,
    )))
}

/// Writes `bytes` to a routed destination, creating parent directories.
/// `Err` holds a short reason.
fn write_disk(route: &Route, bytes: &[u8]) -> Result<(), String> {
    let why = |e: std::io::Error, other: &str| {
        super::over_limit(&e).unwrap_or_else(|| match e.kind() {
            ErrorKind::PermissionDenied => "permission was denied".to_string(),
            _ => other.to_string(),
        })
    };
    route
        .fs
        .write_making_folders(&route.disk, bytes)
        .map_err(|(stage, e)| match stage {
            WriteStage::Folders => why(e, "a parent path is not a directory"),
            WriteStage::File => why(e, "it could not be written"),
        })
}

/// `write_file`: creates or replaces a file (binary-typed paths take base64).
pub fn write_file(ws: &Workspace, args: &Value) -> ToolResult {
    let file_path = req_str("write_file", args, "file_path")?;
    let content = opt_str("write_file", args, "content")?.unwrap_or("");
    let route = routed(ws, file_path)?;
    if route.read_only() {
        return Err(read_only_refusal("write", &route));
    }
    let shown = route.shown();
    if route.through_symlink() {
        return Err(ToolOutput::err(format!(
            "Cannot write to {shown} because it is a symlink. Symlinks are not allowed."
        )));
    }
    if route.fs.meta(&route.disk).is_ok_and(|m| m.is_dir()) {
        return Err(ToolOutput::err(format!(
            "Error writing file '{shown}': it is a directory"
        )));
    }
    let bytes = if is_binary_path(&route.rel) {
        decode_base64(content)
    } else {
        content.as_bytes().to_vec()
    };
    write_disk(&route, &bytes)
        .map_err(|why| ToolOutput::err(format!("Error writing file '{shown}': {why}")))?;
    Ok(ToolOutput::ok(format!(
        "Successfully wrote to '{file_path}'"
    )))
}

/// `edit_file`: exact string replacement (Deep Agents' `performStringReplacement`).
pub fn edit_file(ws: &Workspace, args: &Value) -> ToolResult {
    let file_path = req_str("edit_file", args, "file_path")?;
    let old = req_str("edit_file", args, "old_string")?;
    let new = req_str("edit_file", args, "new_string")?;
    let replace_all = opt_bool("edit_file", args, "replace_all")?.unwrap_or(false);
    let route = routed(ws, file_path)?;
    if route.read_only() {
        return Err(read_only_refusal("edit", &route));
    }
    let bytes = read_bytes(&route)?;
    let content = String::from_utf8_lossy(&bytes).into_owned();
    let (updated, count) = if content.is_empty() && old.is_empty() {
        (new.to_string(), 0)
    } else if old.is_empty() {
        return Err(ToolOutput::err(
            "Error: oldString cannot be empty when file has content",
        ));
    } else {
        let count = content.matches(old).count();
        if count == 0 {
            return Err(ToolOutput::err(format!(
                "Error: String not found in file: '{old}'"
            )));
        }
        if count > 1 && !replace_all {
            return Err(ToolOutput::err(format!(
                "Error: String '{old}' has multiple occurrences (appears {count} times) in file. Use replace_all=True to replace all instances, or provide a more specific string with surrounding context."
            )));
        }
        (content.replace(old, new), count)
    };
    write_disk(&route, updated.as_bytes())
        .map_err(|why| ToolOutput::err(format!("Error editing file '{}': {why}", route.shown())))?;
    Ok(ToolOutput::ok(format!(
        "Successfully replaced {count} occurrence(s) in '{file_path}'"
    )))
}

fn relative_to<'a>(base: &Route, rel: &'a str) -> &'a str {
    if base.rel.is_empty() || base.rel == rel {
        if base.rel == rel {
            return rel.rsplit('/').next().unwrap_or(rel);
        }
        return rel;
    }
    rel.strip_prefix(&base.rel)
        .and_then(|r| r.strip_prefix('/'))
        .unwrap_or(rel)
}

/// `glob`: files under `path` whose path relative to it matches `pattern`.
pub fn glob(ws: &Workspace, args: &Value) -> ToolResult {
    let pattern = req_str("glob", args, "pattern")?;
    let given = opt_str("glob", args, "path")?
        .filter(|p| !p.is_empty())
        .unwrap_or("/");
    let base = routed(ws, given)?;
    let matcher = Glob::new(pattern);
    let lines: Vec<String> = walk_files(ws, &base)
        .into_iter()
        .filter(|e| matcher.is_match(relative_to(&base, &e.rel)))
        .map(|e| e.shown())
        .collect();
    if lines.is_empty() {
        return Ok(ToolOutput::ok(format!(
            "No files found matching pattern '{pattern}'"
        )));
    }
    Ok(ToolOutput::ok(truncate_lines(lines)))
}

/// `grep`: literal substring search, grouped by file.
pub fn grep(ws: &Workspace, args: &Value) -> ToolResult {
    let pattern = req_str("grep", args, "pattern")?;
    let given = opt_str("grep", args, "path")?
        .filter(|p| !p.is_empty())
        .unwrap_or("/");
    let filter = opt_str("grep", args, "glob")?.filter(|g| !g.is_empty());
    let cap = match opt_num("grep", args, "max_count")? {
        None => GREP_DEFAULT_MAX_COUNT,
        Some(f) if f >= 1.0 && f.fract() == 0.0 => f as u64,
        Some(_) => return Err(bad_args("grep", "'max_count' must be a positive integer")),
    };
    let base = routed(ws, given)?;
    let filter = filter.map(|g| (Glob::new(g), g.contains('/')));
    let mut lines: Vec<String> = Vec::new();
    let mut total: u64 = 0;
    let mut capped = false;
    'files: for entry in walk_files(ws, &base) {
        if let Some((matcher, anchored)) = &filter {
            let subject = if *anchored {
                relative_to(&base, &entry.rel)
            } else {
                entry.rel.rsplit('/').next().unwrap_or(&entry.rel)
            };
            if !matcher.is_match(subject) {
                continue;
            }
        }
        if is_binary_path(&entry.rel) {
            continue;
        }
        let route = super::route::route_rel(ws, &entry.rel);
        let Ok(bytes) = route.fs.read(&route.disk) else {
            continue;
        };
        if bytes.contains(&0) {
            continue;
        }
        let text = String::from_utf8_lossy(&bytes);
        let mut pieces: Vec<&str> = text.split('\n').collect();
        if pieces.last() == Some(&"") {
            pieces.pop();
        }
        let mut header = false;
        for (i, raw) in pieces.iter().enumerate() {
            let line = raw.strip_suffix('\r').unwrap_or(raw);
            if !line.contains(pattern) {
                continue;
            }
            if total >= cap {
                capped = true;
                break 'files;
            }
            if !header {
                lines.push(format!("\n{}:", entry.shown()));
                header = true;
            }
            lines.push(format!("  {}: {line}", i + 1));
            total += 1;
        }
    }
    if lines.is_empty() {
        return Ok(ToolOutput::ok(format!(
            "No matches found for pattern '{pattern}'"
        )));
    }
    let body = truncate_lines(lines);
    if capped {
        return Ok(ToolOutput::ok(format!("{body}\n\n{GREP_CAP_NOTE}")));
    }
    Ok(ToolOutput::ok(body))
}

/// `write_todos`: validates the list and confirms it; the runtime stores it.
pub fn write_todos(args: &Value) -> ToolResult {
    let Some(Value::Array(todos)) = args.get("todos") else {
        return Err(bad_args(
            "write_todos",
            "'todos' is required and must be an array",
        ));
    };
    for (i, todo) in todos.iter().enumerate() {
        let content_ok = matches!(todo.get("content"), Some(Value::String(_)));
        let status_ok = matches!(
            todo.get("status").and_then(Value::as_str),
            Some("pending" | "in_progress" | "completed")
        );
        if !content_ok || !status_ok {
            return Err(bad_args(
                "write_todos",
                &format!(
                    "todos[{i}] must be {{ content: string, status: pending|in_progress|completed }}"
                ),
            ));
        }
    }
    let json = serde_json::to_string(todos).unwrap_or_else(|_| "[]".to_string());
    Ok(ToolOutput::ok(format!("Updated todo list to {json}")))
}

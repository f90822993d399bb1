//! The runtime file operations `copy_file`, `move_file`, `remove_file` (§8.3).
//!
//! Results are one line; every failure is `Error: {message}`. Store (OS)
//! error text is never relayed: failures are classified into the fixed
//! reasons of §8.3.

use std::io::{self, ErrorKind};

use serde_json::Value;

use super::route::{Route, resolve};
use super::text::format_size;
use super::{ToolOutput, Workspace, opt_bool, req_str};
use archmax_kernel::canonical::canonicalize;

/// Which operation runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    /// `copy_file`
    Copy,
    /// `move_file`
    Move,
    /// `remove_file`
    Remove,
}

impl Verb {
    fn word(self) -> &'static str {
        match self {
            Verb::Copy => "copy",
            Verb::Move => "move",
            Verb::Remove => "remove",
        }
    }

    fn tool(self) -> &'static str {
        match self {
            Verb::Copy => "copy_file",
            Verb::Move => "move_file",
            Verb::Remove => "remove_file",
        }
    }
}

const WHY_READ_ONLY: &str = "it is served by a read-only mount";
const WHY_SYMLINK: &str = "it is a symbolic link, which the workspace does not follow";
const WHY_DIRECTORY: &str = "it is a directory; this tool works on one file";
const WHY_MISSING: &str = "it does not exist";
const WHY_PERMISSION: &str = "permission was denied";
const WHY_REFUSED: &str = "the store refused it";

fn fail(message: String) -> ToolOutput {
    ToolOutput::err(format!("Error: {message}"))
}

fn io_why(kind: ErrorKind) -> &'static str {
    match kind {
        ErrorKind::NotFound => WHY_MISSING,
        ErrorKind::PermissionDenied => WHY_PERMISSION,
        ErrorKind::IsADirectory => WHY_DIRECTORY,
        _ => WHY_REFUSED,
    }
}

/// Step 1: canonicalize; escaping or root paths are refused.
fn check_path(ws: &Workspace, verb: Verb, given: &str) -> Result<Route, ToolOutput> {
    let v = verb.word();
    if canonicalize(given).escapes {
        return Err(fail(format!(
            "Cannot {v} '{given}': it resolves outside the workspace root."
        )));
    }
    let route = resolve(ws, given).map_err(|_| {
        fail(format!(
            "Cannot {v} '{given}': it resolves outside the workspace root."
        ))
    })?;
    if route.rel.is_empty() {
        return Err(fail(format!(
            "Cannot {v} '{given}': it names the workspace root, not a file."
        )));
    }
    Ok(route)
}

/// Step 5: reads the source's exact bytes, or the reason it cannot.
fn read_source(route: &Route) -> Result<Vec<u8>, &'static str> {
    let meta = match route.fs.meta(&route.disk) {
        Ok(meta) => meta,
        Err(e) => {
            return Err(if route.through_symlink() {
                WHY_SYMLINK
            } else {
                io_why(e.kind())
            });
        }
    };
    if meta.is_symlink() || route.through_symlink() {
        return Err(WHY_SYMLINK);
    }
    if meta.is_dir() {
        return Err(WHY_DIRECTORY);
    }
    if !meta.is_file() {
        return Err(WHY_REFUSED);
    }
    route.fs.read(&route.disk).map_err(|e| io_why(e.kind()))
}

/// Step 6: writes `bytes` to the destination and reads them back.
fn write_destination(verb: Verb, dst: &Route, bytes: &[u8]) -> Result<(), ToolOutput> {
    let v = verb.word();
    let d = &dst.rel;
    let refuse = |why: &str| fail(format!("Cannot {v} to '{d}': {why}."));
    // A memory area's bound is named; any other failure keeps its fixed reason.
    let refuse_io = |e: io::Error, why: &str| match super::over_limit(&e) {
        Some(limit) => refuse(&limit),
        None => refuse(why),
    };
    if dst.read_only() {
        return Err(refuse(WHY_READ_ONLY));
    }
    if dst.through_symlink() {
        return Err(refuse(WHY_SYMLINK));
    }
    let existed = match dst.fs.meta(&dst.disk) {
        Ok(meta) if meta.is_symlink() => return Err(refuse(WHY_SYMLINK)),
        Ok(meta) if meta.is_dir() => return Err(refuse(WHY_DIRECTORY)),
        Ok(_) => true,
        Err(_) => false,
    };
    dst.fs
        .write_making_folders(&dst.disk, bytes)
        .map_err(|(_, e)| {
            let why = match e.kind() {
                ErrorKind::PermissionDenied => WHY_PERMISSION,
                ErrorKind::IsADirectory => WHY_DIRECTORY,
                _ => WHY_REFUSED,
            };
            refuse_io(e, why)
        })?;
    let kept = dst.fs.read(&dst.disk).is_ok_and(|back| back == bytes);
    if !kept {
        let tail = if existed {
            format!(" '{d}' was left as the store wrote it.")
        } else {
            // Best effort: the destination this call created is removed.
            let _ = dst.fs.remove_file(&dst.disk);
            " Nothing was kept.".to_string()
        };
        return Err(fail(format!(
            "Cannot {v} to '{d}': the store serving it did not keep the file's bytes — what it holds differs from what was written.{tail}"
        )));
    }
    Ok(())
}

/// Deletes a routed file, or the reason it cannot.
fn delete(route: &Route) -> Result<(), &'static str> {
    if route.read_only() {
        return Err(WHY_READ_ONLY);
    }
    route
        .fs
        .remove_file(&route.disk)
        .map_err(|e| io_why(e.kind()))
}

/// `copy_file` / `move_file`.
pub fn copy_or_move(ws: &Workspace, args: &Value, verb: Verb) -> Result<ToolOutput, ToolOutput> {
    let tool = verb.tool();
    let source = req_str(tool, args, "source")?;
    let destination = req_str(tool, args, "destination")?;
    let overwrite = opt_bool(tool, args, "overwrite")?.unwrap_or(false);
    let v = verb.word();

    // 1. Canonicalize both paths.
    let src = check_path(ws, verb, source)?;
    let dst = check_path(ws, verb, destination)?;
    let (s, d) = (src.rel.clone(), dst.rel.clone());

    // 2. Same file.
    if src.disk == dst.disk {
        return Err(fail(format!(
            "Cannot {v} '{s}' onto itself: the source and the destination are the same file."
        )));
    }
    // 3. Destination already there.
    if !overwrite && dst.fs.meta(&dst.disk).is_ok() {
        return Err(fail(format!(
            "Cannot {v} to '{d}': a file is already there. Pass overwrite: true to replace it, or choose another destination."
        )));
    }
    // 4. A move cannot take a file out of a read-only mount.
    if verb == Verb::Move && src.read_only() {
        return Err(fail(format!(
            "Cannot move '{s}': it is served by a read-only mount, so it cannot be removed. Use copy_file to copy it instead."
        )));
    }
    // 5. Read the source.
    let bytes = read_source(&src).map_err(|why| fail(format!("Cannot {v} '{s}': {why}.")))?;
    let size = format_size(bytes.len() as u64);
    // 6. Write the destination.
    write_destination(verb, &dst, &bytes)?;
    if verb == Verb::Copy {
        return Ok(ToolOutput::ok(format!("Copied '{s}' to '{d}' ({size}).")));
    }
    // 7. Move: delete the source last.
    delete(&src).map_err(|why| {
        fail(format!(
            "Copied '{s}' to '{d}', but could not remove '{s}': {why}. Both files now exist."
        ))
    })?;
    Ok(ToolOutput::ok(format!("Moved '{s}' to '{d}' ({size}).")))
}

/// `remove_file`.
pub fn remove(ws: &Workspace, args: &Value) -> Result<ToolOutput, ToolOutput> {
    let given = req_str(Verb::Remove.tool(), args, "file_path")?;
    let route = check_path(ws, Verb::Remove, given)?;
    let p = route.rel.clone();
    read_source(&route).map_err(|why| fail(format!("Cannot remove '{p}': {why}.")))?;
    delete(&route).map_err(|why| fail(format!("Cannot remove '{p}': {why}.")))?;
    Ok(ToolOutput::ok(format!("Removed '{p}'.")))
}

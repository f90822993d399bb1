//! The workspace router (§7.4, §7.5, §7.7): agent path → disk path, and the
//! virtual directory view that overlays mounts on the session folder.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::backend::{Backend, disk};
use super::text::locale_cmp;
use super::{MountRoute, Workspace};
use archmax_kernel::canonical::canonicalize;

/// Session areas hidden from the root listing while bound (§7.7).
pub const INTERNAL_AREAS: [&str; 3] = ["checkpoints", "artifacts", "_specs"];

/// Session-agnostic prefix resolved at the session store root (§7.4).
const STORE_PREFIX: &str = "_specs";

/// Where an agent path lands.
#[derive(Debug, Clone)]
pub struct Route {
    /// Canonical agent-visible path (never holds the session id); `""` = root.
    pub rel: String,
    /// The file or directory on disk.
    pub disk: PathBuf,
    /// The directory the path is resolved under (session folder, workspace
    /// root for mounts, session store root for `_specs`).
    pub base: PathBuf,
    /// The mount serving the path, if any.
    pub mount: Option<MountRoute>,
    /// What holds the file: the disk for a mount, the session's files otherwise.
    pub fs: Arc<dyn Backend>,
}

impl Route {
    /// The path as shown to the model: `/` + canonical path.
    pub fn shown(&self) -> String {
        format!("/{}", self.rel)
    }

    /// True when a read-only mount serves the path.
    pub fn read_only(&self) -> bool {
        self.mount.as_ref().is_some_and(|m| m.read_only)
    }

    /// True when the path, or a directory between the zone base and it, is a
    /// symbolic link (the workspace never follows links).
    pub fn through_symlink(&self) -> bool {
        let mut cur = self.base.clone();
        for seg in self.rel.split('/').filter(|s| !s.is_empty()) {
            cur.push(seg);
            match self.fs.meta(&cur) {
                Ok(meta) if meta.is_symlink() => return true,
                Ok(_) => {}
                Err(_) => return false,
            }
        }
        false
    }
}

/// The router's escape error (`WorkspacePathEscapeError`), as the kernel words it for a
/// host's own loop.
pub fn escape_error(path: &str) -> String {
    archmax_kernel::host::outside_workspace(path)
}

/// The mount owning an already canonical path: longest directory mount equal
/// to or above it, or an exact file mount; longest name wins.
pub fn mount_of<'a>(mounts: &'a [MountRoute], rel: &str) -> Option<&'a MountRoute> {
    mounts
        .iter()
        .filter(|m| {
            let name = m.name.trim_matches('/');
            !name.is_empty()
                && (rel == name
                    || (m.is_dir
                        && rel.len() > name.len()
                        && rel.starts_with(name)
                        && rel.as_bytes()[name.len()] == b'/'))
        })
        .max_by_key(|m| m.name.trim_matches('/').len())
}

fn join_rel(base: &Path, rel: &str) -> PathBuf {
    let mut out = base.to_path_buf();
    for seg in rel.split('/').filter(|s| !s.is_empty()) {
        out.push(seg);
    }
    out
}

/// Resolves an agent path; `Err` holds the router's escape error.
pub fn resolve(ws: &Workspace, path: &str) -> Result<Route, String> {
    let canonical = canonicalize(path);
    if canonical.escapes {
        return Err(escape_error(path));
    }
    // A session-qualified path (`<id>/…`) was scoped before the kernel decided
    // (`crate::governed`); rewriting it here again would route a path the kernel never saw.
    Ok(route_rel(ws, &canonical.path))
}

/// Routes an already canonical, non-escaping, id-free path.
pub fn route_rel(ws: &Workspace, rel: &str) -> Route {
    if let Some(mount) = mount_of(&ws.mounts, rel) {
        return Route {
            rel: rel.to_string(),
            disk: join_rel(&ws.root, rel),
            base: ws.root.clone(),
            mount: Some(mount.clone()),
            fs: disk(),
        };
    }
    let first = rel.split('/').next().unwrap_or("");
    let base = if first == STORE_PREFIX {
        ws.session
            .parent()
            .map_or_else(|| ws.session.clone(), Path::to_path_buf)
    } else {
        ws.session.clone()
    };
    Route {
        rel: rel.to_string(),
        disk: join_rel(&base, rel),
        base,
        mount: None,
        fs: Arc::clone(&ws.files),
    }
}

/// One entry of a virtual directory.
#[derive(Debug, Clone)]
pub struct Entry {
    /// Canonical agent-visible path of the entry.
    pub rel: String,
    /// True for a directory.
    pub is_dir: bool,
    /// Size in bytes (0 for directories).
    pub size: u64,
}

impl Entry {
    /// The path shown by `ls`: `/path`, with a trailing `/` for directories.
    pub fn shown(&self) -> String {
        if self.is_dir {
            format!("/{}/", self.rel)
        } else {
            format!("/{}", self.rel)
        }
    }
}

fn child_rel(parent: &str, name: &str) -> String {
    if parent.is_empty() {
        name.to_string()
    } else {
        format!("{parent}/{name}")
    }
}

fn parent_rel(rel: &str) -> &str {
    rel.rfind('/').map_or("", |i| &rel[..i])
}

/// Lists the virtual directory at `route`: its own entries on disk (minus
/// symbolic links, entries another route overlays, and at the root the
/// internal session areas) plus the mounts that sit directly in it and exist
/// on disk. Sorted by shown path. `None` when it is not a directory.
pub fn list_dir(ws: &Workspace, route: &Route) -> Option<Vec<Entry>> {
    let mut entries = Vec::new();
    let disk_is_dir = route.fs.meta(&route.disk).is_ok_and(|m| m.is_dir());
    if disk_is_dir
        && !route.through_symlink()
        && let Ok(names) = route.fs.read_dir(&route.disk)
    {
        for name in names {
            let path = route.disk.join(&name);
            let rel = child_rel(&route.rel, &name);
            if route.mount.is_none()
                && route.rel.is_empty()
                && INTERNAL_AREAS.contains(&name.as_str())
            {
                continue;
            }
            // Overlaid by another route (a mount, `_specs`)?
            if route_rel(ws, &rel).disk != path {
                continue;
            }
            let Ok(meta) = route.fs.meta(&path) else {
                continue;
            };
            if meta.is_dir() {
                entries.push(Entry {
                    rel,
                    is_dir: true,
                    size: 0,
                });
            } else if meta.is_file() {
                entries.push(Entry {
                    rel,
                    is_dir: false,
                    size: meta.len,
                });
            }
        }
    }
    let own = route.mount.as_ref().map(|m| m.name.trim_matches('/'));
    let mut mount_children = false;
    for m in &ws.mounts {
        let name = m.name.trim_matches('/');
        if name.is_empty() || Some(name) == own || parent_rel(name) != route.rel {
            continue;
        }
        let disk = join_rel(&ws.root, name);
        let Ok(meta) = self::disk().meta(&disk) else {
            continue;
        };
        let entry = if m.is_dir && meta.is_dir() {
            Entry {
                rel: name.to_string(),
                is_dir: true,
                size: 0,
            }
        } else if !m.is_dir && meta.is_file() {
            Entry {
                rel: name.to_string(),
                is_dir: false,
                size: meta.len,
            }
        } else {
            continue;
        };
        if !entries.iter().any(|e| e.rel == entry.rel) {
            mount_children = true;
            entries.push(entry);
        }
    }
    if !disk_is_dir && !mount_children {
        return None;
    }
    entries.sort_by(|a, b| locale_cmp(&a.shown(), &b.shown()));
    Some(entries)
}

/// Every file under `route` (the file itself when it is one), recursively,
/// through the virtual view. Sorted by path.
pub fn walk_files(ws: &Workspace, route: &Route) -> Vec<Entry> {
    if let Ok(meta) = route.fs.meta(&route.disk)
        && meta.is_file()
        && !route.through_symlink()
    {
        return vec![Entry {
            rel: route.rel.clone(),
            is_dir: false,
            size: meta.len,
        }];
    }
    let mut out = Vec::new();
    let mut stack = vec![route.clone()];
    while let Some(dir) = stack.pop() {
        let Some(entries) = list_dir(ws, &dir) else {
            continue;
        };
        for e in entries {
            if e.is_dir {
                stack.push(route_rel(ws, &e.rel));
            } else {
                out.push(e);
            }
        }
    }
    out.sort_by(|a, b| locale_cmp(&a.rel, &b.rel));
    out
}

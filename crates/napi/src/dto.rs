//! Binding-local shapes of JS arguments, converted into core inputs.

use std::collections::HashMap;

use archmax_spec::workspace::{MountDecl, MountKind};
use napi_derive::napi;

/// Options of `validateWorkflow`.
#[napi(object)]
pub struct ValidateWorkflowOptions {
    /// Workspace root (default: the current directory); resolved to an absolute path.
    pub root_dir: Option<String>,
    /// Workflow slug (default: `order-lookup`).
    pub workflow: Option<String>,
    /// Skill sources, workspace-relative (default: `["skills/"]`).
    pub skills: Option<Vec<String>>,
    /// The host's mount table, keyed by mount path: a key ending in `/` is a
    /// directory (`/catalogs/`), any other key a file (`/AGENTS.md`). Default:
    /// the zero-config table.
    pub mounts: Option<HashMap<String, MountOptions>>,
}

/// How one mount is served.
#[napi(object)]
pub struct MountOptions {
    /// Whether the agent may only read it (default: true).
    pub read_only: Option<bool>,
    /// Whether states must grant it before the agent sees it (default: false).
    pub governed: Option<bool>,
}

/// Converts a JS mount table into core mount declarations, sorted by name.
pub fn mount_decls(mounts: HashMap<String, MountOptions>) -> Vec<MountDecl> {
    let mut decls: Vec<MountDecl> = mounts
        .into_iter()
        .map(|(key, opts)| {
            let trimmed = key.trim_start_matches('/');
            let (name, kind) = match trimmed.strip_suffix('/') {
                Some(dir) => (dir.to_string(), MountKind::Dir),
                None => (trimmed.to_string(), MountKind::File),
            };
            MountDecl {
                name,
                kind,
                governed: opts.governed.unwrap_or(false),
                read_only: opts.read_only.unwrap_or(true),
            }
        })
        .collect();
    decls.sort_by(|a, b| a.name.cmp(&b.name));
    decls
}

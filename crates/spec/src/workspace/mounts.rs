//! The host's mount table and the checks on mount lists.

use super::Context;
use crate::diagnostic::Diagnostic;
use crate::yaml::Node;

/// Directory or file mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MountKind {
    /// A directory prefix.
    Dir,
    /// A single file.
    File,
}

/// One entry of the host's mount table, by name (its key without slashes).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MountDecl {
    /// The mount name (`reference`, `catalogs/eu`, `AGENTS.md`).
    pub name: String,
    /// Directory or file.
    pub kind: MountKind,
    /// Closed by default: reachable only where a grant names it.
    pub governed: bool,
    /// Writes refused (the default).
    pub read_only: bool,
}

/// The table a workspace gets when the host declares none: `skills/`, `.platform/`
/// and `AGENTS.md`, read-only and ungoverned.
pub fn zero_config() -> Vec<MountDecl> {
    let m = |name: &str, kind| MountDecl {
        name: name.to_string(),
        kind,
        governed: false,
        read_only: true,
    };
    vec![
        m("skills", MountKind::Dir),
        m(".platform", MountKind::Dir),
        m("AGENTS.md", MountKind::File),
    ]
}

impl MountDecl {
    /// True when the workspace-relative `path` lies in this mount.
    pub fn contains(&self, path: &str) -> bool {
        match self.kind {
            MountKind::File => path == self.name,
            MountKind::Dir => path == self.name || path.starts_with(&format!("{}/", self.name)),
        }
    }
}

/// Directories first, then files, each in table order.
fn known_names(table: &[MountDecl]) -> Vec<&str> {
    let dirs = table.iter().filter(|m| m.kind == MountKind::Dir);
    let files = table.iter().filter(|m| m.kind == MountKind::File);
    dirs.chain(files).map(|m| m.name.as_str()).collect()
}

/// The name and declared access of one list item (a name or `{ mount, access }`).
fn item(n: &Node) -> Option<(&str, Option<&str>)> {
    if let Some(s) = n.as_str() {
        return Some((s, None));
    }
    Some((
        n.get("mount")?.as_str()?,
        n.get("access").and_then(Node::as_str),
    ))
}

/// The mounts pass of `validateWorkflow`.
pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let table = ctx.mounts;
    let known = known_names(table).join(", ");
    let governed: Vec<&str> = table
        .iter()
        .filter(|m| m.governed)
        .map(|m| m.name.as_str())
        .collect();
    let governed_text = if governed.is_empty() {
        "(the workspace governs none)".to_string()
    } else {
        governed.join(", ")
    };
    let names = |field: &str| -> Vec<String> {
        ctx.node(field)
            .and_then(Node::as_seq)
            .map(|items| {
                items
                    .iter()
                    .filter_map(item)
                    .map(|(n, _)| n.to_string())
                    .collect()
            })
            .unwrap_or_default()
    };
    let root_grants = names("mounts.allow_always");
    for (field, state, list_key) in ctx.governance_lists("mounts") {
        let Some(items) = ctx.node(&field).and_then(Node::as_seq) else {
            continue;
        };
        let who = state
            .as_ref()
            .map(|s| format!("State '{s}' "))
            .unwrap_or_default();
        let grant = !list_key.contains("forbid");
        for n in items {
            let Some((name, access)) = item(n) else {
                continue;
            };
            let at = |d: Diagnostic| d.in_file(ctx.file).at(Some(n.pos));
            let Some(decl) = table.iter().find(|m| m.name == name) else {
                out.push(at(Diagnostic::error(
                    &field,
                    format!(
                        "{who}'{list_key}' names mount '{name}', which the workspace does not \
                         mount. Mounts: {known}."
                    ),
                )));
                continue;
            };
            if grant && access == Some("read_write") && decl.read_only {
                out.push(at(Diagnostic::warning(
                    &field,
                    format!(
                        "{who}'{list_key}' grants 'read_write' on mount '{name}', which the host \
                         serves read-only; the grant opens no write. The host must declare the \
                         mount with 'readOnly: false' for writes to be possible."
                    ),
                )));
            }
            if grant && !decl.governed {
                out.push(at(Diagnostic::warning(
                    &field,
                    format!(
                        "{who}'{list_key}' grants mount '{name}', which the host does not declare \
                         governed: an ungoverned mount is visible in every state already, so the \
                         grant is inert. Governed mounts: {governed_text}."
                    ),
                )));
            }
            if let (false, Some(s)) = (grant, &state) {
                let state_grants = names(&format!("states.{s}.mounts.allow"));
                if decl.governed && !root_grants.iter().chain(&state_grants).any(|g| g == name) {
                    out.push(at(Diagnostic::warning(
                        &field,
                        format!(
                            "State '{s}' forbids mount '{name}', which nothing enables here: a \
                             governed mount is closed unless granted, so the entry subtracts \
                             nothing."
                        ),
                    )));
                }
            }
        }
    }
    if ctx.tree.get("mounts").is_none() && !governed.is_empty() {
        out.push(ctx.at(Diagnostic::warning(
            "mounts",
            format!(
                "This workflow declares no root 'mounts' block, so it reaches no governed mount \
                 ({governed_text}). Write 'mounts: {{ allow_always: [] }}' to mean it, or grant \
                 the ones every state needs."
            ),
        )));
    }
}

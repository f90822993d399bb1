//! Workspace zones: which part of the workspace a canonical path is in, and which
//! mount or skill bundle owns it.

use crate::canonical::Canonical;

/// Session areas the runtime keeps for itself (any access refused).
pub const RUN_INTERNAL: [&str; 3] = ["checkpoints", "artifacts", "_specs"];
/// Areas the runtime offloads oversized context to (read and list only).
pub const RUN_OFFLOAD: [&str; 2] = ["large_tool_results", "conversation_history"];
/// The agent's durable working area.
pub const SCRATCHPAD: &str = "scratchpad";
/// The authoring plane: specs, hooks, cases. No route from inside a run.
pub const AUTHORING_PLANE: &str = "workflows";

/// The zone of a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Zone {
    /// Climbs above the workspace root.
    Escapes,
    /// The workspace root itself.
    Root,
    /// Inside a read-only mount.
    Authored,
    /// `checkpoints/`, `artifacts/`, `_specs/`.
    RunInternal,
    /// `large_tool_results/`, `conversation_history/`.
    RunOffload,
    /// `scratchpad/`.
    RunOpen,
    /// Anything else: run state, writable mounts.
    Run,
}

/// The host's mount table, by mount name (keys without leading/trailing `/`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Mounts {
    /// Directory mounts.
    pub dirs: Vec<String>,
    /// Exact-file mounts.
    pub files: Vec<String>,
    /// Mounts the host serves writable.
    pub writable: Vec<String>,
    /// Mounts closed unless a state is granted them.
    pub governed: Vec<String>,
    /// Directory mounts root-wide searches skip.
    pub unsearchable: Vec<String>,
}

impl Mounts {
    /// The zero-config table: `skills/`, `.platform/`, `AGENTS.md`, read-only, ungoverned.
    pub fn zero_config() -> Self {
        Mounts {
            dirs: vec!["skills".into(), ".platform".into()],
            files: vec!["AGENTS.md".into()],
            ..Mounts::default()
        }
    }

    /// The table of a host's mount declarations.
    pub fn from_decls(decls: &[archmax_spec::workspace::MountDecl]) -> Self {
        use archmax_spec::workspace::MountKind;
        let names = |f: &dyn Fn(&archmax_spec::workspace::MountDecl) -> bool| -> Vec<String> {
            decls
                .iter()
                .filter(|d| f(d))
                .map(|d| d.name.clone())
                .collect()
        };
        Mounts {
            dirs: names(&|d| d.kind == MountKind::Dir),
            files: names(&|d| d.kind == MountKind::File),
            writable: names(&|d| !d.read_only),
            governed: names(&|d| d.governed),
            unsearchable: Vec::new(),
        }
    }

    /// The mount owning a canonical path: the longest directory name equal to it or
    /// a prefix of it at a `/`, or an exact file name.
    pub fn mount_of<'a>(&'a self, rel: &str) -> Option<&'a str> {
        let dir = self
            .dirs
            .iter()
            .filter(|n| {
                rel == n.as_str()
                    || rel
                        .strip_prefix(n.as_str())
                        .is_some_and(|r| r.starts_with('/'))
            })
            .max_by_key(|n| n.len());
        let file = self.files.iter().find(|n| rel == n.as_str());
        match (dir, file) {
            (Some(d), Some(f)) => Some(if f.len() >= d.len() { f } else { d }),
            (d, f) => d.or(f).map(String::as_str),
        }
    }

    /// True when the host serves the mount writable.
    pub fn is_writable(&self, name: &str) -> bool {
        self.writable.iter().any(|w| w == name)
    }

    /// True when the mount needs a grant.
    pub fn is_governed(&self, name: &str) -> bool {
        self.governed.iter().any(|g| g == name)
    }
}

/// The zone of a canonical path.
pub fn classify(path: &Canonical, mounts: &Mounts) -> Zone {
    if path.escapes {
        return Zone::Escapes;
    }
    if path.path.is_empty() {
        return Zone::Root;
    }
    if let Some(name) = mounts.mount_of(&path.path)
        && !mounts.is_writable(name)
    {
        return Zone::Authored;
    }
    let first = path.path.split('/').next().unwrap_or_default();
    if RUN_INTERNAL.contains(&first) {
        Zone::RunInternal
    } else if RUN_OFFLOAD.contains(&first) {
        Zone::RunOffload
    } else if first == SCRATCHPAD {
        Zone::RunOpen
    } else {
        Zone::Run
    }
}

/// A skill bundle the kernel knows: its slug and canonical directory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillDir {
    /// The slug specs name it by.
    pub slug: String,
    /// Canonical directory, no trailing slash (`skills/order-data`).
    pub prefix: String,
}

impl SkillDir {
    /// The kernel's view of a discovered bundle.
    pub fn from_bundle(b: &archmax_spec::workspace::SkillBundle) -> Self {
        SkillDir {
            slug: b.slug.clone(),
            prefix: crate::canonical::canonicalize(&b.prefix).path,
        }
    }
}

/// The bundle owning a canonical path (longest prefix first).
pub fn skill_of<'a>(skills: &'a [SkillDir], path: &Canonical) -> Option<&'a str> {
    if path.escapes {
        return None;
    }
    skills
        .iter()
        .filter(|s| {
            path.path == s.prefix
                || path
                    .path
                    .strip_prefix(s.prefix.as_str())
                    .is_some_and(|r| r.starts_with('/'))
        })
        .max_by(|a, b| {
            a.prefix
                .len()
                .cmp(&b.prefix.len())
                .then_with(|| b.slug.cmp(&a.slug))
        })
        .map(|s| s.slug.as_str())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::canonical::canonicalize;

    fn zone(p: &str, m: &Mounts) -> Zone {
        classify(&canonicalize(p), m)
    }

    #[test]
    fn zones_follow_the_digest() {
        let m = Mounts {
            dirs: vec![
                "skills".into(),
                ".platform".into(),
                "data".into(),
                "catalogs".into(),
                "catalogs/scratch".into(),
            ],
            files: vec!["AGENTS.md".into()],
            writable: vec!["catalogs/scratch".into()],
            ..Mounts::default()
        };
        assert_eq!(zone("../victim", &m), Zone::Escapes);
        assert_eq!(zone("/", &m), Zone::Root);
        assert_eq!(zone(".//data/x", &m), Zone::Authored);
        assert_eq!(zone("././AGENTS.md", &m), Zone::Authored);
        assert_eq!(zone("AGENTS.md.bak", &m), Zone::Run);
        assert_eq!(zone("catalogs/eu/x", &m), Zone::Authored);
        assert_eq!(zone("catalogs/scratch/x", &m), Zone::Run);
        assert_eq!(
            zone("scratchpad/../checkpoints/cp-1.json", &m),
            Zone::RunInternal
        );
        assert_eq!(zone("large_tool_results/m.txt", &m), Zone::RunOffload);
        assert_eq!(zone("scratchpad/x", &m), Zone::RunOpen);
        assert_eq!(zone("output/x", &m), Zone::Run);
        assert_eq!(zone("output/x", &Mounts::default()), Zone::Run);
        assert_eq!(zone("skills/x", &Mounts::default()), Zone::Run);
    }

    #[test]
    fn skills_are_found_by_longest_prefix() {
        let skills = vec![
            SkillDir {
                slug: "order-data".into(),
                prefix: "skills/order-data".into(),
            },
            SkillDir {
                slug: "refund-policy".into(),
                prefix: "skills/refund-policy".into(),
            },
        ];
        assert_eq!(
            skill_of(
                &skills,
                &canonicalize("skills/order-data/../refund-policy/SKILL.md")
            ),
            Some("refund-policy")
        );
        assert_eq!(
            skill_of(&skills, &canonicalize("./skills//order-data")),
            Some("order-data")
        );
        assert_eq!(skill_of(&skills, &canonicalize("skills/README.md")), None);
        assert_eq!(
            skill_of(&skills, &canonicalize("skills/order-database/x")),
            None
        );
    }
}

//! Skill bundles: discovery (the registry) and the checks on skill lists.

use super::Context;
use crate::diagnostic::Diagnostic;
use crate::grammar::is_slug;
use crate::workspace::Files;

/// Longest accepted `name:` in a `SKILL.md` frontmatter.
pub const MAX_NAME_CHARS: usize = 64;
/// Longest accepted `description:`.
pub const MAX_DESCRIPTION_CHARS: usize = 1024;

/// One discovered skill bundle.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillBundle {
    /// The directory name: the slug specs name it by.
    pub slug: String,
    /// Workspace-relative directory, with a trailing `/`.
    pub prefix: String,
    /// The frontmatter `name:`.
    pub name: String,
    /// The frontmatter `description:`.
    pub description: String,
}

/// A problem found while discovering skills.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RegistryIssue {
    /// The bundle cannot be used; it is skipped.
    Skipped {
        slug: String,
        prefix: String,
        reason: String,
    },
    /// `name:` differs from the directory name.
    NameMismatch {
        name: String,
        dir: String,
        prefix: String,
    },
    /// The directory name is not a slug.
    BadSlug { dir: String, prefix: String },
    /// A later source provides the same slug.
    Shadowed {
        slug: String,
        prefix: String,
        earlier: String,
    },
}

/// The bundles every source provides (later sources shadow earlier ones), in
/// discovery order, and what was wrong on the way.
pub fn discover(files: &dyn Files, sources: &[String]) -> (Vec<SkillBundle>, Vec<RegistryIssue>) {
    let mut bundles: Vec<SkillBundle> = Vec::new();
    let mut issues = Vec::new();
    for source in sources {
        let source = format!("{}/", source.trim_end_matches('/'));
        // Something named SKILL.md, readable or not: an unreadable one is reported below.
        let present = |p: &str| !matches!(files.read_checked(&format!("{p}SKILL.md")), Ok(None));
        let candidates: Vec<String> = if present(&source) {
            vec![source.clone()]
        } else {
            files
                .list(&source)
                .into_iter()
                .filter(|e| e.is_dir)
                .map(|e| format!("{source}{}/", e.name))
                .filter(|p| present(p))
                .collect()
        };
        for prefix in candidates {
            let dir = prefix
                .trim_end_matches('/')
                .rsplit('/')
                .next()
                .unwrap_or_default()
                .to_string();
            let text = files
                .read_checked(&format!("{prefix}SKILL.md"))
                .map(Option::unwrap_or_default)
                .map_err(|why| format!("SKILL.md {why}"));
            let (name, description) = match text.and_then(|t| read_frontmatter(&t)) {
                Ok(pair) => pair,
                Err(reason) => {
                    issues.push(RegistryIssue::Skipped {
                        slug: dir,
                        prefix,
                        reason,
                    });
                    continue;
                }
            };
            if !is_slug(&dir) {
                issues.push(RegistryIssue::BadSlug { dir, prefix });
                continue;
            }
            if name != dir {
                issues.push(RegistryIssue::NameMismatch {
                    name: name.clone(),
                    dir: dir.clone(),
                    prefix: prefix.clone(),
                });
            }
            if let Some(i) = bundles.iter().position(|b| b.slug == dir) {
                issues.push(RegistryIssue::Shadowed {
                    slug: dir.clone(),
                    prefix: prefix.clone(),
                    earlier: bundles[i].prefix.clone(),
                });
                bundles.remove(i);
            }
            bundles.push(SkillBundle {
                slug: dir,
                prefix,
                name,
                description,
            });
        }
    }
    (bundles, issues)
}

/// `name` and `description` from a `SKILL.md`, or why the bundle is skipped.
fn read_frontmatter(text: &str) -> Result<(String, String), String> {
    if text.trim().is_empty() {
        return Err("SKILL.md is empty".to_string());
    }
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
        .ok_or("SKILL.md has no frontmatter (it must start with a '---' block)")?;
    let end = rest
        .find("\n---")
        .ok_or("SKILL.md frontmatter is not closed by '---'")?;
    let block = crate::yaml::parse(&rest[..end])
        .map_err(|e| format!("SKILL.md frontmatter is not valid YAML: {e}"))?;
    let block = block
        .filter(|b| b.as_map().is_some())
        .ok_or("SKILL.md frontmatter is not a mapping")?;
    let name = block
        .get("name")
        .and_then(|n| n.as_str())
        .unwrap_or_default()
        .trim()
        .to_string();
    let description = block
        .get("description")
        .and_then(|n| n.as_str())
        .unwrap_or_default()
        .trim()
        .to_string();
    if description.is_empty() {
        return Err("SKILL.md has no 'description'".to_string());
    }
    if description.chars().count() > MAX_DESCRIPTION_CHARS {
        return Err(format!(
            "its description is longer than {MAX_DESCRIPTION_CHARS} characters"
        ));
    }
    if name.chars().count() > MAX_NAME_CHARS {
        return Err(format!(
            "its name is longer than {MAX_NAME_CHARS} characters"
        ));
    }
    Ok((name, description))
}

/// The skills pass of `validateWorkflow`.
pub(crate) fn check(ctx: &Context<'_>, issues: Vec<RegistryIssue>, out: &mut Vec<Diagnostic>) {
    let bundles = ctx.bundles;
    for issue in issues {
        out.push(match issue {
            RegistryIssue::Skipped {
                slug,
                prefix,
                reason,
            } => Diagnostic::warning(
                "skills",
                format!("Skipping skill '{slug}' at {prefix}: {reason}"),
            ),
            RegistryIssue::NameMismatch { name, dir, prefix } => Diagnostic::error(
                "skills",
                format!(
                    "Skill '{name}' should match directory name '{dir}' ({prefix}SKILL.md): specs \
                     name a skill by its directory, so rename one of the two."
                ),
            ),
            RegistryIssue::BadSlug { dir, prefix } => Diagnostic::error(
                "skills",
                format!(
                    "Skill directory '{dir}' ({prefix}) is not a kebab-case slug; rename it to \
                     lowercase letters and digits joined by single hyphens."
                ),
            ),
            RegistryIssue::Shadowed {
                slug,
                prefix,
                earlier,
            } => Diagnostic::warning(
                "skills",
                format!("Skill '{slug}' at {prefix} shadows the one at {earlier}"),
            ),
        });
    }
    let known: Vec<&str> = bundles.iter().map(|b| b.slug.as_str()).collect();
    let known_text = if known.is_empty() {
        "(the workspace provides none)".to_string()
    } else {
        known.join(", ")
    };
    for (field, state, list_key) in ctx.governance_lists("skills") {
        let Some(items) = ctx.node(&field).and_then(|n| n.as_seq()) else {
            continue;
        };
        for item in items {
            let Some(slug) = item.as_str() else { continue };
            if is_slug(slug) && !known.contains(&slug) {
                let who = state
                    .as_ref()
                    .map(|s| format!("State '{s}' "))
                    .unwrap_or_default();
                out.push(
                    Diagnostic::error(
                        &field,
                        format!(
                            "{who}'{list_key}' names skill '{slug}', which no source provides. \
                             Known skills: {known_text}."
                        ),
                    )
                    .in_file(ctx.file)
                    .at(Some(item.pos)),
                );
            }
        }
    }
    if ctx.tree.get("skills").is_none() && !known.is_empty() {
        out.push(ctx.at(Diagnostic::warning(
            "skills",
            format!(
                "This workflow declares no root 'skills' block, so no skill is enabled \
                 workflow-wide. The workspace provides {known_text}; write 'skills: {{ \
                 allow_always: [] }}' to say every capability is state-specific, or list the \
                 ones every state needs."
            ),
        )));
    }
}

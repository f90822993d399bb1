//! Governance lists: tool allow/forbid entries, skill slugs, mount grants.

use indexmap::IndexMap;

use super::{Shape, child, index, keys};
use crate::grammar::{is_slug, mount_name_problem};
use crate::jsfmt::json_of;
use crate::model::*;
use crate::yaml::Node;

pub(crate) fn workflow_tools(s: &mut Shape, n: &Node) -> Option<WorkflowTools> {
    s.object(n, "tools")?;
    let mut t = WorkflowTools {
        allow_always: None,
        forbid_always: None,
    };
    if let Some(v) = n.get("allow_always") {
        t.allow_always = tool_entries(s, v, "tools.allow_always");
    }
    if let Some(v) = n.get("forbid_always") {
        t.forbid_always = tool_entries(s, v, "tools.forbid_always");
    }
    s.strict(n, "tools", keys::WORKFLOW_GOVERNANCE);
    Some(t)
}

pub(crate) fn state_tools(s: &mut Shape, n: &Node, path: &str) -> Option<StateTools> {
    s.object(n, path)?;
    let mut t = StateTools {
        allow: None,
        forbid: None,
    };
    if let Some(v) = n.get("allow") {
        t.allow = tool_entries(s, v, &child(path, "allow"));
    }
    if let Some(v) = n.get("forbid") {
        t.forbid = tool_entries(s, v, &child(path, "forbid"));
    }
    s.strict(n, path, keys::STATE_GOVERNANCE);
    Some(t)
}

fn tool_entries(s: &mut Shape, n: &Node, path: &str) -> Option<Vec<ToolEntry>> {
    let items = s.array(n, path)?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if let Some(e) = tool_entry(s, item, &index(path, i)) {
            out.push(e);
        }
    }
    (out.len() == items.len()).then_some(out)
}

/// `name` or `{ tool, args?, paths?, connection?, source? }`. A failure that rules
/// the object spelling out is one `Invalid input` at the entry; extra keys alone are
/// reported as unknown keys.
fn tool_entry(s: &mut Shape, n: &Node, path: &str) -> Option<ToolEntry> {
    if let Some(name) = n.as_str() {
        return Some(ToolEntry::Name(name.to_string()));
    }
    let Some(_) = n.as_map() else {
        s.hard(path, n.pos, "Invalid input");
        return None;
    };
    let tool = n.get("tool").and_then(Node::as_str).map(str::to_string);
    let args = match n.get("args") {
        None => Ok(None),
        Some(a) => match a.as_map() {
            Some(entries) => entries
                .iter()
                .map(|e| glob_list(&e.value).map(|g| (e.key.clone(), g)))
                .collect::<Option<IndexMap<_, _>>>()
                .map(Some)
                .ok_or(()),
            None => Err(()),
        },
    };
    let paths = match n.get("paths") {
        None => Ok(None),
        Some(p) => glob_list(p).map(Some).ok_or(()),
    };
    let optional_str = |key: &str| match n.get(key) {
        None => Ok(None),
        Some(v) => v.as_str().map(|x| Some(x.to_string())).ok_or(()),
    };
    let connection = optional_str("connection");
    let source = optional_str("source");
    let (Some(tool), Ok(args), Ok(paths), Ok(connection), Ok(source)) =
        (tool, args, paths, connection, source)
    else {
        s.hard(path, n.pos, "Invalid input");
        return None;
    };
    let before = s.issues.len();
    s.strict(n, path, keys::TOOL_ENTRY);
    (s.issues.len() == before).then_some(ToolEntry::Guarded(GuardedTool {
        tool,
        args,
        paths,
        connection,
        source,
    }))
}

fn glob_list(n: &Node) -> Option<GlobList> {
    if let Some(s) = n.as_str() {
        return Some(GlobList::One(s.to_string()));
    }
    n.as_seq()?
        .iter()
        .map(|i| i.as_str().map(str::to_string))
        .collect::<Option<Vec<_>>>()
        .map(GlobList::Many)
}

pub(crate) fn workflow_skills(s: &mut Shape, n: &Node) -> Option<WorkflowSkills> {
    s.object(n, "skills")?;
    let mut k = WorkflowSkills {
        allow_always: None,
        forbid_always: None,
    };
    if let Some(v) = n.get("allow_always") {
        k.allow_always = skill_list(s, v, "skills.allow_always");
    }
    if let Some(v) = n.get("forbid_always") {
        k.forbid_always = skill_list(s, v, "skills.forbid_always");
    }
    s.strict(n, "skills", keys::WORKFLOW_GOVERNANCE);
    Some(k)
}

pub(crate) fn state_skills(s: &mut Shape, n: &Node, path: &str) -> Option<StateSkills> {
    s.object(n, path)?;
    let mut k = StateSkills {
        allow: None,
        forbid: None,
    };
    if let Some(v) = n.get("allow") {
        k.allow = skill_list(s, v, &child(path, "allow"));
    }
    if let Some(v) = n.get("forbid") {
        k.forbid = skill_list(s, v, &child(path, "forbid"));
    }
    s.strict(n, path, keys::STATE_GOVERNANCE);
    Some(k)
}

fn skill_list(s: &mut Shape, n: &Node, path: &str) -> Option<Vec<String>> {
    let Some(items) = n.as_seq() else {
        s.hard(path, n.pos, "must be a list of skill slugs");
        return None;
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p = index(path, i);
        match item.as_str() {
            Some(slug) if is_slug(slug) => out.push(slug.to_string()),
            Some(slug) => s.soft(
                &p,
                item.pos,
                format!(
                    "'{slug}' is not a skill slug. Entries are bundle directory names under \
                     skills/ in kebab-case (e.g. 'order-data'), never paths or globs; scope \
                     paths inside a bundle with a 'tools.allow' entry."
                ),
            ),
            None => s.hard(
                &p,
                item.pos,
                format!("is not a skill slug: {}", json_of(&item.to_json())),
            ),
        }
    }
    (out.len() == items.len()).then_some(out)
}

pub(crate) fn workflow_mounts(s: &mut Shape, n: &Node) -> Option<WorkflowMounts> {
    s.object(n, "mounts")?;
    let mut m = WorkflowMounts {
        allow_always: None,
        forbid_always: None,
    };
    if let Some(v) = n.get("allow_always") {
        m.allow_always = mount_grants(s, v, "mounts.allow_always");
    }
    if let Some(v) = n.get("forbid_always") {
        m.forbid_always = mount_names(s, v, "mounts.forbid_always");
    }
    s.strict(n, "mounts", keys::WORKFLOW_GOVERNANCE);
    Some(m)
}

pub(crate) fn state_mounts(s: &mut Shape, n: &Node, path: &str) -> Option<StateMounts> {
    s.object(n, path)?;
    let mut m = StateMounts {
        allow: None,
        forbid: None,
    };
    if let Some(v) = n.get("allow") {
        m.allow = mount_grants(s, v, &child(path, "allow"));
    }
    if let Some(v) = n.get("forbid") {
        m.forbid = mount_names(s, v, &child(path, "forbid"));
    }
    s.strict(n, path, keys::STATE_GOVERNANCE);
    Some(m)
}

fn not_a_mount_name(name: &str) -> String {
    format!(
        "'{name}' is not a mount name. Name a key of the host's mount table without its \
         slashes (e.g. 'reference', 'catalogs/eu'); no globs, no leading slash, no '..'. Scope \
         paths inside a mount with a 'tools.allow' entry."
    )
}

fn mount_grants(s: &mut Shape, n: &Node, path: &str) -> Option<Vec<MountGrant>> {
    let Some(items) = n.as_seq() else {
        s.hard(
            path,
            n.pos,
            "must be a list of mount names, each optionally as '{ mount: <name>, access: read | read_write }'",
        );
        return None;
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if let Some(g) = mount_grant(s, item, &index(path, i)) {
            out.push(g);
        }
    }
    (out.len() == items.len()).then_some(out)
}

fn mount_grant(s: &mut Shape, n: &Node, path: &str) -> Option<MountGrant> {
    let hard_message = || {
        format!(
            "must be a mount name, or '{{ mount: <name>, access: read | read_write }}' to name \
             the access this level gives; got {}",
            json_of(&n.to_json())
        )
    };
    if let Some(name) = n.as_str() {
        if mount_name_problem(name).is_some() {
            s.soft(path, n.pos, not_a_mount_name(name));
            return None;
        }
        return Some(MountGrant::Name(name.to_string()));
    }
    if n.as_map().is_none() {
        s.hard(path, n.pos, hard_message());
        return None;
    }
    let mount = n.get("mount").and_then(Node::as_str);
    let access = match n.get("access").and_then(Node::as_str) {
        Some("read") => Some(MountAccess::Read),
        Some("read_write") => Some(MountAccess::ReadWrite),
        _ => None,
    };
    let (Some(mount), Some(access)) = (mount, access) else {
        s.hard(path, n.pos, hard_message());
        return None;
    };
    let before = s.issues.len();
    if mount_name_problem(mount).is_some() {
        let pos = n.get("mount").map_or(n.pos, |m| m.pos);
        s.soft(&child(path, "mount"), pos, not_a_mount_name(mount));
    }
    s.strict(n, path, keys::MOUNT_GRANT);
    (s.issues.len() == before).then(|| MountGrant::WithAccess {
        mount: mount.to_string(),
        access,
    })
}

fn mount_names(s: &mut Shape, n: &Node, path: &str) -> Option<Vec<String>> {
    let Some(items) = n.as_seq() else {
        s.hard(path, n.pos, "must be a list of mount names");
        return None;
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p = index(path, i);
        match item.as_str() {
            Some(name) if mount_name_problem(name).is_none() => out.push(name.to_string()),
            Some(name) => s.soft(&p, item.pos, not_a_mount_name(name)),
            None => s.hard(
                &p,
                item.pos,
                format!("is not a mount name: {}", json_of(&item.to_json())),
            ),
        }
    }
    (out.len() == items.len()).then_some(out)
}

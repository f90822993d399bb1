//! `before` / `after`: one hook or a list, each `{ script }`, `{ rubric }` or a
//! host-registered kind.
//!
//! A hook has several spellings, so its errors follow the original's rule for
//! alternatives: when exactly one spelling failed only softly (unknown keys, a
//! pattern, a range), its own issues are reported where they arose; otherwise one
//! issue names the field.

use indexmap::IndexMap;

use super::{IntRule, Shape, child, index};
use crate::grammar::is_hook_script_path;
use crate::model::{Hook, HookSpec, Rubric};
use crate::yaml::Node;

use super::keys::{self, SIDECAR};

/// The sentence for a hook no spelling accepts.
pub(crate) const NOT_A_HOOK: &str = "must be a hook: { script: 'hooks/<file>.js' } (a script under \
     the workflow's hooks/ directory, optionally with 'max_iterations'), { rubric: { instructions: \
     ... } } (an inline grader), or a kind the host declares under 'extensions.hooks'";
/// The sentence for a mapping that is not a single tagged hook.
pub(crate) const NOT_SINGLE_KEY: &str = "must be a single-key tagged object (plus an optional \
     'max_iterations' sidecar): { script: ... }, { rubric: ... } or one host-declared kind";

pub(crate) fn hook_spec(s: &mut Shape, n: &Node, path: &str) -> Option<HookSpec> {
    if let Some(items) = n.as_seq() {
        let mut trial = Shape::default();
        let mut hooks = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            if item.as_map().is_none() {
                trial.hard(path, item.pos, "");
                continue;
            }
            if let Some(h) = hook(&mut trial, item, &index(path, i)) {
                hooks.push(h);
            }
        }
        if trial.any_hard() {
            s.hard(
                path,
                n.pos,
                "every entry must be a { script } or { rubric } entry",
            );
            return None;
        }
        let clean = trial.is_clean();
        s.issues.extend(trial.issues);
        return clean.then_some(HookSpec::Many(hooks));
    }
    if n.as_map().is_none() {
        s.hard(path, n.pos, "must be a { script } or { rubric } entry");
        return None;
    }
    let mut trial = Shape::default();
    let h = hook(&mut trial, n, path);
    s.issues.extend(trial.issues);
    h.map(HookSpec::One)
}

/// One hook mapping. Pushes resolved issues (already classified) into `s`:
/// a hard issue when no spelling came close.
fn hook(s: &mut Shape, n: &Node, path: &str) -> Option<Hook> {
    let mut script = Shape::default();
    let mut rubric = Shape::default();
    let mut custom = Shape::default();
    let as_script = script_hook(&mut script, n, path);
    let as_rubric = rubric_hook(&mut rubric, n, path);
    let as_custom = custom_hook(&mut custom, n, path);
    if let Some(h) = as_script.or(as_rubric).or(as_custom) {
        return Some(h);
    }
    let soft: Vec<Shape> = [script, rubric, custom]
        .into_iter()
        .filter(|t| !t.any_hard())
        .collect();
    if let [only] = soft.as_slice() {
        s.issues.extend(only.issues.iter().cloned());
    } else {
        s.hard(path, n.pos, field_message(n));
    }
    None
}

fn tag_keys(n: &Node) -> usize {
    n.as_map()
        .map_or(0, |m| m.iter().filter(|e| e.key != SIDECAR).count())
}

fn field_message(n: &Node) -> &'static str {
    if tag_keys(n) == 1 {
        NOT_A_HOOK
    } else {
        NOT_SINGLE_KEY
    }
}

fn script_hook(s: &mut Shape, n: &Node, path: &str) -> Option<Hook> {
    let mut script = None;
    match n.get("script") {
        None => s.hard(
            &child(path, "script"),
            n.pos,
            "Invalid input: expected string, received undefined",
        ),
        Some(v) => match v.as_str() {
            Some(p) if is_hook_script_path(p) => script = Some(p.to_string()),
            Some(_) => s.soft(&child(path, "script"), v.pos, NOT_A_HOOK),
            None => s.expected(v, &child(path, "script"), "string"),
        },
    }
    let mut max_iterations = None;
    if let Some(v) = n.get(SIDECAR) {
        max_iterations = s.int(v, &child(path, SIDECAR), IntRule::NonNegative);
    }
    s.strict(n, path, keys::SCRIPT_HOOK);
    if !s.is_clean() {
        return None;
    }
    Some(Hook::Script {
        script: script?,
        max_iterations,
    })
}

fn rubric_hook(s: &mut Shape, n: &Node, path: &str) -> Option<Hook> {
    let rpath = child(path, "rubric");
    let Some(r) = n.get("rubric") else {
        s.hard(
            &rpath,
            n.pos,
            "Invalid input: expected object, received undefined",
        );
        return None;
    };
    s.object(r, &rpath)?;
    let mut instructions = None;
    match r.get("instructions") {
        None => s.hard(
            &child(&rpath, "instructions"),
            r.pos,
            "must be a non-empty string",
        ),
        Some(v) => instructions = s.nonempty(v, &child(&rpath, "instructions")),
    }
    let mut max_iterations = None;
    if let Some(v) = r.get(SIDECAR) {
        max_iterations = s.int(v, &child(&rpath, SIDECAR), IntRule::NonNegative);
    }
    let mut model = None;
    if let Some(v) = r.get("model") {
        model = s.model_id(v, &child(&rpath, "model"));
    }
    let mut metadata = None;
    if let Some(v) = r.get("metadata") {
        metadata = s.metadata(v, &child(&rpath, "metadata"));
    }
    s.strict(r, &rpath, keys::RUBRIC);
    s.strict(n, path, keys::RUBRIC_HOOK);
    if !s.is_clean() {
        return None;
    }
    Some(Hook::Rubric {
        rubric: Rubric {
            instructions: instructions?,
            max_iterations,
            model,
            metadata,
        },
    })
}

/// A host-registered kind: a single key whose value is a string.
fn custom_hook(s: &mut Shape, n: &Node, path: &str) -> Option<Hook> {
    let entries = n.as_map()?;
    let mut map = IndexMap::new();
    for e in entries {
        match e.value.as_str() {
            Some(v) => {
                map.insert(e.key.clone(), v.to_string());
            }
            None => s.hard(&child(path, &e.key), e.value.pos, "Invalid input"),
        }
    }
    if s.any_hard() {
        return None;
    }
    let reserved = map
        .keys()
        .any(|k| k == "script" || k == "rubric" || k == SIDECAR);
    if map.len() != 1 || reserved {
        s.soft(path, n.pos, field_message(n));
        return None;
    }
    Some(Hook::Custom(map))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(yaml: &str) -> Vec<(String, String)> {
        let doc = crate::yaml::parse(yaml).ok().flatten().expect("doc");
        let mut s = Shape::default();
        let h = hook_spec(&mut s, doc.get("after").expect("after"), "states.s.after");
        assert_eq!(h.is_some(), s.issues.is_empty());
        s.issues.into_iter().map(|i| (i.path, i.message)).collect()
    }

    fn one(path: &str, msg: &str) -> Vec<(String, String)> {
        vec![(path.to_string(), msg.to_string())]
    }

    #[test]
    fn each_spelling_reports_like_the_original() {
        let at = "states.s.after";
        assert_eq!(check("after: { script: anywhere.js }"), one(at, NOT_A_HOOK));
        assert_eq!(check("after: { script: /abs/x.js }"), one(at, NOT_A_HOOK));
        assert_eq!(
            check("after: { script: hooks/../x.js }"),
            one(at, NOT_A_HOOK)
        );
        assert_eq!(
            check("after: { script: hooks/x.js, max_corrections: 2 }"),
            one(at, "Unrecognized key: \"max_corrections\"")
        );
        assert_eq!(
            check("after: { script: hooks/ok.js, instructions: be strict }"),
            one(at, NOT_SINGLE_KEY)
        );
        assert_eq!(
            check("after: { rubric: { instructions: x }, specification: s }"),
            one(at, "Unrecognized key: \"specification\"")
        );
        assert_eq!(
            check("after: { rubric: { instructions: t }, max_iterations: 2 }"),
            one(at, "Unrecognized key: \"max_iterations\"")
        );
        assert_eq!(
            check("after: { rubric: { instructions: x, title: t } }"),
            one("states.s.after.rubric", "Unrecognized key: \"title\"")
        );
        assert_eq!(check("after: { rubric: tone }"), one(at, NOT_A_HOOK));
        assert_eq!(
            check("after: { rubric: { max_iterations: 2 } }"),
            one(at, NOT_A_HOOK)
        );
        assert_eq!(check("after: { webhook: 42 }"), one(at, NOT_A_HOOK));
        assert_eq!(check("after: {}"), one(at, NOT_SINGLE_KEY));
        assert_eq!(
            check("after: skills/x.js"),
            one(at, "must be a { script } or { rubric } entry")
        );
        assert_eq!(
            check("after: [ {script: hooks/a.js}, bad ]"),
            one(at, "every entry must be a { script } or { rubric } entry")
        );
        assert_eq!(
            check("after: [ {script: hooks/a.js, max_corrections: 1} ]"),
            one("states.s.after.0", "Unrecognized key: \"max_corrections\"")
        );
        assert_eq!(
            check("after: { script: hooks/a.js, max_iterations: -1 }"),
            one(
                "states.s.after.max_iterations",
                "Too small: expected number to be >=0"
            )
        );
        assert!(check("after: { subagent: judge }").is_empty());
        assert!(check("after: [ { script: hooks/a.mjs, max_iterations: 2 }, { rubric: { instructions: be kind, model: m } } ]").is_empty());
    }
}

//! `triggers`: trigger id → declaration, with typed signatures.

use indexmap::IndexMap;

use super::keys::{SIGNATURE_ENTRY, TRIGGER as DECLARATION_KEYS};
use super::{Shape, bad_variable_name, child, index, js_string};
use crate::grammar::{is_variable_name, session_path_problem};
use crate::jsfmt::json_of;
use crate::model::{SignatureItem, TriggerDecl};
use crate::signature::SIGNATURE_TYPES;
use crate::yaml::{Node, Value};

const TRIGGERS_MESSAGE: &str = "must be a mapping of trigger id to its declaration (e.g. \
     'triggers: { manual: }', or an id with a 'session' path under it).";

pub(crate) fn walk_triggers(
    s: &mut Shape,
    n: &Node,
    path: &str,
) -> Option<IndexMap<String, Option<TriggerDecl>>> {
    let Some(entries) = n.as_map() else {
        s.hard(path, n.pos, TRIGGERS_MESSAGE);
        return None;
    };
    let before = s.issues.len();
    let mut out = IndexMap::new();
    for e in entries {
        let p = child(path, &e.key);
        if e.key.trim().is_empty() {
            s.hard(&p, e.key_pos, TRIGGERS_MESSAGE);
            continue;
        }
        if e.value.is_null() {
            out.insert(e.key.clone(), None);
            continue;
        }
        if e.value.as_map().is_none() {
            s.expected(&e.value, &p, "object");
            continue;
        }
        if let Some(d) = declaration(s, &e.value, &p) {
            out.insert(e.key.clone(), Some(d));
        }
    }
    (s.issues.len() == before).then_some(out)
}

fn declaration(s: &mut Shape, n: &Node, path: &str) -> Option<TriggerDecl> {
    let before = s.issues.len();
    let mut d = TriggerDecl::default();
    if let Some(v) = n.get("session") {
        d.session = session_path(s, v, &child(path, "session"), false);
    }
    if let Some(v) = n.get("message") {
        match v.value {
            Value::Bool(false) => d.message = Some(serde_json::Value::Bool(false)),
            Value::Str(_) => {
                d.message = session_path(s, v, &child(path, "message"), true)
                    .map(serde_json::Value::String);
            }
            _ => s.hard(&child(path, "message"), v.pos, path_kind_message(true)),
        }
    }
    if let Some(v) = n.get("connection") {
        match v.as_str() {
            Some(c) if !c.trim().is_empty() => d.connection = Some(c.to_string()),
            _ => s.hard(
                &child(path, "connection"),
                v.pos,
                "must be a non-empty string naming an access connection in the host's environment.",
            ),
        }
    }
    if let Some(v) = n.get("description") {
        match v.as_str() {
            Some(c) if !c.trim().is_empty() => d.description = Some(c.to_string()),
            _ => s.hard(
                &child(path, "description"),
                v.pos,
                "must be a non-empty string saying, for a caller, what calling this entry does.",
            ),
        }
    }
    if let Some(v) = n.get("requires") {
        d.requires = signature_list(s, v, &child(path, "requires"), "requires", false);
    }
    if let Some(v) = n.get("returns") {
        d.returns = signature_list(s, v, &child(path, "returns"), "returns", true);
    }
    let hard_before = s.issues[before..].iter().any(|i| i.hard);
    if !hard_before {
        if let Some(e) = n.entry("entry") {
            s.soft(
                path,
                e.key_pos,
                "declares 'entry'. The state a trigger's declaration sits on IS its entry state: \
                 move the declaration under the state it should enter and drop the key.",
            );
        }
        if let Some(e) = n.entry("name") {
            s.soft(
                path,
                e.key_pos,
                "declares 'name'. The key a declaration sits under IS the trigger id: rename the \
                 key instead and drop 'name'.",
            );
        }
    }
    if let Some(entries) = n.as_map() {
        for e in entries {
            if !DECLARATION_KEYS.contains(&e.key.as_str()) && e.key != "entry" && e.key != "name" {
                d.host.insert(e.key.clone(), e.value.to_json());
            }
        }
    }
    (s.issues.len() == before).then_some(d)
}

fn path_kind_message(message: bool) -> &'static str {
    if message {
        "must be a dotted path string into the firing's variables (e.g. 'message.body' or \
         'triggers.-1.text'), or false when firings carry no message."
    } else {
        "must be a dotted path string into the firing's variables (e.g. 'conversation_id' or \
         'triggers.-1.conversationId')."
    }
}

fn session_path(s: &mut Shape, v: &Node, path: &str, message: bool) -> Option<String> {
    let Some(text) = v.as_str() else {
        s.hard(path, v.pos, path_kind_message(message));
        return None;
    };
    if let Some(problem) = session_path_problem(text) {
        s.soft(path, v.pos, problem);
        return None;
    }
    Some(text.to_string())
}

fn entry_label(n: &Node) -> String {
    match n.get("name").and_then(Node::as_str) {
        Some(name) if !name.is_empty() => format!("Entry '{name}'"),
        _ => "The entry".to_string(),
    }
}

/// `requires` / `returns` of a declaration.
fn signature_list(
    s: &mut Shape,
    n: &Node,
    path: &str,
    key: &str,
    returns: bool,
) -> Option<Vec<SignatureItem>> {
    let Some(items) = n.as_seq() else {
        s.hard(
            path,
            n.pos,
            format!(
                "must be a list of run-variable names, each a bare name or '{{ name, type?, \
                 description? }}' (e.g. '{key}: [order_id, {{ name: due, type: date }}]')."
            ),
        );
        return None;
    };
    let before = s.issues.len();
    let mut out = Vec::with_capacity(items.len());
    let mut hard = false;
    for (i, item) in items.iter().enumerate() {
        let p = index(path, i);
        let mark = s.issues.len();
        if let Some(e) = signature_item(s, item, &p) {
            out.push((e, p, item.pos));
        }
        hard |= s.issues[mark..].iter().any(|x| x.hard);
    }
    if !hard {
        let mut seen: Vec<&str> = Vec::new();
        for (e, p, pos) in &out {
            let name = e.name();
            if seen.contains(&name) {
                s.soft(p, *pos, format!("'{name}' is listed more than once."));
            }
            seen.push(name);
            if returns && let Some(msg) = reserved_return(name) {
                s.soft(p, *pos, msg);
            }
        }
    }
    (s.issues.len() == before).then(|| out.into_iter().map(|(e, _, _)| e).collect())
}

fn reserved_return(name: &str) -> Option<&'static str> {
    Some(match name {
        "trigger" => {
            "'trigger' is the built-in trigger variable: the harness sets it and locks it, so a \
             run cannot produce it. Drop it from 'returns'."
        }
        "title" => {
            "'title' is the built-in title variable, the run's own task label: returning it \
             would silently rename the caller's task. Return the value under another name."
        }
        "note" => {
            "'note' is reserved in 'returns': a sub-run that finishes without its declared \
             returns hands the caller a 'note' naming them."
        }
        _ => return None,
    })
}

fn signature_item(s: &mut Shape, n: &Node, path: &str) -> Option<SignatureItem> {
    if let Some(name) = n.as_str() {
        if !is_variable_name(name) {
            s.soft(path, n.pos, bad_variable_name(name));
            return None;
        }
        return Some(SignatureItem::Name(name.to_string()));
    }
    if n.as_map().is_none() {
        s.hard(
            path,
            n.pos,
            format!("'{}' is not a valid run-variable name", js_string(n)),
        );
        return None;
    }
    let label = entry_label(n);
    let Some(name) = n.get("name").and_then(Node::as_str) else {
        s.hard(
            path,
            n.pos,
            format!(
                "{label}: a signature entry needs a 'name' naming its variable (e.g. '{{ name: \
                 order_id, type: string }}')."
            ),
        );
        return None;
    };
    let ty = match n.get("type") {
        None => None,
        Some(t) => match t.as_str() {
            Some(x) if SIGNATURE_TYPES.contains(&x) => Some(x.to_string()),
            _ => {
                s.hard(
                    path,
                    t.pos,
                    format!(
                        "{label}: 'type' must be one of string, integer, number, boolean, date, \
                         date-time, object or array; got {}",
                        json_of(&t.to_json())
                    ),
                );
                return None;
            }
        },
    };
    let before = s.issues.len();
    let unknown: Vec<String> = n
        .as_map()
        .into_iter()
        .flatten()
        .filter(|e| !SIGNATURE_ENTRY.contains(&e.key.as_str()))
        .map(|e| format!("'{}'", e.key))
        .collect();
    if !unknown.is_empty() {
        s.soft(
            path,
            n.pos,
            format!(
                "{label} declares {}, which a signature entry does not take; it has 'name', \
                 'type' and 'description' only.",
                unknown.join(", ")
            ),
        );
    }
    if !is_variable_name(name) {
        let pos = n.get("name").map_or(n.pos, |x| x.pos);
        s.soft(&child(path, "name"), pos, bad_variable_name(name));
    }
    let mut description = None;
    if let Some(d) = n.get("description") {
        match d.as_str() {
            Some(x) if !x.trim().is_empty() => description = Some(x.to_string()),
            _ => s.soft(
                &child(path, "description"),
                d.pos,
                "'description' must be a non-empty string",
            ),
        }
    }
    (s.issues.len() == before).then(|| SignatureItem::Typed {
        name: name.to_string(),
        ty,
        description,
    })
}

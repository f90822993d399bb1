//! The shape of one state and its transitions.

use super::{Shape, bad_variable_name, child, entries, hooks, index, js_string, keys, triggers};
use crate::grammar::is_variable_name;
use crate::model::*;
use crate::yaml::{Node, Value};

/// Walks `states.<slug>`. A null state reads as `{}`.
pub(crate) fn walk_state(s: &mut Shape, n: &Node, path: &str) -> Option<State> {
    if n.is_null() {
        return Some(State::default());
    }
    s.object(n, path)?;
    let before = s.issues.len();
    let mut st = State::default();
    if let Some(v) = n.get("type") {
        st.kind = state_type(s, v, &child(path, "type"));
    }
    if let Some(v) = n.get("title") {
        st.title = s.nonempty(v, &child(path, "title"));
    }
    if let Some(v) = n.get("instructions") {
        st.instructions = s.string(v, &child(path, "instructions"));
    }
    if let Some(v) = n.get("summary") {
        st.summary = s.string(v, &child(path, "summary"));
    }
    if let Some(v) = n.get("evidence") {
        st.evidence = s.strings(v, &child(path, "evidence"));
    }
    if let Some(v) = n.get("approvers") {
        st.approvers = s.strings(v, &child(path, "approvers"));
    }
    if let Some(v) = n.get("triggers") {
        st.triggers = triggers::walk_triggers(s, v, &child(path, "triggers"));
    }
    if let Some(v) = n.get("before") {
        st.before = hooks::hook_spec(s, v, &child(path, "before"));
    }
    if let Some(v) = n.get("after") {
        st.after = hooks::hook_spec(s, v, &child(path, "after"));
    }
    if let Some(v) = n.get("budget") {
        st.budget = state_budget(s, v, &child(path, "budget"));
    }
    if let Some(v) = n.get("model") {
        st.model = s.model_id(v, &child(path, "model"));
    }
    if let Some(v) = n.get("on_error") {
        st.on_error = s.nonempty(v, &child(path, "on_error"));
    }
    if let Some(v) = n.get("tools") {
        st.tools = entries::state_tools(s, v, &child(path, "tools"));
    }
    if let Some(v) = n.get("skills") {
        st.skills = entries::state_skills(s, v, &child(path, "skills"));
    }
    if let Some(v) = n.get("mounts") {
        st.mounts = entries::state_mounts(s, v, &child(path, "mounts"));
    }
    if let Some(v) = n.get("requires") {
        st.requires = variable_list(s, v, &child(path, "requires"));
    }
    if let Some(v) = n.get("locks") {
        st.locks = variable_list(s, v, &child(path, "locks"));
    }
    if let Some(v) = n.get("metadata") {
        st.metadata = s.metadata(v, &child(path, "metadata"));
    }
    if let Some(v) = n.get("transitions") {
        st.transitions = transitions(s, v, &child(path, "transitions"));
    }
    s.strict(n, path, keys::STATE);
    (s.issues.len() == before).then_some(st)
}

fn state_type(s: &mut Shape, v: &Node, path: &str) -> Option<StateType> {
    match v.as_str() {
        Some("agent") => Some(StateType::Agent),
        Some("human") => Some(StateType::Human),
        _ => {
            let shown = js_string(v);
            let hint = match v.as_str() {
                Some("wait") => {
                    " The 'wait' kind was removed: the state that needs the answer calls \
                     archmax_wait({ reason }) and a delivery resumes it."
                }
                Some("workflow") => {
                    " The 'workflow' kind was removed: an agent state allows \
                     'archmax_workflow_<slug>' and calls it."
                }
                Some("trigger") => {
                    " The 'trigger' kind was removed: declare 'triggers' on the state the \
                     trigger state routed to."
                }
                _ => "",
            };
            let base = format!("unknown state type '{shown}' (expected 'agent' or 'human')");
            let message = if hint.is_empty() {
                base
            } else {
                format!("{base}.{hint}")
            };
            s.hard(path, v.pos, message);
            None
        }
    }
}

fn state_budget(s: &mut Shape, n: &Node, path: &str) -> Option<StateBudget> {
    s.object(n, path)?;
    let mut b = StateBudget {
        max_turns: None,
        timeout_ms: None,
        max_parks: None,
    };
    if let Some(v) = n.get("maxTurns") {
        b.max_turns = s.budget_int(v, &child(path, "maxTurns"));
    }
    if let Some(v) = n.get("timeoutMs") {
        b.timeout_ms = s.budget_int(v, &child(path, "timeoutMs"));
    }
    if let Some(v) = n.get("maxParks") {
        b.max_parks = s.budget_int(v, &child(path, "maxParks"));
    }
    s.strict(n, path, keys::STATE_BUDGET);
    Some(b)
}

/// `requires` / `locks`: a list of run-variable names.
pub(crate) fn variable_list(s: &mut Shape, n: &Node, path: &str) -> Option<Vec<String>> {
    let Some(items) = n.as_seq() else {
        s.hard(path, n.pos, "must be a list of run-variable names");
        return None;
    };
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        let p = index(path, i);
        match item.as_str() {
            Some(name) if is_variable_name(name) => out.push(name.to_string()),
            Some(name) => s.soft(&p, item.pos, bad_variable_name(name)),
            None => s.hard(
                &p,
                item.pos,
                format!("'{}' is not a valid run-variable name", js_string(item)),
            ),
        }
    }
    (out.len() == items.len()).then_some(out)
}

fn transitions(s: &mut Shape, n: &Node, path: &str) -> Option<Vec<Transition>> {
    let items = s.array(n, path)?;
    let mut out = Vec::with_capacity(items.len());
    for (i, item) in items.iter().enumerate() {
        if let Some(t) = transition(s, item, &index(path, i)) {
            out.push(t);
        }
    }
    (out.len() == items.len()).then_some(out)
}

/// The message for a description that is present but not a string.
pub(crate) const DESCRIPTION_NOT_STRING: &str = "must be a string: it is what the agent routes on. \
     Say when to take the edge (e.g. 'Refunds over $50'), not where it goes; or omit it to route \
     on the target's instructions.";

fn transition(s: &mut Shape, n: &Node, path: &str) -> Option<Transition> {
    s.object(n, path)?;
    let before = s.issues.len();
    let mut to = None;
    match n.get("to") {
        Some(v) => to = s.nonempty(v, &child(path, "to")),
        None => s.hard(&child(path, "to"), n.pos, "must be a non-empty string"),
    }
    let mut description = None;
    if let Some(v) = n.get("description") {
        match &v.value {
            Value::Str(d) => description = Some(d.clone()),
            // An explicit null reads as "undescribed", like an absent key.
            Value::Null => {}
            _ => s.hard(&child(path, "description"), v.pos, DESCRIPTION_NOT_STRING),
        }
    }
    let mut kind = None;
    if let Some(v) = n.get("type") {
        kind = match v.as_str() {
            Some("approve") => Some(TransitionType::Approve),
            Some("reject") => Some(TransitionType::Reject),
            Some("refine") => Some(TransitionType::Refine),
            Some("none") => Some(TransitionType::None),
            _ => {
                s.hard(
                    &child(path, "type"),
                    v.pos,
                    format!(
                        "unknown type '{}' (expected approve|reject|refine|none)",
                        js_string(v)
                    ),
                );
                None
            }
        };
    }
    s.strict(n, path, keys::TRANSITION);
    if s.issues.len() != before {
        return None;
    }
    Some(Transition {
        to: to?,
        description,
        kind,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn state_type_messages_name_the_value_and_the_replacement() {
        let mut s = super::Shape::default();
        let n = crate::yaml::parse("type: wait")
            .ok()
            .flatten()
            .expect("doc");
        let v = n.get("type").expect("type");
        assert_eq!(super::state_type(&mut s, v, "states.a.type"), None);
        assert!(
            s.issues[0]
                .message
                .starts_with("unknown state type 'wait' (expected 'agent' or 'human')."),
            "{}",
            s.issues[0].message
        );
        assert!(s.issues[0].message.contains("archmax_wait"));
        let mut s = super::Shape::default();
        let n = crate::yaml::parse("type: robot")
            .ok()
            .flatten()
            .expect("doc");
        super::state_type(&mut s, n.get("type").expect("type"), "states.a.type");
        assert_eq!(
            s.issues[0].message,
            "unknown state type 'robot' (expected 'agent' or 'human')"
        );
    }
}

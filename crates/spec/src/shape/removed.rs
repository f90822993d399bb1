//! Keys that older workflows carried and 0.9.0 rejects, with what replaced each.
//!
//! The message keeps the original's `Unrecognized key: "<k>"` prefix (hosts match
//! on it) and adds the migration the schema reference promises.

/// Where in the document an object sits, reduced to the shape that matters here.
fn position(path: &str) -> &'static str {
    let segs: Vec<&str> = path.split('.').collect();
    match segs.as_slice() {
        [""] => "root",
        ["settings"] => "settings",
        ["skills"] => "root-skills",
        ["mounts"] => "root-mounts",
        ["tools"] => "root-tools",
        ["extensions"] => "extensions",
        ["states", _] => "state",
        ["states", _, "tools"] => "state-tools",
        ["states", _, "skills"] => "state-skills",
        ["states", _, "mounts"] => "state-mounts",
        ["states", _, "transitions", _] => "transition",
        _ => "",
    }
}

/// The guidance for a removed key at `path`, or `None` for a plain unknown key.
pub(crate) fn guidance(path: &str, key: &str) -> Option<&'static str> {
    Some(match (position(path), key) {
        ("root", "name") => "a top-level 'name' was removed; rename it to 'title'.",
        ("root", "description") => {
            "a top-level 'description' was removed; write the standing direction as \
             'instructions' instead."
        }
        ("root", "policy") => {
            "the 'policy' block was removed; deny tools with 'tools.forbid_always' and skills \
             with 'skills.forbid_always'."
        }
        ("root", "rubrics") => {
            "named rubrics were removed; declare the grader inline on the hook that applies it \
             ('after: { rubric: { instructions: ... } }')."
        }
        ("root", "editor") => {
            "'editor' was removed; keep host data under the root 'metadata' key, which the \
             runtime never reads."
        }
        ("root", "entry") => {
            "a root 'entry' was removed; mark the start state by declaring a trigger on it \
             ('triggers: { manual: }')."
        }
        ("root", "triggers") => {
            "there is no root 'triggers' block; declare each trigger under the 'triggers' of \
             the state it enters."
        }
        ("settings", "sub_workflows") => {
            "'settings.sub_workflows' was removed; a state calls another workflow by allowing \
             the tool 'archmax_workflow_<slug>' in its 'tools.allow'."
        }
        ("settings", "prompt") => {
            "'settings.prompt' was removed; the prompt is rendered from 'title', \
             'instructions' and WORKFLOW.md."
        }
        ("root-skills", "allow") => {
            "the root 'skills.allow' ceiling was removed; grant skills with \
             'skills.allow_always' (write [] when every capability is state-specific) plus the \
             states' 'skills.allow'."
        }
        ("root-skills", "forbid") => "at the root, skills are denied with 'skills.forbid_always'.",
        ("root-mounts", "allow") => {
            "the root 'mounts.allow' was removed; grant mounts with 'mounts.allow_always' plus \
             the states' 'mounts.allow'."
        }
        ("root-mounts", "forbid") => "at the root, mounts are denied with 'mounts.forbid_always'.",
        ("root-tools", "allow") => "at the root, tools are granted with 'tools.allow_always'.",
        ("root-tools", "forbid") => "at the root, tools are denied with 'tools.forbid_always'.",
        ("extensions", "metadata") => {
            "'extensions.metadata' was removed; keep host data under the root 'metadata' key."
        }
        ("state", "workflow") => {
            "a state's 'workflow' was removed; allow 'archmax_workflow_<slug>' in the state's \
             'tools.allow' and let the agent call it: the allow entry is the declaration."
        }
        ("state", "params") => {
            "'params' was removed; the sub-workflow call's arguments carry its inputs."
        }
        ("state", "for_each") => {
            "'for_each' was removed; make one sub-workflow call per entry (parallel tool calls, \
             or Promise.all in a script)."
        }
        ("state", "result") => {
            "'result' was removed; the tool result carries the answer; add 'requires: [<name>]' \
             so the state must record what it needs."
        }
        ("state", "parallel" | "join") => {
            "'parallel'/'join' were removed: a run is in one state at a time; sequence the \
             branches with ordinary 'transitions'."
        }
        ("state", "final") => "'final' was removed; a state with no 'transitions' is terminal.",
        ("state", "on") => {
            "a state's 'on' was removed; a delivered trigger resumes the state that parked with \
             'archmax_wait', which then picks its own transition."
        }
        ("state", "position") => {
            "'position' was removed; keep editor data under the state's 'metadata'."
        }
        ("state", "trigger") => {
            "a state's 'trigger' was replaced by 'triggers', a mapping of trigger id to its \
             declaration ('triggers: { manual: }')."
        }
        ("state", "skills_allow" | "allow_always" | "forbid_always") => {
            "'allow_always'/'forbid_always' live at the workflow root; a state uses 'allow' and \
             'forbid'."
        }
        ("state-tools" | "state-skills" | "state-mounts", "allow_always" | "forbid_always") => {
            "a state grants with 'allow' and denies with 'forbid'; the '_always' lists belong at \
             the workflow root."
        }
        ("transition", "on") => {
            "a transition's 'on' was removed: a delivered trigger no longer selects an edge; the \
             resumed state picks its own transition."
        }
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use super::guidance;

    #[test]
    fn guidance_depends_on_where_the_key_sits() {
        assert!(guidance("", "policy").is_some_and(|g| g.contains("tools.forbid_always")));
        assert!(guidance("states.a", "policy").is_none());
        assert!(guidance("states.a.transitions.0", "on").is_some());
        assert!(guidance("states.a", "workflow").is_some_and(|g| g.contains("archmax_workflow_")));
        assert!(guidance("settings", "sub_workflows").is_some());
        assert!(guidance("", "bogus").is_none());
    }
}

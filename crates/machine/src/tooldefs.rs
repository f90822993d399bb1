//! The definitions (name, description, JSON Schema) of the runtime's own tools.

use serde_json::{Value, json};

/// A tool as the model is shown it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// The name.
    pub name: String,
    /// What it does, for the model.
    pub description: String,
    /// JSON Schema of its arguments.
    pub parameters: Value,
}

fn spec(name: &str, description: &str, parameters: Value) -> ToolSpec {
    ToolSpec {
        name: name.to_string(),
        description: description.to_string(),
        parameters,
    }
}

fn object(properties: Value, required: &[&str]) -> Value {
    json!({ "type": "object", "properties": properties, "required": required })
}

/// The `read_file` description's line on binary files when the model is shown the images
/// it reads (the `images` option), in place of the text-only line.
const READ_FILE_IMAGES_LINE: &str = "- Text files, and images (PNG, JPEG, GIF, WebP): an image is shown to you right after the tool result. Any other binary file (audio, video, a PDF, an archive, …) is not returned; the result says the file is binary and was not read.";

/// [`built_in`] for an agent whose model is shown the images it reads (`images` on):
/// `read_file` says so, every other tool is unchanged.
pub fn built_in_with_images(name: &str) -> Option<ToolSpec> {
    let mut spec = built_in(name)?;
    if name == "read_file"
        && let Some((head, _)) = spec.description.split_once("\n- Text files only")
    {
        spec.description = format!("{head}\n{READ_FILE_IMAGES_LINE}");
    }
    Some(spec)
}

/// The sentence of `archmax_set_variables`'s description on the run's title, which a
/// sub-workflow's child is not shown: it is not asked for a title.
const TITLE_SENTENCE: &str = " 'title' names the task this run is doing.";

/// [`built_in`] for a sub-workflow's child session: `archmax_set_variables` says nothing of
/// a title, every other tool is unchanged.
pub fn for_child(mut spec: ToolSpec) -> ToolSpec {
    if spec.name == "archmax_set_variables" {
        spec.description = spec.description.replacen(TITLE_SENTENCE, "", 1);
    }
    spec
}

/// The definition of a built-in tool the runtime can execute, or `None`.
pub fn built_in(name: &str) -> Option<ToolSpec> {
    let path = json!({ "type": "string", "description": "Workspace-relative path." });
    Some(match name {
        "archmax_advance" => spec(
            name,
            "Move the run to the next state along one of the current state's transitions, once this state's work is done. One move per message.",
            object(
                json!({ "to": { "type": "string", "description": "The target state's slug, from the listed transitions." }, "reason": { "type": "string", "description": "Why, in one short sentence." }, "evidence": { "type": "array", "items": { "type": "string" }, "description": "Files a person deciding next should see (only when moving into a human decision state)." } }),
                &["to", "reason"],
            ),
        ),
        "archmax_reset" => spec(
            name,
            "Start over at the workflow's entry state when the current state cannot serve the conversation. Messages, files and variables are kept.",
            object(json!({ "reason": { "type": "string" } }), &["reason"]),
        ),
        "archmax_eval" => spec(
            name,
            "Run JavaScript in this turn's sandbox to compute over data. Top-level await works; the last expression is the result; console output is captured. Your tools are on `tools` with camelCased names (read_file -> tools.readFile({ file_path })), each returning a string and governed like your own calls. Globals persist for the rest of this turn. No filesystem, network or process access beyond `tools`.",
            object(
                json!({ "code": { "type": "string", "description": "The JavaScript to run." } }),
                &["code"],
            ),
        ),
        "archmax_run" => spec(
            name,
            "Run a script file from a skill bundle (skills/<skill>/scripts/...) in this turn's sandbox. The script sees `args` (yours, plus `args.variables`: the run's variables) and `tools`; its last expression is the result.",
            object(
                json!({ "file_path": path, "args": { "type": "object", "description": "Arguments for the script." } }),
                &["file_path"],
            ),
        ),
        "archmax_wait" => spec(
            name,
            "Park the run in this state until something arrives from outside (a reply, an event). Say what you wait for; 'until' (a duration like '2h' or an ISO-8601 instant) records when to wake it. The runtime schedules nothing.",
            object(
                json!({ "reason": { "type": "string" }, "until": { "type": "string" } }),
                &["reason"],
            ),
        ),
        "archmax_raise" => spec(
            name,
            "End the session as failed, when the task cannot be completed and recovery has been tried. Never call it to finish work that worked, nor in place of archmax_wait (something has to arrive), archmax_reset (a wrong branch) or a human state (a person has to decide). A failure has to be raised: a reply that only explains the failure reports it as one that succeeded. Put any message for the person in the text of this same assistant message. Call it alone: no other tool call in that message.",
            object(
                json!({ "code": { "type": "string", "description": "A short machine-readable code (at most 64 characters, one line)." }, "reason": { "type": "string" } }),
                &["code", "reason"],
            ),
        ),
        "archmax_get_variables" => spec(
            name,
            "Read the run's variables: all of them, one by name, or a value inside one by a dotted path.",
            object(
                json!({ "name": { "type": "string" }, "path": { "type": "string" } }),
                &[],
            ),
        ),
        "archmax_set_variables" => spec(
            name,
            "Set run variables (all or nothing). 'title' names the task this run is doing. Pass lock: true to freeze the values.",
            object(
                json!({ "variables": { "type": "object", "additionalProperties": true }, "lock": { "type": "boolean" } }),
                &["variables"],
            ),
        ),
        "ls" => spec(
            name,
            "List a directory of the workspace.",
            object(json!({ "path": path }), &[]),
        ),
        "read_file" => spec(
            name,
            "Read a text file, numbered by line. Use offset and limit to page through long files.\n- Text files only: a binary file (an image, audio, video, a PDF, an archive, …) is not returned; the result says the file is binary and was not read.",
            object(
                json!({ "file_path": path, "offset": { "type": "integer", "minimum": 0 }, "limit": { "type": "integer", "minimum": 1 } }),
                &["file_path"],
            ),
        ),
        "write_file" => spec(
            name,
            "Write a text file (creating or replacing it).",
            object(
                json!({ "file_path": path, "content": { "type": "string" } }),
                &["file_path", "content"],
            ),
        ),
        "edit_file" => spec(
            name,
            "Replace exact text in a file.",
            object(
                json!({ "file_path": path, "old_string": { "type": "string" }, "new_string": { "type": "string" }, "replace_all": { "type": "boolean" } }),
                &["file_path", "old_string", "new_string"],
            ),
        ),
        "glob" => spec(
            name,
            "Find files by glob pattern.",
            object(
                json!({ "pattern": { "type": "string" }, "path": path }),
                &["pattern"],
            ),
        ),
        "grep" => spec(
            name,
            "Search file contents for a literal text.",
            object(
                json!({ "pattern": { "type": "string" }, "path": path, "glob": { "type": "string" }, "max_count": { "type": "integer", "minimum": 1 } }),
                &["pattern"],
            ),
        ),
        "copy_file" => spec(
            name,
            "Copy one file.",
            object(
                json!({ "source": path, "destination": path, "overwrite": { "type": "boolean" } }),
                &["source", "destination"],
            ),
        ),
        "move_file" => spec(
            name,
            "Move one file.",
            object(
                json!({ "source": path, "destination": path, "overwrite": { "type": "boolean" } }),
                &["source", "destination"],
            ),
        ),
        "remove_file" => spec(
            name,
            "Remove one file.",
            object(json!({ "file_path": path }), &["file_path"]),
        ),
        "write_todos" => spec(
            name,
            "Keep a short plan for this task as a todo list (replaces the previous list).",
            object(
                json!({ "todos": { "type": "array", "items": { "type": "object", "properties": { "content": { "type": "string" }, "status": { "type": "string", "enum": ["pending", "in_progress", "completed"] } }, "required": ["content", "status"] } } }),
                &["todos"],
            ),
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_childs_set_variables_says_nothing_of_a_title() {
        let top = super::built_in("archmax_set_variables").map(|d| d.description);
        assert_eq!(
            top.as_deref(),
            Some(
                "Set run variables (all or nothing). 'title' names the task this run is doing. Pass lock: true to freeze the values."
            )
        );
        let child = super::built_in("archmax_set_variables")
            .map(super::for_child)
            .map(|d| d.description);
        assert_eq!(
            child.as_deref(),
            Some("Set run variables (all or nothing). Pass lock: true to freeze the values.")
        );
        let advance = super::built_in("archmax_advance");
        assert_eq!(advance.clone().map(super::for_child), advance);
    }

    #[test]
    fn every_runtime_tool_has_a_definition_and_nothing_else_does() {
        for b in &archmax_kernel::tools::BUILTINS {
            let def =
                super::built_in(b.name).unwrap_or_else(|| panic!("{} has no definition", b.name));
            assert_eq!(def.name, b.name);
        }
        for other in [
            "eval",
            "task",
            "archmax_note",
            "archmax_workflow_x",
            "crm_lookup",
        ] {
            assert!(super::built_in(other).is_none(), "{other}");
        }
    }
}

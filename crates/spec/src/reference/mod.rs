//! The language reference and the JSON Schema of `workflow.yaml`, both written
//! from one table ([`KEYS`]) that a test holds equal to the keys the shape
//! checker accepts ([`OBJECTS`]).
//!
//! ```
//! let schema = archmax_spec::reference::json_schema();
//! assert_eq!(schema["$schema"], "https://json-schema.org/draft/2020-12/schema");
//! assert!(archmax_spec::reference::markdown().contains("| `maxModelCalls` |"));
//! ```

mod case_schema;
mod schema;
mod table;

pub use crate::shape::keys::OBJECTS;
pub use case_schema::{CASE_KEYS, STEP_KEYS, case_json_schema};
pub use schema::json_schema;
pub use table::{KEYS, KeyDoc};

/// Where each object sits and what it is for, in reference order.
pub const OBJECT_DOCS: &[(&str, &str, &str)] = &[
    (
        "workflow",
        "the document root",
        "One workflow: its standing instructions, governance and states.",
    ),
    (
        "runtime",
        "`runtime`",
        "The runtime contract the workflow targets.",
    ),
    (
        "budget",
        "`budget`",
        "Bounds on one whole turn, across every state, and the spending caps of a turn and of a session.",
    ),
    (
        "settings",
        "`settings`",
        "The model id and the sandbox bounds hook scripts run under.",
    ),
    (
        "settings.prompt_cache",
        "`settings.prompt_cache`",
        "Provider prompt caching.",
    ),
    (
        "tests",
        "`tests`",
        "How `archmax test` runs the workflow's cases.",
    ),
    (
        "tests.judge",
        "`tests.judge`",
        "The grader of `grade:` assertions.",
    ),
    (
        "tests.judge.modelOptions",
        "`tests.judge.modelOptions`",
        "Sampling options for the grader.",
    ),
    (
        "extensions",
        "`extensions`",
        "What the host registers beyond the language.",
    ),
    ("tools", "`tools`", "Workflow-wide tool governance."),
    ("skills", "`skills`", "Workflow-wide skill governance."),
    ("mounts", "`mounts`", "Workflow-wide mount governance."),
    (
        "tool_entry",
        "an item of a tool list",
        "A tool name, or a guarded entry `{ tool, … }` that narrows the calls it allows. An MCP \
         server's tool is `mcp__<server>__<tool>`; `mcp__<server>` stands for every tool of the \
         server (a grant names no `*`; a forbid list may: `*`, `mcp__<server>__<prefix>*`).",
    ),
    (
        "mount_grant",
        "an item of a mount allow list",
        "A mount name, or `{ mount, access }` naming the access this level gives.",
    ),
    (
        "state",
        "`states.<slug>`",
        "One state: who works it, what it may use, where it goes next.",
    ),
    (
        "state.budget",
        "`states.<slug>.budget`",
        "Bounds on one state.",
    ),
    (
        "state.tools",
        "`states.<slug>.tools`",
        "Tool grants and denials while the state is active.",
    ),
    (
        "state.skills",
        "`states.<slug>.skills`",
        "Skills the state adds and removes.",
    ),
    (
        "state.mounts",
        "`states.<slug>.mounts`",
        "Mounts the state adds and removes.",
    ),
    (
        "transition",
        "an item of `states.<slug>.transitions`",
        "One edge out of the state.",
    ),
    (
        "script_hook",
        "a hook (`before`, `after`)",
        "A script under the workflow's `hooks/`. A hook is one of these, a rubric, or a single key naming a kind the host declares under `extensions.hooks`.",
    ),
    (
        "rubric_hook",
        "a hook (`before`, `after`)",
        "An inline grader.",
    ),
    (
        "rubric",
        "`rubric` of a rubric hook",
        "What the grader is told.",
    ),
    (
        "trigger",
        "`states.<slug>.triggers.<id>`",
        "How a firing enters this state. Other keys are kept for the host and draw a lint warning; `entry` and `name` are rejected (the state is the entry, the key is the id).",
    ),
    (
        "signature_entry",
        "an item of `requires` / `returns`",
        "A variable name, or `{ name, type?, description? }`.",
    ),
];

/// Corpus documents (`tests/corpus/`) the shape or document rules reject but the
/// JSON Schema accepts, with the rule a schema cannot express. The schema test
/// holds this list exact.
pub const SCHEMA_CANNOT_EXPRESS: &[(&str, &str)] = &[
    (
        "forbid-always-advance.yaml",
        "denying `archmax_advance` while states declare transitions",
    ),
    (
        "hook-before-iterations.yaml",
        "`max_iterations` on a `before` hook (allowed on `after` only)",
    ),
    ("human-hook.yaml", "a hook on a human state"),
    ("human-locks.yaml", "`locks` on a human state"),
    (
        "human-no-instructions.yaml",
        "a human state without `instructions`",
    ),
    (
        "human-no-transitions.yaml",
        "a human state without transitions",
    ),
    (
        "human-self-edge.yaml",
        "a human state's transition to itself",
    ),
    (
        "human-two-approves.yaml",
        "two transitions of one decision type on a human state",
    ),
    (
        "human-undescribed-edge.yaml",
        "an undescribed transition on a human state",
    ),
    ("locks-builtin.yaml", "locking a built-in variable"),
    ("locks-two-owners.yaml", "a variable locked by two states"),
    (
        "mcp-wildcard-allow.yaml",
        "`*` in an MCP tool name a grant lists (`mcp__payments__*`; grant `mcp__payments`)",
    ),
    ("no-start-state.yaml", "no state declares `triggers`"),
    (
        "on-error-undefined.yaml",
        "`on_error` naming a state that does not exist",
    ),
    (
        "signature-duplicate.yaml",
        "a name listed twice in a signature",
    ),
    (
        "signature-returns-note.yaml",
        "`note` in `returns` (reserved)",
    ),
    (
        "signature-returns-title.yaml",
        "`title` in `returns` (reserved)",
    ),
    (
        "signature-returns-trigger.yaml",
        "`trigger` in `returns` (reserved)",
    ),
    (
        "tool-guard-bad-name.yaml",
        "a `${{…}}` reference in a guard glob that is not a variable",
    ),
    (
        "tool-guard-malformed.yaml",
        "a malformed `${{…}}` reference in a guard glob",
    ),
    (
        "tool-wildcard-allow-always.yaml",
        "`*` in a grant list (`allow_always`)",
    ),
    ("tool-wildcard-allow.yaml", "`*` in a grant list (`allow`)"),
    (
        "transition-to-constructor.yaml",
        "a transition to a state that does not exist",
    ),
    (
        "transition-to-undefined.yaml",
        "a transition to a state that does not exist",
    ),
    (
        "transition-undescribed-blank-instructions.yaml",
        "an undescribed transition to a state with blank instructions",
    ),
    (
        "transition-undescribed-no-instructions.yaml",
        "an undescribed transition to a state without instructions",
    ),
    (
        "trigger-tool-two-states.yaml",
        "one trigger id declared on two states",
    ),
    (
        "trigger-two-states.yaml",
        "one trigger id declared on two states",
    ),
];

/// The reference as Markdown (`docs/workflow-reference.md`).
pub fn markdown() -> String {
    let mut out = String::from(
        "<!-- Generated from crates/spec/src/reference (the table the shape checker is tested \
         against). Do not edit: run `BLESS=1 cargo test -p archmax-tests reference`. -->\n\n\
         # `workflow.yaml` reference\n\n\
         Every key the parser accepts, object by object. A key not listed here is rejected \
         (`Unrecognized key: …`, with the nearest known key when one is close), except in a \
         trigger declaration. Editors can check the same shape with \
         [`workflow.schema.json`](../workflow.schema.json).\n",
    );
    for (name, place, intro) in OBJECT_DOCS {
        out.push_str(&format!("\n## `{name}`\n\nAt {place}. {intro}\n\n"));
        out.push_str("| key | type | default | rules and diagnostics |\n|---|---|---|---|\n");
        for d in KEYS.iter().filter(|d| d.object == *name) {
            out.push_str(&format!(
                "| `{}` | {} | {} | {} |\n",
                d.key,
                d.ty,
                d.default,
                d.rules.replace('|', "\\|")
            ));
        }
    }
    out.push_str(
        "\n## What the JSON Schema cannot check\n\n\
         These documents of the invalid corpus (`tests/corpus/`) pass the schema; `archmax \
         validate` rejects them for a rule that needs more than one value's shape.\n\n",
    );
    for (file, why) in SCHEMA_CANNOT_EXPRESS {
        out.push_str(&format!("- `{file}`: {why}\n"));
    }
    out
}

//! The digest's §9 worked examples, the 0.9.0 D-tests, exact refusal texts for
//! every rule id of §3, disclosure and listing redaction.

use std::sync::OnceLock;

use archmax_kernel::{
    CallContext, CustomRule, Decision, Mounts, Origin, Policy, PolicyOptions, ToolCall, ToolPaths,
    Variables,
};
use serde_json::{Value, json};

use crate::{fixture_mounts, fixture_skills, spec, strs};

// ---------------------------------------------------------------------------
// Table machinery
// ---------------------------------------------------------------------------

/// One call and what the digest says the kernel answers.
struct Row {
    n: String,
    state: &'static str,
    origin: Origin,
    reply_only: bool,
    tool: &'static str,
    args: Value,
    vars: Option<Value>,
    allowed: bool,
    rule: &'static str,
    has: Vec<&'static str>,
    lacks: Vec<&'static str>,
    ends: Option<&'static str>,
    exact: Option<String>,
    terminal: Option<bool>,
    warn: Option<bool>,
}

fn call(n: &str, state: &'static str, tool: &'static str, args: Value) -> Row {
    Row {
        n: n.to_string(),
        state,
        origin: Origin::Agent,
        reply_only: false,
        tool,
        args,
        vars: None,
        allowed: false,
        rule: "",
        has: Vec::new(),
        lacks: Vec::new(),
        ends: None,
        exact: None,
        terminal: None,
        warn: None,
    }
}

impl Row {
    fn script(mut self) -> Self {
        self.origin = Origin::Script;
        self
    }
    fn lifecycle(mut self) -> Self {
        self.origin = Origin::Lifecycle;
        self
    }
    fn reply_only(mut self) -> Self {
        self.reply_only = true;
        self
    }
    fn vars(mut self, v: Value) -> Self {
        self.vars = Some(v);
        self
    }
    fn allow(mut self, rule: &'static str) -> Self {
        self.allowed = true;
        self.rule = rule;
        self
    }
    fn block(mut self, rule: &'static str) -> Self {
        self.allowed = false;
        self.rule = rule;
        self
    }
    fn has(mut self, frag: &'static str) -> Self {
        self.has.push(frag);
        self
    }
    fn lacks(mut self, frag: &'static str) -> Self {
        self.lacks.push(frag);
        self
    }
    fn ends(mut self, suffix: &'static str) -> Self {
        self.ends = Some(suffix);
        self
    }
    fn exact(mut self, text: impl Into<String>) -> Self {
        self.exact = Some(text.into());
        self
    }
    fn terminal(mut self, t: bool) -> Self {
        self.terminal = Some(t);
        self
    }
    fn warn(mut self, w: bool) -> Self {
        self.warn = Some(w);
        self
    }
}

fn decide_row(policy: &Policy, r: &Row) -> Decision {
    let vars: Option<Variables> = r.vars.as_ref().map(|v| match v {
        Value::Object(m) => m.clone(),
        other => panic!("row {}: variables must be an object, got {other}", r.n),
    });
    let ctx = CallContext {
        state: r.state,
        origin: r.origin,
        reply_only: r.reply_only,
        variables: vars.as_ref(),
        inherited: &[],
    };
    policy.decide(&ToolCall::new(r.tool, &r.args), &ctx)
}

/// Decides every row and fails once, listing every row that disagrees.
fn check(policy: &Policy, rows: &[Row]) {
    let mut failures = Vec::new();
    for r in rows {
        let d = decide_row(policy, r);
        let mut why = Vec::new();
        if d.allowed != r.allowed {
            why.push(format!("allowed {} (want {})", d.allowed, r.allowed));
        }
        if d.rule.as_str() != r.rule {
            why.push(format!("rule '{}' (want '{}')", d.rule.as_str(), r.rule));
        }
        let msg = d.message.clone().unwrap_or_default();
        if !d.allowed && d.message.is_none() {
            why.push("a block without a message".to_string());
        }
        for f in &r.has {
            if !msg.contains(f) {
                why.push(format!("message lacks {f:?}"));
            }
        }
        for f in &r.lacks {
            if msg.contains(f) {
                why.push(format!("message contains {f:?}"));
            }
        }
        if let Some(s) = r.ends
            && !msg.ends_with(s)
        {
            why.push(format!("message does not end with {s:?}"));
        }
        if let Some(e) = &r.exact
            && &msg != e
        {
            why.push(format!(
                "message differs:\n      got:  {msg:?}\n      want: {e:?}"
            ));
        }
        if let Some(t) = r.terminal
            && d.terminal != t
        {
            why.push(format!("terminal {} (want {t})", d.terminal));
        }
        if let Some(w) = r.warn
            && d.warn != w
        {
            why.push(format!("warn {} (want {w})", d.warn));
        }
        if !why.is_empty() {
            failures.push(format!(
                "#{} {} {:?} {} {} reply_only={}: {}\n    message: {msg:?}",
                r.n,
                r.state,
                r.origin,
                r.tool,
                r.args,
                r.reply_only,
                why.join("; ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} rows disagree with the digest:\n{}",
        failures.len(),
        rows.len(),
        failures.join("\n")
    );
}

fn compile(yaml: &str, opts: PolicyOptions) -> Policy {
    Policy::compile(&spec(yaml), opts).expect("policy compiles")
}

fn opts_with_fixture_mounts() -> PolicyOptions {
    PolicyOptions {
        mounts: fixture_mounts(),
        skills: fixture_skills(),
        ..PolicyOptions::default()
    }
}

fn declare(paths: &mut ToolPaths, tool: &str, args: &[(&str, &str)]) {
    let owned: Vec<(String, String)> = args
        .iter()
        .map(|(a, b)| ((*a).to_string(), (*b).to_string()))
        .collect();
    paths.declare(tool, &owned).expect("declaration accepted");
}

fn vars(v: Value) -> Variables {
    match v {
        Value::Object(m) => m,
        _ => panic!("variables must be an object"),
    }
}

// ---------------------------------------------------------------------------
// The §9 fixture
// ---------------------------------------------------------------------------

/// §9: `collect` allows `read_file data/*.json` and `write_file output/answer.json`
/// and moves to `review`; `review` has no tools block (terminal). Two extra states
/// for the examples that need them: `lookup` enables `order-data` (20, 21);
/// `route` forbids the ungoverned `skills` mount (46).
const FIXTURE: &str = r#"
states:
  collect:
    triggers: { manual: }
    instructions: Collect the facts.
    tools:
      allow:
        - { tool: read_file, args: { file_path: ["data/*.json"] } }
        - { tool: write_file, args: { file_path: ["output/answer.json"] } }
    transitions:
      - to: review
      - to: lookup
      - to: route
  review:
    instructions: Review the answer.
  lookup:
    instructions: Look the order up.
    skills:
      allow: [order-data]
    transitions:
      - to: review
  route:
    instructions: Route.
    mounts:
      forbid: [skills]
    transitions:
      - to: review
"#;

fn fixture() -> &'static Policy {
    static P: OnceLock<Policy> = OnceLock::new();
    P.get_or_init(|| compile(FIXTURE, opts_with_fixture_mounts()))
}

const COLLECT_ALLOWED: &str = "read_file(file_path=data/*.json), write_file(file_path=output/answer.json), ls, edit_file, copy_file, move_file, remove_file, glob, grep, write_todos, archmax_eval, archmax_run, archmax_advance, archmax_reset, archmax_wait, archmax_raise, archmax_get_variables, archmax_set_variables";
const REVIEW_ALLOWED: &str = "ls, read_file, write_file, edit_file, copy_file, move_file, remove_file, glob, grep, write_todos, archmax_eval, archmax_run, archmax_reset, archmax_wait, archmax_raise, archmax_get_variables, archmax_set_variables";
const GO_ON: &str =
    "Complete the current state's work and call archmax_advance when ready to move on.";
const ENDS: &str = "This state ends automatically once you finish — do not call archmax_advance.";

fn not_allowed(tool_part: &str, state: &str, allowed: &str, tail: &str) -> String {
    format!(
        "[workflow] BLOCKED: {tool_part} is not allowed in state '{state}'.\nAllowed in '{state}': {allowed}.\n{tail}"
    )
}
fn read_only_zone(subject: &str, mount: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} targets a read-only mount ('{mount}'). Authored content is mounted read-only — write your files under 'scratchpad/…' (persisted per-session in the session store)."
    )
}
fn runtime_internal(subject: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} targets a harness-internal run area ('checkpoints/', 'artifacts/', '_specs/'). These hold the runtime's own bookkeeping and are not part of your workspace — use 'scratchpad/…' for your own files."
    )
}
fn runtime_managed(subject: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} targets a runtime-owned area ('large_tool_results/', 'conversation_history/'), where the runtime offloads oversized context. You may read those files; write your own under 'scratchpad/…'."
    )
}
fn governance_plane(tool: &str, target: &str) -> String {
    format!(
        "[workflow] BLOCKED: '{tool}' on '{target}' addresses the authoring plane ('workflows/'), which holds machine specs, grading rubrics, hook scripts, and test cases. The harness reads it through the authoring backend; nothing running inside a run can."
    )
}
fn skill_only(tool: &str, path: &str) -> String {
    format!(
        "[workflow] BLOCKED: '{tool}' may only execute scripts that live in a skill bundle, and '{path}' is not in one. Scripts the agent runs belong in 'skills/<capability>/scripts/'; lifecycle hook scripts live on the authoring plane and are run by the harness, never by the agent."
    )
}
fn reply_only(tool: &str) -> String {
    format!(
        "[workflow] BLOCKED: '{tool}' cannot run — this run is parked and a person is deciding what happens next. Reply to them in text; you cannot act until the run resumes."
    )
}
const EVAL_TEXT: &str = "[workflow] BLOCKED: an unnamespaced `eval` tool is never governed — use `archmax_eval`, the runtime's own code interpreter.";
fn skill_not_allowed(subject: &str, slug: &str, state: &str, here: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} belongs to the skill '{slug}', which is not enabled in state '{state}'. {here}"
    )
}
fn skill_forbidden(subject: &str, slug: &str, by: &str, here: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} belongs to the skill '{slug}', which {by}. A denial beats every grant. {here}"
    )
}
fn mount_forbidden(subject: &str, name: &str, by: &str, here: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} is under the mount '{name}', which {by}. A denial beats every grant. {here}"
    )
}
fn mount_not_allowed(subject: &str, name: &str, state: &str, here: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} is under the mount '{name}', which state '{state}' does not have. The path exists; this state was not given it. {here}"
    )
}
fn mount_read_only(subject: &str, name: &str, state: &str) -> String {
    format!(
        "[workflow] BLOCKED: {subject} targets the mount '{name}', which state '{state}' may read but not write ('access: read'). Write your files under 'scratchpad/…' instead."
    )
}
fn forbidden(tool_part: &str, by: &str, key_guard: &str) -> String {
    format!(
        "[workflow] BLOCKED: {tool_part} is forbidden by {by} ({key_guard}). A denial beats every grant, so no allow entry here permits it."
    )
}
fn unresolved(tool: &str, state: &str, reference: &str, detail: &str) -> String {
    format!(
        "[workflow] FAILED: '{tool}' in state '{state}' is guarded by '{reference}', which could not be resolved — {detail}. The run cannot continue against a guard the harness cannot evaluate."
    )
}
fn path_argument(tool: &str, arg: &str) -> String {
    format!(
        "[workflow] BLOCKED: '{tool}' argument '{arg}' must be a path or a list of paths (strings); it holds something else, so the path rules cannot read it."
    )
}

// ---------------------------------------------------------------------------
// §9 examples on the shared fixture
// ---------------------------------------------------------------------------

#[test]
fn section9_examples_on_the_fixture() {
    let rows = vec![
        // 1
        call("1", "collect", "eval", json!({}))
            .block("tool.eval")
            .warn(false)
            .exact(EVAL_TEXT),
        // 2
        call("2", "collect", "archmax_eval", json!({"code": "1 + 1"})).allow("tool.allowed"),
        // 3
        call(
            "3",
            "collect",
            "write_file",
            json!({"file_path": "output/x.json", "content": "{}"}),
        )
        .block("tool.not-allowed")
        .has("on 'output/x.json'")
        .warn(true)
        .terminal(false)
        .exact(not_allowed(
            "'write_file' on 'output/x.json'",
            "collect",
            COLLECT_ALLOWED,
            GO_ON,
        )),
        // 4
        call(
            "4",
            "review",
            "write_file",
            json!({"file_path": "output/x.json"}),
        )
        .allow("tool.allowed"),
        // 5
        call(
            "5",
            "review",
            "web_fetch",
            json!({"url": "https://example.com"}),
        )
        .block("tool.not-allowed"),
        // 6 (narrowing ignored in the open area)
        call(
            "6a",
            "collect",
            "write_file",
            json!({"file_path": "scratchpad/staged.csv"}),
        )
        .allow("tool.scratchpad"),
        call(
            "6b",
            "collect",
            "read_file",
            json!({"file_path": "/scratchpad/x"}),
        )
        .allow("tool.scratchpad"),
        call("6c", "collect", "ls", json!({"path": "scratchpad/"})).allow("tool.scratchpad"),
        // 8
        call(
            "8",
            "collect",
            "write_file",
            json!({"file_path": "scratchpad/../checkpoints/cp-1.json"}),
        )
        .block("zone.runtime-internal")
        .exact(runtime_internal(
            "'write_file' on 'scratchpad/../checkpoints/cp-1.json'",
        )),
        // 9
        call(
            "9",
            "collect",
            "write_file",
            json!({"file_path": "scratchpad/../output/other.json"}),
        )
        .block("tool.not-allowed"),
        // 10
        call(
            "10a",
            "review",
            "read_file",
            json!({"file_path": "checkpoints/cp-1.json"}),
        )
        .block("zone.runtime-internal")
        .exact(runtime_internal("'read_file' on 'checkpoints/cp-1.json'")),
        call("10b", "review", "ls", json!({"path": "artifacts"})).block("zone.runtime-internal"),
        call(
            "10c",
            "review",
            "read_file",
            json!({"file_path": "_specs/h.json"}),
        )
        .block("zone.runtime-internal"),
        // 11
        call(
            "11a",
            "review",
            "write_file",
            json!({"file_path": "large_tool_results/m.txt"}),
        )
        .block("zone.runtime-managed")
        .exact(runtime_managed(
            "'write_file' on 'large_tool_results/m.txt'",
        )),
        call(
            "11b",
            "review",
            "edit_file",
            json!({"file_path": "conversation_history/a"}),
        )
        .block("zone.runtime-managed"),
        // 12
        call(
            "12a",
            "collect",
            "read_file",
            json!({"file_path": "large_tool_results/c.txt"}),
        )
        .allow("tool.offload-read"),
        call(
            "12b",
            "collect",
            "ls",
            json!({"path": "conversation_history"}),
        )
        .allow("tool.offload-read"),
        // 13
        call(
            "13",
            "review",
            "grep",
            json!({"pattern": "x", "path": "scratchpad"}),
        )
        .allow("tool.allowed"),
        // 14
        call(
            "14a",
            "review",
            "write_file",
            json!({"file_path": ".//data/x"}),
        )
        .block("zone.read-only")
        .exact(read_only_zone("'write_file' on './/data/x'", "data")),
        call(
            "14b",
            "review",
            "write_file",
            json!({"file_path": "././AGENTS.md"}),
        )
        .block("zone.read-only")
        .exact(read_only_zone(
            "'write_file' on '././AGENTS.md'",
            "AGENTS.md",
        )),
        call(
            "14c",
            "review",
            "write_file",
            json!({"file_path": "./skills/../data/x"}),
        )
        .block("zone.read-only")
        .has("('data')"),
        // 15
        call(
            "15a",
            "review",
            "write_file",
            json!({"file_path": "AGENTS.md.bak"}),
        )
        .allow("tool.allowed"),
        call(
            "15b",
            "review",
            "read_file",
            json!({"file_path": "data/orders.json"}),
        )
        .allow("tool.allowed"),
        call(
            "15c",
            "collect",
            "read_file",
            json!({"file_path": "data/orders.json"}),
        )
        .allow("tool.allowed"),
        // 17 (alias)
        call(
            "17",
            "review",
            "read_file",
            json!({"path": "checkpoints/cp-1.json"}),
        )
        .block("zone.runtime-internal"),
        // 18
        call("18a", "collect", "archmax_advance", json!({"to": "review"}))
            .reply_only()
            .block("tool.reply-only")
            .exact(reply_only("archmax_advance")),
        call(
            "18b",
            "review",
            "write_file",
            json!({"file_path": "scratchpad/x"}),
        )
        .reply_only()
        .block("tool.reply-only"),
        call("18c", "collect", "write_todos", json!({"todos": []}))
            .reply_only()
            .block("tool.reply-only")
            .exact(reply_only("write_todos")),
        call(
            "18d",
            "review",
            "read_file",
            json!({"file_path": "data/x.json"}),
        )
        .lifecycle()
        .reply_only()
        .block("tool.reply-only"),
        // 19
        call(
            "19",
            "review",
            "read_file",
            json!({"file_path": "skills/refund-policy/SKILL.md"}),
        )
        .block("skill.not-allowed")
        .ends("No skill is enabled in this state.")
        .exact(skill_not_allowed(
            "'read_file' on 'skills/refund-policy/SKILL.md'",
            "refund-policy",
            "review",
            "No skill is enabled in this state.",
        )),
        // 20
        call(
            "20a",
            "lookup",
            "read_file",
            json!({"file_path": "./skills//refund-policy/SKILL.md"}),
        )
        .block("skill.not-allowed")
        .exact(skill_not_allowed(
            "'read_file' on './skills//refund-policy/SKILL.md'",
            "refund-policy",
            "lookup",
            "Skills enabled here: order-data.",
        )),
        call(
            "20b",
            "lookup",
            "read_file",
            json!({"file_path": "skills/order-data/../refund-policy/SKILL.md"}),
        )
        .block("skill.not-allowed"),
        call(
            "20c",
            "lookup",
            "read_file",
            json!({"file_path": "skills/order-data/SKILL.md"}),
        )
        .allow("tool.allowed"),
        // 21 (zone before skill)
        call(
            "21",
            "lookup",
            "write_file",
            json!({"file_path": "skills/order-data/x"}),
        )
        .block("zone.read-only")
        .has("('skills')"),
        // 22
        call(
            "22a",
            "review",
            "read_file",
            json!({"file_path": "skills/README.md"}),
        )
        .allow("tool.allowed"),
        call(
            "22b",
            "review",
            "write_file",
            json!({"file_path": "skills/README.md"}),
        )
        .block("zone.read-only"),
        // 23
        call(
            "23",
            "review",
            "read_file",
            json!({"file_path": "skills/order-data/x"}),
        )
        .lifecycle()
        .allow("allow"),
        // 24 (base form)
        call(
            "24",
            "review",
            "archmax_run",
            json!({"file_path": "scratchpad/x.js"}),
        )
        .block("script.skill-only")
        .exact(skill_only("archmax_run", "scratchpad/x.js")),
        call(
            "24b",
            "review",
            "archmax_run",
            json!({"file_path": "scratchpad/x.js"}),
        )
        .reply_only()
        .block("script.skill-only"),
        call(
            "24c",
            "lookup",
            "archmax_run",
            json!({"file_path": "skills/order-data/scripts/q.js"}),
        )
        .allow("tool.allowed"),
        // 26
        call(
            "26a",
            "review",
            "read_file",
            json!({"file_path": "workflows/other/workflow.yaml"}),
        )
        .script()
        .block("zone.governance-plane")
        .has("workflows/")
        .has("grading rubrics")
        .exact(governance_plane(
            "read_file",
            "workflows/other/workflow.yaml",
        )),
        call(
            "26b",
            "review",
            "read_file",
            json!({"file_path": "workflows/other/workflow.yaml"}),
        )
        .lifecycle()
        .block("zone.governance-plane"),
        call(
            "26c",
            "review",
            "read_file",
            json!({"file_path": "workflows/other/workflow.yaml"}),
        )
        .allow("tool.allowed"),
        call("26d", "review", "web_fetch", json!({"path": "./workflows"}))
            .script()
            .block("zone.governance-plane"),
        // 46
        call(
            "46",
            "route",
            "read_file",
            json!({"file_path": "skills/README.md"}),
        )
        .block("mount.forbidden")
        .has("state 'route' forbids")
        .exact(mount_forbidden(
            "'read_file' on 'skills/README.md'",
            "skills",
            "state 'route' forbids",
            "This state has no governed mount.",
        )),
        // 47
        call(
            "47a",
            "review",
            "copy_file",
            json!({"source": "skills/d/t.md", "destination": "scratchpad/t.md"}),
        )
        .allow("tool.allowed"),
        call(
            "47b",
            "review",
            "copy_file",
            json!({"source": "scratchpad/t.md", "destination": "skills/d/t.md"}),
        )
        .block("zone.read-only")
        .has("(destination)")
        .exact(read_only_zone(
            "'copy_file' on 'skills/d/t.md' (destination)",
            "skills",
        )),
        call(
            "47c",
            "review",
            "move_file",
            json!({"source": "skills/d/t.md", "destination": "scratchpad/t.md"}),
        )
        .block("zone.read-only")
        .has("(source)")
        .exact(read_only_zone(
            "'move_file' on 'skills/d/t.md' (source)",
            "skills",
        )),
        // 48
        call(
            "48a",
            "review",
            "copy_file",
            json!({"source": "large_tool_results/r", "destination": "scratchpad/r"}),
        )
        .allow("tool.scratchpad"),
        call(
            "48b",
            "review",
            "move_file",
            json!({"source": "large_tool_results/r", "destination": "scratchpad/r"}),
        )
        .block("zone.runtime-managed")
        .exact(runtime_managed(
            "'move_file' on 'large_tool_results/r' (source)",
        )),
        // 50 (review is terminal)
        call(
            "50",
            "review",
            "web_fetch",
            json!({"url": "https://example.com"}),
        )
        .block("tool.not-allowed")
        .has("do not call archmax_advance")
        .lacks("archmax_advance,")
        .exact(not_allowed("'web_fetch'", "review", REVIEW_ALLOWED, ENDS)),
        // 57
        call(
            "57",
            "review",
            "read_file",
            json!({"file_path": "../secret"}),
        )
        .allow("tool.allowed"),
    ];
    check(fixture(), &rows);
}

/// §9 #24: neither a `paths: ["**"]` grant nor an allow-everything host rule lets
/// `archmax_run` execute a script outside every skill bundle.
#[test]
fn ex24_run_outside_a_bundle_beats_grants_and_custom_allows() {
    let p = compile(
        r#"
states:
  s:
    triggers: { manual: }
    instructions: Run.
    tools:
      allow:
        - { tool: archmax_run, paths: ["**"] }
"#,
        PolicyOptions {
            custom_rules: vec![Box::new(AllowAll)],
            ..opts_with_fixture_mounts()
        },
    );
    check(
        &p,
        &[call(
            "24",
            "s",
            "archmax_run",
            json!({"file_path": "scratchpad/x.js"}),
        )
        .block("script.skill-only")],
    );
}

/// §9 #25: an empty skill registry refuses every `archmax_run` of a script.
#[test]
fn ex25_empty_registry_refuses_run() {
    let p = compile(
        FIXTURE,
        PolicyOptions {
            mounts: fixture_mounts(),
            ..PolicyOptions::default()
        },
    );
    check(
        &p,
        &[
            call(
                "25a",
                "review",
                "archmax_run",
                json!({"file_path": "skills/order-data/scripts/q.js"}),
            )
            .block("script.skill-only"),
            call(
                "25b",
                "review",
                "archmax_run",
                json!({"path": "scratchpad/x.js"}),
            )
            .block("script.skill-only"),
        ],
    );
}

#[test]
fn ex27_to_29_forbid_always_with_paths() {
    let p27 = compile(
        r#"
tools:
  forbid_always:
    - { tool: "*", paths: ["scratchpad/**"] }
states:
  s:
    triggers: { manual: }
    instructions: Work.
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p27,
        &[
            call(
                "27",
                "s",
                "write_file",
                json!({"file_path": "scratchpad/.env"}),
            )
            .block("tool.forbidden")
            .exact(forbidden(
                "'write_file' on 'scratchpad/.env'",
                "the workflow",
                "tools.forbid_always: paths=scratchpad/**",
            )),
            call("27b", "s", "ls", json!({"path": "scratchpad"})).block("tool.forbidden"),
        ],
    );
    let p28 = compile(
        r#"
tools:
  forbid_always:
    - { tool: "*", paths: ["secrets/**"] }
states:
  s:
    triggers: { manual: }
    instructions: Work.
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p28,
        &[
            call("28", "s", "ls", json!({"path": "secrets"}))
                .block("tool.forbidden")
                .exact(forbidden(
                    "'ls' on 'secrets'",
                    "the workflow",
                    "tools.forbid_always: paths=secrets/**",
                )),
            call(
                "28b",
                "s",
                "read_file",
                json!({"file_path": "./secrets/../secrets/key"}),
            )
            .block("tool.forbidden"),
            call(
                "28c",
                "s",
                "read_file",
                json!({"file_path": "secretsx/key"}),
            )
            .allow("tool.allowed"),
            call(
                "29a",
                "s",
                "copy_file",
                json!({"source": "secrets/k", "destination": "scratchpad/k"}),
            )
            .block("tool.forbidden")
            .has("paths=secrets/**")
            .exact(forbidden(
                "'copy_file' on 'secrets/k' (source), 'scratchpad/k' (destination)",
                "the workflow",
                "tools.forbid_always: paths=secrets/**",
            )),
            call(
                "29b",
                "s",
                "copy_file",
                json!({"source": "scratchpad/k", "destination": "secrets/k"}),
            )
            .block("tool.forbidden")
            .has("paths=secrets/**"),
        ],
    );
}

#[test]
fn ex30_state_forbid_beats_state_and_workflow_grants() {
    let p = compile(
        r#"
tools:
  allow_always: [write_file]
states:
  route:
    triggers: { manual: }
    instructions: Route.
    tools:
      allow: [write_file]
      forbid: [write_file]
    transitions:
      - to: other
  other:
    instructions: Other.
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call(
                "30a",
                "route",
                "write_file",
                json!({"file_path": "scratchpad/x"}),
            )
            .block("tool.forbidden-here")
            .exact(forbidden(
                "'write_file' on 'scratchpad/x'",
                "state 'route'",
                "states.route.tools.forbid",
            )),
            call(
                "30b",
                "other",
                "write_file",
                json!({"file_path": "scratchpad/x"}),
            )
            .allow("tool.scratchpad"),
            call(
                "30c",
                "other",
                "write_file",
                json!({"file_path": "output/x"}),
            )
            .allow("tool.allowed"),
        ],
    );
    assert!(!p.surface("route").iter().any(|t| t == "write_file"));
    assert!(p.surface("other").iter().any(|t| t == "write_file"));
}

#[test]
fn ex31_32_guarded_and_bare_forbid_always() {
    let p31 = compile(
        r#"
tools:
  allow_always: [write_file]
  forbid_always:
    - { tool: write_file, paths: ["logs/**"] }
states:
  s:
    triggers: { manual: }
    instructions: Work.
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p31,
        &[
            call("31a", "s", "write_file", json!({"file_path": "logs/a.txt"}))
                .block("tool.forbidden")
                .exact(forbidden(
                    "'write_file' on 'logs/a.txt'",
                    "the workflow",
                    "tools.forbid_always: paths=logs/**",
                )),
            call(
                "31b",
                "s",
                "write_file",
                json!({"file_path": "scratchpad/a.txt"}),
            )
            .allow("tool.scratchpad"),
        ],
    );
    assert!(
        p31.surface("s").iter().any(|t| t == "write_file"),
        "a guarded forbid keeps the tool disclosed"
    );

    let p32 = compile(
        r#"
tools:
  forbid_always: [write_todos]
states:
  s:
    triggers: { manual: }
    instructions: Work.
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p32,
        &[call("32", "s", "write_todos", json!({"todos": []}))
            .block("tool.forbidden")
            .exact(forbidden(
                "'write_todos'",
                "the workflow",
                "tools.forbid_always",
            ))],
    );
    assert!(!p32.surface("s").iter().any(|t| t == "write_todos"));
    assert!(!p32.describe_allowed("s").contains("write_todos"));
}

const GUARDS: &str = r#"
states:
  s33:
    triggers: { manual: }
    instructions: Reply.
    tools:
      allow:
        - { tool: send_email, args: { to: ["${{from_email}}"] } }
  s35a:
    instructions: x
    tools:
      allow:
        - { tool: send_email, args: { to: ["${{list.length}}"] } }
  s35b:
    instructions: x
    tools:
      allow:
        - { tool: send_email, args: { to: ["${{o.list.5}}"] } }
  s35c:
    instructions: x
    tools:
      allow:
        - { tool: send_email, args: { to: ["${{sender}}"] } }
  s36:
    instructions: x
    tools:
      allow:
        - { tool: send_email, args: { to: ["${{star}}"] } }
  s37:
    instructions: x
    tools:
      allow:
        - { tool: write_file, paths: ["output/${{case_id}}/**"] }
  s38:
    instructions: x
    tools:
      allow:
        - { tool: send_email, args: { to: ["${{o.to.-1}}"] } }
"#;

#[test]
fn ex33_to_38_variable_guards() {
    let p = compile(GUARDS, opts_with_fixture_mounts());
    let v35 = json!({"list": [1, 2], "o": {"list": [1, 2]}, "sender": {"name": "x"}});
    check(
        &p,
        &[
            call("33a", "s33", "send_email", json!({"to": "a@b.c"}))
                .vars(json!({"from_email": "a@b.c"}))
                .allow("tool.allowed"),
            call("33b", "s33", "send_email", json!({"to": "x@y.z"}))
                .vars(json!({"from_email": "a@b.c"}))
                .block("tool.not-allowed")
                .terminal(false)
                .has(" is not allowed in state 's33'."),
            call("34a", "s33", "send_email", json!({"to": "a@b.c"}))
                .vars(json!({}))
                .block("tool.unresolved-variable")
                .terminal(true)
                .warn(true)
                .has("${{from_email}}")
                .has("not set")
                .exact(unresolved("send_email", "s33", "${{from_email}}", "variable 'from_email' is not set")),
            call("34b", "s33", "send_email", json!({"to": "a@b.c"}))
                .block("tool.unresolved-variable")
                .terminal(true)
                .has("${{from_email}}")
                .has("not set"),
            call("35a", "s35a", "send_email", json!({"to": "2"}))
                .vars(v35.clone())
                .block("tool.unresolved-variable")
                .terminal(true)
                .exact(unresolved(
                    "send_email",
                    "s35a",
                    "${{list.length}}",
                    "'list' at path 'length' does not resolve — the value has no such path",
                )),
            call("35b", "s35b", "send_email", json!({"to": "x"}))
                .vars(v35.clone())
                .block("tool.unresolved-variable")
                .terminal(true)
                .exact(unresolved(
                    "send_email",
                    "s35b",
                    "${{o.list.5}}",
                    "'o' at path 'list.5' does not resolve — the value has no such path",
                )),
            call("35c", "s35c", "send_email", json!({"to": "x"}))
                .vars(v35)
                .block("tool.unresolved-variable")
                .terminal(true)
                .exact(unresolved(
                    "send_email",
                    "s35c",
                    "${{sender}}",
                    "'sender' resolves to a non-scalar value; only strings, numbers and booleans can be substituted into a guard",
                )),
            call("36a", "s36", "send_email", json!({"to": "*"})).vars(json!({"star": "*"})).allow("tool.allowed"),
            call("36b", "s36", "send_email", json!({"to": "anything"}))
                .vars(json!({"star": "*"}))
                .block("tool.not-allowed")
                .terminal(false),
            call("37a", "s37", "write_file", json!({"file_path": "output/K-9/r.md"}))
                .vars(json!({"case_id": "K-9"}))
                .allow("tool.allowed"),
            call("37b", "s37", "write_file", json!({"file_path": "output/K-1/r.md"}))
                .vars(json!({"case_id": "K-9"}))
                .block("tool.not-allowed"),
            call("38a", "s38", "send_email", json!({"to": "last@x"}))
                .vars(json!({"o": {"to": ["first@x", "last@x"]}}))
                .allow("tool.allowed"),
            call("38b", "s38", "send_email", json!({"to": "first@x"}))
                .vars(json!({"o": {"to": ["first@x", "last@x"]}}))
                .block("tool.not-allowed"),
        ],
    );
}

#[test]
fn ex39_unresolvable_forbid_guard_fails_closed() {
    let p = compile(
        r#"
tools:
  forbid_always:
    - { tool: send_email, args: { to: ["${{missing}}"] } }
states:
  s:
    triggers: { manual: }
    instructions: Reply.
    tools:
      allow: [send_email]
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call("39a", "s", "send_email", json!({"to": "a@b.c"}))
                .vars(json!({}))
                .block("tool.forbidden")
                .terminal(false)
                .exact(forbidden(
                    "'send_email'",
                    "the workflow",
                    "tools.forbid_always: to=${{missing}}",
                )),
            call("39b", "s", "send_email", json!({"to": "a@b.c"}))
                .block("tool.forbidden")
                .terminal(false),
        ],
    );
}

#[test]
fn ex40_paths_grant_needs_every_path() {
    let p = compile(
        r#"
states:
  s:
    triggers: { manual: }
    instructions: Copy.
    tools:
      allow:
        - { tool: copy_file, paths: ["skills/**", "reports/**"] }
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call(
                "40a",
                "s",
                "copy_file",
                json!({"source": "skills/d/t", "destination": "reports/t"}),
            )
            .allow("tool.allowed"),
            call(
                "40b",
                "s",
                "copy_file",
                json!({"source": "skills/d/t", "destination": "drafts/t"}),
            )
            .block("tool.not-allowed"),
            call("40c", "s", "copy_file", json!({"source": "skills/d/t"}))
                .block("tool.not-allowed"),
        ],
    );
    assert!(
        p.describe_allowed("s").starts_with(
            "copy_file(source=skills/**|reports/**, destination=skills/**|reports/**)"
        ),
        "{}",
        p.describe_allowed("s")
    );
}

#[test]
fn ex41_42_host_path_arguments() {
    let mut paths = ToolPaths::new();
    declare(&mut paths, "pack_files", &[("files", "read")]);
    declare(&mut paths, "attach", &[("files", "read")]);
    let p = compile(
        r#"
states:
  s:
    triggers: { manual: }
    instructions: Pack.
    tools:
      allow:
        - pack_files
        - { tool: attach, paths: ["attachments/**"] }
"#,
        PolicyOptions {
            tool_paths: paths,
            ..opts_with_fixture_mounts()
        },
    );
    check(
        &p,
        &[
            call("41a", "s", "pack_files", json!({"files": ["a.txt", 3]}))
                .block("tool.path-argument")
                .exact(path_argument("pack_files", "files")),
            call("41b", "s", "pack_files", json!({"files": {"path": "x"}}))
                .block("tool.path-argument"),
            call("41c", "s", "pack_files", json!({"files": 7})).block("tool.path-argument"),
            call("41d", "s", "pack_files", json!({"files": 7}))
                .reply_only()
                .block("tool.path-argument"),
            call("41e", "s", "pack_files", json!({})).allow("tool.allowed"),
            call("41f", "s", "pack_files", json!({"files": null})).allow("tool.allowed"),
            call(
                "41g",
                "s",
                "pack_files",
                json!({"files": ["a.txt", "checkpoints/x"]}),
            )
            .block("zone.runtime-internal"),
            call(
                "42a",
                "s",
                "attach",
                json!({"files": ["attachments/a", "contracts/b"]}),
            )
            .block("tool.not-allowed"),
            call("42b", "s", "attach", json!({"files": []})).block("tool.not-allowed"),
            call(
                "42c",
                "s",
                "attach",
                json!({"files": ["attachments/a", "attachments/b/c"]}),
            )
            .allow("tool.allowed"),
        ],
    );
}

fn governed_mounts() -> Mounts {
    Mounts {
        dirs: strs(&[
            "skills",
            ".platform",
            "data",
            "catalogs/eu",
            "shared",
            "vault",
        ]),
        files: strs(&["AGENTS.md"]),
        writable: strs(&["shared"]),
        governed: strs(&["catalogs/eu", "shared", "vault"]),
        unsearchable: Vec::new(),
    }
}

const MOUNT_SPEC: &str = r#"
states:
  closed:
    triggers: { manual: }
    instructions: Closed.
    transitions:
      - to: open
      - to: reader
  open:
    instructions: Open.
    mounts:
      allow: [catalogs/eu, shared]
  reader:
    instructions: Reader.
    mounts:
      allow:
        - { mount: shared, access: read }
"#;

#[test]
fn ex43_to_45_governed_mounts() {
    let p = compile(
        MOUNT_SPEC,
        PolicyOptions {
            mounts: governed_mounts(),
            skills: fixture_skills(),
            ..PolicyOptions::default()
        },
    );
    check(
        &p,
        &[
            call(
                "43a",
                "closed",
                "read_file",
                json!({"file_path": "catalogs/eu/skus.csv"}),
            )
            .block("mount.not-allowed")
            .has("The path exists")
            .has("This state has no governed mount.")
            .exact(mount_not_allowed(
                "'read_file' on 'catalogs/eu/skus.csv'",
                "catalogs/eu",
                "closed",
                "This state has no governed mount.",
            )),
            call(
                "43b",
                "closed",
                "read_file",
                json!({"file_path": "catalogs/uk/x"}),
            )
            .allow("tool.allowed"),
            call(
                "43c",
                "open",
                "read_file",
                json!({"file_path": "catalogs/eu/skus.csv"}),
            )
            .allow("tool.allowed"),
            call(
                "43d",
                "reader",
                "read_file",
                json!({"file_path": "catalogs/eu/skus.csv"}),
            )
            .block("mount.not-allowed")
            .ends("Mounts available here: shared."),
            call(
                "44a",
                "closed",
                "write_file",
                json!({"file_path": "catalogs/eu/x"}),
            )
            .block("zone.read-only")
            .exact(read_only_zone(
                "'write_file' on 'catalogs/eu/x'",
                "catalogs/eu",
            )),
            call(
                "44b",
                "open",
                "write_file",
                json!({"file_path": "catalogs/eu/x"}),
            )
            .block("zone.read-only")
            .has("('catalogs/eu')"),
            call(
                "45a",
                "reader",
                "read_file",
                json!({"file_path": "shared/n.md"}),
            )
            .allow("tool.allowed"),
            call(
                "45b",
                "reader",
                "write_file",
                json!({"file_path": "shared/n.md"}),
            )
            .block("mount.read-only")
            .exact(mount_read_only(
                "'write_file' on 'shared/n.md'",
                "shared",
                "reader",
            )),
            call(
                "45c",
                "open",
                "write_file",
                json!({"file_path": "shared/n.md"}),
            )
            .allow("tool.allowed"),
            call(
                "45d",
                "closed",
                "write_file",
                json!({"file_path": "shared/n.md"}),
            )
            .block("mount.not-allowed")
            .exact(mount_not_allowed(
                "'write_file' on 'shared/n.md'",
                "shared",
                "closed",
                "This state has no governed mount.",
            )),
        ],
    );
}

#[test]
fn ex49_open_area_does_not_open_host_tools() {
    let mut paths = ToolPaths::new();
    declare(&mut paths, "fetch_attachment", &[("attachment", "read")]);
    let p = compile(
        r#"
states:
  intake:
    triggers: { manual: }
    instructions: Intake.
    tools:
      allow: [fetch_attachment]
    transitions:
      - to: reply
  reply:
    instructions: Reply.
"#,
        PolicyOptions {
            tool_paths: paths,
            ..opts_with_fixture_mounts()
        },
    );
    check(
        &p,
        &[
            call(
                "49a",
                "reply",
                "fetch_attachment",
                json!({"attachment": "scratchpad/x.pdf"}),
            )
            .block("tool.not-allowed"),
            call(
                "49b",
                "intake",
                "fetch_attachment",
                json!({"attachment": "scratchpad/x.pdf"}),
            )
            .allow("tool.allowed"),
        ],
    );
}

#[test]
fn ex51_52_controls_ignore_guards_and_transitions() {
    let p = compile(
        r#"
states:
  s:
    triggers: { manual: }
    instructions: Work.
    requires: [order_id]
    tools:
      allow:
        - { tool: archmax_advance, args: { to: [review] } }
    transitions:
      - to: review
  review:
    instructions: Review.
    transitions:
      - to: done
  two:
    instructions: Two.
    requires: [order_id, total]
    transitions:
      - to: done
  done:
    instructions: Done.
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call("51", "s", "archmax_advance", json!({"to": "done"})).allow("tool.allowed"),
            call("51b", "done", "archmax_advance", json!({"to": "s"})).allow("tool.allowed"),
        ],
    );
    let set = vars(json!({"order_id": "KK-1"}));
    let d = p.transition("s", "done", Some(&set));
    assert!(!d.allowed);
    assert_eq!(d.rule.as_str(), "transition.no-edge");
    assert_eq!(
        d.message.as_deref(),
        Some("cannot advance from 's' to 'done'. Valid target slugs: review.")
    );
    let ok = p.transition("s", "review", Some(&set));
    assert!(ok.allowed, "{ok:?}");
    let d = p.transition("done", "s", Some(&set));
    assert_eq!(d.rule.as_str(), "transition.no-edge");
    assert_eq!(
        d.message.as_deref(),
        Some("cannot advance from 'done' to 's'. No transitions from this state.")
    );
    // 52: the requires gate comes first and names the variable.
    let empty = Variables::new();
    let d = p.transition("s", "review", Some(&empty));
    assert_eq!(d.rule.as_str(), "transition.requires");
    assert_eq!(
        d.message.as_deref(),
        Some(
            "cannot leave 's' yet: 'order_id' is not set. Record it with archmax_set_variables, then advance."
        )
    );
    let d = p.transition("s", "done", None);
    assert_eq!(
        d.rule.as_str(),
        "transition.requires",
        "requires precedes the edge check"
    );
    let d = p.transition("two", "done", Some(&empty));
    assert_eq!(
        d.message.as_deref(),
        Some(
            "cannot leave 'two' yet: 'order_id', 'total' are not set. Record them with archmax_set_variables, then advance."
        )
    );
}

struct AllowAll;
impl CustomRule for AllowAll {
    fn check(&self, _call: &ToolCall<'_>, _ctx: &CallContext<'_>) -> Option<Decision> {
        Some(Decision::custom_allow("host.allow-all"))
    }
}

struct NoFetch;
impl CustomRule for NoFetch {
    fn check(&self, call: &ToolCall<'_>, _ctx: &CallContext<'_>) -> Option<Decision> {
        (call.tool == "web_fetch")
            .then(|| Decision::custom_block("host.no-fetch", "no fetching today"))
    }
}

#[test]
fn ex53_54_custom_rules() {
    let yaml = r#"
tools:
  forbid_always: [send_email]
states:
  s:
    triggers: { manual: }
    instructions: Work.
    tools:
      allow: [web_fetch]
      forbid: [pack_files]
"#;
    let p53 = compile(
        yaml,
        PolicyOptions {
            custom_rules: vec![Box::new(NoFetch)],
            ..opts_with_fixture_mounts()
        },
    );
    check(
        &p53,
        &[
            call("53", "s", "web_fetch", json!({"url": "https://x.com"}))
                .block("host.no-fetch")
                .exact("no fetching today"),
            call("53b", "s", "read_file", json!({"file_path": "notes.txt"})).allow("tool.allowed"),
        ],
    );
    let p54 = compile(
        yaml,
        PolicyOptions {
            custom_rules: vec![Box::new(AllowAll)],
            ..opts_with_fixture_mounts()
        },
    );
    check(
        &p54,
        &[
            call(
                "54a",
                "s",
                "write_file",
                json!({"file_path": "skills/x.md"}),
            )
            .block("zone.read-only"),
            call("54b", "s", "eval", json!({})).block("tool.eval"),
            // `task` is a tool like any other: the host rule decides it.
            call("54c", "s", "task", json!({})).allow("host.allow-all"),
            call("54d", "s", "send_email", json!({})).block("tool.forbidden"),
            call("54e", "s", "pack_files", json!({})).block("tool.forbidden-here"),
            // an allow here is final: it bypasses the open areas and the grants.
            call("54f", "s", "not_granted", json!({})).allow("host.allow-all"),
            call(
                "54g",
                "s",
                "write_file",
                json!({"file_path": "scratchpad/x"}),
            )
            .allow("host.allow-all"),
        ],
    );
}

#[test]
fn ex55_lifecycle_authority() {
    let p = compile(
        r#"
tools:
  forbid_always:
    - { tool: write_file, paths: ["logs/**"] }
states:
  s:
    triggers: { manual: }
    instructions: Work.
    tools:
      allow:
        - { tool: read_file, paths: ["data/**"] }
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call("55a", "s", "web_fetch", json!({"url": "https://x.com"}))
                .lifecycle()
                .allow("allow"),
            call("55b", "s", "write_file", json!({"file_path": "logs/x"}))
                .lifecycle()
                .block("tool.forbidden"),
            call("55c", "s", "read_file", json!({"file_path": "notes.txt"}))
                .lifecycle()
                .allow("allow"),
            call(
                "55d",
                "s",
                "read_file",
                json!({"file_path": "checkpoints/x"}),
            )
            .lifecycle()
            .block("zone.runtime-internal"),
            call("55e", "s", "write_file", json!({"file_path": "data/x"}))
                .lifecycle()
                .block("zone.read-only"),
            call("55f", "s", "web_fetch", json!({"url": "https://x.com"}))
                .script()
                .block("tool.not-allowed"),
        ],
    );
}

#[test]
fn ex56_paths_grant_never_admits_a_missing_path() {
    let p = compile(
        r#"
states:
  s:
    triggers: { manual: }
    instructions: List.
    tools:
      allow:
        - { tool: ls, paths: ["**"] }
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call("56a", "s", "ls", json!({})).block("tool.not-allowed"),
            call("56b", "s", "ls", json!({"path": "output"})).allow("tool.allowed"),
        ],
    );
}

// ---------------------------------------------------------------------------
// 0.9.0 deltas
// ---------------------------------------------------------------------------

#[test]
fn d3_a_state_entry_grants_a_default_tool_allow_always_omits() {
    let p = compile(
        r#"
tools:
  allow_always: [read_file]
states:
  draft:
    triggers: { manual: }
    instructions: Draft.
    tools:
      allow: [write_file]
    transitions:
      - to: final
  final:
    instructions: Final.
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call("D3a", "draft", "write_file", json!({"file_path": "output/x"})).allow("tool.allowed"),
            call("D3b", "final", "write_file", json!({"file_path": "output/x"}))
                .block("tool.not-allowed")
                .exact(not_allowed(
                    "'write_file' on 'output/x'",
                    "final",
                    "read_file, archmax_reset, archmax_wait, archmax_raise, archmax_get_variables, archmax_set_variables",
                    ENDS,
                )),
            call("D3c", "final", "read_file", json!({"file_path": "output/x"})).allow("tool.allowed"),
            call("D3d", "draft", "read_file", json!({"file_path": "output/x"})).allow("tool.allowed"),
            call("D3e", "final", "ls", json!({"path": "output"})).block("tool.not-allowed"),
            call("D3f", "final", "archmax_eval", json!({"code": "1"})).block("tool.not-allowed"),
            call("D3g", "final", "archmax_get_variables", json!({})).allow("tool.allowed"),
        ],
    );
    assert_eq!(
        p.describe_allowed("draft"),
        "write_file, read_file, archmax_advance, archmax_reset, archmax_wait, archmax_raise, archmax_get_variables, archmax_set_variables"
    );
}

#[test]
fn d1_allow_always_empty_grants_nothing_workflow_wide() {
    let p = compile(
        r#"
tools:
  allow_always: []
states:
  s:
    triggers: { manual: }
    instructions: S.
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call("D1a", "s", "read_file", json!({"file_path": "notes.txt"}))
                .block("tool.not-allowed"),
            call(
                "D1b",
                "s",
                "read_file",
                json!({"file_path": "scratchpad/x"}),
            )
            .block("tool.not-allowed"),
            call("D1c", "s", "archmax_raise", json!({"reason": "x"})).allow("tool.allowed"),
        ],
    );
    let mut surface = p.surface("s");
    surface.sort();
    assert_eq!(
        surface,
        strs(&[
            "archmax_get_variables",
            "archmax_raise",
            "archmax_reset",
            "archmax_set_variables",
            "archmax_wait"
        ])
    );
}

#[test]
fn d4_guarded_allow_always_binds_where_the_state_does_not_name_the_tool() {
    let p = compile(
        r#"
tools:
  allow_always:
    - read_file
    - { tool: write_file, paths: ["reports/**"] }
states:
  a:
    triggers: { manual: }
    instructions: A.
    transitions:
      - to: b
  b:
    instructions: B.
    tools:
      allow: [write_file]
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call(
                "D4a",
                "a",
                "write_file",
                json!({"file_path": "reports/q1.md"}),
            )
            .allow("tool.allowed"),
            call("D4b", "a", "write_file", json!({"file_path": "output/x"}))
                .block("tool.not-allowed"),
            call("D4c", "b", "write_file", json!({"file_path": "output/x"})).allow("tool.allowed"),
            // D6: the guarded grant still opens scratchpad/ (narrowing ignored there).
            call(
                "D4d",
                "a",
                "write_file",
                json!({"file_path": "scratchpad/x"}),
            )
            .allow("tool.scratchpad"),
        ],
    );
    assert!(
        p.describe_allowed("a")
            .contains("write_file(file_path=reports/**)"),
        "{}",
        p.describe_allowed("a")
    );
    assert!(p.surface("a").iter().any(|t| t == "write_file"));
}

#[test]
fn d6_scratchpad_opens_only_to_granted_default_tools_and_host_essentials() {
    let mut paths = ToolPaths::new();
    declare(&mut paths, "stash", &[("target", "write")]);
    declare(&mut paths, "fetch_attachment", &[("attachment", "read")]);
    let p = compile(
        r#"
tools:
  allow_always: [read_file]
states:
  s:
    triggers: { manual: }
    instructions: S.
"#,
        PolicyOptions {
            tool_paths: paths,
            essential_tools: strs(&["stash"]),
            ..opts_with_fixture_mounts()
        },
    );
    check(
        &p,
        &[
            call(
                "D6a",
                "s",
                "write_file",
                json!({"file_path": "scratchpad/x"}),
            )
            .block("tool.not-allowed"),
            call(
                "D6b",
                "s",
                "read_file",
                json!({"file_path": "scratchpad/x"}),
            )
            .allow("tool.scratchpad"),
            call(
                "D6c",
                "s",
                "read_file",
                json!({"file_path": "large_tool_results/x"}),
            )
            .allow("tool.offload-read"),
            call("D6d", "s", "ls", json!({"path": "large_tool_results"})).block("tool.not-allowed"),
            call(
                "D6e",
                "s",
                "write_file",
                json!({"file_path": "large_tool_results/x"}),
            )
            .block("zone.runtime-managed"),
            call("D6f", "s", "stash", json!({"target": "scratchpad/x"})).allow("tool.scratchpad"),
            call("D6g", "s", "stash", json!({"target": "output/x"})).allow("tool.allowed"),
            call(
                "D6h",
                "s",
                "fetch_attachment",
                json!({"attachment": "scratchpad/x"}),
            )
            .block("tool.not-allowed"),
        ],
    );
    assert!(
        p.surface("s").iter().any(|t| t == "stash"),
        "host essentials are always disclosed (D5)"
    );
}

#[test]
fn d8_non_path_arguments_match_as_written() {
    let p = compile(
        r#"
tools:
  forbid_always:
    - { tool: web_fetch, args: { url: ["https:/evil.com/**"] } }
states:
  s:
    triggers: { manual: }
    instructions: S.
    tools:
      allow:
        - { tool: web_fetch, args: { url: ["https://x.com/*"] } }
        - { tool: send_email, args: { to: ["*@x.com"] } }
        - { tool: read_file, args: { file_path: ["notes/*.md"] } }
        - { tool: read_file, args: { path: ["notes/*.md"] } }
    transitions:
      - to: s2
  s2:
    instructions: S2.
    tools:
      allow:
        - { tool: read_file, args: { file_path: ["notes/*.md"] } }
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call("D8a", "s", "web_fetch", json!({"url": "https://x.com/y"})).allow("tool.allowed"),
            call("D8b", "s", "web_fetch", json!({"url": "https://x.com/a/b"}))
                .block("tool.not-allowed"),
            call("D8c", "s", "web_fetch", json!({"url": "https:/x.com/y"}))
                .block("tool.not-allowed"),
            // deny side: the canonical form of the as-written value also matches.
            call(
                "D8d",
                "s",
                "web_fetch",
                json!({"url": "https://evil.com/x"}),
            )
            .block("tool.forbidden"),
            // D10: `*` stays inside one segment.
            call("D10a", "s", "send_email", json!({"to": "ann@x.com"})).allow("tool.allowed"),
            call("D10b", "s", "send_email", json!({"to": "ann@y.com"})).block("tool.not-allowed"),
            call("D10c", "s", "send_email", json!({"to": "a/b@x.com"})).block("tool.not-allowed"),
            // path arguments are canonicalized.
            call(
                "D8e",
                "s",
                "read_file",
                json!({"file_path": "./notes//a.md"}),
            )
            .allow("tool.allowed"),
            call(
                "D8f",
                "s",
                "read_file",
                json!({"file_path": "x/../notes/a.md"}),
            )
            .allow("tool.allowed"),
            // D8(a): an `args:` guard naming the built-in alias `path` treats it as a
            // path argument (canonicalized).
            call("D8g", "s", "read_file", json!({"path": "./notes/a.md"})).allow("tool.allowed"),
            // §5.2: an `args:` guard reads exactly the argument it names, so a
            // `file_path` guard does not see a call that uses the alias.
            call("D8h", "s2", "read_file", json!({"path": "notes/a.md"})).block("tool.not-allowed"),
            call(
                "D8i",
                "s2",
                "read_file",
                json!({"file_path": "./notes/a.md"}),
            )
            .allow("tool.allowed"),
        ],
    );
}

#[test]
fn d9_empty_glob_matches_only_an_empty_value() {
    let p = compile(
        r#"
states:
  s:
    triggers: { manual: }
    instructions: S.
    tools:
      allow:
        - { tool: send_email, args: { cc: [""] } }
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call("D9a", "s", "send_email", json!({"cc": ""})).allow("tool.allowed"),
            call("D9b", "s", "send_email", json!({"cc": "a@b.c"})).block("tool.not-allowed"),
            call("D9c", "s", "send_email", json!({})).block("tool.not-allowed"),
            call("D9d", "s", "send_email", json!({"cc": null})).block("tool.not-allowed"),
        ],
    );
}

#[test]
fn d13_lifecycle_is_exempt_from_the_state_forbid_but_not_forbid_always() {
    let p = compile(
        r#"
tools:
  forbid_always:
    - { tool: write_file, paths: ["logs/**"] }
    - archmax_reset
states:
  route:
    triggers: { manual: }
    instructions: Route.
    tools:
      forbid: [read_file]
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call(
                "D13a",
                "route",
                "read_file",
                json!({"file_path": "notes.txt"}),
            )
            .lifecycle()
            .allow("allow"),
            call(
                "D13b",
                "route",
                "read_file",
                json!({"file_path": "notes.txt"}),
            )
            .block("tool.forbidden-here")
            .exact(forbidden(
                "'read_file' on 'notes.txt'",
                "state 'route'",
                "states.route.tools.forbid",
            )),
            call(
                "D13c",
                "route",
                "read_file",
                json!({"file_path": "notes.txt"}),
            )
            .script()
            .block("tool.forbidden-here"),
            call(
                "D13d",
                "route",
                "write_file",
                json!({"file_path": "logs/x"}),
            )
            .lifecycle()
            .block("tool.forbidden"),
            call(
                "D13e",
                "route",
                "write_file",
                json!({"file_path": "output/x"}),
            )
            .lifecycle()
            .allow("allow"),
            // a bare forbid of a control beats the always-allowed controls.
            call("D13f", "route", "archmax_reset", json!({})).block("tool.forbidden"),
        ],
    );
    assert!(
        !p.surface("route")
            .iter()
            .any(|t| t == "read_file" || t == "archmax_reset")
    );
}

#[test]
fn d14_lifecycle_and_the_workflows_own_mount_lists() {
    let p = compile(
        r#"
mounts:
  forbid_always: [data]
skills:
  forbid_always: [refund-policy]
states:
  a:
    triggers: { manual: }
    instructions: A.
    mounts:
      allow: [catalogs/eu]
    transitions:
      - to: b
  b:
    instructions: B.
    mounts:
      forbid: [.platform]
"#,
        PolicyOptions {
            mounts: governed_mounts(),
            skills: fixture_skills(),
            ..PolicyOptions::default()
        },
    );
    check(
        &p,
        &[
            // a governed mount some grant names: hooks reach it from any state.
            call(
                "D14a",
                "b",
                "read_file",
                json!({"file_path": "catalogs/eu/x"}),
            )
            .lifecycle()
            .allow("allow"),
            call(
                "D14b",
                "b",
                "read_file",
                json!({"file_path": "catalogs/eu/x"}),
            )
            .block("mount.not-allowed"),
            // a governed mount no grant names: closed to hooks too.
            call("D14c", "b", "read_file", json!({"file_path": "vault/x"}))
                .lifecycle()
                .block("mount.not-allowed"),
            // mounts.forbid_always binds hooks.
            call("D14d", "b", "read_file", json!({"file_path": "data/x"}))
                .lifecycle()
                .block("mount.forbidden")
                .has("'mounts.forbid_always' denies in every state"),
            // a state's mount forbid does not.
            call(
                "D14e",
                "b",
                "read_file",
                json!({"file_path": ".platform/p.md"}),
            )
            .lifecycle()
            .allow("allow"),
            call(
                "D14f",
                "b",
                "read_file",
                json!({"file_path": ".platform/p.md"}),
            )
            .block("mount.forbidden"),
            // hooks read a bundle no state enables; skills.forbid_always binds them (interpretation of D14).
            call(
                "D14g",
                "a",
                "read_file",
                json!({"file_path": "skills/order-data/SKILL.md"}),
            )
            .lifecycle()
            .allow("allow"),
            call(
                "D14h",
                "a",
                "read_file",
                json!({"file_path": "skills/refund-policy/SKILL.md"}),
            )
            .lifecycle()
            .block("skill.forbidden"),
        ],
    );
}

// ---------------------------------------------------------------------------
// Exact texts for every rule id of §3 not pinned above
// ---------------------------------------------------------------------------

#[test]
fn exact_texts_for_the_remaining_rule_ids() {
    // `task` ungranted, tool.not-allowed with (to='…'), and both skill.forbidden sources.
    let p = compile(
        r#"
skills:
  allow_always: [order-data]
  forbid_always: [refund-policy]
states:
  a:
    triggers: { manual: }
    instructions: A.
    skills:
      forbid: [order-data]
    transitions:
      - to: b
  b:
    instructions: B.
"#,
        opts_with_fixture_mounts(),
    );
    let a_allowed = "ls, read_file, write_file, edit_file, copy_file, move_file, remove_file, glob, grep, write_todos, archmax_eval, archmax_run, archmax_advance, archmax_reset, archmax_wait, archmax_raise, archmax_get_variables, archmax_set_variables";
    check(
        &p,
        &[
            call("task", "a", "task", json!({"description": "grade"}))
                .block("tool.not-allowed")
                .exact(not_allowed("'task'", "a", a_allowed, GO_ON)),
            call(
                "to",
                "a",
                "send_email",
                json!({"to": "x@y.z", "file_path": "o.txt"}),
            )
            .block("tool.not-allowed")
            .exact(not_allowed(
                "'send_email' on 'o.txt' (to='x@y.z')",
                "a",
                a_allowed,
                GO_ON,
            )),
            call(
                "to-nonstring",
                "a",
                "send_email",
                json!({"to": ["x@y.z"], "file_path": 3}),
            )
            .block("tool.not-allowed")
            .exact(not_allowed("'send_email'", "a", a_allowed, GO_ON)),
            call(
                "skill-always",
                "b",
                "read_file",
                json!({"file_path": "skills/refund-policy/x"}),
            )
            .block("skill.forbidden")
            .exact(skill_forbidden(
                "'read_file' on 'skills/refund-policy/x'",
                "refund-policy",
                "'skills.forbid_always' denies in every state",
                "Skills enabled here: order-data.",
            )),
            call(
                "skill-here",
                "a",
                "read_file",
                json!({"file_path": "skills/order-data/x"}),
            )
            .block("skill.forbidden")
            .exact(skill_forbidden(
                "'read_file' on 'skills/order-data/x'",
                "order-data",
                "state 'a' forbids",
                "No skill is enabled in this state.",
            )),
            call(
                "skill-ok",
                "b",
                "read_file",
                json!({"file_path": "skills/order-data/x"}),
            )
            .allow("tool.allowed"),
        ],
    );
    // mount.forbidden from the workflow's list, with an enabled governed mount listed.
    let p = compile(
        r#"
mounts:
  forbid_always: [data]
  allow_always: [vault]
states:
  s:
    triggers: { manual: }
    instructions: S.
"#,
        PolicyOptions {
            mounts: governed_mounts(),
            ..PolicyOptions::default()
        },
    );
    check(
        &p,
        &[call("mount-always", "s", "ls", json!({"path": "data"}))
            .block("mount.forbidden")
            .exact(mount_forbidden(
                "'ls' on 'data'",
                "data",
                "'mounts.forbid_always' denies in every state",
                "Mounts available here: vault.",
            ))],
    );
    // tool.forbidden with a file_path fallback and an args guard of two arguments.
    let p = compile(
        r#"
tools:
  forbid_always:
    - { tool: web_fetch, args: { url: ["*evil*", "*bad*"], method: [POST] } }
states:
  s:
    triggers: { manual: }
    instructions: S.
    tools:
      allow: [web_fetch]
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call(
                "forbid-args",
                "s",
                "web_fetch",
                json!({"url": "evil.com", "method": "POST", "file_path": "f"}),
            )
            .block("tool.forbidden")
            .exact(forbidden(
                "'web_fetch' on 'f'",
                "the workflow",
                "tools.forbid_always: url=*evil*|*bad*, method=POST",
            )),
            call(
                "forbid-args-partial",
                "s",
                "web_fetch",
                json!({"url": "evil.com", "method": "GET"}),
            )
            .allow("tool.allowed"),
        ],
    );
}

#[test]
fn allow_rule_has_no_message_and_warn_flags() {
    let p = fixture();
    let args = json!({"url": "x"});
    let d = p.decide(
        &ToolCall::new("web_fetch", &args),
        &CallContext::agent("review").with_origin(Origin::Lifecycle),
    );
    assert!(
        d.allowed && d.rule.as_str() == "allow" && !d.terminal,
        "{d:?}"
    );
    assert_eq!(d.message, None);
    let d = p.decide(
        &ToolCall::new("web_fetch", &args),
        &CallContext::agent("review"),
    );
    assert!(d.warn && !d.terminal, "{d:?}");
}

// ---------------------------------------------------------------------------
// Disclosure
// ---------------------------------------------------------------------------

#[test]
fn surface_hides_advance_when_terminal_bare_forbids_and_task() {
    let p = fixture();
    let collect = p.surface("collect");
    let review = p.surface("review");
    assert!(
        collect.iter().any(|t| t == "archmax_advance"),
        "{collect:?}"
    );
    assert!(!review.iter().any(|t| t == "archmax_advance"), "{review:?}");
    for t in [
        "archmax_reset",
        "archmax_wait",
        "archmax_raise",
        "archmax_get_variables",
        "archmax_set_variables",
        "read_file",
        "write_todos",
        "archmax_run",
    ] {
        assert!(review.iter().any(|x| x == t), "{t} missing from {review:?}");
        assert!(
            collect.iter().any(|x| x == t),
            "{t} missing from {collect:?}"
        );
    }
    let p = compile(
        r#"
tools:
  allow_always: [read_file, task, write_file]
states:
  s:
    triggers: { manual: }
    instructions: S.
    tools:
      allow: [task, web_fetch, { tool: grep, paths: ["x/**"] }]
      forbid: [web_fetch, { tool: grep, paths: ["secret/**"] }, archmax_wait]
    transitions:
      - to: t
  t:
    instructions: T.
"#,
        opts_with_fixture_mounts(),
    );
    let s = p.surface("s");
    // `task` is disclosed like any granted tool (Deep Agents' subagent tool).
    assert!(s.iter().any(|t| t == "task"), "{s:?}");
    assert!(p.surface("t").iter().any(|t| t == "task"));
    assert!(
        !s.iter().any(|t| t == "web_fetch"),
        "a bare forbid removes the tool: {s:?}"
    );
    assert!(
        !s.iter().any(|t| t == "archmax_wait"),
        "a bare forbid removes a control: {s:?}"
    );
    assert!(
        s.iter().any(|t| t == "grep"),
        "a guarded forbid keeps the tool: {s:?}"
    );
    assert!(s.iter().any(|t| t == "archmax_advance"));
    let mut sorted = s.clone();
    sorted.sort();
    sorted.dedup();
    assert_eq!(sorted.len(), s.len(), "no duplicates: {s:?}");
    assert!(p.surface("nope").is_empty());
}

// ---------------------------------------------------------------------------
// Listing redaction
// ---------------------------------------------------------------------------

#[test]
fn redaction_hides_a_disabled_bundles_grep_group() {
    let p = fixture();
    let grep = "\n/skills/order-data/SKILL.md:\n  1: orders live here\n\n/skills/refund-policy/SKILL.md:\n  3: refunds\n  9: more refunds\n\n/notes.txt:\n  2: refund note";
    let out = p.redact_listing("lookup", Origin::Agent, grep);
    assert_eq!(
        out,
        "\n/skills/order-data/SKILL.md:\n  1: orders live here\n/notes.txt:\n  2: refund note"
    );
    // hidden group at the end: its header, match lines and the preceding blank line go.
    let grep = "\n/notes.txt:\n  2: refund\n\n/skills/refund-policy/SKILL.md:\n  3: refunds";
    assert_eq!(
        p.redact_listing("lookup", Origin::Agent, grep),
        "\n/notes.txt:\n  2: refund"
    );
    // a `..` in the path is honored when finding the owner.
    let ls = "/skills/order-data/../refund-policy/SKILL.md (12 bytes)\n/skills/order-data/SKILL.md (3 bytes)";
    assert_eq!(
        p.redact_listing("lookup", Origin::Agent, ls),
        "/skills/order-data/SKILL.md (3 bytes)"
    );
    // review enables nothing: both bundles go; script listings are filtered too.
    let ls = "/skills/README.md (3 bytes)\n/skills/order-data/ (directory)\n/skills/refund-policy/ (directory)";
    assert_eq!(
        p.redact_listing("review", Origin::Script, ls),
        "/skills/README.md (3 bytes)"
    );
    // lifecycle listings are never filtered.
    assert_eq!(p.redact_listing("review", Origin::Lifecycle, ls), ls);
}

#[test]
fn redaction_returns_the_text_unchanged_when_nothing_is_hidden() {
    let p = fixture();
    for text in [
        "",
        "\n",
        "No files found in /",
        "\n/skills/order-data/SKILL.md:\n  1: x\n\n/notes.txt:\n  2: y\n",
        "/skills/order-data/ (directory)\n\n\n   \n/data/a.json (9 bytes)\n",
        "  leading continuation\n\n",
    ] {
        let out = p.redact_listing("lookup", Origin::Agent, text);
        assert_eq!(out, text);
    }
}

#[test]
fn redaction_hides_governed_and_forbidden_mounts() {
    let p = compile(
        MOUNT_SPEC,
        PolicyOptions {
            mounts: governed_mounts(),
            skills: fixture_skills(),
            ..PolicyOptions::default()
        },
    );
    let ls = "/catalogs/eu/ (directory)\n/data/ (directory)\n/shared/ (directory)";
    assert_eq!(
        p.redact_listing("closed", Origin::Agent, ls),
        "/data/ (directory)"
    );
    assert_eq!(p.redact_listing("open", Origin::Agent, ls), ls);
    assert_eq!(
        p.redact_listing("reader", Origin::Agent, ls),
        "/data/ (directory)\n/shared/ (directory)"
    );
    let p = fixture();
    let ls = "/skills/ (directory)\n/data/ (directory)";
    assert_eq!(
        p.redact_listing("route", Origin::Agent, ls),
        "/data/ (directory)"
    );
}

// ---------------------------------------------------------------------------
// §5.3 wildcard semantics at the decision level
// ---------------------------------------------------------------------------

#[test]
fn glob_edges_of_section_5_3() {
    let p = compile(
        r#"
states:
  s:
    triggers: { manual: }
    instructions: S.
    tools:
      allow:
        - { tool: read_file, paths: ["**"] }
        - { tool: ls, paths: ["*"] }
        - { tool: write_file, paths: ["./secrets/**", "**/b/**", "[!abc]"] }
        - { tool: send_email, args: { to: ["a+tag@b.co", "foo(bar)", "a|b"] } }
"#,
        opts_with_fixture_mounts(),
    );
    check(
        &p,
        &[
            call("5.3-1", "s", "read_file", json!({"file_path": "a/.git/x"})).allow("tool.allowed"),
            call("5.3-2", "s", "read_file", json!({"file_path": ".env"})).allow("tool.allowed"),
            // wildcards never match `..` segments, nor the empty (root) value.
            call("5.3-3", "s", "read_file", json!({"file_path": "../y"})).block("tool.not-allowed"),
            call("5.3-4", "s", "read_file", json!({"file_path": "a/../../y"}))
                .block("tool.not-allowed"),
            call("5.3-5", "s", "read_file", json!({"file_path": "/"})).block("tool.not-allowed"),
            call("5.3-6", "s", "ls", json!({"path": "."})).block("tool.not-allowed"),
            call("5.3-7", "s", "ls", json!({"path": ".."})).block("tool.not-allowed"),
            call("5.3-8", "s", "ls", json!({"path": "out"})).allow("tool.allowed"),
            call("5.3-9", "s", "ls", json!({"path": "out/x"})).block("tool.not-allowed"),
            // `./` stripped from a glob; a trailing `/**` matches the base.
            call(
                "5.3-10",
                "s",
                "write_file",
                json!({"file_path": "secrets/x"}),
            )
            .allow("tool.allowed"),
            call("5.3-11", "s", "write_file", json!({"file_path": "secrets"}))
                .allow("tool.allowed"),
            call("5.3-12", "s", "write_file", json!({"file_path": "b"})).allow("tool.allowed"),
            // `[!abc]` is not a negation: it matches `!`, `a`, `b`, `c` and not `d`.
            call("5.3-13", "s", "write_file", json!({"file_path": "a"})).allow("tool.allowed"),
            call("5.3-14", "s", "write_file", json!({"file_path": "!"})).allow("tool.allowed"),
            call("5.3-15", "s", "write_file", json!({"file_path": "d"})).block("tool.not-allowed"),
            // a glob that is one bracket expression also matches its own literal text.
            call("5.3-16", "s", "write_file", json!({"file_path": "[!abc]"})).allow("tool.allowed"),
            // literal specials.
            call("5.3-17", "s", "send_email", json!({"to": "a+tag@b.co"})).allow("tool.allowed"),
            call("5.3-18", "s", "send_email", json!({"to": "foo(bar)"})).allow("tool.allowed"),
            call("5.3-19", "s", "send_email", json!({"to": "a|b"})).allow("tool.allowed"),
            call("5.3-20", "s", "send_email", json!({"to": "A+TAG@B.CO"}))
                .block("tool.not-allowed"),
        ],
    );
}

#[test]
fn decide_with_move_checks_the_requires_gate_and_the_edge() {
    let p = compile(
        r#"
states:
  a:
    triggers: { manual: }
    instructions: A.
    requires: [order_id]
    transitions:
      - to: b
  b:
    instructions: B.
"#,
        PolicyOptions::default(),
    );
    let mut vars = Variables::new();
    let ctx = CallContext::agent("a");
    let to = |t: &str| json!({ "to": t, "reason": "r" });
    let gated = p.decide_with_move(&ToolCall::new("archmax_advance", &to("b")), &ctx);
    assert_eq!(gated.rule.as_str(), "transition.requires");
    vars.insert("order_id".into(), json!("A-1"));
    let ctx = ctx.with_variables(&vars);
    let ok = p.decide_with_move(&ToolCall::new("archmax_advance", &to("b")), &ctx);
    assert!(ok.allowed, "{ok:?}");
    let args = to("a");
    let no_edge = p.decide_with_move(&ToolCall::new("archmax_advance", &args), &ctx);
    assert_eq!(no_edge.rule.as_str(), "transition.no-edge");
    assert_eq!(
        no_edge.message.as_deref(),
        Some("cannot advance from 'a' to 'a'. Valid target slugs: b.")
    );
    // `decide` alone grants the control; other tools are decided as by `decide`.
    assert!(
        p.decide(&ToolCall::new("archmax_advance", &args), &ctx)
            .allowed
    );
    let ls = json!({ "path": "." });
    assert_eq!(
        p.decide_with_move(&ToolCall::new("ls", &ls), &ctx),
        p.decide(&ToolCall::new("ls", &ls), &ctx)
    );
}

//! The case-file language (`workflows/<slug>/tests/**/*.test.yaml`): a strict
//! schema checked the way `archmax test` reads it, so `validate` reports what a
//! run would reject.

use crate::grammar::is_variable_name;
use crate::yaml::{Node, Pos, Value};

/// Longest title, measured on whitespace-collapsed text.
pub const CASE_TITLE_MAX_LENGTH: usize = 60;
/// Longest description, measured on whitespace-collapsed text.
pub const CASE_DESCRIPTION_MAX_LENGTH: usize = 200;

/// The top-level keys of a case file.
pub const TOP_KEYS: &[&str] = &[
    "title",
    "description",
    "skip",
    "trigger",
    "variables",
    "workspace",
    "mocks",
    "steps",
];
/// The step kinds that act on the run.
pub const ACTIONS: &[&str] = &["send", "decide", "deliver"];
/// The step kinds that assert on what happened so far.
pub const ASSERTIONS: &[&str] = &[
    "succeeded",
    "raised",
    "usedNoTools",
    "noTraversal",
    "parked",
    "reachedState",
    "triggerArrival",
    "reply",
    "calledTool",
    "notCalledTool",
    "blockedTool",
    "ranWorkflow",
    "trail",
    "variables",
    "grade",
];

/// A `workspace:` entry that references a fixture file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FixtureRef {
    /// The session path the file is seeded at.
    pub path: String,
    /// The `from:` value as written.
    pub from: String,
}

/// A mock of a sub-workflow (`tool: archmax_workflow_<slug>`).
#[derive(Debug, Clone, PartialEq)]
pub struct WorkflowMock {
    /// The index in `mocks`.
    pub index: usize,
    /// The target's slug.
    pub workflow: String,
    /// `result.returns`, when the result is a mapping that declares them.
    pub returns: Option<serde_json::Map<String, serde_json::Value>>,
    /// Where the mock is.
    pub pos: Pos,
}

/// What a case file declares that other checks need.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct CaseFacts {
    /// `trigger.id`, when declared.
    pub trigger: Option<String>,
    /// `workspace` entries with `from:`.
    pub fixtures: Vec<FixtureRef>,
    /// The mocks of sub-workflows, held to their targets' contracts by `validate`.
    pub workflow_mocks: Vec<WorkflowMock>,
}

/// Checks a case document. `Err` holds every problem (already rendered, in order).
pub fn check_case(text: &str) -> Result<CaseFacts, Vec<String>> {
    check_case_at(text).map_err(|p| p.into_iter().map(|(m, _)| m).collect())
}

/// [`check_case`] with each problem's position: the key, step or entry it is about.
pub fn check_case_at(text: &str) -> Result<CaseFacts, Vec<(String, Option<Pos>)>> {
    let root = match crate::yaml::parse(text) {
        Ok(Some(n)) if n.as_map().is_some() => n,
        Ok(n) => {
            return Err(vec![(
                "a test case is a YAML mapping (title, description, steps, ...)".to_string(),
                n.map(|n| n.pos),
            )]);
        }
        Err(e) => return Err(vec![(format!("YAML parse error: {e}"), e.pos)]),
    };
    let mut c = Checker {
        here: Some(root.pos),
        ..Checker::default()
    };
    c.top_level(&root);
    if c.problems.is_empty() {
        Ok(c.facts)
    } else {
        Err(c.problems)
    }
}

#[derive(Default)]
struct Checker {
    problems: Vec<(String, Option<Pos>)>,
    facts: CaseFacts,
    /// The position problems are reported at: the node being checked.
    here: Option<Pos>,
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Checker {
    fn say(&mut self, msg: impl Into<String>) {
        self.problems.push((msg.into(), self.here));
    }

    /// Reports later problems at `n`'s position.
    fn at(&mut self, n: &Node) {
        self.here = Some(n.pos);
    }

    fn top_level(&mut self, root: &Node) {
        for e in root.as_map().unwrap_or(&[]) {
            if !TOP_KEYS.contains(&e.key.as_str()) {
                self.here = Some(e.key_pos);
                self.say(format!(
                    "unknown key '{}' (known: {})",
                    e.key,
                    TOP_KEYS.join(", ")
                ));
            }
        }
        self.here = Some(root.pos);
        if let Some(t) = root.get("title") {
            self.at(t);
        }
        match root.get("title").and_then(Node::as_str).map(str::trim) {
            None | Some("") => self.say(
                "'title' is required: a short one-line label for the case (e.g. 'Unknown requester is rejected at entry')",
            ),
            Some(t) if t.contains('\n') => {
                self.say("title: 'title' is a single line — put the detail in 'description'");
            }
            Some(t) => {
                let n = collapse(t).chars().count();
                if n > CASE_TITLE_MAX_LENGTH {
                    self.say(format!(
                        "title: 'title' must be at most {CASE_TITLE_MAX_LENGTH} characters (got {n}) — keep it a label; put the detail in 'description'"
                    ));
                }
            }
        }
        self.here = Some(root.pos);
        if let Some(d) = root.get("description") {
            self.at(d);
        }
        match root.get("description").and_then(Node::as_str).map(str::trim) {
            None | Some("") => self.say(
                "'description' is required: one or two sentences stating the scenario driven and what is asserted",
            ),
            Some(d) => {
                let n = collapse(d).chars().count();
                if n > CASE_DESCRIPTION_MAX_LENGTH {
                    self.say(format!(
                        "description: 'description' must be at most {CASE_DESCRIPTION_MAX_LENGTH} characters (got {n}) — keep it to one or two sentences; longer rationale belongs in a YAML comment above the document"
                    ));
                }
            }
        }
        if let Some(skip) = root.get("skip")
            && skip.as_str().is_none_or(|s| s.trim().is_empty())
        {
            self.at(skip);
            self.say("skip: 'skip' takes a reason string");
        }
        if let Some(t) = root.get("trigger") {
            self.at(t);
            self.trigger(t);
        }
        if let Some(v) = root.get("variables") {
            self.at(v);
            self.variables(v, "variables");
        }
        if let Some(w) = root.get("workspace") {
            self.at(w);
            self.workspace(w);
        }
        if let Some(m) = root.get("mocks") {
            self.at(m);
            self.mocks(m);
        }
        if let Some(s) = root.get("steps") {
            self.at(s);
            self.steps(s);
        }
    }

    fn unknown_keys(&mut self, n: &Node, path: &str, known: &[&str]) {
        for e in n.as_map().unwrap_or(&[]) {
            if !known.contains(&e.key.as_str()) {
                self.say(format!("{path}: unknown key '{}'", e.key));
            }
        }
    }

    fn trigger(&mut self, t: &Node) {
        if t.as_map().is_none() {
            self.say("trigger: 'trigger' takes a mapping { id: <trigger id> }");
            return;
        }
        self.unknown_keys(t, "trigger", &["id"]);
        match t.get("id").and_then(Node::as_str) {
            Some(id) if !id.trim().is_empty() => self.facts.trigger = Some(id.to_string()),
            _ => self.say("trigger.id: takes a trigger id string"),
        }
    }

    fn variables(&mut self, v: &Node, path: &str) {
        let Some(entries) = v.as_map() else {
            self.say(format!("{path}: takes a mapping of variable name to value"));
            return;
        };
        for e in entries {
            if !is_variable_name(&e.key) {
                self.say(format!(
                    "{path}.{}: is not a valid variable name (lowercase letters, digits and underscores, starting with a letter)",
                    e.key
                ));
            }
        }
    }

    fn workspace(&mut self, w: &Node) {
        let Some(entries) = w.as_map() else {
            self.say("workspace: takes a mapping of session path to file content");
            return;
        };
        for e in entries {
            self.here = Some(e.key_pos);
            let single_from = e
                .value
                .as_map()
                .is_some_and(|m| m.len() == 1 && m[0].key == "from");
            if !single_from {
                continue;
            }
            match e.value.get("from").and_then(Node::as_str) {
                Some(from) => self.facts.fixtures.push(FixtureRef {
                    path: e.key.clone(),
                    from: from.to_string(),
                }),
                None => self.say(format!(
                    "workspace.{}.from: 'from' takes a tests/-relative file path string",
                    e.key
                )),
            }
        }
    }

    fn mocks(&mut self, m: &Node) {
        let Some(items) = m.as_seq() else {
            self.say("mocks: takes a list of { tool, whenInput?, result }");
            return;
        };
        for (i, item) in items.iter().enumerate() {
            self.at(item);
            let path = format!("mocks[{i}]");
            if item.as_map().is_none() {
                self.say(format!(
                    "{path}: a mock is a mapping {{ tool, whenInput?, result }}"
                ));
                continue;
            }
            self.unknown_keys(item, &path, &["tool", "whenInput", "result"]);
            if item
                .get("tool")
                .and_then(Node::as_str)
                .is_none_or(|t| t.trim().is_empty())
            {
                self.say(format!("{path}.tool: takes a tool name string"));
            }
            if let Some(slug) = item
                .get("tool")
                .and_then(Node::as_str)
                .and_then(|t| t.strip_prefix("archmax_workflow_"))
            {
                let returns = item
                    .get("result")
                    .and_then(|r| r.get("returns"))
                    .map(Node::to_json)
                    .and_then(|v| v.as_object().cloned());
                self.facts.workflow_mocks.push(WorkflowMock {
                    index: i,
                    workflow: slug.to_string(),
                    returns,
                    pos: item.pos,
                });
            }
            if item.get("result").is_none() {
                self.say(format!(
                    "{path}.result: is required (the mocked tool's answer)"
                ));
            }
            if let Some(w) = item.get("whenInput")
                && w.as_map().is_none()
            {
                self.say(format!(
                    "{path}.whenInput: takes a mapping matched against the call's input"
                ));
            }
        }
    }

    fn steps(&mut self, s: &Node) {
        let Some(items) = s.as_seq() else {
            self.say("steps: takes a list of single-key steps");
            return;
        };
        let mut acted = false;
        for (i, step) in items.iter().enumerate() {
            self.at(step);
            let path = format!("steps[{i}]");
            let Some(entries) = step.as_map() else {
                self.say(format!(
                    "{path}: a step is a single-key mapping — an action ('send', 'decide', 'deliver') or an assertion (e.g. '- send: \"hi\"' then '- reachedState: done')"
                ));
                continue;
            };
            if entries.len() != 1 {
                let keys: Vec<&str> = entries.iter().map(|e| e.key.as_str()).collect();
                let shown = if keys.is_empty() {
                    "none".to_string()
                } else {
                    keys.join(", ")
                };
                self.say(format!(
                    "{path}: a step declares exactly one key, got [{shown}]"
                ));
                continue;
            }
            let (kind, arg) = (entries[0].key.as_str(), &entries[0].value);
            let at = format!("{path}.{kind}");
            if ACTIONS.contains(&kind) {
                acted = true;
                self.action(kind, arg, &at);
            } else if ASSERTIONS.contains(&kind) {
                if !acted {
                    self.say(format!(
                        "{path}: assertion '{kind}' has no preceding action — put a 'send', 'decide', or 'deliver' step before it"
                    ));
                }
                self.assertion(kind, arg, &at);
            } else {
                self.say(format!(
                    "{path}: unknown step '{kind}' (actions: {}; assertions: {})",
                    ACTIONS.join(", "),
                    ASSERTIONS.join(", ")
                ));
            }
        }
    }

    fn action(&mut self, kind: &str, arg: &Node, at: &str) {
        match kind {
            "send" => {
                if arg.as_str().is_none_or(|s| s.trim().is_empty()) {
                    self.say(format!("{at}: takes a user message string"));
                }
            }
            "decide" => {
                if arg.as_map().is_none() {
                    self.say(format!("{at}: takes a mapping {{ to, comment? }}"));
                    return;
                }
                self.unknown_keys(arg, at, &["to", "comment"]);
                if arg
                    .get("to")
                    .and_then(Node::as_str)
                    .is_none_or(|s| s.trim().is_empty())
                {
                    self.say(format!("{at}.to: takes a state slug string"));
                }
                if arg.get("comment").is_some_and(|c| c.as_str().is_none()) {
                    self.say(format!("{at}.comment: takes a string"));
                }
            }
            _ => {
                if arg.as_map().is_none() {
                    self.say(format!("{at}: takes a mapping {{ trigger, variables? }}"));
                    return;
                }
                self.unknown_keys(arg, at, &["trigger", "variables"]);
                if arg
                    .get("trigger")
                    .and_then(Node::as_str)
                    .is_none_or(|s| s.trim().is_empty())
                {
                    self.say(format!("{at}.trigger: takes a trigger id string"));
                }
                if let Some(v) = arg.get("variables") {
                    self.variables(v, &format!("{at}.variables"));
                }
            }
        }
    }

    fn literal_true(&mut self, kind: &str, arg: &Node, at: &str) {
        if arg.value != Value::Bool(true) {
            self.say(format!("{at}: '{kind}' takes the literal true"));
        }
    }

    fn assertion(&mut self, kind: &str, arg: &Node, at: &str) {
        match kind {
            "succeeded" | "raised" | "usedNoTools" | "noTraversal" => {
                self.literal_true(kind, arg, at)
            }
            "reachedState" => {
                if arg.as_str().is_none_or(|s| s.trim().is_empty()) {
                    self.say(format!("{at}: takes a state slug string"));
                }
            }
            "triggerArrival" => {
                if arg.as_str().is_none_or(|s| s.trim().is_empty()) {
                    self.say(format!("{at}: takes a trigger id string"));
                }
            }
            "parked" => {
                let ok = match &arg.value {
                    Value::Bool(true) => true,
                    Value::Str(s) => s == "decision" || s == "input",
                    Value::Map(_) => {
                        self.unknown_keys(arg, at, &["channel", "state"]);
                        true
                    }
                    _ => false,
                };
                if !ok {
                    self.say(format!(
                        "{at}: 'parked' takes the literal true, 'decision' | 'input' to pin the channel, or a mapping {{ channel?, state? }} to pin where the session parked"
                    ));
                }
            }
            "reply" => {
                if arg.as_map().is_none() {
                    self.say(format!("{at}: takes a mapping {{ includes?, excludes? }}"));
                    return;
                }
                self.unknown_keys(arg, at, &["includes", "excludes"]);
                if arg.get("includes").is_none() && arg.get("excludes").is_none() {
                    self.say(format!(
                        "{at}: declare at least one of 'includes'/'excludes'"
                    ));
                }
                for key in ["includes", "excludes"] {
                    self.tokens(arg.get(key), &format!("{at}.{key}"));
                }
            }
            "calledTool" | "notCalledTool" | "blockedTool" => {
                if arg.as_map().is_none() || arg.get("name").and_then(Node::as_str).is_none() {
                    self.say(format!("{at}: takes a mapping {{ name, input? }}"));
                    return;
                }
                self.unknown_keys(arg, at, &["name", "input"]);
            }
            "ranWorkflow" => {
                if arg.as_map().is_none() || arg.get("workflow").and_then(Node::as_str).is_none() {
                    self.say(format!(
                        "{at}: takes a mapping {{ workflow, status?, count? }}"
                    ));
                    return;
                }
                self.unknown_keys(arg, at, &["workflow", "status", "count"]);
                if let Some(s) = arg.get("status")
                    && !matches!(s.as_str(), Some("ok" | "error"))
                {
                    self.say(format!("{at}.status: takes 'ok' or 'error'"));
                }
                self.count(arg.get("count"), at);
            }
            "trail" => {
                if arg.as_map().is_none() {
                    self.say(format!(
                        "{at}: takes a mapping {{ to?, kind?, reason?, count }}"
                    ));
                    return;
                }
                self.unknown_keys(arg, at, &["to", "kind", "reason", "count"]);
                if ["to", "kind", "reason"]
                    .iter()
                    .all(|k| arg.get(k).is_none())
                {
                    self.say(format!(
                        "{at}: declare at least one of 'to'/'kind'/'reason' to match against"
                    ));
                }
                if arg.get("count").is_none() {
                    self.say(format!(
                        "{at}.count: is required (the number of matching steps)"
                    ));
                }
                self.count(arg.get("count"), at);
            }
            "variables" => {
                if arg.as_map().is_none() || arg.get("expect").and_then(Node::as_map).is_none() {
                    self.say(format!(
                        "{at}: takes a mapping {{ expect, path?, locked? }}"
                    ));
                    return;
                }
                self.unknown_keys(arg, at, &["expect", "path", "locked"]);
            }
            _ => {
                // grade
                if arg.as_map().is_none() {
                    self.say(format!("{at}: takes a mapping {{ closedQA, atLeast }}"));
                    return;
                }
                self.unknown_keys(arg, at, &["closedQA", "atLeast"]);
                if arg
                    .get("closedQA")
                    .and_then(Node::as_str)
                    .is_none_or(|s| s.trim().is_empty())
                {
                    self.say(format!(
                        "{at}.closedQA: takes the criterion string the judge grades against"
                    ));
                }
                let ok = matches!(arg.get("atLeast").map(|n| &n.value), Some(Value::Number(x)) if (0.0..=1.0).contains(x));
                if !ok {
                    self.say(format!("{at}.atLeast: takes a number between 0 and 1"));
                }
            }
        }
    }

    fn count(&mut self, n: Option<&Node>, at: &str) {
        if let Some(n) = n {
            let ok = matches!(n.value, Value::Number(x) if x >= 0.0 && x.fract() == 0.0);
            if !ok {
                self.say(format!("{at}.count: takes a whole number ≥ 0"));
            }
        }
    }

    fn tokens(&mut self, n: Option<&Node>, at: &str) {
        let Some(n) = n else { return };
        let items: Vec<(String, &Node)> = match n.as_seq() {
            Some(list) => list
                .iter()
                .enumerate()
                .map(|(i, t)| (format!("{at}[{i}]"), t))
                .collect(),
            None => vec![(at.to_string(), n)],
        };
        for (path, t) in items {
            match t.as_str() {
                Some(s) => {
                    if let Some(problem) = regex_token_problem(s) {
                        self.say(format!("{path}: malformed regex \"{s}\": {problem}"));
                    }
                }
                None => self.say(format!(
                    "{path}: takes a string (a substring, or /pattern/flags)"
                )),
            }
        }
    }
}

/// For a `/pattern/flags` token, a structural problem with the pattern (unbalanced
/// brackets or parentheses, unknown flags); plain strings have none.
fn regex_token_problem(token: &str) -> Option<String> {
    let body = token.strip_prefix('/')?;
    let end = body.rfind('/')?;
    let (pattern, flags) = (&body[..end], &body[end + 1..]);
    if !flags.chars().all(|c| c.is_ascii_lowercase()) {
        return None;
    }
    if let Some(f) = flags.chars().find(|c| !"dgimsuyv".contains(*c)) {
        return Some(format!(
            "Invalid flags supplied to RegExp constructor '{f}'"
        ));
    }
    let (mut parens, mut in_class, mut escaped) = (0i32, false, false);
    for c in pattern.chars() {
        if escaped {
            escaped = false;
            continue;
        }
        match c {
            '\\' => escaped = true,
            '[' if !in_class => in_class = true,
            ']' if in_class => in_class = false,
            '(' if !in_class => parens += 1,
            ')' if !in_class => {
                parens -= 1;
                if parens < 0 {
                    return Some("Unmatched ')'".to_string());
                }
            }
            _ => {}
        }
    }
    if in_class {
        return Some("Unterminated character class".to_string());
    }
    if parens > 0 {
        return Some("Unterminated group".to_string());
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problems(text: &str) -> Vec<String> {
        check_case(text).err().unwrap_or_default()
    }

    #[test]
    fn a_good_case_passes_and_reports_its_facts() {
        let facts = check_case(
            "title: Refund over the limit\ndescription: Asks for a refund and expects a park.\ntrigger: { id: email }\nworkspace:\n  scratchpad/a.json: { from: fixtures/a.json }\n  notes.md: hello\nsteps:\n  - send: refund please\n  - parked: decision\n  - reply: { includes: [refund, '/approv(e|al)/i'] }\n  - decide: { to: closed }\n  - reachedState: closed\n",
        )
        .expect("valid");
        assert_eq!(facts.trigger.as_deref(), Some("email"));
        assert_eq!(
            facts.fixtures,
            vec![FixtureRef {
                path: "scratchpad/a.json".into(),
                from: "fixtures/a.json".into()
            }]
        );
    }

    #[test]
    fn schema_problems_are_named() {
        let p = problems("title: x\ndescription: y\nversion: 2\n");
        assert_eq!(
            p,
            vec![
                "unknown key 'version' (known: title, description, skip, trigger, variables, workspace, mocks, steps)"
            ]
        );
        let long = "t".repeat(61);
        let p = problems(&format!("title: {long}\ndescription: y\n"));
        assert!(
            p[0].starts_with("title: 'title' must be at most 60 characters (got 61)"),
            "{p:?}"
        );
        let p = problems("title: x\n");
        assert!(p[0].starts_with("'description' is required"), "{p:?}");
        let p = problems(
            "title: x\ndescription: y\nsteps:\n  - reachedState: done\n  - bogus: 1\n  - send: hi\n  - reply: { includes: '/(a/' }\n",
        );
        assert!(
            p[0].contains("assertion 'reachedState' has no preceding action"),
            "{p:?}"
        );
        assert!(p[1].starts_with("steps[1]: unknown step 'bogus' (actions: send, decide, deliver; assertions: succeeded, raised,"), "{p:?}");
        assert!(
            p[2].starts_with("steps[3].reply.includes: malformed regex \"/(a/\""),
            "{p:?}"
        );
        assert_eq!(
            problems("- a\n"),
            vec!["a test case is a YAML mapping (title, description, steps, ...)"]
        );
    }
}

//! Layer 1: the strict shape of `workflow.yaml`.
//!
//! A hand-written walker over the positioned YAML tree. It builds the typed
//! [`Workflow`] and, beside it, every shape issue with the message the original
//! printed (zod 4 defaults where the original used them), the dotted field path,
//! and the line/column of the offending node. Issue order follows the original:
//! an object's known fields in schema order, then its unknown keys.

mod entries;
mod hooks;
pub(crate) mod keys;
mod removed;
mod state;
mod suggest;
mod triggers;

use indexmap::IndexMap;

use crate::diagnostic::Diagnostic;
use crate::jsfmt::{js_number, json_of};
use crate::model::*;
use crate::yaml::{Node, Pos, Value};

pub(crate) use keys::TRIGGER as DECLARATION_KEYS;
pub(crate) use state::walk_state;

/// The largest integer a double holds exactly.
const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

/// One shape issue. `hard` marks failures that rule an alternative out
/// (wrong kind, missing key, bad enum value) as opposed to soft ones
/// (unknown keys, patterns, ranges, custom predicates).
#[derive(Debug, Clone)]
pub(crate) struct Issue {
    pub path: String,
    pub message: String,
    pub pos: Pos,
    pub hard: bool,
}

impl Issue {
    pub(crate) fn into_diagnostic(self) -> Diagnostic {
        Diagnostic::error(&self.path, self.message).at(Some(self.pos))
    }
}

/// Collects issues while walking.
#[derive(Debug, Default)]
pub(crate) struct Shape {
    pub issues: Vec<Issue>,
}

/// `path.key`, or `key` at the root.
pub(crate) fn child(path: &str, key: &str) -> String {
    if path.is_empty() {
        key.to_string()
    } else {
        format!("{path}.{key}")
    }
}

/// `path.i`.
pub(crate) fn index(path: &str, i: usize) -> String {
    child(path, &i.to_string())
}

/// Whether a non-negative or a strictly positive integer is wanted.
#[derive(Clone, Copy)]
pub(crate) enum IntRule {
    Positive,
    NonNegative,
}

impl Shape {
    pub(crate) fn hard(&mut self, path: &str, pos: Pos, message: impl Into<String>) {
        self.issues.push(Issue {
            path: path.to_string(),
            message: message.into(),
            pos,
            hard: true,
        });
    }
    pub(crate) fn soft(&mut self, path: &str, pos: Pos, message: impl Into<String>) {
        self.issues.push(Issue {
            path: path.to_string(),
            message: message.into(),
            pos,
            hard: false,
        });
    }
    pub(crate) fn is_clean(&self) -> bool {
        self.issues.is_empty()
    }
    pub(crate) fn any_hard(&self) -> bool {
        self.issues.iter().any(|i| i.hard)
    }

    /// `Invalid input: expected <what>, received <kind>`.
    pub(crate) fn expected(&mut self, node: &Node, path: &str, what: &str) {
        self.hard(
            path,
            node.pos,
            format!("Invalid input: expected {what}, received {}", node.kind()),
        );
    }

    /// A mapping, or the zod "expected object" issue.
    pub(crate) fn object<'a>(
        &mut self,
        node: &'a Node,
        path: &str,
    ) -> Option<&'a [crate::yaml::Entry]> {
        let m = node.as_map();
        if m.is_none() {
            self.expected(node, path, "object");
        }
        m
    }

    /// A sequence, or the zod "expected array" issue.
    pub(crate) fn array<'a>(&mut self, node: &'a Node, path: &str) -> Option<&'a [Node]> {
        let s = node.as_seq();
        if s.is_none() {
            self.expected(node, path, "array");
        }
        s
    }

    /// Any string.
    pub(crate) fn string(&mut self, node: &Node, path: &str) -> Option<String> {
        match node.as_str() {
            Some(s) => Some(s.to_string()),
            None => {
                self.expected(node, path, "string");
                None
            }
        }
    }

    /// A string with something in it; one message for every failure.
    pub(crate) fn nonempty(&mut self, node: &Node, path: &str) -> Option<String> {
        match node.as_str() {
            Some(s) if !s.trim().is_empty() => Some(s.to_string()),
            Some(_) => {
                self.soft(path, node.pos, "must be a non-empty string");
                None
            }
            None => {
                self.hard(path, node.pos, "must be a non-empty string");
                None
            }
        }
    }

    /// A boolean.
    pub(crate) fn boolean(&mut self, node: &Node, path: &str) -> Option<bool> {
        match node.value {
            Value::Bool(b) => Some(b),
            _ => {
                self.expected(node, path, "boolean");
                None
            }
        }
    }

    /// A finite number.
    pub(crate) fn number(&mut self, node: &Node, path: &str) -> Option<f64> {
        match node.value {
            Value::Number(n) if n.is_finite() => Some(n),
            _ => {
                self.expected(node, path, "number");
                None
            }
        }
    }

    /// An integer with zod's messages.
    pub(crate) fn int(&mut self, node: &Node, path: &str, rule: IntRule) -> Option<u64> {
        let n = self.number(node, path)?;
        if n.fract() != 0.0 {
            self.hard(
                path,
                node.pos,
                "Invalid input: expected int, received number",
            );
            return None;
        }
        if n.abs() > MAX_SAFE {
            self.soft(
                path,
                node.pos,
                "Too big: expected int to be <=9007199254740991",
            );
            return None;
        }
        match rule {
            IntRule::Positive if n <= 0.0 => {
                self.soft(path, node.pos, "Too small: expected number to be >0");
                None
            }
            IntRule::NonNegative if n < 0.0 => {
                self.soft(path, node.pos, "Too small: expected number to be >=0");
                None
            }
            // Whole, non-negative and within 2^53: exact in a u64.
            #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
            _ => Some(n as u64),
        }
    }

    /// A positive integer where every failure reads `must be a positive number`.
    pub(crate) fn budget_int(&mut self, node: &Node, path: &str) -> Option<u64> {
        match node.value {
            Value::Number(n) if n.is_finite() && n.fract() == 0.0 && n > 0.0 && n <= MAX_SAFE =>
            {
                #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
                Some(n as u64)
            }
            _ => {
                self.hard(path, node.pos, "must be a positive number");
                None
            }
        }
    }

    /// A budget in US dollars: a positive finite number.
    pub(crate) fn budget_usd(&mut self, node: &Node, path: &str) -> Option<f64> {
        match node.value {
            Value::Number(n) if n.is_finite() && n > 0.0 => Some(n),
            _ => {
                self.hard(path, node.pos, "must be a positive number");
                None
            }
        }
    }

    /// A list of strings.
    pub(crate) fn strings(&mut self, node: &Node, path: &str) -> Option<Vec<String>> {
        let items = self.array(node, path)?;
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            if let Some(s) = self.string(item, &index(path, i)) {
                out.push(s);
            }
        }
        (out.len() == items.len()).then_some(out)
    }

    /// `model` fields: an id string, never a block.
    pub(crate) fn model_id(&mut self, node: &Node, path: &str) -> Option<String> {
        match node.as_str() {
            Some(s) if !s.trim().is_empty() => Some(s.to_string()),
            Some(_) => {
                self.soft(path, node.pos, "must be a non-empty string");
                None
            }
            None => {
                self.hard(
                    path,
                    node.pos,
                    "must be a model id string: the file declares only which model to use. \
                     The endpoint, credentials and sampling options (temperature, max tokens) \
                     belong to the assembly (the ARCHMAX_* environment or the host's modelFactory).",
                );
                None
            }
        }
    }

    /// Host data: any mapping.
    pub(crate) fn metadata(&mut self, node: &Node, path: &str) -> Option<Metadata> {
        self.object(node, path)?;
        match node.to_json() {
            serde_json::Value::Object(m) => Some(m),
            _ => None,
        }
    }

    /// Reports the keys of `node` that are not in `known`: removed keys one by one
    /// with their migration guidance, the rest together as zod did.
    pub(crate) fn strict(&mut self, node: &Node, path: &str, known: &[&str]) {
        let Some(entries) = node.as_map() else { return };
        let mut unknown: Vec<(&str, Pos)> = Vec::new();
        for e in entries {
            if known.contains(&e.key.as_str()) {
                continue;
            }
            if let Some(guidance) = removed::guidance(path, &e.key) {
                self.soft(
                    path,
                    e.key_pos,
                    format!("Unrecognized key: \"{}\" — {guidance}", e.key),
                );
            } else {
                unknown.push((e.key.as_str(), e.key_pos));
            }
        }
        if let Some(&(_, pos)) = unknown.first() {
            let names: Vec<String> = unknown.iter().map(|(k, _)| format!("\"{k}\"")).collect();
            let label = if unknown.len() == 1 { "key" } else { "keys" };
            let guesses: Vec<(&str, &str)> = unknown
                .iter()
                .filter_map(|(k, _)| suggest::nearest(k, known).map(|g| (*k, g)))
                .collect();
            let hint = match guesses.as_slice() {
                [] => String::new(),
                [(_, g)] if unknown.len() == 1 => format!(" — did you mean \"{g}\"?"),
                several => {
                    let each: Vec<String> = several
                        .iter()
                        .map(|(k, g)| format!("\"{g}\" for \"{k}\""))
                        .collect();
                    format!(" — did you mean {}?", each.join(", "))
                }
            };
            self.soft(
                path,
                pos,
                format!("Unrecognized {label}: {}{hint}", names.join(", ")),
            );
        }
    }
}

/// Walks the whole document. `root` must be a mapping.
pub(crate) fn walk(root: &Node) -> (Option<Workflow>, Vec<Issue>) {
    let mut s = Shape::default();
    let mut wf = Workflow {
        title: None,
        instructions: None,
        disabled: None,
        runtime: None,
        budget: None,
        settings: None,
        tests: None,
        tools: None,
        skills: None,
        mounts: None,
        extensions: None,
        metadata: None,
        states: IndexMap::new(),
    };
    if let Some(n) = root.get("title") {
        wf.title = s.string(n, "title");
    }
    if let Some(n) = root.get("instructions") {
        wf.instructions = s.nonempty(n, "instructions");
    }
    if let Some(n) = root.get("disabled") {
        match n.value {
            Value::Bool(b) => wf.disabled = Some(b),
            _ => s.hard(
                "disabled",
                n.pos,
                format!(
                    "Machine spec 'disabled' must be a boolean (true or false); got {}. \
                     The runtime reads every value other than an absent key, null or false as \
                     disabled (fail-closed), so write true or false.",
                    json_of(&n.to_json())
                ),
            ),
        }
    }
    if let Some(n) = root.get("runtime") {
        wf.runtime = runtime(&mut s, n);
    }
    if let Some(n) = root.get("budget") {
        wf.budget = workflow_budget(&mut s, n);
    }
    if let Some(n) = root.get("settings") {
        wf.settings = settings(&mut s, n);
    }
    if let Some(n) = root.get("tools") {
        wf.tools = entries::workflow_tools(&mut s, n);
    }
    if let Some(n) = root.get("skills") {
        wf.skills = entries::workflow_skills(&mut s, n);
    }
    if let Some(n) = root.get("mounts") {
        wf.mounts = entries::workflow_mounts(&mut s, n);
    }
    if let Some(n) = root.get("tests") {
        wf.tests = tests_config(&mut s, n);
    }
    if let Some(n) = root.get("extensions") {
        wf.extensions = extensions(&mut s, n);
    }
    if let Some(n) = root.get("metadata") {
        wf.metadata = s.metadata(n, "metadata");
    }
    match root.get("states") {
        Some(n) => match n.as_map() {
            Some(states) => {
                for e in states {
                    let path = child("states", &e.key);
                    if let Some(st) = walk_state(&mut s, &e.value, &path) {
                        wf.states.insert(e.key.clone(), st);
                    }
                }
            }
            None => s.hard(
                "states",
                n.pos,
                "Machine spec is missing or has empty 'states'",
            ),
        },
        None => s.hard(
            "states",
            root.pos,
            "Machine spec is missing or has empty 'states'",
        ),
    }
    s.strict(root, "", keys::WORKFLOW);
    let ok = s.is_clean();
    (ok.then_some(wf), s.issues)
}

fn runtime(s: &mut Shape, n: &Node) -> Option<RuntimeDecl> {
    s.object(n, "runtime")?;
    let mut r = RuntimeDecl {
        engine: None,
        version: None,
    };
    if let Some(e) = n.get("engine") {
        r.engine = s.string(e, "runtime.engine");
    }
    if let Some(v) = n.get("version") {
        match &v.value {
            Value::Str(_) | Value::Number(_) => r.version = Some(v.to_json()),
            _ => s.hard("runtime.version", v.pos, "Invalid input"),
        }
    }
    s.strict(n, "runtime", keys::RUNTIME);
    Some(r)
}

fn workflow_budget(s: &mut Shape, n: &Node) -> Option<WorkflowBudget> {
    s.object(n, "budget")?;
    let mut b = WorkflowBudget {
        max_model_calls: None,
        max_turn_tokens: None,
        max_turn_cost_usd: None,
        max_session_tokens: None,
        max_session_cost_usd: None,
    };
    if let Some(v) = n.get("maxModelCalls") {
        b.max_model_calls = s.budget_int(v, "budget.maxModelCalls");
    }
    if let Some(v) = n.get("maxTurnTokens") {
        b.max_turn_tokens = s.budget_int(v, "budget.maxTurnTokens");
    }
    if let Some(v) = n.get("maxSessionTokens") {
        b.max_session_tokens = s.budget_int(v, "budget.maxSessionTokens");
    }
    if let Some(v) = n.get("maxTurnCostUsd") {
        b.max_turn_cost_usd = s.budget_usd(v, "budget.maxTurnCostUsd");
    }
    if let Some(v) = n.get("maxSessionCostUsd") {
        b.max_session_cost_usd = s.budget_usd(v, "budget.maxSessionCostUsd");
    }
    s.strict(n, "budget", keys::WORKFLOW_BUDGET);
    Some(b)
}

fn settings(s: &mut Shape, n: &Node) -> Option<Settings> {
    s.object(n, "settings")?;
    let mut out = Settings {
        model: None,
        timeout_ms: None,
        memory_limit_bytes: None,
        max_ptc_calls: None,
        max_result_chars: None,
        prompt_cache: None,
    };
    if let Some(v) = n.get("model") {
        out.model = s.model_id(v, "settings.model");
    }
    if let Some(v) = n.get("timeoutMs") {
        out.timeout_ms = s.int(v, "settings.timeoutMs", IntRule::Positive);
    }
    if let Some(v) = n.get("memoryLimitBytes") {
        out.memory_limit_bytes = s.int(v, "settings.memoryLimitBytes", IntRule::Positive);
    }
    if let Some(v) = n.get("maxPtcCalls") {
        out.max_ptc_calls = if v.is_null() {
            Some(None)
        } else {
            s.int(v, "settings.maxPtcCalls", IntRule::NonNegative)
                .map(Some)
        };
    }
    if let Some(v) = n.get("maxResultChars") {
        out.max_result_chars = s.int(v, "settings.maxResultChars", IntRule::Positive);
    }
    if let Some(v) = n.get("prompt_cache") {
        out.prompt_cache = prompt_cache(s, v);
    }
    s.strict(n, "settings", keys::SETTINGS);
    Some(out)
}

fn prompt_cache(s: &mut Shape, n: &Node) -> Option<PromptCache> {
    let path = "settings.prompt_cache";
    s.object(n, path)?;
    let mut pc = PromptCache {
        enabled: None,
        ttl: None,
    };
    if let Some(v) = n.get("enabled") {
        pc.enabled = s.boolean(v, &child(path, "enabled"));
    }
    if let Some(v) = n.get("ttl") {
        match v.as_str() {
            Some(t @ ("5m" | "1h")) => pc.ttl = Some(t.to_string()),
            _ => s.hard(
                &child(path, "ttl"),
                v.pos,
                "Invalid option: expected one of \"5m\"|\"1h\"",
            ),
        }
    }
    s.strict(n, path, keys::PROMPT_CACHE);
    Some(pc)
}

fn tests_config(s: &mut Shape, n: &Node) -> Option<TestsConfig> {
    s.object(n, "tests")?;
    let mut t = TestsConfig {
        max_concurrency: None,
        case_timeout_ms: None,
        judge: None,
    };
    if let Some(v) = n.get("maxConcurrency") {
        t.max_concurrency = s.int(v, "tests.maxConcurrency", IntRule::Positive);
    }
    if let Some(v) = n.get("caseTimeoutMs") {
        t.case_timeout_ms = s.int(v, "tests.caseTimeoutMs", IntRule::Positive);
    }
    if let Some(v) = n.get("judge") {
        t.judge = judge(s, v);
    }
    s.strict(n, "tests", keys::TESTS);
    Some(t)
}

fn judge(s: &mut Shape, n: &Node) -> Option<Judge> {
    let path = "tests.judge";
    s.object(n, path)?;
    let mut j = Judge {
        model: None,
        model_options: None,
    };
    if let Some(v) = n.get("model") {
        j.model = s.model_id(v, &child(path, "model"));
    }
    if let Some(v) = n.get("modelOptions") {
        let mpath = "tests.judge.modelOptions";
        if s.object(v, mpath).is_some() {
            let mut o = JudgeModelOptions {
                temperature: None,
                max_tokens: None,
            };
            if let Some(t) = v.get("temperature") {
                let tp = child(mpath, "temperature");
                if let Some(x) = s.number(t, &tp) {
                    if x < 0.0 {
                        s.soft(&tp, t.pos, "Too small: expected number to be >=0");
                    } else {
                        o.temperature = Some(x);
                    }
                }
            }
            if let Some(m) = v.get("maxTokens") {
                o.max_tokens = s.int(m, &child(mpath, "maxTokens"), IntRule::Positive);
            }
            s.strict(v, mpath, keys::JUDGE_MODEL_OPTIONS);
            j.model_options = Some(o);
        }
    }
    s.strict(n, path, keys::JUDGE);
    Some(j)
}

fn extensions(s: &mut Shape, n: &Node) -> Option<Extensions> {
    s.object(n, "extensions")?;
    let mut x = Extensions { hooks: None };
    if let Some(v) = n.get("hooks") {
        x.hooks = s.strings(v, "extensions.hooks");
    }
    s.strict(n, "extensions", keys::EXTENSIONS);
    Some(x)
}

/// The variable-name message the original printed for a bad name.
pub(crate) fn bad_variable_name(name: &str) -> String {
    format!(
        "'{name}' is not a valid run-variable name. Use lowercase letters, digits and \
         underscores, starting with a letter (e.g. 'order_id')."
    )
}

/// JS `String(v)` of a YAML node, for messages.
pub(crate) fn js_string(node: &Node) -> String {
    match &node.value {
        Value::Number(n) => js_number(*n),
        _ => crate::jsfmt::js_string_of(&node.to_json()),
    }
}

//! A case file read for running: checked by `archmax_spec::case` (so a run rejects exactly
//! what `archmax validate` reports), then its typed form.

use archmax_machine::mocks::ToolMock;
use archmax_spec::case::check_case_at;
use archmax_spec::yaml::Node;
use serde_json::{Map, Value};

/// A discovered case file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CaseFile {
    /// Workspace-relative path (`workflows/<slug>/tests/<…>.test.yaml`).
    pub path: String,
    /// The path relative to `tests/` without the `.test.yaml`/`.test.yml` extension.
    pub id: String,
}

impl CaseFile {
    /// The case file at workspace-relative `path` of `workflow`'s suite.
    pub fn new(workflow: &str, path: &str) -> CaseFile {
        CaseFile::in_dir(&format!("workflows/{workflow}/tests"), path)
    }

    /// The case file at `path` of the tests folder `dir` (both workspace-relative): its id is
    /// the path under `dir` without the extension (the whole path when it is not under `dir`).
    pub fn in_dir(dir: &str, path: &str) -> CaseFile {
        let prefix = format!("{}/", dir.trim_end_matches('/'));
        let rel = path.strip_prefix(&prefix).unwrap_or(path);
        let id = rel
            .strip_suffix(".test.yaml")
            .or_else(|| rel.strip_suffix(".test.yml"))
            .unwrap_or(rel);
        CaseFile {
            path: path.to_string(),
            id: id.to_string(),
        }
    }
}

/// A `workspace:` entry.
#[derive(Debug, Clone, PartialEq)]
pub enum Seed {
    /// Inline content: a string verbatim, anything else as JSON.
    Inline(Value),
    /// A fixture file under `tests/` (`{ from: <path> }`).
    From(String),
}

/// One step of a case.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `send: <message>`.
    Send(String),
    /// `decide: { to, comment? }`.
    Decide {
        /// The target state.
        to: String,
        /// The person's comment.
        comment: Option<String>,
    },
    /// `deliver: { trigger, variables? }`.
    Deliver {
        /// The trigger id.
        trigger: String,
        /// Variables delivered with it.
        variables: Map<String, Value>,
    },
    /// An assertion: its kind and its argument as written.
    Assert {
        /// The assertion name (`reachedState`, `reply`, …).
        kind: String,
        /// The argument, as JSON.
        arg: Value,
    },
}

impl Step {
    /// Whether this step acts on the run (`send`, `decide`, `deliver`).
    pub fn is_action(&self) -> bool {
        !matches!(self, Step::Assert { .. })
    }
}

/// A parsed case document.
#[derive(Debug, Clone, PartialEq)]
pub struct Case {
    /// Whitespace-collapsed title.
    pub title: String,
    /// Whitespace-collapsed description.
    pub description: String,
    /// Why the case is skipped, when it is.
    pub skip: Option<String>,
    /// `trigger.id`.
    pub trigger: Option<String>,
    /// Seeded (locked) variables sent with every `send`.
    pub variables: Map<String, Value>,
    /// Session files seeded before the first step, in order.
    pub workspace: Vec<(String, Seed)>,
    /// Tool mocks, in declaration order.
    pub mocks: Vec<ToolMock>,
    /// The steps, in order.
    pub steps: Vec<Step>,
}

impl Case {
    /// The document as the testing API hands it to JS (`parseCaseDocument`): title and
    /// description collapsed, mocks as `{ name, whenInput?, result }`, steps as written.
    pub fn to_json(&self) -> Value {
        let mut m = Map::new();
        m.insert("title".into(), Value::String(self.title.clone()));
        m.insert(
            "description".into(),
            Value::String(self.description.clone()),
        );
        if let Some(s) = &self.skip {
            m.insert("skip".into(), Value::String(s.clone()));
        }
        if let Some(t) = &self.trigger {
            m.insert("trigger".into(), serde_json::json!({ "id": t }));
        }
        if !self.variables.is_empty() {
            m.insert("variables".into(), Value::Object(self.variables.clone()));
        }
        if !self.workspace.is_empty() {
            let w: Map<String, Value> = self
                .workspace
                .iter()
                .map(|(path, seed)| {
                    let v = match seed {
                        Seed::Inline(v) => v.clone(),
                        Seed::From(f) => serde_json::json!({ "from": f }),
                    };
                    (path.clone(), v)
                })
                .collect();
            m.insert("workspace".into(), Value::Object(w));
        }
        if !self.mocks.is_empty() {
            let list = self
                .mocks
                .iter()
                .map(|mock| {
                    let mut o = Map::new();
                    o.insert("name".into(), Value::String(mock.name.clone()));
                    if let Some(w) = &mock.when_input {
                        o.insert("whenInput".into(), w.clone());
                    }
                    o.insert("result".into(), mock.result.clone());
                    Value::Object(o)
                })
                .collect();
            m.insert("mocks".into(), Value::Array(list));
        }
        let steps = self
            .steps
            .iter()
            .map(|step| match step {
                Step::Send(text) => serde_json::json!({ "send": text }),
                Step::Decide { to, comment } => match comment {
                    Some(c) => serde_json::json!({ "decide": { "to": to, "comment": c } }),
                    None => serde_json::json!({ "decide": { "to": to } }),
                },
                Step::Deliver { trigger, variables } if variables.is_empty() => {
                    serde_json::json!({ "deliver": { "trigger": trigger } })
                }
                Step::Deliver { trigger, variables } => {
                    serde_json::json!({ "deliver": { "trigger": trigger, "variables": variables } })
                }
                Step::Assert { kind, arg } => {
                    let mut o = Map::new();
                    o.insert(kind.clone(), arg.clone());
                    Value::Object(o)
                }
            })
            .collect();
        m.insert("steps".into(), Value::Array(steps));
        Value::Object(m)
    }
}

fn collapse(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

fn text(n: Option<&Node>) -> Option<String> {
    n.and_then(Node::as_str).map(str::to_string)
}

fn object(n: Option<&Node>) -> Map<String, Value> {
    match n.map(Node::to_json) {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    }
}

/// Reads case `file` from `text`. `Err` is the case's failure message:
/// `<file>: <every problem joined by "; ">`, the problems as `archmax validate` words them.
pub fn parse_case(file: &str, text_of_file: &str) -> Result<Case, String> {
    if let Err(problems) = check_case_at(text_of_file) {
        let list: Vec<&str> = problems.iter().map(|(m, _)| m.as_str()).collect();
        return Err(format!("{file}: {}", list.join("; ")));
    }
    // The checker accepted it, so it is a mapping of the documented shapes.
    let root = match archmax_spec::yaml::parse(text_of_file) {
        Ok(Some(n)) => n,
        Ok(None) => return Err(format!("{file}: a test case is a YAML mapping")),
        Err(e) => return Err(format!("{file}: YAML parse error: {e}")),
    };
    let workspace = root
        .get("workspace")
        .and_then(Node::as_map)
        .unwrap_or(&[])
        .iter()
        .map(|e| {
            let single_from = e
                .value
                .as_map()
                .is_some_and(|m| m.len() == 1 && m[0].key == "from");
            let seed = match e.value.get("from").and_then(Node::as_str) {
                Some(from) if single_from => Seed::From(from.to_string()),
                _ => Seed::Inline(e.value.to_json()),
            };
            (e.key.clone(), seed)
        })
        .collect();
    let mocks = root
        .get("mocks")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .map(|m| ToolMock {
            name: text(m.get("tool")).unwrap_or_default(),
            when_input: m.get("whenInput").map(Node::to_json),
            result: m.get("result").map(Node::to_json).unwrap_or(Value::Null),
        })
        .collect();
    let steps = root
        .get("steps")
        .and_then(Node::as_seq)
        .unwrap_or(&[])
        .iter()
        .filter_map(|s| s.as_map().and_then(|m| m.first()))
        .map(|e| {
            let arg = &e.value;
            match e.key.as_str() {
                "send" => Step::Send(text(Some(arg)).unwrap_or_default()),
                "decide" => Step::Decide {
                    to: text(arg.get("to")).unwrap_or_default().trim().to_string(),
                    comment: text(arg.get("comment")),
                },
                "deliver" => Step::Deliver {
                    trigger: text(arg.get("trigger")).unwrap_or_default(),
                    variables: object(arg.get("variables")),
                },
                kind => Step::Assert {
                    kind: kind.to_string(),
                    arg: arg.to_json(),
                },
            }
        })
        .collect();
    Ok(Case {
        title: collapse(&text(root.get("title")).unwrap_or_default()),
        description: collapse(&text(root.get("description")).unwrap_or_default()),
        skip: text(root.get("skip")),
        trigger: root.get("trigger").and_then(|t| text(t.get("id"))),
        variables: object(root.get("variables")),
        workspace,
        mocks,
        steps,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_case_reads_into_its_steps_seeds_and_mocks() {
        let c = parse_case(
            "workflows/w/tests/a.test.yaml",
            "title: '  Refund   over the limit '\ndescription: Asks.\ntrigger: { id: email }\nvariables: { order_id: KK-1 }\nworkspace:\n  scratchpad/a.json: { from: fixtures/a.json }\n  notes.md: hello\nmocks:\n  - { tool: crm, whenInput: { id: A }, result: { ok: true } }\nsteps:\n  - send: refund please\n  - parked: decision\n  - decide: { to: closed, comment: fine }\n  - deliver: { trigger: paid, variables: { amount: 3 } }\n",
        )
        .unwrap();
        assert_eq!(c.title, "Refund over the limit");
        assert_eq!(c.trigger.as_deref(), Some("email"));
        assert_eq!(c.variables.get("order_id"), Some(&json!("KK-1")));
        assert_eq!(
            c.workspace,
            vec![
                (
                    "scratchpad/a.json".into(),
                    Seed::From("fixtures/a.json".into())
                ),
                ("notes.md".into(), Seed::Inline(json!("hello")))
            ]
        );
        assert_eq!(c.mocks[0].when_input, Some(json!({"id": "A"})));
        assert_eq!(
            c.steps,
            vec![
                Step::Send("refund please".into()),
                Step::Assert {
                    kind: "parked".into(),
                    arg: json!("decision")
                },
                Step::Decide {
                    to: "closed".into(),
                    comment: Some("fine".into())
                },
                Step::Deliver {
                    trigger: "paid".into(),
                    variables: json!({"amount": 3}).as_object().cloned().unwrap()
                },
            ]
        );
    }

    #[test]
    fn a_bad_case_is_its_files_problems_joined() {
        let e = parse_case("workflows/w/tests/b.test.yaml", "title: x\nversion: 1\n").unwrap_err();
        assert_eq!(
            e,
            "workflows/w/tests/b.test.yaml: unknown key 'version' (known: title, description, skip, trigger, variables, workspace, mocks, steps); 'description' is required: one or two sentences stating the scenario driven and what is asserted"
        );
        let f = CaseFile::new("w", "workflows/w/tests/refunds/approved.test.yml");
        assert_eq!(f.id, "refunds/approved");
    }
}

//! A session's run written out for later reading (`agent.emitRunArtifacts`): under the
//! session's `artifacts/` area, the workflow's topology (`graph.json`, `graph.mmd`), the
//! trajectory the host hands in (`trajectory.json`), and what the session's checkpoint holds:
//! `metadata.json` (runtime contract, package version, spec hash, usage), `trail.json` and
//! `variables.json`.
//!
//! ```text
//! graph.json       { nodes, edges: [{ source, target, conditional, label? }], entry?, finals, mermaid }
//! graph.mmd        the same graph as Mermaid
//! trajectory.json  { ...trajectory, sessionId }
//! metadata.json    { sessionId, workflow, runtimeContract, packageVersion, specHash?, usage? }
//! trail.json       { sessionId, workflow, steps }            governed, from the host's trail or the checkpoint
//! variables.json   { sessionId, workflow, variables: { name: { value, locked } } }   governed, checkpoint readable
//! ```
//!
//! Files are written through the session store's file area, confined as every write the
//! runtime makes itself.

use archmax_spec::Workflow;
use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::Harness;
use crate::error::RunError;

/// The folder under a session the artifacts go to.
pub const ARTIFACTS_DIR: &str = "artifacts";

/// One edge of the workflow's topology.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct GraphEdge {
    /// `__start__` or a state slug.
    pub source: String,
    /// A state slug.
    pub target: String,
    /// A trigger's start or an `on_error` route (not a declared transition).
    pub conditional: bool,
    /// The trigger id, the transition's description, or `on_error`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
}

/// The workflow's topology as `graph.json` holds it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct RunGraph {
    /// `__start__`, then the states in declaration order.
    pub nodes: Vec<String>,
    /// One start edge per trigger, the declared transitions, the `on_error` routes.
    pub edges: Vec<GraphEdge>,
    /// The state the `manual` trigger starts in, else the first state with a trigger, else the first.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub entry: Option<String>,
    /// The terminal states (no transitions).
    pub finals: Vec<String>,
    /// The graph as Mermaid (`graph TD;`, a human state as `{{slug}}`).
    pub mermaid: String,
}

fn mermaid_id(slug: &str) -> String {
    slug.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// The topology of `spec`: derived from the spec, so it is what the kernel enforces.
pub fn run_graph(spec: &Workflow) -> RunGraph {
    let mut edges = Vec::new();
    for (slug, state) in &spec.states {
        for trigger in state.triggers.iter().flat_map(|t| t.keys()) {
            edges.push(GraphEdge {
                source: "__start__".to_string(),
                target: slug.clone(),
                conditional: true,
                label: Some(trigger.clone()),
            });
        }
    }
    for (slug, state) in &spec.states {
        for t in state.edges() {
            edges.push(GraphEdge {
                source: slug.clone(),
                target: t.to.clone(),
                conditional: false,
                label: t.description.clone(),
            });
        }
        if let Some(target) = &state.on_error {
            edges.push(GraphEdge {
                source: slug.clone(),
                target: target.clone(),
                conditional: true,
                label: Some("on_error".to_string()),
            });
        }
    }
    let triggered = |name: Option<&str>| {
        spec.states
            .iter()
            .find(|(_, s)| {
                s.triggers
                    .as_ref()
                    .is_some_and(|t| name.is_none_or(|n| t.contains_key(n)))
            })
            .map(|(slug, _)| slug.clone())
    };
    let entry = triggered(Some("manual"))
        .or_else(|| triggered(None))
        .or_else(|| spec.states.keys().next().cloned());
    let mut lines = vec!["graph TD;".to_string()];
    for (slug, state) in &spec.states {
        let id = mermaid_id(slug);
        lines.push(if state.is_human() {
            format!("  {id}{{{{{slug}}}}};")
        } else {
            format!("  {id}[{slug}];")
        });
    }
    for e in &edges {
        let source = if e.source == "__start__" {
            e.source.clone()
        } else {
            mermaid_id(&e.source)
        };
        let arrow = if e.conditional { "-.->" } else { "-->" };
        let label = e
            .label
            .as_deref()
            .map(|l| format!("|{}|", l.replace('|', "/")))
            .unwrap_or_default();
        lines.push(format!(
            "  {source} {arrow}{label} {};",
            mermaid_id(&e.target)
        ));
    }
    RunGraph {
        nodes: std::iter::once("__start__".to_string())
            .chain(spec.states.keys().cloned())
            .collect(),
        finals: spec
            .states
            .iter()
            .filter(|(_, s)| s.is_terminal())
            .map(|(slug, _)| slug.clone())
            .collect(),
        edges,
        entry,
        mermaid: format!("{}\n", lines.join("\n")),
    }
}

/// What `emitRunArtifacts` writes for a session, besides its own checkpoint.
pub struct RunArtifacts<'a> {
    /// The trajectory the host recorded (written with the session id set).
    pub trajectory: Value,
    /// The audit trail to write instead of the checkpoint's.
    pub trail: Option<Value>,
    /// The package's version, for `metadata.json`.
    pub package_version: &'a str,
}

impl Harness {
    /// [`Harness::write_run_artifacts`], best-effort: a failure to write is a `warning` event
    /// (scope `run-artifacts`) and `Ok(None)`.
    ///
    /// Errors: `SessionStoreIdError` for a bad id.
    pub fn emit_run_artifacts(
        &self,
        id: &str,
        run: RunArtifacts<'_>,
    ) -> Result<Option<String>, RunError> {
        self.parse_session_id(id)?;
        match self.write_run_artifacts(id, run) {
            Ok(dir) => Ok(Some(dir)),
            Err(e) => {
                self.emitter.emit(
                    Some(id),
                    crate::events::Event::Warning {
                        scope: "run-artifacts".to_string(),
                        message: format!("failed to write artifacts for session '{id}': {e}"),
                    },
                );
                Ok(None)
            }
        }
    }

    /// Writes session `id`'s run artifacts under `<session>/artifacts/` and answers that
    /// folder, workspace-relative (`<id>/artifacts`). The trail and variables are written for
    /// a governed session whose checkpoint is readable (the trail also from `trail`).
    ///
    /// Errors: `SessionStoreIdError` for a bad id; `Store` when the files cannot be written.
    pub fn write_run_artifacts(&self, id: &str, run: RunArtifacts<'_>) -> Result<String, RunError> {
        let sid = self.parse_session_id(id)?;
        let state = self.session_state(sid.as_str()).ok().flatten();
        let workflow = self.workflow().to_string();
        let head = |extra: Vec<(&str, Value)>| {
            let mut m = Map::new();
            m.insert("sessionId".into(), json!(sid.as_str()));
            m.insert("workflow".into(), json!(workflow));
            for (k, v) in extra {
                m.insert(k.into(), v);
            }
            Value::Object(m)
        };
        let graph = run_graph(self.spec());
        let mut trajectory = match run.trajectory {
            Value::Object(m) => m,
            other => {
                let mut m = Map::new();
                m.insert("segments".into(), other);
                m
            }
        };
        trajectory.insert("sessionId".into(), json!(sid.as_str()));
        let mut metadata = vec![
            ("runtimeContract", json!(self.runtime_contract())),
            ("packageVersion", json!(run.package_version)),
        ];
        if let Some(s) = state.as_ref().filter(|_| !self.is_plain()) {
            metadata.push(("specHash", json!(s.spec_hash)));
        }
        if let Some(s) = state.as_ref().filter(|s| !s.usage.is_empty()) {
            metadata.push(("usage", json!(s.usage)));
        }
        let mut files: Vec<(&str, String)> = vec![
            ("graph.json", pretty(&json!(graph))),
            ("graph.mmd", format!("{}\n", graph.mermaid)),
            ("trajectory.json", pretty(&Value::Object(trajectory))),
            ("metadata.json", pretty(&head(metadata))),
        ];
        if !self.is_plain() {
            let steps = run.trail.or_else(|| state.as_ref().map(|s| json!(s.trail)));
            if let Some(steps) = steps {
                files.push(("trail.json", pretty(&head(vec![("steps", steps)]))));
            }
            if let Some(s) = &state {
                let variables: Map<String, Value> = s
                    .variables
                    .iter()
                    .map(|(name, v)| {
                        (
                            name.clone(),
                            json!({ "value": v.value, "locked": v.locked_by.is_some() }),
                        )
                    })
                    .collect();
                files.push((
                    "variables.json",
                    pretty(&head(vec![("variables", Value::Object(variables))])),
                ));
            }
        }
        let area = self.store.session_files(&sid).ok_or_else(|| {
            RunError::Store(format!(
                "the {} session store keeps no files for session '{}'",
                self.store.kind(),
                sid.as_str()
            ))
        })?;
        let base = area
            .dir
            .parent()
            .map_or_else(|| area.dir.clone(), std::path::Path::to_path_buf);
        let dir = area.dir.join(ARTIFACTS_DIR);
        for (name, text) in files {
            let path = dir.join(name);
            area.backend
                .write_confined(&base, &path, text.as_bytes())
                .map_err(|e| RunError::Store(format!("cannot write {name}: {e}")))?;
        }
        Ok(format!("{}/{ARTIFACTS_DIR}", sid.as_str()))
    }
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_graph_is_the_specs_topology() {
        let spec = archmax_spec::parse_machine_spec(
            "title: T\ninstructions: x\nstates:\n  draft:\n    triggers: { manual: }\n    on_error: review\n    transitions:\n      - to: review\n        description: Drafted | ready.\n  review:\n    type: human\n    transitions:\n      - to: done\n        type: approve\n        description: Approve.\n  done: {}\n",
        )
        .expect("spec");
        let g = run_graph(&spec);
        assert_eq!(g.nodes, ["__start__", "draft", "review", "done"]);
        assert_eq!(g.entry.as_deref(), Some("draft"));
        assert_eq!(g.finals, ["done"]);
        assert_eq!(
            g.mermaid,
            "graph TD;\n  draft[draft];\n  review{{review}};\n  done[done];\n  __start__ -.->|manual| draft;\n  draft -->|Drafted / ready.| review;\n  draft -.->|on_error| review;\n  review -->|Approve.| done;\n"
        );
    }
}

//! The diagram of a workflow: its states, edges (with descriptions), human and terminal
//! states, hooks and `on_error` edges, rendered as Mermaid, Graphviz DOT or a self-laid-out
//! SVG. `archmax graph` prints it; the inbox of `archmax serve` shows the same one.
//!
//! ```
//! use archmax_spec::graph::{Graph, Format};
//!
//! let wf = archmax_spec::parse_machine_spec(
//!     "states:\n  a:\n    triggers: { manual: }\n    instructions: Do it.\n    transitions:\n      - to: b\n        description: done\n  b:\n    instructions: End.\n",
//! ).expect("parses");
//! let text = Graph::of(&wf).render(Format::Mermaid);
//! assert!(text.starts_with("flowchart TD\n"));
//! assert!(text.contains("s0 -->|\"done\"| s1"));
//! ```

pub use crate::graph_model::{Edge, EdgeKind, Graph, Node, NodeKind};
use crate::model::{HookSpec, State, Workflow};

/// The formats a diagram renders to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// A Mermaid `flowchart` (what the README and GitHub render).
    Mermaid,
    /// Graphviz DOT.
    Dot,
    /// A standalone SVG document, laid out here (no external tool).
    Svg,
}

impl Format {
    /// The format named `name` (`mermaid`, `dot`, `svg`), else `None`.
    pub fn parse(name: &str) -> Option<Format> {
        match name {
            "mermaid" => Some(Format::Mermaid),
            "dot" => Some(Format::Dot),
            "svg" => Some(Format::Svg),
            _ => None,
        }
    }
}

fn hooks_of(phase: &str, spec: Option<&HookSpec>) -> Vec<String> {
    spec.map(|s| {
        s.hooks()
            .iter()
            .map(|h| match h {
                crate::model::Hook::Script { script, .. } => format!("{phase}: {script}"),
                other => format!("{phase}: {}", other.kind()),
            })
            .collect()
    })
    .unwrap_or_default()
}

fn node_of(slug: &str, state: &State) -> Node {
    let kind = if state.is_terminal() {
        NodeKind::Terminal
    } else if state.is_human() {
        NodeKind::Human
    } else {
        NodeKind::Agent
    };
    let mut hooks = hooks_of("before", state.before.as_ref());
    hooks.extend(hooks_of("after", state.after.as_ref()));
    Node {
        slug: slug.to_string(),
        label: state
            .title
            .as_deref()
            .map(str::trim)
            .filter(|t| !t.is_empty())
            .unwrap_or(slug)
            .to_string(),
        kind,
        entry: state.triggers.as_ref().is_some_and(|t| !t.is_empty()),
        hooks,
    }
}

/// Collapses whitespace runs (YAML folded text keeps newlines) into single spaces.
fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

impl Graph {
    /// The diagram of `wf`. Edges to undeclared states are left out (validation reports
    /// them); when no state declares triggers, the first state is the entry.
    pub fn of(wf: &Workflow) -> Graph {
        let mut nodes: Vec<Node> = wf.states.iter().map(|(k, s)| node_of(k, s)).collect();
        if !nodes.iter().any(|n| n.entry)
            && let Some(first) = nodes.first_mut()
        {
            first.entry = true;
        }
        let index = |slug: &str| wf.states.get_index_of(slug);
        let mut edges = Vec::new();
        for (from, (_, state)) in wf.states.iter().enumerate() {
            for t in state.edges() {
                if let Some(to) = index(&t.to) {
                    edges.push(Edge {
                        from,
                        to,
                        label: t
                            .description
                            .as_deref()
                            .map(one_line)
                            .filter(|d| !d.is_empty()),
                        kind: EdgeKind::Transition,
                        edge_type: t.kind,
                    });
                }
            }
            if let Some(to) = state.on_error.as_deref().and_then(index) {
                edges.push(Edge {
                    from,
                    to,
                    label: Some("on_error".to_string()),
                    kind: EdgeKind::OnError,
                    edge_type: None,
                });
            }
        }
        Graph {
            title: wf.title.clone(),
            nodes,
            edges,
        }
    }

    /// The diagram as text in `format`.
    pub fn render(&self, format: Format) -> String {
        match format {
            Format::Mermaid => self.mermaid(),
            Format::Dot => self.dot(),
            Format::Svg => crate::graph_svg::render(self),
        }
    }

    /// [`Graph::node_lines`] escaped by `esc` and joined with `sep`.
    fn node_text(&self, i: usize, esc: &dyn Fn(&str) -> String, sep: &str) -> String {
        self.node_lines(i)
            .iter()
            .map(|l| esc(l))
            .collect::<Vec<_>>()
            .join(sep)
    }

    fn mermaid(&self) -> String {
        let esc = |s: &str| {
            s.replace('&', "#amp;")
                .replace('"', "#quot;")
                .replace('<', "#lt;")
                .replace('>', "#gt;")
                .replace('|', "#124;")
        };
        let mut out = String::from("flowchart TD\n");
        out.push_str("  start((start))\n");
        for (i, n) in self.nodes.iter().enumerate() {
            let text = self.node_text(i, &esc, "<br/>");
            let shape = match n.kind {
                NodeKind::Agent => format!("s{i}[\"{text}\"]"),
                NodeKind::Human => format!("s{i}{{{{\"{text}\"}}}}"),
                NodeKind::Terminal => format!("s{i}([\"{text}\"])"),
            };
            out.push_str(&format!("  {shape}\n"));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if n.entry {
                out.push_str(&format!("  start --> s{i}\n"));
            }
        }
        for e in &self.edges {
            let arrow = match e.kind {
                EdgeKind::Transition => "-->",
                EdgeKind::OnError => "-.->",
            };
            match Graph::edge_label(e) {
                Some(l) => out.push_str(&format!(
                    "  s{} {arrow}|\"{}\"| s{}\n",
                    e.from,
                    esc(&l),
                    e.to
                )),
                None => out.push_str(&format!("  s{} {arrow} s{}\n", e.from, e.to)),
            }
        }
        out.push_str("  classDef human fill:#fff4d6,stroke:#b7791f\n");
        out.push_str("  classDef terminal fill:#e6f4ea,stroke:#2f855a\n");
        for (class, kind) in [("human", NodeKind::Human), ("terminal", NodeKind::Terminal)] {
            let ids: Vec<String> = self
                .nodes
                .iter()
                .enumerate()
                .filter(|(_, n)| n.kind == kind)
                .map(|(i, _)| format!("s{i}"))
                .collect();
            if !ids.is_empty() {
                out.push_str(&format!("  class {} {class}\n", ids.join(",")));
            }
        }
        out
    }

    fn dot(&self) -> String {
        let esc = |s: &str| s.replace('\\', "\\\\").replace('"', "\\\"");
        let mut out = String::from("digraph workflow {\n  rankdir=TB;\n");
        if let Some(t) = &self.title {
            out.push_str(&format!("  label=\"{}\";\n  labelloc=t;\n", esc(t)));
        }
        out.push_str(
            "  node [fontname=\"sans-serif\"];\n  edge [fontname=\"sans-serif\", fontsize=10];\n",
        );
        out.push_str("  start [shape=circle, label=\"start\"];\n");
        for (i, n) in self.nodes.iter().enumerate() {
            let text = self.node_text(i, &esc, "\\n");
            let attrs = match n.kind {
                NodeKind::Agent => "shape=box, style=rounded",
                NodeKind::Human => "shape=hexagon, style=filled, fillcolor=\"#fff4d6\"",
                NodeKind::Terminal => {
                    "shape=box, style=\"rounded,filled,bold\", fillcolor=\"#e6f4ea\""
                }
            };
            out.push_str(&format!("  s{i} [label=\"{text}\", {attrs}];\n"));
        }
        for (i, n) in self.nodes.iter().enumerate() {
            if n.entry {
                out.push_str(&format!("  start -> s{i};\n"));
            }
        }
        for e in &self.edges {
            let mut attrs = Vec::new();
            if let Some(l) = Graph::edge_label(e) {
                attrs.push(format!("label=\"{}\"", esc(&l)));
            }
            if e.kind == EdgeKind::OnError {
                attrs.push("style=dashed, color=\"#c53030\"".to_string());
            }
            let attrs = if attrs.is_empty() {
                String::new()
            } else {
                format!(" [{}]", attrs.join(", "))
            };
            out.push_str(&format!("  s{} -> s{}{attrs};\n", e.from, e.to));
        }
        out.push_str("}\n");
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SPEC: &str = r#"
title: Demo
states:
  draft:
    title: Draft it
    triggers:
      manual:
    instructions: Write.
    after:
      script: hooks/check.js
    on_error: broken
    transitions:
      - to: review
        description: "A draft \"is\" ready
          for review."
  review:
    type: human
    instructions: Look.
    transitions:
      - to: done
        type: approve
        description: Ship it.
      - to: draft
        type: refine
        description: Redo.
  done:
    instructions: Close.
  broken:
    instructions: Report.
"#;

    fn graph() -> Graph {
        let wf = crate::parse_machine_spec(SPEC).expect("the fixture parses");
        Graph::of(&wf)
    }

    #[test]
    fn nodes_carry_kind_entry_and_hooks() {
        let g = graph();
        let kinds: Vec<_> = g.nodes.iter().map(|n| (n.slug.as_str(), n.kind)).collect();
        assert_eq!(
            kinds,
            vec![
                ("draft", NodeKind::Agent),
                ("review", NodeKind::Human),
                ("done", NodeKind::Terminal),
                ("broken", NodeKind::Terminal),
            ]
        );
        assert!(g.nodes[0].entry);
        assert!(!g.nodes[1].entry);
        assert_eq!(g.nodes[0].hooks, vec!["after: hooks/check.js"]);
        assert_eq!(g.nodes[0].label, "Draft it");
    }

    #[test]
    fn edges_keep_descriptions_types_and_on_error() {
        let g = graph();
        let labels: Vec<_> = g
            .edges
            .iter()
            .map(|e| (e.from, e.to, e.kind, Graph::edge_label(e)))
            .collect();
        assert_eq!(
            labels,
            vec![
                (
                    0,
                    1,
                    EdgeKind::Transition,
                    Some("A draft \"is\" ready for review.".to_string())
                ),
                (0, 3, EdgeKind::OnError, Some("on_error".to_string())),
                (
                    1,
                    2,
                    EdgeKind::Transition,
                    Some("approve: Ship it.".to_string())
                ),
                (
                    1,
                    0,
                    EdgeKind::Transition,
                    Some("refine: Redo.".to_string())
                ),
            ]
        );
    }

    #[test]
    fn mermaid_marks_shapes_escapes_quotes_and_dashes_on_error() {
        let text = graph().render(Format::Mermaid);
        assert!(text.contains("  s0[\"Draft it<br/>draft<br/>after: hooks/check.js\"]\n"));
        assert!(text.contains("  s1{{\"review<br/>(human)\"}}\n"));
        assert!(text.contains("  s2([\"done\"])\n"));
        assert!(text.contains("  start --> s0\n"));
        assert!(text.contains("  s0 -->|\"A draft #quot;is#quot; ready for review.\"| s1\n"));
        assert!(text.contains("  s0 -.->|\"on_error\"| s3\n"));
        assert!(text.contains("  class s1 human\n"));
        assert!(text.contains("  class s2,s3 terminal\n"));
    }

    #[test]
    fn dot_is_a_digraph_with_escaped_labels() {
        let text = graph().render(Format::Dot);
        assert!(text.starts_with("digraph workflow {\n"));
        assert!(text.contains("label=\"Demo\";"));
        assert!(text.contains("s0 -> s1 [label=\"A draft \\\"is\\\" ready for review.\"];"));
        assert!(text.contains("s0 -> s3 [label=\"on_error\", style=dashed"));
        assert!(text.contains("s1 [label=\"review\\n(human)\", shape=hexagon"));
        assert!(text.trim_end().ends_with('}'));
    }

    #[test]
    fn format_names() {
        assert_eq!(Format::parse("svg"), Some(Format::Svg));
        assert_eq!(Format::parse("png"), None);
    }
}

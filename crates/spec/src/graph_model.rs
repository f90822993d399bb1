//! The diagram's data: its nodes and edges and the text each shows. [`crate::graph`] builds
//! it from a workflow, renders it and re-exports it; [`crate::graph_layout`] lays it out
//! and [`crate::graph_svg`] draws it, each without importing the other's caller.

use crate::model::TransitionType;

/// What a node of the diagram is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    /// An agent state with outgoing edges.
    Agent,
    /// A human state (`type: human`).
    Human,
    /// A state without outgoing edges (agent or human).
    Terminal,
}

/// One state of the diagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Node {
    /// The state's slug.
    pub slug: String,
    /// The state's title, else its slug.
    pub label: String,
    /// Agent, human or terminal.
    pub kind: NodeKind,
    /// Whether the state declares triggers (a turn may start there).
    pub entry: bool,
    /// `before: script hooks/x.js`, `after: rubric`, … in declaration order.
    pub hooks: Vec<String>,
}

/// Whether an edge is a declared transition or an `on_error` route.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EdgeKind {
    /// A `transitions:` entry.
    Transition,
    /// A state's `on_error:` target.
    OnError,
}

/// One edge of the diagram.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Edge {
    /// Index of the source node.
    pub from: usize,
    /// Index of the target node.
    pub to: usize,
    /// The transition's description (or `on_error`).
    pub label: Option<String>,
    /// Transition or `on_error`.
    pub kind: EdgeKind,
    /// The semantic type on a human state's edge.
    pub edge_type: Option<TransitionType>,
}

/// The diagram of one workflow, built once and rendered to any
/// [`Format`](crate::graph::Format).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Graph {
    /// The workflow's title, if any.
    pub title: Option<String>,
    /// States in document order.
    pub nodes: Vec<Node>,
    /// Edges in document order (each state's transitions, then its `on_error`).
    pub edges: Vec<Edge>,
}

impl Graph {
    /// The label lines of node `i`: the title, the slug when it differs, the hooks.
    pub fn node_lines(&self, i: usize) -> Vec<String> {
        let Some(n) = self.nodes.get(i) else {
            return Vec::new();
        };
        let mut lines = vec![n.label.clone()];
        if n.label != n.slug {
            lines.push(n.slug.clone());
        }
        if n.kind == NodeKind::Human {
            lines.push("(human)".to_string());
        }
        lines.extend(n.hooks.iter().cloned());
        lines
    }

    /// The label of edge `e`: its type on a human state's edge, then its description.
    pub fn edge_label(e: &Edge) -> Option<String> {
        let typed = e
            .edge_type
            .filter(|t| *t != TransitionType::None)
            .map(|t| t.as_str().to_string());
        match (typed, e.label.clone()) {
            (Some(t), Some(d)) => Some(format!("{t}: {d}")),
            (t, d) => t.or(d),
        }
    }
}

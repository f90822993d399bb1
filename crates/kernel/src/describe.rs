//! What a state discloses: the tool surface the model is shown, the "Allowed in"
//! list of a refusal, and transitions out of it.

use crate::messages as msg;
use crate::policy::{Entry, Guard, Policy, StateRules};
use crate::tools::{ADVANCE, ALWAYS_ALLOWED};
use crate::{Decision, RuleId, Variables};

impl Policy {
    /// True when a bare forbid entry (the workflow's or the state's) removes `tool`.
    fn bare_denied(&self, st: &StateRules, tool: &str) -> bool {
        self.forbid_always
            .iter()
            .chain(&st.forbid)
            .any(|e| e.is_bare() && (e.tool == tool || e.tool == "*"))
    }

    /// The always-allowed controls disclosed in a state, in their fixed order.
    fn controls<'a>(&'a self, st: &'a StateRules) -> impl Iterator<Item = &'static str> + 'a {
        ALWAYS_ALLOWED
            .iter()
            .copied()
            .filter(move |t| !(st.terminal && *t == ADVANCE))
            .filter(move |t| !self.bare_denied(st, t))
    }

    /// The tool names the model is shown in `state`: the effective entries' tools,
    /// then the controls (`archmax_advance` hidden in a terminal state), minus every
    /// tool denied there by name. Empty for an unknown state.
    pub fn surface(&self, state: &str) -> Vec<String> {
        let Some(st) = self.state(state) else {
            return Vec::new();
        };
        let mut out: Vec<String> = Vec::new();
        for e in &st.effective {
            if !self.bare_denied(st, &e.tool) && !out.contains(&e.tool) {
                out.push(e.tool.clone());
            }
        }
        for t in self.controls(st) {
            if !out.iter().any(|o| o == t) {
                out.push(t.to_string());
            }
        }
        out
    }

    /// The "Allowed in" list of a `tool.not-allowed` refusal for `state`.
    pub fn describe_allowed(&self, state: &str) -> String {
        self.state(state)
            .map(|st| self.describe_allowed_rules(st))
            .unwrap_or_default()
    }

    pub(crate) fn describe_allowed_rules(&self, st: &StateRules) -> String {
        let mut parts: Vec<String> = st
            .effective
            .iter()
            .filter(|e| !self.bare_denied(st, &e.tool))
            .map(|e| self.render(e))
            .collect();
        parts.extend(self.controls(st).map(str::to_string));
        parts.join(", ")
    }

    /// `tool` or `tool(arg=g1|g2, arg2=…)`; a `paths:` entry names each declared path argument.
    fn render(&self, e: &Entry) -> String {
        match &e.guard {
            Guard::Bare => e.tool.clone(),
            Guard::Args(args) => {
                let parts: Vec<String> = args
                    .iter()
                    .map(|a| format!("{}={}", a.name, a.raw.join("|")))
                    .collect();
                format!("{}({})", e.tool, parts.join(", "))
            }
            Guard::Paths { raw, .. } => {
                let names: Vec<String> = match self.tool_paths.of(&e.tool) {
                    Some(decl) => decl.iter().map(|p| p.name.clone()).collect(),
                    None => vec!["file_path".to_string()],
                };
                let parts: Vec<String> = names
                    .iter()
                    .map(|n| format!("{n}={}", raw.join("|")))
                    .collect();
                format!("{}({})", e.tool, parts.join(", "))
            }
        }
    }

    /// Moving `from` → `to`: the `requires` gate, then the edge.
    pub fn transition(&self, from: &str, to: &str, variables: Option<&Variables>) -> Decision {
        let Some(st) = self.state(from) else {
            return Decision::block(
                RuleId::TransitionNoEdge,
                msg::transition_no_edge(from, to, &[]),
            );
        };
        let missing: Vec<String> = st
            .requires
            .iter()
            .filter(|n| variables.is_none_or(|v| !v.contains_key(n.as_str())))
            .cloned()
            .collect();
        if !missing.is_empty() {
            return Decision::block(
                RuleId::TransitionRequires,
                msg::transition_requires(from, &missing),
            );
        }
        if !st.edges.iter().any(|e| e == to) {
            return Decision::block(
                RuleId::TransitionNoEdge,
                msg::transition_no_edge(from, to, &st.edges),
            );
        }
        Decision::allow(RuleId::Allowed)
    }
}

//! What a state discloses: the tool surface the model is shown, the "Allowed in"
//! list of a refusal, and transitions out of it.

use crate::messages as msg;
use crate::policy::{Entry, Guard, Policy, StateRules};
use crate::tools::{ADVANCE, ALWAYS_ALLOWED};
use crate::{Decision, RuleId, Variables};

/// Who denies a tool in a state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum DenyBy {
    /// `tools.forbid_always`.
    Workflow,
    /// The state's `tools.forbid`.
    State,
}

/// How a state stands toward a tool ([`Policy::standing`]).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
#[serde(tag = "standing", rename_all = "kebab-case")]
pub enum Standing {
    /// Every state has it (a control).
    Always,
    /// Granted; `guard` is the narrowing every grant of it carries, when none is bare;
    /// `except` the calls a guarded forbid entry still refuses.
    Granted {
        /// The grants' guards (`tool(arg=glob)`), `or`-joined.
        #[serde(skip_serializing_if = "Option::is_none")]
        guard: Option<String>,
        /// The guarded forbid entries that cover it, `or`-joined.
        #[serde(skip_serializing_if = "Option::is_none")]
        except: Option<String>,
    },
    /// Denied, every call (a bare forbid entry).
    Forbidden {
        /// The list that denies it.
        by: DenyBy,
    },
    /// Nothing grants it.
    NotGranted,
}

impl Policy {
    /// True when a bare forbid entry (the workflow's or the state's) removes `tool`.
    fn bare_denied(&self, st: &StateRules, tool: &str) -> bool {
        self.forbid_always
            .iter()
            .chain(&st.forbid)
            .any(|e| e.is_bare() && archmax_spec::grammar::entry_covers(&e.tool, tool))
    }

    /// Whether `state` shows the model `tool`, one of the tools an entry of its surface
    /// stands for (an MCP server's tool, for a server grant): not denied there by name.
    pub fn discloses(&self, state: &str, tool: &str) -> bool {
        self.state(state)
            .is_some_and(|st| !self.bare_denied(st, tool))
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

    /// How `state` stands toward `tool`, as a reviewer reads it: forbidden (a bare forbid
    /// entry of the workflow or the state), always (a control), granted (with the guard its
    /// grants carry when none is bare, and what guarded forbid entries still refuse), or not
    /// granted. `None` for an unknown state.
    pub fn standing(&self, state: &str, tool: &str) -> Option<Standing> {
        let st = self.state(state)?;
        let covers = |e: &&Entry| archmax_spec::grammar::entry_covers(&e.tool, tool);
        let mut except = Vec::new();
        for (by, list) in [
            (DenyBy::Workflow, &self.forbid_always),
            (DenyBy::State, &st.forbid),
        ] {
            for e in list.iter().filter(covers) {
                if e.is_bare() {
                    return Some(Standing::Forbidden { by });
                }
                except.push(self.render(e));
            }
        }
        let except = (!except.is_empty()).then(|| except.join(" or "));
        if crate::tools::is_always_allowed(tool) {
            return Some(if st.terminal && tool == ADVANCE {
                Standing::NotGranted
            } else {
                Standing::Always
            });
        }
        let grants: Vec<&Entry> = st.effective.iter().filter(covers).collect();
        if grants.is_empty() {
            return Some(Standing::NotGranted);
        }
        let guard = (!grants.iter().any(|e| e.is_bare())).then(|| {
            let guards: Vec<String> = grants.iter().map(|e| self.render(e)).collect();
            guards.join(" or ")
        });
        Some(Standing::Granted { guard, except })
    }

    /// Every tool name an entry of the workflow names (grants, forbid lists, the host's
    /// essentials), in first-seen order, `*` left out.
    pub fn named_tools(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        let entries = self.forbid_always.iter().chain(
            self.states
                .iter()
                .flat_map(|st| st.effective.iter().chain(&st.forbid)),
        );
        for e in entries {
            if e.tool != "*" && !out.contains(&e.tool) {
                out.push(e.tool.clone());
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

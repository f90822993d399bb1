//! Compiling a workflow into a [`Policy`]: per state, the effective allow entries
//! (the three grant tiers), the forbid entries, and the enabled skills and mounts.
//! Globs are compiled here, once; only `${{…}}`-bound guards compile per call.

use std::collections::HashMap;

use archmax_spec::Workflow;
use archmax_spec::model::{GuardedTool, MountAccess, MountGrant, ToolEntry};

use crate::guard::GuardPattern;
use crate::paths::{ToolPaths, ToolPathsError};
use crate::tools::{DEFAULT_TOOLS, is_default_tool};
use crate::zones::{Mounts, SkillDir};
use crate::{CallContext, Decision, ToolCall};

/// A host rule, consulted after every declared denial and before the grants
/// (`policyRules`, inherited ancestor denials). It may block, allow, or abstain.
pub trait CustomRule: Send + Sync {
    /// The decision, or `None` to abstain.
    fn check(&self, call: &ToolCall<'_>, ctx: &CallContext<'_>) -> Option<Decision>;
}

/// A shared rule is a rule (a host keeps one `Arc` and hands the kernel clones).
impl<R: CustomRule + ?Sized> CustomRule for std::sync::Arc<R> {
    fn check(&self, call: &ToolCall<'_>, ctx: &CallContext<'_>) -> Option<Decision> {
        (**self).check(call, ctx)
    }
}

/// What a policy is compiled against besides the spec.
#[derive(Default)]
pub struct PolicyOptions {
    /// The host's mount table.
    pub mounts: Mounts,
    /// The skill registry (any order; sorted longest prefix first on compile).
    pub skills: Vec<SkillDir>,
    /// The host's path declarations.
    pub tool_paths: ToolPaths,
    /// Host tools permitted and disclosed in every state.
    pub essential_tools: Vec<String>,
    /// Host rules, in order.
    pub custom_rules: Vec<Box<dyn CustomRule>>,
}

/// Why a policy cannot be compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PolicyError {
    /// A path declaration was refused.
    #[error(transparent)]
    ToolPaths(#[from] ToolPathsError),
}

/// How an entry guards its tool.
#[derive(Debug, Clone)]
pub(crate) enum Guard {
    /// Any arguments.
    Bare,
    /// Every named argument must match one of its globs.
    Args(Vec<ArgGuard>),
    /// Every declared path argument (all for a grant, any for a denial).
    Paths {
        patterns: Vec<GuardPattern>,
        raw: Vec<String>,
    },
}

#[derive(Debug, Clone)]
pub(crate) struct ArgGuard {
    pub name: String,
    pub patterns: Vec<GuardPattern>,
    pub raw: Vec<String>,
}

/// A compiled allow or forbid entry.
#[derive(Debug, Clone)]
pub(crate) struct Entry {
    pub tool: String,
    pub guard: Guard,
}

impl Entry {
    fn compile(e: &ToolEntry) -> Entry {
        match e {
            ToolEntry::Name(n) => Entry {
                tool: n.clone(),
                guard: Guard::Bare,
            },
            ToolEntry::Guarded(g) => Entry {
                tool: g.tool.clone(),
                guard: guard_of(g),
            },
        }
    }
    fn bare(tool: &str) -> Entry {
        Entry {
            tool: tool.to_string(),
            guard: Guard::Bare,
        }
    }
    pub fn is_bare(&self) -> bool {
        matches!(self.guard, Guard::Bare)
    }
}

fn guard_of(g: &GuardedTool) -> Guard {
    // `args` wins when both are present.
    if let Some(args) = &g.args {
        return Guard::Args(
            args.iter()
                .map(|(name, globs)| {
                    let raw: Vec<String> = globs.iter().map(str::to_string).collect();
                    ArgGuard {
                        name: name.clone(),
                        patterns: raw.iter().map(|r| GuardPattern::new(r)).collect(),
                        raw,
                    }
                })
                .collect(),
        );
    }
    if let Some(paths) = &g.paths {
        let raw: Vec<String> = paths.iter().map(str::to_string).collect();
        return Guard::Paths {
            patterns: raw.iter().map(|r| GuardPattern::new(r)).collect(),
            raw,
        };
    }
    Guard::Bare
}

/// Who denied a skill or mount.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum DenySource {
    Workflow,
    State,
}

/// One state, compiled.
#[derive(Debug, Clone)]
pub(crate) struct StateRules {
    pub name: String,
    pub terminal: bool,
    pub edges: Vec<String>,
    pub requires: Vec<String>,
    /// Tier 1 (the state's entries), tier 2 (the workflow-wide grant), tier 3 (host essentials).
    pub effective: Vec<Entry>,
    pub forbid: Vec<Entry>,
    pub skills_enabled: Vec<String>,
    pub skills_denied_here: Vec<String>,
    pub mounts_enabled: Vec<String>,
    pub mounts_denied_here: Vec<String>,
    /// Writable mounts this state may only read (`access: read`).
    pub mounts_read_only: Vec<String>,
}

/// A workflow compiled for deciding calls.
pub struct Policy {
    pub(crate) states: Vec<StateRules>,
    index: HashMap<String, usize>,
    pub(crate) forbid_always: Vec<Entry>,
    pub(crate) skills_forbid_always: Vec<String>,
    pub(crate) mounts_forbid_always: Vec<String>,
    /// Governed mounts some grant names anywhere: what a hook may reach.
    pub(crate) mounts_granted_anywhere: Vec<String>,
    pub(crate) mounts: Mounts,
    pub(crate) skills: Vec<SkillDir>,
    pub(crate) tool_paths: ToolPaths,
    pub(crate) essential: Vec<String>,
    pub(crate) custom: Vec<Box<dyn CustomRule>>,
}

impl std::fmt::Debug for Policy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Policy")
            .field("states", &self.index.len())
            .finish_non_exhaustive()
    }
}

fn grant_names(list: Option<&Vec<MountGrant>>) -> impl Iterator<Item = &MountGrant> {
    list.into_iter().flatten()
}

fn push_unique(v: &mut Vec<String>, s: &str) {
    if !v.iter().any(|x| x == s) {
        v.push(s.to_string());
    }
}

impl Policy {
    /// Replaces the host rules asked after the workflow's denials (a host that compiled the
    /// policy first and learns its rules after, as `Governance` does).
    pub fn set_custom_rules(&mut self, rules: Vec<Box<dyn CustomRule>>) {
        self.custom = rules;
    }

    /// Compiles `spec` once; then [`Policy::decide`] answers every call.
    pub fn compile(spec: &Workflow, opts: PolicyOptions) -> Result<Policy, PolicyError> {
        let PolicyOptions {
            mounts,
            mut skills,
            tool_paths,
            essential_tools,
            custom_rules,
        } = opts;
        skills.sort_by(|a, b| {
            b.prefix
                .len()
                .cmp(&a.prefix.len())
                .then_with(|| a.slug.cmp(&b.slug))
        });
        let root_tools = spec.tools.as_ref();
        let allow_always: Option<Vec<Entry>> = root_tools
            .and_then(|t| t.allow_always.as_ref())
            .map(|l| l.iter().map(Entry::compile).collect());
        let forbid_always: Vec<Entry> = root_tools
            .and_then(|t| t.forbid_always.as_ref())
            .into_iter()
            .flatten()
            .map(Entry::compile)
            .collect();
        let root_skills = spec.skills.as_ref();
        let skills_allow_always: Vec<String> = root_skills
            .and_then(|s| s.allow_always.clone())
            .unwrap_or_default();
        let skills_forbid_always: Vec<String> = root_skills
            .and_then(|s| s.forbid_always.clone())
            .unwrap_or_default();
        let root_mounts = spec.mounts.as_ref();
        let mounts_allow_always: Vec<&MountGrant> =
            grant_names(root_mounts.and_then(|m| m.allow_always.as_ref())).collect();
        let mounts_forbid_always: Vec<String> = root_mounts
            .and_then(|m| m.forbid_always.clone())
            .unwrap_or_default();
        let known_skill = |slug: &str| skills.iter().any(|s| s.slug == slug);

        let mut states = Vec::with_capacity(spec.states.len());
        let mut granted_anywhere: Vec<String> = Vec::new();
        for g in &mounts_allow_always {
            if mounts.is_governed(g.name()) {
                push_unique(&mut granted_anywhere, g.name());
            }
        }
        for (slug, st) in &spec.states {
            let tier1: Vec<Entry> = st
                .tools
                .as_ref()
                .and_then(|t| t.allow.as_ref())
                .into_iter()
                .flatten()
                .map(Entry::compile)
                .collect();
            let named = |tool: &str| tier1.iter().any(|e| e.tool == tool);
            let essential = |tool: &str| essential_tools.iter().any(|t| t == tool);
            let mut effective = tier1.clone();
            match &allow_always {
                Some(list) => effective.extend(
                    list.iter()
                        .filter(|e| !named(&e.tool) && !essential(&e.tool))
                        .cloned(),
                ),
                None => effective.extend(
                    DEFAULT_TOOLS
                        .iter()
                        .filter(|t| !named(t) && !essential(t))
                        .map(|t| Entry::bare(t)),
                ),
            }
            effective.extend(
                essential_tools
                    .iter()
                    .filter(|t| !named(t))
                    .map(|t| Entry::bare(t)),
            );
            let forbid: Vec<Entry> = st
                .tools
                .as_ref()
                .and_then(|t| t.forbid.as_ref())
                .into_iter()
                .flatten()
                .map(Entry::compile)
                .collect();

            let state_skills = st.skills.as_ref();
            let skills_denied_here: Vec<String> = state_skills
                .and_then(|s| s.forbid.clone())
                .unwrap_or_default();
            let mut skills_enabled = Vec::new();
            for s in state_skills
                .and_then(|k| k.allow.as_ref())
                .into_iter()
                .flatten()
                .chain(&skills_allow_always)
            {
                if known_skill(s)
                    && !skills_forbid_always.contains(s)
                    && !skills_denied_here.contains(s)
                {
                    push_unique(&mut skills_enabled, s);
                }
            }

            let state_mounts = st.mounts.as_ref();
            let mounts_denied_here: Vec<String> = state_mounts
                .and_then(|m| m.forbid.clone())
                .unwrap_or_default();
            let state_grants: Vec<&MountGrant> =
                grant_names(state_mounts.and_then(|m| m.allow.as_ref())).collect();
            let mut mounts_enabled = Vec::new();
            let mut mounts_read_only = Vec::new();
            for g in state_grants.iter().chain(&mounts_allow_always) {
                let name = g.name();
                if g.access() == Some(MountAccess::Read) {
                    push_unique(&mut mounts_read_only, name);
                }
                if mounts.is_governed(name) {
                    push_unique(&mut granted_anywhere, name);
                    if !mounts_forbid_always.iter().any(|f| f == name)
                        && !mounts_denied_here.iter().any(|f| f == name)
                    {
                        push_unique(&mut mounts_enabled, name);
                    }
                }
            }
            let edges: Vec<String> = st.edges().iter().map(|t| t.to.clone()).collect();
            states.push(StateRules {
                name: slug.clone(),
                terminal: edges.is_empty(),
                edges,
                requires: st.requires.clone().unwrap_or_default(),
                effective,
                forbid,
                skills_enabled,
                skills_denied_here,
                mounts_enabled,
                mounts_denied_here,
                mounts_read_only,
            });
        }
        let index = states
            .iter()
            .enumerate()
            .map(|(i, s)| (s.name.clone(), i))
            .collect();
        Ok(Policy {
            states,
            index,
            forbid_always,
            skills_forbid_always,
            mounts_forbid_always,
            mounts_granted_anywhere: granted_anywhere,
            mounts,
            skills,
            tool_paths,
            essential: essential_tools,
            custom: custom_rules,
        })
    }

    pub(crate) fn state(&self, name: &str) -> Option<&StateRules> {
        self.index.get(name).and_then(|&i| self.states.get(i))
    }

    /// The path arguments of every tool (built-in and host), as compiled.
    pub fn tool_paths(&self) -> &ToolPaths {
        &self.tool_paths
    }

    /// The state slugs, in declaration order.
    pub fn states(&self) -> Vec<&str> {
        self.states.iter().map(|s| s.name.as_str()).collect()
    }

    /// The skills enabled in `state` (empty for an unknown state).
    pub fn enabled_skills(&self, state: &str) -> &[String] {
        self.state(state)
            .map_or(&[], |s| s.skills_enabled.as_slice())
    }

    /// The governed mounts enabled in `state`.
    pub fn enabled_mounts(&self, state: &str) -> &[String] {
        self.state(state)
            .map_or(&[], |s| s.mounts_enabled.as_slice())
    }

    /// True when `tool` is a host essential tool.
    pub(crate) fn is_essential(&self, tool: &str) -> bool {
        self.essential.iter().any(|t| t == tool)
    }

    /// True when the open areas serve `tool` in `state` (0.9.0: host essentials, and
    /// default tools the state is granted by any tier, whatever the entry narrows).
    pub(crate) fn opens_areas(&self, st: &StateRules, tool: &str) -> bool {
        self.is_essential(tool)
            || (is_default_tool(tool) && st.effective.iter().any(|e| e.tool == tool))
    }
}

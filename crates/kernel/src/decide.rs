//! The decision pipeline for a tool call: safety rules, declared denials, host
//! rules, the open areas, then the grants. The first rule that decides wins.

use serde_json::Value;

use crate::canonical::canonicalize;
use crate::guard::GuardFailure;
use crate::matching::{Side, arg_lookup, value_matches};
use crate::messages as msg;
use crate::paths::{Access, CallPath, call_paths};
use crate::policy::{DenySource, Entry, Guard, Policy, StateRules};
use crate::tools::{BARE_EVAL, is_always_allowed};
use crate::zones::{AUTHORING_PLANE, Zone, classify, skill_of};
use crate::{CallContext, Decision, Origin, RuleId, ToolCall};

/// The calls's paths and facts every rule reads, computed once.
pub(crate) struct Call<'a> {
    pub(crate) tool: &'a str,
    pub(crate) args: &'a Value,
    pub(crate) paths: Vec<CallPath>,
    /// The tool declares more than one path argument.
    multi: bool,
    /// The tool declares any path argument.
    declared: bool,
}

impl Call<'_> {
    pub(crate) fn subject(&self, p: &CallPath) -> String {
        msg::subject(self.tool, p, self.multi)
    }
    fn str_arg(&self, name: &str) -> Option<&str> {
        self.args.get(name).and_then(Value::as_str)
    }
}

impl Policy {
    /// Decides one tool call in a state.
    pub fn decide(&self, call: &ToolCall<'_>, ctx: &CallContext<'_>) -> Decision {
        let decl = self.tool_paths.of(call.tool);
        let paths = match decl.map(|d| call_paths(d, call.args)) {
            None => Vec::new(),
            Some(Ok(p)) => p,
            Some(Err(arg)) => {
                return Decision::block(RuleId::PathArgument, msg::path_argument(call.tool, &arg));
            }
        };
        let c = Call {
            tool: call.tool,
            args: call.args,
            paths,
            multi: decl.is_some_and(|d| d.len() > 1),
            declared: decl.is_some_and(|d| !d.is_empty()),
        };
        let st = self.state(ctx.state);
        self.safety(&c, st, ctx)
            .or_else(|| self.declared_denials(&c, st, ctx))
            .or_else(|| self.inherited_denials(&c, ctx))
            .or_else(|| self.custom.iter().find_map(|r| r.check(call, ctx)))
            .or_else(|| st.and_then(|st| self.open_areas(&c, st)))
            .unwrap_or_else(|| self.grants(&c, st, ctx))
    }

    /// [`Policy::decide`], then, for a granted `archmax_advance` naming its target (`to`), the
    /// move itself ([`Policy::transition`]: the `requires` gate, then the edge). The runtime
    /// makes the second check when it executes the move; a host running its own loop gets
    /// both answers from one call.
    pub fn decide_with_move(&self, call: &ToolCall<'_>, ctx: &CallContext<'_>) -> Decision {
        let d = self.decide(call, ctx);
        if !d.allowed || call.tool != crate::tools::ADVANCE {
            return d;
        }
        match call.args.get("to").and_then(Value::as_str) {
            Some(to) => self.transition(ctx.state, to, ctx.variables),
            None => d,
        }
    }

    /// Rules 1–11: nothing a spec declares overrides them.
    fn safety(
        &self,
        c: &Call<'_>,
        st: Option<&StateRules>,
        ctx: &CallContext<'_>,
    ) -> Option<Decision> {
        if ctx.origin != Origin::Agent {
            let fallback = ["file_path", "path"].iter().find_map(|a| c.str_arg(a));
            let targets: Vec<&str> = if c.paths.is_empty() {
                fallback.into_iter().collect()
            } else {
                c.paths.iter().map(|p| p.raw.as_str()).collect()
            };
            for t in targets {
                let canon = canonicalize(t);
                if !canon.escapes
                    && (canon.path == AUTHORING_PLANE || canon.path.starts_with("workflows/"))
                {
                    return Some(Decision::block(
                        RuleId::GovernancePlane,
                        msg::governance_plane(c.tool, t),
                    ));
                }
            }
        }
        for p in c.paths.iter().filter(|p| p.access == Access::Execute) {
            if skill_of(&self.skills, &p.canonical).is_none() {
                return Some(Decision::block(
                    RuleId::SkillOnly,
                    msg::skill_only(c.tool, &p.raw),
                ));
            }
        }
        if ctx.reply_only {
            return Some(Decision::block(RuleId::ReplyOnly, msg::reply_only(c.tool)));
        }
        if c.tool == BARE_EVAL {
            return Some(Decision::block(RuleId::Eval, msg::EVAL.to_string()));
        }
        for p in &c.paths {
            if p.access.is_mutating() && classify(&p.canonical, &self.mounts) == Zone::Authored {
                let mount = self
                    .mounts
                    .mount_of(&p.canonical.path)
                    .unwrap_or_else(|| p.canonical.path.split('/').next().unwrap_or_default());
                return Some(Decision::block(
                    RuleId::ReadOnlyZone,
                    msg::read_only_zone(&c.subject(p), mount),
                ));
            }
        }
        let no_mounts = crate::zones::Mounts::default();
        for p in &c.paths {
            if classify(&p.canonical, &no_mounts) == Zone::RunInternal {
                return Some(Decision::block(
                    RuleId::RuntimeInternal,
                    msg::runtime_internal(&c.subject(p)),
                ));
            }
        }
        for p in &c.paths {
            if p.access.is_mutating() && classify(&p.canonical, &no_mounts) == Zone::RunOffload {
                return Some(Decision::block(
                    RuleId::RuntimeManaged,
                    msg::runtime_managed(&c.subject(p)),
                ));
            }
        }
        self.skill_rule(c, st, ctx)
            .or_else(|| self.mount_rule(c, st, ctx))
    }

    fn skill_rule(
        &self,
        c: &Call<'_>,
        st: Option<&StateRules>,
        ctx: &CallContext<'_>,
    ) -> Option<Decision> {
        let lifecycle = ctx.origin == Origin::Lifecycle;
        for p in &c.paths {
            let Some(slug) = skill_of(&self.skills, &p.canonical) else {
                continue;
            };
            let by_workflow = self.skills_forbid_always.iter().any(|s| s == slug);
            let enabled = st.is_some_and(|s| s.skills_enabled.iter().any(|e| e == slug));
            let here: &[String] = st.map_or(&[], |s| &s.skills_enabled);
            if by_workflow {
                let d = "'skills.forbid_always' denies in every state";
                return Some(Decision::block(
                    RuleId::SkillForbidden,
                    msg::skill_forbidden(&c.subject(p), slug, d, &msg::skills_here(here)),
                ));
            }
            // Hooks are exempt from the state's skill lists (runtime authority).
            if lifecycle || enabled {
                continue;
            }
            if st.is_some_and(|s| s.skills_denied_here.iter().any(|e| e == slug)) {
                let d = format!("state '{}' forbids", ctx.state);
                return Some(Decision::block(
                    RuleId::SkillForbidden,
                    msg::skill_forbidden(&c.subject(p), slug, &d, &msg::skills_here(here)),
                ));
            }
            return Some(Decision::block(
                RuleId::SkillNotAllowed,
                msg::skill_not_allowed(&c.subject(p), slug, ctx.state, &msg::skills_here(here)),
            ));
        }
        None
    }

    fn mount_rule(
        &self,
        c: &Call<'_>,
        st: Option<&StateRules>,
        ctx: &CallContext<'_>,
    ) -> Option<Decision> {
        let lifecycle = ctx.origin == Origin::Lifecycle;
        for p in &c.paths {
            if p.canonical.escapes {
                continue;
            }
            let Some(name) = self.mounts.mount_of(&p.canonical.path) else {
                continue;
            };
            let here: &[String] = st.map_or(&[], |s| &s.mounts_enabled);
            let denied = if self.mounts_forbid_always.iter().any(|m| m == name) {
                Some(DenySource::Workflow)
            } else if !lifecycle
                && st.is_some_and(|s| s.mounts_denied_here.iter().any(|m| m == name))
            {
                Some(DenySource::State)
            } else {
                None
            };
            if let Some(source) = denied {
                let d = match source {
                    DenySource::Workflow => {
                        "'mounts.forbid_always' denies in every state".to_string()
                    }
                    DenySource::State => format!("state '{}' forbids", ctx.state),
                };
                return Some(Decision::block(
                    RuleId::MountForbidden,
                    msg::mount_forbidden(&c.subject(p), name, &d, &msg::mounts_here(here)),
                ));
            }
            let governed = self.mounts.is_governed(name);
            let reachable = if lifecycle {
                !governed || self.mounts_granted_anywhere.iter().any(|m| m == name)
            } else {
                !governed || here.iter().any(|m| m == name)
            };
            if !reachable {
                return Some(Decision::block(
                    RuleId::MountNotAllowed,
                    msg::mount_not_allowed(&c.subject(p), name, ctx.state, &msg::mounts_here(here)),
                ));
            }
            let narrowed =
                !lifecycle && st.is_some_and(|s| s.mounts_read_only.iter().any(|m| m == name));
            if p.access.is_mutating() && self.mounts.is_writable(name) && narrowed {
                return Some(Decision::block(
                    RuleId::MountReadOnly,
                    msg::mount_read_only(&c.subject(p), name, ctx.state),
                ));
            }
        }
        None
    }

    /// Rules 12–13: `tools.forbid_always`, then the state's `tools.forbid`.
    fn declared_denials(
        &self,
        c: &Call<'_>,
        st: Option<&StateRules>,
        ctx: &CallContext<'_>,
    ) -> Option<Decision> {
        for e in &self.forbid_always {
            if self.denies(e, c, ctx) {
                return Some(self.forbidden(
                    c,
                    e,
                    RuleId::Forbidden,
                    "the workflow",
                    "tools.forbid_always".to_string(),
                ));
            }
        }
        if ctx.origin == Origin::Lifecycle {
            return None;
        }
        let st = st?;
        for e in &st.forbid {
            if self.denies(e, c, ctx) {
                let by = format!("state '{}'", st.name);
                return Some(self.forbidden(
                    c,
                    e,
                    RuleId::ForbiddenHere,
                    &by,
                    format!("states.{}.tools.forbid", st.name),
                ));
            }
        }
        None
    }

    pub(crate) fn forbidden(
        &self,
        c: &Call<'_>,
        e: &Entry,
        rule: RuleId,
        by: &str,
        key: String,
    ) -> Decision {
        let on = if !c.paths.is_empty() {
            let labels: Vec<String> = c
                .paths
                .iter()
                .map(|p| {
                    if c.multi {
                        format!("'{}' ({})", p.raw, p.arg)
                    } else {
                        format!("'{}'", p.raw)
                    }
                })
                .collect();
            format!(" on {}", labels.join(", "))
        } else {
            c.str_arg("file_path")
                .map(|f| format!(" on '{f}'"))
                .unwrap_or_default()
        };
        let guard = match &e.guard {
            Guard::Bare => String::new(),
            Guard::Paths { raw, .. } => format!(": paths={}", raw.join("|")),
            Guard::Args(args) => {
                let parts: Vec<String> = args
                    .iter()
                    .map(|a| format!("{}={}", a.name, a.raw.join("|")))
                    .collect();
                format!(": {}", parts.join(", "))
            }
        };
        Decision::block(rule, msg::forbidden(c.tool, &on, by, &key, &guard))
    }

    /// True when a forbid entry matches: any guarded value matching denies, and an
    /// unresolvable reference fails closed (the entry matches).
    pub(crate) fn denies(&self, e: &Entry, c: &Call<'_>, ctx: &CallContext<'_>) -> bool {
        if !archmax_spec::grammar::entry_covers(&e.tool, c.tool) {
            return false;
        }
        match &e.guard {
            Guard::Bare => true,
            Guard::Args(args) => args.iter().all(|a| {
                let mut globs = Vec::with_capacity(a.patterns.len());
                for p in &a.patterns {
                    match p.resolve(ctx.variables) {
                        Ok(g) => globs.push(g),
                        Err(_) => return true,
                    }
                }
                let refs: Vec<&crate::glob::Glob> = globs.iter().map(|g| g.as_ref()).collect();
                let is_path = self.tool_paths.is_path_arg(c.tool, &a.name);
                value_matches(arg_lookup(c.args, &a.name), &refs, is_path, Side::Deny)
            }),
            Guard::Paths { patterns, .. } => {
                let mut globs = Vec::with_capacity(patterns.len());
                for p in patterns {
                    match p.resolve(ctx.variables) {
                        Ok(g) => globs.push(g),
                        Err(_) => return true,
                    }
                }
                let refs: Vec<&crate::glob::Glob> = globs.iter().map(|g| g.as_ref()).collect();
                self.path_values(c)
                    .iter()
                    .any(|v| value_matches(v.as_ref(), &refs, true, Side::Deny))
            }
        }
    }

    /// The values a `paths:` guard tests: every declared path value (an undeclared
    /// tool's `file_path`); an omitted argument contributes one absent value.
    fn path_values(&self, c: &Call<'_>) -> Vec<Option<Value>> {
        match self.tool_paths.of(c.tool) {
            Some(decl) => {
                let mut out = Vec::new();
                for d in decl.iter() {
                    let mine: Vec<&CallPath> = c.paths.iter().filter(|p| p.arg == d.name).collect();
                    if mine.is_empty() {
                        out.push(None);
                    } else {
                        out.extend(mine.iter().map(|p| Some(Value::String(p.raw.clone()))));
                    }
                }
                out
            }
            None => vec![c.args.get("file_path").filter(|v| !v.is_null()).cloned()],
        }
    }

    /// Rule 15: `scratchpad/` and the offload areas for granted default file tools
    /// and host essentials.
    fn open_areas(&self, c: &Call<'_>, st: &StateRules) -> Option<Decision> {
        if !c.declared || c.paths.is_empty() || !self.opens_areas(st, c.tool) {
            return None;
        }
        let no_mounts = crate::zones::Mounts::default();
        let mut all_offload = true;
        for p in &c.paths {
            match classify(&p.canonical, &no_mounts) {
                Zone::RunOpen
                    if matches!(
                        p.access,
                        Access::Read | Access::List | Access::Write | Access::Remove
                    ) =>
                {
                    all_offload = false;
                }
                Zone::RunOffload if matches!(p.access, Access::Read | Access::List) => {}
                _ => return None,
            }
        }
        Some(Decision::allow(if all_offload {
            RuleId::OffloadRead
        } else {
            RuleId::Scratchpad
        }))
    }

    /// Rule 16: the state's effective entries. Hooks abstain (runtime authority).
    fn grants(&self, c: &Call<'_>, st: Option<&StateRules>, ctx: &CallContext<'_>) -> Decision {
        if ctx.origin == Origin::Lifecycle {
            return Decision::allow(RuleId::Allow);
        }
        if is_always_allowed(c.tool) {
            return Decision::allow(RuleId::Allowed);
        }
        let mut failure: Option<GuardFailure> = None;
        if let Some(st) = st {
            for e in st
                .effective
                .iter()
                .filter(|e| archmax_spec::grammar::entry_covers(&e.tool, c.tool))
            {
                if self.grants_entry(e, c, ctx, &mut failure) {
                    return Decision::allow(RuleId::Allowed);
                }
            }
        }
        if let Some(f) = failure {
            let mut d = Decision::block(
                RuleId::UnresolvedVariable,
                msg::unresolved(c.tool, ctx.state, &f.reference, &f.detail()),
            );
            d.terminal = true;
            return d;
        }
        let on = c
            .str_arg("file_path")
            .map(|f| format!(" on '{f}'"))
            .unwrap_or_default();
        let to = c
            .str_arg("to")
            .map(|t| format!(" (to='{t}')"))
            .unwrap_or_default();
        let (allowed, terminal) = match st {
            Some(st) => (self.describe_allowed_rules(st), st.terminal),
            None => (String::new(), true),
        };
        Decision::block(
            RuleId::NotAllowed,
            msg::not_allowed(c.tool, &on, &to, ctx.state, &allowed, terminal),
        )
    }

    /// True when an allow entry grants the call. Records the first guard that
    /// could not be resolved.
    fn grants_entry(
        &self,
        e: &Entry,
        c: &Call<'_>,
        ctx: &CallContext<'_>,
        failure: &mut Option<GuardFailure>,
    ) -> bool {
        match &e.guard {
            Guard::Bare => true,
            Guard::Args(args) => {
                for a in args {
                    let mut globs = Vec::with_capacity(a.patterns.len());
                    for p in &a.patterns {
                        match p.resolve(ctx.variables) {
                            Ok(g) => globs.push(g),
                            Err(f) => {
                                failure.get_or_insert(f);
                                return false;
                            }
                        }
                    }
                    let refs: Vec<&crate::glob::Glob> = globs.iter().map(|g| g.as_ref()).collect();
                    let is_path = self.tool_paths.is_path_arg(c.tool, &a.name);
                    if !value_matches(arg_lookup(c.args, &a.name), &refs, is_path, Side::Allow) {
                        return false;
                    }
                }
                true
            }
            Guard::Paths { patterns, .. } => {
                let mut globs = Vec::with_capacity(patterns.len());
                for p in patterns {
                    match p.resolve(ctx.variables) {
                        Ok(g) => globs.push(g),
                        Err(f) => {
                            failure.get_or_insert(f);
                            return false;
                        }
                    }
                }
                let refs: Vec<&crate::glob::Glob> = globs.iter().map(|g| g.as_ref()).collect();
                let values = self.path_values(c);
                !values.is_empty()
                    && values
                        .iter()
                        .all(|v| value_matches(v.as_ref(), &refs, true, Side::Allow))
            }
        }
    }
}

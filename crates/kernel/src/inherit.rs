//! Inherited denials (kernel digest §7.3): inside a sub-workflow, every ancestor's
//! workflow-wide denials (`tools.forbid_always`, `skills.forbid_always`,
//! `mounts.forbid_always`) bind as they do in the ancestor, and the refusal names the
//! workflow that declared them. They bind every origin, hooks included; an ancestor's
//! per-state lists and its grants are never inherited.

use crate::policy::{Entry, Policy};
use crate::zones::skill_of;
use crate::{CallContext, Decision, RuleId};

/// One ancestor's workflow-wide denials, as its child inherits them.
#[derive(Debug, Clone)]
pub struct Inherited {
    pub(crate) workflow: String,
    pub(crate) tools: Vec<Entry>,
    pub(crate) skills: Vec<String>,
    pub(crate) mounts: Vec<String>,
}

impl Inherited {
    /// The workflow that declared these denials.
    pub fn workflow(&self) -> &str {
        &self.workflow
    }

    /// Denies nothing: an ancestor without `forbid_always` lists.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty() && self.skills.is_empty() && self.mounts.is_empty()
    }
}

impl Policy {
    /// This workflow's (`workflow`'s) workflow-wide denials, for the children it runs.
    pub fn inherited(&self, workflow: &str) -> Inherited {
        Inherited {
            workflow: workflow.to_string(),
            tools: self.forbid_always.clone(),
            skills: self.skills_forbid_always.clone(),
            mounts: self.mounts_forbid_always.clone(),
        }
    }

    /// The first inherited denial matching the call, outermost ancestor first; in each,
    /// its mounts, then its skills, then its tool entries.
    pub(crate) fn inherited_denials(
        &self,
        c: &crate::decide::Call<'_>,
        ctx: &CallContext<'_>,
    ) -> Option<Decision> {
        for a in ctx.inherited {
            for p in c.paths.iter().filter(|p| !p.canonical.escapes) {
                let path = p.canonical.path.as_str();
                let under = |name: &str| {
                    path == name
                        || path
                            .strip_prefix(name)
                            .is_some_and(|rest| rest.starts_with('/'))
                };
                if let Some(name) = a.mounts.iter().find(|m| under(m)) {
                    return Some(Decision::block(
                        RuleId::MountForbidden,
                        crate::messages::inherited_mount(&c.subject(p), name, &a.workflow),
                    ));
                }
                if let Some(slug) = skill_of(&self.skills, &p.canonical)
                    && a.skills.iter().any(|s| s == slug)
                {
                    return Some(Decision::block(
                        RuleId::SkillForbidden,
                        crate::messages::inherited_skill(&c.subject(p), slug, &a.workflow),
                    ));
                }
            }
            for e in &a.tools {
                if self.denies(e, c, ctx) {
                    let by = format!("the workflow inherited from workflow '{}'", a.workflow);
                    return Some(self.forbidden(
                        c,
                        e,
                        RuleId::Forbidden,
                        &by,
                        "tools.forbid_always".to_string(),
                    ));
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use crate::{CallContext, Mounts, Origin, Policy, PolicyOptions, SkillDir, ToolCall};

    fn policy(yaml: &str) -> Policy {
        let spec = archmax_spec::parse_machine_spec(yaml).expect("spec");
        let opts = PolicyOptions {
            mounts: Mounts {
                dirs: vec!["skills".into(), "catalogs/eu".into()],
                ..Mounts::zero_config()
            },
            skills: vec![SkillDir {
                slug: "order-data".into(),
                prefix: "skills/order-data".into(),
            }],
            ..PolicyOptions::default()
        };
        Policy::compile(&spec, opts).expect("policy")
    }

    const PARENT: &str = "tools:\n  forbid_always:\n    - web_fetch\n    - { tool: write_file, paths: ['scratchpad/secret/**'] }\nskills:\n  forbid_always: [order-data]\nmounts:\n  forbid_always: [catalogs/eu]\nstates:\n  s:\n    triggers: { manual: }\n";
    const CHILD: &str = "tools:\n  allow_always: [web_fetch, write_file, read_file]\nskills:\n  allow_always: [order-data]\nstates:\n  work:\n    triggers: { manual: }\n    tools:\n      allow: [web_fetch, write_file, read_file]\n";

    #[test]
    fn an_ancestors_denials_bind_in_the_child_naming_the_ancestor() {
        let parent = policy(PARENT);
        let child = policy(CHILD);
        let inherited = [parent.inherited("research")];
        let vars = crate::Variables::new();
        let ctx = CallContext::agent("work")
            .with_variables(&vars)
            .with_inherited(&inherited);
        let decide = |tool: &str, args: serde_json::Value, ctx: &CallContext<'_>| {
            child.decide(&ToolCall::new(tool, &args), ctx)
        };

        let d = decide("web_fetch", json!({ "url": "https://x" }), &ctx);
        assert_eq!(d.rule.as_str(), "tool.forbidden");
        assert_eq!(
            d.message.as_deref(),
            Some(
                "[workflow] BLOCKED: 'web_fetch' is forbidden by the workflow inherited from workflow 'research' (tools.forbid_always). A denial beats every grant, so no allow entry here permits it."
            )
        );
        let d = decide(
            "write_file",
            json!({ "file_path": "scratchpad/secret/a.txt", "content": "" }),
            &ctx,
        );
        assert_eq!(d.rule.as_str(), "tool.forbidden");
        assert!(
            d.message.as_deref().is_some_and(|m| m.contains(
                "is forbidden by the workflow inherited from workflow 'research' (tools.forbid_always: paths=scratchpad/secret/**)"
            )),
            "{d:?}"
        );
        let d = decide(
            "read_file",
            json!({ "file_path": "skills/order-data/SKILL.md" }),
            &ctx,
        );
        assert_eq!(d.rule.as_str(), "skill.forbidden");
        assert!(
            d.message.as_deref().is_some_and(|m| m.ends_with(
                "belongs to the skill 'order-data', which workflow 'research' denies in every state it delegates to (skills.forbid_always). A denial beats every grant."
            )),
            "{d:?}"
        );
        let d = decide(
            "read_file",
            json!({ "file_path": "catalogs/eu/prices.csv" }),
            &ctx,
        );
        assert_eq!(d.rule.as_str(), "mount.forbidden");
        assert!(
            d.message.as_deref().is_some_and(|m| m.contains("which workflow 'research' denies in every state it delegates to (mounts.forbid_always)")),
            "{d:?}"
        );

        // A hook is bound too; outside the chain the child's own grants stand.
        let hook = ctx.with_origin(Origin::Lifecycle);
        assert_eq!(
            decide("web_fetch", json!({}), &hook).rule.as_str(),
            "tool.forbidden"
        );
        let alone = CallContext::agent("work").with_variables(&vars);
        assert!(decide("web_fetch", json!({ "url": "https://x" }), &alone).allowed);
        assert!(
            decide(
                "write_file",
                json!({ "file_path": "scratchpad/secret/a.txt", "content": "" }),
                &alone
            )
            .allowed
        );
        assert!(
            decide(
                "read_file",
                json!({ "file_path": "catalogs/eu/prices.csv" }),
                &alone
            )
            .allowed
        );
        assert!(
            decide(
                "read_file",
                json!({ "file_path": "skills/order-data/SKILL.md" }),
                &alone
            )
            .allowed
        );
    }
}

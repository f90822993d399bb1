//! `Governance`: the Rust kernel for hosts that run their own agent loop
//! (LangChain Deep Agents and the like). Translation only: the rules live in
//! `archmax-kernel`.

use std::collections::HashMap;

use archmax_kernel::tools::CONTROL_TOOLS;
use archmax_kernel::{
    CallContext, Mounts, Origin, Policy, PolicyOptions, SkillDir, ToolCall, ToolPaths,
};
use archmax_spec::DiskFiles;
use archmax_spec::workspace::{load_workflow, zero_config};
use napi::bindgen_prelude::{Error, Result, Status};
use napi_derive::napi;
use serde_json::{Map, Value};

use crate::dto::{MountOptions, mount_decls};

/// Options of `Governance.fromWorkspace`.
#[napi(object)]
pub struct GovernanceWorkspaceOptions {
    /// Workspace root (default: the current directory).
    pub root_dir: Option<String>,
    /// Workflow slug (default: `order-lookup`).
    pub workflow: Option<String>,
    /// The host's mount table, keyed like `validateWorkflow`'s (default: zero-config).
    pub mounts: Option<HashMap<String, MountOptions>>,
    /// Skill sources, workspace-relative (default: `["skills/"]`).
    pub skills: Option<Vec<String>>,
    /// Host tools permitted and disclosed in every state.
    pub essential_tools: Option<Vec<String>>,
    /// Path arguments of host tools: `{ tool: { arg: "read" | "write" | … } }`.
    #[napi(
        ts_type = "Record<string, Record<string, 'read' | 'list' | 'search' | 'write' | 'remove' | 'execute'>>"
    )]
    pub tool_paths: Option<Value>,
}

/// A skill bundle for `Governance.fromSpec`.
#[napi(object)]
pub struct GovernanceSkill {
    /// The slug specs name it by.
    pub slug: String,
    /// Its directory, workspace-relative (`skills/order-data`).
    pub prefix: String,
}

/// Options of `Governance.fromSpec`.
#[napi(object)]
pub struct GovernanceSpecOptions {
    /// The host's mount table (default: zero-config).
    pub mounts: Option<HashMap<String, MountOptions>>,
    /// The skill registry (default: none, so every `archmax_run` is refused).
    pub skills: Option<Vec<GovernanceSkill>>,
    /// Host tools permitted and disclosed in every state.
    pub essential_tools: Option<Vec<String>>,
    /// Path arguments of host tools.
    #[napi(
        ts_type = "Record<string, Record<string, 'read' | 'list' | 'search' | 'write' | 'remove' | 'execute'>>"
    )]
    pub tool_paths: Option<Value>,
}

/// A path argument as the kernel understood it (`GovernancePath`): a host resolves `path`
/// under its workspace root, never `given`.
#[napi(object)]
pub struct PathObject {
    /// The argument it came from (`file_path`, `source`, …).
    pub argument: String,
    /// The value as the model wrote it.
    pub given: String,
    /// The workspace-relative path decided on (no leading `/`).
    pub path: String,
    /// Where it lands.
    #[napi(
        ts_type = "'outside' | 'root' | 'authored' | 'internal' | 'offload' | 'scratchpad' | 'run'"
    )]
    pub zone: String,
}

/// A decision as JS receives it (`GovernanceDecision`): built field by field, which
/// saves about 1 µs per call over converting a JSON value.
#[napi(object)]
pub struct DecisionObject {
    /// Allowed or not.
    pub allowed: bool,
    /// The rule that decided.
    pub rule: String,
    /// The model-facing text; present on every denial.
    pub message: Option<String>,
    /// A denial retrying cannot fix: the turn ends.
    pub terminal: bool,
    /// The denial is reported as a warning event.
    pub warn: bool,
    /// The call's path arguments that were not already plain workspace-relative paths
    /// (a leading `/`, `.` or `..` segments), resolved; absent when there were none.
    pub paths: Option<Vec<PathObject>>,
}

impl From<archmax_kernel::Decision> for DecisionObject {
    fn from(decision: archmax_kernel::Decision) -> Self {
        archmax_kernel::HostDecision {
            decision,
            paths: Vec::new(),
        }
        .into()
    }
}

impl From<archmax_kernel::HostDecision> for DecisionObject {
    fn from(h: archmax_kernel::HostDecision) -> Self {
        let d = h.decision;
        DecisionObject {
            allowed: d.allowed,
            rule: d.rule.as_str().to_string(),
            message: d.message,
            terminal: d.terminal,
            warn: d.warn,
            paths: (!h.paths.is_empty()).then(|| {
                h.paths
                    .into_iter()
                    .map(|p| PathObject {
                        zone: serde_json::to_value(p.zone)
                            .ok()
                            .and_then(|z| z.as_str().map(str::to_string))
                            .unwrap_or_default(),
                        argument: p.argument,
                        given: p.given,
                        path: p.path,
                    })
                    .collect()
            }),
        }
    }
}

/// One call to decide.
#[napi(object)]
pub struct GovernanceCall {
    /// The active state.
    pub state: String,
    /// The tool name.
    pub tool: String,
    /// The call's arguments.
    #[napi(ts_type = "Record<string, unknown>")]
    pub args: Option<Value>,
    /// The run's variables, for `${{…}}` guards.
    #[napi(ts_type = "Record<string, unknown>")]
    pub variables: Option<Value>,
    /// Who calls: the agent (default), its script code, a hook or grader, or a
    /// reply-only turn of a parked run.
    #[napi(ts_type = "'agent' | 'script' | 'hook' | 'grader' | 'reply-only'")]
    pub authority: Option<String>,
    /// The session, for the host's own bookkeeping (the kernel does not read it).
    pub session_id: Option<String>,
}

fn tool_paths(value: Option<Value>) -> Result<ToolPaths> {
    let mut paths = ToolPaths::new();
    let Some(value) = value else { return Ok(paths) };
    let Value::Object(tools) = value else {
        return Err(Error::new(
            Status::InvalidArg,
            "toolPaths must be an object { tool: { arg: access } }".to_string(),
        ));
    };
    for (tool, decl) in tools {
        let Value::Object(args) = decl else {
            return Err(Error::new(
                Status::InvalidArg,
                format!("toolPaths.{tool} must be an object {{ arg: access }}"),
            ));
        };
        let pairs: Vec<(String, String)> = args
            .into_iter()
            .map(|(arg, access)| (arg, access.as_str().unwrap_or_default().to_string()))
            .collect();
        paths
            .declare(&tool, &pairs)
            .map_err(|e| Error::new(Status::InvalidArg, e.to_string()))?;
    }
    Ok(paths)
}

fn mounts(table: Option<HashMap<String, MountOptions>>) -> Mounts {
    match table {
        Some(t) => Mounts::from_decls(&mount_decls(t)),
        None => Mounts::from_decls(&zero_config()),
    }
}

/// The run's variables as the kernel reads them: an entry as the package returns it
/// (`{ value, locked? }`, `Outcome.variables`, `SessionSummary.variables`) stands for its
/// value; anything else is the value itself.
fn plain_values(vars: Map<String, Value>) -> Map<String, Value> {
    let is_entry = |o: &Map<String, Value>| {
        o.contains_key("value")
            && o.iter()
                .all(|(k, v)| k == "value" || (k == "locked" && v.is_boolean()))
    };
    vars.into_iter()
        .map(|(name, v)| match v {
            Value::Object(mut entry) if is_entry(&entry) => {
                (name, entry.remove("value").unwrap_or(Value::Null))
            }
            other => (name, other),
        })
        .collect()
}

/// The `code` of a workflow that cannot be loaded (the original's error class name).
const LOAD_ERROR: &str = "WorkflowLoadError";

/// Re-codes a binding error for a factory whose errors carry string codes.
fn recode(e: Error) -> Error<String> {
    Error::new(e.status.as_ref().to_string(), e.reason.clone())
}

/// The governance kernel over one workflow: decides tool calls exactly as the
/// harness runtime does.
#[napi]
pub struct Governance {
    policy: Policy,
    /// The host's rules are asked (`usePolicy`): a decision then runs with the JS
    /// environment at hand, so they are called directly.
    has_rules: bool,
}

/// The tools the runtime runs itself (`archmax_kernel::tools::BUILTINS`): `{ name, kind,
/// alwaysAllowed, default, fromScripts, readsOnly, listsPaths }` each, so no JS keeps its own
/// list of them.
#[napi(
    catch_unwind,
    ts_return_type = "Array<{ name: string; kind: 'control' | 'file' | 'todos' | 'code'; alwaysAllowed: boolean; default: boolean; fromScripts: boolean; readsOnly: boolean; listsPaths: boolean }>"
)]
pub fn builtin_tools() -> Value {
    serde_json::to_value(archmax_kernel::tools::BUILTINS).unwrap_or(Value::Null)
}

/// The `problem` of a spec text that does not load (`Governance.fromSpec`): the workflow
/// loader's words for an invalid machine spec.
#[napi(catch_unwind)]
pub fn invalid_spec_problem() -> String {
    archmax_spec::workspace::LoadProblem::Invalid.to_string()
}

/// The fields of the `WorkflowLoadError` `Governance.fromWorkspace(options)` raises (the
/// workflow, its path, the problem, the load errors), or `null` when the workflow loads:
/// what `governance.js` attaches to the error, so no JS reads them back out of its message.
#[napi(catch_unwind)]
pub fn workflow_load_fields(options: GovernanceWorkspaceOptions) -> Option<Value> {
    let cwd = std::env::current_dir().ok()?;
    let root = archmax_cli::workspace::resolve_root(&cwd, options.root_dir.as_deref());
    let workflow = options
        .workflow
        .unwrap_or_else(|| archmax_machine::DEFAULT_WORKFLOW.to_string());
    let sources = options
        .skills
        .unwrap_or_else(|| vec!["skills/".to_string()]);
    let files = DiskFiles::new(&root);
    let e = load_workflow(&files, &workflow, &sources).err()?;
    // The load errors as `validate` reports them (a missing workflow is one too).
    let mut opts = archmax_spec::ValidateOptions::new(&workflow);
    opts.skills = sources;
    let diagnostics: Vec<_> = archmax_spec::validate_workflow(&files, &opts)
        .diagnostics
        .into_iter()
        .filter(archmax_spec::Diagnostic::is_error)
        .collect();
    Some(serde_json::json!({
        "workflow": e.workflow,
        "workflowPath": e.path,
        "problem": e.problem,
        "diagnostics": diagnostics,
    }))
}

#[napi]
impl Governance {
    /// Compiles the workflow `workflow` of the workspace at `rootDir`. Throws an
    /// Error with `code` `WorkflowLoadError` when the workflow is missing or invalid.
    #[napi(factory, catch_unwind)]
    pub fn from_workspace(options: GovernanceWorkspaceOptions) -> Result<Governance, String> {
        let cwd = std::env::current_dir().map_err(|e| {
            Error::new(
                "GenericFailure".to_string(),
                format!("cannot read the current directory: {e}"),
            )
        })?;
        let root = archmax_cli::workspace::resolve_root(&cwd, options.root_dir.as_deref());
        let workflow = options
            .workflow
            .unwrap_or_else(|| archmax_machine::DEFAULT_WORKFLOW.to_string());
        let sources = options
            .skills
            .unwrap_or_else(|| vec!["skills/".to_string()]);
        let loaded = load_workflow(&DiskFiles::new(&root), &workflow, &sources)
            .map_err(|e| Error::new(LOAD_ERROR.to_string(), e.to_string()))?;
        let opts = PolicyOptions {
            mounts: mounts(options.mounts),
            skills: loaded.skills.iter().map(SkillDir::from_bundle).collect(),
            tool_paths: tool_paths(options.tool_paths).map_err(recode)?,
            essential_tools: options.essential_tools.unwrap_or_default(),
            custom_rules: Vec::new(),
        };
        let policy = Policy::compile(&loaded.spec, opts)
            .map_err(|e| Error::new("InvalidArg".to_string(), e.to_string()))?;
        Ok(Governance {
            policy,
            has_rules: false,
        })
    }

    /// Compiles one `workflow.yaml` text. Throws when the spec does not load,
    /// with every load-blocking diagnostic in the message.
    #[napi(factory, catch_unwind)]
    pub fn from_spec(
        yaml_text: String,
        options: Option<GovernanceSpecOptions>,
    ) -> Result<Governance, String> {
        let spec = archmax_spec::parse_machine_spec(&yaml_text).map_err(|issues| {
            let lines: Vec<String> = issues
                .iter()
                .filter(|d| d.is_error())
                .map(|d| match (&d.field, d.line) {
                    (Some(f), Some(l)) => format!("{f} (line {l}): {}", d.message),
                    (Some(f), None) => format!("{f}: {}", d.message),
                    (None, _) => d.message.clone(),
                })
                .collect();
            Error::new(
                LOAD_ERROR.to_string(),
                format!("the spec does not load: {}", lines.join("; ")),
            )
        })?;
        let options = options.unwrap_or(GovernanceSpecOptions {
            mounts: None,
            skills: None,
            essential_tools: None,
            tool_paths: None,
        });
        let opts = PolicyOptions {
            mounts: mounts(options.mounts),
            skills: options
                .skills
                .unwrap_or_default()
                .into_iter()
                .map(|s| SkillDir {
                    slug: s.slug,
                    prefix: archmax_kernel::canonical::canonicalize(&s.prefix).path,
                })
                .collect(),
            tool_paths: tool_paths(options.tool_paths).map_err(recode)?,
            essential_tools: options.essential_tools.unwrap_or_default(),
            custom_rules: Vec::new(),
        };
        let policy = Policy::compile(&spec, opts)
            .map_err(|e| Error::new("InvalidArg".to_string(), e.to_string()))?;
        Ok(Governance {
            policy,
            has_rules: false,
        })
    }

    /// Decides one tool call. (`@archmax-ai/harness` replaces this method with a faster one
    /// over [`Governance::decide_packed`], `governance.js`; both decide alike.)
    #[napi(catch_unwind, ts_return_type = "GovernanceDecision")]
    pub fn decide(&self, env: napi::Env, call: GovernanceCall) -> Result<DecisionObject> {
        let args = call.args.unwrap_or_else(|| Value::Object(Map::new()));
        self.decide_parts(
            &env,
            &call.state,
            &call.tool,
            &args,
            call.variables,
            call.authority.as_deref(),
        )
        .map(Into::into)
    }

    /// `decide` as `governance.js` calls it: the call's fields as arguments, `args` and
    /// `variables` as JSON text (napi converts an object field by field, which cost more than
    /// the decision itself). Answers a grant's rule id, or a denial as JSON
    /// (`{ allowed, rule, message, terminal, warn }`).
    #[napi(catch_unwind)]
    pub fn decide_packed(
        &self,
        env: napi::Env,
        state: String,
        tool: String,
        args_json: Option<String>,
        variables_json: Option<String>,
        authority: Option<String>,
    ) -> Result<String> {
        let parse = |what: &str, text: Option<String>| -> Result<Option<Value>> {
            text.map(|t| serde_json::from_str(&t))
                .transpose()
                .map_err(|e| Error::new(Status::InvalidArg, format!("{what} is not JSON: {e}")))
        };
        let args = parse("args", args_json)?.unwrap_or_else(|| Value::Object(Map::new()));
        let variables = parse("variables", variables_json)?;
        let d = self.decide_parts(&env, &state, &tool, &args, variables, authority.as_deref())?;
        if d.decision.allowed && d.paths.is_empty() {
            return Ok(d.decision.rule.as_str().to_string());
        }
        serde_json::to_string(&d).map_err(|e| Error::from_reason(e.to_string()))
    }

    /// One decision from the call's parts.
    fn decide_parts(
        &self,
        env: &napi::Env,
        state: &str,
        tool: &str,
        args: &Value,
        variables: Option<Value>,
        authority: Option<&str>,
    ) -> Result<archmax_kernel::HostDecision> {
        let (origin, reply_only) = match authority {
            None | Some("agent") => (Origin::Agent, false),
            Some("script") => (Origin::Script, false),
            Some("hook" | "grader") => (Origin::Lifecycle, false),
            Some("reply-only") => (Origin::Agent, true),
            Some(other) => {
                return Err(Error::new(
                    Status::InvalidArg,
                    format!(
                        "authority '{other}' is not one of 'agent', 'script', 'hook', 'grader', 'reply-only'"
                    ),
                ));
            }
        };
        let variables: Option<Map<String, Value>> = match variables {
            None | Some(Value::Null) => None,
            Some(Value::Object(m)) => Some(plain_values(m)),
            Some(_) => {
                return Err(Error::new(
                    Status::InvalidArg,
                    "variables must be an object".to_string(),
                ));
            }
        };
        let ctx = CallContext {
            state,
            origin,
            reply_only,
            variables: variables.as_ref(),
            inherited: &[],
        };
        let decide = || {
            self.policy
                .decide_for_host(&ToolCall::new(tool, args), &ctx)
        };
        Ok(if self.has_rules {
            crate::pump::with_env(env, decide)
        } else {
            decide()
        })
    }

    /// Sets the host's governance rules, asked after the workflow's denials as `createAgent`
    /// asks them: `count` rules, asked through `ask` (`governance.js` passes the same
    /// `policyAsk` `agent.js` does).
    #[napi(
        catch_unwind,
        ts_args_type = "ask: (callJson: string) => string, count: number"
    )]
    pub fn use_policy(
        &mut self,
        ask: napi::bindgen_prelude::Function<String, String>,
        count: u32,
    ) -> Result<()> {
        let ask = crate::policy::JsAsk::new(ask.create_ref()?, None);
        let rules = crate::policy::host_rules(&ask, count);
        self.has_rules = !rules.is_empty();
        self.policy.set_custom_rules(vec![Box::new(rules)]);
        Ok(())
    }

    /// The tool names the model is shown in `state`; `{ controls: false }` leaves out the
    /// runtime's control tools (`archmax_advance` … `archmax_run`), `{ controls: [names] }`
    /// keeps only the named ones, for a host that implements some of them.
    #[napi(
        catch_unwind,
        ts_args_type = "state: string, options?: { controls?: boolean | string[] }"
    )]
    pub fn surface(&self, state: String, options: Option<Value>) -> Result<Vec<String>> {
        let bad = || {
            Error::new(
                Status::InvalidArg,
                "surface: 'controls' must be a boolean or an array of tool names".to_string(),
            )
        };
        // The control tools kept: all (`None`), or those named.
        let kept: Option<Vec<&str>> = match options.as_ref().and_then(|o| o.get("controls")) {
            None | Some(Value::Null | Value::Bool(true)) => None,
            Some(Value::Bool(false)) => Some(Vec::new()),
            Some(Value::Array(names)) => Some(
                names
                    .iter()
                    .map(Value::as_str)
                    .collect::<Option<_>>()
                    .ok_or_else(bad)?,
            ),
            Some(_) => return Err(bad()),
        };
        let mut tools = self.policy.surface(&state);
        if let Some(kept) = kept {
            tools.retain(|t| !CONTROL_TOOLS.contains(&t.as_str()) || kept.contains(&t.as_str()));
        }
        Ok(tools)
    }

    /// The state slugs, in declaration order.
    #[napi(catch_unwind)]
    pub fn states(&self) -> Vec<String> {
        self.policy
            .states()
            .into_iter()
            .map(str::to_string)
            .collect()
    }

    /// What `state` allows, as a refusal lists it.
    #[napi(catch_unwind)]
    pub fn describe_allowed(&self, state: String) -> String {
        self.policy.describe_allowed(&state)
    }

    /// The skills enabled in `state`.
    #[napi(catch_unwind)]
    pub fn enabled_skills(&self, state: String) -> Vec<String> {
        self.policy.enabled_skills(&state).to_vec()
    }

    /// The governed mounts enabled in `state`.
    #[napi(catch_unwind)]
    pub fn enabled_mounts(&self, state: String) -> Vec<String> {
        self.policy.enabled_mounts(&state).to_vec()
    }

    /// Moving `from` → `to`: the `requires` gate, then the edge.
    #[napi(
        catch_unwind,
        ts_args_type = "from: string, to: string, variables?: Record<string, unknown>",
        ts_return_type = "GovernanceDecision"
    )]
    pub fn transition(&self, from: String, to: String, variables: Option<Value>) -> DecisionObject {
        let vars = match variables {
            Some(Value::Object(m)) => Some(plain_values(m)),
            _ => None,
        };
        self.policy.transition(&from, &to, vars.as_ref()).into()
    }

    /// A `ls` / `glob` / `grep` result as `state` may see it.
    #[napi(catch_unwind)]
    pub fn redact_listing(&self, state: String, text: String) -> String {
        self.policy
            .redact_listing(&state, Origin::Agent, &text)
            .into_owned()
    }
}

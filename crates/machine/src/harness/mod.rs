//! A [`Harness`]: one workflow assembled once (spec, compiled policy, skills,
//! mounts, prompt prefix, model, store, host tools, events) serving many sessions.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use archmax_kernel::{Mounts, Policy, PolicyOptions, SkillDir, ToolPaths};
use archmax_spec::Workflow;
use archmax_spec::runtime_contract::{RuntimeContract, is_supported, resolve_declared};
use archmax_spec::workspace::{Files, MountDecl, load_workflow, zero_config};
use archmax_spec::{Diagnostic, DiskFiles};
use serde_json::Value;

use crate::events::{Emitter, Event, EventSink};
use crate::model::client::Model;
use crate::store::SessionStore;
use crate::tools::HostTool;

use crate::error::RunError;

pub mod builder;
pub mod env;

pub use builder::{
    FALLBACK_MODELS_VAR, FallbackModel, HarnessBuilder, ModelSource, Recording, RequestOptions,
    Tape, default_model_id,
};

/// The model id requests carry when the host names none (no `defaultModel`, no
/// `ARCHMAX_MODEL`, no `model:` in the spec): it is never reported as the call's model.
pub const UNNAMED_MODEL: &str = "default";

/// How to assemble a harness.
#[derive(Clone)]
pub struct HarnessOptions {
    /// The workspace root.
    pub root: PathBuf,
    /// The workflow slug.
    pub workflow: String,
    /// The model every call goes to.
    pub model: Arc<dyn Model>,
    /// The default model id (`ARCHMAX_MODEL`); `settings.model` and `state.model` win.
    pub default_model: String,
    /// Where sessions live.
    pub store: Arc<dyn SessionStore>,
    /// Where events go.
    pub events: Arc<dyn EventSink>,
    /// Host tools.
    pub tools: Vec<Arc<dyn HostTool>>,
    /// Host tools permitted in every state.
    pub essential_tools: Vec<String>,
    /// The host's mount table (`None` = zero-config).
    pub mounts: Option<Vec<MountDecl>>,
    /// Skill sources (default `["skills/"]`).
    pub skills: Vec<String>,
}

/// Path declarations by tool name, each `{ arg: access }` in order.
pub type ToolPathDecls = Vec<(String, Vec<(String, String)>)>;

/// What a host may add to [`HarnessOptions`] (the Node binding's `createAgent` options).
#[derive(Debug, Clone, Default)]
pub struct AssemblyExtras {
    /// Path declarations by tool name (`toolPaths`), each `{ arg: access }` in order. One
    /// replaces the tool's own [`HostTool::paths`]; a built-in name, an empty declaration or
    /// an unknown access refuses assembly (`ToolPathsError`).
    pub tool_paths: ToolPathDecls,
    /// The host's governance rules (`policyRules`), consulted in order after the workflow's
    /// denials (see [`archmax_kernel::CustomRule`]).
    pub policy_rules: HostRules,
    /// Which workflow governs the agent (default: the named one, which must load).
    pub governance: Governance,
    /// The host's `systemPrompt`: a prompt layer right after the workspace's `AGENTS.md`.
    pub system_prompt: Option<String>,
    /// The host's custom hook kinds (`hookExecutors`), run beside `script` and `rubric`.
    pub hook_kinds: Option<crate::hooks::HostHookKinds>,
    /// The settings every turn reads (prompt cache, prices, images); a delegation target
    /// gets its caller's.
    pub settings: TurnSettings,
    /// The workspace's MCP servers (shared by every harness of the process that has them).
    pub mcp: Option<Arc<crate::mcp::McpTools>>,
}

/// How a harness was assembled, kept so a delegation assembles its target the same way
/// (`crate::registry`).
pub(crate) struct Recipe {
    pub(crate) opts: HarnessOptions,
    pub(crate) extras: AssemblyExtras,
}

/// The tool definitions of one state and the version of the MCP tools they were built from.
pub(crate) type StateToolDefs = (u64, Arc<[crate::model::ToolDef]>);

/// Settings every turn of a harness reads, decided at assembly ([`HarnessBuilder`] reads
/// them from the host's options and the environment).
#[derive(Debug, Clone)]
pub struct TurnSettings {
    /// Prompt caching from the environment (`ARCHMAX_PROMPT_CACHE`, `…_TTL`); the spec's
    /// `settings.prompt_cache` wins over it.
    pub env_prompt_cache: (bool, String),
    /// The host's `promptCache` option (`enabled`, `ttl`): each given field outranks the spec
    /// and the environment.
    pub prompt_cache_option: (Option<bool>, Option<String>),
    /// Token prices; `None`: cost is never reported (never guessed).
    pub pricing: Option<crate::model::PricingTable>,
    /// Image reads (`createAgent({ images })`); `None`: images are binary files, not shown.
    pub images: Option<crate::images::ImageReads>,
    /// The host's spending ceilings (the workflow's `budget` caps may be stricter).
    pub caps: crate::caps::SpendCaps,
}

impl Default for TurnSettings {
    fn default() -> Self {
        TurnSettings {
            env_prompt_cache: (true, crate::model::CacheTtl::default().as_str().to_string()),
            prompt_cache_option: (None, None),
            pricing: None,
            images: None,
            caps: crate::caps::SpendCaps::default(),
        }
    }
}

/// The workflow an agent assembled without a named one looks for.
pub const DEFAULT_WORKFLOW: &str = "order-lookup";

/// Which workflow governs an assembled agent (the original's `workflow` option).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Governance {
    /// [`HarnessOptions::workflow`] governs; missing or invalid refuses assembly
    /// (`WorkflowLoadError`: `no workflow.yaml found`, `no valid machine spec`).
    #[default]
    Required,
    /// The workflow is looked for (the original's omitted `workflow`, which looks for the
    /// default slug): present governs, invalid refuses assembly, missing assembles a plain agent.
    IfPresent,
    /// No workflow is read (`workflow: false`): a plain agent (see `crate::plain`).
    Plain,
}

/// The host's governance rules, shared.
#[derive(Clone, Default)]
pub struct HostRules(pub Vec<Arc<dyn archmax_kernel::CustomRule>>);

impl std::fmt::Debug for HostRules {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostRules({} rules)", self.0.len())
    }
}

/// One workflow, assembled.
pub struct Harness {
    pub(crate) root: PathBuf,
    pub(crate) workflow: String,
    /// No workflow governs: `spec` is the plain agent's synthesized one (`crate::plain`).
    pub(crate) plain: bool,
    /// A sub-workflow's target, assembled for its callers (`crate::registry`): its sessions
    /// are child sessions, which are not asked for a run title and whose returns go back
    /// to their caller unchecked.
    pub(crate) child: bool,
    pub(crate) spec: Workflow,
    pub(crate) contract: RuntimeContract,
    pub(crate) spec_json: Value,
    pub(crate) spec_hash: String,
    pub(crate) policy: Arc<Policy>,
    pub(crate) model: Arc<dyn Model>,
    pub(crate) default_model: String,
    pub(crate) store: Arc<dyn SessionStore>,
    pub(crate) emitter: Emitter,
    pub(crate) tools: Vec<Arc<dyn HostTool>>,
    /// The workspace's MCP tools, when it declares servers.
    pub(crate) mcp: Option<Arc<crate::mcp::McpTools>>,
    pub(crate) static_prompt: String,
    /// (slug, description, `SKILL.md` path).
    pub(crate) skills: Vec<(String, String, String)>,
    pub(crate) mounts: Vec<MountDecl>,
    /// Lint findings and registry warnings reported at assembly.
    pub warnings: Vec<Diagnostic>,
    /// Runs lifecycle hooks (fail-closed until the sandbox lands).
    pub(crate) hooks: Arc<dyn crate::hooks::HookRunner>,
    /// The cancel switches of the turns in flight.
    pub(crate) cancels: crate::cancel::Registry,
    /// Prompt cache, prices and image reads ([`TurnSettings`]).
    pub(crate) settings: TurnSettings,
    /// The spending caps in force (the workflow's and the host's, the stricter of each),
    /// decided once here and read before every model call.
    pub(crate) caps: Vec<crate::caps::Cap>,
    /// How this harness was assembled: a delegation assembles its target the same way.
    pub(crate) recipe: Arc<Recipe>,
    /// The delegation targets assembled so far, by slug (`crate::registry`).
    pub(crate) children: std::sync::Mutex<std::collections::HashMap<String, Arc<Harness>>>,
    /// The tool definitions offered in each state, built once (`Harness::tool_defs`), with
    /// the version of the MCP tools they were built from.
    pub(crate) tool_defs: std::sync::RwLock<std::collections::HashMap<String, StateToolDefs>>,
    /// The cases' tool mocks by session (`archmax test`), shared with delegation targets.
    pub(crate) mocks: Arc<crate::mocks::ToolMocks>,
    /// This harness's spec snapshot, written to its store once per process.
    pub(crate) spec_snapshot: Arc<SpecSnapshot>,
}

/// A harness's spec snapshot (the spec without its metadata, under its hash) and whether
/// this process wrote it to the store yet. A turn's start writes it in the same piece of
/// store work as its lease and load (`Harness::begin`), so a thousand sessions starting at
/// once do not each queue one more piece of blocking work (behind all the others' leases)
/// before their first model call; the first writes it, the rest find it written.
pub(crate) struct SpecSnapshot {
    hash: String,
    spec: Value,
    written: std::sync::atomic::AtomicBool,
    /// Held while one caller writes, so the others wait for it instead of writing too.
    writing: std::sync::Mutex<()>,
}

impl SpecSnapshot {
    fn new(hash: String, spec_json: &Value) -> Self {
        SpecSnapshot {
            hash,
            spec: archmax_spec::hash::strip_metadata(spec_json),
            written: std::sync::atomic::AtomicBool::new(false),
            writing: std::sync::Mutex::new(()),
        }
    }

    /// Whether this process wrote the snapshot to the store already.
    pub(crate) fn written(&self) -> bool {
        self.written.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Writes the snapshot to `store` unless this process already did; returns once it is
    /// there (a caller that finds another writing waits for it).
    pub(crate) fn ensure(
        &self,
        store: &dyn crate::store::SessionStore,
    ) -> Result<(), crate::store::StoreError> {
        if self.written() {
            return Ok(());
        }
        let _writing = self
            .writing
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if self.written() {
            return Ok(());
        }
        store.write_spec_snapshot(&self.hash, &self.spec)?;
        self.written
            .store(true, std::sync::atomic::Ordering::Release);
        Ok(())
    }
}

impl std::fmt::Debug for Harness {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Harness")
            .field("workflow", &self.workflow)
            .finish_non_exhaustive()
    }
}

impl Harness {
    /// Cancels `session_id`'s turn in flight: it ends `failed` with exit code
    /// `turn-cancelled`. False when no turn of that session is running here.
    pub fn cancel(&self, session_id: &str) -> bool {
        self.cancels.cancel(session_id)
    }

    /// Cancels every turn in flight on this harness (a process being interrupted); how
    /// many there were. Each ends as [`Harness::cancel`] says.
    pub fn cancel_all(&self) -> usize {
        self.cancels.cancel_all()
    }

    /// Assembles `workflow` of the workspace at `root`.
    pub fn assemble(opts: HarnessOptions) -> Result<Harness, RunError> {
        Self::assemble_with(opts, AssemblyExtras::default())
    }

    /// Assembles `workflow` of the workspace at `root` with a host's extras.
    pub fn assemble_with(
        opts: HarnessOptions,
        extras: AssemblyExtras,
    ) -> Result<Harness, RunError> {
        Self::assemble_as(opts, extras, false)
    }

    /// [`Harness::assemble_with`]; `child`: as a sub-workflow's target.
    pub(crate) fn assemble_as(
        opts: HarnessOptions,
        extras: AssemblyExtras,
        child: bool,
    ) -> Result<Harness, RunError> {
        // The original's order decides which refusal wins: reserved tool names,
        // mounts, tool paths, the workflow load, then the runtime contract.
        crate::tools::check_names(&opts.tools)?;
        let recipe = Arc::new(Recipe {
            opts: opts.clone(),
            extras: extras.clone(),
        });
        let mounts = opts.mounts.unwrap_or_else(zero_config);
        check_mounts(&mounts)?;
        let mut tool_paths = ToolPaths::new();
        for t in &opts.tools {
            let overridden = extras.tool_paths.iter().any(|(name, _)| name == t.name());
            if let Some(decl) = t.paths().filter(|_| !overridden) {
                tool_paths.declare(t.name(), &decl)?;
            }
        }
        for (name, decl) in &extras.tool_paths {
            tool_paths.declare(name, decl)?;
        }
        // An MCP server's declared path arguments, unless the host declares the tool's own.
        if let Some(mcp) = &extras.mcp {
            let host_declared = |name: &str| extras.tool_paths.iter().any(|(n, _)| n == name);
            tool_paths.merge_native(mcp.declared_paths(), &host_declared);
        }
        let files = DiskFiles::new(&opts.root);
        let loaded = match extras.governance {
            Governance::Plain => None,
            Governance::IfPresent
                if matches!(
                    files.read_checked(&archmax_spec::workspace::spec_file(&opts.workflow)),
                    Ok(None)
                ) =>
            {
                None
            }
            Governance::Required | Governance::IfPresent => {
                Some(load_workflow(&files, &opts.workflow, &opts.skills)?)
            }
        };
        let plain = loaded.is_none();
        let loaded = match loaded {
            Some(loaded) => loaded,
            None => crate::plain::loaded(&files, &opts.skills, &mounts, &opts.tools)?,
        };
        let mut extras = extras;
        let settings = extras.settings.clone();
        if plain {
            // The original's plain agent has no kernel for host rules to join.
            extras.policy_rules = HostRules::default();
        }
        let contract = resolve_declared(loaded.spec.runtime.as_ref());
        if !is_supported(&contract) {
            return Err(RunError::UnsupportedRuntimeContract(contract));
        }
        if let Some(host) = extras.hook_kinds.as_ref().filter(|_| !plain) {
            let shadowed: Vec<&str> = host
                .kinds
                .iter()
                .map(String::as_str)
                .filter(|k| crate::hooks::BUILTIN_KINDS.contains(k))
                .collect();
            if !shadowed.is_empty() {
                return Err(RunError::BuiltinHookKind(shadowed.join(", ")));
            }
        }
        let policy = Policy::compile(
            &loaded.spec,
            PolicyOptions {
                mounts: Mounts::from_decls(&mounts),
                skills: loaded.skills.iter().map(SkillDir::from_bundle).collect(),
                tool_paths,
                essential_tools: opts.essential_tools.clone(),
                custom_rules: extras
                    .policy_rules
                    .0
                    .iter()
                    .map(|r| Box::new(Arc::clone(r)) as Box<dyn archmax_kernel::CustomRule>)
                    .collect(),
            },
        )
        .map_err(|e| RunError::Store(e.to_string()))?;
        let spec_json = serde_json::to_value(&loaded.spec).unwrap_or(Value::Null);
        let spec_hash = archmax_spec::hash::spec_hash(&spec_json);
        let persona = files
            .read_checked(archmax_spec::workspace::PERSONA_FILE)
            .map_err(|problem| RunError::AuthoredFile {
                path: archmax_spec::workspace::PERSONA_FILE.to_string(),
                problem,
            })?;
        let zones = crate::prompt::zones_section(&mounts);
        let extra = extras.system_prompt.as_deref();
        let static_prompt = if plain {
            crate::plain::system_prompt(persona.as_deref(), extra, &zones, &loaded.skills)
        } else {
            let prose = files.read(&format!("workflows/{}/WORKFLOW.md", opts.workflow));
            crate::prompt::static_prefix(
                persona.as_deref(),
                extra,
                &zones,
                &loaded.spec,
                prose.as_deref(),
                child,
            )
        };
        let skills = loaded
            .skills
            .iter()
            .map(|b| {
                (
                    b.slug.clone(),
                    b.description.clone(),
                    format!("{}SKILL.md", b.prefix),
                )
            })
            .collect();
        let grader: Arc<dyn crate::hooks::HookRunner> = Arc::new(crate::hooks::ModelGrader::new(
            opts.model.clone(),
            opts.default_model.clone(),
            opts.root.join("workflows").join(&opts.workflow),
            crate::ptc::limits(&loaded.spec),
        ));
        let grader = match extras.hook_kinds.clone() {
            Some(host) => Arc::new(crate::hooks::WithHostKinds {
                builtin: grader,
                host,
            }),
            None => grader,
        };
        let emitter = Emitter::new(opts.events);
        for w in &loaded.warnings {
            emitter.emit(
                None,
                Event::Warning {
                    scope: "workflow".to_string(),
                    message: w.message.clone(),
                },
            );
        }
        if !loaded.skills.is_empty() {
            emitter.emit(
                None,
                Event::SkillsLoaded {
                    names: loaded.skills.iter().map(|b| b.slug.clone()).collect(),
                },
            );
        }
        let spec_snapshot = Arc::new(SpecSnapshot::new(spec_hash.clone(), &spec_json));
        let caps = crate::caps::effective(loaded.spec.budget.as_ref(), &settings.caps);
        let harness = Harness {
            root: opts.root,
            workflow: if plain { String::new() } else { opts.workflow },
            plain,
            child,
            spec: loaded.spec,
            contract,
            spec_json,
            spec_hash,
            policy: Arc::new(policy),
            model: opts.model,
            default_model: opts.default_model,
            store: opts.store,
            emitter,
            tools: opts.tools,
            mcp: extras.mcp.clone(),
            static_prompt,
            skills,
            mounts,
            warnings: loaded.warnings,
            hooks: grader,
            cancels: crate::cancel::Registry::default(),
            caps,
            settings,
            tool_defs: std::sync::RwLock::default(),
            recipe,
            children: std::sync::Mutex::default(),
            mocks: Arc::default(),
            spec_snapshot,
        };
        // A cap in US dollars on a model with no price is refused, never ignored.
        if !harness.plain {
            harness.check_caps()?;
        }
        Ok(harness)
    }

    /// Refuses host seeds whose names are not variable names (`InvalidVariableNameError`,
    /// source `seeded`).
    pub fn check_seeds(&self, seeds: &serde_json::Map<String, Value>) -> Result<(), RunError> {
        check_variable_names(seeds, "seeded")
    }

    /// Sets the runner of lifecycle hooks.
    pub fn set_hook_runner(&mut self, runner: Arc<dyn crate::hooks::HookRunner>) {
        self.hooks = runner;
    }

    /// Whether to mark the static prefix for caching, and the TTL. Each field comes from
    /// the host option, else the spec's `settings.prompt_cache`, else the environment; a
    /// TTL other than `5m`/`1h` falls back to `5m`.
    pub fn prompt_cache(&self) -> (bool, &'static str) {
        let spec = self
            .spec
            .settings
            .as_ref()
            .and_then(|s| s.prompt_cache.as_ref());
        let (option_enabled, option_ttl) = &self.settings.prompt_cache_option;
        let enabled = option_enabled
            .or_else(|| spec.and_then(|p| p.enabled))
            .unwrap_or(self.settings.env_prompt_cache.0);
        let ttl = option_ttl
            .as_deref()
            .or_else(|| spec.and_then(|p| p.ttl.as_deref()))
            .unwrap_or(&self.settings.env_prompt_cache.1);
        (enabled, crate::model::CacheTtl::parse(ttl).as_str())
    }

    /// The workspace's MCP tools, when it declares servers.
    pub fn mcp_tools(&self) -> Option<&Arc<crate::mcp::McpTools>> {
        self.mcp.as_ref()
    }

    /// The token prices calls are charged at (`None`: cost is never reported).
    pub fn pricing(&self) -> Option<&crate::model::PricingTable> {
        self.settings.pricing.as_ref()
    }

    /// The tool mocks cases declare per session (consulted after governance).
    pub fn tool_mocks(&self) -> &Arc<crate::mocks::ToolMocks> {
        &self.mocks
    }

    /// The model every call of this harness goes to.
    pub fn model(&self) -> Arc<dyn Model> {
        Arc::clone(&self.model)
    }

    /// The default model id requests carry when neither the spec nor a state names one.
    pub fn default_model(&self) -> &str {
        &self.default_model
    }

    /// The workspace root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The workflow slug (`""` for a plain agent).
    pub fn workflow(&self) -> &str {
        &self.workflow
    }

    /// True when no workflow governs this agent (`createAgent({ workflow: false })`, or the
    /// default workflow looked for and absent): see `crate::plain`.
    pub fn is_plain(&self) -> bool {
        self.plain
    }

    /// The typed spec.
    pub fn spec(&self) -> &Workflow {
        &self.spec
    }

    /// The runtime contract the spec declares (or the defaulted v1), supported.
    pub fn runtime_contract(&self) -> &RuntimeContract {
        &self.contract
    }

    /// The compiled policy.
    pub fn policy(&self) -> &Policy {
        &self.policy
    }

    /// The static system prompt prefix (identical in every state).
    pub fn static_prompt(&self) -> &str {
        &self.static_prompt
    }

    /// The start state of `trigger`.
    pub fn start_state(&self, trigger: &str) -> Result<String, RunError> {
        for (slug, st) in &self.spec.states {
            if st
                .triggers
                .as_ref()
                .is_some_and(|t| t.contains_key(trigger))
            {
                return Ok(slug.clone());
            }
        }
        let mut available: Vec<String> = self
            .spec
            .states
            .values()
            .flat_map(|s| s.triggers.iter().flat_map(|t| t.keys()))
            .cloned()
            .collect();
        available.dedup();
        Err(RunError::UnknownTrigger {
            id: trigger.to_string(),
            available,
        })
    }
}

/// Whether a model id takes Anthropic-style `cache_control` markers (a Claude model
/// behind an OpenAI-compatible endpoint). Other endpoints cache prefixes on their own.
pub fn takes_cache_markers(model: &str) -> bool {
    model.to_ascii_lowercase().contains("claude")
}

/// The session areas the store owns at the workspace root: no mount may take them.
const RUN_AREAS: [&str; 6] = [
    "scratchpad",
    "checkpoints",
    "artifacts",
    "_specs",
    "large_tool_results",
    "conversation_history",
];

/// Refuses the first name of `variables` that is not a variable name; `origin` says where
/// they came from (`seeded`, `delivered to session '<id>'`).
pub(crate) fn check_variable_names(
    variables: &serde_json::Map<String, Value>,
    origin: &str,
) -> Result<(), RunError> {
    match variables
        .keys()
        .find(|name| !archmax_spec::grammar::is_variable_name(name))
    {
        Some(name) => Err(RunError::InvalidVariableName {
            name: name.clone(),
            origin: origin.to_string(),
        }),
        None => Ok(()),
    }
}

/// Refuses mounts that would shadow a run area or serve the authoring plane.
fn check_mounts(mounts: &[MountDecl]) -> Result<(), RunError> {
    for m in mounts {
        let top = m.name.split('/').next().unwrap_or_default();
        let key = match m.kind {
            archmax_spec::workspace::MountKind::Dir => format!("/{}/", m.name),
            archmax_spec::workspace::MountKind::File => format!("/{}", m.name),
        };
        if top == "workflows" {
            return Err(RunError::MountCollision {
                key,
                run_area: None,
            });
        }
        if RUN_AREAS.contains(&top) {
            return Err(RunError::MountCollision {
                key,
                run_area: Some(top.to_string()),
            });
        }
    }
    Ok(())
}

/// A fresh session id: `session-` and a random UUID v4.
pub fn mint_session_id() -> String {
    let mut bytes = [0u8; 16];
    let filled = std::fs::File::open("/dev/urandom")
        .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut bytes))
        .is_ok();
    if !filled {
        // No urandom: mix the clock, the pid and a counter (unique, not secret).
        static COUNTER: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = COUNTER.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        let seed = format!("{}-{}-{n}", crate::clock::now_ms(), std::process::id());
        let digest = <sha2::Sha256 as sha2::Digest>::digest(seed.as_bytes());
        bytes.copy_from_slice(&digest[..16]);
    }
    bytes[6] = (bytes[6] & 0x0f) | 0x40;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let hex: String = bytes.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "session-{}-{}-{}-{}-{}",
        &hex[0..8],
        &hex[8..12],
        &hex[12..16],
        &hex[16..20],
        &hex[20..32]
    )
}

/// Where a session id came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionSource {
    /// Given explicitly.
    Explicit,
    /// Read through a session path.
    Path,
    /// Minted (with a warning when a declared path did not resolve).
    Minted {
        /// The declared path that did not resolve, if any.
        unresolved: Option<String>,
    },
}

impl Harness {
    /// The session a firing belongs to: the explicit id, else the caller's
    /// `session_path`, else the trigger's `session:` declaration, read over the
    /// firing's variables; else a minted id.
    pub fn resolve_session(
        &self,
        explicit: Option<&str>,
        trigger: &str,
        variables: &serde_json::Map<String, Value>,
        session_path: Option<&str>,
    ) -> Result<(String, SessionSource), RunError> {
        let explicit = explicit.map(str::trim).filter(|s| !s.is_empty());
        let session_path = session_path.filter(|p| !p.trim().is_empty());
        if explicit.is_none() && session_path.is_none() {
            self.start_state(trigger)?;
        }
        let (id, source) = self.derive_session_id(explicit, trigger, variables, session_path)?;
        // An id read from a firing's variables is checked here, before any turn starts.
        self.parse_session_id(&id)?;
        Ok((id, source))
    }

    /// [`Harness::resolve_session`] without refusing an undeclared trigger (its firing
    /// then gets a minted id).
    pub(crate) fn derive_session_id(
        &self,
        explicit: Option<&str>,
        trigger: &str,
        variables: &serde_json::Map<String, Value>,
        session_path: Option<&str>,
    ) -> Result<(String, SessionSource), RunError> {
        if let Some(id) = explicit.map(str::trim).filter(|s| !s.is_empty()) {
            return Ok((id.to_string(), SessionSource::Explicit));
        }
        let vars = Value::Object(variables.clone());
        if let Some(path) = session_path.filter(|p| !p.trim().is_empty()) {
            if let Some(problem) = archmax_spec::grammar::session_path_problem(path) {
                return Err(RunError::SessionPath {
                    path: path.to_string(),
                    problem,
                });
            }
            let segs: Vec<String> = path.trim().split('.').map(str::to_string).collect();
            return match archmax_spec::grammar::resolve_path(&vars, &segs)
                .and_then(archmax_spec::grammar::session_id_from_value)
            {
                Some(id) => Ok((id, SessionSource::Path)),
                None => Ok((
                    mint_session_id(),
                    SessionSource::Minted {
                        unresolved: Some(path.to_string()),
                    },
                )),
            };
        }
        if let Some(id) =
            archmax_spec::signature::session_id_for_trigger(&self.spec_json, trigger, &vars)
        {
            return Ok((id, SessionSource::Path));
        }
        let declared = self
            .spec
            .states
            .values()
            .filter_map(|s| s.triggers.as_ref()?.get(trigger)?.as_ref()?.session.clone())
            .next();
        Ok((
            mint_session_id(),
            SessionSource::Minted {
                unresolved: declared,
            },
        ))
    }

    /// Validates a session id under the runtime rules (session areas and mount names
    /// reserved): [`RunError::SessionId`] when refused.
    pub(crate) fn parse_session_id(&self, id: &str) -> Result<crate::store::SessionId, RunError> {
        let rules = crate::store::IdRules::with_mounts(self.mounts.iter().map(|m| m.name.clone()));
        Ok(crate::store::SessionId::parse_with(id, &rules)?)
    }

    /// Reads a session's state without taking the writer lease.
    pub fn session_state(&self, id: &str) -> Result<Option<crate::state::SessionState>, RunError> {
        let id = self.parse_session_id(id)?;
        let Some(v) = self.store.load_state(&id)? else {
            return Ok(None);
        };
        serde_json::from_value(v).map(Some).map_err(|e| {
            RunError::Store(format!(
                "session '{}' has an unreadable state: {e}",
                id.as_str()
            ))
        })
    }

    /// Every session folder of the store, in directory order.
    pub fn session_ids(&self) -> Result<Vec<String>, RunError> {
        Ok(self.store.list()?)
    }
}

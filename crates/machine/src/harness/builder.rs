//! [`HarnessBuilder`]: the one place a harness is assembled from a host's choices and the
//! environment. Every way in (the CLI's commands, `archmax serve`, the worker, `archmax test`
//! and `createAgent`) maps its own options onto it; every default and every check of a
//! setting lives here: the `.env` reading, the model source and its default id, the
//! endpoint's settings (and whether it needs a key), cassettes, prices, the prompt cache,
//! image reads, the default trigger and the seeds.
//!
//! ```no_run
//! use archmax_machine::{HarnessBuilder, ModelSource};
//! # fn demo(model: std::sync::Arc<dyn archmax_machine::model::Model>) -> Result<(), archmax_machine::RunError> {
//! let harness = HarnessBuilder::new("examples/customer-support", "order-lookup")
//!     .model(ModelSource::Given(model))
//!     .build()?;
//! # Ok(()) }
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{Map, Value};

use super::env::{Env, Lookup, process_env};
use super::{AssemblyExtras, Governance, Harness, HarnessOptions, TurnSettings, UNNAMED_MODEL};
use crate::error::RunError;
use crate::events::{EventSink, NoEvents};
use crate::model::cassette::{Recorder, Replayer};
use crate::model::client::{Model, OpenAiClient};
use crate::model::{
    MAX_REQUEST_TIMEOUT_MS, MAX_RESPONSE_BYTES_LIMIT, MAX_RETRIES_LIMIT, ModelConfig, Pricing,
    PricingTable, prompt_cache_from_env,
};
use crate::store::{FsStore, SessionStore};
use crate::tools::HostTool;

/// The variable naming the default model id.
pub const MODEL_VAR: &str = "ARCHMAX_MODEL";

/// Where a harness's model calls go.
pub enum ModelSource {
    /// The OpenAI-compatible endpoint the `ARCHMAX_*` settings name (the default).
    Endpoint,
    /// A model the host gives (a JS function, a LangChain model, a test's scripted model).
    Given(Arc<dyn Model>),
    /// The exchanges of a cassette file, answered in order: no endpoint setting is needed,
    /// and the recorded run's default model id is the default.
    Replay(PathBuf),
    /// A model answering from recordings whose default model id was `recorded_model`
    /// (`archmax test --replay`'s cassette per case).
    Recorded {
        /// The model.
        model: Arc<dyn Model>,
        /// The recordings' default model id, if they name one.
        recorded_model: Option<String>,
    },
}

/// A recorder a caller wraps the model in, given the default model id; it records the
/// MCP servers' answers too.
pub type WrapModel = Box<dyn FnOnce(Arc<dyn Model>, &str) -> Arc<dyn Tape> + Send>;

/// A cassette that answers, or records, both the model and the MCP servers.
pub trait Tape: Model + crate::mcp::McpTape {}
impl<T: Model + crate::mcp::McpTape> Tape for T {}

/// How the calls of a harness are recorded, if they are.
pub enum Recording {
    /// Every exchange is appended to this cassette file.
    File(PathBuf),
    /// The model is wrapped by the caller's recorder, given the default model id
    /// (`archmax test --record`'s cassette per case).
    Wrap(WrapModel),
}

/// The host's bounds on each call to the endpoint; unset ones come from the environment.
#[derive(Debug, Clone, Copy, Default)]
pub struct RequestOptions {
    /// Per attempt, in milliseconds (`requestTimeoutMs`).
    pub timeout_ms: Option<u64>,
    /// Retries after the first attempt (`maxRetries`).
    pub max_retries: Option<u32>,
    /// The largest answer read, in bytes (`maxResponseBytes`).
    pub max_response_bytes: Option<u64>,
    /// Whether answers stream (`streaming`).
    pub streaming: Option<bool>,
    /// How many calls the process sends the endpoint at once (`maxConcurrentCalls`).
    pub max_concurrent_calls: Option<u32>,
}

/// Assembles a [`Harness`]: set what the host chose, then [`HarnessBuilder::build`].
pub struct HarnessBuilder {
    root: PathBuf,
    workflow: String,
    env: Lookup,
    model: ModelSource,
    default_model: Option<String>,
    requests: RequestOptions,
    recording: Option<Recording>,
    store: Option<Arc<dyn SessionStore>>,
    events: Arc<dyn EventSink>,
    tools: Vec<Arc<dyn HostTool>>,
    essential_tools: Vec<String>,
    mounts: Option<Vec<archmax_spec::workspace::MountDecl>>,
    skills: Vec<String>,
    extras: AssemblyExtras,
    pricing: Option<PricingTable>,
    caps: crate::caps::SpendCaps,
    fallbacks: Option<Vec<FallbackModel>>,
    prompt_cache: (Option<bool>, Option<String>),
    trigger: Option<String>,
    seeds: Map<String, Value>,
    mcp: McpChoice,
    mcp_tape: Option<Arc<dyn crate::mcp::McpTape>>,
    /// Who answers the workspace's servers' elicitation and sampling requests.
    mcp_host: Option<Arc<dyn crate::mcp::McpHost>>,
}

/// Where a harness's MCP servers come from.
enum McpChoice {
    /// The workspace's `.mcp.json`, if it has one.
    Workspace,
    /// These (a host's `mcpServers`, or servers a process shares between its harnesses).
    Given(Option<Arc<crate::mcp::McpTools>>),
}

impl HarnessBuilder {
    /// A harness of `workflow` in the workspace at `root`, reading its settings from the
    /// process environment and the `.env` files of the working directory and of `root`; the
    /// endpoint the settings name; sessions in `<root>/sessions/`; no events.
    pub fn new(root: impl Into<PathBuf>, workflow: impl Into<String>) -> Self {
        let root = root.into();
        let cwd = std::env::current_dir().ok();
        let env = Env::of_workspace(&process_env, cwd.as_deref(), &root).into_lookup();
        HarnessBuilder {
            root,
            workflow: workflow.into(),
            env,
            model: ModelSource::Endpoint,
            default_model: None,
            requests: RequestOptions::default(),
            recording: None,
            store: None,
            events: Arc::new(NoEvents),
            tools: Vec::new(),
            essential_tools: Vec::new(),
            mounts: None,
            skills: vec!["skills/".to_string()],
            extras: AssemblyExtras::default(),
            pricing: None,
            caps: crate::caps::SpendCaps::default(),
            fallbacks: None,
            prompt_cache: (None, None),
            trigger: None,
            seeds: Map::new(),
            mcp: McpChoice::Workspace,
            mcp_tape: None,
            mcp_host: None,
        }
    }

    /// The cassette the MCP servers' answers are recorded into or replayed from, when the
    /// model source is not one this builder makes ([`ModelSource::Recorded`], a
    /// [`Recording::Wrap`]); a cassette file this builder opens is used for both at once.
    pub fn mcp_tape(mut self, tape: Option<Arc<dyn crate::mcp::McpTape>>) -> Self {
        self.mcp_tape = tape;
        self
    }

    /// The MCP servers (`None`: none), instead of the workspace's `.mcp.json`. A process that
    /// assembles several harnesses (`archmax serve`, the worker) gives each the same servers.
    pub fn mcp(mut self, servers: Option<Arc<crate::mcp::McpTools>>) -> Self {
        self.mcp = McpChoice::Given(servers);
        self
    }

    /// Who answers elicitation and sampling requests of the workspace's `.mcp.json`
    /// servers (given servers carry their own); without one they are declined.
    pub fn mcp_host(mut self, host: Option<Arc<dyn crate::mcp::McpHost>>) -> Self {
        self.mcp_host = host;
        self
    }

    /// The servers this builder would give its harness: the given ones, else those of the
    /// workspace's `.mcp.json` (read with this builder's settings).
    pub fn mcp_servers(&self) -> Result<Option<Arc<crate::mcp::McpTools>>, RunError> {
        match &self.mcp {
            McpChoice::Given(given) => Ok(given.clone()),
            McpChoice::Workspace => {
                crate::mcp::McpTools::from_workspace(&self.root, &*self.env, self.mcp_host.clone())
            }
        }
    }

    /// The settings lookup (the environment with its `.env` values) instead of the process's.
    pub fn env(mut self, lookup: Lookup) -> Self {
        self.env = lookup;
        self
    }

    /// Where model calls go.
    pub fn model(mut self, source: ModelSource) -> Self {
        self.model = source;
        self
    }

    /// The host's default model id (`defaultModel`); otherwise [`default_model_id`] decides.
    pub fn default_model(mut self, id: Option<String>) -> Self {
        self.default_model = id.filter(|m| !m.trim().is_empty());
        self
    }

    /// The host's bounds on each endpoint call.
    pub fn requests(mut self, requests: RequestOptions) -> Self {
        self.requests = requests;
        self
    }

    /// Records every model exchange.
    pub fn record(mut self, recording: Recording) -> Self {
        self.recording = Some(recording);
        self
    }

    /// Where sessions live (default: the workspace's `sessions/` folder).
    pub fn store(mut self, store: Arc<dyn SessionStore>) -> Self {
        self.store = Some(store);
        self
    }

    /// Where events go.
    pub fn events(mut self, events: Arc<dyn EventSink>) -> Self {
        self.events = events;
        self
    }

    /// The host's tools, and those of them permitted in every state.
    pub fn tools(mut self, tools: Vec<Arc<dyn HostTool>>, essential: Vec<String>) -> Self {
        self.tools = tools;
        self.essential_tools = essential;
        self
    }

    /// The host's mount table (default: the zero-config one).
    pub fn mounts(mut self, mounts: Option<Vec<archmax_spec::workspace::MountDecl>>) -> Self {
        self.mounts = mounts;
        self
    }

    /// Skill sources (default `["skills/"]`).
    pub fn skills(mut self, skills: Vec<String>) -> Self {
        self.skills = skills;
        self
    }

    /// Which workflow governs (default: the named one, which must load).
    pub fn governance(mut self, governance: Governance) -> Self {
        self.extras.governance = governance;
        self
    }

    /// The host's extras: tool paths, policy rules, system prompt, hook kinds (the governance
    /// and turn settings this builder decides are kept).
    pub fn extras(mut self, extras: AssemblyExtras) -> Self {
        let governance = self.extras.governance;
        self.extras = AssemblyExtras {
            governance,
            ..extras
        };
        self
    }

    /// The models a call goes to, in order, when it still fails after its retries
    /// (`fallbackModels`); `None`: `ARCHMAX_FALLBACK_MODELS`.
    pub fn fallbacks(mut self, fallbacks: Option<Vec<FallbackModel>>) -> Self {
        self.fallbacks = fallbacks;
        self
    }

    /// The host's spending ceilings (`caps`); unset ones come from `ARCHMAX_MAX_TURN_TOKENS`, …
    pub fn caps(mut self, caps: crate::caps::SpendCaps) -> Self {
        self.caps = caps;
        self
    }

    /// Token prices (`pricing`); otherwise the `ARCHMAX_PRICE_*` settings.
    pub fn pricing(mut self, pricing: Option<PricingTable>) -> Self {
        self.pricing = pricing;
        self
    }

    /// The host's `promptCache` option: each given field outranks the spec and the settings.
    pub fn prompt_cache(mut self, enabled: Option<bool>, ttl: Option<String>) -> Self {
        self.prompt_cache = (enabled, ttl);
        self
    }

    /// Shows the agent the images it reads.
    pub fn images(mut self, images: Option<crate::images::ImageReads>) -> Self {
        self.extras.settings.images = images;
        self
    }

    /// The default trigger, checked at assembly (an unknown one refuses it).
    pub fn trigger(mut self, trigger: Option<String>) -> Self {
        self.trigger = trigger;
        self
    }

    /// The host's seeds, checked at assembly (a name that is not a variable name refuses it).
    pub fn seeds(mut self, seeds: Map<String, Value>) -> Self {
        self.seeds = seeds;
        self
    }

    /// A setting by name, as this builder reads it.
    pub fn setting(&self, name: &str) -> Option<String> {
        (self.env)(name)
    }

    /// [`default_model_id`] over this builder's settings: what a host building its own
    /// models (a JS `modelFactory`) asks for without an id.
    pub fn default_model_id(&self) -> String {
        default_model_id(self.default_model.as_deref(), &*self.env)
    }

    /// The endpoint's configuration from the settings and the host's request options.
    pub fn endpoint_config(&self) -> Result<ModelConfig, RunError> {
        endpoint_config(&*self.env, &self.requests)
    }

    /// Assembles the harness.
    pub fn build(self) -> Result<Harness, RunError> {
        let lookup = Arc::clone(&self.env);
        let mcp = self.mcp_servers()?;
        let mut tape = self.mcp_tape.clone();
        let replaying = matches!(self.model, ModelSource::Replay(_));
        let (model, recorded) = match self.model {
            ModelSource::Endpoint => {
                let config = endpoint_config(&*lookup, &self.requests)?;
                let client = OpenAiClient::new(config).map_err(|e| settings(&e))?;
                (Arc::new(client) as Arc<dyn Model>, None)
            }
            ModelSource::Given(model) => (model, None),
            ModelSource::Replay(path) => {
                let replayer = Arc::new(Replayer::load(&path).map_err(|e| settings(&e))?);
                let recorded = replayer.default_model().map(str::to_string);
                tape = Some(Arc::clone(&replayer) as Arc<dyn crate::mcp::McpTape>);
                (replayer as Arc<dyn Model>, recorded)
            }
            ModelSource::Recorded {
                model,
                recorded_model,
            } => (model, recorded_model),
        };
        let default_model = recorded
            .filter(|m| !m.trim().is_empty())
            .unwrap_or_else(|| default_model_id(self.default_model.as_deref(), &*lookup));
        // A replay answers from the cassette, which names the model that answered.
        let model = if replaying {
            model
        } else {
            with_fallbacks(
                model,
                &default_model,
                self.fallbacks,
                &*lookup,
                &self.requests,
            )?
        };
        let model = match self.recording {
            None => model,
            Some(Recording::File(path)) => {
                let recorder = Arc::new(
                    Recorder::to_file(model, &path).with_default_model(default_model.clone()),
                );
                tape = Some(Arc::clone(&recorder) as Arc<dyn crate::mcp::McpTape>);
                recorder
            }
            Some(Recording::Wrap(wrap)) => {
                let recorder = wrap(model, &default_model);
                tape = Some(Arc::clone(&recorder) as Arc<dyn crate::mcp::McpTape>);
                recorder
            }
        };
        let env_cache = prompt_cache_from_env(&*lookup).map_err(|e| settings(&e))?;
        self.caps.check()?;
        let caps = crate::caps::SpendCaps::from_env(&*lookup, self.caps)?;
        let pricing = match self.pricing {
            Some(table) => Some(table),
            None => Pricing::from_env(&*lookup)
                .map_err(|e| settings(&e))?
                .map(PricingTable::default_only),
        };
        if let Some(mcp) = &mcp {
            mcp.set_tape(tape);
        }
        let mut extras = self.extras;
        extras.mcp = mcp;
        extras.settings = TurnSettings {
            env_prompt_cache: (env_cache.0, env_cache.1.as_str().to_string()),
            prompt_cache_option: self.prompt_cache,
            pricing,
            images: extras.settings.images,
            caps,
        };
        let store = self
            .store
            .unwrap_or_else(|| Arc::new(FsStore::new(&self.root)));
        let harness = Harness::assemble_with(
            HarnessOptions {
                root: self.root,
                workflow: self.workflow,
                model,
                default_model,
                store,
                events: self.events,
                tools: self.tools,
                essential_tools: self.essential_tools,
                mounts: self.mounts,
                skills: self.skills,
            },
            extras,
        )?;
        // Assembly's last refusals, in the original's order: the default trigger, then the
        // seeds (a plain agent has neither).
        if !harness.is_plain() {
            if let Some(trigger) = &self.trigger {
                harness.start_state(trigger)?;
            }
            harness.check_seeds(&self.seeds)?;
        }
        Ok(harness)
    }
}

/// A model a call falls back to: its id, on the `ARCHMAX_*` endpoint unless `base_url` names
/// another (whose key is `api_key`, else `ARCHMAX_API_KEY`; none for one on this machine).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FallbackModel {
    /// The model id.
    pub model: String,
    /// Another endpoint's base URL.
    pub base_url: Option<String>,
    /// That endpoint's key.
    pub api_key: Option<String>,
}

/// The setting naming the fallback models: `model` or `model@base-url`, comma-separated.
pub const FALLBACK_MODELS_VAR: &str = "ARCHMAX_FALLBACK_MODELS";

impl FallbackModel {
    /// A host's `fallbackModels`: each a model id, or `{ model, baseUrl?, apiKey? }`.
    pub fn from_json(value: &Value) -> Result<Vec<FallbackModel>, String> {
        let bad = |i: usize| {
            format!("'fallbackModels[{i}]' must be a model id or {{ model, baseUrl?, apiKey? }}")
        };
        let Value::Array(items) = value else {
            return Err("'fallbackModels' must be an array".to_string());
        };
        items
            .iter()
            .enumerate()
            .map(|(i, item)| {
                let text = |key: &str| -> Result<Option<String>, String> {
                    match item.get(key) {
                        None | Some(Value::Null) => Ok(None),
                        Some(Value::String(s)) if !s.trim().is_empty() => {
                            Ok(Some(s.trim().to_string()))
                        }
                        Some(_) => Err(bad(i)),
                    }
                };
                match item {
                    Value::String(m) if !m.trim().is_empty() => Ok(FallbackModel {
                        model: m.trim().to_string(),
                        base_url: None,
                        api_key: None,
                    }),
                    Value::Object(_) => Ok(FallbackModel {
                        model: text("model")?.ok_or_else(|| bad(i))?,
                        base_url: text("baseUrl")?,
                        api_key: text("apiKey")?,
                    }),
                    _ => Err(bad(i)),
                }
            })
            .collect()
    }

    /// `ARCHMAX_FALLBACK_MODELS` read: `gpt-4o-mini, llama3@http://127.0.0.1:8080/v1`.
    pub fn parse_list(raw: &str) -> Result<Vec<FallbackModel>, RunError> {
        raw.split(',')
            .map(str::trim)
            .filter(|e| !e.is_empty())
            .map(|entry| {
                let (model, base_url) = match entry.split_once('@') {
                    Some((m, url)) => (m.trim(), Some(url.trim().to_string())),
                    None => (entry, None),
                };
                if model.is_empty() || base_url.as_deref().is_some_and(str::is_empty) {
                    return Err(RunError::Settings(format!(
                        "Environment variable {FALLBACK_MODELS_VAR} must list 'model' or 'model@base-url' entries, got: {entry}"
                    )));
                }
                Ok(FallbackModel {
                    model: model.to_string(),
                    base_url,
                    api_key: None,
                })
            })
            .collect()
    }
}

/// `model` followed by the fallbacks (the host's, else the settings'), each an endpoint
/// client with the host's request options.
fn with_fallbacks(
    model: Arc<dyn Model>,
    default_model: &str,
    fallbacks: Option<Vec<FallbackModel>>,
    lookup: &dyn Fn(&str) -> Option<String>,
    requests: &RequestOptions,
) -> Result<Arc<dyn Model>, RunError> {
    let fallbacks = match fallbacks {
        Some(f) => f,
        None => match lookup(FALLBACK_MODELS_VAR).filter(|r| !r.trim().is_empty()) {
            Some(raw) => FallbackModel::parse_list(&raw)?,
            None => Vec::new(),
        },
    };
    if fallbacks.is_empty() {
        return Ok(model);
    }
    let mut links = Vec::with_capacity(fallbacks.len());
    for f in fallbacks {
        // The endpoint's settings with this entry's own put over them.
        let entry = f.clone();
        let over = move |name: &str| -> Option<String> {
            match name {
                crate::model::config::ENV_MODEL => Some(entry.model.clone()),
                crate::model::config::ENV_API_BASE_URL if entry.base_url.is_some() => {
                    entry.base_url.clone()
                }
                crate::model::config::ENV_API_KEY => entry.api_key.clone().or_else(|| lookup(name)),
                _ => lookup(name),
            }
        };
        let config = endpoint_config(&over, requests)
            .map_err(|e| RunError::Settings(format!("fallback model '{}': {e}", f.model)))?;
        let label = match &f.base_url {
            Some(url) => format!("{}@{url}", f.model),
            None => f.model.clone(),
        };
        let client = OpenAiClient::new(config).map_err(|e| settings(&e))?;
        links.push(crate::model::fallback::Link {
            model: Arc::new(client),
            id: Some(f.model),
            label,
        });
    }
    let first = crate::model::fallback::Link {
        model,
        id: None,
        label: default_model.to_string(),
    };
    Ok(Arc::new(crate::model::fallback::Fallback::new(
        first, links,
    )))
}

/// A setting that cannot be used, as an assembly refusal.
fn settings(e: &dyn std::fmt::Display) -> RunError {
    RunError::Settings(e.to_string())
}

/// The default model id: the host's (`defaultModel`), else `ARCHMAX_MODEL` from the
/// settings, else [`UNNAMED_MODEL`] (never reported as a call's model). A replay's recorded
/// id comes first ([`ModelSource::Replay`]).
pub fn default_model_id(explicit: Option<&str>, lookup: &dyn Fn(&str) -> Option<String>) -> String {
    explicit
        .map(str::trim)
        .filter(|m| !m.is_empty())
        .map(str::to_string)
        .or_else(|| {
            lookup(MODEL_VAR)
                .map(|m| m.trim().to_string())
                .filter(|m| !m.is_empty())
        })
        .unwrap_or_else(|| UNNAMED_MODEL.to_string())
}

/// The endpoint's configuration: the `ARCHMAX_*` settings (a key is needed unless the base
/// URL is on this machine), with the host's request options over them, each checked.
pub fn endpoint_config(
    lookup: &dyn Fn(&str) -> Option<String>,
    requests: &RequestOptions,
) -> Result<ModelConfig, RunError> {
    let mut config = ModelConfig::from_env(lookup).map_err(|e| settings(&e))?;
    let bad = |name: &str, range: String, got: u64| {
        Err(RunError::Options(format!(
            "'{name}' must be a whole number from {range}, got {got}"
        )))
    };
    if let Some(ms) = requests.timeout_ms {
        if ms == 0 || ms > MAX_REQUEST_TIMEOUT_MS {
            return bad(
                "requestTimeoutMs",
                format!("1 to {MAX_REQUEST_TIMEOUT_MS}"),
                ms,
            );
        }
        config.retry.timeout = std::time::Duration::from_millis(ms);
    }
    if let Some(retries) = requests.max_retries {
        if retries > MAX_RETRIES_LIMIT {
            return bad(
                "maxRetries",
                format!("0 to {MAX_RETRIES_LIMIT}"),
                u64::from(retries),
            );
        }
        config.retry.attempts = retries + 1;
    }
    if let Some(bytes) = requests.max_response_bytes {
        if !(1024..=MAX_RESPONSE_BYTES_LIMIT).contains(&bytes) {
            return bad(
                "maxResponseBytes",
                format!("1024 to {MAX_RESPONSE_BYTES_LIMIT}"),
                bytes,
            );
        }
        config.max_response_bytes = bytes;
    }
    if let Some(streaming) = requests.streaming {
        config.streaming = streaming;
    }
    if let Some(calls) = requests.max_concurrent_calls {
        let most = crate::model::limit::MAX_CONCURRENT_CALLS_LIMIT;
        if !(1..=most).contains(&calls) {
            return bad(
                "maxConcurrentCalls",
                format!("1 to {most}"),
                u64::from(calls),
            );
        }
        config.max_concurrent_calls = calls;
    }
    Ok(config)
}

/// The settings a host's model factory is given (`AgentEnv`): the endpoint's base URL, key
/// (empty for an endpoint on this machine, which needs none), model id, temperature and
/// token cap, read as [`endpoint_config`] reads them; a refusal names what is missing.
pub fn model_settings(lookup: &dyn Fn(&str) -> Option<String>) -> Result<Value, RunError> {
    let config = ModelConfig::from_env(lookup).map_err(|e| settings(&e))?;
    Ok(serde_json::json!({
        "apiBaseUrl": config.base_url,
        "apiKey": config.api_key,
        "model": config.model,
        "temperature": config.temperature,
        "maxTokens": config.max_tokens,
    }))
}

/// The workspace root a host named (relative to the working directory).
pub fn workspace_root(given: &Path) -> std::io::Result<PathBuf> {
    if given.is_absolute() {
        Ok(given.to_path_buf())
    } else {
        Ok(std::env::current_dir()?.join(given))
    }
}

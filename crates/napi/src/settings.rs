//! A workspace's settings as an agent rooted there reads them (`modelFactory`'s `env()`, the
//! endpoint settings, the default model id): the environment, then `.env` in the cwd and in
//! the workspace root.

use std::collections::HashMap;
use std::path::PathBuf;

use napi_derive::napi;
use serde_json::Value;

/// The settings of a workspace at `root`: the environment, then `.env` in the cwd and in
/// `root` (as every harness reads them: `archmax_machine::env`).
pub(crate) fn env_lookup(root: &std::path::Path) -> archmax_machine::env::Lookup {
    let cwd = std::env::current_dir().ok();
    archmax_machine::env::Env::of_workspace(
        &archmax_machine::env::process_env,
        cwd.as_deref(),
        root,
    )
    .into_lookup()
}

/// The `names` that are set, as an agent rooted at `rootDir` reads its settings: the
/// environment first, then `.env` in the current directory and in `rootDir` (what
/// `modelFactory`'s `env()` returns).
#[napi(catch_unwind)]
pub fn read_env(root_dir: String, names: Vec<String>) -> HashMap<String, String> {
    let lookup = env_lookup(&root_of(&root_dir));
    names
        .into_iter()
        .filter_map(|name| lookup(&name).map(|value| (name, value)))
        .collect()
}

/// The workspace root `rootDir` names, resolved against the working directory.
fn root_of(root_dir: &str) -> PathBuf {
    archmax_machine::builder::workspace_root(std::path::Path::new(root_dir))
        .unwrap_or_else(|_| PathBuf::from(root_dir))
}

/// The endpoint settings a `modelFactory` is given (`AgentEnv`), as the harness reads them
/// for a workspace at `rootDir`: `{ apiBaseUrl, apiKey, model, temperature, maxTokens }`.
/// The key may be left out for an endpoint on this machine (it is then `""`). Throws the
/// harness's message naming the first missing or malformed setting.
#[napi(
    catch_unwind,
    ts_return_type = "{ apiBaseUrl: string; apiKey: string; model: string; temperature: number | null; maxTokens: number | null }"
)]
pub fn model_settings(root_dir: String) -> napi::Result<Value> {
    let lookup = env_lookup(&root_of(&root_dir));
    archmax_machine::builder::model_settings(&*lookup)
        .map_err(|e| napi::Error::from_reason(e.to_string()))
}

/// The default model id of an agent rooted at `rootDir`: `defaultModel`, else
/// `ARCHMAX_MODEL` (the environment, then `.env` in the cwd and in `rootDir`), else
/// `default` (what a `modelFactory` is asked for without an id).
#[napi(catch_unwind)]
pub fn default_model_id(root_dir: String, default_model: Option<String>) -> String {
    let lookup = env_lookup(&root_of(&root_dir));
    archmax_machine::default_model_id(default_model.as_deref(), &*lookup)
}

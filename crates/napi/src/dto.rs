//! Binding-local shapes of JS arguments, converted into core inputs.

use std::collections::HashMap;

use archmax_machine::ToolPathDecls;
use archmax_machine::model::{Pricing, PricingTable};
use archmax_spec::workspace::{MountDecl, MountKind};
use napi_derive::napi;
use serde_json::{Map, Value};

use crate::result::{kind, plain_error};

/// Options of `validateWorkflow`.
#[napi(object)]
pub struct ValidateWorkflowOptions {
    /// Workspace root (default: the current directory); resolved to an absolute path.
    pub root_dir: Option<String>,
    /// Workflow slug (default: `order-lookup`).
    pub workflow: Option<String>,
    /// Skill sources, workspace-relative (default: `["skills/"]`).
    pub skills: Option<Vec<String>>,
    /// The host's mount table, keyed by mount path: a key ending in `/` is a
    /// directory (`/catalogs/`), any other key a file (`/AGENTS.md`). Default:
    /// the zero-config table.
    pub mounts: Option<HashMap<String, MountOptions>>,
}

/// How one mount is served.
#[napi(object)]
pub struct MountOptions {
    /// Whether the agent may only read it (default: true).
    pub read_only: Option<bool>,
    /// Whether states must grant it before the agent sees it (default: false).
    pub governed: Option<bool>,
}

/// Converts a JS mount table into core mount declarations, sorted by name.
pub(crate) fn mount_decls(mounts: HashMap<String, MountOptions>) -> Vec<MountDecl> {
    let mut decls: Vec<MountDecl> = mounts
        .into_iter()
        .map(|(key, opts)| {
            let trimmed = key.trim_start_matches('/');
            let (name, kind) = match trimmed.strip_suffix('/') {
                Some(dir) => (dir.to_string(), MountKind::Dir),
                None => (trimmed.to_string(), MountKind::File),
            };
            MountDecl {
                name,
                kind,
                governed: opts.governed.unwrap_or(false),
                read_only: opts.read_only.unwrap_or(true),
            }
        })
        .collect();
    decls.sort_by(|a, b| a.name.cmp(&b.name));
    decls
}

/// `createAgent({ promptCache })`: each field given outranks the spec and the env.
#[napi(object, js_name = "NativePromptCacheOptions")]
pub struct PromptCacheOptions {
    /// Mark the stable prompt prefix for provider caching.
    pub enabled: Option<bool>,
    /// `5m` or `1h`; anything else falls back to `5m`.
    pub ttl: Option<String>,
}

/// `createAgent({ cassette })`: the agent's model exchanges recorded into, or answered
/// from, a cassette file.
#[napi(object, js_name = "NativeCassetteOptions")]
pub struct CassetteOptions {
    /// The cassette file (`<name>.cassette.json`), relative to the working directory.
    pub path: String,
    /// `record` (the configured model answers; each exchange is saved) or `replay` (the
    /// cassette answers; no model is needed).
    #[napi(ts_type = "'record' | 'replay'")]
    pub mode: String,
}

/// `toolPaths` (`{ tool: { arg: access } }`) as declarations in order. The kernel judges
/// them at assembly; here only the shape is read: a declaration that is not an object
/// counts as empty, and an access that is not a string is kept as its JSON text.
pub(crate) fn tool_paths(value: &Value) -> Result<ToolPathDecls, String> {
    let Value::Object(tools) = value else {
        return Err("'toolPaths' must be an object of tool name → { argument: access }".into());
    };
    Ok(tools
        .iter()
        .map(|(tool, decl)| {
            let args = match decl {
                Value::Object(args) => args
                    .iter()
                    .map(|(arg, access)| {
                        let access = match access {
                            Value::String(a) => a.clone(),
                            other => other.to_string(),
                        };
                        (arg.clone(), access)
                    })
                    .collect(),
                _ => Vec::new(),
            };
            (tool.clone(), args)
        })
        .collect())
}

/// `pricing` (`{ modelIdOrDefault: { input?, output?, cacheRead?, cacheWrite? } }`, USD per
/// 1M tokens) as a table; a rate that is not a finite number is refused.
pub(crate) fn pricing_table(value: &Value) -> Result<PricingTable, String> {
    let Value::Object(models) = value else {
        return Err("'pricing' must be an object of model id → { input?, output?, cacheRead?, cacheWrite? }".into());
    };
    let mut entries = Vec::with_capacity(models.len());
    for (model, rates) in models {
        let Value::Object(rates) = rates else {
            return Err(format!("'pricing.{model}' must be an object"));
        };
        let rate = |key: &str| -> Result<Option<f64>, String> {
            match rates.get(key) {
                None | Some(Value::Null) => Ok(None),
                Some(Value::Number(n)) => n
                    .as_f64()
                    .filter(|r| r.is_finite())
                    .map(Some)
                    .ok_or_else(|| format!("'pricing.{model}.{key}' must be a finite number")),
                Some(_) => Err(format!("'pricing.{model}.{key}' must be a number")),
            }
        };
        entries.push((
            model.clone(),
            Pricing {
                input: rate("input")?,
                output: rate("output")?,
                cache_read: rate("cacheRead")?,
                cache_write: rate("cacheWrite")?,
            },
        ));
    }
    Ok(PricingTable { entries })
}

/// A `variables` argument: absent or null is none; anything but an object is a `TypeError`.
pub(crate) fn variables_arg(
    value: Option<Value>,
) -> std::result::Result<Map<String, Value>, Value> {
    match value {
        None | Some(Value::Null) => Ok(Map::new()),
        Some(Value::Object(m)) => Ok(m),
        Some(other) => Err(plain_error(
            "TypeError",
            format!("'variables' must be an object, got {}", kind(&other)),
        )),
    }
}

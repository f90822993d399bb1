//! The spec functions: `workflow.yaml` validation, signatures, grammars, hashes.

use archmax_spec::ValidateOptions;
use archmax_spec::signature::{self, SIGNATURE_TYPES as CORE_SIGNATURE_TYPES};
use napi::bindgen_prelude::{Either, Error, Null, Result, Status, Undefined};
use napi_derive::napi;
use serde_json::{Value, json};

use crate::dto::{ValidateWorkflowOptions, mount_decls};

/// The signature types, in documented order.
#[napi]
pub const SIGNATURE_TYPES: [&str; 8] = CORE_SIGNATURE_TYPES;

/// Wraps a serialization failure (never expected: the core types are plain data).
fn encode_error(what: &str) -> impl FnOnce(serde_json::Error) -> Error + '_ {
    move |e| Error::from_reason(format!("cannot encode {what}: {e}"))
}

/// Validates one `workflow.yaml` text: shape and document rules (`schema`)
/// and lint. Never throws for bad YAML; problems are diagnostics.
#[napi(catch_unwind, ts_return_type = "SpecValidation")]
pub fn validate_spec(yaml_text: String) -> Result<Value> {
    serde_json::to_value(archmax_spec::validate_spec(&yaml_text))
        .map_err(encode_error("the spec validation"))
}

/// Parses a `workflow.yaml` text: the typed spec when it loads, else the issues.
#[napi(catch_unwind, ts_return_type = "ParseMachineSpecResult")]
pub fn parse_machine_spec(yaml_text: String) -> Result<Value> {
    match archmax_spec::parse_machine_spec(&yaml_text) {
        Ok(spec) => Ok(
            json!({ "ok": true, "spec": serde_json::to_value(&spec).map_err(encode_error("the spec"))? }),
        ),
        Err(issues) => Ok(
            json!({ "ok": false, "issues": serde_json::to_value(&issues).map_err(encode_error("the issues"))? }),
        ),
    }
}

/// Validates a workflow of a workspace on disk: the spec, its prose, and
/// everything it points at. A missing workflow is a diagnostic, not a throw.
#[napi(
    catch_unwind,
    ts_args_type = "options?: ValidateWorkflowOptions | null",
    ts_return_type = "ValidationResult"
)]
pub fn validate_workflow(options: Option<Either<ValidateWorkflowOptions, Null>>) -> Result<Value> {
    let options = match options {
        Some(Either::A(options)) => options,
        _ => ValidateWorkflowOptions {
            root_dir: None,
            workflow: None,
            skills: None,
            mounts: None,
        },
    };
    let cwd = std::env::current_dir()
        .map_err(|e| Error::from_reason(format!("cannot read the current directory: {e}")))?;
    let root = archmax_cli::workspace::resolve_root(&cwd, options.root_dir.as_deref());
    let mut opts = ValidateOptions::new(
        options
            .workflow
            .unwrap_or_else(|| "order-lookup".to_string()),
    );
    if let Some(skills) = options.skills {
        opts.skills = skills;
    }
    opts.mounts = options.mounts.map(mount_decls);
    let mut result = archmax_machine::mcp::validate_workspace(&root, &opts);
    result.root_dir = Some(root.to_string_lossy().into_owned());
    serde_json::to_value(&result).map_err(encode_error("the validation result"))
}

/// The signature of trigger `id` in a parsed spec, or `undefined` when no
/// state declares it.
#[napi(
    catch_unwind,
    ts_args_type = "spec: SpecLike, id: string",
    ts_return_type = "TriggerSignature | undefined"
)]
pub fn signature_for_trigger(spec: Value, id: String) -> Result<Either<Value, Undefined>> {
    match signature::signature_for_trigger(&spec, &id) {
        Some(sig) => Ok(Either::A(
            serde_json::to_value(&sig).map_err(encode_error("the signature"))?,
        )),
        None => Ok(Either::B(())),
    }
}

/// The JSON Schema of a `requires`/`returns` list.
#[napi(
    catch_unwind,
    ts_args_type = "entries: Array<SignatureItem>",
    ts_return_type = "SignatureJsonSchema"
)]
pub fn signature_json_schema(entries: Value) -> Result<Value> {
    Ok(signature::signature_json_schema(
        &signature::normalize_signature(&entries),
    ))
}

/// Checks values against a `requires`/`returns` list: at most one issue per
/// entry, in declaration order. Nothing is coerced.
#[napi(
    catch_unwind,
    ts_args_type = "entries: Array<SignatureItem>, values: Record<string, unknown>",
    ts_return_type = "Array<SignatureIssue>"
)]
pub fn signature_value_issues(entries: Value, values: Value) -> Result<Value> {
    let Value::Object(values) = values else {
        return Err(Error::new(
            Status::InvalidArg,
            "values must be an object of variable values".to_string(),
        ));
    };
    let issues =
        signature::signature_value_issues(&signature::normalize_signature(&entries), &values);
    serde_json::to_value(&issues).map_err(encode_error("the signature issues"))
}

/// Where a firing of trigger `id` carries its words (`message:`: a dotted path, or
/// `false`); `undefined` when the trigger is not declared or declares none. The
/// runtime never acts on it: it is for the host.
#[napi(
    catch_unwind,
    ts_args_type = "spec: SpecLike, id: string",
    ts_return_type = "string | false | undefined"
)]
pub fn message_path_for_trigger(spec: Value, id: String) -> Either<Value, Undefined> {
    match signature::message_path_for_trigger(&spec, &id) {
        Some(v) => Either::A(v),
        None => Either::B(()),
    }
}

/// The access connection trigger `id` names (`connection:`); `undefined` when none.
#[napi(
    catch_unwind,
    ts_args_type = "spec: SpecLike, id: string",
    ts_return_type = "string | undefined"
)]
pub fn connection_for_trigger(spec: Value, id: String) -> Either<String, Undefined> {
    match signature::connection_for_trigger(&spec, &id) {
        Some(c) => Either::A(c),
        None => Either::B(()),
    }
}

/// The session id a firing of `triggerId` belongs to, read over `variables`
/// through the trigger's `session:` path; `undefined` when nothing resolves.
#[napi(
    catch_unwind,
    ts_args_type = "spec: SpecLike, triggerId: string, variables: Record<string, unknown>",
    ts_return_type = "string | undefined"
)]
pub fn session_id_for_trigger(
    spec: Value,
    trigger_id: String,
    variables: Value,
) -> Result<Either<String, Undefined>> {
    Ok(
        match signature::session_id_for_trigger(&spec, &trigger_id, &variables) {
            Some(id) => Either::A(id),
            None => Either::B(()),
        },
    )
}

/// Whether `s` is a hyphen-separated kebab-case slug (`order-lookup`).
#[napi(catch_unwind)]
pub fn is_slug(s: String) -> bool {
    archmax_spec::grammar::is_slug(&s)
}

/// The description a hook or script carries in its leading `/** … */` block.
#[napi(catch_unwind, ts_return_type = "{ description: string } | null")]
pub fn parse_code_description(source: String) -> Result<Value> {
    Ok(
        match archmax_spec::code_description::parse_code_description(&source) {
            Some(description) => json!({ "description": description }),
            None => Value::Null,
        },
    )
}

/// The spec hash: SHA-256 of the canonical JSON of the spec without
/// `metadata`, first 32 hex characters.
#[napi(catch_unwind, ts_args_type = "spec: SpecLike")]
pub fn spec_hash(spec: Value) -> String {
    archmax_spec::hash::spec_hash(&spec)
}

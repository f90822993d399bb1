//! The model endpoint's variables as a configuration problem, not a crash:
//! every missing variable is named at once, with the `.env.example` to copy
//! when the workspace has one. `ARCHMAX_API_KEY` may be left out for an
//! endpoint on a loopback address.

use std::path::Path;

use archmax_machine::model::config::{ENV_API_BASE_URL, ENV_API_KEY, ENV_MODEL, is_loopback_url};

use crate::Cli;

/// The required variables that are unset or blank, in the documented order.
pub(crate) fn missing(cli: &Cli<'_>) -> Vec<&'static str> {
    let value = |name: &str| cli.var(name).filter(|v| !v.trim().is_empty());
    let base = value(ENV_API_BASE_URL);
    let local = base.as_deref().is_some_and(is_loopback_url);
    let mut out = Vec::new();
    if base.is_none() {
        out.push(ENV_API_BASE_URL);
    }
    if value(ENV_API_KEY).is_none() && !local {
        out.push(ENV_API_KEY);
    }
    if value(ENV_MODEL).is_none() {
        out.push(ENV_MODEL);
    }
    out
}

/// The error text for `missing` (non-empty) in the workspace at `root`.
pub(crate) fn missing_message(root: &Path, missing: &[&str]) -> String {
    let names = missing.join(", ");
    let head = if missing.len() == 1 {
        format!("Missing required environment variable: {names}.")
    } else {
        format!("Missing required environment variables: {names}.")
    };
    let example = root.join(".env.example");
    let how = if example.is_file() {
        format!(
            "Copy {} to {} and fill it in.",
            example.display(),
            root.join(".env").display()
        )
    } else {
        format!(
            "Set them in the environment or in {} ('archmax init' writes a .env.example to start from).",
            root.join(".env").display()
        )
    };
    let key = if missing.contains(&ENV_API_KEY) {
        " ARCHMAX_API_KEY may be left out for an endpoint on this machine (localhost, 127.0.0.1)."
    } else {
        ""
    };
    format!("{head} {how}{key}")
}

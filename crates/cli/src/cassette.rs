//! `--record <file>` and `--replay <file>` of the commands that run a turn (`run`, `decide`,
//! `reply`, `deliver`): the turn's model exchanges recorded into a cassette as they happen,
//! or answered from one with no model endpoint at all (`archmax_cases::cassette`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use archmax_cases::cassette::{Recorder, Replayer};
use archmax_machine::model::Model;
use archmax_machine::model::config::{ENV_API_BASE_URL, ENV_MODEL};

use crate::args::Parsed;
use crate::{Cli, Failure};

/// Where the turn's model answers come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Tape {
    /// The `ARCHMAX_*` endpoint.
    Live,
    /// The endpoint, each exchange recorded into this cassette.
    Record(PathBuf),
    /// This cassette; no endpoint.
    Replay(PathBuf),
}

impl Tape {
    /// `--record` / `--replay` of `parsed` (paths relative to the working directory); both
    /// at once is a usage error.
    pub(crate) fn of(cli: &Cli<'_>, parsed: &Parsed) -> Result<Tape, Failure> {
        let path = |name: &str| parsed.non_empty(name).map(|p| cli.cwd.join(p));
        match (path("record"), path("replay")) {
            (Some(_), Some(_)) => Err(Failure::Usage(
                "--record and --replay cannot be used together".to_string(),
            )),
            (Some(file), None) => Ok(Tape::Record(file)),
            (None, Some(file)) => Ok(Tape::Replay(file)),
            (None, None) => Ok(Tape::Live),
        }
    }

    /// The model line of the session header.
    pub(crate) fn model_line(&self, cli: &Cli<'_>) -> String {
        let model = cli
            .var(ENV_MODEL)
            .unwrap_or_else(|| "(unset — see .env)".to_string());
        match self {
            Tape::Live => model,
            Tape::Record(file) => format!("{model} (recording to {})", shown(cli, file)),
            Tape::Replay(file) => format!("replayed from {}", shown(cli, file)),
        }
    }
}

/// A path as the header shows it: relative to the working directory when inside it.
pub(crate) fn shown(cli: &Cli<'_>, file: &Path) -> String {
    file.strip_prefix(&cli.cwd)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// What a replay reads `ARCHMAX_API_BASE_URL` as when it is unset: nothing is sent to it.
const REPLAY_URL: &str = "http://127.0.0.1/replay";

/// The replayer of `file`.
pub(crate) fn replayer(file: &Path) -> Result<Arc<Replayer>, Failure> {
    Replayer::load(file)
        .map(Arc::new)
        .map_err(|e| Failure::Command(e.to_string()))
}

/// The variable `name` as a replay reads it: the recorded run's default model (`recorded`)
/// for `ARCHMAX_MODEL` (so the requests ask for the model they asked for when recorded),
/// a loopback placeholder for an unset `ARCHMAX_API_BASE_URL`, else `value`.
pub(crate) fn replay_var(
    recorded: Option<&str>,
    name: &str,
    value: Option<String>,
) -> Option<String> {
    let value = value.filter(|v| !v.trim().is_empty());
    match name {
        ENV_MODEL => recorded
            .map(str::to_string)
            .or(value)
            .or_else(|| Some(archmax_machine::UNNAMED_MODEL.to_string())),
        ENV_API_BASE_URL => value.or_else(|| Some(REPLAY_URL.to_string())),
        _ => value,
    }
}

/// `model` recording into `file` (saved after every exchange).
pub(crate) fn recorder(
    model: impl Model + 'static,
    file: &Path,
    default_model: &str,
) -> Arc<dyn Model> {
    Arc::new(Recorder::to_file(model, file).with_default_model(default_model))
}

//! `--record <file>` and `--replay <file>` of the commands that run a turn (`run`, `decide`,
//! `reply`, `deliver`): the turn's model exchanges recorded into a cassette as they happen,
//! or answered from one with no model endpoint at all (`archmax_cases::cassette`).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use archmax_machine::model::cassette::Replayer;
use archmax_machine::model::config::ENV_MODEL;

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

/// The replayer of `file`.
pub(crate) fn replayer(file: &Path) -> Result<Arc<Replayer>, Failure> {
    Replayer::load(file)
        .map(Arc::new)
        .map_err(|e| Failure::Command(e.to_string()))
}

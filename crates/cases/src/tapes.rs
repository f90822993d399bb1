//! One cassette per case: `archmax test --record` keeps each case's model exchanges (the
//! agent's, its children's and the judge's) in `tests/<case>.cassette.json` beside the case
//! file, and `--replay` answers each case from its own, with no model endpoint.
//!
//! A suite runs on one harness whose model is a [`CaseTapes`]; the engine's [`Target`]
//! hooks switch it to the next case's cassette before the case starts ([`TapedTarget`]).
//! Cases of a suite run one at a time (the spec refuses `tests.maxConcurrency` above 1), so
//! one cassette is current at a time.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use archmax_machine::Harness;
use archmax_machine::mcp::{Answered, McpRecord, McpTape, McpToolRecord};
use archmax_machine::model::{ChatRequest, Model, ModelError, ModelFuture, TextSink};

use crate::case::CaseFile;
use crate::engine::Target;
use crate::report::CaseResult;
use archmax_machine::model::cassette::{Cassette, Recorder, Replayer};

/// The workspace-relative path of the cassette of the case at workspace-relative `case`:
/// its `.test.yaml` (or `.test.yml`) replaced by `.cassette.json`.
pub fn cassette_path(case: &str) -> String {
    let stem = case
        .strip_suffix(".test.yaml")
        .or_else(|| case.strip_suffix(".test.yml"))
        .unwrap_or(case);
    format!("{stem}.cassette.json")
}

/// What a suite's model is: the endpoint with each case recorded, or each case's cassette.
enum Mode {
    Record { live: Arc<dyn Model>, model: String },
    Replay,
}

enum Current {
    Record(Recorder<Arc<dyn Model>>),
    Replay(Replayer),
}

/// The model of a suite run with cassettes: the current case's recorder or replayer.
pub struct CaseTapes {
    root: PathBuf,
    mode: Mode,
    current: Mutex<Option<Arc<Current>>>,
}

impl CaseTapes {
    /// Records every case's exchanges with `live` (the suite's default model id `model`),
    /// each into its cassette under the workspace `root`.
    pub fn record(root: impl Into<PathBuf>, live: Arc<dyn Model>, model: &str) -> CaseTapes {
        CaseTapes {
            root: root.into(),
            mode: Mode::Record {
                live,
                model: model.to_string(),
            },
            current: Mutex::new(None),
        }
    }

    /// Answers every case from its cassette under the workspace `root`.
    pub fn replay(root: impl Into<PathBuf>) -> CaseTapes {
        CaseTapes {
            root: root.into(),
            mode: Mode::Replay,
            current: Mutex::new(None),
        }
    }

    /// Makes `case`'s cassette the current one. Recording starts it empty (and writes it,
    /// so a case that asks the model nothing replays too); a replay of a case without one
    /// is refused, naming the file and how to make it.
    pub fn begin(&self, case: &CaseFile) -> Result<(), String> {
        let rel = cassette_path(&case.path);
        let path = self.root.join(&rel);
        let current = match &self.mode {
            Mode::Record { live, model } => {
                let empty = Cassette::of_model(model);
                empty.save(&path).map_err(|e| e.to_string())?;
                Current::Record(
                    Recorder::to_file(Arc::clone(live), &path).with_default_model(model.clone()),
                )
            }
            // Nothing there; anything else (a folder, a FIFO, a link) is loaded and refused
            // with its reason.
            Mode::Replay if std::fs::symlink_metadata(&path).is_err() => {
                return Err(format!(
                    "no cassette {rel} for case {}: record it with 'archmax test --record'",
                    case.path
                ));
            }
            Mode::Replay => Current::Replay(Replayer::load(&path).map_err(|e| e.to_string())?),
        };
        *self.lock() = Some(Arc::new(current));
        Ok(())
    }

    /// Ends the current case: the numbers of the exchanges its replay left unasked (none
    /// when recording).
    pub fn end(&self) -> Vec<usize> {
        match self.lock().take().as_deref() {
            Some(Current::Replay(r)) => r.unused(),
            _ => Vec::new(),
        }
    }

    /// The default model id of the first cassette among `cases` that exists (a replay asks
    /// for the model its recording asked for).
    pub fn recorded_model(root: &Path, cases: &[CaseFile]) -> Option<String> {
        cases.iter().find_map(|case| {
            Cassette::load(&root.join(cassette_path(&case.path)))
                .ok()
                .and_then(|c| c.default_model)
        })
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Arc<Current>>> {
        self.current.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn now(&self) -> Result<Arc<Current>, ModelError> {
        self.lock().clone().ok_or_else(|| ModelError::Replayed {
            message: "no case is running: a cassette is chosen per case".to_string(),
        })
    }
}

impl Model for CaseTapes {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            match &*self.now()? {
                Current::Record(r) => r.complete(req).await,
                Current::Replay(r) => r.complete(req).await,
            }
        })
    }

    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        Box::pin(async move {
            match &*self.now()? {
                Current::Record(r) => r.stream(req, text).await,
                Current::Replay(r) => r.stream(req, text).await,
            }
        })
    }
}

/// The MCP servers' answers go to, or come from, the current case's cassette. A replay
/// starts no server, even between cases.
impl McpTape for CaseTapes {
    fn tools(&self, server: &str) -> Option<Vec<McpToolRecord>> {
        match self.lock().clone().as_deref() {
            Some(Current::Record(r)) => r.tools(server),
            Some(Current::Replay(r)) => r.tools(server),
            None => matches!(self.mode, Mode::Replay).then(Vec::new),
        }
    }

    fn answer(&self, server: &str, tool: &str, args: &serde_json::Value) -> Option<Answered> {
        match self.lock().clone().as_deref() {
            Some(Current::Record(r)) => r.answer(server, tool, args),
            Some(Current::Replay(r)) => r.answer(server, tool, args),
            None => matches!(self.mode, Mode::Replay).then(|| Answered {
                text: "Error: no case is running: a cassette is chosen per case".to_string(),
                is_error: true,
                images: Vec::new(),
            }),
        }
    }

    fn keep(&self, record: McpRecord) {
        if let Some(Current::Record(r)) = self.lock().clone().as_deref() {
            r.keep(record);
        }
    }
}

/// A suite's target with one cassette per case: every case runs on `harness`, whose model
/// is `tapes`.
pub struct TapedTarget {
    /// The suite's harness (its model is `tapes`).
    pub harness: Arc<Harness>,
    /// The cassettes.
    pub tapes: Arc<CaseTapes>,
}

impl Target for TapedTarget {
    fn harness(&self, file: &CaseFile) -> Result<Arc<Harness>, String> {
        self.tapes.begin(file)?;
        Ok(Arc::clone(&self.harness))
    }

    fn finished(&self, _file: &CaseFile, _result: &CaseResult) {
        self.tapes.end();
    }
}

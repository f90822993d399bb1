//! [`Recorder`]: a model that records every exchange it passes on.

use std::path::PathBuf;
use std::sync::Mutex;

use crate::model::{ChatRequest, ChatResponse, Model, ModelError, ModelFuture, TextSink};

use super::{Cassette, CassetteError, Exchange};

/// Wraps a model and records each exchange into a [`Cassette`], in the order they complete
/// (a failed call as its failure's text, which a replay fails the call with); with
/// [`Recorder::to_file`] the cassette is saved (atomically) after each one, so a run that
/// stops half-way keeps what it recorded.
pub struct Recorder<M> {
    inner: M,
    cassette: Mutex<Cassette>,
    path: Option<PathBuf>,
}

impl<M: Model> Recorder<M> {
    /// A recorder keeping its cassette in memory ([`Recorder::cassette`], [`Recorder::save`]).
    pub fn new(inner: M) -> Recorder<M> {
        Recorder {
            inner,
            cassette: Mutex::new(Cassette::new()),
            path: None,
        }
    }

    /// A recorder that saves its cassette to `path` after every exchange. The file is
    /// written from scratch: what it held before is replaced at the first exchange.
    pub fn to_file(inner: M, path: impl Into<PathBuf>) -> Recorder<M> {
        Recorder {
            path: Some(path.into()),
            ..Recorder::new(inner)
        }
    }

    /// Notes the run's default model id in the cassette (a replay without one uses it).
    pub fn with_default_model(self, id: impl Into<String>) -> Recorder<M> {
        if let Ok(mut cassette) = self.cassette.lock() {
            cassette.default_model = Some(id.into());
        }
        self
    }

    /// What was recorded so far.
    pub fn cassette(&self) -> Cassette {
        self.cassette
            .lock()
            .map(|c| c.clone())
            .unwrap_or_else(|p| p.into_inner().clone())
    }

    /// Saves what was recorded so far to `path` ([`Cassette::save`]).
    pub fn save(&self, path: &std::path::Path) -> Result<(), CassetteError> {
        self.cassette().save(path)
    }

    /// The wrapped model.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    fn keep(
        &self,
        req: &ChatRequest,
        answer: Result<ChatResponse, ModelError>,
        pieces: Option<Vec<usize>>,
    ) -> Result<ChatResponse, ModelError> {
        let response = match &answer {
            Ok(response) => response.clone(),
            // A replay's own refusal is not the model's answer.
            Err(ModelError::Unrecorded { .. }) => return answer,
            // (Text a failed call showed before it failed is not kept.)
            Err(e) => {
                self.append(req, Exchange::failed(req, e))?;
                return answer;
            }
        };
        let mut exchange = Exchange::new(req, response.clone());
        let whole = response
            .message
            .content
            .as_deref()
            .filter(|c| !c.is_empty())
            .map(|c| vec![c.chars().count()])
            .unwrap_or_default();
        // As the contract's whole piece: nothing to note.
        exchange.pieces = pieces.filter(|p| *p != whole);
        self.append(req, exchange)?;
        Ok(response)
    }

    fn append(&self, req: &ChatRequest, exchange: Exchange) -> Result<(), ModelError> {
        let mut cassette = self.cassette.lock().unwrap_or_else(|p| p.into_inner());
        cassette.push(exchange);
        let Some(path) = &self.path else {
            return Ok(());
        };
        cassette.save(path).map_err(|e| ModelError::InvalidRequest {
            url: format!("cassette {}", path.display()),
            model: req.model.clone(),
            message: format!("the answer could not be recorded: {e}"),
        })
    }
}

/// Passes each piece of streamed text on and notes its length in characters.
struct Pieces<'a> {
    to: &'a dyn TextSink,
    lengths: Mutex<Vec<usize>>,
}

impl TextSink for Pieces<'_> {
    fn fell_back(&self, from: &str, to: &str, reason: &str) {
        self.to.fell_back(from, to, reason);
    }

    fn queued(&self, waited: std::time::Duration, limit: u32) {
        self.to.queued(waited, limit);
    }

    fn text(&self, delta: &str) {
        if let Ok(mut lengths) = self.lengths.lock() {
            lengths.push(delta.chars().count());
        }
        self.to.text(delta);
    }
}

impl<M: Model> Model for Recorder<M> {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(async move {
            let answer = self.inner.complete(req).await;
            self.keep(req, answer, None)
        })
    }

    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        Box::pin(async move {
            let sink = Pieces {
                to: text,
                lengths: Mutex::new(Vec::new()),
            };
            let answer = self.inner.stream(req, &sink).await;
            let pieces = sink.lengths.into_inner().unwrap_or_default();
            self.keep(req, answer, Some(pieces))
        })
    }
}

/// A recording keeps what the MCP servers answered beside the model's exchanges.
impl<M: Model> crate::mcp::McpTape for Recorder<M> {
    fn tools(&self, _server: &str) -> Option<Vec<super::McpToolRecord>> {
        None
    }

    fn answer(
        &self,
        _server: &str,
        _tool: &str,
        _args: &serde_json::Value,
    ) -> Option<crate::mcp::Answered> {
        None
    }

    fn keep(&self, record: super::McpRecord) {
        let mut cassette = self.cassette.lock().unwrap_or_else(|p| p.into_inner());
        // A run lists its servers' tools before every request: a list is kept when it is
        // the server's first in this cassette or differs from the one kept last.
        if let super::McpRecord::Tools { server, tools } = &record {
            let last = cassette.mcp.iter().rev().find_map(|r| match r {
                super::McpRecord::Tools { server: s, tools } if s == server => Some(tools),
                _ => None,
            });
            if last == Some(tools) {
                return;
            }
        }
        cassette.mcp.push(record);
        if let Some(path) = &self.path {
            // A failed save is found at the next exchange's, which reports it.
            let _ = cassette.save(path);
        }
    }
}

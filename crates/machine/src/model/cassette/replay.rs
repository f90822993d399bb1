//! [`Replayer`]: a model that answers from a cassette.

use std::path::Path;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::model::{
    ChatRequest, ChatResponse, Model, ModelError, ModelFuture, TextSink, show_whole,
};

use super::{Cassette, CassetteError, Exchange, diff, digest_of, request_json, role_word};

/// Answers each request with the recorded exchange of the same [digest](super::request_digest)
/// that has not answered yet (the first recorded, when several match), so a conversation's
/// calls replay in order while other conversations' calls interleave. A request with no
/// such exchange fails with [`ModelError::Unrecorded`]: which request it was (its ordinal,
/// state, role and session), the nearest recorded request, and the first field where the
/// two differ, with both values.
pub struct Replayer {
    cassette: Cassette,
    label: String,
    digests: Vec<String>,
    used: Mutex<Vec<bool>>,
    asked: AtomicUsize,
    /// Which MCP calls of the cassette answered already.
    mcp_used: Mutex<Vec<bool>>,
}

impl Replayer {
    /// A replayer over `cassette`; `label` names it in errors (its path).
    pub fn new(cassette: Cassette, label: impl Into<String>) -> Replayer {
        let digests = cassette.exchanges().iter().map(Exchange::digest).collect();
        let used = Mutex::new(vec![false; cassette.exchanges().len()]);
        let mcp_used = Mutex::new(vec![false; cassette.mcp.len()]);
        Replayer {
            cassette,
            label: label.into(),
            digests,
            used,
            asked: AtomicUsize::new(0),
            mcp_used,
        }
    }

    /// A replayer over the cassette file at `path`.
    pub fn load(path: &Path) -> Result<Replayer, CassetteError> {
        Ok(Replayer::new(
            Cassette::load(path)?,
            path.display().to_string(),
        ))
    }

    /// The default model id the recorded run used, when the cassette notes one.
    pub fn default_model(&self) -> Option<&str> {
        self.cassette.default_model.as_deref()
    }

    /// The cassette replayed.
    pub fn cassette(&self) -> &Cassette {
        &self.cassette
    }

    /// The numbers (1-based) of the exchanges that have not answered a request yet.
    pub fn unused(&self) -> Vec<usize> {
        let used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        used.iter()
            .enumerate()
            .filter(|(_, u)| !**u)
            .map(|(i, _)| i + 1)
            .collect()
    }

    /// How many requests were asked.
    pub fn asked(&self) -> usize {
        self.asked.load(Ordering::Relaxed)
    }

    fn answer(&self, req: &ChatRequest) -> Result<&Exchange, ModelError> {
        let ordinal = self.asked.fetch_add(1, Ordering::Relaxed) + 1;
        let asked = request_json(req);
        let digest = digest_of(&asked);
        let mut used = self.used.lock().unwrap_or_else(|p| p.into_inner());
        let hit = self
            .digests
            .iter()
            .enumerate()
            .find(|(i, d)| **d == digest && !used[*i])
            .map(|(i, _)| i);
        if let Some(i) = hit {
            used[i] = true;
            return Ok(&self.cassette.exchanges()[i]);
        }
        let who = describe(
            ordinal,
            req.state.as_deref(),
            &role_word(req.role),
            req.session.as_deref(),
        );
        let answered = self.digests.iter().position(|d| *d == digest);
        let message = match answered
            .or_else(|| diff::nearest(self.cassette.exchanges(), req, &asked, &used))
        {
            None => format!("{who} was asked, and the cassette holds no exchanges"),
            Some(n) if self.digests[n] == digest => format!(
                "{who} was asked more often than it was recorded (exchange {} answered it already)",
                n + 1
            ),
            Some(n) => {
                let near = &self.cassette.exchanges()[n];
                let what = diff::first_difference(&near.request, &asked)
                    .unwrap_or_else(|| "the two differ".to_string());
                format!(
                    "{who} was not recorded; the nearest recorded request is exchange {} ({}): {what}",
                    n + 1,
                    describe_recorded(near)
                )
            }
        };
        Err(ModelError::Unrecorded {
            cassette: self.label.clone(),
            model: req.model.clone(),
            message,
        })
    }
}

fn describe(ordinal: usize, state: Option<&str>, role: &str, session: Option<&str>) -> String {
    let mut parts = Vec::new();
    if let Some(state) = state {
        parts.push(format!("state '{state}'"));
    }
    parts.push(role.to_string());
    if let Some(session) = session {
        parts.push(format!("session '{session}'"));
    }
    format!("request {ordinal} ({})", parts.join(", "))
}

fn describe_recorded(e: &Exchange) -> String {
    let mut parts = Vec::new();
    if let Some(state) = &e.state {
        parts.push(format!("state '{state}'"));
    }
    parts.push(role_word(e.role));
    if let Some(session) = &e.session {
        parts.push(format!("session '{session}'"));
    }
    parts.join(", ")
}

/// The recorded answer, or the recorded failure.
fn recorded(exchange: &Exchange) -> Result<ChatResponse, ModelError> {
    match &exchange.error {
        Some(message) => Err(ModelError::Replayed {
            message: message.clone(),
        }),
        None => Ok(exchange.response.clone()),
    }
}

/// Reports a recorded answer's text to `text` as it was shown when recorded: in its pieces
/// (when they add up to the text), not at all, or as one piece.
fn show_pieces(exchange: &Exchange, text: &dyn TextSink) {
    let response = &exchange.response;
    let content = response.message.content.as_deref().unwrap_or_default();
    let Some(pieces) = exchange
        .pieces
        .as_ref()
        .filter(|p| p.is_empty() || p.iter().sum::<usize>() == content.chars().count())
    else {
        show_whole(response, text);
        return;
    };
    let mut rest = content;
    for &len in pieces {
        let cut = rest
            .char_indices()
            .nth(len)
            .map_or(rest.len(), |(at, _)| at);
        let (piece, after) = rest.split_at(cut);
        if !piece.is_empty() {
            text.text(piece);
        }
        rest = after;
    }
}

impl Model for Replayer {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        let answer = self.answer(req).and_then(recorded);
        Box::pin(async move { answer })
    }

    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        let answer = self.answer(req).and_then(|e| {
            show_pieces(e, text);
            recorded(e)
        });
        Box::pin(async move { answer })
    }
}

/// A replay answers the MCP servers' lists and calls from the cassette: no server starts.
impl crate::mcp::McpTape for Replayer {
    fn tools(&self, server: &str) -> Option<Vec<super::McpToolRecord>> {
        let recorded = self.cassette.mcp.iter().rev().find_map(|r| match r {
            super::McpRecord::Tools { server: s, tools } if s == server => Some(tools.clone()),
            _ => None,
        });
        Some(recorded.unwrap_or_default())
    }

    fn answer(
        &self,
        server: &str,
        tool: &str,
        args: &serde_json::Value,
    ) -> Option<crate::mcp::Answered> {
        let mut used = self.mcp_used.lock().unwrap_or_else(|p| p.into_inner());
        let found = self.cassette.mcp.iter().enumerate().find(|(i, r)| {
            !used[*i]
                && matches!(r, super::McpRecord::Call { server: s, tool: t, arguments, .. }
                    if s == server && t == tool && arguments == args)
        });
        Some(match found {
            Some((
                i,
                super::McpRecord::Call {
                    text,
                    is_error,
                    images,
                    ..
                },
            )) => {
                used[i] = true;
                crate::mcp::Answered {
                    text: text.clone(),
                    is_error: *is_error,
                    images: images.clone(),
                }
            }
            _ => crate::mcp::Answered {
                text: format!(
                    "Error: the cassette {} holds no answer of MCP server '{server}' to '{tool}' with these arguments; record it again",
                    self.label
                ),
                is_error: true,
                images: Vec::new(),
            },
        })
    }

    fn keep(&self, _record: super::McpRecord) {}
}

//! Bearer tokens, each naming an identity, and the middleware that turns a request's
//! `Authorization: Bearer <token>` into that identity. `/health` and the inbox's static
//! files (which hold no data) need none. Without tokens every request is `local` (the
//! server then listens on loopback only, [`crate::bind_address`]).

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use crate::api_error::ApiError;
use crate::{AppState, ServeError};

/// The identity of every request when no tokens are configured.
pub const LOCAL_IDENTITY: &str = "local";

/// Who made a request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity(pub String);

/// The configured tokens: token → identity.
#[derive(Debug, Clone, Default)]
pub struct Tokens(Vec<(String, String)>);

/// Compares without stopping at the first differing byte, so the time taken does not
/// tell how much of a guess was right.
fn same(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

impl Tokens {
    /// Parses `identity=token` pairs separated by commas (the token is everything after the
    /// first `=`). A blank text is no token; a blank entry in a text is refused.
    pub fn parse(text: &str) -> Result<Tokens, ServeError> {
        let mut out: Vec<(String, String)> = Vec::new();
        if text.trim().is_empty() {
            return Ok(Tokens(out));
        }
        for (i, entry) in text.split(',').enumerate() {
            let entry = entry.trim();
            if entry.is_empty() {
                return Err(ServeError::EmptyToken { index: i + 1 });
            }
            let Some((who, token)) = entry
                .split_once('=')
                .map(|(w, t)| (w.trim(), t.trim()))
                .filter(|(w, t)| !w.is_empty() && !t.is_empty())
            else {
                return Err(ServeError::BadToken {
                    index: i + 1,
                    shown: entry.chars().take(12).collect(),
                });
            };
            if let Some((_, first)) = out.iter().find(|(t, _)| t == token) {
                return Err(ServeError::DuplicateToken {
                    first: first.clone(),
                    second: who.to_string(),
                });
            }
            out.push((token.to_string(), who.to_string()));
        }
        Ok(Tokens(out))
    }

    /// Whether no token is configured.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// How many tokens are configured.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// The identity `token` names.
    pub fn identity(&self, token: &str) -> Option<&str> {
        let mut found = None;
        for (t, who) in &self.0 {
            if same(t.as_bytes(), token.as_bytes()) {
                found = Some(who.as_str());
            }
        }
        found
    }
}

/// Paths served without a token: they carry no session data.
const PUBLIC: &[&str] = &["/health", "/", "/inbox.js", "/inbox.css"];

/// The middleware: public paths pass, others need a known bearer token (when tokens are
/// configured); the identity goes into the request's extensions.
pub(crate) async fn require_token(
    State(state): State<Arc<AppState>>,
    mut req: Request,
    next: Next,
) -> Response {
    if PUBLIC.contains(&req.uri().path()) || req.method() == axum::http::Method::OPTIONS {
        return next.run(req).await;
    }
    let identity = if state.tokens.is_empty() {
        LOCAL_IDENTITY.to_string()
    } else {
        let given = req
            .headers()
            .get(axum::http::header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            .and_then(|v| v.strip_prefix("Bearer "))
            .map(str::trim);
        match given.and_then(|t| state.tokens.identity(t)) {
            Some(who) => who.to_string(),
            None => {
                let message = if given.is_some() {
                    "the bearer token is not one of ARCHMAX_SERVE_TOKENS"
                } else {
                    "this route needs 'Authorization: Bearer <token>' with a token of ARCHMAX_SERVE_TOKENS"
                };
                return ApiError::new(
                    axum::http::StatusCode::UNAUTHORIZED,
                    "UnauthorizedError",
                    message,
                )
                .into_response();
            }
        }
    };
    req.extensions_mut().insert(Identity(identity));
    next.run(req).await
}

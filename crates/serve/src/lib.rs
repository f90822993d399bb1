//! `archmax-serve`: the harness as a service. A thin HTTP face over [`Harness`]: every
//! route maps onto one harness call (`send`, `decide`, `reply`, `deliver`, the session
//! reads) and answers the Outcome JSON `archmax … --json` prints; no business rule lives
//! here. Around it: bearer tokens naming identities, the approvers of a human state checked
//! against the identity, bounded bodies, CORS only when configured, Server-Sent Events with
//! replay from a `seq`, Prometheus metrics, an OpenAPI document and the web inbox.
//!
//! ```
//! use archmax_serve::Tokens;
//!
//! let tokens = Tokens::parse("alice=s3cret, bob=hunter2").expect("two tokens");
//! assert_eq!(tokens.identity("s3cret"), Some("alice"));
//! assert_eq!(tokens.identity("nope"), None);
//! assert!(Tokens::parse("alice").is_err());
//! ```

mod api;
mod api_error;
mod auth;
pub mod hub;
mod inbox;
mod mcp;
pub mod metrics;
mod openapi;
mod sessions;

use std::collections::BTreeMap;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::PathBuf;
use std::sync::Arc;

use archmax_machine::store::SessionStore;
use archmax_machine::{EventSink, Harness, Outcome};
use axum::Router;
use serde_json::Value;

pub use auth::Tokens;

/// The variable that holds the tokens: `identity=token` pairs, comma-separated.
pub const TOKENS_VAR: &str = "ARCHMAX_SERVE_TOKENS";

/// The variable that names the admins: identities (of [`TOKENS_VAR`]), comma-separated,
/// that may prune sessions besides the approvers of the workspace's human states.
pub const ADMINS_VAR: &str = "ARCHMAX_SERVE_ADMINS";

/// The identities a text of [`ADMINS_VAR`] names: comma-separated, trimmed, blanks left out.
pub fn parse_admins(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|a| !a.is_empty())
        .map(str::to_string)
        .collect()
}

/// The default bound on a request body (1 MiB).
pub const DEFAULT_BODY_LIMIT: usize = 1024 * 1024;

/// Builds the harness of one workflow with its events going to the given sink; the error
/// is the message to show for that workflow.
pub type Assemble = Arc<dyn Fn(&str, Arc<dyn EventSink>) -> Result<Harness, String> + Send + Sync>;

/// Why the server cannot start.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum ServeError {
    /// An entry of [`TOKENS_VAR`] is not `identity=token`.
    #[error(
        "{TOKENS_VAR} entry {index} is not 'identity=token' (got '{shown}'); write identity=token pairs separated by commas"
    )]
    BadToken {
        /// 1-based position of the entry.
        index: usize,
        /// The entry, cut short.
        shown: String,
    },
    /// An entry is blank (two commas in a row, or one at an end): a token left out by
    /// mistake, refused rather than skipped.
    #[error(
        "{TOKENS_VAR} entry {index} is empty (two commas in a row, or one at an end); write identity=token there or remove the comma"
    )]
    EmptyToken {
        /// 1-based position of the entry.
        index: usize,
    },
    /// Two entries give the same token.
    #[error(
        "{TOKENS_VAR} gives the same token to '{first}' and '{second}'; each token names one identity"
    )]
    DuplicateToken {
        /// The first identity.
        first: String,
        /// The second identity.
        second: String,
    },
    /// A non-loopback address without tokens.
    #[error(
        "without {TOKENS_VAR} the server binds to loopback only; '{host}' is not a loopback address. Set {TOKENS_VAR} to serve other machines"
    )]
    NotLoopback {
        /// The refused address.
        host: String,
    },
    /// The host is not an IP address.
    #[error("--host must be an IP address such as 127.0.0.1 or 0.0.0.0, got '{0}'")]
    BadHost(String),
    /// The workspace has no workflow that loads.
    #[error("no workflow of the workspace loads: {0}")]
    NoWorkflow(String),
    /// The MCP connection failed (stdio).
    #[error("the MCP connection failed: {0}")]
    Mcp(std::io::Error),
}

/// What the server is built from.
pub struct ServeConfig {
    /// The workspace root.
    pub root: PathBuf,
    /// The workspace's workflow slugs.
    pub workflows: Vec<String>,
    /// The session store every harness shares.
    pub store: Arc<dyn SessionStore>,
    /// How a workflow's harness is assembled.
    pub assemble: Assemble,
    /// The tokens; empty = loopback only, every request is the identity `local`.
    pub tokens: Tokens,
    /// The one origin CORS allows; `None` = no CORS headers.
    pub cors_origin: Option<String>,
    /// Where the server's metrics go (shared with a [`metrics::TimedModel`] the harnesses
    /// call, so model-call latency is measured where the calls are made).
    pub metrics: Arc<metrics::Metrics>,
    /// The largest request body accepted, in bytes.
    pub body_limit: usize,
    /// The identities that may prune sessions besides the approvers ([`ADMINS_VAR`]).
    pub admins: Vec<String>,
}

/// The address to bind: `host` (default 127.0.0.1) and `port`; a non-loopback host is
/// refused when there are no tokens.
pub fn bind_address(
    host: Option<&str>,
    port: u16,
    tokens: &Tokens,
) -> Result<SocketAddr, ServeError> {
    let ip = match host.map(str::trim).filter(|h| !h.is_empty()) {
        None => IpAddr::V4(Ipv4Addr::LOCALHOST),
        Some(h) => h
            .parse::<IpAddr>()
            .map_err(|_| ServeError::BadHost(h.to_string()))?,
    };
    if tokens.is_empty() && !ip.is_loopback() {
        return Err(ServeError::NotLoopback {
            host: ip.to_string(),
        });
    }
    Ok(SocketAddr::new(ip, port))
}

/// The Outcome as the CLI's `--json` prints it: everything but the transcript.
pub fn outcome_value(outcome: &Outcome) -> Value {
    let mut value = serde_json::to_value(outcome).unwrap_or(Value::Null);
    if let Value::Object(map) = &mut value {
        map.remove("messages");
    }
    value
}

/// One workflow as the server holds it.
pub(crate) enum Loaded {
    /// Assembled.
    Ready(Arc<Harness>),
    /// Did not assemble: the message.
    Broken(String),
}

/// What every handler shares.
pub(crate) struct AppState {
    pub workflows: BTreeMap<String, Loaded>,
    pub store: Arc<dyn SessionStore>,
    pub hub: Arc<hub::Hub>,
    pub metrics: Arc<metrics::Metrics>,
    pub tokens: Tokens,
    pub admins: Vec<String>,
}

/// The router of every route, with the state assembled: one harness per workflow, all
/// sharing the store and the event hub.
pub fn app(config: ServeConfig) -> Result<Router, ServeError> {
    let (cors, limit) = (config.cors_origin.clone(), config.body_limit);
    let state = state(config)?;
    Ok(api::router(state, cors.as_deref(), limit))
}

/// Serves the workspace's workflows as MCP tools over this process's stdin and stdout
/// (`archmax mcp`) until the client closes them. Calls carry no identity: the local user
/// decides, as with `archmax decide`.
pub async fn mcp_stdio(config: ServeConfig) -> Result<(), ServeError> {
    let state = state(config)?;
    mcp::stdio(state).await.map_err(ServeError::Mcp)
}

/// The state every route shares: one harness per workflow, all sharing the store and the
/// event hub.
fn state(config: ServeConfig) -> Result<Arc<AppState>, ServeError> {
    let metrics = config.metrics;
    let hub = Arc::new(hub::Hub::new(Arc::clone(&metrics)));
    let mut workflows = BTreeMap::new();
    for slug in &config.workflows {
        let sink: Arc<dyn EventSink> = hub.clone();
        let loaded = match (config.assemble)(slug, sink) {
            Ok(h) => Loaded::Ready(Arc::new(h)),
            Err(e) => Loaded::Broken(e),
        };
        workflows.insert(slug.clone(), loaded);
    }
    if !workflows.values().any(|w| matches!(w, Loaded::Ready(_))) {
        let why = workflows
            .values()
            .filter_map(|w| match w {
                Loaded::Broken(e) => Some(e.as_str()),
                Loaded::Ready(_) => None,
            })
            .next()
            .unwrap_or("the workspace has no workflows/<slug>/workflow.yaml")
            .to_string();
        return Err(ServeError::NoWorkflow(why));
    }
    Ok(Arc::new(AppState {
        workflows,
        store: config.store,
        hub,
        metrics,
        tokens: config.tokens,
        admins: config.admins,
    }))
}

/// The listener [`run`] serves on.
pub use tokio::net::TcpListener;

/// Serves `app` on `listener` until the process ends. Small writes go out at once
/// (`TCP_NODELAY`): a streamed answer (SSE, `/mcp`) is several small writes, which Nagle's
/// algorithm would hold back until the client's delayed acknowledgement.
pub async fn run(listener: TcpListener, app: Router) -> std::io::Result<()> {
    use axum::serve::ListenerExt;
    let listener = listener.tap_io(|tcp| {
        if let Err(e) = tcp.set_nodelay(true) {
            tracing::debug!("cannot set TCP_NODELAY: {e}");
        }
    });
    axum::serve(listener, app).await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_is_the_default_and_the_only_choice_without_tokens() {
        let none = Tokens::default();
        assert_eq!(
            bind_address(None, 8787, &none).map(|a| a.to_string()).ok(),
            Some("127.0.0.1:8787".to_string())
        );
        assert!(bind_address(Some("::1"), 1, &none).is_ok());
        assert!(matches!(
            bind_address(Some("0.0.0.0"), 1, &none),
            Err(ServeError::NotLoopback { .. })
        ));
        let some = Tokens::parse("a=b").expect("one token");
        assert!(bind_address(Some("0.0.0.0"), 1, &some).is_ok());
        assert!(matches!(
            bind_address(Some("localhost"), 1, &some),
            Err(ServeError::BadHost(_))
        ));
    }

    #[test]
    fn tokens_take_everything_after_the_first_equals_and_refuse_a_shared_token() {
        let t = Tokens::parse(" alice = ab==, bob=cd").expect("parses");
        assert_eq!(t.len(), 2);
        assert_eq!(t.identity("ab=="), Some("alice"));
        assert_eq!(t.identity("cd"), Some("bob"));
        assert_eq!(t.identity("ab"), None);
        assert!(matches!(
            Tokens::parse("alice=x,bob=x"),
            Err(ServeError::DuplicateToken { .. })
        ));
        assert!(matches!(
            Tokens::parse("=x"),
            Err(ServeError::BadToken { index: 1, .. })
        ));
        for (text, index) in [("a=1,,b=2", 2), ("a=1, ,b=2", 2), (",a=1", 1), ("a=1,", 2)] {
            let err = Tokens::parse(text).expect_err(text);
            assert!(
                matches!(err, ServeError::EmptyToken { index: i } if i == index),
                "{text}: {err}"
            );
            assert_eq!(
                err.to_string(),
                format!(
                    "ARCHMAX_SERVE_TOKENS entry {index} is empty (two commas in a row, or one at an end); write identity=token there or remove the comma"
                )
            );
        }
        assert!(Tokens::parse("  ").expect("no tokens").is_empty());
    }
}

//! What a server may ask of the client: user input (elicitation) and model
//! completions (sampling). Without a host the pool advertises neither and
//! answers both "declined".

use futures_util::future::BoxFuture;
use serde_json::Value;

/// The answer to an elicitation.
#[derive(Debug, Clone, PartialEq)]
pub enum ElicitAnswer {
    /// The user answered; the content matches the requested schema. A field it
    /// leaves out that the schema gives a `default` is sent with that default
    /// (as a form shows it pre-filled), so `Accept(json!({}))` accepts the
    /// defaults.
    Accept(Value),
    /// The user said no.
    Decline,
    /// The user dismissed the question.
    Cancel,
}

/// The harness's side of server-initiated requests. Given to the pool in
/// [`crate::PoolOptions::host`], it makes the pool advertise the `elicitation`
/// (form mode) and `sampling` capabilities it answers ([`McpHost::elicits`],
/// [`McpHost::samples`]).
pub trait McpHost: Send + Sync {
    /// Whether this host answers elicitation: the pool advertises the capability only then
    /// (otherwise a server's request is declined).
    fn elicits(&self) -> bool {
        true
    }

    /// Whether this host answers sampling: the pool advertises the capability only then
    /// (otherwise a server's request is refused).
    fn samples(&self) -> bool {
        true
    }

    /// `elicitation/create` from `server`: `params` is the request's params as
    /// the server sent them (`mode`, `message`, `requestedSchema` or `url`).
    fn elicit<'a>(&'a self, server: &'a str, params: Value) -> BoxFuture<'a, ElicitAnswer>;

    /// `sampling/createMessage` from `server`: `params` as sent (`messages`,
    /// `maxTokens`, `systemPrompt`, ...). The answer is a `CreateMessageResult`
    /// as JSON (`{"role": "assistant", "content": {...}, "model": "..."}`), or
    /// the reason to refuse.
    fn sample<'a>(&'a self, server: &'a str, params: Value)
    -> BoxFuture<'a, Result<Value, String>>;
}

//! OpenAI chat-completions wire types.
//!
//! Field names follow the OpenAI wire format exactly (`tool_calls`, `tool_call_id`,
//! `max_tokens`, `parallel_tool_calls`, …). Requests are built from these types and serialized
//! with serde; responses are read leniently from a [`serde_json::Value`] by
//! [`ChatResponse::from_value`], because OpenAI-compatible endpoints differ in small ways.

use serde::{Deserialize, Serialize, Serializer};
use serde_json::{Map, Value};

/// One message of a chat-completions conversation, tagged by its `role`.
///
/// Serializes as `{"role": "system" | "user" | "assistant" | "tool", …}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "role", rename_all = "lowercase")]
pub enum ChatMessage {
    /// A system message (the system prompt); content may be content blocks for prompt caching.
    System {
        /// The message content.
        content: MessageContent,
    },
    /// A user (human) message.
    User {
        /// The message content.
        content: MessageContent,
    },
    /// A message the model produced earlier in the conversation.
    Assistant {
        /// The text the model produced. `None` is sent as `""`, as LangChain's `ChatOpenAI`
        /// does for assistant messages (in particular ones that only carry tool calls).
        #[serde(default, serialize_with = "content_or_empty")]
        content: Option<String>,
        /// The tool calls the model made; omitted from the wire when empty.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        tool_calls: Vec<ToolCall>,
    },
    /// The result of one tool call, answering the assistant's call `tool_call_id`.
    Tool {
        /// The id of the tool call this message answers.
        tool_call_id: String,
        /// The tool result text.
        content: String,
    },
}

fn content_or_empty<S: Serializer>(content: &Option<String>, ser: S) -> Result<S::Ok, S::Error> {
    ser.serialize_str(content.as_deref().unwrap_or(""))
}

/// The fields of each [`ChatMessage`] variant, read as a plain struct once the role is known
/// ([`ChatMessage::from_line`]).
#[derive(Deserialize)]
struct ContentFields {
    content: MessageContent,
}

#[derive(Deserialize)]
struct AssistantFields {
    #[serde(default)]
    content: Option<String>,
    #[serde(default)]
    tool_calls: Vec<ToolCall>,
}

#[derive(Deserialize)]
struct ToolFields {
    tool_call_id: String,
    content: String,
}

impl ChatMessage {
    /// Reads a stored message (a wire-form chat message, perhaps with markers of our own)
    /// as the derived `Deserialize` does (`None` where that fails), without its internally
    /// tagged path, which copies the whole message into a buffer first: the role picks the
    /// variant, whose fields are read straight from the borrowed value.
    pub fn from_line(line: &Value) -> Option<ChatMessage> {
        let role = line.as_object()?.get("role")?.as_str()?;
        Some(match role {
            "system" => ChatMessage::System {
                content: ContentFields::deserialize(line).ok()?.content,
            },
            "user" => ChatMessage::User {
                content: ContentFields::deserialize(line).ok()?.content,
            },
            "assistant" => {
                let f = AssistantFields::deserialize(line).ok()?;
                ChatMessage::Assistant {
                    content: f.content,
                    tool_calls: f.tool_calls,
                }
            }
            "tool" => {
                let f = ToolFields::deserialize(line).ok()?;
                ChatMessage::Tool {
                    tool_call_id: f.tool_call_id,
                    content: f.content,
                }
            }
            _ => return None,
        })
    }

    /// A system message with plain text content.
    pub fn system(text: impl Into<String>) -> Self {
        ChatMessage::System {
            content: MessageContent::Text(text.into()),
        }
    }

    /// A user message with plain text content.
    pub fn user(text: impl Into<String>) -> Self {
        ChatMessage::User {
            content: MessageContent::Text(text.into()),
        }
    }

    /// An assistant message with optional text and any number of tool calls.
    pub fn assistant(content: Option<String>, tool_calls: Vec<ToolCall>) -> Self {
        ChatMessage::Assistant {
            content,
            tool_calls,
        }
    }

    /// A tool-result message answering the call `tool_call_id`.
    pub fn tool(tool_call_id: impl Into<String>, content: impl Into<String>) -> Self {
        ChatMessage::Tool {
            tool_call_id: tool_call_id.into(),
            content: content.into(),
        }
    }

    /// The wire role: `system`, `user`, `assistant` or `tool`.
    pub fn role(&self) -> &'static str {
        match self {
            ChatMessage::System { .. } => "system",
            ChatMessage::User { .. } => "user",
            ChatMessage::Assistant { .. } => "assistant",
            ChatMessage::Tool { .. } => "tool",
        }
    }
}

/// Message content: a plain string, or an array of content parts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum MessageContent {
    /// Plain text, serialized as a JSON string.
    Text(String),
    /// Content blocks, serialized as a JSON array (used for the `[static, volatile]` system
    /// prompt with a `cache_control` marker on the static block).
    Parts(Vec<ContentPart>),
}

impl MessageContent {
    /// The text of the content; parts are joined with no separator.
    pub fn text(&self) -> String {
        match self {
            MessageContent::Text(text) => text.clone(),
            MessageContent::Parts(parts) => parts
                .iter()
                .map(|part| match part {
                    ContentPart::Text { text, .. } => text.as_str(),
                    ContentPart::ImageUrl { .. } => "",
                })
                .collect(),
        }
    }
}

impl From<String> for MessageContent {
    fn from(text: String) -> Self {
        MessageContent::Text(text)
    }
}

impl From<&str> for MessageContent {
    fn from(text: &str) -> Self {
        MessageContent::Text(text.to_owned())
    }
}

/// One content block of a message.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum ContentPart {
    /// `{"type": "text", "text": …, "cache_control"?: …}`.
    Text {
        /// The block text.
        text: String,
        /// An Anthropic-compatible cache marker; omitted when `None`.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cache_control: Option<CacheControl>,
    },
    /// `{"type": "image_url", "image_url": {"url": "data:<mime>;base64,…"}}` (user messages).
    ImageUrl {
        /// Where the image is (a data URL for an image the agent read).
        image_url: ImageUrl,
    },
}

/// The `image_url` of an image part.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageUrl {
    /// The URL.
    pub url: String,
}

impl ContentPart {
    /// A text block without a cache marker.
    pub fn text(text: impl Into<String>) -> Self {
        ContentPart::Text {
            text: text.into(),
            cache_control: None,
        }
    }

    /// A text block carrying `cache_control: {"type": "ephemeral", "ttl"?: ttl}`.
    pub fn cached_text(text: impl Into<String>, ttl: Option<&str>) -> Self {
        ContentPart::Text {
            text: text.into(),
            cache_control: Some(CacheControl::ephemeral(ttl)),
        }
    }
}

/// An Anthropic-compatible prompt-cache marker: `{"type": "ephemeral", "ttl"?: "5m" | "1h"}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CacheControl {
    /// The marker type; always `ephemeral` today.
    #[serde(rename = "type")]
    pub kind: String,
    /// The cache lifetime (`5m` or `1h`); omitted when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ttl: Option<String>,
}

impl CacheControl {
    /// `{"type": "ephemeral", "ttl"?: ttl}`.
    pub fn ephemeral(ttl: Option<&str>) -> Self {
        CacheControl {
            kind: "ephemeral".to_owned(),
            ttl: ttl.map(str::to_owned),
        }
    }
}

/// One tool call made by the model.
///
/// Flat in Rust; on the wire it is
/// `{"id": …, "type": "function", "function": {"name": …, "arguments": "<JSON text>"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "WireToolCall", from = "WireToolCall")]
pub struct ToolCall {
    /// The call id, echoed back as `tool_call_id` by the tool-result message.
    pub id: String,
    /// The tool name.
    pub name: String,
    /// The arguments as JSON text, exactly as the model produced them (may be invalid JSON).
    pub arguments: String,
}

impl ToolCall {
    /// A tool call from its parts.
    pub fn new(
        id: impl Into<String>,
        name: impl Into<String>,
        arguments: impl Into<String>,
    ) -> Self {
        ToolCall {
            id: id.into(),
            name: name.into(),
            arguments: arguments.into(),
        }
    }
}

#[derive(Clone, Serialize, Deserialize)]
struct WireToolCall {
    id: String,
    #[serde(rename = "type", default = "function_type")]
    kind: String,
    function: WireFunction,
}

#[derive(Clone, Serialize, Deserialize)]
struct WireFunction {
    name: String,
    #[serde(default)]
    arguments: String,
}

fn function_type() -> String {
    "function".to_owned()
}

impl From<ToolCall> for WireToolCall {
    fn from(call: ToolCall) -> Self {
        WireToolCall {
            id: call.id,
            kind: function_type(),
            function: WireFunction {
                name: call.name,
                arguments: call.arguments,
            },
        }
    }
}

impl From<WireToolCall> for ToolCall {
    fn from(wire: WireToolCall) -> Self {
        ToolCall {
            id: wire.id,
            name: wire.function.name,
            arguments: wire.function.arguments,
        }
    }
}

/// A tool offered to the model.
///
/// Serializes as `{"type": "function", "function": {"name", "description", "parameters"}}`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(into = "WireToolDef", from = "WireToolDef")]
pub struct ToolDef {
    /// The tool name.
    pub name: String,
    /// The tool description shown to the model.
    pub description: String,
    /// The JSON Schema of the tool's arguments.
    pub parameters: Value,
}

impl ToolDef {
    /// A tool definition from its parts.
    pub fn new(name: impl Into<String>, description: impl Into<String>, parameters: Value) -> Self {
        ToolDef {
            name: name.into(),
            description: description.into(),
            parameters,
        }
    }
}

#[derive(Clone, Serialize, Deserialize)]
struct WireToolDef {
    #[serde(rename = "type", default = "function_type")]
    kind: String,
    function: WireToolFunction,
}

#[derive(Clone, Serialize, Deserialize)]
struct WireToolFunction {
    name: String,
    #[serde(default)]
    description: String,
    #[serde(default)]
    parameters: Value,
}

impl From<ToolDef> for WireToolDef {
    fn from(def: ToolDef) -> Self {
        WireToolDef {
            kind: function_type(),
            function: WireToolFunction {
                name: def.name,
                description: def.description,
                parameters: def.parameters,
            },
        }
    }
}

impl From<WireToolDef> for ToolDef {
    fn from(wire: WireToolDef) -> Self {
        ToolDef {
            name: wire.function.name,
            description: wire.function.description,
            parameters: wire.function.parameters,
        }
    }
}

/// A `POST /chat/completions` request body (non-streaming).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ChatRequest {
    /// The model id for this call (the caller resolves state model > settings model > default).
    /// An empty id is replaced by the client's configured default model.
    pub model: String,
    /// The conversation.
    pub messages: Vec<ChatMessage>,
    /// The tools offered; omitted from the wire when empty. Shared: a turn offers the same
    /// definitions on every call in a state (see `Harness::tool_defs`).
    #[serde(default = "no_tools", skip_serializing_if = "is_empty")]
    pub tools: std::sync::Arc<[ToolDef]>,
    /// Sampling temperature; when `None` the client's configured temperature (if any) is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub temperature: Option<f64>,
    /// Max output tokens; when `None` the client's configured value (if any) is sent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    /// Whether the model may make several tool calls in one answer; omitted when `None`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parallel_tool_calls: Option<bool>,
    /// Never sent. Requests with the same lineage come from one conversation that only
    /// grows: each one's messages after message 0 begin with all of the previous one's.
    /// A model that keeps conversations ([`super::delta`]) then skips comparing them.
    #[serde(skip)]
    pub lineage: Option<u64>,
    /// Never sent. The session the request serves, so a model that keeps conversations
    /// can release that session's ([`super::delta::Channels::forget_session`]).
    #[serde(skip)]
    pub session: Option<String>,
    /// Never sent. Who asks: the agent, or a rubric grading its work (a host that builds
    /// models per role, `modelFactory`, answers each with its own).
    #[serde(skip)]
    pub role: ModelRole,
    /// Never sent. The workflow state the request is made in, when there is one (named by
    /// a model that reports on requests, such as a cassette's replayer).
    #[serde(skip)]
    pub state: Option<String>,
}

fn no_tools() -> std::sync::Arc<[ToolDef]> {
    std::sync::Arc::from(Vec::new())
}

fn is_empty(tools: &std::sync::Arc<[ToolDef]>) -> bool {
    tools.is_empty()
}

/// Who a model request is for (the original's `ModelRole`; `judge` arrives with the cases engine).
/// A JS model function's `info.role`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, ts_rs::TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum ModelRole {
    /// The agent's own turn.
    #[default]
    Agent,
    /// A rubric hook's grader.
    Rubric,
    /// A case's `grade` step (`tests.judge`).
    Judge,
}

impl ModelRole {
    /// Whether this is the agent's own request.
    pub fn is_agent(&self) -> bool {
        *self == ModelRole::Agent
    }
}

impl ChatRequest {
    /// A request with the given model and messages and every option unset.
    pub fn new(model: impl Into<String>, messages: Vec<ChatMessage>) -> Self {
        ChatRequest {
            model: model.into(),
            messages,
            tools: no_tools(),
            temperature: None,
            max_tokens: None,
            parallel_tool_calls: None,
            lineage: None,
            session: None,
            role: ModelRole::Agent,
            state: None,
        }
    }

    /// The same request offering `tools`.
    pub fn with_tools(mut self, tools: impl Into<std::sync::Arc<[ToolDef]>>) -> Self {
        self.tools = tools.into();
        self
    }
}

/// Token usage of one model call.
///
/// `input_tokens` is the total prompt size; the two cache counts are a breakdown of it.
/// Serializes in camelCase (`inputTokens`, …) like the harness `UsageSummary`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Prompt tokens (`prompt_tokens`).
    pub input_tokens: u64,
    /// Completion tokens (`completion_tokens`).
    pub output_tokens: u64,
    /// Prompt tokens read from cache (`prompt_tokens_details.cached_tokens`, else
    /// `cache_read_input_tokens`).
    pub cache_read_tokens: u64,
    /// Prompt tokens written to cache (`cache_creation_input_tokens`).
    pub cache_creation_tokens: u64,
}

impl Usage {
    /// Reads an OpenAI `usage` object. `None` when `usage` is not an object.
    ///
    /// Counters: `prompt_tokens` (else `input_tokens`), `completion_tokens` (else
    /// `output_tokens`), `prompt_tokens_details.cached_tokens` (else the Anthropic-compatible
    /// `cache_read_input_tokens`), `cache_creation_input_tokens` (else
    /// `prompt_tokens_details.cache_creation_tokens`). Missing counters are 0.
    pub fn from_openai(usage: &Value) -> Option<Usage> {
        let obj = usage.as_object()?;
        let details = obj.get("prompt_tokens_details").and_then(Value::as_object);
        let detail = |key: &str| details.and_then(|d| count(d.get(key)));
        Some(Usage {
            input_tokens: count(obj.get("prompt_tokens"))
                .or_else(|| count(obj.get("input_tokens")))
                .unwrap_or(0),
            output_tokens: count(obj.get("completion_tokens"))
                .or_else(|| count(obj.get("output_tokens")))
                .unwrap_or(0),
            cache_read_tokens: detail("cached_tokens")
                .or_else(|| count(obj.get("cache_read_input_tokens")))
                .unwrap_or(0),
            cache_creation_tokens: count(obj.get("cache_creation_input_tokens"))
                .or_else(|| detail("cache_creation_tokens"))
                .unwrap_or(0),
        })
    }

    /// Whether every counter is zero.
    pub fn is_zero(&self) -> bool {
        *self == Usage::default()
    }
}

impl std::ops::AddAssign for Usage {
    fn add_assign(&mut self, other: Usage) {
        self.input_tokens = self.input_tokens.saturating_add(other.input_tokens);
        self.output_tokens = self.output_tokens.saturating_add(other.output_tokens);
        self.cache_read_tokens = self
            .cache_read_tokens
            .saturating_add(other.cache_read_tokens);
        self.cache_creation_tokens = self
            .cache_creation_tokens
            .saturating_add(other.cache_creation_tokens);
    }
}

/// The largest token count one call may report; a larger one is nonsense (no model
/// reads or writes a billion tokens in one call) and counts as not reported.
pub const MAX_TOKENS_PER_CALL: u64 = 1_000_000_000;

/// A token counter: a non-negative integer (`12` or `12.0`) up to
/// [`MAX_TOKENS_PER_CALL`]; anything else (negative, fractional, huge, not a number)
/// is `None`, so it counts as not reported rather than as a garbage total.
fn count(value: Option<&Value>) -> Option<u64> {
    let value = value?;
    let n = match value.as_u64() {
        Some(n) => n,
        None => {
            let f = value.as_f64()?;
            if !(f.is_finite() && f >= 0.0 && f.fract() == 0.0 && f <= MAX_TOKENS_PER_CALL as f64) {
                return None;
            }
            f as u64
        }
    };
    (n <= MAX_TOKENS_PER_CALL).then_some(n)
}

/// The assistant message of a chat-completions response.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct AssistantMessage {
    /// The text answer; `None` when absent, `null` or empty.
    pub content: Option<String>,
    /// The tool calls, in the order the model made them.
    pub tool_calls: Vec<ToolCall>,
}

impl AssistantMessage {
    /// This answer as a conversation message, to append to the next request.
    pub fn to_message(&self) -> ChatMessage {
        ChatMessage::Assistant {
            content: self.content.clone(),
            tool_calls: self.tool_calls.clone(),
        }
    }
}

impl From<AssistantMessage> for ChatMessage {
    fn from(message: AssistantMessage) -> Self {
        ChatMessage::Assistant {
            content: message.content,
            tool_calls: message.tool_calls,
        }
    }
}

/// A parsed chat-completions response (the first choice).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct ChatResponse {
    /// The assistant message of `choices[0]`.
    pub message: AssistantMessage,
    /// Token usage; `None` when the provider reports none.
    pub usage: Option<Usage>,
    /// The model id from the response metadata, when present and non-empty.
    pub model: Option<String>,
    /// `choices[0].finish_reason`, when present (`stop`, `tool_calls`, `length`, …).
    pub finish_reason: Option<String>,
}

impl ChatResponse {
    /// Reads a `chat.completion` body.
    ///
    /// - `choices[0].message` is read as the assistant message whatever its `role` (a missing
    ///   or empty role, or a non-protocol role such as `model`, is the assistant).
    /// - `content` may be a string, `null`, or an array of parts; the text of the parts (string
    ///   parts, and objects of type `text`/`output_text` or without a type) is joined with no
    ///   separator. Empty text is `None`.
    /// - A tool call without an id gets `call_<index>`; `arguments` given as a JSON value
    ///   instead of a string is re-serialized to JSON text; missing arguments are `""`.
    ///
    /// Errors (as text): the body is not an object, carries an `error` object, or has no
    /// choice with a message.
    pub fn from_value(body: &Value) -> Result<ChatResponse, String> {
        let obj = body.as_object().ok_or_else(|| {
            format!(
                "expected a JSON object, got {}",
                archmax_spec::signature::value_kind(body)
            )
        })?;
        if let Some(message) = error_message(obj) {
            return Err(format!("the endpoint returned an error: {message}"));
        }
        let choice = obj
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| choices.first())
            .ok_or("the response has no choices")?;
        let message = choice
            .get("message")
            .and_then(Value::as_object)
            .ok_or("the first choice has no message")?;
        let mut response = ChatResponse::from_message(message)?;
        response.usage = obj.get("usage").and_then(Usage::from_openai);
        response.model = obj
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
            .map(str::to_owned);
        response.finish_reason = choice
            .get("finish_reason")
            .and_then(Value::as_str)
            .map(str::to_owned);
        Ok(response)
    }

    /// Reads an assistant message alone (a JS model function's answer), as
    /// [`from_value`](Self::from_value) reads `choices[0].message`: no usage, model or
    /// finish reason.
    pub fn from_message(message: &serde_json::Map<String, Value>) -> Result<ChatResponse, String> {
        let content = message
            .get("content")
            .and_then(content_text)
            .filter(|text| !text.is_empty());
        if let Some(text) = &content
            && text.len() > MAX_ANSWER_TEXT_BYTES
        {
            return Err(format!(
                "the answer's text is {} bytes, over the limit of {MAX_ANSWER_TEXT_BYTES}",
                text.len()
            ));
        }
        let tool_calls = match message.get("tool_calls") {
            Some(Value::Array(calls)) => calls
                .iter()
                .enumerate()
                .map(|(index, call)| read_tool_call(index, call))
                .collect::<Result<Vec<_>, String>>()?,
            _ => Vec::new(),
        };
        Ok(ChatResponse {
            message: AssistantMessage {
                content,
                tool_calls,
            },
            usage: None,
            model: None,
            finish_reason: None,
        })
    }
}

/// The text of a body's non-null `error` object: its `message`, else the object as JSON.
pub(crate) fn error_message(body: &Map<String, Value>) -> Option<String> {
    let error = body.get("error").filter(|e| !e.is_null())?;
    Some(
        error
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_owned)
            .unwrap_or_else(|| error.to_string()),
    )
}

/// The text of a `content` value: a string, or the joined text of an array of parts.
fn content_text(content: &Value) -> Option<String> {
    match content {
        Value::String(text) => Some(text.clone()),
        Value::Array(parts) => Some(
            parts
                .iter()
                .filter_map(|part| match part {
                    Value::String(text) => Some(text.as_str()),
                    Value::Object(part) => {
                        let textual = match part.get("type").and_then(Value::as_str) {
                            None => true,
                            Some(kind) => kind == "text" || kind == "output_text",
                        };
                        if textual {
                            part.get("text").and_then(Value::as_str)
                        } else {
                            None
                        }
                    }
                    _ => None,
                })
                .collect(),
        ),
        _ => None,
    }
}

/// Longest text of one answer, in bytes (2 MiB: several times any model's output limit).
pub const MAX_ANSWER_TEXT_BYTES: usize = 2 * 1024 * 1024;
/// Longest arguments of one tool call, in bytes (4 MiB).
pub const MAX_TOOL_ARGUMENTS_BYTES: usize = 4 * 1024 * 1024;

fn read_tool_call(index: usize, call: &Value) -> Result<ToolCall, String> {
    let empty = Map::new();
    let call_obj = call.as_object().unwrap_or(&empty);
    let function = call_obj
        .get("function")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let name = function
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
        .ok_or_else(|| format!("tool call {index} has no function name"))?;
    let id = call_obj
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| !id.is_empty())
        .map(str::to_owned)
        .unwrap_or_else(|| format!("call_{index}"));
    let arguments = match function.get("arguments") {
        None | Some(Value::Null) => String::new(),
        Some(Value::String(text)) => text.clone(),
        Some(other) => other.to_string(),
    };
    if arguments.len() > MAX_TOOL_ARGUMENTS_BYTES {
        return Err(format!(
            "tool call {index} ('{name}') has {} bytes of arguments, over the limit of {MAX_TOOL_ARGUMENTS_BYTES}",
            arguments.len()
        ));
    }
    Ok(ToolCall {
        id,
        name: name.to_owned(),
        arguments,
    })
}

#[cfg(test)]
mod tests {
    /// `from_line` reads every shape as the derived `Deserialize` does, failures included.
    #[test]
    fn from_line_reads_as_the_derived_deserialize() {
        let lines = [
            json!({"role": "system", "content": "You help."}),
            json!({"role": "system", "content": [{"type": "text", "text": "a", "cache_control": {"type": "ephemeral"}}, {"type": "text", "text": "b"}]}),
            json!({"role": "user", "content": "Hi", "archmax": {"kind": "note"}}),
            json!({"role": "user", "content": [{"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}}]}),
            json!({"role": "user"}),
            json!({"role": "user", "content": 7}),
            json!({"role": "assistant", "content": null}),
            json!({"role": "assistant"}),
            json!({"role": "assistant", "content": "Done.", "extra": 1}),
            json!({"role": "assistant", "content": ["not", "text"]}),
            json!({"role": "assistant", "content": "", "tool_calls": [{"id": "c1", "type": "function", "function": {"name": "read_file", "arguments": "{}"}}]}),
            json!({"role": "assistant", "tool_calls": null}),
            json!({"role": "assistant", "tool_calls": [{"id": "c1"}]}),
            json!({"role": "tool", "tool_call_id": "c1", "content": "ok", "governance_blocked": true}),
            json!({"role": "tool", "tool_call_id": "c1"}),
            json!({"role": "tool", "tool_call_id": 3, "content": "ok"}),
            json!({"role": "Tool", "tool_call_id": "c1", "content": "ok"}),
            json!({"role": "developer", "content": "x"}),
            json!({"role": 1, "content": "x"}),
            json!({"content": "x"}),
            json!("a string"),
            json!(null),
        ];
        for line in &lines {
            let derived: Option<ChatMessage> = serde::Deserialize::deserialize(line).ok();
            assert_eq!(ChatMessage::from_line(line), derived, "{line}");
        }
        // The list holds each variant and failures alike.
        let read = lines.iter().filter_map(ChatMessage::from_line).count();
        assert!(
            read >= 8 && lines.len() - read >= 8,
            "{read} of {} read",
            lines.len()
        );
    }

    use super::*;
    use serde_json::json;

    fn to_json<T: Serialize>(value: &T) -> Value {
        serde_json::to_value(value).expect("serializes")
    }

    #[test]
    fn messages_serialize_with_openai_roles_and_fields() {
        let call = ToolCall::new("call_1", "read_file", r#"{"path":"a.md"}"#);
        let messages = vec![
            ChatMessage::system("sys"),
            ChatMessage::user("hi"),
            ChatMessage::assistant(None, vec![call]),
            ChatMessage::tool("call_1", "contents"),
            ChatMessage::assistant(Some("done".into()), vec![]),
        ];
        assert_eq!(
            to_json(&messages),
            json!([
                {"role": "system", "content": "sys"},
                {"role": "user", "content": "hi"},
                {"role": "assistant", "content": "", "tool_calls": [
                    {"id": "call_1", "type": "function",
                     "function": {"name": "read_file", "arguments": "{\"path\":\"a.md\"}"}}
                ]},
                {"role": "tool", "tool_call_id": "call_1", "content": "contents"},
                {"role": "assistant", "content": "done"}
            ])
        );
    }

    #[test]
    fn messages_round_trip() {
        let messages = vec![
            ChatMessage::system("s"),
            ChatMessage::assistant(Some("x".into()), vec![ToolCall::new("a", "b", "{}")]),
            ChatMessage::tool("a", "r"),
        ];
        let back: Vec<ChatMessage> =
            serde_json::from_value(to_json(&messages)).expect("deserializes");
        assert_eq!(back, messages);
        assert_eq!(back[1].role(), "assistant");
    }

    #[test]
    fn system_content_blocks_carry_cache_control() {
        let message = ChatMessage::System {
            content: MessageContent::Parts(vec![
                ContentPart::cached_text("static", Some("1h")),
                ContentPart::text("volatile"),
            ]),
        };
        assert_eq!(
            to_json(&message),
            json!({"role": "system", "content": [
                {"type": "text", "text": "static", "cache_control": {"type": "ephemeral", "ttl": "1h"}},
                {"type": "text", "text": "volatile"}
            ]})
        );
        let ChatMessage::System { content } = &message else {
            unreachable!("constructed as system")
        };
        assert_eq!(content.text(), "staticvolatile");
        assert_eq!(
            to_json(&CacheControl::ephemeral(None)),
            json!({"type": "ephemeral"})
        );
    }

    #[test]
    fn request_omits_unset_fields_and_empty_tools() {
        let req = ChatRequest::new("gpt-x", vec![ChatMessage::user("q")]);
        assert_eq!(
            to_json(&req),
            json!({"model": "gpt-x", "messages": [{"role": "user", "content": "q"}]})
        );
        let mut req = req.with_tools(vec![ToolDef::new(
            "archmax_advance",
            "Move on",
            json!({"type": "object"}),
        )]);
        req.temperature = Some(0.2);
        req.max_tokens = Some(100);
        req.parallel_tool_calls = Some(true);
        assert_eq!(
            to_json(&req),
            json!({
                "model": "gpt-x",
                "messages": [{"role": "user", "content": "q"}],
                "tools": [{"type": "function", "function": {
                    "name": "archmax_advance", "description": "Move on",
                    "parameters": {"type": "object"}}}],
                "temperature": 0.2,
                "max_tokens": 100,
                "parallel_tool_calls": true
            })
        );
    }

    #[test]
    fn response_text_usage_and_model() {
        let body = json!({
            "id": "x", "object": "chat.completion", "model": "gpt-4o-2024",
            "choices": [{"index": 0, "finish_reason": "stop",
                         "message": {"role": "assistant", "content": "hello"}}],
            "usage": {"prompt_tokens": 100, "completion_tokens": 7,
                      "prompt_tokens_details": {"cached_tokens": 64}}
        });
        let resp = ChatResponse::from_value(&body).expect("parses");
        assert_eq!(resp.message.content.as_deref(), Some("hello"));
        assert!(resp.message.tool_calls.is_empty());
        assert_eq!(resp.model.as_deref(), Some("gpt-4o-2024"));
        assert_eq!(resp.finish_reason.as_deref(), Some("stop"));
        assert_eq!(
            resp.usage,
            Some(Usage {
                input_tokens: 100,
                output_tokens: 7,
                cache_read_tokens: 64,
                cache_creation_tokens: 0
            })
        );
    }

    #[test]
    fn nonsense_usage_counts_as_not_reported() {
        let usage = Usage::from_openai(&json!({
            "prompt_tokens": 1e30, "completion_tokens": -5,
            "prompt_tokens_details": {"cached_tokens": 3.5},
            "cache_creation_input_tokens": "12",
        }));
        assert_eq!(usage, Some(Usage::default()));
        let usage = Usage::from_openai(&json!({
            "prompt_tokens": 18446744073709551615u64, "input_tokens": 7,
            "completion_tokens": 12.0, "cache_read_input_tokens": 1_000_000_001u64,
        }));
        assert_eq!(
            usage,
            Some(Usage {
                input_tokens: 7,
                output_tokens: 12,
                ..Usage::default()
            })
        );
    }

    #[test]
    fn anthropic_compat_usage_fields() {
        let usage = Usage::from_openai(&json!({
            "prompt_tokens": 500, "completion_tokens": 20,
            "cache_read_input_tokens": 300, "cache_creation_input_tokens": 150
        }));
        assert_eq!(
            usage,
            Some(Usage {
                input_tokens: 500,
                output_tokens: 20,
                cache_read_tokens: 300,
                cache_creation_tokens: 150
            })
        );
        assert_eq!(Usage::from_openai(&Value::Null), None);
        assert_eq!(Usage::from_openai(&json!({})), Some(Usage::default()));
        assert!(Usage::default().is_zero());
    }

    #[test]
    fn usage_adds_and_serializes_camel_case() {
        let mut total = Usage {
            input_tokens: 1,
            output_tokens: 2,
            cache_read_tokens: 3,
            cache_creation_tokens: 4,
        };
        total += total;
        assert_eq!(
            to_json(&total),
            json!({"inputTokens": 2, "outputTokens": 4, "cacheReadTokens": 6, "cacheCreationTokens": 8})
        );
    }

    #[test]
    fn roles_missing_empty_or_model_read_as_assistant() {
        for message in [
            json!({"content": "a"}),
            json!({"role": "", "content": "a"}),
            json!({"role": "model", "content": "a"}),
            json!({"role": null, "content": "a"}),
        ] {
            let resp = ChatResponse::from_value(&json!({"choices": [{"message": message}]}))
                .expect("parses");
            assert_eq!(resp.message.content.as_deref(), Some("a"));
            assert_eq!(resp.usage, None);
            assert_eq!(resp.model, None);
        }
    }

    #[test]
    fn content_parts_are_joined_text() {
        let body = json!({"choices": [{"message": {"role": "assistant", "content": [
            {"type": "thinking", "thinking": "hmm", "text": "hidden"},
            {"type": "text", "text": "Hello, "},
            "wor",
            {"type": "output_text", "text": "ld"}
        ]}}]});
        let resp = ChatResponse::from_value(&body).expect("parses");
        assert_eq!(resp.message.content.as_deref(), Some("Hello, world"));
    }

    #[test]
    fn empty_or_null_content_is_none() {
        for content in [json!(""), json!(null), json!([])] {
            let resp = ChatResponse::from_value(
                &json!({"choices": [{"message": {"role": "assistant", "content": content}}]}),
            )
            .expect("parses");
            assert_eq!(resp.message.content, None);
        }
    }

    #[test]
    fn tool_calls_are_read_in_order_with_fallbacks() {
        let body = json!({"choices": [{"finish_reason": "tool_calls", "message": {
        "role": "assistant", "content": null, "tool_calls": [
            {"id": "call_a", "type": "function", "function": {"name": "one", "arguments": "{\"x\":1}"}},
            {"type": "function", "function": {"name": "two", "arguments": {"y": 2}}},
            {"id": "", "function": {"name": "three"}}
        ]}}]});
        let resp = ChatResponse::from_value(&body).expect("parses");
        assert_eq!(
            resp.message.tool_calls,
            vec![
                ToolCall::new("call_a", "one", "{\"x\":1}"),
                ToolCall::new("call_1", "two", "{\"y\":2}"),
                ToolCall::new("call_2", "three", ""),
            ]
        );
        assert_eq!(resp.message.content, None);
        assert_eq!(
            to_json(&resp.message.to_message())["tool_calls"][1],
            json!({"id": "call_1", "type": "function", "function": {"name": "two", "arguments": "{\"y\":2}"}})
        );
    }

    #[test]
    fn malformed_responses_are_errors() {
        assert_eq!(
            ChatResponse::from_value(&json!([])),
            Err("expected a JSON object, got an array".to_owned())
        );
        assert_eq!(
            ChatResponse::from_value(&json!({"choices": []})),
            Err("the response has no choices".to_owned())
        );
        assert_eq!(
            ChatResponse::from_value(&json!({"object": "chat.completion"})),
            Err("the response has no choices".to_owned())
        );
        assert_eq!(
            ChatResponse::from_value(&json!({"choices": [{"index": 0}]})),
            Err("the first choice has no message".to_owned())
        );
        assert_eq!(
            ChatResponse::from_value(&json!({"error": {"message": "quota"}})),
            Err("the endpoint returned an error: quota".to_owned())
        );
        assert_eq!(
            ChatResponse::from_value(
                &json!({"choices": [{"message": {"tool_calls": [{"id": "c"}]}}]})
            ),
            Err("tool call 0 has no function name".to_owned())
        );
    }

    #[test]
    fn oversized_text_and_arguments_are_refused() {
        let long = "x".repeat(MAX_ANSWER_TEXT_BYTES + 1);
        assert_eq!(
            ChatResponse::from_value(&json!({"choices": [{"message": {"content": long}}]})),
            Err(format!(
                "the answer's text is {} bytes, over the limit of 2097152",
                MAX_ANSWER_TEXT_BYTES + 1
            ))
        );
        let args = format!(
            "{{\"content\":\"{}\"}}",
            "y".repeat(MAX_TOOL_ARGUMENTS_BYTES)
        );
        let call = json!({"id": "c1", "type": "function", "function": {"name": "write_file", "arguments": args}});
        assert_eq!(
            ChatResponse::from_value(&json!({"choices": [{"message": {"tool_calls": [call]}}]})),
            Err(format!(
                "tool call 0 ('write_file') has {} bytes of arguments, over the limit of 4194304",
                args.len()
            ))
        );
        let fits = "z".repeat(MAX_ANSWER_TEXT_BYTES);
        assert!(
            ChatResponse::from_value(&json!({"choices": [{"message": {"content": fits}}]})).is_ok()
        );
    }
}

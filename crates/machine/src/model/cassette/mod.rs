//! Cassettes: the model exchanges of a run, recorded so the run replays offline.
//!
//! A [`Recorder`] wraps any [`Model`](crate::model::Model) and appends each
//! exchange (the request, the answer, its usage, how its text streamed) to a [`Cassette`],
//! saved atomically after every exchange. A [`Replayer`] answers from a cassette instead of a
//! model: each request is matched by its [digest](request_digest) to a recorded exchange not
//! yet used, so the calls of children and graders may interleave in any order; a request the
//! cassette does not hold fails with [`ModelError::Unrecorded`], naming the request and the
//! first field where it differs from the nearest recorded one.
//!
//! ```
//! use archmax_machine::model::cassette::{Cassette, Recorder, Replayer};
//! use archmax_machine::model::{AssistantMessage, ChatMessage, ChatRequest, ChatResponse, Model, ModelFuture};
//!
//! struct Hello;
//! impl Model for Hello {
//!     fn complete<'a>(&'a self, _req: &'a ChatRequest) -> ModelFuture<'a> {
//!         let message = AssistantMessage { content: Some("Hello.".into()), tool_calls: vec![] };
//!         Box::pin(async move { Ok(ChatResponse { message, ..ChatResponse::default() }) })
//!     }
//! }
//!
//! let rt = tokio::runtime::Builder::new_current_thread().build().unwrap();
//! rt.block_on(async {
//!     let req = ChatRequest::new("m", vec![ChatMessage::system("Be brief."), ChatMessage::user("hi")]);
//!     let recorder = Recorder::new(Hello);
//!     let answer = recorder.complete(&req).await.unwrap();
//!     let text = recorder.cassette().to_json().unwrap();
//!
//!     let replayer = Replayer::new(Cassette::from_json(&text, "inline").unwrap(), "inline");
//!     assert_eq!(replayer.complete(&req).await.unwrap(), answer);
//!     // Asked once more than recorded: the replay names what it cannot answer.
//!     let err = replayer.complete(&req).await.unwrap_err().to_string();
//!     assert!(err.contains("request 2"), "{err}");
//! });
//! ```

mod diff;
mod file;
mod record;
mod replay;

use std::path::{Path, PathBuf};

use crate::clock::mask_clock;
use crate::model::{ChatRequest, ChatResponse, ModelError, ModelRole};
use serde_json::{Map, Value};
use sha2::{Digest, Sha256};

pub use record::Recorder;
pub use replay::Replayer;

/// The version of the cassette format this build writes and reads.
pub const FORMAT_VERSION: u64 = 1;

/// What a cassette file names itself (`"format"`).
pub const FORMAT_NAME: &str = "archmax-cassette";

/// The file name suffix of a cassette (`<name>.cassette.json`).
pub const FILE_SUFFIX: &str = ".cassette.json";

/// A failed load or save of a cassette; every text names the file.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CassetteError {
    /// The file could not be read or written.
    #[error("cassette {path}: {message}")]
    Io {
        /// The cassette file.
        path: String,
        /// What went wrong.
        message: String,
    },
    /// The file is not a cassette this build reads (bad JSON, wrong version, a broken
    /// reference); `at` is where in the file.
    #[error("cassette {path}: {at}: {message}")]
    Format {
        /// The cassette file.
        path: String,
        /// Where: `exchanges[3].base`, `version`, ….
        at: String,
        /// What is wrong there.
        message: String,
    },
}

/// One recorded model call.
#[derive(Debug, Clone, PartialEq)]
pub struct Exchange {
    /// The request as the model saw it, in its wire JSON (`model`, `messages`, `tools`,
    /// `temperature`, `max_tokens`, `parallel_tool_calls`), with the prompt's clock masked.
    pub request: Value,
    /// Who asked: the agent or a rubric's grader.
    pub role: ModelRole,
    /// The workflow state the request was made in, when known.
    pub state: Option<String>,
    /// The session the request served, when known.
    pub session: Option<String>,
    /// The answer (with its usage); empty when the call failed.
    pub response: ChatResponse,
    /// The failure's text when the call failed (a replay fails the call with it).
    pub error: Option<String>,
    /// How the answer's text was shown as it streamed, when not as one whole piece: each
    /// piece's length in characters (`Some([])`: nothing was shown, as with streaming off).
    /// `None`: the whole text as one piece, or a call that did not stream.
    pub pieces: Option<Vec<usize>>,
}

impl Exchange {
    /// The exchange of `request` answered by `response`.
    pub fn new(request: &ChatRequest, response: ChatResponse) -> Exchange {
        Exchange {
            request: request_json(request),
            role: request.role,
            state: request.state.clone(),
            session: request.session.clone(),
            response,
            error: None,
            pieces: None,
        }
    }

    /// The exchange of `request` that failed with `error`.
    pub fn failed(request: &ChatRequest, error: &ModelError) -> Exchange {
        Exchange {
            error: Some(error.to_string()),
            ..Exchange::new(request, ChatResponse::default())
        }
    }

    /// The digest of the request ([`request_digest`]).
    pub fn digest(&self) -> String {
        digest_of(&self.request)
    }

    fn messages(&self) -> &[Value] {
        self.request
            .get("messages")
            .and_then(Value::as_array)
            .map_or(&[], Vec::as_slice)
    }
}

/// What a run's MCP servers answered, so a replay needs none of them running.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum McpRecord {
    /// A server's tool list.
    Tools {
        /// The server.
        server: String,
        /// Its tools as the harness offered them.
        tools: Vec<McpToolRecord>,
    },
    /// One tool call and its answer.
    Call {
        /// The server.
        server: String,
        /// The tool, as the server names it.
        tool: String,
        /// The arguments sent.
        arguments: Value,
        /// The answer's text.
        text: String,
        /// Whether the answer was an error.
        #[serde(
            default,
            rename = "isError",
            skip_serializing_if = "std::ops::Not::not"
        )]
        is_error: bool,
        /// Its images, `[mime type, base64 data]` each.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        images: Vec<(String, String)>,
    },
}

/// One tool of a recorded list.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpToolRecord {
    /// `mcp__<server>__<tool>`.
    pub name: String,
    /// The tool, as the server names it.
    pub tool: String,
    /// What it does.
    #[serde(default)]
    pub description: String,
    /// Its input schema.
    pub input_schema: Value,
}

/// The model exchanges of a run, in the order they completed, and what its MCP servers
/// answered.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Cassette {
    /// The default model id of the run that was recorded (a replay without `ARCHMAX_MODEL`
    /// uses it).
    pub default_model: Option<String>,
    exchanges: Vec<Exchange>,
    /// The MCP servers' tool lists and calls, in the order they came.
    pub mcp: Vec<McpRecord>,
}

impl Cassette {
    /// An empty cassette.
    pub fn new() -> Cassette {
        Cassette::default()
    }

    /// An empty cassette of a run whose default model id is `model`.
    pub fn of_model(model: &str) -> Cassette {
        Cassette {
            default_model: Some(model.to_string()),
            exchanges: Vec::new(),
            mcp: Vec::new(),
        }
    }

    /// The exchanges, in the order they completed.
    pub fn exchanges(&self) -> &[Exchange] {
        &self.exchanges
    }

    /// Appends one exchange.
    pub fn push(&mut self, exchange: Exchange) {
        self.exchanges.push(exchange);
    }

    /// Reads the cassette file at `path`: a regular file of at most
    /// [`MAX_CASSETTE_BYTES`](archmax_spec::disk::MAX_CASSETTE_BYTES), a link followed only
    /// within its folder.
    pub fn load(path: &Path) -> Result<Cassette, CassetteError> {
        let label = path.display().to_string();
        let io = |message: String| CassetteError::Io {
            path: label.clone(),
            message,
        };
        let (dir, name) = match (path.parent(), path.file_name()) {
            (Some(dir), Some(name)) => (dir, Path::new(name)),
            _ => (Path::new("."), path),
        };
        let text = match archmax_spec::disk::read_text_within(
            dir,
            name,
            archmax_spec::disk::MAX_CASSETTE_BYTES,
        ) {
            Ok(Some(text)) => text,
            Ok(None) => return Err(io("cannot be read: it does not exist".to_string())),
            Err(why) => return Err(io(format!("cannot be read: it {why}"))),
        };
        Cassette::from_json(&text, &label)
    }

    /// Reads a cassette from its file text; `label` names it in errors.
    pub fn from_json(text: &str, label: &str) -> Result<Cassette, CassetteError> {
        file::decode(text, label)
    }

    /// The file text of the cassette (pretty JSON, ending in a newline).
    pub fn to_json(&self) -> Result<String, CassetteError> {
        file::encode(self)
    }

    /// Writes the cassette to `path` atomically: a temporary file beside it, then a rename,
    /// so a reader never sees half a cassette. Missing parent directories are created.
    pub fn save(&self, path: &Path) -> Result<(), CassetteError> {
        let label = path.display().to_string();
        let io = |what: &str, e: std::io::Error| CassetteError::Io {
            path: label.clone(),
            message: format!("{what}: {e}"),
        };
        let text = self.to_json()?;
        if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
            std::fs::create_dir_all(dir).map_err(|e| io("its directory cannot be created", e))?;
        }
        let tmp = temporary_beside(path);
        std::fs::write(&tmp, text).map_err(|e| io("cannot be written", e))?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io("cannot be put in place", e)
        })
    }
}

/// `<dir>/.<name>.<pid>.tmp`, in the same directory so the rename stays on one filesystem.
fn temporary_beside(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "cassette".to_string());
    path.with_file_name(format!(".{name}.{}.tmp", std::process::id()))
}

/// The request's wire JSON as a cassette keeps it: what is sent, with what only the clock
/// changes masked: the clock line of system prompts ([`mask_clock`]) and the time in the
/// ids of the notes the harness adds to a conversation (`note_8_1796179539380` reads
/// `note_8`).
pub fn request_json(request: &ChatRequest) -> Value {
    let mut value = serde_json::to_value(request).unwrap_or(Value::Null);
    if let Some(messages) = value.get_mut("messages").and_then(Value::as_array_mut) {
        for message in messages
            .iter_mut()
            .filter(|m| m.get("role").and_then(Value::as_str) == Some("system"))
        {
            mask_content(message);
        }
        // Note ids appear as ids and inside texts (a grader is shown the transcript).
        for message in messages.iter_mut() {
            mask_strings(message, &|text| mask_note_ids(text));
        }
    }
    value
}

fn mask_content(message: &mut Value) {
    if let Some(content) = message.get_mut("content") {
        mask_strings(content, &|text| mask_clock(text));
    }
}

/// Every string inside `value` passed through `mask`.
fn mask_strings(value: &mut Value, mask: &dyn Fn(&str) -> std::borrow::Cow<'_, str>) {
    match value {
        Value::String(text) => {
            if let std::borrow::Cow::Owned(masked) = mask(text) {
                *text = masked;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| mask_strings(v, mask)),
        Value::Object(map) => map.values_mut().for_each(|v| mask_strings(v, mask)),
        _ => {}
    }
}

/// `text` with the time taken out of every note id the harness makes
/// (`note_<position>_<epoch ms>`, `crates/machine/src/turn/transcript.rs`): `note_8_1796179539380`
/// reads `note_8`.
fn mask_note_ids(text: &str) -> std::borrow::Cow<'_, str> {
    const HEAD: &str = "note_";
    if !text.contains(HEAD) {
        return std::borrow::Cow::Borrowed(text);
    }
    let digits = |s: &str| s.bytes().take_while(u8::is_ascii_digit).count();
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(HEAD) {
        let after = at + HEAD.len();
        let position = digits(&rest[after..]);
        let sep = after + position;
        let ms = if position > 0 && rest[sep..].starts_with('_') {
            digits(&rest[sep + 1..])
        } else {
            0
        };
        if ms == 0 {
            out.push_str(&rest[..after]);
            rest = &rest[after..];
            continue;
        }
        out.push_str(&rest[..sep]);
        rest = &rest[sep + 1 + ms..];
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// The stable digest of a request: `sha256:` and the hex SHA-256 of its canonical JSON
/// ([`request_json`] with object keys sorted, no whitespace). It covers the messages, the
/// tools, the model id and the options that change the answer (`temperature`,
/// `max_tokens`, `parallel_tool_calls`); not the session or the role, which are not sent.
pub fn request_digest(request: &ChatRequest) -> String {
    digest_of(&request_json(request))
}

fn digest_of(request: &Value) -> String {
    let mut text = String::new();
    canonical(request, &mut text);
    let hash = Sha256::digest(text.as_bytes());
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// JSON text with every object's keys sorted, so two equal values always read the same.
fn canonical(value: &Value, out: &mut String) {
    match value {
        Value::Object(map) => {
            let mut keys: Vec<&String> = map.keys().collect();
            keys.sort();
            out.push('{');
            for (i, key) in keys.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String((*key).clone()).to_string());
                out.push(':');
                canonical(&map[key.as_str()], out);
            }
            out.push('}');
        }
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(item, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The role's wire word (`agent`, `rubric`).
fn role_word(role: ModelRole) -> String {
    match serde_json::to_value(role) {
        Ok(Value::String(word)) => word,
        _ => "agent".to_string(),
    }
}

/// `request` without its messages and tools (the options).
fn options_of(request: &Value) -> Map<String, Value> {
    request
        .as_object()
        .map(|m| {
            m.iter()
                .filter(|(k, _)| *k != "messages" && *k != "tools")
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;

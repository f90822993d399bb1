//! The cassette file: JSON, versioned, small. See `docs/cassettes.md`.
//!
//! Each exchange's request is stored as what is new since the recorded request it continues
//! (`base`: that exchange's number, `keep`: how many of its messages come first, `first`: a
//! replacement for message 0 when the system prompt changed, `messages`: the ones added), and
//! the tool definitions once per distinct set (`toolsets`), so a conversation's system prompt,
//! tools and earlier messages are written once however many calls repeat them.

use crate::model::{AssistantMessage, ChatResponse, ModelRole, ToolCall, Usage};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::{Cassette, CassetteError, Exchange, FORMAT_NAME, FORMAT_VERSION, canonical};

/// How many earlier exchanges are looked at for the one a request continues.
const BASE_WINDOW: usize = 256;

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct File {
    format: String,
    version: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    default_model: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tools: Vec<Value>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    toolsets: Vec<Vec<usize>>,
    exchanges: Vec<FileExchange>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    mcp: Vec<super::McpRecord>,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields, rename_all = "camelCase")]
struct FileExchange {
    n: usize,
    digest: String,
    role: ModelRole,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    state: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    session: Option<String>,
    request: FileRequest,
    #[serde(default, skip_serializing_if = "FileAnswer::is_empty")]
    answer: FileAnswer,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    usage: Option<Usage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    finish_reason: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pieces: Option<Vec<usize>>,
}

/// A request: its options (`model`, `temperature`, …) as sent, and its messages and tools
/// by reference where they repeat.
#[derive(Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
struct FileRequest {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    base: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    keep: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    first: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    first_edit: Option<TextEdit>,
    /// The base exchange's answer follows its messages (as the conversation's next message).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    answered: bool,
    messages: Vec<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    tools: Option<usize>,
    #[serde(flatten)]
    options: Map<String, Value>,
}

/// A text as an edit of another: its first `keep` characters, then `insert`, then its
/// last `tail` characters.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TextEdit {
    keep: usize,
    insert: String,
    tail: usize,
}

impl TextEdit {
    /// `to` as an edit of `from`.
    fn between(from: &str, to: &str) -> TextEdit {
        let a: Vec<char> = from.chars().collect();
        let b: Vec<char> = to.chars().collect();
        let keep = a.iter().zip(&b).take_while(|(x, y)| x == y).count();
        let room = a.len().min(b.len()) - keep;
        let tail = a
            .iter()
            .rev()
            .zip(b.iter().rev())
            .take(room)
            .take_while(|(x, y)| x == y)
            .count();
        TextEdit {
            keep,
            insert: b[keep..b.len() - tail].iter().collect(),
            tail,
        }
    }

    /// The edited text of `from`; `None` when `from` is shorter than the edit keeps.
    fn apply(&self, from: &str) -> Option<String> {
        let a: Vec<char> = from.chars().collect();
        if self.keep + self.tail > a.len() {
            return None;
        }
        let mut out: String = a[..self.keep].iter().collect();
        out.push_str(&self.insert);
        out.extend(&a[a.len() - self.tail..]);
        Some(out)
    }
}

/// The content text of a message whose content is one string.
fn content_text(message: &Value) -> Option<&str> {
    message.get("content").and_then(Value::as_str)
}

/// `to` as an edit of `from` when the two differ only in their content texts.
fn message_edit(from: &Value, to: &Value) -> Option<TextEdit> {
    let (a, b) = (content_text(from)?, content_text(to)?);
    let without = |m: &Value| {
        let mut m = m.clone();
        m.as_object_mut().map(|o| o.remove("content"));
        m
    };
    (without(from) == without(to)).then(|| TextEdit::between(a, b))
}

#[derive(Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileAnswer {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    content: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tool_calls: Vec<ToolCall>,
}

impl FileAnswer {
    fn is_empty(&self) -> bool {
        self.content.is_none() && self.tool_calls.is_empty()
    }
}

/// The cassette as file text.
pub(super) fn encode(cassette: &Cassette) -> Result<String, CassetteError> {
    let texts: Vec<Vec<String>> = cassette
        .exchanges
        .iter()
        .map(|e| e.messages().iter().map(canonical_text).collect())
        .collect();
    let mut tools_table: Vec<Value> = Vec::new();
    let mut tool_texts: Vec<String> = Vec::new();
    let mut toolsets: Vec<Vec<usize>> = Vec::new();
    let mut exchanges = Vec::with_capacity(cassette.exchanges.len());
    for (i, exchange) in cassette.exchanges.iter().enumerate() {
        let tools = match exchange.request.get("tools").and_then(Value::as_array) {
            Some(defs) => {
                let set: Vec<usize> = defs
                    .iter()
                    .map(|def| {
                        let text = canonical_text(def);
                        tool_texts
                            .iter()
                            .position(|t| *t == text)
                            .unwrap_or_else(|| {
                                tool_texts.push(text);
                                tools_table.push(def.clone());
                                tools_table.len() - 1
                            })
                    })
                    .collect();
                let at = toolsets.iter().position(|s| *s == set).unwrap_or_else(|| {
                    toolsets.push(set);
                    toolsets.len() - 1
                });
                Some(at)
            }
            None => None,
        };
        let messages = exchange.messages();
        let mut request = FileRequest {
            base: None,
            keep: None,
            first: None,
            first_edit: None,
            answered: false,
            messages: messages.to_vec(),
            tools,
            options: super::options_of(&exchange.request),
        };
        if let Some(base) = best_base(&texts, i) {
            let (keep, first_same) = continuation(&texts[base.0], &texts[i]);
            request.base = Some(base.0 + 1);
            request.keep = Some(keep);
            let before = &cassette.exchanges[base.0];
            if !first_same {
                match message_edit(&before.messages()[0], &messages[0]) {
                    Some(edit) => request.first_edit = Some(edit),
                    None => request.first = Some(messages[0].clone()),
                }
            }
            request.messages = messages[keep..].to_vec();
            if keep == texts[base.0].len()
                && request
                    .messages
                    .first()
                    .is_some_and(|m| canonical_text(m) == canonical_text(&answer_message(before)))
            {
                request.answered = true;
                request.messages.remove(0);
            }
        }
        let response = &exchange.response;
        exchanges.push(FileExchange {
            n: i + 1,
            digest: exchange.digest(),
            role: exchange.role,
            state: exchange.state.clone(),
            session: exchange.session.clone(),
            request,
            answer: FileAnswer {
                content: response.message.content.clone(),
                tool_calls: response.message.tool_calls.clone(),
            },
            error: exchange.error.clone(),
            usage: response.usage,
            model: response.model.clone(),
            finish_reason: response.finish_reason.clone(),
            pieces: exchange.pieces.clone(),
        });
    }
    let file = File {
        format: FORMAT_NAME.to_string(),
        version: FORMAT_VERSION,
        default_model: cassette.default_model.clone(),
        tools: tools_table,
        toolsets,
        exchanges,
        mcp: cassette.mcp.clone(),
    };
    serde_json::to_string_pretty(&file)
        .map(|mut text| {
            text.push('\n');
            text
        })
        .map_err(|e| CassetteError::Format {
            path: String::new(),
            at: "(encoding)".to_string(),
            message: e.to_string(),
        })
}

/// An exchange's answer as the conversation's next message, in its wire JSON.
fn answer_message(exchange: &Exchange) -> Value {
    serde_json::to_value(exchange.response.message.to_message()).unwrap_or(Value::Null)
}

fn canonical_text(value: &Value) -> String {
    let mut text = String::new();
    canonical(value, &mut text);
    text
}

/// How `next` continues `base`: how many of `base`'s messages it starts with (message 0
/// counted as kept even when it was replaced), and whether message 0 is the same.
fn continuation(base: &[String], next: &[String]) -> (usize, bool) {
    if base.is_empty() || next.is_empty() {
        return (0, false);
    }
    let first_same = base[0] == next[0];
    let mut keep = 1;
    while keep < base.len() && keep < next.len() && base[keep] == next[keep] {
        keep += 1;
    }
    (keep, first_same)
}

/// The earlier exchange whose messages let exchange `i` store the fewest bytes, if any
/// saves some; the nearest one on a tie.
fn best_base(texts: &[Vec<String>], i: usize) -> Option<(usize, usize)> {
    let next = &texts[i];
    let whole: usize = next.iter().map(String::len).sum();
    let mut best: Option<(usize, usize)> = None;
    for j in (i.saturating_sub(BASE_WINDOW)..i).rev() {
        let (keep, first_same) = continuation(&texts[j], next);
        if keep == 0 || (keep == 1 && !first_same) {
            continue;
        }
        let first = if first_same { 0 } else { next[0].len() };
        let cost = first + next[keep..].iter().map(String::len).sum::<usize>();
        if cost < whole && best.is_none_or(|(_, c)| cost < c) {
            best = Some((j, cost));
        }
    }
    best
}

/// Reads file text (`label` names the file in errors).
pub(super) fn decode(text: &str, label: &str) -> Result<Cassette, CassetteError> {
    let bad = |at: String, message: String| CassetteError::Format {
        path: label.to_string(),
        at,
        message,
    };
    let head: Value = serde_json::from_str(text).map_err(|e| {
        bad(
            format!("line {} column {}", e.line(), e.column()),
            format!("not JSON: {e}"),
        )
    })?;
    match head.get("format").and_then(Value::as_str) {
        Some(FORMAT_NAME) => {}
        _ => {
            return Err(bad(
                "format".to_string(),
                format!("not a cassette (expected \"format\": \"{FORMAT_NAME}\")"),
            ));
        }
    }
    match head.get("version").and_then(Value::as_u64) {
        Some(FORMAT_VERSION) => {}
        Some(v) => {
            return Err(bad(
                "version".to_string(),
                format!(
                    "the cassette is version {v}; this build reads version {FORMAT_VERSION} (record it again)"
                ),
            ));
        }
        None => {
            return Err(bad(
                "version".to_string(),
                "missing or not a whole number".to_string(),
            ));
        }
    }
    let file: File =
        serde_json::from_value(head).map_err(|e| bad("(file)".to_string(), e.to_string()))?;
    let mut cassette = Cassette {
        default_model: file.default_model,
        exchanges: Vec::with_capacity(file.exchanges.len()),
        mcp: file.mcp,
    };
    for (i, stored) in file.exchanges.into_iter().enumerate() {
        let at = |field: &str| format!("exchanges[{i}]{field}");
        if stored.n != i + 1 {
            return Err(bad(
                at(".n"),
                format!(
                    "is {}; exchanges are numbered 1, 2, … in order (expected {})",
                    stored.n,
                    i + 1
                ),
            ));
        }
        let req = stored.request;
        let (continues_answer, base_of) = (req.answered, req.base);
        let mut messages = match req.base {
            None => {
                if req.keep.is_some()
                    || req.first.is_some()
                    || req.first_edit.is_some()
                    || req.answered
                {
                    return Err(bad(
                        at(".request"),
                        "'keep', 'first', 'firstEdit' and 'answered' need a 'base'".to_string(),
                    ));
                }
                Vec::new()
            }
            Some(base) => {
                if base == 0 || base > i {
                    return Err(bad(
                        at(".request.base"),
                        format!("names exchange {base}, which is not an earlier one"),
                    ));
                }
                let before = &cassette.exchanges[base - 1];
                let from = before.messages();
                let keep = req.keep.unwrap_or(from.len());
                if keep == 0 || keep > from.len() {
                    return Err(bad(
                        at(".request.keep"),
                        format!("is {keep}; exchange {base} has {} messages", from.len()),
                    ));
                }
                let mut messages = from[..keep].to_vec();
                if let Some(first) = req.first {
                    messages[0] = first;
                }
                if let Some(edit) = req.first_edit {
                    let text = content_text(&messages[0])
                        .and_then(|from| edit.apply(from))
                        .ok_or_else(|| {
                            bad(
                                at(".request.firstEdit"),
                                format!("does not fit message 0 of exchange {base} (its content is not a text that long)"),
                            )
                        })?;
                    messages[0]["content"] = Value::String(text);
                }
                if req.answered {
                    if keep != from.len() {
                        return Err(bad(
                            at(".request.answered"),
                            format!(
                                "needs all of exchange {base}'s {} messages kept",
                                from.len()
                            ),
                        ));
                    }
                    messages.push(answer_message(before));
                }
                messages
            }
        };
        messages.extend(req.messages);
        let mut request = Map::new();
        let mut options = req.options;
        if let Some(model) = options.remove("model") {
            request.insert("model".to_string(), model);
        }
        request.insert("messages".to_string(), Value::Array(messages));
        if let Some(set) = req.tools {
            let ids = file.toolsets.get(set).ok_or_else(|| {
                bad(
                    at(".request.tools"),
                    format!("names tool set {set}; the file has {}", file.toolsets.len()),
                )
            })?;
            let mut defs = Vec::with_capacity(ids.len());
            for id in ids {
                defs.push(file.tools.get(*id).cloned().ok_or_else(|| {
                    bad(
                        format!("toolsets[{set}]"),
                        format!("names tool {id}; the file has {}", file.tools.len()),
                    )
                })?);
            }
            request.insert("tools".to_string(), Value::Array(defs));
        }
        request.extend(options);
        let exchange = Exchange {
            request: Value::Object(request),
            role: stored.role,
            state: stored.state,
            session: stored.session,
            response: ChatResponse {
                message: AssistantMessage {
                    content: stored.answer.content,
                    tool_calls: stored.answer.tool_calls,
                },
                usage: stored.usage,
                model: stored.model,
                finish_reason: stored.finish_reason,
            },
            error: stored.error,
            pieces: stored.pieces,
        };
        let digest = exchange.digest();
        if digest != stored.digest {
            let answered = if continues_answer {
                format!(
                    " (it continues exchange {}'s answer, so an edited answer changes the requests after it)",
                    base_of.unwrap_or_default()
                )
            } else {
                String::new()
            };
            return Err(bad(
                at(".digest"),
                format!(
                    "does not match the request it records (the request reads {digest}){answered}; a recorded request is not edited by hand: record the run again"
                ),
            ));
        }
        cassette.exchanges.push(exchange);
    }
    Ok(cassette)
}

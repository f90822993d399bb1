//! Streamed answers: the `chat.completion.chunk`s of a `stream: true` request folded into
//! the same [`ChatResponse`] a whole answer gives, and the sink a streaming model reports
//! its text to as it arrives.
//!
//! ```
//! use archmax_machine::model::stream::Chunks;
//! use serde_json::json;
//!
//! let mut chunks = Chunks::default();
//! assert_eq!(chunks.push(&json!({"choices": [{"index": 0, "delta": {"content": "Hel"}}]})).unwrap(), Some("Hel".to_string()));
//! chunks.push(&json!({"choices": [{"index": 0, "delta": {"content": "lo"}, "finish_reason": "stop"}]})).unwrap();
//! chunks.push(&json!({"choices": [], "usage": {"prompt_tokens": 3, "completion_tokens": 1}})).unwrap();
//! let response = chunks.finish().unwrap();
//! assert_eq!(response.message.content.as_deref(), Some("Hello"));
//! assert_eq!(response.usage.map(|u| u.input_tokens), Some(3));
//! ```

use serde_json::{Map, Value, json};

use super::types::{ChatResponse, MAX_ANSWER_TEXT_BYTES, MAX_TOOL_ARGUMENTS_BYTES, error_message};

/// Where a streaming model reports the text of its answer, piece by piece, in order.
/// Called synchronously from inside the model call.
pub trait TextSink: Send + Sync {
    /// One piece of text (never empty).
    fn text(&self, delta: &str);

    /// The call waited `waited` for a slot of its endpoint, which takes `limit` calls at once
    /// ([`limit`](super::limit)), before it was sent (each attempt that waited says so).
    fn queued(&self, _waited: std::time::Duration, _limit: u32) {}

    /// The call failed at `from` with `reason` and goes to the next model, `to`
    /// ([`fallback`](super::fallback)).
    fn fell_back(&self, _from: &str, _to: &str, _reason: &str) {}
}

/// A sink that drops the text: the call is not shown as it streams.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoText;

impl TextSink for NoText {
    fn text(&self, _delta: &str) {}
}

/// One tool call being assembled from its pieces.
#[derive(Debug, Default)]
struct PartialCall {
    id: String,
    name: String,
    arguments: String,
}

/// The chunks of one streamed answer (the first choice), folded as they arrive.
///
/// Text is appended in order; tool calls are keyed by their `index` (a chunk without one
/// continues the last call), their `id` and `name` taken from the first piece that has
/// them and their `arguments` concatenated; `usage` and `model` are the last ones sent (the
/// usage usually comes in a final chunk with no choices); `finish_reason` the last one.
#[derive(Debug, Default)]
pub struct Chunks {
    text: String,
    calls: Vec<(u64, PartialCall)>,
    usage: Option<Value>,
    model: Option<String>,
    finish_reason: Option<String>,
    seen: bool,
}

impl Chunks {
    /// Folds one chunk; the text it adds (`None` for a chunk without text, such as an empty
    /// delta, a role-only delta, a tool-call piece or the usage chunk).
    ///
    /// Errors (as text): the chunk is not an object, carries an `error` object, or grows the
    /// answer past the limits a whole answer has.
    pub fn push(&mut self, chunk: &Value) -> Result<Option<String>, String> {
        let obj = chunk
            .as_object()
            .ok_or_else(|| format!("a stream chunk is not a JSON object: {chunk}"))?;
        if let Some(message) = error_message(obj) {
            return Err(format!(
                "the endpoint sent an error in the stream: {message}"
            ));
        }
        self.seen = true;
        if let Some(usage) = obj.get("usage").filter(|u| u.is_object()) {
            self.usage = Some(usage.clone());
        }
        if let Some(model) = obj
            .get("model")
            .and_then(Value::as_str)
            .filter(|m| !m.is_empty())
        {
            self.model = Some(model.to_owned());
        }
        let Some(choice) = obj
            .get("choices")
            .and_then(Value::as_array)
            .and_then(|choices| choices.first())
        else {
            return Ok(None);
        };
        if let Some(reason) = choice.get("finish_reason").and_then(Value::as_str) {
            self.finish_reason = Some(reason.to_owned());
        }
        // A server that ignores `stream` inside an SSE body sends whole messages.
        let Some(delta) = choice
            .get("delta")
            .or_else(|| choice.get("message"))
            .and_then(Value::as_object)
        else {
            return Ok(None);
        };
        if let Some(calls) = delta.get("tool_calls").and_then(Value::as_array) {
            for piece in calls {
                self.call_piece(piece)?;
            }
        }
        let text = delta.get("content").map(text_of).unwrap_or_default();
        if text.is_empty() {
            return Ok(None);
        }
        if self.text.len() + text.len() > MAX_ANSWER_TEXT_BYTES {
            return Err(format!(
                "the answer's text grew past the limit of {MAX_ANSWER_TEXT_BYTES} bytes"
            ));
        }
        self.text.push_str(&text);
        Ok(Some(text))
    }

    fn call_piece(&mut self, piece: &Value) -> Result<(), String> {
        let index = match piece.get("index").and_then(Value::as_u64) {
            Some(index) => index,
            None => self.calls.last().map_or(0, |(i, _)| *i),
        };
        let slot = match self.calls.iter().position(|(i, _)| *i == index) {
            Some(at) => &mut self.calls[at].1,
            None => {
                self.calls.push((index, PartialCall::default()));
                let last = self.calls.len() - 1;
                &mut self.calls[last].1
            }
        };
        if let Some(id) = piece.get("id").and_then(Value::as_str)
            && slot.id.is_empty()
        {
            slot.id = id.to_owned();
        }
        let function = piece.get("function");
        if let Some(name) = function.and_then(|f| f.get("name")).and_then(Value::as_str)
            && slot.name.is_empty()
        {
            slot.name = name.to_owned();
        }
        match function.and_then(|f| f.get("arguments")) {
            Some(Value::String(part)) => slot.arguments.push_str(part),
            Some(Value::Null) | None => {}
            Some(other) => slot.arguments.push_str(&other.to_string()),
        }
        if slot.arguments.len() > MAX_TOOL_ARGUMENTS_BYTES {
            return Err(format!(
                "tool call {index} grew past the limit of {MAX_TOOL_ARGUMENTS_BYTES} bytes of arguments"
            ));
        }
        Ok(())
    }

    /// Whether a finish reason arrived: the answer is whole even if `[DONE]` never comes.
    pub fn finished(&self) -> bool {
        self.finish_reason.is_some()
    }

    /// Whether any chunk arrived.
    pub fn any(&self) -> bool {
        self.seen
    }

    /// The text so far.
    pub fn text(&self) -> &str {
        &self.text
    }

    /// The whole answer, read as a `chat.completion` body would be (the same rules for ids,
    /// arguments and limits: [`ChatResponse::from_value`]).
    pub fn finish(self) -> Result<ChatResponse, String> {
        let mut message = Map::new();
        message.insert("role".into(), json!("assistant"));
        message.insert(
            "content".into(),
            if self.text.is_empty() {
                Value::Null
            } else {
                Value::String(self.text)
            },
        );
        if !self.calls.is_empty() {
            let mut calls = self.calls;
            calls.sort_by_key(|(index, _)| *index);
            let calls: Vec<Value> = calls
                .into_iter()
                .map(|(_, c)| {
                    let mut call = json!({ "type": "function", "function": { "name": c.name, "arguments": c.arguments } });
                    if !c.id.is_empty() {
                        call["id"] = Value::String(c.id);
                    }
                    call
                })
                .collect();
            message.insert("tool_calls".into(), Value::Array(calls));
        }
        let mut body = json!({ "choices": [{ "index": 0, "message": message, "finish_reason": self.finish_reason }] });
        if let Some(usage) = self.usage {
            body["usage"] = usage;
        }
        if let Some(model) = self.model {
            body["model"] = Value::String(model);
        }
        ChatResponse::from_value(&body)
    }
}

/// The text of a delta's `content`: a string, or the text parts of an array.
fn text_of(content: &Value) -> String {
    match content {
        Value::String(text) => text.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| match p {
                Value::String(t) => Some(t.as_str()),
                Value::Object(o) => o.get("text").and_then(Value::as_str),
                _ => None,
            })
            .collect(),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn chunk(delta: Value) -> Value {
        json!({ "object": "chat.completion.chunk", "choices": [{ "index": 0, "delta": delta }] })
    }

    #[test]
    fn text_pieces_come_back_in_order_and_empty_deltas_add_nothing() {
        let mut c = Chunks::default();
        assert_eq!(
            c.push(&chunk(json!({"role": "assistant", "content": ""}))),
            Ok(None)
        );
        assert_eq!(
            c.push(&chunk(json!({"content": "Hel"}))),
            Ok(Some("Hel".into()))
        );
        assert_eq!(c.push(&chunk(json!({}))), Ok(None));
        assert_eq!(c.push(&chunk(json!({"content": null}))), Ok(None));
        assert_eq!(
            c.push(&chunk(json!({"content": "lo"}))),
            Ok(Some("lo".into()))
        );
        assert!(!c.finished());
        let r = c.finish().expect("whole");
        assert_eq!(r.message.content.as_deref(), Some("Hello"));
        assert!(r.message.tool_calls.is_empty());
    }

    #[test]
    fn tool_calls_split_across_chunks_are_joined_by_index() {
        let mut c = Chunks::default();
        c.push(&chunk(json!({"tool_calls": [{"index": 0, "id": "a", "type": "function", "function": {"name": "read_file", "arguments": ""}}]}))).expect("ok");
        c.push(&chunk(json!({"tool_calls": [{"index": 1, "id": "b", "function": {"name": "ls", "arguments": "{\"pa"}}]}))).expect("ok");
        c.push(&chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "{\"file_path\":"}}]}),
        ))
        .expect("ok");
        c.push(&chunk(
            json!({"tool_calls": [{"index": 0, "function": {"arguments": "\"x\"}"}}]}),
        ))
        .expect("ok");
        c.push(&chunk(
            json!({"tool_calls": [{"index": 1, "function": {"arguments": "th\":\".\"}"}}]}),
        ))
        .expect("ok");
        c.push(&json!({"choices": [{"index": 0, "delta": {}, "finish_reason": "tool_calls"}]}))
            .expect("ok");
        c.push(&json!({"choices": [], "usage": {"prompt_tokens": 7, "completion_tokens": 4}, "model": "m-1"})).expect("ok");
        assert!(c.finished());
        let r = c.finish().expect("whole");
        let calls: Vec<_> = r
            .message
            .tool_calls
            .iter()
            .map(|t| (t.id.as_str(), t.name.as_str(), t.arguments.as_str()))
            .collect();
        assert_eq!(
            calls,
            vec![
                ("a", "read_file", "{\"file_path\":\"x\"}"),
                ("b", "ls", "{\"path\":\".\"}")
            ]
        );
        assert_eq!(r.message.content, None);
        assert_eq!(r.finish_reason.as_deref(), Some("tool_calls"));
        assert_eq!(
            r.usage.map(|u| (u.input_tokens, u.output_tokens)),
            Some((7, 4))
        );
        assert_eq!(r.model.as_deref(), Some("m-1"));
    }

    #[test]
    fn a_call_without_an_id_or_index_gets_the_same_rules_as_a_whole_answer() {
        let mut c = Chunks::default();
        c.push(&chunk(
            json!({"tool_calls": [{"function": {"name": "ls", "arguments": "{}"}}]}),
        ))
        .expect("ok");
        let r = c.finish().expect("whole");
        assert_eq!(r.message.tool_calls[0].id, "call_0");
        let mut nameless = Chunks::default();
        nameless
            .push(&chunk(
                json!({"tool_calls": [{"index": 0, "function": {"arguments": "{}"}}]}),
            ))
            .expect("ok");
        assert_eq!(
            nameless.finish().err().as_deref(),
            Some("tool call 0 has no function name")
        );
    }

    #[test]
    fn an_error_chunk_fails_and_a_whole_message_inside_the_stream_is_read() {
        let mut c = Chunks::default();
        assert_eq!(
            c.push(&json!({"error": {"message": "overloaded"}})),
            Err("the endpoint sent an error in the stream: overloaded".into())
        );
        let mut whole = Chunks::default();
        let text = whole.push(&json!({"choices": [{"index": 0, "message": {"role": "assistant", "content": "all at once"}, "finish_reason": "stop"}]}));
        assert_eq!(text, Ok(Some("all at once".into())));
        assert!(whole.finished());
        assert!(c.push(&json!([1])).is_err());
    }
}

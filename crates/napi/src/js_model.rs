//! The model as a JS function (`createAgent({ model })`): its requests cross as deltas, its
//! answers are read as an assistant message or a `chat.completion`, whole or streamed
//! (`crate::model_stream`).

use std::sync::{Arc, Mutex, MutexGuard};

use archmax_machine::model::delta::{Channels, StreamTag};
use archmax_machine::model::{
    ChatRequest, ChatResponse, Model, ModelError, ModelFuture, NoText, TextSink, show_whole,
};
use serde_json::Value;

use crate::callback::{AsyncJsFn, Slot, Spin, call_js_envelope, open_envelope, take};
use crate::result::kind;

/// What the URL of a JS model reads as in error texts.
const JS_MODEL_URL: &str = "js:model";

/// Reads what a JS model function answered: an assistant message
/// `{ role: "assistant", content, tool_calls? }` or a whole `chat.completion`.
fn read_model_answer(value: &Value) -> std::result::Result<ChatResponse, String> {
    let Some(obj) = value.as_object() else {
        return Err(format!(
            "the model function returned {}; expected an assistant message {{ role: 'assistant', content, tool_calls? }} or a chat.completion {{ choices: [{{ message }}] }}",
            kind(value)
        ));
    };
    if obj.contains_key("choices") || obj.contains_key("error") {
        return ChatResponse::from_value(value);
    }
    if !obj.contains_key("content") && !obj.contains_key("tool_calls") {
        return Err(
            "the model function returned an object with neither 'content' nor 'tool_calls' nor 'choices'; expected an assistant message { role: 'assistant', content, tool_calls? }".to_string(),
        );
    }
    if let Some(role) = obj.get("role").and_then(Value::as_str)
        && role != "assistant"
    {
        return Err(format!(
            "the model function returned a message with role '{role}'; expected role 'assistant'"
        ));
    }
    if let Some(calls) = obj.get("tool_calls")
        && !calls.is_null()
        && !calls.is_array()
    {
        return Err(format!(
            "the model function returned 'tool_calls' as {}; expected an array",
            kind(calls)
        ));
    }
    if let Some(content) = obj.get("content")
        && !(content.is_null() || content.is_string() || content.is_array())
    {
        return Err(format!(
            "the model function returned 'content' as {}; expected a string or null",
            kind(content)
        ));
    }
    ChatResponse::from_message(obj)
}

/// The model: a JS function. Requests cross as deltas over channels the JS side
/// keeps (`archmax_machine::model::delta`), so a call costs the new messages, not the
/// whole transcript; `agent.js` rebuilds the whole request for the function.
pub(crate) struct JsModel {
    f: Slot<AsyncJsFn>,
    channels: Mutex<Channels>,
    spin: Spin,
    /// `createAgent({ streaming })` (default on): a streamed answer's text is shown live.
    streaming: bool,
}

/// What a JS model answered: a whole answer, or (the `{ archmaxStreamed: true }` marker)
/// the pieces it streamed.
enum JsAnswer {
    /// The answer, and whether some of its text was streamed (a LangChain `.stream()`).
    Whole(Value, bool),
    Streamed(archmax_machine::model::Chunks),
}

impl JsModel {
    /// The model `f` answers for; `streaming`: a streamed answer's text is shown live.
    pub(crate) fn new(f: Slot<AsyncJsFn>, streaming: bool) -> JsModel {
        JsModel {
            f,
            channels: Mutex::new(Channels::new()),
            spin: Spin::new(),
            streaming,
        }
    }

    /// Its request channels, `None` once a panic poisoned them.
    pub(crate) fn channels(&self) -> Option<MutexGuard<'_, Channels>> {
        self.channels.lock().ok()
    }

    /// One call: the delta for `req` on a channel, with a stream for the answer's pieces,
    /// the envelope answered, the channel released (forgotten unless the call succeeded).
    /// `Ok(None)`: the JS side refused the delta.
    async fn call(
        &self,
        f: Arc<AsyncJsFn>,
        req: &ChatRequest,
        text: &dyn TextSink,
        show: bool,
    ) -> std::result::Result<Option<JsAnswer>, String> {
        let stream = crate::model_stream::Stream::open();
        let (ch, input) = {
            let mut channels = self
                .channels
                .lock()
                .map_err(|_| "the channel table is poisoned".to_string())?;
            let mut delta = channels.begin(req).map_err(|e| e.to_string())?;
            delta.stream = Some(StreamTag {
                id: stream.id,
                show,
            });
            let ch = delta.ch;
            let input = serde_json::to_string(&delta);
            if input.is_err() {
                channels.end(ch, false);
            }
            (ch, input.map_err(|e| e.to_string())?)
        };
        let answer = call_js_envelope(f, input, "model", "model function", Some(&self.spin));
        let (answer, chunks) = stream.follow(answer, text).await;
        let ok = matches!(&answer, Ok(v) if v.get("ok").and_then(Value::as_bool) == Some(true));
        if let Ok(mut channels) = self.channels.lock() {
            channels.end(ch, ok);
        }
        let envelope = answer?;
        if envelope.get("resync").and_then(Value::as_bool) == Some(true) {
            return Ok(None);
        }
        let value = open_envelope(envelope)?;
        if value.get("archmaxStreamed").and_then(Value::as_bool) == Some(true) {
            return chunks.map(|c| Some(JsAnswer::Streamed(c)));
        }
        let shown = chunks.is_ok_and(|c| !c.text().is_empty());
        Ok(Some(JsAnswer::Whole(value, shown)))
    }

    async fn answer(
        &self,
        req: &ChatRequest,
        text: &dyn TextSink,
        show: bool,
    ) -> std::result::Result<ChatResponse, ModelError> {
        let f = take(&self.f);
        let model = req.model.clone();
        let transport = |message: String| ModelError::Transport {
            url: JS_MODEL_URL.to_string(),
            model: model.clone(),
            message,
        };
        let Some(f) = f else {
            return Err(transport("the agent was disposed".to_string()));
        };
        // A refused delta is retried once, on another channel.
        let answer = match self
            .call(Arc::clone(&f), req, text, show)
            .await
            .map_err(transport)?
        {
            Some(answer) => answer,
            None => self
                .call(f, req, text, show)
                .await
                .map_err(transport)?
                .ok_or_else(|| {
                    transport("the model adapter refused the request twice".to_string())
                })?,
        };
        let decode = |message: String| ModelError::Decode {
            url: JS_MODEL_URL.to_string(),
            model: model.clone(),
            message,
        };
        match answer {
            JsAnswer::Whole(value, shown) => {
                let response = read_model_answer(&value).map_err(decode)?;
                // A whole answer (or a stream that showed no text) is one piece.
                if show && !shown {
                    show_whole(&response, text);
                }
                Ok(response)
            }
            JsAnswer::Streamed(chunks) => chunks.finish().map_err(decode),
        }
    }
}

impl Model for JsModel {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        Box::pin(self.answer(req, &NoText, false))
    }

    fn stream<'a>(&'a self, req: &'a ChatRequest, text: &'a dyn TextSink) -> ModelFuture<'a> {
        if self.streaming {
            Box::pin(self.answer(req, text, true))
        } else {
            self.complete(req)
        }
    }
}

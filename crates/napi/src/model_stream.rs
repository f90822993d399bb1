//! A JS model's answer as it streams: `agent.js` sends each piece of a model function's
//! async iterable (or `ReadableStream`), or each text chunk of a LangChain model's
//! `.stream()`, to [`model_text`]/[`model_chunk`] with the stream id its request carried
//! (`Delta::stream`); the call's future folds them ([`Chunks`]) and shows their text as it
//! goes, before the call's answer arrives.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{LazyLock, Mutex, PoisonError};

use archmax_machine::model::{Chunks, TextSink};
use napi_derive::napi;
use serde_json::{Value, json};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// One piece: text, or a chunk object (JSON text).
enum Piece {
    Text(String),
    Chunk(String),
}

static STREAMS: LazyLock<Mutex<HashMap<u32, UnboundedSender<Piece>>>> =
    LazyLock::new(Mutex::default);
static NEXT: AtomicU32 = AtomicU32::new(1);

fn send(stream: u32, piece: Piece) -> bool {
    let streams = STREAMS.lock().unwrap_or_else(PoisonError::into_inner);
    streams
        .get(&stream)
        .is_some_and(|tx| tx.send(piece).is_ok())
}

/// A piece of a streaming JS model's text; false when the call no longer listens.
#[napi(catch_unwind)]
pub fn model_text(stream: u32, text: String) -> bool {
    text.is_empty() || send(stream, Piece::Text(text))
}

/// A chunk of a streaming JS model's answer (JSON text): an OpenAI `chat.completion.chunk`,
/// or one delta `{ content?, tool_calls? }` (tool-call pieces keyed by `index`), optionally
/// with `usage`; false when the call no longer listens.
#[napi(catch_unwind)]
pub fn model_chunk(stream: u32, chunk: String) -> bool {
    send(stream, Piece::Chunk(chunk))
}

/// A registered stream; unregistered on drop.
pub(crate) struct Stream {
    pub(crate) id: u32,
    rx: UnboundedReceiver<Piece>,
}

impl Stream {
    pub(crate) fn open() -> Stream {
        let id = NEXT.fetch_add(1, Ordering::Relaxed);
        let (tx, rx) = unbounded_channel();
        STREAMS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .insert(id, tx);
        Stream { id, rx }
    }

    /// Awaits `answer`, folding every piece that arrives meanwhile (and those queued when
    /// it settles) and showing their text on `sink`. The pieces, or the first bad one's error.
    pub(crate) async fn follow<T>(
        mut self,
        answer: impl Future<Output = T>,
        sink: &dyn TextSink,
    ) -> (T, Result<Chunks, String>) {
        let mut chunks = Ok(Chunks::default());
        let mut answer = std::pin::pin!(answer);
        let out = loop {
            tokio::select! {
                biased;
                piece = self.rx.recv() => match piece {
                    Some(piece) => fold(&mut chunks, piece, sink),
                    None => break answer.await,
                },
                out = &mut answer => break out,
            }
        };
        while let Ok(piece) = self.rx.try_recv() {
            fold(&mut chunks, piece, sink);
        }
        (out, chunks)
    }
}

impl Drop for Stream {
    fn drop(&mut self) {
        STREAMS
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(&self.id);
    }
}

fn fold(chunks: &mut Result<Chunks, String>, piece: Piece, sink: &dyn TextSink) {
    let Ok(folded) = chunks else { return };
    let chunk = match piece {
        Piece::Text(text) => json!({ "choices": [{ "index": 0, "delta": { "content": text } }] }),
        Piece::Chunk(text) => match serde_json::from_str::<Value>(&text) {
            Ok(v) => as_chunk(v),
            Err(e) => {
                *chunks = Err(format!(
                    "the model's stream sent a chunk that is not JSON: {e}"
                ));
                return;
            }
        },
    };
    match folded.push(&chunk) {
        Ok(Some(text)) => sink.text(&text),
        Ok(None) => {}
        Err(e) => *chunks = Err(format!("the model's stream sent a bad chunk: {e}")),
    }
}

/// A `chat.completion.chunk` as is; a bare delta `{ content?, tool_calls?, usage? }` wrapped.
fn as_chunk(value: Value) -> Value {
    if value.get("choices").is_some() || value.get("error").is_some() {
        return value;
    }
    let mut delta = value;
    let usage = delta.as_object_mut().and_then(|o| o.remove("usage"));
    let mut chunk = json!({ "choices": [{ "index": 0, "delta": delta }] });
    if let Some(usage) = usage {
        chunk["usage"] = usage;
    }
    chunk
}

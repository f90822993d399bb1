//! The conversation's one home: the session's messages as they are stored (wire-form chat
//! messages plus our own markers), with the wire view the model is sent kept in step and
//! derived only here, and the messages a commit has not written yet.
//!
//! State it changes: only itself. Every message of a turn enters through [`Transcript::push`].

use serde_json::{Value, json};

use crate::images::ImageMark;
use crate::model::types::ChatMessage;

/// The session's messages, in one place.
pub(super) struct Transcript {
    /// All messages of the session, as stored.
    messages: Vec<Value>,
    /// Messages appended since the last commit.
    pending: Vec<Value>,
    /// The wire view of `messages` (slot 0 holds the system prompt, replaced before every
    /// call), kept in step by [`push`](Self::push), so a request never re-reads the
    /// transcript. It moves into a request and back ([`lend`](Self::lend)).
    chat: Vec<ChatMessage>,
    /// The images the conversation's `read_file` calls showed: `(index in chat, mark)`.
    images: Vec<(usize, ImageMark)>,
}

impl Transcript {
    /// The transcript of a loaded session.
    pub(super) fn loaded(messages: Vec<Value>) -> Self {
        let mut chat = vec![ChatMessage::system(String::new())];
        let mut images = Vec::new();
        for m in &messages {
            if let Some(c) = ChatMessage::from_line(m) {
                chat.push(c);
                if let Some(mark) = ImageMark::of(m) {
                    images.push((chat.len() - 1, mark));
                }
            }
        }
        Transcript {
            messages,
            pending: Vec::new(),
            chat,
            images,
        }
    }

    /// Every message, as stored.
    pub(super) fn messages(&self) -> &[Value] {
        &self.messages
    }

    /// Every message, moved out at the turn's end (for its Outcome); the transcript is left
    /// empty.
    pub(super) fn take_messages(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.messages)
    }

    /// How many messages the session holds.
    pub(super) fn len(&self) -> usize {
        self.messages.len()
    }

    /// The wire view (slot 0: the system prompt).
    pub(super) fn chat(&self) -> &[ChatMessage] {
        &self.chat
    }

    /// The images shown so far.
    pub(super) fn images(&self) -> &[(usize, ImageMark)] {
        &self.images
    }

    /// The wire view, moved out for a request; [`give_back`](Self::give_back) returns it.
    pub(super) fn lend(&mut self) -> Vec<ChatMessage> {
        std::mem::take(&mut self.chat)
    }

    /// The wire view back from a request that borrowed it.
    pub(super) fn give_back(&mut self, chat: Vec<ChatMessage>) {
        self.chat = chat;
    }

    /// The messages a commit is to write, taken.
    pub(super) fn take_pending(&mut self) -> Vec<Value> {
        std::mem::take(&mut self.pending)
    }

    /// Messages a failed commit did not write: they stay pending, ahead of any pushed since.
    pub(super) fn restore_pending(&mut self, mut pending: Vec<Value>) {
        pending.append(&mut self.pending);
        self.pending = pending;
    }

    /// Appends a message.
    pub(super) fn push(&mut self, msg: Value) {
        if let Some(m) = ChatMessage::from_line(&msg) {
            self.chat.push(m);
            if let Some(mark) = ImageMark::of(&msg) {
                self.images.push((self.chat.len() - 1, mark));
            }
        }
        self.pending.push(msg.clone());
        self.messages.push(msg);
    }

    /// A runtime note: a synthetic `archmax_note` call and its result.
    pub(super) fn note(&mut self, kind: crate::notes::NoteKind, text: &str) {
        let kind = kind.as_str();
        let id = format!("note_{}_{}", self.messages.len(), crate::clock::now_ms());
        self.push(json!({ "role": "assistant", "content": "", "tool_calls": [{ "id": id, "type": "function", "function": { "name": archmax_kernel::tools::NOTE, "arguments": json!({ "note": kind }).to_string() } }], "archmax": { "note": kind } }));
        self.push(json!({ "role": "tool", "tool_call_id": id, "content": text, "archmax": { "note": kind } }));
    }

    /// True when the agent already said something since the message that opened the turn.
    pub(super) fn spoke_this_turn(&self) -> bool {
        for m in self.messages.iter().rev() {
            let role = m.get("role").and_then(Value::as_str);
            if role == Some("user") || m.get("archmax").is_some() {
                return false;
            }
            if role == Some("assistant")
                && m.get("content")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.trim().is_empty())
            {
                return true;
            }
        }
        false
    }

    /// The first user message of the session.
    pub(super) fn first_user_message(&self) -> String {
        self.messages
            .iter()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .and_then(|m| m.get("content").and_then(Value::as_str))
            .unwrap_or_default()
            .to_string()
    }

    /// The last 24 messages as `{ role, content, toolCalls?, note? }` (`note`: a runtime note's kind).
    pub(super) fn history(&self) -> Vec<Value> {
        let start = self.messages.len().saturating_sub(24);
        self.messages[start..]
            .iter()
            .map(|m| {
                let mut h = json!({ "role": m.get("role").cloned().unwrap_or(Value::Null), "content": m.get("content").cloned().unwrap_or(Value::Null) });
                if let Some(calls) = m.get("tool_calls") {
                    h["toolCalls"] = calls.clone();
                }
                if let Some(kind) = m.pointer("/archmax/note") {
                    h["note"] = kind.clone();
                }
                h
            })
            .collect()
    }
}

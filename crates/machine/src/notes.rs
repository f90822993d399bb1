//! Runtime notes: what the harness writes into a transcript for the model to read (a
//! decision, a delivered event, an error route, a failed completion check, a child's answer,
//! the budget), each a synthetic `archmax_note` call and its answer carrying
//! `archmax: { note: <kind> }`. The kinds are listed once, here; the JS readers
//! (`@archmax-ai/harness/messages`) are generated from the list.

use serde::Serialize;
use ts_rs::TS;

/// The kind of a runtime note.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "kebab-case")]
#[ts(export, rename = "RuntimeNoteKind")]
pub enum NoteKind {
    /// A person decided a human state.
    Decision,
    /// An event was delivered to a waiting session.
    Event,
    /// A state failed and its `on_error` route was taken.
    Error,
    /// A completion check (`after` hook) did not pass.
    After,
    /// A sub-workflow's text reached its caller.
    SubWorkflow,
    /// A run's opening message (the original's kind; kept so its transcripts read alike).
    Opening,
    /// A budget was reached.
    Budget,
}

impl NoteKind {
    /// Every kind.
    pub const ALL: [NoteKind; 7] = [
        NoteKind::Decision,
        NoteKind::Event,
        NoteKind::Error,
        NoteKind::After,
        NoteKind::SubWorkflow,
        NoteKind::Opening,
        NoteKind::Budget,
    ];

    /// The kind as transcripts carry it.
    pub fn as_str(self) -> &'static str {
        match self {
            NoteKind::Decision => "decision",
            NoteKind::Event => "event",
            NoteKind::Error => "error",
            NoteKind::After => "after",
            NoteKind::SubWorkflow => "sub-workflow",
            NoteKind::Opening => "opening",
            NoteKind::Budget => "budget",
        }
    }
}

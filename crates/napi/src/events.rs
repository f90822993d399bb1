//! The agent's events: each envelope serialized for JS and sent to `onEvent` in order, to the
//! drive loop polling this thread (`crate::pump`) if any, else as a threadsafe call. An
//! assembly collects its events instead, to hand them back with `open`'s answer.

use archmax_machine::{Envelope, EventSink};
use napi::bindgen_prelude::Status;
use napi::threadsafe_function::{ThreadsafeFunction, ThreadsafeFunctionCallMode};
use serde_json::{Value, json};

use crate::callback::{Slot, take};

/// A JS `(json: string) => void` for events.
pub(crate) type EventJsFn = ThreadsafeFunction<String, (), String, Status, false, true>;

std::thread_local! {
    /// The events of an assembly in progress on this (the JS) thread: handed back with
    /// `open`'s answer and delivered before `createAgent` resolves, in order with what follows.
    static ASSEMBLY_EVENTS: std::cell::RefCell<Option<Vec<String>>> = const { std::cell::RefCell::new(None) };
}

/// Runs `assemble` collecting the events it emits on this thread.
pub(crate) fn collecting_events<T>(assemble: impl FnOnce() -> T) -> (T, Vec<String>) {
    ASSEMBLY_EVENTS.with(|c| *c.borrow_mut() = Some(Vec::new()));
    let out = assemble();
    let events = ASSEMBLY_EVENTS
        .with(|c| c.borrow_mut().take())
        .unwrap_or_default();
    (out, events)
}

/// Events: a JS function, called in order on the JS thread.
pub(crate) struct JsEvents {
    f: Slot<EventJsFn>,
}

impl JsEvents {
    /// Events sent to the function in `f`, while it holds one.
    pub(crate) fn new(f: Slot<EventJsFn>) -> JsEvents {
        JsEvents { f }
    }
}

impl EventSink for JsEvents {
    fn emit(&self, event: &Envelope) {
        // Serialized only when someone listens; to the drive loop polling this thread, if any.
        if let Some(f) = take(&self.f)
            && let Ok(text) = serde_json::to_string(event)
        {
            let text = match ASSEMBLY_EVENTS.with(|c| match c.borrow_mut().as_mut() {
                Some(collected) => {
                    collected.push(text);
                    None
                }
                None => Some(text),
            }) {
                Some(text) => text,
                None => return,
            };
            match crate::pump::active() {
                Some(pump) => pump.event(text),
                None => {
                    let _ = f.call(text, ThreadsafeFunctionCallMode::NonBlocking);
                }
            }
        }
    }
}

/// `runCases`' progress, sent where the agent's events go (in order with them).
pub(crate) struct CaseProgress {
    events: JsEvents,
}

impl CaseProgress {
    /// Progress sent where `events` go.
    pub(crate) fn new(events: JsEvents) -> CaseProgress {
        CaseProgress { events }
    }

    fn send(&self, value: Value) {
        let Some(f) = take(&self.events.f) else {
            return;
        };
        let text = value.to_string();
        match crate::pump::active() {
            Some(pump) => pump.event(text),
            None => {
                let _ = f.call(text, ThreadsafeFunctionCallMode::NonBlocking);
            }
        }
    }
}

impl archmax_cases::Observer for CaseProgress {
    fn case_start(&self, file: &archmax_cases::CaseFile, session_id: Option<&str>) {
        self.send(json!({ "type": "case-start", "file": file.path, "sessionId": session_id }));
    }
    fn case_result(&self, result: &archmax_cases::CaseResult) {
        self.send(json!({ "type": "case-result", "result": result }));
    }
}

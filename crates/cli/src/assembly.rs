//! The CLI's side of the runtime: the event channel the live renderer reads, the model
//! that refuses every call, and the mapping of runtime errors to CLI failures.

use std::sync::mpsc::Sender;

use archmax_machine::model::{ChatRequest, Model, ModelError, ModelFuture};
use archmax_machine::{Envelope, EventSink, Outcome, RunError};

use crate::Failure;

/// What the turn thread sends to the CLI thread: events as they happen, then
/// the turn's result.
#[derive(Debug)]
pub(crate) enum Message {
    /// One lifecycle event.
    Event(Box<Envelope>),
    /// The turn ended (or could not start).
    Done(Box<Result<Outcome, RunError>>),
    /// `archmax test`: a case starts (its file, and its session unless it runs none).
    CaseStart(String, Option<String>),
    /// `archmax test`: a case ended.
    CaseEnd(Box<archmax_cases::CaseResult>),
    /// `archmax test`: the suite ended.
    Suite(Box<Result<archmax_cases::RunTestsResult, archmax_cases::SuiteError>>),
}

/// An [`EventSink`] that forwards every envelope through a channel, so the CLI
/// thread renders events while the turn runs on the runtime's threads.
pub(crate) struct ChannelSink(pub Sender<Message>);

impl EventSink for ChannelSink {
    fn emit(&self, event: &Envelope) {
        // A closed channel means the CLI stopped listening; the turn goes on.
        let _ = self.0.send(Message::Event(Box::new(event.clone())));
    }
}

/// A model for commands that never call one (`sessions`): every call fails.
/// With it, listing works on a machine without `ARCHMAX_*` credentials.
pub(crate) struct NoModel;

impl Model for NoModel {
    fn complete<'a>(&'a self, req: &'a ChatRequest) -> ModelFuture<'a> {
        let err = ModelError::InvalidRequest {
            url: String::new(),
            model: req.model.clone(),
            message: "this command makes no model calls".to_string(),
        };
        Box::pin(async move { Err(err) })
    }
}

/// How many of a load error's findings `Error: Cannot load workflow …` lists under it.
const LOAD_FINDINGS: usize = 3;

/// A runtime error as the CLI reports it: the known refusals (cli digest §10)
/// are one `Error: <message>` line; anything else is `archmax failed:`. A workflow that
/// cannot load lists the first findings that stop it under that line, as `archmax validate`
/// words them, so a YAML typo's reason shows without a second command.
pub(crate) fn failure(e: &RunError) -> Failure {
    match e {
        RunError::WorkflowLoad(load) => {
            let errors: Vec<_> = load.diagnostics.iter().filter(|d| d.is_error()).collect();
            let mut text = e.to_string();
            for d in errors.iter().take(LOAD_FINDINGS) {
                text.push_str(&format!("\n  {} error  {}", crate::style::CROSS, d.message));
                if let Some(at) = crate::validate::location(d) {
                    text.push_str(&format!(" [{at}]"));
                }
            }
            if errors.len() > LOAD_FINDINGS {
                text.push_str(&format!("\n  … and {} more", errors.len() - LOAD_FINDINGS));
            }
            Failure::Command(text)
        }
        RunError::WorkflowDisabled(_)
        | RunError::UnknownTrigger { .. }
        | RunError::UnknownSessionTrigger(_)
        | RunError::Busy { .. }
        | RunError::Parked(_)
        | RunError::SessionNotParked(_)
        | RunError::InvalidDecisionTarget { .. }
        | RunError::MissingDecisionTarget { .. }
        | RunError::EmptyMessage(_)
        | RunError::SessionNotAwaitingInput(_)
        | RunError::MissingDeliveryTrigger(_)
        | RunError::UnsupportedRuntimeContract(_)
        | RunError::Settings(_) => Failure::Command(e.to_string()),
        _ => Failure::Crash(e.to_string()),
    }
}

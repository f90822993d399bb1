//! Driving one harness call with its events rendered live, shared by `run`,
//! `decide`, `reply` and `deliver`.
//!
//! The call runs on a multi-thread tokio runtime while this (the CLI) thread
//! renders its events: the harness's event sink sends every envelope through a
//! channel, and the call's result follows its last event on the same channel,
//! so nothing is rendered out of order.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::time::Duration;

use archmax_machine::model::{ModelConfig, OpenAiClient};
use archmax_machine::store::SessionStore;
use archmax_machine::{Envelope, Harness, Outcome, RunError};

use crate::assembly::{ChannelSink, Message, assemble};
use crate::flow::FlowRenderer;
use crate::raw::raw_line;
use crate::usage::UsageTally;
use crate::{Cli, Failure};

/// How often the CLI thread checks that the call's task is still alive.
const POLL: Duration = Duration::from_millis(50);

/// Renders events as they arrive (`--verbose` raw lines first, then the state
/// flow) and tallies token usage.
pub(crate) struct Live {
    flow: FlowRenderer,
    /// Token usage per session, from `model-usage` events.
    pub tally: UsageTally,
    verbose: bool,
    tx: Sender<Message>,
    rx: Receiver<Message>,
}

impl Live {
    /// Renders one event.
    pub fn render(&mut self, cli: &mut Cli<'_>, envelope: &Envelope) {
        self.tally.on_event(envelope);
        let mut text = String::new();
        if self.verbose
            && let Some(line) = raw_line(envelope)
        {
            text.push_str(&line);
            text.push('\n');
        }
        text.push_str(&self.flow.on_event(envelope));
        if !text.is_empty() {
            cli.err(&text);
        }
    }

    /// Renders every event already queued; returns a call result found among them.
    pub fn drain(&mut self, cli: &mut Cli<'_>) -> Option<Result<Outcome, RunError>> {
        while let Ok(message) = self.rx.try_recv() {
            match message {
                Message::Event(e) => self.render(cli, &e),
                Message::Done(result) => return Some(*result),
            }
        }
        None
    }

    /// Runs `call` on the harness on a tokio runtime and renders its events
    /// until it ends; the call's result.
    pub fn drive<F, Fut>(
        &mut self,
        cli: &mut Cli<'_>,
        harness: &Arc<Harness>,
        call: F,
    ) -> Result<Result<Outcome, RunError>, Failure>
    where
        F: FnOnce(Arc<Harness>) -> Fut,
        Fut: Future<Output = Result<Outcome, RunError>> + Send + 'static,
    {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .map_err(|e| Failure::Crash(format!("cannot start the async runtime: {e}")))?;
        let future = call(Arc::clone(harness));
        let done = self.tx.clone();
        let task = rt.spawn(async move {
            let result = future.await;
            let _ = done.send(Message::Done(Box::new(result)));
        });
        let result = loop {
            match self.rx.recv_timeout(POLL) {
                Ok(Message::Event(e)) => self.render(cli, &e),
                Ok(Message::Done(result)) => break Ok(*result),
                Err(e) => {
                    if task.is_finished() {
                        break self.drain(cli).ok_or_else(|| {
                            Failure::Crash(
                                "the turn stopped before reporting its outcome".to_string(),
                            )
                        });
                    }
                    if e == RecvTimeoutError::Disconnected {
                        std::thread::sleep(POLL);
                    }
                }
            }
        };
        self.drain(cli);
        rt.shutdown_background();
        result
    }
}

/// Builds the model from the `ARCHMAX_*` variables and assembles `workflow`
/// with its events going to a [`Live`] renderer. Missing or malformed model
/// variables are a configuration error (`Error: …`, every missing one named),
/// not a crash as in the original (docs/decisions.md).
pub(crate) fn connect(
    cli: &mut Cli<'_>,
    root: &Path,
    workflow: &str,
    verbose: bool,
) -> Result<(Harness, Live), Failure> {
    let store = crate::store::open(cli, root)?;
    connect_to(cli, root, store, workflow, verbose)
}

/// [`connect`] with the sessions in `store`.
pub(crate) fn connect_to(
    cli: &mut Cli<'_>,
    root: &Path,
    store: Arc<dyn SessionStore>,
    workflow: &str,
    verbose: bool,
) -> Result<(Harness, Live), Failure> {
    let missing = crate::endpoint::missing(cli);
    if !missing.is_empty() {
        return Err(Failure::Command(crate::endpoint::missing_message(
            root, &missing,
        )));
    }
    let config =
        ModelConfig::from_env(|name| cli.var(name)).map_err(|e| Failure::Command(e.to_string()))?;
    let (tx, rx) = mpsc::channel::<Message>();
    let mut live = Live {
        flow: FlowRenderer::new(cli.style),
        tally: UsageTally::new(config.pricing_table()),
        verbose,
        tx: tx.clone(),
        rx,
    };
    let default_model = config.model.clone();
    let cache = (config.prompt_cache, config.prompt_cache_ttl.as_str());
    // The harness prices each call itself (so a session's usage carries `costUsd`).
    let pricing = config.pricing.map(|_| config.pricing_table());
    let client = OpenAiClient::new(config).map_err(|e| Failure::Command(e.to_string()))?;
    let sink = Arc::new(ChannelSink(tx));
    let assembled = assemble(root, store, workflow, Arc::new(client), default_model, sink);
    // Assembly may have emitted warnings before failing: show them first.
    live.drain(cli);
    let mut harness = assembled?;
    harness.set_env_prompt_cache(cache.0, cache.1);
    harness.set_pricing(pricing);
    Ok((harness, live))
}

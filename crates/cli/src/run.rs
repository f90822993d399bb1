//! `archmax run <workflow> <prompt...>` (cli digest §4.1).
//!
//! The turn runs on a multi-thread tokio runtime while this (the CLI) thread
//! renders its events live: the harness's event sink sends every envelope
//! through a channel, and the turn's result follows its last event on the
//! same channel, so nothing is rendered out of order.

use std::sync::Arc;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::Duration;

use archmax_machine::model::{ModelConfig, OpenAiClient};
use archmax_machine::{Envelope, Event, Harness, Outcome, RunError, SendInput, SessionSource};

use crate::args::Parsed;
use crate::assembly::{ChannelSink, Message, assemble, failure};
use crate::checks::check_session_id;
use crate::flow::FlowRenderer;
use crate::outcome::run_report;
use crate::preflight::check_run;
use crate::raw::raw_line;
use crate::usage::UsageTally;
use crate::workspace::resolve_root;
use crate::{Cli, Failure};

/// How often the CLI thread checks that the turn task is still alive.
const POLL: Duration = Duration::from_millis(50);

/// Renders events as they arrive: `--verbose` raw lines first, then the state flow.
struct Live {
    flow: FlowRenderer,
    tally: UsageTally,
    verbose: bool,
}

impl Live {
    fn render(&mut self, cli: &mut Cli<'_>, envelope: &Envelope) {
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

    /// Renders every event already queued; returns a turn result found among them.
    fn drain(
        &mut self,
        cli: &mut Cli<'_>,
        rx: &Receiver<Message>,
    ) -> Option<Result<Outcome, RunError>> {
        while let Ok(message) = rx.try_recv() {
            match message {
                Message::Event(e) => self.render(cli, &e),
                Message::Done(result) => return Some(*result),
            }
        }
        None
    }
}

/// Runs the command; the exit code, or the failure to report.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let args = check_run(cli, parsed, positionals)?;
    let explicit = parsed.non_empty("session");
    if let Some(id) = explicit {
        check_session_id(id).map_err(Failure::Usage)?;
    }
    let trigger = parsed.non_empty("trigger").unwrap_or("manual").to_string();
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    cli.load_root_env(&root);
    let model_line = cli
        .var("ARCHMAX_MODEL")
        .unwrap_or_else(|| "(unset — see .env)".to_string());
    cli.header(&args.workflow, &root, Some(&model_line));

    let config =
        ModelConfig::from_env(|name| cli.var(name)).map_err(|e| Failure::Crash(e.to_string()))?;
    let mut live = Live {
        flow: FlowRenderer::new(cli.style),
        tally: UsageTally::new(config.pricing_table()),
        verbose: parsed.flag("verbose"),
    };
    let default_model = config.model.clone();
    let cache = (config.prompt_cache, config.prompt_cache_ttl.as_str());
    let client = OpenAiClient::new(config).map_err(|e| Failure::Crash(e.to_string()))?;
    let (tx, rx) = mpsc::channel::<Message>();
    let sink = Arc::new(ChannelSink(tx.clone()));
    let mut harness = assemble(&root, &args.workflow, Arc::new(client), default_model, sink)?;
    harness.set_env_prompt_cache(cache.0, cache.1);
    live.drain(cli, &rx);

    let (id, source) = harness
        .resolve_session(
            explicit,
            &trigger,
            &args.variables,
            parsed.non_empty("session-path"),
        )
        .map_err(|e| Failure::Command(e.to_string()))?;
    if let SessionSource::Minted {
        unresolved: Some(path),
    } = &source
    {
        let warning = Envelope {
            event: Event::Warning {
                scope: "session".to_string(),
                message: format!(
                    "the session path '{path}' does not resolve over this firing's variables; started a new session '{id}'"
                ),
            },
            level: "warn",
            ts: 0,
            seq: 0,
            session_id: Some(id.clone()),
        };
        live.render(cli, &warning);
    }

    let harness = Arc::new(harness);
    let input = SendInput {
        message: args.prompt,
        trigger: Some(trigger),
        variables: args.variables,
    };
    let result = turn(cli, &mut live, &harness, &id, input, tx, &rx)?;
    let outcome = result.map_err(|e| failure(&e))?;
    let report = run_report(&cli.style, &outcome, &harness);
    cli.err(&report.err);
    cli.out(&report.out);
    let footer = live.tally.session(&id).footer(&cli.style);
    cli.err(&footer);
    Ok(report.code)
}

/// Sends the turn on a tokio runtime and renders its events until it ends.
fn turn(
    cli: &mut Cli<'_>,
    live: &mut Live,
    harness: &Arc<Harness>,
    id: &str,
    input: SendInput,
    done: mpsc::Sender<Message>,
    rx: &Receiver<Message>,
) -> Result<Result<Outcome, RunError>, Failure> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::Crash(format!("cannot start the async runtime: {e}")))?;
    let h = Arc::clone(harness);
    let sid = id.to_string();
    let task = rt.spawn(async move {
        let result = h.send(&sid, input).await;
        let _ = done.send(Message::Done(Box::new(result)));
    });
    let result = loop {
        match rx.recv_timeout(POLL) {
            Ok(Message::Event(e)) => live.render(cli, &e),
            Ok(Message::Done(result)) => break Ok(*result),
            Err(e) => {
                if task.is_finished() {
                    break live.drain(cli, rx).ok_or_else(|| {
                        Failure::Crash("the turn stopped before reporting its outcome".to_string())
                    });
                }
                if e == RecvTimeoutError::Disconnected {
                    std::thread::sleep(POLL);
                }
            }
        }
    };
    live.drain(cli, rx);
    rt.shutdown_background();
    result
}

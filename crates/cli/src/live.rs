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
use std::time::{Duration, Instant};
use tracing::instrument::WithSubscriber;

use archmax_machine::model::{Model, ModelConfig, OpenAiClient};
use archmax_machine::store::SessionStore;
use archmax_machine::{Envelope, Event, Harness, Outcome, RunError};

use crate::assembly::{ChannelSink, Message, assemble};
use crate::cassette::Tape;
use crate::flow::FlowRenderer;
use crate::raw::raw_line;
use crate::usage::UsageTally;
use crate::{Cli, Failure};
use archmax_cases::cassette::Replayer;

/// How often the CLI thread checks that the call's task is still alive (and ticks the
/// waiting indicator, and looks for a Ctrl-C).
const POLL: Duration = Duration::from_millis(50);

/// How long the flow may sit silent before a TTY shows the waiting indicator.
const QUIET: Duration = Duration::from_millis(400);

/// The waiting indicator's frames.
const SPINNER: [char; 10] = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

/// Renders events as they arrive (`--verbose` raw lines first, then the state
/// flow) and tallies token usage.
pub(crate) struct Live {
    /// The state flow (a fresh one per case in `archmax test`).
    pub flow: FlowRenderer,
    /// Token usage per session, from `model-usage` events.
    pub tally: UsageTally,
    verbose: bool,
    tx: Sender<Message>,
    rx: Receiver<Message>,
    /// Whether stderr is a terminal: only then is the waiting indicator drawn.
    tty: bool,
    /// When the flow last printed (or the call started).
    quiet_since: Instant,
    /// Whether the indicator is on screen (erased before anything else is written).
    spinning: bool,
    /// The cassette a `--replay` answers from, and its file as the user named it.
    replay: Option<(Arc<Replayer>, String)>,
}

impl Live {
    /// Renders one event.
    pub fn render(&mut self, cli: &mut Cli<'_>, envelope: &Envelope) {
        self.tally.on_event(envelope);
        // `--verbose` keeps the original's order (an event's raw line, then its flow lines),
        // so its text is printed whole at `agent-text`, not as it streams.
        if self.verbose && matches!(envelope.event, Event::AgentTextDelta { .. }) {
            return;
        }
        let mut text = String::new();
        if self.verbose
            && let Some(line) = raw_line(envelope)
        {
            text.push_str(&line);
            text.push('\n');
        }
        text.push_str(&self.flow.on_event(envelope));
        if !text.is_empty() {
            self.write(cli, &text);
        }
    }

    /// Writes flow text, erasing the waiting indicator first.
    fn write(&mut self, cli: &mut Cli<'_>, text: &str) {
        if std::mem::take(&mut self.spinning) {
            cli.err("\r\x1b[2K");
        }
        cli.err(text);
        self.quiet_since = Instant::now();
    }

    /// On a TTY, after a quiet spell outside a streamed line: `    ⠋ 1.2s` (dim) in place,
    /// so a slow model or tool does not look like a hung CLI.
    fn tick(&mut self, cli: &mut Cli<'_>, started: Instant) {
        let quiet = self.quiet_since.elapsed();
        if !self.tty || self.flow.mid_line() || quiet < QUIET {
            return;
        }
        let frame = SPINNER[(started.elapsed().as_millis() / 80) as usize % SPINNER.len()];
        let line = cli
            .style
            .dim(&format!("{frame} {:.1}s", quiet.as_secs_f64()));
        cli.err(&format!("\r\x1b[2K    {line}"));
        self.spinning = true;
    }

    /// Ends what the flow left open (a streamed line, the indicator) before the report.
    fn settle(&mut self, cli: &mut Cli<'_>) {
        let close = self.flow.close_line();
        if !close.is_empty() || self.spinning {
            self.write(cli, &close);
        }
    }

    /// After a replay: a warning when the cassette holds exchanges the call did not ask for
    /// (the run took a shorter path than the one recorded).
    fn leftovers(&mut self, cli: &mut Cli<'_>) {
        let Some((replayer, file)) = &self.replay else {
            return;
        };
        let unused = replayer.unused();
        if unused.is_empty() {
            return;
        }
        let list: Vec<String> = unused.iter().map(usize::to_string).collect();
        let warning = Envelope {
            event: Event::Warning {
                scope: "cassette".to_string(),
                message: format!(
                    "{file} holds {} exchange{} this run did not ask for ({} {})",
                    unused.len(),
                    if unused.len() == 1 { "" } else { "s" },
                    if unused.len() == 1 {
                        "exchange"
                    } else {
                        "exchanges"
                    },
                    list.join(", ")
                ),
            },
            level: "warn",
            ts: 0,
            seq: 0,
            session_id: None,
        };
        self.render(cli, &warning);
    }

    /// A sender into this renderer's channel (`archmax test` sends its progress beside the
    /// harness's events).
    pub fn sender(&self) -> Sender<Message> {
        self.tx.clone()
    }

    /// The next message, waiting at most `wait`.
    pub fn recv(&self, wait: Duration) -> Result<Message, RecvTimeoutError> {
        self.rx.recv_timeout(wait)
    }

    /// Writes text among the flow's (erasing the waiting indicator, closing an open line).
    pub fn write_text(&mut self, cli: &mut Cli<'_>, text: &str) {
        let close = self.flow.close_line();
        self.write(cli, &format!("{close}{text}"));
    }

    /// Ends what the flow left open (a streamed line, the indicator).
    pub fn settle_line(&mut self, cli: &mut Cli<'_>) {
        self.settle(cli);
    }

    /// Renders every event already queued; returns a call result found among them.
    pub fn drain(&mut self, cli: &mut Cli<'_>) -> Option<Result<Outcome, RunError>> {
        while let Ok(message) = self.rx.try_recv() {
            match message {
                Message::Event(e) => self.render(cli, &e),
                Message::Done(result) => return Some(*result),
                _ => {}
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
        // The command's telemetry (`crate::start_telemetry`), if any, follows the turn
        // onto the runtime's threads.
        let future = call(Arc::clone(harness)).with_current_subscriber();
        let done = self.tx.clone();
        let driving = crate::interrupt::Driving::start();
        let task = rt.spawn(async move {
            let result = future.await;
            let _ = done.send(Message::Done(Box::new(result)));
        });
        let started = Instant::now();
        self.quiet_since = started;
        let mut hinted = false;
        let result = loop {
            if crate::interrupt::requested() {
                // Repeated until the turn reports: a turn that had not registered its
                // switch yet at the first try is cancelled at the next.
                harness.cancel_all();
                if !std::mem::replace(&mut hinted, true) {
                    let hint = format!("{}\n", cli.style.yellow(crate::interrupt::HINT));
                    let close = self.flow.close_line();
                    self.write(cli, &format!("{close}{hint}"));
                }
            }
            match self.rx.recv_timeout(POLL) {
                Ok(Message::Event(e)) => self.render(cli, &e),
                Ok(Message::Done(result)) => break Ok(*result),
                Ok(_) => {}
                Err(e) => {
                    self.tick(cli, started);
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
        self.settle(cli);
        self.leftovers(cli);
        drop(driving);
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
    tape: &Tape,
) -> Result<(Harness, Live), Failure> {
    let store = crate::store::open(cli, root)?;
    connect_to(cli, root, store, workflow, verbose, tape)
}

/// [`connect`] with the sessions in `store`. With `--replay` (`tape`) the model is the
/// cassette and no endpoint variable is needed; with `--record` the endpoint's exchanges
/// are recorded.
pub(crate) fn connect_to(
    cli: &mut Cli<'_>,
    root: &Path,
    store: Arc<dyn SessionStore>,
    workflow: &str,
    verbose: bool,
    tape: &Tape,
) -> Result<(Harness, Live), Failure> {
    let replayer = match tape {
        Tape::Replay(file) => Some(crate::cassette::replayer(file)?),
        _ => None,
    };
    let config = config_with(cli, root, replayer.as_deref())?;
    let replay = match (tape, &replayer) {
        (Tape::Replay(file), Some(r)) => Some((Arc::clone(r), crate::cassette::shown(cli, file))),
        _ => None,
    };
    let model: Arc<dyn Model> = match (tape, replayer) {
        (_, Some(replayer)) => replayer,
        (Tape::Record(file), None) => {
            let client =
                OpenAiClient::new(config.clone()).map_err(|e| Failure::Command(e.to_string()))?;
            crate::cassette::recorder(client, file, &config.model)
        }
        _ => endpoint(&config)?,
    };
    connect_model(cli, root, store, workflow, verbose, &config, model, replay)
}

/// Assembles `workflow` over `store` with `model`, its events going to a new [`Live`]
/// renderer (`replay`: the cassette a leftover warning names at the end).
#[allow(clippy::too_many_arguments)]
pub(crate) fn connect_model(
    cli: &mut Cli<'_>,
    root: &Path,
    store: Arc<dyn SessionStore>,
    workflow: &str,
    verbose: bool,
    config: &ModelConfig,
    model: Arc<dyn Model>,
    replay: Option<(Arc<archmax_cases::cassette::Replayer>, String)>,
) -> Result<(Harness, Live), Failure> {
    let (tx, rx) = mpsc::channel::<Message>();
    let mut live = Live {
        flow: FlowRenderer::new(cli.style),
        tally: UsageTally::new(config.pricing_table()),
        verbose,
        tx: tx.clone(),
        rx,
        tty: cli.io.stderr_is_tty(),
        quiet_since: Instant::now(),
        spinning: false,
        replay,
    };
    let sink = Arc::new(ChannelSink(tx));
    let assembled = harness_with(root, store, workflow, config, model, sink);
    // Assembly may have emitted warnings before failing: show them first.
    live.drain(cli);
    Ok((assembled?, live))
}

/// The model endpoint from the `ARCHMAX_*` variables. Missing or malformed ones are a
/// configuration error (`Error: …`, every missing one named), not a crash as in the
/// original (docs/decisions.md).
pub(crate) fn model_config(cli: &Cli<'_>, root: &Path) -> Result<ModelConfig, Failure> {
    config_with(cli, root, None)
}

/// [`model_config`]; with a cassette to replay, its recorded values fill in what is unset
/// and nothing is required.
fn config_with(
    cli: &Cli<'_>,
    root: &Path,
    replayer: Option<&archmax_cases::cassette::Replayer>,
) -> Result<ModelConfig, Failure> {
    match replayer {
        Some(r) => replay_config(cli, r.default_model()),
        None => {
            let missing = crate::endpoint::missing(cli);
            if !missing.is_empty() {
                return Err(Failure::Command(crate::endpoint::missing_message(
                    root, &missing,
                )));
            }
            ModelConfig::from_env(|name| cli.var(name)).map_err(|e| Failure::Command(e.to_string()))
        }
    }
}

/// The model configuration of a replay, which needs no endpoint variable: the recorded
/// run's default model (`recorded`) fills in `ARCHMAX_MODEL`, a placeholder an unset URL.
pub(crate) fn replay_config(cli: &Cli<'_>, recorded: Option<&str>) -> Result<ModelConfig, Failure> {
    ModelConfig::from_env(|name| crate::cassette::replay_var(recorded, name, cli.var(name)))
        .map_err(|e| Failure::Command(e.to_string()))
}

/// The OpenAI-compatible client of `config`.
pub(crate) fn endpoint(config: &ModelConfig) -> Result<Arc<dyn Model>, Failure> {
    let client = OpenAiClient::new(config.clone()).map_err(|e| Failure::Command(e.to_string()))?;
    Ok(Arc::new(client))
}

/// Assembles `workflow` over `store` with `model` (and `config`'s prompt-cache and pricing
/// switches), its events to `sink`.
pub(crate) fn harness_with(
    root: &Path,
    store: Arc<dyn SessionStore>,
    workflow: &str,
    config: &ModelConfig,
    model: Arc<dyn Model>,
    sink: Arc<dyn archmax_machine::EventSink>,
) -> Result<Harness, Failure> {
    let default_model = config.model.clone();
    let cache = (config.prompt_cache, config.prompt_cache_ttl.as_str());
    // The harness prices each call itself (so a session's usage carries `costUsd`).
    let pricing = config.pricing.as_ref().map(|_| config.pricing_table());
    let mut harness = assemble(root, store, workflow, model, default_model, sink)?;
    harness.set_env_prompt_cache(cache.0, cache.1);
    harness.set_pricing(pricing);
    Ok(harness)
}

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

use archmax_machine::mcp::McpTape;
use archmax_machine::model::{Model, ModelConfig, OpenAiClient};
use archmax_machine::store::SessionStore;
use archmax_machine::{
    Envelope, Event, Harness, HarnessBuilder, ModelSource, Outcome, Recording, RunError,
};

use crate::assembly::{ChannelSink, Message, failure};
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
            sub_workflow_dispatch_id: None,
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

/// Assembles `workflow` of the workspace at `root` over the store the settings choose
/// ([`crate::store::open`]), its model as `tape` says, its events going to a new [`Live`]
/// renderer. Missing or malformed endpoint variables are a configuration error
/// (`Error: …`, every missing one named), not a crash as in the original.
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
    let builder = builder(cli, root, workflow).store(store);
    let (builder, replay) = match tape {
        Tape::Replay(file) => {
            let replayer = crate::cassette::replayer(file)?;
            let recorded_model = replayer.default_model().map(str::to_string);
            let builder = builder
                .model(ModelSource::Recorded {
                    model: Arc::clone(&replayer) as Arc<dyn Model>,
                    recorded_model,
                })
                .mcp_tape(Some(Arc::clone(&replayer) as Arc<dyn McpTape>));
            (builder, Some((replayer, crate::cassette::shown(cli, file))))
        }
        Tape::Record(file) => {
            require_endpoint(cli, root)?;
            (builder.record(Recording::File(file.clone())), None)
        }
        Tape::Live => {
            require_endpoint(cli, root)?;
            (builder, None)
        }
    };
    connect_with(cli, builder, verbose, replay)
}

/// The builder of `workflow` in the workspace at `root`, reading the CLI's settings (the
/// environment and the `.env` files loaded so far).
pub(crate) fn builder(cli: &Cli<'_>, root: &Path, workflow: &str) -> HarnessBuilder {
    HarnessBuilder::new(root, workflow).env(cli.lookup())
}

/// Assembles `builder`, its events going to a new [`Live`] renderer (`replay`: the cassette
/// a leftover warning names at the end).
pub(crate) fn connect_with(
    cli: &mut Cli<'_>,
    builder: HarnessBuilder,
    verbose: bool,
    replay: Option<(Arc<Replayer>, String)>,
) -> Result<(Harness, Live), Failure> {
    let (tx, rx) = mpsc::channel::<Message>();
    let mut live = Live {
        flow: FlowRenderer::new(cli.style),
        tally: UsageTally::new(Default::default()),
        verbose,
        tx: tx.clone(),
        rx,
        tty: cli.io.stderr_is_tty(),
        quiet_since: Instant::now(),
        spinning: false,
        replay,
    };
    let assembled = builder.events(Arc::new(ChannelSink(tx))).build();
    // Assembly may have emitted warnings before failing: show them first.
    live.drain(cli);
    let harness = assembled.map_err(|e| failure(&e))?;
    live.tally = UsageTally::new(harness.pricing().cloned().unwrap_or_default());
    Ok((harness, live))
}

/// Refuses to go on when an endpoint variable is missing, naming every missing one (the
/// builder would name only the first).
pub(crate) fn require_endpoint(cli: &Cli<'_>, root: &Path) -> Result<(), Failure> {
    let missing = crate::endpoint::missing(cli);
    if missing.is_empty() {
        Ok(())
    } else {
        Err(Failure::Command(crate::endpoint::missing_message(
            root, &missing,
        )))
    }
}

/// The model endpoint from the `ARCHMAX_*` variables, checked as [`require_endpoint`] says.
pub(crate) fn model_config(cli: &Cli<'_>, root: &Path) -> Result<ModelConfig, Failure> {
    require_endpoint(cli, root)?;
    archmax_machine::builder::endpoint_config(&*cli.lookup(), &Default::default())
        .map_err(|e| Failure::Command(e.to_string()))
}

/// The OpenAI-compatible client of `config`.
pub(crate) fn endpoint(config: &ModelConfig) -> Result<Arc<dyn Model>, Failure> {
    let client = OpenAiClient::new(config.clone()).map_err(|e| Failure::Command(e.to_string()))?;
    Ok(Arc::new(client))
}

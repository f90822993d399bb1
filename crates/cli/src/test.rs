//! `archmax test <workflow> [filter]` (cli digest §4.2, §7.2): the workflow's cases run by
//! `archmax-cases` on one harness, each case's state flow shown live under its `◆ case`
//! line, its verdict block after it, then the summary, the counts on stdout (or `--json`)
//! and the tokens of every case.
//!
//! The cases never run in the workspace's session store: by default in a filesystem store
//! of their own in a temporary folder (seeds and files work as in production), removed
//! after the run; `--store <dir|postgres://…>` chooses one (the cases' sessions are removed
//! from it after the run), `--keep` keeps them and says where.

use std::path::PathBuf;
use std::sync::Arc;
use std::sync::mpsc::{RecvTimeoutError, Sender};
use std::time::Duration;

use archmax_cases::cassette::{CaseTapes, TapedTarget};
use archmax_cases::engine::{Observer, Plan, RunOptions, SharedTarget, Suite, plan, run_suite};
use archmax_cases::{CaseFile, CaseResult, RecordStatus, RunTestsResult};
use archmax_machine::state::Usage;
use archmax_machine::store::{FsStore, SessionStore};
use serde_json::json;

use crate::args::Parsed;
use crate::assembly::Message;
use crate::flow::FlowRenderer;
use crate::live::{builder, connect_to, connect_with, endpoint, model_config};
use crate::style::{CHECK, CIRCLE, CROSS, DIAMOND, Style, WARN};
use crate::usage::Tokens;
use crate::workspace::{resolve_root, workflow_slot};
use crate::{Cli, Failure};

/// How often the CLI thread looks for a Ctrl-C while cases run.
const POLL: Duration = Duration::from_millis(50);

/// Sends the engine's progress to the CLI thread, in order with the harness's events.
struct Progress(Sender<Message>);

impl Observer for Progress {
    fn case_start(&self, file: &CaseFile, session_id: Option<&str>) {
        let _ = self.0.send(Message::CaseStart(
            file.path.clone(),
            session_id.map(str::to_string),
        ));
    }
    fn case_result(&self, result: &CaseResult) {
        let _ = self.0.send(Message::CaseEnd(Box::new(result.clone())));
    }
}

fn tokens_of(u: &Usage) -> Tokens {
    Tokens {
        input: u.input_tokens,
        output: u.output_tokens,
        cache_read: u.cache_read_tokens,
        cache_write: u.cache_creation_tokens,
        cost: u.cost_usd,
    }
}

fn label(s: &Style, r: &CaseResult) -> String {
    match r.title.as_deref().filter(|t| !t.is_empty()) {
        Some(t) => format!("{} {}", r.id, s.dim(&format!("— {t}"))),
        None => r.id.clone(),
    }
}

/// The block under a case: its verdict line, failures, grades, what did not run, tokens.
pub(crate) fn case_block(s: &Style, r: &CaseResult) -> String {
    let mut out = String::from("\n");
    match r.verdict.status {
        "passed" => out.push_str(&format!("{} {}\n", s.green(CHECK), label(s, r))),
        "failed" => out.push_str(&format!("{} {}\n", s.red(CROSS), label(s, r))),
        _ => {
            let reason = r
                .skip_reason
                .as_deref()
                .map(|why| format!(" {}", s.dim(&format!("({why})"))))
                .unwrap_or_default();
            out.push_str(&format!("{} {}{reason}\n", s.dim(CIRCLE), label(s, r)));
        }
    }
    if let Some(thrown) = &r.turn_error {
        out.push_str(&format!(
            "      {} {}\n",
            s.red(CROSS),
            s.red(&format!("the turn failed: {thrown}"))
        ));
    }
    for f in &r.verdict.failures {
        out.push_str(&format!("      {} {f}\n", s.red(CROSS)));
    }
    for g in r
        .records
        .iter()
        .filter(|g| g.threshold.is_some() && g.status != RecordStatus::NotExecuted)
    {
        let mark = if g.status == RecordStatus::Passed {
            s.green(CHECK)
        } else {
            s.yellow(WARN)
        };
        let score = archmax_cases::report::num(g.score.unwrap_or(0.0));
        let t = archmax_cases::report::num(g.threshold.unwrap_or(0.0));
        out.push_str(&format!("      {mark} {} {score} / {t}\n", g.kind));
    }
    let skipped = r
        .records
        .iter()
        .filter(|g| g.status == RecordStatus::NotExecuted)
        .count();
    if skipped > 0 {
        let word = if skipped == 1 {
            "assertion"
        } else {
            "assertions"
        };
        out.push_str(&format!(
            "      {} {skipped} {word} not executed\n",
            s.dim(CIRCLE)
        ));
    }
    if let Some(u) = r.usage.as_ref().filter(|u| !u.is_empty()) {
        out.push_str(&format!(
            "    {}\n",
            s.dim(&format!("tokens {}", tokens_of(u).line()))
        ));
    }
    out
}

/// `<P> passed, <F> failed, <S> skipped`.
fn counts(results: &[CaseResult]) -> String {
    let n = |st: &str| results.iter().filter(|r| r.verdict.status == st).count();
    format!(
        "{} passed, {} failed, {} skipped",
        n("passed"),
        n("failed"),
        n("skipped")
    )
}

/// The summary block: the counts, then all passed or the cases by verdict.
pub(crate) fn summary(s: &Style, results: &[CaseResult]) -> String {
    let mut out = format!(
        "\n{} {}\n",
        s.cyan(&s.bold(&format!("{DIAMOND} summary"))),
        s.dim(&counts(results))
    );
    let all_passed = !results.is_empty() && results.iter().all(|r| r.verdict.status == "passed");
    if all_passed {
        let word = if results.len() == 1 { "case" } else { "cases" };
        out.push_str(&format!(
            "  {} all {} {word} passed\n",
            s.green(CHECK),
            results.len()
        ));
        return out;
    }
    for (status, mark) in [
        ("failed", s.red(CROSS)),
        ("passed", s.green(CHECK)),
        ("skipped", s.dim(CIRCLE)),
    ] {
        for r in results.iter().filter(|r| r.verdict.status == status) {
            out.push_str(&format!("  {mark} {}\n", label(s, r)));
        }
    }
    out
}

fn stdout_of(workflow: &str, result: &RunTestsResult, as_json: bool, kept: Option<&str>) -> String {
    if as_json {
        let mut v = json!({
            "workflow": workflow,
            "results": result.results,
            "exitCode": result.exit_code,
            "discovered": result.discovered,
        });
        if let Some(s) = result.skipped {
            v["skipped"] = json!(s);
        }
        if let Some(at) = kept {
            v["sessionsKept"] = json!(at);
        }
        return format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default());
    }
    if result.skipped.is_some() {
        return "suite skipped — disabled\n".to_string();
    }
    format!("{}\n", counts(&result.results))
}

/// Runs the command; the exit code, or the failure to report.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    let workflow = workflow_slot(positionals.first().and_then(Option::as_deref), &root)
        .map_err(Failure::Usage)?;
    let filter = positionals
        .get(1)
        .and_then(Option::as_deref)
        .filter(|f| !f.is_empty())
        .map(str::to_string);
    let as_json = parsed.flag("json");
    let tape = match (parsed.flag("record"), parsed.flag("replay")) {
        (true, true) => {
            return Err(Failure::Usage(
                "--record and --replay cannot be used together".to_string(),
            ));
        }
        (true, false) => Cassettes::Record,
        (false, true) => Cassettes::Replay,
        (false, false) => Cassettes::None,
    };
    let keep = parsed.flag("keep");
    let chosen = parsed.non_empty("store").map(str::to_string);
    cli.load_root_env(&root);
    let endpoint_model = || {
        cli.var("ARCHMAX_MODEL")
            .unwrap_or_else(|| "(unset — see .env)".to_string())
    };
    let model_line = match tape {
        Cassettes::None => endpoint_model(),
        Cassettes::Record => format!("{} (recording each case's cassette)", endpoint_model()),
        Cassettes::Replay => "replayed from each case's cassette".to_string(),
    };
    cli.header(&workflow, &root, Some(&model_line));
    let s = cli.style;

    let Plan {
        suite,
        spec,
        selected,
    } = plan(&root, &workflow, filter.as_deref()).map_err(|e| Failure::Command(e.message))?;
    if spec.disabled != Some(true) && selected.is_empty() {
        // Nothing to run: no harness, so no model configuration is needed.
        let empty = RunTestsResult {
            results: Vec::new(),
            exit_code: 0,
            discovered: suite.files.len(),
            skipped: None,
            error: None,
        };
        if !as_json {
            cli.err(&summary(&s, &[]));
        }
        cli.out(&stdout_of(&workflow, &empty, as_json, None));
        return Ok(0);
    }
    let opts = RunOptions {
        filter,
        ..RunOptions::default()
    };
    let mut kept = None;
    let result = if spec.disabled == Some(true) {
        // Skipped before anything is assembled.
        let rt = runtime()?;
        rt.block_on(run_suite(
            &suite,
            &spec,
            &NoTarget,
            &opts,
            &archmax_cases::engine::Quiet,
        ))
        .map_err(|e| Failure::Crash(e.to_string()))?
    } else {
        let cases = CaseStore::open(cli, chosen.as_deref())?;
        let ran = drive(
            cli,
            &root,
            &workflow,
            parsed.flag("verbose"),
            tape,
            suite,
            spec,
            opts,
            Arc::clone(&cases.store),
        );
        kept = cases.finish(ran.as_ref().ok(), keep);
        ran?
    };
    if result.skipped.is_some() {
        cli.err(&format!(
            "\n{} {}\n",
            s.dim(CIRCLE),
            format_args!(
                "{} {}",
                s.bold("suite skipped"),
                s.dim(&format!(
                    "— the workflow is disabled ({workflow}); no case ran"
                ))
            )
        ));
    } else if !as_json {
        cli.err(&summary(&s, &result.results));
    }
    if let Some(at) = &kept
        && !as_json
    {
        cli.err(&format!(
            "  {}\n",
            s.dim(&format!("the cases' sessions are kept in {at}"))
        ));
        if !at.starts_with("the PostgreSQL") {
            cli.err(&format!(
                "  {}\n",
                s.dim(&format!(
                    "list them: archmax sessions --workflow {workflow} --store {at}"
                ))
            ));
        }
    }
    cli.out(&stdout_of(&workflow, &result, as_json, kept.as_deref()));
    let mut total = Usage::default();
    for u in result.results.iter().filter_map(|r| r.usage.as_ref()) {
        total.input_tokens += u.input_tokens;
        total.output_tokens += u.output_tokens;
        total.cache_read_tokens += u.cache_read_tokens;
        total.cache_creation_tokens += u.cache_creation_tokens;
        if let Some(c) = u.cost_usd {
            total.cost_usd = Some(total.cost_usd.unwrap_or(0.0) + c);
        }
    }
    cli.err(&tokens_of(&total).footer(&s));
    Ok(result.exit_code)
}

/// Where the cases' sessions go: never the workspace's store.
struct CaseStore {
    store: Arc<dyn SessionStore>,
    place: Place,
}

/// What [`CaseStore`] is, for cleaning up and for saying where the sessions went.
enum Place {
    /// A folder of our own under the system's temporary directory: removed whole.
    Temporary(PathBuf),
    /// A folder `--store` named: the cases' sessions are removed from it.
    Folder(PathBuf),
    /// The PostgreSQL database `--store` named: the cases' sessions are removed from it.
    Postgres,
}

impl CaseStore {
    /// `--store`'s store (a `postgres://` URL, else a folder relative to the working
    /// directory), or a filesystem store in a new temporary folder. Not the workspace's store,
    /// nor `ARCHMAX_SESSION_STORE`'s: a case never writes where the workspace's sessions live.
    fn open(cli: &Cli<'_>, chosen: Option<&str>) -> Result<CaseStore, Failure> {
        match chosen {
            Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
                Ok(CaseStore {
                    store: Arc::new(crate::store::postgres(url)?),
                    place: Place::Postgres,
                })
            }
            Some(dir) => {
                let dir = cli.cwd.join(dir);
                Ok(CaseStore {
                    store: Arc::new(FsStore::with_sessions_dir(&dir)),
                    place: Place::Folder(dir),
                })
            }
            None => {
                let dir = temporary_folder()?;
                Ok(CaseStore {
                    store: Arc::new(FsStore::with_sessions_dir(&dir)),
                    place: Place::Temporary(dir),
                })
            }
        }
    }

    /// After the run: with `keep`, where the sessions are, to say so; else the temporary
    /// folder removed, or the cases' sessions removed from the chosen store (best effort).
    fn finish(self, result: Option<&RunTestsResult>, keep: bool) -> Option<String> {
        if keep {
            return Some(match &self.place {
                Place::Temporary(dir) | Place::Folder(dir) => dir.display().to_string(),
                Place::Postgres => "the PostgreSQL store --store names".to_string(),
            });
        }
        match &self.place {
            Place::Temporary(dir) => {
                let _ = std::fs::remove_dir_all(dir);
            }
            Place::Folder(_) | Place::Postgres => {
                let ids = result
                    .map(|r| r.results.iter().filter_map(|c| c.session_id.as_deref()))
                    .into_iter()
                    .flatten();
                for id in ids {
                    if let Ok(sid) = archmax_machine::store::SessionId::parse(id) {
                        let _ = self.store.delete(&sid);
                    }
                }
            }
        }
        None
    }
}

/// A new, empty folder under the system's temporary directory for one run's sessions.
fn temporary_folder() -> Result<PathBuf, Failure> {
    let base = std::env::temp_dir();
    for n in 0..100u32 {
        let dir = base.join(format!(
            "archmax-test-{}-{}-{n}",
            std::process::id(),
            archmax_machine::clock::now_ms()
        ));
        match std::fs::create_dir(&dir) {
            Ok(()) => return Ok(dir),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => {
                return Err(Failure::Command(format!(
                    "cannot make a folder for the cases' sessions under {}: {e}",
                    base.display()
                )));
            }
        }
    }
    Err(Failure::Command(format!(
        "cannot make a folder for the cases' sessions under {}",
        base.display()
    )))
}

/// A target for a suite that builds none (a disabled workflow).
struct NoTarget;

impl archmax_cases::Target for NoTarget {
    fn harness(&self, _file: &CaseFile) -> Result<Arc<archmax_machine::Harness>, String> {
        Err("no target is built for a disabled suite".to_string())
    }
}

fn runtime() -> Result<tokio::runtime::Runtime, Failure> {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Failure::Crash(format!("cannot start the async runtime: {e}")))
}

/// Where a suite's model answers come from.
#[derive(Clone, Copy)]
enum Cassettes {
    /// The `ARCHMAX_*` endpoint.
    None,
    /// The endpoint, each case's exchanges recorded into its cassette.
    Record,
    /// Each case's cassette; no endpoint.
    Replay,
}

/// Assembles the harness and runs the suite on it, rendering as it goes.
#[allow(clippy::too_many_arguments)]
fn drive(
    cli: &mut Cli<'_>,
    root: &std::path::Path,
    workflow: &str,
    verbose: bool,
    tape: Cassettes,
    suite: Suite,
    spec: archmax_spec::Workflow,
    opts: RunOptions,
    store: Arc<dyn SessionStore>,
) -> Result<RunTestsResult, Failure> {
    let (harness, mut live, tapes) = match tape {
        Cassettes::None => {
            let (h, l) = connect_to(
                cli,
                root,
                store,
                workflow,
                verbose,
                &crate::cassette::Tape::Live,
            )?;
            (h, l, None)
        }
        Cassettes::Record | Cassettes::Replay => {
            let builder = builder(cli, root, workflow).store(store);
            let (builder, tapes) = if let Cassettes::Record = tape {
                let config = model_config(cli, root)?;
                let live_model = endpoint(&config)?;
                let tapes = Arc::new(CaseTapes::record(root, live_model, &config.model));
                let model: Arc<dyn archmax_machine::model::Model> = tapes.clone();
                let builder = builder
                    .model(archmax_machine::ModelSource::Given(model))
                    .mcp_tape(Some(tapes.clone()));
                (builder, tapes)
            } else {
                let cases = suite.selected(opts.filter.as_deref());
                let recorded_model = CaseTapes::recorded_model(root, &cases);
                let tapes = Arc::new(CaseTapes::replay(root));
                let model: Arc<dyn archmax_machine::model::Model> = tapes.clone();
                let source = archmax_machine::ModelSource::Recorded {
                    model,
                    recorded_model,
                };
                (builder.model(source).mcp_tape(Some(tapes.clone())), tapes)
            };
            let (h, l) = connect_with(cli, builder, verbose, None)?;
            (h, l, Some(tapes))
        }
    };
    let harness = Arc::new(harness);
    let rt = runtime()?;
    let tx = live.sender();
    let progress = Progress(tx.clone());
    let target: Box<dyn archmax_cases::Target> = match tapes {
        Some(tapes) => Box::new(TapedTarget {
            harness: Arc::clone(&harness),
            tapes,
        }),
        None => Box::new(SharedTarget(Arc::clone(&harness))),
    };
    let driving = crate::interrupt::Driving::start();
    let task = rt.spawn(async move {
        let r = run_suite(&suite, &spec, target.as_ref(), &opts, &progress).await;
        let _ = tx.send(Message::Suite(Box::new(r)));
    });
    let s = cli.style;
    let mut hinted = false;
    let mut ended = false;
    let result = loop {
        if crate::interrupt::requested() {
            harness.cancel_all();
            if !std::mem::replace(&mut hinted, true) {
                live.write_text(cli, &format!("{}\n", s.yellow(crate::interrupt::HINT)));
            }
        }
        match live.recv(POLL) {
            Ok(Message::Event(e)) => live.render(cli, &e),
            Ok(Message::CaseStart(file, session)) => {
                live.settle_line(cli);
                live.flow = FlowRenderer::new(s);
                let mut text = format!("\n{}\n", s.dim(&format!("{DIAMOND} case {file}")));
                if let Some(id) = session {
                    text.push_str(&format!("  {}\n", s.dim(&format!("session  {id}"))));
                }
                cli.err(&text);
            }
            Ok(Message::CaseEnd(r)) => {
                live.settle_line(cli);
                cli.err(&case_block(&s, &r));
            }
            Ok(Message::Suite(r)) => break *r,
            Ok(Message::Done(_)) => {}
            Err(RecvTimeoutError::Timeout) => {
                // A task that ended sent its results first: a second quiet poll after it
                // ended means it stopped without them.
                if ended {
                    return Err(Failure::Crash(
                        "the suite stopped before reporting its results".to_string(),
                    ));
                }
                ended = task.is_finished();
            }
            Err(RecvTimeoutError::Disconnected) => {
                return Err(Failure::Crash(
                    "the suite stopped before reporting its results".to_string(),
                ));
            }
        }
    };
    drop(driving);
    rt.shutdown_background();
    result.map_err(|e| Failure::Crash(e.to_string()))
}

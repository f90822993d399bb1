//! Running a suite (`sandbox-hooks-cases.md` §6.5–§6.6, §6.10): every case file of the
//! workflow, sorted by path, each on its own session of the target's harness, under the
//! per-case wall clock. A failed structural assertion halts its case (later assertions are
//! `not-executed`); an action the runtime refuses, or the clock running out, kills it.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use archmax_machine::state::Usage;
use archmax_machine::{Harness, Outcome, RunError, SendInput};
use archmax_spec::DiskFiles;
use archmax_spec::workspace::cases::{discover_cases, normalize_from};
use serde_json::{Map, Value};

use crate::assertions::{evaluate, is_structural};
use crate::case::{Case, CaseFile, Seed, Step, parse_case};
use crate::judge::{Judge, grade_record};
use crate::report::{AssertionRecord, CaseResult, RecordStatus, RunTestsResult, reduce_verdict};
use crate::view::View;

/// The per-case wall clock when `tests.caseTimeoutMs` is not set.
pub const DEFAULT_CASE_TIMEOUT_MS: u64 = 120_000;

/// What cases run against: a harness per case (shared or not), and the judge.
pub trait Target: Send + Sync {
    /// The harness case `file` runs on. Its model is the case's: a target may hand each
    /// case its own (a cassette), or share one harness across the suite.
    fn harness(&self, file: &CaseFile) -> Result<Arc<Harness>, String>;

    /// The judge of case `file`'s `grade` steps; `None` when the workflow declares no
    /// `tests.judge`. By default the harness's own model under `tests.judge.model` (else the
    /// harness's default model id) with `tests.judge.modelOptions`.
    fn judge(&self, _file: &CaseFile, harness: &Harness) -> Option<Judge> {
        default_judge(harness, harness.model())
    }

    /// Called once case `file` has its result (a cassette is written here).
    fn finished(&self, _file: &CaseFile, _result: &CaseResult) {}
}

/// The judge `tests.judge` declares over `model`; `None` without `tests.judge`.
pub fn default_judge(
    harness: &Harness,
    model: Arc<dyn archmax_machine::model::Model>,
) -> Option<Judge> {
    let j = harness.spec().tests.as_ref()?.judge.as_ref()?;
    let options = j.model_options.as_ref();
    Some(Judge {
        model,
        model_id: j
            .model
            .clone()
            .unwrap_or_else(|| harness.default_model().to_string()),
        temperature: options.and_then(|o| o.temperature),
        max_tokens: options.and_then(|o| o.max_tokens),
    })
}

/// One harness for every case (isolation is by session id).
pub struct SharedTarget(pub Arc<Harness>);

impl Target for SharedTarget {
    fn harness(&self, _file: &CaseFile) -> Result<Arc<Harness>, String> {
        Ok(Arc::clone(&self.0))
    }
}

/// Told as cases start and end (the live view of `archmax test`, `onCaseStart`).
pub trait Observer: Send + Sync {
    /// Case `file` starts on `session_id` (none for a file that did not parse).
    fn case_start(&self, _file: &CaseFile, _session_id: Option<&str>) {}
    /// Case `result` ended.
    fn case_result(&self, _result: &CaseResult) {}
}

/// An observer that ignores everything.
pub struct Quiet;
impl Observer for Quiet {}

/// The session id of a case file (`sessionIdForCase`).
pub type SessionIdFor = Arc<dyn Fn(&str) -> String + Send + Sync>;

/// How to run a suite.
#[derive(Clone)]
pub struct RunOptions {
    /// A substring of the workspace-relative file path selecting cases.
    pub filter: Option<String>,
    /// Exactly these workspace-relative case files, in this order, instead of the suite's
    /// (`runCase`); `filter` then narrows them further.
    pub files: Option<Vec<String>>,
    /// Whether the target intercepts the agent's own tool calls with a case's mocks
    /// (`agent.toolMocks`). Without it a case declaring mocks dies before anything runs
    /// ([`crate::capability`]). The CLI's harness always does.
    pub tool_mocks: bool,
    /// The per-case wall clock, instead of `tests.caseTimeoutMs` (`runCase`'s
    /// `caseTimeoutMs`).
    pub case_timeout_ms: Option<u64>,
    /// The run's id in default session ids (`test-default-test-run-<run id>-<file>`);
    /// empty: the epoch milliseconds at the start.
    pub run_id: String,
    /// The session id of a case file, instead of the default.
    pub session_id_for_case: Option<SessionIdFor>,
}

impl Default for RunOptions {
    fn default() -> RunOptions {
        RunOptions {
            filter: None,
            files: None,
            tool_mocks: true,
            case_timeout_ms: None,
            run_id: String::new(),
            session_id_for_case: None,
        }
    }
}

/// The suite's settings and cases, read from the workspace.
pub struct Suite {
    /// The workspace root.
    pub root: PathBuf,
    /// The workflow slug.
    pub workflow: String,
    /// Every case file, sorted by path.
    pub files: Vec<CaseFile>,
}

impl Suite {
    /// The suite of `workflow` under `root`.
    pub fn discover(root: &Path, workflow: &str) -> Suite {
        let disk = DiskFiles::new(root);
        let files = discover_cases(&disk, workflow)
            .into_iter()
            .map(|p| CaseFile::new(workflow, &p))
            .collect();
        Suite {
            root: root.to_path_buf(),
            workflow: workflow.to_string(),
            files,
        }
    }

    /// The files `filter` selects.
    pub fn selected(&self, filter: Option<&str>) -> Vec<CaseFile> {
        self.files
            .iter()
            .filter(|f| filter.is_none_or(|s| f.path.contains(s)))
            .cloned()
            .collect()
    }

    /// The files `opts` selects: its exact `files` (discovered or not: one that cannot be
    /// read is that case's failure), else the suite's; narrowed by its `filter`.
    pub fn selection(&self, opts: &RunOptions) -> Vec<CaseFile> {
        let filter = opts.filter.as_deref();
        match &opts.files {
            None => self.selected(filter),
            Some(files) => files
                .iter()
                .filter(|f| filter.is_none_or(|s| f.contains(s)))
                .map(|f| CaseFile::new(&self.workflow, f))
                .collect(),
        }
    }
}

/// A suite as `archmax test` and `runTests` take it before anything runs: its workflow
/// loaded, its cases, the ones a filter selects.
pub struct Plan {
    /// The suite.
    pub suite: Suite,
    /// The workflow's spec.
    pub spec: archmax_spec::Workflow,
    /// The case files the filter selects.
    pub selected: Vec<CaseFile>,
}

impl Plan {
    /// Whether the workflow is out of service (`disabled: true`): no case runs.
    pub fn disabled(&self) -> bool {
        self.spec.disabled == Some(true)
    }
}

/// Why a suite is refused before anything runs: its workflow does not load, or a filter
/// selects no case of it (unless the workflow is disabled, which runs none anyway). The
/// message is the one `archmax test` prints after `Error: `.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct PlanError {
    /// What `archmax test` prints.
    pub message: String,
    /// How many case files the suite holds (0 when the workflow does not load).
    pub discovered: usize,
}

impl RunTestsResult {
    /// The result of a suite refused before anything ran (defined with [`PlanError`], so the
    /// result shapes of [`crate::report`] need nothing of the engine).
    pub fn refused(error: &PlanError) -> RunTestsResult {
        RunTestsResult {
            results: Vec::new(),
            exit_code: 1,
            discovered: error.discovered,
            skipped: None,
            error: Some(error.message.clone()),
        }
    }
}

/// Reads the suite of `workflow` under `root` and selects its cases by `filter` (a substring
/// of the workspace-relative path; empty selects all), as `archmax test` does before it runs
/// anything.
pub fn plan(root: &Path, workflow: &str, filter: Option<&str>) -> Result<Plan, PlanError> {
    let disk = DiskFiles::new(root);
    let filter = filter.filter(|f| !f.is_empty());
    let loaded = archmax_spec::workspace::load_workflow(&disk, workflow, &["skills/".to_string()])
        .map_err(|e| PlanError {
            message: RunError::WorkflowLoad(e).to_string(),
            discovered: 0,
        })?;
    let suite = Suite::discover(root, workflow);
    let selected = suite.selected(filter);
    let plan = Plan {
        spec: loaded.spec,
        selected,
        suite,
    };
    if let Some(f) = filter
        && plan.selected.is_empty()
        && !plan.disabled()
    {
        return Err(PlanError {
            message: format!(
                "no cases matched '{f}' ({} discovered)",
                plan.suite.files.len()
            ),
            discovered: plan.suite.files.len(),
        });
    }
    Ok(plan)
}

/// Why a suite could not run at all.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SuiteError {
    /// `tests.maxConcurrency` above 1.
    #[error(
        "'tests.maxConcurrency' is {0}, but case concurrency is not implemented — cases run sequentially. Set it to 1 or remove the field."
    )]
    Concurrency(u64),
    /// A `tests.config.js` beside the suite.
    #[error(
        "tests.config.js was removed: case-suite settings live under the workflow's 'tests' key (maxConcurrency, caseTimeoutMs, judge). Move them there and delete the file."
    )]
    ConfigFile,
    /// The target could not be built.
    #[error("{0}")]
    Target(String),
}

fn epoch_ms() -> u128 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0)
}

/// Runs `suite` against `target`. A disabled workflow runs nothing (`skipped: "disabled"`,
/// exit 0); an empty selection neither.
pub async fn run_suite(
    suite: &Suite,
    spec: &archmax_spec::Workflow,
    target: &dyn Target,
    opts: &RunOptions,
    observer: &dyn Observer,
) -> Result<RunTestsResult, SuiteError> {
    let discovered = suite.files.len();
    let tests_dir = suite.root.join("workflows").join(&suite.workflow);
    if tests_dir.join("tests.config.js").exists()
        || tests_dir.join("tests").join("tests.config.js").exists()
    {
        return Err(SuiteError::ConfigFile);
    }
    if spec.disabled == Some(true) {
        return Ok(RunTestsResult {
            results: Vec::new(),
            exit_code: 0,
            discovered: 0,
            skipped: Some("disabled"),
            error: None,
        });
    }
    let tests = spec.tests.as_ref();
    if let Some(n) = tests.and_then(|t| t.max_concurrency).filter(|n| *n > 1) {
        return Err(SuiteError::Concurrency(n));
    }
    let timeout_ms = opts
        .case_timeout_ms
        .or_else(|| tests.and_then(|t| t.case_timeout_ms))
        .unwrap_or(DEFAULT_CASE_TIMEOUT_MS);
    let run_id = if opts.run_id.is_empty() {
        epoch_ms().to_string()
    } else {
        opts.run_id.clone()
    };
    let mut results = Vec::new();
    for file in suite.selection(opts) {
        let sid = match &opts.session_id_for_case {
            Some(f) => f(&file.path),
            None => format!(
                "test-default-test-run-{run_id}-{}",
                file.path.replace('/', "-")
            ),
        };
        let result = run_one(suite, &file, &sid, timeout_ms, opts, target, observer).await;
        target.finished(&file, &result);
        observer.case_result(&result);
        results.push(result);
    }
    let exit_code = i32::from(results.iter().any(|r| r.verdict.status == "failed"));
    Ok(RunTestsResult {
        results,
        exit_code,
        discovered,
        skipped: None,
        error: None,
    })
}

/// Whether `path` names a case file of `workflow`'s suite: under `workflows/<workflow>/tests/`,
/// a `.test.yaml` or `.test.yml`, with no empty, `.` or `..` segment (an exact selection must
/// not read outside the suite).
fn is_case_path(workflow: &str, path: &str) -> bool {
    let Some(rel) = path.strip_prefix(&format!("workflows/{workflow}/tests/")) else {
        return false;
    };
    (rel.ends_with(".test.yaml") || rel.ends_with(".test.yml"))
        && rel
            .split(['/', '\\'])
            .all(|seg| !seg.is_empty() && seg != "." && seg != "..")
}

/// A case that never ran: its file did not parse.
fn unreadable(file: &CaseFile, error: String) -> CaseResult {
    CaseResult {
        id: file.path.clone(),
        file: file.path.clone(),
        title: None,
        description: None,
        session_id: None,
        verdict: reduce_verdict(&[], Some(&error)),
        records: Vec::new(),
        skip_reason: None,
        error: Some(error),
        turn_error: None,
        usage: None,
    }
}

async fn run_one(
    suite: &Suite,
    file: &CaseFile,
    sid: &str,
    timeout_ms: u64,
    opts: &RunOptions,
    target: &dyn Target,
    observer: &dyn Observer,
) -> CaseResult {
    if !is_case_path(&suite.workflow, &file.path) {
        observer.case_start(file, None);
        return unreadable(
            file,
            format!(
                "{}: not a case file of workflow '{}' (workflows/{}/tests/<name>.test.yaml)",
                file.path, suite.workflow, suite.workflow
            ),
        );
    }
    let tests_dir = suite
        .root
        .join(format!("workflows/{}/tests", suite.workflow));
    let text = match archmax_spec::disk::read_text_within(
        &tests_dir,
        &suite.root.join(&file.path),
        archmax_spec::disk::MAX_AUTHORED_FILE_BYTES,
    ) {
        Ok(Some(t)) => t,
        Ok(None) => {
            observer.case_start(file, None);
            return unreadable(
                file,
                format!(
                    "{}: cannot read the case file: it does not exist",
                    file.path
                ),
            );
        }
        Err(why) => {
            observer.case_start(file, None);
            return unreadable(
                file,
                format!("{}: cannot read the case file: it {why}", file.path),
            );
        }
    };
    let case = match parse_case(&file.path, &text) {
        Ok(c) => c,
        Err(e) => {
            observer.case_start(file, None);
            return unreadable(file, e);
        }
    };
    let mut result = CaseResult {
        id: file.id.clone(),
        file: file.path.clone(),
        title: Some(case.title.clone()),
        description: Some(case.description.clone()),
        session_id: None,
        verdict: reduce_verdict(&[], None),
        records: Vec::new(),
        skip_reason: None,
        error: None,
        turn_error: None,
        usage: None,
    };
    if let Some(reason) = &case.skip {
        observer.case_start(file, None);
        result.verdict.status = "skipped";
        result.skip_reason = Some(reason.clone());
        return result;
    }
    if let Some(refusal) = crate::capability::refusal(&case, opts.tool_mocks) {
        // Nothing runs: the case dies on its session before its first step.
        result.session_id = Some(sid.to_string());
        observer.case_start(file, Some(sid));
        not_executed_from(&case, 0, &mut result.records);
        result.verdict = reduce_verdict(&result.records, Some(&refusal));
        result.error = Some(refusal);
        return result;
    }
    let harness = match target.harness(file) {
        Ok(h) => h,
        Err(e) => {
            observer.case_start(file, None);
            result.error = Some(e);
            not_executed_from(&case, 0, &mut result.records);
            result.verdict = reduce_verdict(&result.records, result.error.as_deref());
            return result;
        }
    };
    result.session_id = Some(sid.to_string());
    observer.case_start(file, Some(sid));
    let judge = target.judge(file, &harness);
    harness.tool_mocks().set(sid, case.mocks.clone());
    let mut driver = Driver {
        h: &harness,
        sid,
        case: &case,
        judge: judge.as_ref(),
        records: Vec::new(),
        judge_usage: Vec::new(),
        last_usage: None,
        turn_error: None,
        deadline: tokio::time::Instant::now() + Duration::from_millis(timeout_ms),
        timeout_ms,
        id: &file.id,
    };
    let error = match driver.start(suite, &file.path) {
        Err(e) => {
            not_executed_from(&case, 0, &mut driver.records);
            Some(e)
        }
        Ok(()) => driver.steps().await.err(),
    };
    harness.tool_mocks().clear(sid);
    result.usage = driver.usage();
    result.turn_error = driver.turn_error.take();
    result.records = driver.records;
    result.verdict = reduce_verdict(&result.records, error.as_deref());
    result.error = error;
    result
}

/// `<code>: <reason>` of a turn that threw (`turn-error`, `turn-cancelled`,
/// `recursion-limit`); not an agent's raise, whose code is its own and which a case asserts.
fn thrown(outcome: &Outcome) -> Option<String> {
    let exit = outcome.exit.as_ref()?;
    let code = exit.get("code")?.as_str()?;
    if !matches!(code, "turn-error" | "turn-cancelled" | "recursion-limit") {
        return None;
    }
    let reason = exit.get("reason").and_then(Value::as_str).unwrap_or("");
    Some(format!("{code}: {reason}"))
}

/// `not-executed` records for every assertion step from `from` on.
fn not_executed_from(case: &Case, from: usize, records: &mut Vec<AssertionRecord>) {
    for (i, step) in case.steps.iter().enumerate().skip(from) {
        if let Step::Assert { kind, arg } = step {
            records.push(AssertionRecord {
                kind: kind.clone(),
                threshold: (kind == "grade")
                    .then(|| arg.get("atLeast").and_then(Value::as_f64))
                    .flatten(),
                status: RecordStatus::NotExecuted,
                score: None,
                detail: None,
                step: i,
            });
        }
    }
}

/// One case being driven.
struct Driver<'a> {
    h: &'a Arc<Harness>,
    sid: &'a str,
    id: &'a str,
    case: &'a Case,
    judge: Option<&'a Judge>,
    records: Vec<AssertionRecord>,
    judge_usage: Vec<archmax_machine::model::types::Usage>,
    last_usage: Option<Usage>,
    /// The last thrown turn's `<code>: <reason>`.
    turn_error: Option<String>,
    deadline: tokio::time::Instant,
    timeout_ms: u64,
}

impl Driver<'_> {
    /// The start conditions: the trigger resolves, the workspace is seeded.
    fn start(&self, suite: &Suite, file: &str) -> Result<(), String> {
        if let Some(t) = &self.case.trigger {
            self.h.start_state(t).map_err(|e| e.to_string())?;
        }
        if self.case.workspace.is_empty() {
            return Ok(());
        }
        let tests_dir = format!("workflows/{}/tests", suite.workflow);
        let mut files = Map::new();
        for (path, seed) in &self.case.workspace {
            let value = match seed {
                Seed::Inline(v) => v.clone(),
                Seed::From(from) => {
                    let rel = normalize_from(from).map_err(|e| format!("{file}: {e}"))?;
                    let at = format!("{tests_dir}/{rel}");
                    match archmax_spec::disk::read_text_within(
                        &suite.root.join(&tests_dir),
                        std::path::Path::new(&rel),
                        archmax_spec::disk::MAX_AUTHORED_FILE_BYTES,
                    ) {
                        Ok(Some(text)) => Value::String(text),
                        Ok(None) => {
                            return Err(format!(
                                "workspace entry '{path}' references 'from: {from}', but '{at}' does not exist"
                            ));
                        }
                        Err(why) => {
                            return Err(format!(
                                "workspace entry '{path}' references 'from: {from}', but '{at}' cannot be read: it {why}"
                            ));
                        }
                    }
                }
            };
            files.insert(path.clone(), value);
        }
        self.h
            .seed_session(self.sid, &files)
            .map_err(|e| e.to_string())
    }

    /// The case's tokens: the session's cumulative usage plus the judge's calls.
    fn usage(&self) -> Option<Usage> {
        let mut u = self.last_usage.unwrap_or_default();
        for j in &self.judge_usage {
            u.input_tokens += j.input_tokens;
            u.output_tokens += j.output_tokens;
            u.cache_read_tokens += j.cache_read_tokens;
            u.cache_creation_tokens += j.cache_creation_tokens;
        }
        (!u.is_empty()).then_some(u)
    }

    fn timed_out(&self) -> String {
        format!(
            "case '{}' timed out after {}ms (tests.caseTimeoutMs)",
            self.id, self.timeout_ms
        )
    }

    /// Runs one action under the case's clock: on expiry the turn is cancelled and the
    /// case dies.
    async fn act(&self, step: &Step) -> Result<Outcome, String> {
        let h = Arc::clone(self.h);
        let sid = self.sid.to_string();
        let case = self.case;
        let call = async move {
            match step {
                Step::Send(message) => {
                    h.send(
                        &sid,
                        SendInput {
                            message: message.clone(),
                            trigger: case.trigger.clone(),
                            variables: case.variables.clone(),
                        },
                    )
                    .await
                }
                Step::Decide { to, comment } => h.decide(&sid, to, comment.as_deref()).await,
                Step::Deliver { trigger, variables } => {
                    h.deliver(&sid, trigger, variables.clone(), None).await
                }
                Step::Assert { .. } => Err(RunError::EmptyMessage(sid.clone())),
            }
        };
        tokio::pin!(call);
        tokio::select! {
            r = &mut call => r.map_err(|e| e.to_string()),
            () = tokio::time::sleep_until(self.deadline) => {
                self.h.cancel(self.sid);
                // The cancelled turn ends at its next step; wait for it briefly so its
                // session is released before the next case.
                let _ = tokio::time::timeout(Duration::from_secs(5), &mut call).await;
                Err(self.timed_out())
            }
        }
    }

    /// Every step in order; `Err` is the case's death.
    async fn steps(&mut self) -> Result<(), String> {
        let mut view: Option<View> = None;
        for (i, step) in self.case.steps.iter().enumerate() {
            match step {
                Step::Assert { kind, arg } => {
                    let Some(v) = view.as_ref() else {
                        continue;
                    };
                    let recs = if kind == "grade" {
                        if tokio::time::Instant::now() >= self.deadline {
                            not_executed_from(self.case, i, &mut self.records);
                            return Err(self.timed_out());
                        }
                        vec![
                            grade_record(self.judge, arg, i, v, self.sid, &mut self.judge_usage)
                                .await,
                        ]
                    } else {
                        evaluate(kind, arg, i, v)
                    };
                    let halts = is_structural(kind)
                        && recs.iter().any(|r| r.status == RecordStatus::Failed);
                    self.records.extend(recs);
                    if halts {
                        not_executed_from(self.case, i + 1, &mut self.records);
                        return Ok(());
                    }
                }
                action => match self.act(action).await {
                    Ok(outcome) => {
                        self.last_usage = outcome.usage;
                        if let Some(thrown) = thrown(&outcome) {
                            self.turn_error = Some(thrown);
                        }
                        view = Some(View::of(outcome));
                    }
                    Err(e) => {
                        not_executed_from(self.case, i + 1, &mut self.records);
                        return Err(e);
                    }
                },
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::is_case_path;

    #[test]
    fn an_exact_selection_reads_only_the_suites_case_files() {
        assert!(is_case_path("w", "workflows/w/tests/a.test.yaml"));
        assert!(is_case_path("w", "workflows/w/tests/refunds/b.test.yml"));
        for bad in [
            "workflows/w/tests/../../x/tests/a.test.yaml",
            "workflows/w/tests/./a.test.yaml",
            "workflows/w/tests//a.test.yaml",
            "workflows/w/tests/a\\..\\b.test.yaml",
            "workflows/v/tests/a.test.yaml",
            "/etc/workflows/w/tests/a.test.yaml",
            "workflows/w/tests/a.yaml",
        ] {
            assert!(!is_case_path("w", bad), "{bad}");
        }
    }
}

//! `archmax sessions [session] [--workflow] [--json]` (cli digest §4.4), with where each
//! session stands (`--status`, `--older-than`, `--attention`), and `archmax sessions prune`.
//!
//! Decision: unlike the original (cli digest §12, §13 #9), `sessions` does not
//! require the `ARCHMAX_*` model variables. It never calls a model, so the
//! harness is assembled with [`NoModel`], a model that fails if called, and
//! listing works on a machine with no credentials.

use std::sync::Arc;

use archmax_machine::standing::{parse_age, parse_status_words, short_age};
use archmax_machine::state::Park;
use archmax_machine::{
    Harness, PruneOptions, PruneReport, SessionQuery, SessionState, Standing, StandingKind, Status,
};
use serde_json::Value;

use crate::args::Parsed;
use crate::assembly::{NoModel, failure};
use crate::outcome::{decision_context, declared_choices};
use crate::preflight::check_sessions;
use crate::style::{CHECK, Style};
use crate::workspace::resolve_root;
use crate::{Cli, Failure};

/// Runs the command; the exit code, or the failure to report.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let pos = |i: usize| positionals.get(i).and_then(Option::as_deref);
    let pruning = pos(0) == Some("prune");
    let filter = Filter::read(parsed, pruning, pos(0).filter(|_| !pruning))?;
    if parsed.text("at").is_some() || parsed.text("as").is_some() {
        return Err(Failure::Usage(
            "--at and --as apply to 'archmax sessions fork <session> --at <step>'".to_string(),
        ));
    }
    let workflow = if pruning {
        check_prune(cli, parsed, pos(1))?
    } else {
        if pos(1).is_some() {
            return Err(Failure::Usage(format!(
                "unexpected argument '{}' (one session at a time)",
                pos(1).unwrap_or_default()
            )));
        }
        check_sessions(cli, parsed, positionals)?
    };
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    cli.load_root_env(&root);
    cli.header(&workflow, &root, None);
    let harness = offline(cli, parsed, &root, &workflow)?;
    let json = parsed.flag("json");
    if pruning {
        return prune(cli, &harness, pos(1), filter, json);
    }

    match pos(0) {
        Some(id) => detail(cli, &harness, &workflow, id, json),
        None => list(cli, &harness, &filter, json),
    }
}

/// The harness of `workflow` over the store the flags name, assembled with [`NoModel`]: the
/// session commands never call a model.
pub(crate) fn offline(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    root: &std::path::Path,
    workflow: &str,
) -> Result<Harness, Failure> {
    let store = crate::store::open_given(cli, root, parsed.non_empty("store"))?;
    crate::live::builder(cli, root, workflow)
        .store(store)
        .model(archmax_machine::ModelSource::Given(Arc::new(NoModel)))
        .build()
        .map_err(|e| failure(&e))
}

/// The listing's and the prune's selection, as the flags give it.
struct Filter {
    kinds: Vec<StandingKind>,
    older_than_ms: Option<u64>,
    attention: bool,
    dry_run: bool,
}

impl Filter {
    /// Reads `--status`, `--older-than`, `--attention` and `--dry-run`, refusing those that
    /// do not apply (`detail`: the session of the detail view).
    fn read(parsed: &Parsed, pruning: bool, detail: Option<&str>) -> Result<Filter, Failure> {
        let kinds = match parsed.text("status") {
            Some(words) => {
                parse_status_words(words).map_err(|e| Failure::Usage(format!("--status: {e}")))?
            }
            None => Vec::new(),
        };
        let older_than_ms = match parsed.text("older-than") {
            Some(age) => {
                Some(parse_age(age).map_err(|e| Failure::Usage(format!("--older-than: {e}")))?)
            }
            None => None,
        };
        let filter = Filter {
            kinds,
            older_than_ms,
            attention: parsed.flag("attention"),
            dry_run: parsed.flag("dry-run"),
        };
        if filter.dry_run && !pruning {
            return Err(Failure::Usage(
                "--dry-run applies to 'archmax sessions prune'".to_string(),
            ));
        }
        if filter.attention && pruning {
            return Err(Failure::Usage(
                "--attention is a listing; prune by --status and --older-than".to_string(),
            ));
        }
        let selects =
            !filter.kinds.is_empty() || filter.older_than_ms.is_some() || filter.attention;
        if let Some(id) = detail
            && selects
        {
            return Err(Failure::Usage(format!(
                "--status, --older-than and --attention select sessions to list; omit the session '{id}'"
            )));
        }
        Ok(filter)
    }

    fn selects(&self) -> bool {
        !self.kinds.is_empty() || self.older_than_ms.is_some() || self.attention
    }
}

/// `sessions prune`'s checks: the session id when one is given (its record names the
/// workflow assembled), else the workflow slot. Returns the workflow slug.
fn check_prune(cli: &Cli<'_>, parsed: &Parsed, id: Option<&str>) -> Result<String, Failure> {
    match id {
        Some(id) => {
            if parsed.text("status").is_some() || parsed.text("older-than").is_some() {
                return Err(Failure::Usage(format!(
                    "a prune by session id takes no --status or --older-than: it removes '{id}' whatever it stands as"
                )));
            }
            check_sessions(cli, parsed, &[Some(id.to_string())])
        }
        None => check_sessions(cli, parsed, &[]),
    }
}

pub(crate) fn pretty(value: &Value) -> Result<String, Failure> {
    serde_json::to_string_pretty(value)
        .map(|t| format!("{t}\n"))
        .map_err(|e| Failure::Crash(format!("cannot encode the sessions: {e}")))
}

/// The state a parked session waits in: its park record's, else (a parked
/// status without a record) its current state.
fn parked_state(s: &SessionState) -> Option<&str> {
    match &s.park {
        Some(Park::Decision { state, .. } | Park::Input { state, .. }) => Some(state),
        None if matches!(s.status, Status::AwaitingDecision | Status::AwaitingInput) => {
            Some(&s.workflow_state)
        }
        None => None,
    }
}

/// What a session parked for input waits for, and when it is due.
fn waiting(s: &SessionState) -> Option<(&str, Option<&str>)> {
    match &s.park {
        Some(Park::Input {
            reason, resume_at, ..
        }) if !reason.is_empty() => Some((reason, resume_at.as_deref())),
        _ => None,
    }
}

fn due(resume_at: Option<&str>) -> String {
    resume_at.map(|t| format!("  due={t}")).unwrap_or_default()
}

fn detail(
    cli: &mut Cli<'_>,
    harness: &Harness,
    workflow: &str,
    id: &str,
    json: bool,
) -> Result<i32, Failure> {
    let state = harness.session_state(id).map_err(|e| failure(&e))?;
    let summary = harness.session_summary(id).map_err(|e| failure(&e))?;
    let (Some(s), Some(summary)) = (state, summary) else {
        return Err(Failure::Command(format!(
            "no durable session '{id}'. Use 'archmax sessions' to list them."
        )));
    };
    if json {
        let text = pretty(&serde_json::to_value(&summary).unwrap_or(Value::Null))?;
        cli.out(&text);
        return Ok(0);
    }
    let style = cli.style;
    cli.err(&format!(
        "\n{}\n",
        style.green(&style.bold(&format!("{CHECK} session {id}")))
    ));
    let now = archmax_machine::clock::now_ms();
    cli.out(&detail_lines(
        &s,
        &summary.standing,
        now,
        &next_step(workflow, id, &summary.standing),
    ));
    Ok(0)
}

/// What moves a session on from where it stands, as a command; `None` when nothing does
/// (running, done, rejected, a failure the agent raised).
pub(crate) fn next_step(workflow: &str, id: &str, st: &Standing) -> Option<String> {
    let at = st.state.as_deref().unwrap_or("<state>");
    match st.kind {
        StandingKind::AwaitingDecision => Some(format!(
            "archmax decide {id} --to <state>   (or: archmax reply {id} \"<message>\")"
        )),
        StandingKind::AwaitingInput | StandingKind::Waiting => {
            Some(format!("archmax deliver {id} --trigger <id>"))
        }
        _ if st.resumable => Some(format!(
            "archmax run {workflow} \"<message>\" --session {id}   (continues at '{at}')"
        )),
        _ => None,
    }
}

/// The standing in words with how long it has stood so: `idle at 'draft' (not a terminal
/// state) · 3h`.
fn standing_words(st: &Standing, now: u64) -> String {
    match st.age(now) {
        Some(age) if st.kind != StandingKind::Done => {
            format!("{} · {}", st.words(), short_age(age))
        }
        _ => st.words(),
    }
}

/// The standing's words, styled by what they ask of a person.
fn styled_standing(style: &Style, st: &Standing, now: u64) -> String {
    let text = format!("→ {}", standing_words(st, now));
    match st.kind {
        StandingKind::Done => style.green(&text),
        StandingKind::Running => style.cyan(&text),
        StandingKind::Rejected => style.red(&text),
        StandingKind::Failed if !st.resumable => style.red(&text),
        _ => style.yellow(&text),
    }
}

/// The stdout lines of the detail view.
pub(crate) fn detail_lines(
    s: &SessionState,
    st: &Standing,
    now: u64,
    next: &Option<String>,
) -> String {
    let or_q = |t: &str| if t.is_empty() { "?" } else { t }.to_string();
    let class = if s.status.is_finished() {
        "finished"
    } else {
        "open"
    };
    let mut out = format!("  status   {}  ({class})\n", s.status.as_str());
    out.push_str(&format!("  state    {}\n", or_q(&s.workflow_state)));
    if let Some(state) = parked_state(s) {
        out.push_str(&format!("  awaiting {state}\n"));
    }
    if let Some((reason, resume_at)) = waiting(s) {
        out.push_str(&format!("  waiting  {reason}{}\n", due(resume_at)));
    }
    if let (Status::Failed, Some(exit)) = (s.status, &s.exit) {
        out.push_str(&format!("  raised   {}: {}\n", exit.code, exit.reason));
    }
    let since = st
        .since
        .map(|t| {
            format!(
                "  since {} ({} ago)",
                archmax_machine::clock::iso(t),
                short_age(now.saturating_sub(t))
            )
        })
        .unwrap_or_default();
    out.push_str(&format!("  standing {}{since}\n", st.words()));
    if let Some(next) = next {
        out.push_str(&format!("  next     {next}\n"));
    }
    if !s.usage.is_unused() {
        let cost = s
            .usage
            .cost_usd
            .map(|c| format!(", ${c:.4}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  spent    {} tokens ({} in, {} out){cost}\n",
            s.usage.tokens(),
            s.usage.input_tokens,
            s.usage.output_tokens
        ));
    }
    if let Some(from) = &s.forked_from {
        out.push_str(&format!(
            "  forked   from {} step {} at {}\n",
            from.session_id, from.step, from.forked_at
        ));
    }
    if !s.spec_hash.is_empty() {
        out.push_str(&format!("  spec     {}\n", s.spec_hash));
    }
    if s.variables.is_empty() {
        out.push_str("  variables  none set\n");
    } else {
        out.push_str("  variables\n");
        for (name, v) in &s.variables {
            let lock = if v.locked() { " (locked)" } else { "" };
            let value = serde_json::to_string(&v.value).unwrap_or_else(|_| "null".to_string());
            out.push_str(&format!("    {name}{lock} = {value}\n"));
        }
    }
    out
}

fn list(cli: &mut Cli<'_>, harness: &Harness, filter: &Filter, json: bool) -> Result<i32, Failure> {
    let now = archmax_machine::clock::now_ms();
    let query = SessionQuery {
        kinds: filter.kinds.clone(),
        older_than_ms: filter.older_than_ms,
        attention: filter.attention,
    };
    let summaries = harness
        .list_sessions_at(&query, now)
        .map_err(|e| failure(&e))?;
    if json {
        let text = pretty(&serde_json::to_value(&summaries).unwrap_or(Value::Null))?;
        cli.out(&text);
        return Ok(0);
    }
    let rows: Vec<(String, SessionState, Standing)> = summaries
        .into_iter()
        .filter_map(|summary| match harness.session_state(&summary.session_id) {
            Ok(Some(s)) => Some((summary.session_id, s, summary.standing)),
            _ => None,
        })
        .collect();
    let style = cli.style;
    if rows.is_empty() {
        cli.err("\n");
        cli.out(if filter.selects() {
            "No sessions match.\n"
        } else {
            "No durable sessions found.\n"
        });
        return Ok(0);
    }
    let title = if filter.attention {
        format!("{CHECK} sessions needing attention")
    } else {
        format!("{CHECK} sessions")
    };
    cli.err(&format!("\n{}\n", style.green(&style.bold(&title))));
    let mut out = String::new();
    for (id, s, standing) in &rows {
        out.push_str(&list_line(&style, id, s, standing, now));
        if let Some((reason, resume_at)) = waiting(s) {
            out.push_str(&format!("    waiting for: {reason}{}\n", due(resume_at)));
        } else if let Some(state) = parked_state(s) {
            // The state's declared choices from the assembled spec; the
            // evidence the pending record carries (declared, then attached).
            let decl = harness
                .parked_declaration(id)
                .ok()
                .flatten()
                .or_else(|| harness.spec().states.get(state).cloned());
            let decl = decl.as_ref();
            let choices = decl.map(declared_choices).unwrap_or_default();
            let evidence = match &s.park {
                Some(Park::Decision { evidence, .. }) if !evidence.is_empty() => {
                    Some(evidence.as_slice())
                }
                _ => None,
            };
            out.push_str(&decision_context(decl, &choices, evidence));
        }
    }
    cli.out(&out);
    Ok(0)
}

/// One listing line: the original's, then where the session stands.
pub(crate) fn list_line(
    style: &Style,
    id: &str,
    s: &SessionState,
    standing: &Standing,
    now: u64,
) -> String {
    let class = if s.status.is_finished() {
        "finished"
    } else {
        "open"
    };
    let state = if s.workflow_state.is_empty() {
        "?"
    } else {
        &s.workflow_state
    };
    let mut line = format!("  {id}  {}  {class}  state={state}", s.status.as_str());
    if let Some(parked) = parked_state(s) {
        line.push_str(&format!(
            "  {}",
            style.yellow(&format!("awaiting={parked}"))
        ));
    }
    if let (Status::Failed, Some(exit)) = (s.status, &s.exit) {
        line.push_str(&format!("  {}", style.red(&format!("exit={}", exit.code))));
    }
    if !s.variables.is_empty() {
        let names: Vec<&str> = s.variables.keys().map(String::as_str).collect();
        line.push_str(&format!("  vars={}", names.join(",")));
    }
    line.push_str(&format!("  {}", styled_standing(style, standing, now)));
    line.push('\n');
    line
}

/// `sessions prune`: removes what the filter (or the id) names, or with `--dry-run` says
/// what it would remove.
fn prune(
    cli: &mut Cli<'_>,
    harness: &Harness,
    id: Option<&str>,
    filter: Filter,
    json: bool,
) -> Result<i32, Failure> {
    let opts = PruneOptions {
        kinds: filter.kinds,
        older_than_ms: filter.older_than_ms,
        dry_run: filter.dry_run,
        session_id: id.map(str::to_string),
    };
    let report = harness.prune_sessions(&opts).map_err(|e| match e.code() {
        "TypeError" => Failure::Usage(e.to_string()),
        _ => failure(&e),
    })?;
    let code = i32::from(id.is_some() && report.pruned.is_empty());
    if json {
        cli.out(&pretty(
            &serde_json::to_value(&report).unwrap_or(Value::Null),
        )?);
        return Ok(code);
    }
    cli.err(&format!("\n{}\n", prune_title(&cli.style, &report)));
    cli.out(&prune_lines(
        &cli.style,
        &report,
        archmax_machine::clock::now_ms(),
    ));
    Ok(code)
}

/// `✔ pruned 3 sessions`, or the dry run's `⚠ dry run: 3 sessions would be pruned`.
fn prune_title(style: &Style, report: &PruneReport) -> String {
    let n = report.pruned.len();
    let sessions = if n == 1 { "session" } else { "sessions" };
    if report.dry_run {
        style.yellow(&style.bold(&format!(
            "{} dry run: {n} {sessions} would be pruned",
            crate::style::WARN
        )))
    } else {
        style.green(&style.bold(&format!("{CHECK} pruned {n} {sessions}")))
    }
}

/// One line per session pruned (`  <id>  <standing>[  workflow=<w>]`), then one per session
/// left (`  <id>  skipped: <reason>`).
fn prune_lines(style: &Style, report: &PruneReport, now: u64) -> String {
    let mut out = String::new();
    for p in &report.pruned {
        let workflow = p
            .workflow
            .as_deref()
            .map(|w| format!("  workflow={w}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "  {}  {}{workflow}\n",
            p.session_id,
            standing_words(&p.standing, now)
        ));
    }
    for s in &report.skipped {
        out.push_str(&format!(
            "  {}  {}\n",
            s.session_id,
            style.yellow(&format!("skipped: {}", s.reason))
        ));
    }
    out
}

//! `archmax sessions history <session>` (every committed step of a session) and `archmax
//! sessions fork <session> --at <step> [--as <new-id>]` (a new session from one of them);
//! like the other session commands, no model is needed.

use archmax_machine::HistoryStep;
use archmax_machine::standing::short_age;
use serde_json::Value;

use crate::args::Parsed;
use crate::assembly::failure;
use crate::preflight::check_sessions;
use crate::sessions::{detail_lines, next_step, offline, pretty};
use crate::style::{CHECK, Style};
use crate::workspace::resolve_root;
use crate::{Cli, Failure};

/// Runs `sessions history|fork`; `positionals[0]` is the subcommand.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let sub = positionals
        .first()
        .and_then(Option::as_deref)
        .unwrap_or_default();
    let Some(id) = positionals.get(1).and_then(Option::as_deref) else {
        return Err(Failure::Usage(format!(
            "'archmax sessions {sub}' needs a session id"
        )));
    };
    for flag in ["status", "older-than"] {
        if parsed.text(flag).is_some() {
            return Err(Failure::Usage(format!(
                "--{flag} selects sessions to list; 'archmax sessions {sub}' takes one session"
            )));
        }
    }
    if parsed.flag("attention") || parsed.flag("dry-run") {
        return Err(Failure::Usage(format!(
            "--attention and --dry-run do not apply to 'archmax sessions {sub}'"
        )));
    }
    let at = if sub == "fork" {
        Some(step_flag(parsed)?)
    } else {
        if parsed.text("at").is_some() || parsed.text("as").is_some() {
            return Err(Failure::Usage(
                "--at and --as apply to 'archmax sessions fork <session> --at <step>'".to_string(),
            ));
        }
        None
    };
    let workflow = check_sessions(cli, parsed, &[Some(id.to_string())])?;
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    cli.load_root_env(&root);
    cli.header(&workflow, &root, None);
    let harness = offline(cli, parsed, &root, &workflow)?;
    let json = parsed.flag("json");
    match at {
        Some(at) => {
            let summary = harness
                .fork_session(id, at, parsed.non_empty("as"))
                .map_err(|e| failure(&e))?;
            if json {
                cli.out(&pretty(
                    &serde_json::to_value(&summary).unwrap_or(Value::Null),
                )?);
                return Ok(0);
            }
            let fork = summary.session_id.as_str();
            let style = cli.style;
            cli.err(&format!(
                "\n{}\n",
                style.green(&style.bold(&format!("{CHECK} forked {id} at step {at} into {fork}")))
            ));
            let state = harness
                .session_state(fork)
                .map_err(|e| failure(&e))?
                .unwrap_or_default();
            cli.out(&detail_lines(
                &state,
                &summary.standing,
                archmax_machine::clock::now_ms(),
                &next_step(&workflow, fork, &summary.standing).or_else(|| {
                    (state.status == archmax_machine::Status::Running).then(|| {
                        format!(
                            "archmax run {workflow} \"<message>\" --session {fork}   (the step was inside a turn: a message goes on from it)"
                        )
                    })
                }),
            ));
            Ok(0)
        }
        None => {
            let Some(steps) = harness.session_history(id).map_err(|e| failure(&e))? else {
                return Err(Failure::Command(format!(
                    "no durable session '{id}'. Use 'archmax sessions' to list them."
                )));
            };
            if json {
                cli.out(&pretty(
                    &serde_json::to_value(&steps).unwrap_or(Value::Null),
                )?);
                return Ok(0);
            }
            let style = cli.style;
            let n = steps.len();
            cli.err(&format!(
                "\n{}\n",
                style.green(&style.bold(&format!(
                    "{CHECK} session {id}: {n} step{}",
                    if n == 1 { "" } else { "s" }
                )))
            ));
            cli.out(&history_lines(
                &style,
                &steps,
                archmax_machine::clock::now_ms(),
            ));
            cli.err(&format!(
                "\n  fork from a step: archmax sessions fork {id} --at <step> [--as <new-id>]\n"
            ));
            Ok(0)
        }
    }
}

/// `--at <step>`: required, a whole number from 1.
fn step_flag(parsed: &Parsed) -> Result<u64, Failure> {
    let Some(text) = parsed.text("at") else {
        return Err(Failure::Usage(
            "'archmax sessions fork' needs --at <step> ('archmax sessions history <session>' lists the steps)".to_string(),
        ));
    };
    match text.trim().parse::<u64>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(Failure::Usage(format!(
            "--at: expected a step number (a whole number from 1), got '{text}'"
        ))),
    }
}

/// One line per step: `  3  12:04:11 (2h ago)  review  awaiting_decision  <what>  35 tokens`.
fn history_lines(style: &Style, steps: &[HistoryStep], now: u64) -> String {
    let width = steps.iter().map(|s| s.state.len()).max().unwrap_or(0);
    let status_width = steps
        .iter()
        .map(|s| s.status.as_str().len())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for s in steps {
        let when =
            s.at.as_deref()
                .map(|t| {
                    let ago = archmax_machine::clock::parse_iso(t)
                        .map(|ms| format!(" ({} ago)", short_age(now.saturating_sub(ms))))
                        .unwrap_or_default();
                    format!("{}{ago}", t.get(..19).unwrap_or(t).replace('T', " "))
                })
                .unwrap_or_else(|| "?".to_string());
        let spend = match (s.tokens, s.cost_usd) {
            (0, None) => String::new(),
            (t, Some(c)) => format!("  {t} tokens ${c:.4}"),
            (t, None) => format!("  {t} tokens"),
        };
        out.push_str(&format!(
            "  {:>3}  {when}  {:<width$}  {}  {}{}\n",
            s.step,
            s.state,
            style.cyan(&format!("{:<status_width$}", s.status.as_str())),
            s.what,
            style.dim(&spend),
        ));
    }
    out
}

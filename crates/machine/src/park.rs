//! Parks: what a session records when it stops for a person or for the outside
//! world, and the texts around it.

/// `archmax_wait`'s `until`: a relative duration (`30m`, `2h`, `1d`, integer plus
/// `ms|s|m|h|d`) or an ISO-8601 instant; the absolute `resumeAt` in epoch ms.
pub fn parse_until(raw: &str, now_ms: u64) -> Result<u64, String> {
    let v = raw.trim();
    if v.is_empty() {
        return Err("'until' is empty.".to_string());
    }
    let digits = v.bytes().take_while(u8::is_ascii_digit).count();
    if digits > 0 {
        let (num, unit) = v.split_at(digits);
        let factor = match unit {
            "ms" => Some(1),
            "s" => Some(1000),
            "m" => Some(60_000),
            "h" => Some(3_600_000),
            "d" => Some(86_400_000),
            _ => None,
        };
        if let Some(factor) = factor {
            let amount: u64 = num.parse().unwrap_or(0);
            if amount == 0 {
                return Err(format!("'until' must be a positive duration; got '{v}'."));
            }
            return Ok(now_ms.saturating_add(amount.saturating_mul(factor)));
        }
    }
    match parse_instant(v) {
        Some(ms) => Ok(ms.max(now_ms)),
        None => Err(format!(
            "'until' value '{v}' is neither a duration nor an instant."
        )),
    }
}

/// The wait refusal: the problem followed by what is accepted.
pub fn until_error(problem: &str) -> String {
    format!(
        "archmax_wait rejected: {problem} Expected a relative duration ('30m', '2h', '1d' — integer plus ms|s|m|h|d) or an absolute ISO-8601 instant ('2026-08-13T09:00:00Z')."
    )
}

fn num(s: &str) -> Option<i64> {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        .then(|| s.parse().ok())
        .flatten()
}

/// Days since 1970-01-01 of a civil date (Howard Hinnant's algorithm).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// `YYYY-MM-DD[( |T)HH:MM[:SS[.frac]][Z|±HH[:]MM]]`, as epoch ms (no offset = UTC).
pub fn parse_instant(v: &str) -> Option<u64> {
    let date = v.get(..10)?;
    let (y, rest) = date.split_at(4);
    let (y, m, d) = (num(y)?, num(rest.get(1..3)?)?, num(rest.get(4..6)?)?);
    if rest.as_bytes().first() != Some(&b'-')
        || rest.as_bytes().get(3) != Some(&b'-')
        || !(1..=12).contains(&m)
        || !(1..=31).contains(&d)
    {
        return None;
    }
    let mut ms = days_from_civil(y, m, d) * 86_400_000;
    let time = &v[10..];
    if !time.is_empty() {
        let t = time.strip_prefix('T').or_else(|| time.strip_prefix(' '))?;
        let (hh, mm) = (num(t.get(..2)?)?, num(t.get(3..5)?)?);
        if t.as_bytes().get(2) != Some(&b':') || hh > 23 || mm > 59 {
            return None;
        }
        ms += (hh * 3600 + mm * 60) * 1000;
        let mut rest = &t[5..];
        if let Some(r) = rest.strip_prefix(':') {
            let ss = num(r.get(..2)?)?;
            if ss > 60 {
                return None;
            }
            ms += ss * 1000;
            rest = &r[2..];
            if let Some(frac) = rest.strip_prefix('.') {
                let digits: String = frac.chars().take_while(char::is_ascii_digit).collect();
                if digits.is_empty() {
                    return None;
                }
                let padded = format!("{digits:0<3}");
                ms += num(&padded[..3])?;
                rest = &frac[digits.len()..];
            }
        }
        match rest {
            "" | "Z" => {}
            off => {
                let sign = match off.as_bytes().first() {
                    Some(b'+') => 1,
                    Some(b'-') => -1,
                    _ => return None,
                };
                let o = off[1..].replace(':', "");
                if o.len() != 4 {
                    return None;
                }
                let (oh, om) = (num(&o[..2])?, num(&o[2..])?);
                ms -= sign * (oh * 3600 + om * 60) * 1000;
            }
        }
    }
    u64::try_from(ms).ok()
}

/// How a parked reply-only turn opens, by what came last.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReplyCase {
    /// A person's message to a session awaiting a decision.
    PersonWrote,
    /// The agent parked for input.
    Waiting,
    /// A decision routed the run into another human state.
    Routed,
    /// The agent just handed the run to a person.
    HandedOver,
}

/// The reply-only directive under `## This run is parked`.
pub fn directive(case: ReplyCase, state: &str, title: Option<&str>, reason: &str) -> String {
    let label = match title {
        Some(t) => format!("'{state}' ({t})"),
        None => format!("'{state}'"),
    };
    let opening = match case {
        ReplyCase::PersonWrote => format!(
            "This run is parked at the {label} checkpoint and a person is deciding what happens next. Answer the message in front of you from what the conversation already shows: what has been done, and that the decision is with them. You cannot make that decision, predict it, or announce it."
        ),
        ReplyCase::Waiting => format!(
            "You have parked this run: it stays in {label} until something arrives from outside ({reason}). Tell whoever you are talking to what you have done and what you are waiting for."
        ),
        ReplyCase::Routed => format!(
            "A decision has routed this run to {label}, which is now waiting for a person's decision. Tell whoever you are talking to where the run stands and that it is with a reviewer — do not promise what they will decide."
        ),
        ReplyCase::HandedOver => format!(
            "You have just handed this run to a person: {label} is now waiting for their decision, and your own work here is finished. Tell whoever you are talking to what you did and that it is now with a reviewer — do not promise what they will decide."
        ),
    };
    format!(
        "{opening}\n\nWrite one short message to them, in your own voice, and nothing else. Do not call any tool: every call on this turn is refused, so you cannot read, write, move the run, or do any further work, and the run does not continue when you finish — it stays parked until someone else acts."
    )
}

/// The text of a successful wait.
pub fn waiting_text(state: &str, resume_at: Option<&str>) -> String {
    let mut t = format!(
        "Waiting in state '{state}'. The run is parked here and will continue in this same state when an event is delivered; stop working now."
    );
    if let Some(at) = resume_at {
        t.push_str(&format!(
            " Nothing is scheduled by the runtime: {at} is recorded for whoever wakes the run, and an earlier event resumes you just the same."
        ));
    }
    t
}

/// The `[decision]` runtime note.
pub fn decision_note(
    from: &str,
    target: &str,
    kind: Option<&str>,
    comment: Option<&str>,
) -> String {
    let label = match kind.filter(|k| *k != "none") {
        Some(k) => format!("{k} → '{target}'"),
        None => format!("'{target}'"),
    };
    let comment = comment
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .map_or(".".to_string(), |c| format!(": {c}."));
    format!(
        "[decision] A human selected {label} at the '{from}' checkpoint{comment} The run has already been routed: you are now in '{target}'. Do its work and continue from here."
    )
}

/// The `[event]` runtime note.
pub fn event_note(
    trigger: &str,
    state: &str,
    variables: &serde_json::Map<String, serde_json::Value>,
    with_message: bool,
) -> String {
    let detail = if variables.is_empty() {
        ".".to_string()
    } else {
        let parts: Vec<String> = variables
            .iter()
            .map(|(k, v)| format!("{k}={}", archmax_spec::jsfmt::json_of(v)))
            .collect();
        format!(": {} (also readable as run variables).", parts.join(", "))
    };
    let tail = if with_message {
        " The person's message that came with it follows."
    } else {
        ""
    };
    format!(
        "[event] '{trigger}' arrived while the run waited in '{state}'{detail} You are still in '{state}'; continue from here.{tail}"
    )
}

/// The most evidence paths one move may attach.
pub const MAX_EVIDENCE: usize = 20;

/// `archmax_advance`'s `evidence`: paths attached for the person deciding next,
/// canonical and de-duplicated; `Err` is the refusal text.
pub fn evidence_arg(
    args: &serde_json::Value,
    to: &str,
    into_human: bool,
) -> Result<Vec<String>, String> {
    let list: Vec<&str> =
        match args.get("evidence") {
            None | Some(serde_json::Value::Null) => return Ok(Vec::new()),
            Some(serde_json::Value::Array(items)) => {
                items.iter().filter_map(serde_json::Value::as_str).collect()
            }
            Some(_) => return Err(
                "archmax_advance rejected: invalid arguments — evidence: expected a list of paths"
                    .into(),
            ),
        };
    if list.is_empty() {
        return Ok(Vec::new());
    }
    if !into_human {
        return Err(format!(
            "archmax_advance rejected: evidence can only be attached when advancing into a human decision state, and '{to}' is not one — nothing would present it. Call again without 'evidence'."
        ));
    }
    if list.len() > MAX_EVIDENCE {
        return Err(format!(
            "archmax_advance rejected: {} evidence paths were attached; at most {MAX_EVIDENCE} may be. Attach the artifacts the decision actually rests on.",
            list.len()
        ));
    }
    let mut out: Vec<String> = Vec::new();
    for raw in list {
        let c = archmax_kernel::canonical::canonicalize(raw.trim());
        if c.escapes {
            return Err(format!(
                "archmax_advance rejected: evidence path '{raw}' points outside the workspace."
            ));
        }
        if c.path.is_empty() {
            return Err("archmax_advance rejected: an evidence path is empty — name a file, not the workspace root.".into());
        }
        let first = c.path.split('/').next().unwrap_or_default();
        if archmax_kernel::zones::RUN_INTERNAL.contains(&first) {
            return Err(format!(
                "archmax_advance rejected: evidence path '{raw}' addresses a runtime-internal area, which is not readable — attach what you wrote under 'scratchpad/'."
            ));
        }
        if !out.contains(&c.path) {
            out.push(c.path);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn until_takes_durations_and_instants() {
        let now = 1_772_357_400_000;
        assert_eq!(parse_until("30m", now), Ok(now + 1_800_000));
        assert_eq!(parse_until(" 1d ", now), Ok(now + 86_400_000));
        assert_eq!(
            parse_until("0h", now),
            Err("'until' must be a positive duration; got '0h'.".into())
        );
        assert_eq!(parse_until("", now), Err("'until' is empty.".into()));
        assert_eq!(
            parse_until("soon", now),
            Err("'until' value 'soon' is neither a duration nor an instant.".into())
        );
        assert_eq!(
            parse_until("2026-03-01T10:30:00Z", now).map(crate::clock::iso),
            Ok("2026-03-01T10:30:00.000Z".into())
        );
        assert_eq!(
            parse_until("2026-03-01T11:30:00+01:00", now).map(crate::clock::iso),
            Ok("2026-03-01T10:30:00.000Z".into())
        );
        assert_eq!(
            parse_until("2026-03-02", now).map(crate::clock::iso),
            Ok("2026-03-02T00:00:00.000Z".into())
        );
    }

    #[test]
    fn notes_read_as_specified() {
        assert_eq!(
            decision_note("review", "approved", Some("approve"), Some("looks right")),
            "[decision] A human selected approve → 'approved' at the 'review' checkpoint: looks right. The run has already been routed: you are now in 'approved'. Do its work and continue from here."
        );
        let mut vars = serde_json::Map::new();
        vars.insert("amount".into(), serde_json::json!(12));
        assert_eq!(
            event_note("payment", "poll", &vars, true),
            "[event] 'payment' arrived while the run waited in 'poll': amount=12 (also readable as run variables). You are still in 'poll'; continue from here. The person's message that came with it follows."
        );
    }
}

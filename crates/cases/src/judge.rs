//! `grade` steps (`sandbox-hooks-cases.md` §6.9): the judge model reads the evidence of the
//! case's session and answers a JSON verdict; its score, clamped to 0..1, must reach
//! `atLeast`. An unreadable answer gets one retry.

use std::sync::Arc;

use archmax_machine::model::Model;
use archmax_machine::model::types::{ChatMessage, ChatRequest, ModelRole, Usage};
use serde_json::Value;

use crate::report::{AssertionRecord, RecordStatus};
use crate::view::{Entry, View};

/// Each rendered value of the evidence is capped at this many characters.
const VALUE_CAP: usize = 800;
/// The record's budget: the oldest entries are dropped past it (the newest is kept).
const RECORD_BUDGET: usize = 12_000;

const SYSTEM: &str = "You grade whether an AI assistant's work meets one yes/no criterion. Judge what the user was told only by the final reply, and what the assistant did only by the record of its actions. Reply with JSON only: {\"score\": number between 0 and 1, \"pass\": boolean, \"reason\": string}. A score of 1 means the criterion is fully met, 0 means not at all. Keep the reason to one to three sentences.";

const REMINDER: &str = "Your previous reply could not be read as JSON. Reply with the JSON object only — no prose, no code fences: {\"score\": number, \"pass\": boolean, \"reason\": string}";

/// The judge: a model and how to ask it.
#[derive(Clone)]
pub struct Judge {
    /// The model grade steps go to.
    pub model: Arc<dyn Model>,
    /// The model id (`tests.judge.model`, else the harness's default).
    pub model_id: String,
    /// `tests.judge.modelOptions.temperature`.
    pub temperature: Option<f64>,
    /// `tests.judge.modelOptions.maxTokens`.
    pub max_tokens: Option<u64>,
}

fn cap(text: &str) -> String {
    let n = text.chars().count();
    if n <= VALUE_CAP {
        return text.to_string();
    }
    let head: String = text.chars().take(VALUE_CAP).collect();
    format!("{head} …(+{} chars)", n - VALUE_CAP)
}

/// The evidence: the numbered record (within its budget) and the final reply.
pub fn evidence(view: &View) -> (String, String) {
    let reply = view.outcome.reply.trim().to_string();
    let mut entries: Vec<String> = view
        .record
        .iter()
        .map(|e| match e {
            Entry::Message(t) => format!("[message] {}", cap(t)),
            Entry::Note(kind, t) => format!("[runtime:{kind}] {}", cap(t)),
            Entry::Call(i) => {
                let c = &view.calls[*i];
                let input = cap(&c.input.to_string());
                match &c.output {
                    Some(o) => format!(
                        "[tool] {} input={input} → {} output={}",
                        c.name,
                        c.status.as_str(),
                        cap(&Value::String(o.clone()).to_string())
                    ),
                    None => format!(
                        "[tool] {} input={input} → {} (no output recorded)",
                        c.name,
                        c.status.as_str()
                    ),
                }
            }
        })
        .collect();
    if matches!(view.record.last(), Some(Entry::Message(t)) if t.trim() == reply) {
        entries.pop();
    }
    let numbered: Vec<String> = entries
        .iter()
        .enumerate()
        .map(|(i, e)| format!("{}. {e}", i + 1))
        .collect();
    let mut kept: Vec<&String> = Vec::new();
    let mut used = 0;
    for e in numbered.iter().rev() {
        if !kept.is_empty() && used + e.len() > RECORD_BUDGET {
            break;
        }
        used += e.len() + 1;
        kept.push(e);
    }
    kept.reverse();
    let omitted = numbered.len() - kept.len();
    let mut record = String::new();
    if omitted > 0 {
        let word = if omitted == 1 { "entry" } else { "entries" };
        record.push_str(&format!(
            "… {omitted} earlier {word} omitted (evidence budget)\n"
        ));
    }
    record.push_str(
        &kept
            .iter()
            .map(|s| s.as_str())
            .collect::<Vec<_>>()
            .join("\n"),
    );
    if record.is_empty() {
        record = "(no tool calls or intermediate messages recorded)".to_string();
    }
    let reply = if reply.is_empty() {
        "(empty)".to_string()
    } else {
        reply
    };
    (record, reply)
}

/// The first balanced `{…}` block of `text` that parses to a JSON object (string-aware).
pub fn verdict_object(text: &str) -> Option<serde_json::Map<String, Value>> {
    let chars: Vec<(usize, char)> = text.char_indices().collect();
    for (k, &(start, c)) in chars.iter().enumerate() {
        if c != '{' {
            continue;
        }
        let (mut depth, mut in_str, mut esc) = (0i32, false, false);
        for &(at, d) in &chars[k..] {
            if in_str {
                match (esc, d) {
                    (true, _) => esc = false,
                    (false, '\\') => esc = true,
                    (false, '"') => in_str = false,
                    _ => {}
                }
                continue;
            }
            match d {
                '"' => in_str = true,
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth == 0 {
                        if let Ok(Value::Object(m)) =
                            serde_json::from_str::<Value>(&text[start..at + 1])
                        {
                            return Some(m);
                        }
                        break;
                    }
                }
                _ => {}
            }
        }
    }
    None
}

/// A verdict's score, clamped to 0..1 (`Number(score ?? 0)`; unreadable is 0).
fn score_of(m: &serde_json::Map<String, Value>) -> f64 {
    let x = match m.get("score") {
        Some(Value::Number(n)) => n.as_f64().unwrap_or(0.0),
        Some(Value::String(s)) => s.trim().parse().unwrap_or(0.0),
        Some(Value::Bool(b)) => f64::from(u8::from(*b)),
        _ => 0.0,
    };
    if x.is_nan() { 0.0 } else { x.clamp(0.0, 1.0) }
}

impl Judge {
    async fn ask(
        &self,
        messages: Vec<ChatMessage>,
        session: &str,
    ) -> Result<(String, Option<Usage>), String> {
        let mut req = ChatRequest::new(self.model_id.clone(), messages);
        req.temperature = self.temperature;
        req.max_tokens = self.max_tokens;
        req.session = Some(session.to_string());
        req.role = ModelRole::Judge;
        let r = self.model.complete(&req).await.map_err(|e| e.to_string())?;
        Ok((r.message.content.unwrap_or_default(), r.usage))
    }

    /// Grades `criterion` over `view`: the score and reason (and the tokens spent).
    pub async fn grade(
        &self,
        criterion: &str,
        view: &View,
        session: &str,
        usage: &mut Vec<Usage>,
    ) -> Result<(f64, Option<String>), String> {
        let (record, reply) = evidence(view);
        let human = format!(
            "Criterion: {criterion}\n\nWhat the assistant did, in order:\n{record}\n\nFinal reply to the user:\n{reply}"
        );
        let mut messages = vec![ChatMessage::system(SYSTEM), ChatMessage::user(human)];
        let (first, u) = self.ask(messages.clone(), session).await?;
        usage.extend(u);
        let parsed = match verdict_object(&first) {
            Some(m) => Some(m),
            None => {
                messages.push(ChatMessage::assistant(Some(first), Vec::new()));
                messages.push(ChatMessage::user(REMINDER));
                let (second, u) = self.ask(messages, session).await?;
                usage.extend(u);
                verdict_object(&second)
            }
        };
        Ok(match parsed {
            Some(m) => (
                score_of(&m),
                m.get("reason").and_then(Value::as_str).map(str::to_string),
            ),
            None => (
                0.0,
                Some("grader returned no readable JSON verdict".to_string()),
            ),
        })
    }
}

/// The record of a `grade` step.
pub async fn grade_record(
    judge: Option<&Judge>,
    arg: &Value,
    step: usize,
    view: &View,
    session: &str,
    usage: &mut Vec<Usage>,
) -> AssertionRecord {
    let criterion = arg
        .get("closedQA")
        .and_then(Value::as_str)
        .unwrap_or_default();
    let at_least = arg.get("atLeast").and_then(Value::as_f64).unwrap_or(1.0);
    let mut rec = AssertionRecord {
        kind: "grade.closedQA".to_string(),
        threshold: Some(at_least),
        status: RecordStatus::Failed,
        score: Some(0.0),
        detail: None,
        step,
    };
    let Some(judge) = judge else {
        rec.detail = Some(format!(
            "{criterion} (grading model unavailable: declare 'tests: {{ judge: ... }}' in workflow.yaml)"
        ));
        return rec;
    };
    match judge.grade(criterion, view, session, usage).await {
        Ok((score, reason)) => {
            rec.score = Some(score);
            if score >= at_least {
                rec.status = RecordStatus::Passed;
            }
            rec.detail = Some(match reason {
                Some(r) => format!("{criterion}: {r}"),
                None => criterion.to_string(),
            });
        }
        Err(e) => {
            rec.detail = Some(format!("{criterion}: {e}"));
        }
    }
    rec
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_object_block_wins_and_scores_clamp() {
        let m =
            verdict_object("Sure! {not json} then {\"score\": 1.7, \"reason\": \"a } in text\"}")
                .unwrap();
        assert_eq!(score_of(&m), 1.0);
        assert_eq!(m.get("reason").and_then(Value::as_str), Some("a } in text"));
        let m = verdict_object("{\"score\": -2}").unwrap();
        assert_eq!(score_of(&m), 0.0);
        assert!(verdict_object("no braces").is_none());
        assert_eq!(
            cap(&"x".repeat(801)),
            format!("{} …(+1 chars)", "x".repeat(800))
        );
    }
}

//! What a run reports: one record per assertion (per token for `reply`), a case's verdict,
//! the suite's result (`sandbox-hooks-cases.md` §6.6). These cross to JS as JSON.

use archmax_machine::state::Usage;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// An assertion record's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
#[ts(export, rename = "AssertionStatus")]
pub enum RecordStatus {
    /// It held.
    Passed,
    /// It did not.
    Failed,
    /// An earlier structural failure or a death stopped the case before it.
    NotExecuted,
}

/// What one assertion found.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields)]
pub struct AssertionRecord {
    /// `reachedState`, `reply.includes`, `grade.closedQA`, …
    pub kind: String,
    /// A grade's `atLeast`; `null` for every other kind.
    #[ts(type = "number | null")]
    pub threshold: Option<f64>,
    /// Passed, failed or not executed.
    pub status: RecordStatus,
    /// A grade's score (0..1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub score: Option<f64>,
    /// What was checked and, on failure, what was found.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
    /// The index of the step in `steps`.
    #[ts(type = "number")]
    pub step: usize,
}

impl AssertionRecord {
    /// A record of `kind` at `step`.
    pub fn new(kind: impl Into<String>, step: usize, passed: bool, detail: Option<String>) -> Self {
        AssertionRecord {
            kind: kind.into(),
            threshold: None,
            status: if passed {
                RecordStatus::Passed
            } else {
                RecordStatus::Failed
            },
            score: None,
            detail,
            step,
        }
    }

    /// The failure line of this record: `<kind>: <detail>` (or `<kind>`), a grade's with
    /// ` (score <s> < <threshold>)`.
    pub fn failure(&self) -> String {
        let mut s = match &self.detail {
            Some(d) => format!("{}: {d}", self.kind),
            None => self.kind.clone(),
        };
        if let (Some(score), Some(t)) = (self.score, self.threshold) {
            s.push_str(&format!(" (score {} < {})", num(score), num(t)));
        }
        s
    }
}

/// A number as JS prints it (`1`, `0.5`).
pub fn num(x: f64) -> String {
    archmax_spec::yaml::number_to_json(x).to_string()
}

/// A case's verdict.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[ts(export, rename = "CaseVerdict")]
pub struct Verdict {
    /// `passed`, `failed` or `skipped`.
    #[ts(type = r#""passed" | "failed" | "skipped""#)]
    pub status: &'static str,
    /// Why it failed, one line per failed record (a death's error first).
    pub failures: Vec<String>,
}

/// One case's result.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields)]
pub struct CaseResult {
    /// The case id (`refunds/approved`); the file path when the file did not parse.
    pub id: String,
    /// The workspace-relative file.
    pub file: String,
    /// The case's title.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The case's description.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The session the case ran on.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    /// Passed, failed or skipped, and why.
    pub verdict: Verdict,
    /// Every assertion record, in step order.
    pub records: Vec<AssertionRecord>,
    /// The `skip:` reason of a skipped case.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub skip_reason: Option<String>,
    /// Why the case died (an action refused, a timeout, an unreadable file).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// Why the case's last failed turn threw (`<code>: <reason>`: a model failure, a
    /// cancellation, the step limit), when one did: such a turn ends the session `failed`
    /// and the case's assertions go on (0.9.0), so this says what they saw.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub turn_error: Option<String>,
    /// The tokens the case's session spent (the agent's calls and the judge's).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
}

/// A suite's result.
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields)]
pub struct RunTestsResult {
    /// One per selected case, in path order.
    pub results: Vec<CaseResult>,
    /// 1 when any case failed, else 0.
    pub exit_code: i32,
    /// How many case files the suite holds (before the filter).
    #[ts(type = "number")]
    pub discovered: usize,
    /// `disabled` when the workflow is disabled and nothing ran.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[ts(type = r#""disabled""#)]
    pub skipped: Option<&'static str>,
    /// Why no case ran although the suite was asked for (its workflow does not load, a filter
    /// selects no case): what `archmax test` prints, with `exitCode` 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The verdict of `records` (and a death's `error`): failed iff a record failed or the case
/// died; `not-executed` records never fail a case.
pub fn reduce_verdict(records: &[AssertionRecord], error: Option<&str>) -> Verdict {
    let mut failures: Vec<String> = error.map(str::to_string).into_iter().collect();
    failures.extend(
        records
            .iter()
            .filter(|r| r.status == RecordStatus::Failed)
            .map(AssertionRecord::failure),
    );
    Verdict {
        status: if failures.is_empty() {
            "passed"
        } else {
            "failed"
        },
        failures,
    }
}

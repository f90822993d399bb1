//! The `archmax test` engine: a workflow's `tests/*.test.yaml` cases run against the real
//! harness with mocks at its edges, their assertions checked, `grade` steps judged by a model;
//! and cassettes, which record a case's model exchanges so a suite replays offline.
//!
//! [`case`] reads a case file (validated by `archmax_spec::case`, the same checks
//! `archmax validate` runs); [`engine`] drives each case on its own session and records
//! what its assertions found ([`assertions`], over the [`view`] of the session); [`judge`]
//! grades `grade` steps; [`report`] holds the result shapes hosts read; [`capability`] refuses
//! mocks a target cannot intercept; [`serialize`] writes a case document back as YAML.

#![cfg_attr(test, allow(clippy::unwrap_used, clippy::panic))]

pub mod assertions;
pub mod capability;
pub mod case;
/// Cassettes: the model exchanges of a run (`archmax_machine::model::cassette`), and the
/// per-case tapes `archmax test --record`/`--replay` keep.
pub mod cassette {
    pub use crate::tapes::{CaseTapes, TapedTarget, cassette_path};
    pub use archmax_machine::model::cassette::*;
}
pub mod engine;
pub mod judge;
pub mod report;
pub mod serialize;
mod tapes;
pub mod view;

pub use case::{Case, CaseFile, Step, parse_case};
pub use engine::{Observer, RunOptions, SharedTarget, Suite, SuiteError, Target, run_suite};
pub use report::{
    AssertionRecord, CaseResult, RecordStatus, RunTestsResult, Verdict, reduce_verdict,
};
pub use serialize::serialize_case;

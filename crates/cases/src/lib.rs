//! The `archmax test` engine: a workflow's `tests/*.test.yaml` cases run against the real
//! harness with mocks at its edges, their assertions checked, `grade` steps judged by a model;
//! and cassettes, which record a case's model exchanges so a suite replays offline.

pub mod cassette;

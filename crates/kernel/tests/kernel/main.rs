//! Acceptance tests of the governance kernel (`archmax-kernel`), written from the
//! kernel-and-workspace digest (§2, §3, §4–§7, §9 and the 0.9.0 deltas D1–D14).
//!
//! - `examples`: the §9 worked examples as tables, the D-tests, exact refusal
//!   texts per rule id, disclosure (`surface`) and listing redaction.
//! - `differential`: a naive reference of the §2.1 precedence checked against the
//!   kernel on generated specs and random calls, plus a no-panic test.

#![allow(clippy::unwrap_used, clippy::panic, clippy::expect_used)]

mod differential;
mod examples;

use archmax_kernel::{Mounts, SkillDir};

/// Parses a machine spec or fails the test with the diagnostics.
pub fn spec(yaml: &str) -> archmax_spec::Workflow {
    match archmax_spec::parse_machine_spec(yaml) {
        Ok(w) => w,
        Err(d) => panic!("fixture spec does not parse: {d:?}\n---\n{yaml}"),
    }
}

/// Owned strings from literals.
pub fn strs(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_string()).collect()
}

/// The §9 mount table: `skills/`, `.platform/`, `data/` and `AGENTS.md`, read-only, ungoverned.
pub fn fixture_mounts() -> Mounts {
    Mounts {
        dirs: strs(&["skills", ".platform", "data"]),
        files: strs(&["AGENTS.md"]),
        ..Mounts::default()
    }
}

/// The §9 skill registry: `order-data` and `refund-policy` under `skills/`.
pub fn fixture_skills() -> Vec<SkillDir> {
    ["order-data", "refund-policy"]
        .iter()
        .map(|s| SkillDir {
            slug: (*s).to_string(),
            prefix: format!("skills/{s}"),
        })
        .collect()
}

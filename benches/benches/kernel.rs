//! `Policy::decide` on the example workflow (`order-lookup`), one benchmark per
//! kind of decision:
//!
//! - `bare_grant`: `read_file` of the order data in `order-question`, granted by
//!   the bare `read_file` entry of `tools.allow_always`;
//! - `path_guard`: `archmax_run` of the refund-limit script in `refund-request`,
//!   granted by `{ tool: archmax_run, paths: ["skills/refund-policy/scripts/**"] }`;
//! - `variable_guard`: `write_file` of `outbox/refund-KK-2043.md` in
//!   `refund-approved`, granted by the `${{order_id}}`-bound guard (resolved,
//!   escaped and compiled per call);
//! - `denial`: `write_file` in `classify`, which forbids it (the denial text is
//!   built, as for every denial).
//!
//! Each case's decision is asserted once before measuring, so a change in the
//! kernel cannot make a case silently measure another path. The Node baseline
//! (`scripts/bench-kernel.mjs`) makes the same four calls; `scripts/bench-kernel.sh`
//! prints both and the ratios.

use std::hint::black_box;
use std::path::PathBuf;

use archmax_kernel::{CallContext, Mounts, Policy, PolicyOptions, SkillDir, ToolCall, Variables};
use archmax_spec::DiskFiles;
use archmax_spec::workspace::{load_workflow, zero_config};
use criterion::{Criterion, criterion_group, criterion_main};
use serde_json::{Value, json};

fn example() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/customer-support")
}

/// The example workflow compiled as a zero-config host would compile it.
fn policy() -> Policy {
    let files = DiskFiles::new(example());
    let loaded = load_workflow(&files, "order-lookup", &["skills/".into()])
        .unwrap_or_else(|e| panic!("example workflow: {e}"));
    let opts = PolicyOptions {
        mounts: Mounts::from_decls(&zero_config()),
        skills: loaded.skills.iter().map(SkillDir::from_bundle).collect(),
        ..PolicyOptions::default()
    };
    Policy::compile(&loaded.spec, opts).unwrap_or_else(|e| panic!("policy: {e}"))
}

struct Case {
    name: &'static str,
    state: &'static str,
    tool: &'static str,
    args: Value,
    variables: Option<Variables>,
    allowed: bool,
    rule: &'static str,
}

fn cases() -> Vec<Case> {
    let mut vars = Variables::new();
    vars.insert("order_id".into(), json!("KK-2043"));
    vec![
        Case {
            name: "bare_grant",
            state: "order-question",
            tool: "read_file",
            args: json!({ "file_path": "skills/order-data/assets/orders.json" }),
            variables: None,
            allowed: true,
            rule: "tool.allowed",
        },
        Case {
            name: "path_guard",
            state: "refund-request",
            tool: "archmax_run",
            args: json!({ "file_path": "skills/refund-policy/scripts/refund-limit.js" }),
            variables: None,
            allowed: true,
            rule: "tool.allowed",
        },
        Case {
            name: "variable_guard",
            state: "refund-approved",
            tool: "write_file",
            args: json!({ "file_path": "outbox/refund-KK-2043.md", "content": "Refund confirmed." }),
            variables: Some(vars),
            allowed: true,
            rule: "tool.allowed",
        },
        Case {
            name: "denial",
            state: "classify",
            tool: "write_file",
            args: json!({ "file_path": "scratchpad/notes.md", "content": "x" }),
            variables: None,
            allowed: false,
            rule: "tool.forbidden-here",
        },
    ]
}

fn benches(c: &mut Criterion) {
    let policy = policy();
    let cases = cases();
    let mut g = c.benchmark_group("decide");
    for case in &cases {
        let call = ToolCall::new(case.tool, &case.args);
        let mut ctx = CallContext::agent(case.state);
        if let Some(v) = &case.variables {
            ctx = ctx.with_variables(v);
        }
        let d = policy.decide(&call, &ctx);
        assert_eq!(
            (d.allowed, d.rule.as_str()),
            (case.allowed, case.rule),
            "{}: the kernel decided {d:?}",
            case.name
        );
        g.bench_function(case.name, |b| {
            b.iter(|| black_box(policy.decide(black_box(&call), black_box(&ctx))))
        });
    }
    g.finish();
}

criterion_group!(kernel, benches);
criterion_main!(kernel);

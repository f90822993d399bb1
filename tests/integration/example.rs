use archmax_spec::{DiskFiles, ValidateOptions, validate_workflow};
use archmax_tests::example_root;

#[test]
fn the_example_workflows_validate_without_findings() {
    let files = DiskFiles::new(example_root());
    for wf in ["order-lookup", "enrich-order"] {
        let r = validate_workflow(&files, &ValidateOptions::new(wf));
        assert!(r.valid, "{wf}: {:#?}", r.diagnostics);
        assert!(r.diagnostics.is_empty(), "{wf}: {:#?}", r.diagnostics);
    }
}

mod hooks {
    use archmax_machine::{Harness, OutcomeKind};
    use archmax_tests::in_process::InProcessModel;
    use archmax_tests::scripted::Reply;
    use archmax_tests::{TempWorkspace, example_root, tool_results};
    use serde_json::{Value, json};

    fn harness(ws: &TempWorkspace, server: &InProcessModel) -> Harness {
        archmax_tests::harness(ws.root(), "order-lookup", server, "m", |_| {})
    }

    /// The refund state's after hook (hooks/check-refund.js) against real files: a
    /// proposal above what was paid is vetoed, a deny sent to review is corrected, and
    /// a deny taken to `closed` passes.
    #[test]
    fn the_refund_hook_vetoes_corrects_and_passes() {
        let ws = TempWorkspace::copy_of(&example_root());
        let server = InProcessModel::new(archmax_tests::refund_flow(Reply::text(
            "We cannot refund a cancelled order.",
        )));
        let h = harness(&ws, &server);
        let out = archmax_tests::send(&h, "refund-1", "I want my money back for KK-2046.");
        let requests = server.requests();
        let veto = tool_results(&requests[2]).pop().unwrap_or_default();
        assert!(
            veto.contains("The proposed 999.00 EUR is more than the 22.00 EUR paid for KK-2046."),
            "{veto}"
        );
        let correct = tool_results(&requests[3]).pop().unwrap_or_default();
        assert!(correct.contains("A deny needs no approval"), "{correct}");
        assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
        assert_eq!(out.state, "closed");
        assert_eq!(out.reply, "We cannot refund a cancelled order.");
    }

    /// `archmax_run` runs the refund-policy skill's script with the model's args and the
    /// run's variables; a script outside a skill bundle is refused.
    #[test]
    fn archmax_run_executes_a_skill_script_and_only_a_skill_script() {
        let ws = TempWorkspace::copy_of(&example_root());
        std::fs::create_dir_all(ws.root().join("sessions/run-1/scratchpad")).expect("dir");
        std::fs::write(ws.root().join("sessions/run-1/scratchpad/x.js"), "1 + 1").expect("write");
        let server = InProcessModel::new(vec![
            Reply::tool_calls(vec![(
                "c1",
                "archmax_advance",
                json!({ "to": "refund-request", "reason": "wants money back" }),
            )]),
            Reply::tool_calls(vec![(
                "c2",
                "archmax_run",
                json!({ "file_path": "skills/refund-policy/scripts/refund-limit.js", "args": { "order_total": 412.8, "customer_tier": "silver", "status": "delayed" } }),
            )]),
            Reply::tool_calls(vec![(
                "c3",
                "archmax_run",
                json!({ "file_path": "scratchpad/x.js" }),
            )]),
            Reply::text("Let me check."),
        ]);
        let h = harness(&ws, &server);
        let _ = archmax_tests::send(&h, "run-1", "Refund KK-2043 please.");
        let requests = server.requests();
        let limit = tool_results(&requests[2]).pop().unwrap_or_default();
        assert!(limit.starts_with("→ {"), "{limit}");
        let value: Value = serde_json::from_str(limit.trim_start_matches("→ ")).expect("json");
        assert_eq!(value["limit"], json!(300));
        assert_eq!(value["escalate"], json!(true));
        let refused = tool_results(&requests[3]).pop().unwrap_or_default();
        assert!(
            refused.starts_with("[workflow] BLOCKED: 'archmax_run' may only execute scripts that live in a skill bundle"),
            "{refused}"
        );
    }
}

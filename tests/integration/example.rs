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
    use std::sync::Arc;

    use archmax_machine::model::{ModelConfig, OpenAiClient, RetryPolicy};
    use archmax_machine::store::FsStore;
    use archmax_machine::{Harness, HarnessOptions, NoEvents, OutcomeKind, SendInput};
    use archmax_tests::scripted::{Reply, ScriptedServer};
    use archmax_tests::{TempWorkspace, example_root};
    use serde_json::{Value, json};

    fn results(request: &Value) -> Vec<String> {
        request["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|m| m["role"] == "tool")
            .filter_map(|m| m["content"].as_str().map(str::to_string))
            .collect()
    }

    fn decision(decision: &str, amount: f64) -> Value {
        let file = json!({ "order_id": "KK-2046", "decision": decision, "amount": amount, "currency": "EUR", "limit": 0, "reason": "Cancelled orders are not refunded." });
        json!({ "file_path": "scratchpad/refund.json", "content": file.to_string() })
    }

    /// The refund state's after hook (hooks/check-refund.js) against real files: a
    /// proposal above what was paid is vetoed, a deny sent to review is corrected, and
    /// a deny taken to `closed` passes.
    #[test]
    fn the_refund_hook_vetoes_corrects_and_passes() {
        let ws = TempWorkspace::copy_of(&example_root());
        let server = ScriptedServer::start(vec![
            Reply::tool_calls(vec![(
                "c1",
                "archmax_advance",
                json!({ "to": "refund-request", "reason": "wants money back" }),
            )]),
            Reply::tool_calls(vec![
                (
                    "c2",
                    "archmax_set_variables",
                    json!({ "variables": { "order_id": "KK-2046" } }),
                ),
                ("c3", "write_file", decision("partial_refund", 999.0)),
                (
                    "c4",
                    "archmax_advance",
                    json!({ "to": "refund-review", "reason": "proposal written" }),
                ),
            ]),
            Reply::tool_calls(vec![
                ("c5", "write_file", decision("deny", 0.0)),
                (
                    "c6",
                    "archmax_advance",
                    json!({ "to": "refund-review", "reason": "deny written" }),
                ),
            ]),
            Reply::tool_calls(vec![(
                "c7",
                "archmax_advance",
                json!({ "to": "closed", "reason": "deny needs no approval" }),
            )]),
            Reply::text("We cannot refund a cancelled order."),
        ])
        .expect("server");
        let mut config = ModelConfig::new(server.url(), "k", "m");
        config.retry = RetryPolicy {
            attempts: 1,
            ..RetryPolicy::default()
        };
        let h = Harness::assemble(HarnessOptions {
            root: ws.root().to_path_buf(),
            workflow: "order-lookup".into(),
            model: Arc::new(OpenAiClient::new(config).expect("client")),
            default_model: "m".into(),
            store: Arc::new(FsStore::new(ws.root())),
            events: Arc::new(NoEvents),
            tools: Vec::new(),
            essential_tools: Vec::new(),
            mounts: None,
            skills: vec!["skills/".into()],
        })
        .expect("harness");
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        let out = rt
            .block_on(h.send(
                "refund-1",
                SendInput {
                    message: "I want my money back for KK-2046.".into(),
                    ..SendInput::default()
                },
            ))
            .expect("turn");
        let requests = server.requests();
        let veto = results(&requests[2]).pop().unwrap_or_default();
        assert!(
            veto.contains("The proposed 999.00 EUR is more than the 22.00 EUR paid for KK-2046."),
            "{veto}"
        );
        let correct = results(&requests[3]).pop().unwrap_or_default();
        assert!(correct.contains("A deny needs no approval"), "{correct}");
        assert_eq!(out.kind, OutcomeKind::Completed, "{out:?}");
        assert_eq!(out.state, "closed");
        assert_eq!(out.reply, "We cannot refund a cancelled order.");
    }
}

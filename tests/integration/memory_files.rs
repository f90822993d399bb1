//! The memory store holds a session's files: the same turns over the filesystem store and
//! the memory store tell the model the same things, call for call (the agent's file tools,
//! a hook's `tools.*`, `archmax_eval`, `archmax_run`, offloads), and end the same way.

use std::sync::Arc;

use archmax_machine::store::{MemStore, SessionStore};
use archmax_machine::{Harness, Outcome};
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{TempWorkspace, example_root, tool_results};
use serde_json::json;

/// Runs `script` as one turn of session `id` over `store`; the outcome and what each
/// model request carried as tool results.
fn turn(
    ws: &TempWorkspace,
    workflow: &str,
    store: Arc<dyn SessionStore>,
    script: Vec<Reply>,
    id: &str,
    message: &str,
) -> (Outcome, Vec<Vec<String>>) {
    let server = InProcessModel::new(script);
    let h: Harness = archmax_tests::harness(ws.root(), workflow, &server, "m", |o| {
        o.store = store;
    });
    let out = archmax_tests::send(&h, id, message);
    let results = server.requests().iter().map(tool_results).collect();
    (out, results)
}

fn refund_script() -> Vec<Reply> {
    let file = |decision: &str, amount: f64| {
        let body = json!({ "order_id": "KK-2046", "decision": decision, "amount": amount, "currency": "EUR", "limit": 0, "reason": "Cancelled orders are not refunded." });
        json!({ "file_path": "scratchpad/refund.json", "content": body.to_string() })
    };
    vec![
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
            ("c3", "write_file", file("partial_refund", 999.0)),
            (
                "c4",
                "archmax_advance",
                json!({ "to": "refund-review", "reason": "proposal written" }),
            ),
        ]),
        Reply::tool_calls(vec![
            ("c5", "write_file", file("deny", 0.0)),
            ("c6", "ls", json!({ "path": "/" })),
            ("c7", "glob", json!({ "pattern": "**/*.json" })),
            (
                "c8",
                "grep",
                json!({ "pattern": "deny", "path": "scratchpad" }),
            ),
            (
                "c9",
                "archmax_eval",
                json!({ "code": "const [f, l] = await Promise.all([tools.readFile({ file_path: 'scratchpad/refund.json' }), tools.ls({ path: 'scratchpad' })]); [JSON.parse(f).decision, l]" }),
            ),
            (
                "c10",
                "archmax_run",
                json!({ "file_path": "skills/refund-policy/scripts/refund-limit.js", "args": { "order_total": 412.8, "customer_tier": "silver", "status": "delayed" } }),
            ),
            (
                "c11",
                "archmax_advance",
                json!({ "to": "refund-review", "reason": "deny written" }),
            ),
        ]),
        Reply::tool_calls(vec![(
            "c12",
            "archmax_advance",
            json!({ "to": "closed", "reason": "deny needs no approval" }),
        )]),
        Reply::text("We cannot refund a cancelled order."),
    ]
}

#[test]
fn the_example_refund_turn_tells_the_model_the_same_with_either_store() {
    let disk_ws = TempWorkspace::copy_of(&example_root());
    let mem_ws = TempWorkspace::copy_of(&example_root());
    let (disk_out, on_disk) = turn(
        &disk_ws,
        "order-lookup",
        Arc::new(archmax_machine::store::FsStore::new(disk_ws.root())),
        refund_script(),
        "refund-1",
        "I want my money back for KK-2046.",
    );
    let (mem_out, in_memory) = turn(
        &mem_ws,
        "order-lookup",
        Arc::new(MemStore::new()),
        refund_script(),
        "refund-1",
        "I want my money back for KK-2046.",
    );
    assert_eq!(in_memory, on_disk);
    assert_eq!(
        (mem_out.kind, &mem_out.state, &mem_out.reply),
        (disk_out.kind, &disk_out.state, &disk_out.reply)
    );
    assert_eq!(mem_out.state, "closed");
    // The hook read the proposal through `tools.*`, in memory: it vetoed the 999.00 EUR.
    let veto = on_disk[2].last().cloned().unwrap_or_default();
    assert!(veto.contains("more than the 22.00 EUR paid"), "{veto}");
    let listed = &in_memory[3];
    assert!(
        listed
            .iter()
            .any(|r| r.contains("/scratchpad/ (directory)")),
        "{listed:?}"
    );
    assert!(
        listed.iter().any(|r| r.starts_with("→ [\n  \"deny\"")),
        "{listed:?}"
    );
    assert!(!mem_ws.root().join("sessions").exists());
}

const OFFLOAD_SPEC: &str = "states:\n  work:\n    triggers: { manual: }\n    instructions: Work.\n";

#[test]
fn an_offloaded_result_is_read_back_from_memory() {
    let big: String = (0..3000).map(|i| format!("row {i}\n")).collect();
    let script = |big: &str| {
        vec![
            Reply::tool_calls(vec![(
                "e1",
                "write_file",
                json!({ "file_path": "scratchpad/big.txt", "content": big }),
            )]),
            Reply::tool_calls(vec![(
                "r1",
                "read_file",
                json!({ "file_path": "scratchpad/big.txt", "limit": 3000 }),
            )]),
            Reply::tool_calls(vec![(
                "r2",
                "read_file",
                json!({ "file_path": "large_tool_results/r1", "offset": 2, "limit": 2 }),
            )]),
            Reply::text("Read."),
        ]
    };
    let disk_ws = TempWorkspace::new(&[("workflows/w/workflow.yaml", OFFLOAD_SPEC)]);
    let mem_ws = TempWorkspace::new(&[("workflows/w/workflow.yaml", OFFLOAD_SPEC)]);
    let fs_store = Arc::new(archmax_machine::store::FsStore::new(disk_ws.root()));
    let (_, on_disk) = turn(&disk_ws, "w", fs_store, script(&big), "o1", "Go.");
    let (_, in_memory) = turn(
        &mem_ws,
        "w",
        Arc::new(MemStore::new()),
        script(&big),
        "o1",
        "Go.",
    );
    assert_eq!(in_memory, on_disk);
    let pointer = &in_memory[2][1];
    assert!(pointer.starts_with("Tool result too large ("), "{pointer}");
    // The offloaded text is `read_file`'s own numbered view, numbered again.
    assert_eq!(
        in_memory[3][2],
        "     3\t     3\trow 2\n     4\t     4\trow 3"
    );
}

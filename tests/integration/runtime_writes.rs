//! The runtime's own writes (offloaded results, checkpoints, the scratchpad) never follow a
//! symbolic link planted in the session folder: the write is refused with an error naming
//! the link, nothing lands outside, and the session stays loadable.

use archmax_machine::OutcomeKind;
use archmax_tests::in_process::InProcessModel;
use archmax_tests::scripted::Reply;
use archmax_tests::{TempWorkspace, tool_results};
use serde_json::json;

#[test]
fn an_offload_through_a_planted_link_is_refused_and_the_session_stays_intact() {
    let ws = TempWorkspace::new(&[
        (
            "workflows/orders/workflow.yaml",
            "states:\n  work:\n    triggers: { manual: }\n",
        ),
        // 53 KB: over the offload bound.
        (
            "sessions/o1/scratchpad/big.txt",
            &"row of data\n".repeat(4_500),
        ),
    ]);
    let outside = ws.root().join("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    std::os::unix::fs::symlink(&outside, ws.root().join("sessions/o1/large_tool_results"))
        .expect("link");
    let server = InProcessModel::new(vec![
        Reply::tool_calls(vec![(
            "c1",
            "read_file",
            json!({ "file_path": "scratchpad/big.txt", "limit": 5000 }),
        )]),
        Reply::text("Done."),
        Reply::text("Again."),
    ]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    let out = archmax_tests::send(&h, "o1", "go");
    assert_eq!(out.kind, OutcomeKind::Completed);
    let result = &tool_results(&server.requests()[1])[0];
    assert!(
        result.starts_with("Error: the tool result was too large to show (")
            && result.contains("large_tool_results' is a symbolic link"),
        "{result}"
    );
    assert_eq!(
        std::fs::read_dir(&outside).expect("outside").count(),
        0,
        "nothing was written outside the session folder"
    );
    let again = archmax_tests::send(&h, "o1", "more");
    assert_eq!(
        again.kind,
        OutcomeKind::Completed,
        "the session still loads"
    );
}

#[test]
fn a_checkpoint_folder_planted_as_a_link_is_refused_not_followed() {
    let ws = TempWorkspace::new(&[(
        "workflows/orders/workflow.yaml",
        "states:\n  work:\n    triggers: { manual: }\n",
    )]);
    let outside = ws.root().join("outside");
    std::fs::create_dir_all(&outside).expect("outside");
    std::fs::create_dir_all(ws.root().join("sessions/k1")).expect("session");
    std::os::unix::fs::symlink(&outside, ws.root().join("sessions/k1/checkpoints")).expect("link");
    std::os::unix::fs::symlink(&outside, ws.root().join("sessions/k2")).expect("link");
    let server = InProcessModel::new(vec![Reply::text("Hi."), Reply::text("Hi.")]);
    let h = archmax_tests::harness(ws.root(), "orders", &server, "m", |_| {});
    for id in ["k1", "k2"] {
        let err = archmax_tests::rt()
            .block_on(h.send(
                id,
                archmax_machine::SendInput {
                    message: "go".into(),
                    ..Default::default()
                },
            ))
            .expect_err("refused");
        assert!(
            err.to_string().contains("is a symbolic link"),
            "{id}: {err}"
        );
    }
    assert_eq!(
        std::fs::read_dir(&outside).expect("outside").count(),
        0,
        "no lease, transcript or scratchpad outside"
    );
}

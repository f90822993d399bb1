//! The mocks' capability gate (`sandbox-hooks-cases.md` §6.7): a case that declares tool
//! mocks runs only against a target that intercepts the agent's own tool calls. Against one
//! that does not, interception would be partial (scripts' PTC calls mocked, the agent's
//! own calls real), so the case dies before anything runs.
//!
//! ```
//! use archmax_cases::capability::uninterceptable_mocks;
//! assert!(uninterceptable_mocks(2).starts_with("this case declares 2 tool mock(s)"));
//! ```

use crate::case::Case;

/// The death of a case declaring `n` mocks (sub-workflow mocks included) against a
/// target whose `toolMocks` is not true.
pub fn uninterceptable_mocks(n: usize) -> String {
    format!(
        "this case declares {n} tool mock(s), but the target agent cannot intercept agent-initiated tool calls (interception would be partial: scripts' PTC calls mocked, the agent's own calls real). Wire createToolMockMiddleware() into the target's middleware, or set toolMocks on a target that intercepts by other means."
    )
}

/// Why `case` cannot run against a target that does (`tool_mocks`) or does not intercept
/// the agent's tool calls; `None` when it can.
pub fn refusal(case: &Case, tool_mocks: bool) -> Option<String> {
    (!tool_mocks && !case.mocks.is_empty()).then(|| uninterceptable_mocks(case.mocks.len()))
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use archmax_machine::model::{
        AssistantMessage, ChatRequest, ChatResponse, Model, ModelFuture, TextSink,
    };
    use archmax_machine::store::MemStore;
    use archmax_machine::{Harness, HarnessOptions, NoEvents};

    use super::*;
    use crate::engine::{Quiet, RunOptions, SharedTarget, Suite, run_suite};
    use crate::report::RecordStatus;

    /// Answers every request `done`, counting them.
    #[derive(Default)]
    struct Done(AtomicUsize);

    impl Model for Done {
        fn complete<'a>(&'a self, _req: &'a ChatRequest) -> ModelFuture<'a> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Box::pin(async {
                Ok(ChatResponse {
                    message: AssistantMessage {
                        content: Some("done".to_string()),
                        tool_calls: Vec::new(),
                    },
                    finish_reason: Some("stop".to_string()),
                    ..ChatResponse::default()
                })
            })
        }
        fn stream<'a>(&'a self, req: &'a ChatRequest, _text: &'a dyn TextSink) -> ModelFuture<'a> {
            self.complete(req)
        }
    }

    const CASE: &str = "title: Mocked lookup\ndescription: The lookup and a sub-workflow are mocked.\nmocks:\n  - { tool: lookup, result: found }\n  - { tool: archmax_workflow_other, result: { message: ok } }\nsteps:\n  - send: hi\n  - succeeded: true\n  - reply: { includes: done }\n";

    /// Runs the one case of a fresh workspace with `tool_mocks`; the result and how many
    /// model calls it made.
    fn run(tool_mocks: bool) -> (crate::CaseResult, usize) {
        let root = std::env::temp_dir().join(format!(
            "archmax-cases-gate-{}-{tool_mocks}",
            std::process::id()
        ));
        let _ = std::fs::remove_dir_all(&root);
        for (path, text) in [
            (
                "workflows/w/workflow.yaml",
                "states:\n  a:\n    triggers: { manual: }\n",
            ),
            ("workflows/w/tests/mocked.test.yaml", CASE),
        ] {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, text).unwrap();
        }
        let model = Arc::new(Done::default());
        let harness = Harness::assemble(HarnessOptions {
            root: root.clone(),
            workflow: "w".to_string(),
            model: model.clone(),
            default_model: "m".to_string(),
            store: Arc::new(MemStore::new()),
            events: Arc::new(NoEvents),
            tools: Vec::new(),
            essential_tools: Vec::new(),
            mounts: None,
            skills: Vec::new(),
        })
        .unwrap();
        let spec = harness.spec().clone();
        let suite = Suite::discover(&root, "w");
        let opts = RunOptions {
            tool_mocks,
            run_id: "r".to_string(),
            ..RunOptions::default()
        };
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let result = rt
            .block_on(run_suite(
                &suite,
                &spec,
                &SharedTarget(Arc::new(harness)),
                &opts,
                &Quiet,
            ))
            .unwrap();
        let _ = std::fs::remove_dir_all(&root);
        let [case] = <[_; 1]>::try_from(result.results).unwrap();
        (case, model.0.load(Ordering::SeqCst))
    }

    #[test]
    fn a_case_with_mocks_dies_before_anything_runs_on_a_target_that_cannot_intercept() {
        let (case, calls) = run(false);
        let message = uninterceptable_mocks(2);
        assert_eq!(case.error.as_deref(), Some(message.as_str()));
        assert_eq!(case.verdict.status, "failed");
        assert_eq!(case.verdict.failures, vec![message]);
        assert_eq!(
            case.session_id.as_deref(),
            Some("test-default-test-run-r-workflows-w-tests-mocked.test.yaml")
        );
        assert_eq!(
            case.records
                .iter()
                .map(|r| (r.kind.as_str(), r.status, r.step))
                .collect::<Vec<_>>(),
            vec![
                ("succeeded", RecordStatus::NotExecuted, 1),
                ("reply", RecordStatus::NotExecuted, 2)
            ]
        );
        assert_eq!(calls, 0, "the model is never asked");
    }

    #[test]
    fn the_same_case_runs_on_a_target_that_intercepts() {
        let (case, calls) = run(true);
        assert_eq!(case.error, None);
        assert_eq!(case.verdict.status, "passed", "{:?}", case.verdict.failures);
        assert_eq!(calls, 1);
    }
}

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

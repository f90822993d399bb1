//! `archmax graph`: the diagram of the example workspace in each format, and its errors.

use crate::support::{Workspace, cli};

fn example() -> String {
    format!(
        "{}/../../examples/customer-support",
        env!("CARGO_MANIFEST_DIR")
    )
}

fn graph(args: &[&str]) -> crate::support::Ran {
    let ws = Workspace::new(&[]);
    let root = example();
    let mut all = vec!["graph", "--root", root.as_str()];
    all.extend_from_slice(args);
    cli(&ws, None, &all)
}

#[test]
fn mermaid_is_the_default_and_marks_human_terminal_and_on_error() {
    let ran = graph(&["order-lookup"]);
    assert_eq!(ran.code, 0, "{}", ran.err);
    assert!(ran.out.starts_with("flowchart TD\n"));
    assert!(
        ran.out
            .contains("s3{{\"Approve the proposed refund<br/>refund-review<br/>(human)\"}}")
    );
    assert!(ran.out.contains("s2 -.->|\"on_error\"| s5"));
    assert!(
        ran.out
            .contains("s3 -->|\"approve: Approve the refund as proposed.\"| s4")
    );
    assert!(ran.out.contains("after: hooks/check-refund.js"));
    assert!(ran.out.contains("class s3 human\n"));
}

#[test]
fn the_readme_shows_the_examples_diagram() {
    let ran = graph(&["order-lookup"]);
    let readme = std::fs::read_to_string(format!("{}/../../README.md", env!("CARGO_MANIFEST_DIR")))
        .expect("README.md");
    assert!(
        readme.contains(&format!("```mermaid\n{}```", ran.out)),
        "README.md's mermaid block is `archmax graph order-lookup` of the example"
    );
}

#[test]
fn svg_and_dot() {
    let svg = graph(&["order-lookup", "--format", "svg"]);
    assert_eq!(svg.code, 0, "{}", svg.err);
    assert!(
        svg.out
            .starts_with("<svg xmlns=\"http://www.w3.org/2000/svg\"")
    );
    assert!(svg.out.contains("data-state=\"refund-review\""));
    let dot = graph(&["order-lookup", "--format=dot"]);
    assert_eq!(dot.code, 0, "{}", dot.err);
    assert!(dot.out.starts_with("digraph workflow {\n"));
    assert!(
        dot.out
            .contains("s2 -> s5 [label=\"on_error\", style=dashed")
    );
}

#[test]
fn a_bad_format_is_a_usage_error_and_a_missing_workflow_names_the_file() {
    let bad = graph(&["order-lookup", "--format", "png"]);
    assert_eq!(bad.code, 2);
    assert_eq!(
        bad.err,
        "Error: --format must be mermaid, svg or dot, got 'png' (try: archmax graph --help)\n"
    );
    let missing = graph(&["nope"]);
    assert_eq!(missing.code, 1);
    assert!(
        missing
            .err
            .contains("Cannot load workflow 'nope' (workflows/nope/workflow.yaml)"),
        "{}",
        missing.err
    );
}

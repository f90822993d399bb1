//! The invalid-document corpus: every `tests/corpus/*.yaml` is a workflow that
//! must fail, pinned to its full list of diagnostics. A file's leading
//! `# expect: <severity> <field|-> @<line>:<column> <message>` lines are the
//! expectation (they are YAML comments, so they count in line numbers).
//! `BLESS=1 cargo test -p archmax-tests corpus` rewrites them from the actual
//! output; review the diff before committing.

use archmax_spec::{Diagnostic, Severity, validate_spec};
use archmax_tests::repo_root;

const PREFIX: &str = "# expect: ";

fn render(d: &Diagnostic) -> String {
    let severity = match d.severity {
        Severity::Error => "error",
        Severity::Warning => "warning",
    };
    let field = d.field.as_deref().unwrap_or("-");
    let at = match (d.line, d.column) {
        (Some(l), Some(c)) => format!("@{l}:{c}"),
        _ => "@-".to_string(),
    };
    format!(
        "{PREFIX}{severity} {field} {at} {}",
        d.message.replace('\n', "\\n")
    )
}

#[test]
fn every_invalid_document_is_pinned_to_its_diagnostics() {
    check_dir("tests/corpus", 80, true);
}

/// Valid documents that draw lint findings (warnings, or lint errors that do not
/// block loading).
#[test]
fn every_linted_document_is_pinned_to_its_findings() {
    check_dir("tests/corpus-lint", 20, false);
}

fn check_dir(rel: &str, at_least: usize, invalid: bool) {
    let dir = repo_root().join(rel);
    let mut paths: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus dir")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "yaml"))
        .collect();
    paths.sort();
    assert!(
        paths.len() >= at_least,
        "{rel} must hold at least {at_least} documents, has {}",
        paths.len()
    );
    let bless = std::env::var_os("BLESS").is_some();
    let mut failures = Vec::new();
    for path in &paths {
        let text = std::fs::read_to_string(path).expect("read");
        let body: String = text
            .lines()
            .skip_while(|l| l.starts_with(PREFIX))
            .map(|l| format!("{l}\n"))
            .collect();
        let expected: Vec<&str> = text.lines().take_while(|l| l.starts_with(PREFIX)).collect();
        // Re-validate the text as it will be once the header is rewritten, so
        // line numbers stay true after blessing.
        let header_lines = expected.len();
        let result = validate_spec(&text);
        let actual: Vec<String> = result.diagnostics.iter().map(render).collect();
        if invalid {
            assert!(
                !result.ok || result.lint.iter().any(Diagnostic::is_error),
                "{}: this corpus holds invalid documents only, but this one is valid",
                path.display()
            );
        } else {
            assert!(
                result.ok && result.spec.is_some(),
                "{}: this corpus holds loadable documents only",
                path.display()
            );
        }
        if bless {
            let new_header_len = actual.len();
            if new_header_len != header_lines {
                // Line numbers shift with the header: validate the reassembled text.
                let provisional: String =
                    actual.iter().map(|l| format!("{l}\n")).collect::<String>() + &body;
                let again: Vec<String> = validate_spec(&provisional)
                    .diagnostics
                    .iter()
                    .map(render)
                    .collect();
                std::fs::write(
                    path,
                    again.iter().map(|l| format!("{l}\n")).collect::<String>() + &body,
                )
                .expect("write");
            } else {
                std::fs::write(
                    path,
                    actual.iter().map(|l| format!("{l}\n")).collect::<String>() + &body,
                )
                .expect("write");
            }
            continue;
        }
        if expected != actual {
            failures.push(format!(
                "{}\n  expected:\n    {}\n  actual:\n    {}",
                path.display(),
                expected.join("\n    "),
                actual.join("\n    ")
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} corpus documents differ:\n{}",
        failures.len(),
        failures.join("\n")
    );
}

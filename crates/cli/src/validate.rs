//! `archmax validate [workflow] [--json]` (cli digest §4.3, validation digest §2.4).

use archmax_spec::{Diagnostic, Severity, ValidateOptions};
use serde_json::json;

use crate::args::Parsed;
use crate::style::{CHECK, CROSS, Style, WARN};
use crate::workspace::{resolve_root, workflow_slot};
use crate::{Cli, Failure};

/// Validates the workflow, renders the findings and returns 0 (valid) or 1.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let root = resolve_root(&cli.cwd, parsed.text("root"));
    let given = positionals.first().and_then(Option::as_deref);
    let workflow = workflow_slot(given, &root).map_err(Failure::Usage)?;
    cli.load_root_env(&root);
    cli.header(&workflow, &root, None);

    let result =
        archmax_machine::mcp::validate_workspace(&root, &ValidateOptions::new(workflow.as_str()));
    let report = render_diagnostics(&cli.style, &result.diagnostics);
    cli.err(&report);
    if parsed.flag("json") {
        let doc = json!({
            "workflow": result.workflow,
            "valid": result.valid,
            "diagnostics": result.diagnostics,
        });
        let text = serde_json::to_string_pretty(&doc)
            .map_err(|e| Failure::Command(format!("cannot encode the validation result: {e}")))?;
        cli.out(&format!("{text}\n"));
    } else {
        cli.out(&format!("{}\n", summary(&result.diagnostics)));
    }
    Ok(if result.valid { 0 } else { 1 })
}

/// Where a diagnostic points: `file:line:col`, `file:line`, the file, else the field.
pub fn location(d: &Diagnostic) -> Option<String> {
    match (&d.file, d.line, d.column) {
        (Some(file), Some(line), Some(col)) => Some(format!("{file}:{line}:{col}")),
        (Some(file), Some(line), None) => Some(format!("{file}:{line}")),
        (Some(file), None, _) => Some(file.clone()),
        (None, _, _) => d.field.clone(),
    }
}

/// The stderr block: one line per diagnostic (or the all-clear), then a blank line.
pub fn render_diagnostics(style: &Style, diagnostics: &[Diagnostic]) -> String {
    let mut out = String::new();
    if diagnostics.is_empty() {
        out.push_str(&format!(
            "  {}\n",
            style.green(&format!("{CHECK} no issues found"))
        ));
    }
    for d in diagnostics {
        let tag = match d.severity {
            Severity::Error => style.red(&format!("{CROSS} error")),
            Severity::Warning => style.yellow(&format!("{WARN} warn ")),
        };
        out.push_str(&format!("  {tag}  {}", d.message));
        if let Some(loc) = location(d) {
            out.push_str(&format!(" {}", style.dim(&format!("[{loc}]"))));
        }
        out.push('\n');
    }
    out.push('\n');
    out
}

/// The stdout line: `valid — E error(s), W warning(s)` or `invalid — …`.
pub fn summary(diagnostics: &[Diagnostic]) -> String {
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    let warnings = diagnostics.len() - errors;
    let verdict = if errors == 0 { "valid" } else { "invalid" };
    format!("{verdict} — {errors} error(s), {warnings} warning(s)")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn diag(
        file: Option<&str>,
        field: Option<&str>,
        line: Option<u32>,
        column: Option<u32>,
    ) -> Diagnostic {
        let mut d = Diagnostic::error(field.unwrap_or(""), "m");
        d.file = file.map(str::to_string);
        d.line = line;
        d.column = column;
        d
    }

    #[test]
    fn locations_prefer_file_positions() {
        assert_eq!(
            location(&diag(Some("f.yaml"), Some("a.b"), Some(3), Some(5))).as_deref(),
            Some("f.yaml:3:5")
        );
        assert_eq!(
            location(&diag(Some("f.yaml"), None, Some(3), None)).as_deref(),
            Some("f.yaml:3")
        );
        assert_eq!(
            location(&diag(Some("f.yaml"), Some("a.b"), None, None)).as_deref(),
            Some("f.yaml")
        );
        assert_eq!(
            location(&diag(None, Some("a.b"), Some(3), Some(1))).as_deref(),
            Some("a.b")
        );
        assert_eq!(location(&diag(None, None, None, None)), None);
    }

    #[test]
    fn lines_and_colors() {
        let mut warn = Diagnostic::warning("x", "careful");
        warn.file = None;
        let ds = vec![diag(None, Some("a"), None, None), warn];
        assert_eq!(
            render_diagnostics(&Style::new(false), &ds),
            "  ✖ error  m [a]\n  ⚠ warn   careful [x]\n\n"
        );
        assert_eq!(
            render_diagnostics(&Style::new(true), &ds[1..]),
            "  \x1b[33m⚠ warn \x1b[0m  careful \x1b[2m[x]\x1b[0m\n\n"
        );
        assert_eq!(
            render_diagnostics(&Style::new(false), &[]),
            "  ✔ no issues found\n\n"
        );
        assert_eq!(summary(&ds), "invalid — 1 error(s), 1 warning(s)");
        assert_eq!(summary(&ds[1..]), "valid — 0 error(s), 1 warning(s)");
    }
}

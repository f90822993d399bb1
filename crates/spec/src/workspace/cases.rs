//! The test-case pass: every `tests/**/*.test.yaml` checked against the case
//! schema, its trigger against the workflow, its fixtures against the disk.

use super::Context;
use crate::case::check_case_at;
use crate::diagnostic::Diagnostic;
use crate::workspace::Files;

/// Every case file of a workflow, workspace-relative, sorted by path.
pub fn discover_cases(files: &dyn Files, workflow: &str) -> Vec<String> {
    let mut out = Vec::new();
    walk(files, &format!("workflows/{workflow}/tests"), &mut out);
    out.sort();
    out
}

fn walk(files: &dyn Files, dir: &str, out: &mut Vec<String>) {
    for e in files.list(dir) {
        let path = format!("{dir}/{}", e.name);
        if e.is_dir {
            walk(files, &path, out);
        } else if e.name.ends_with(".test.yaml") || e.name.ends_with(".test.yml") {
            out.push(path);
        }
    }
}

/// Normalizes a `from:` path inside the tests directory.
pub fn normalize_from(from: &str) -> Result<String, String> {
    if from.trim().is_empty() || from.starts_with('/') {
        return Err(format!(
            "'from: {from}' must be a tests/-relative file path"
        ));
    }
    let mut segs: Vec<&str> = Vec::new();
    for s in from.split('/') {
        match s {
            "" | "." => {}
            ".." => return Err(format!("'from: {from}' escapes the tests directory")),
            s => segs.push(s),
        }
    }
    if segs.is_empty() {
        return Err(format!(
            "'from: {from}' must be a tests/-relative file path"
        ));
    }
    Ok(segs.join("/"))
}

/// What is wrong with a sub-workflow mock: a target that does not load, or supplied returns
/// its `manual` trigger types otherwise (the dispatcher would fail the mocked call).
fn mock_problem(ctx: &Context<'_>, mock: &crate::case::WorkflowMock) -> Option<String> {
    let path = format!("workflows/{}/workflow.yaml", mock.workflow);
    let missing = || {
        format!(
            "mocks 'archmax_workflow_{}', but '{path}' is missing or has no valid machine spec.",
            mock.workflow
        )
    };
    let Some(text) = ctx.files.read(&path) else {
        return Some(missing());
    };
    let Ok(Some(tree)) = crate::yaml::parse(&text) else {
        return Some(missing());
    };
    let returns = mock.returns.as_ref()?;
    let sig = crate::signature::signature_for_trigger(&tree.to_json(), "manual")?;
    let typed: Vec<_> = sig
        .returns
        .iter()
        .filter(|e| e.ty.is_some() && returns.contains_key(&e.name))
        .cloned()
        .collect();
    let issues: Vec<String> = crate::signature::signature_value_issues(&typed, returns)
        .into_iter()
        .map(|i| i.message)
        .collect();
    (!issues.is_empty()).then(|| {
        format!(
            "its returns break the 'manual' trigger of '{}': {}",
            mock.workflow,
            issues.join(" ")
        )
    })
}

pub(crate) fn check(ctx: &Context<'_>, out: &mut Vec<Diagnostic>) {
    let tests_dir = format!("workflows/{}/tests", ctx.workflow);
    for file in discover_cases(ctx.files, ctx.workflow) {
        let text = match ctx.files.read_checked(&file) {
            Ok(text) => text.unwrap_or_default(),
            Err(why) => {
                out.push(Diagnostic::error("", format!("{file} {why}")).in_file(&file));
                continue;
            }
        };
        let facts = match check_case_at(&text) {
            Ok(f) => f,
            Err(problems) => {
                let at = problems.first().and_then(|(_, pos)| *pos);
                let text: Vec<&str> = problems.iter().map(|(m, _)| m.as_str()).collect();
                out.push(
                    Diagnostic::error("", format!("{file}: {}", text.join("; ")))
                        .in_file(&file)
                        .at(at),
                );
                continue;
            }
        };
        if let Some(id) = facts.trigger.as_deref().filter(|id| *id != "manual") {
            let mut declared = super::trigger_ids(ctx.tree);
            declared.sort();
            declared.dedup();
            if !declared.iter().any(|d| d == id) {
                let list = if declared.is_empty() || declared == ["manual"] {
                    "manual only".to_string()
                } else {
                    declared.join(", ")
                };
                out.push(
                    Diagnostic::error(
                        "trigger",
                        format!("'{file}' declares trigger '{id}', which no state of this workflow declares (declared: {list})"),
                    )
                    .in_file(&file),
                );
            }
        }
        for mock in &facts.workflow_mocks {
            if let Some(problem) = mock_problem(ctx, mock) {
                out.push(
                    Diagnostic::error("mocks", format!("{file}: mocks[{}]: {problem}", mock.index))
                        .in_file(&file)
                        .at(Some(mock.pos)),
                );
            }
        }
        for fixture in facts.fixtures {
            match normalize_from(&fixture.from) {
                Err(why) => out
                    .push(Diagnostic::error("workspace", format!("{file}: {why}")).in_file(&file)),
                Ok(rel) => {
                    if ctx.files.read(&format!("{tests_dir}/{rel}")).is_none() {
                        out.push(
                            Diagnostic::error(
                                "workspace",
                                format!(
                                    "'{file}' workspace entry '{}' references 'from: {}', but '{tests_dir}/{rel}' does not exist",
                                    fixture.path, fixture.from
                                ),
                            )
                            .in_file(&file),
                        );
                    }
                }
            }
        }
    }
    if ctx
        .files
        .read(&format!("workflows/{}/tests.config.js", ctx.workflow))
        .is_some()
        || ctx
            .files
            .read(&format!("{tests_dir}/tests.config.js"))
            .is_some()
    {
        out.push(
            Diagnostic::error(
                "tests",
                "tests.config.js was removed: case-suite settings live under the workflow's \
                 'tests' key (maxConcurrency, caseTimeoutMs, judge). Move them there and delete \
                 the file.",
            )
            .in_file(format!("workflows/{}/tests.config.js", ctx.workflow)),
        );
    }
}

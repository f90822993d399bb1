//! Hook scripts: where they live, that they exist, what they import; hook kinds.

use super::Context;
use crate::diagnostic::Diagnostic;
use crate::yaml::Node;

/// The package a hook may import from (itself or a subpath).
const HARNESS_PACKAGE: &str = "@archmax-ai/harness";

/// Checks the `before` or `after` hooks of one state, read from the raw tree so
/// they are checked even when the shape failed.
pub(crate) fn check_phase(
    ctx: &Context<'_>,
    slug: &str,
    phase: &str,
    spec: &Node,
    out: &mut Vec<Diagnostic>,
) {
    let field = format!("states.{slug}.{phase}");
    let hooks: Vec<&Node> = match (spec.as_seq(), spec.as_map()) {
        (Some(items), _) => items.iter().filter(|i| i.as_map().is_some()).collect(),
        (None, Some(_)) => vec![spec],
        _ => return,
    };
    let custom: Vec<String> = ctx
        .node("extensions.hooks")
        .and_then(Node::as_seq)
        .map(|s| {
            s.iter()
                .filter_map(Node::as_str)
                .map(str::to_string)
                .collect()
        })
        .unwrap_or_default();
    for hook in hooks {
        let kinds: Vec<&str> = hook
            .as_map()
            .into_iter()
            .flatten()
            .map(|e| e.key.as_str())
            .filter(|k| *k != "max_iterations")
            .collect();
        let [kind] = kinds.as_slice() else { continue };
        match *kind {
            "script" => {
                if let Some(path) = hook.get("script").and_then(Node::as_str) {
                    script(ctx, slug, phase, &field, path, hook, out);
                }
            }
            "rubric" => {}
            other if custom.iter().any(|c| c == other) => {}
            other => {
                let mut built_in = vec!["script".to_string(), "rubric".to_string()];
                built_in.extend(custom.iter().cloned());
                out.push(ctx.at(Diagnostic::error(
                    &field,
                    format!(
                        "State '{slug}' '{phase}' hook uses unknown kind '{other}'; built-in kinds \
                         are {}. Declare custom kinds under 'extensions.hooks' so the host can \
                         register an executor for them.",
                        built_in.join(" and ")
                    ),
                )));
            }
        }
    }
}

/// Normalizes a hook path the way a resolver would: drops `.`, applies `..`.
/// `None` when it climbs above the workflow directory.
fn normalize(path: &str) -> Option<Vec<&str>> {
    let mut out: Vec<&str> = Vec::new();
    for seg in path.split('/') {
        match seg {
            "" | "." => {}
            ".." => {
                out.pop()?;
            }
            s => out.push(s),
        }
    }
    Some(out)
}

fn script(
    ctx: &Context<'_>,
    slug: &str,
    phase: &str,
    field: &str,
    path: &str,
    hook: &Node,
    out: &mut Vec<Diagnostic>,
) {
    let hooks_dir = format!("workflows/{}/hooks/", ctx.workflow);
    let pos = hook.get("script").map(|n| n.pos);
    let problem = if path.trim().is_empty() {
        Some(format!(
            "State '{slug}' '{phase}' hook script path is empty"
        ))
    } else if path.starts_with('/') {
        Some(format!(
            "State '{slug}' '{phase}' hook script '{path}' is an absolute path; write it relative \
             to the workflow, under hooks/ (e.g. 'hooks/check.js')."
        ))
    } else {
        match normalize(path) {
            Some(segs) if segs == ["hooks"] => Some(format!(
                "State '{slug}' '{phase}' hook script '{path}' names the 'hooks/' directory, not a \
                 file"
            )),
            Some(segs) if segs.len() > 1 && segs[0] == "hooks" => None,
            _ => Some(format!(
                "State '{slug}' '{phase}' hook script '{path}' resolves outside 'hooks/'; hook \
                 scripts live in '{hooks_dir}' and are named 'hooks/<file>.js'."
            )),
        }
    };
    if let Some(message) = problem {
        out.push(Diagnostic::error(field, message).in_file(path).at(pos));
        return;
    }
    let resolved = format!(
        "workflows/{}/{}",
        ctx.workflow,
        normalize(path).unwrap_or_default().join("/")
    );
    let source = match ctx.files.read_checked(&resolved) {
        Ok(source) => source,
        Err(why) => {
            out.push(
                Diagnostic::error(
                    field,
                    format!("State '{slug}' '{phase}' hook script {resolved} {why}"),
                )
                .in_file(&resolved),
            );
            return;
        }
    };
    let Some(source) = source else {
        out.push(
            Diagnostic::error(
                field,
                format!("State '{slug}' '{phase}' hook script not found: {resolved}"),
            )
            .in_file(&resolved),
        );
        return;
    };
    let imports = static_imports(&source);
    let refused = |spec: &str| spec != HARNESS_PACKAGE && !spec.starts_with("@archmax-ai/harness/");
    // A refused import is reported above, and a run never gets as far as parsing the rest.
    if let Some(parse) = ctx.parse_script
        && !imports.iter().any(|(_, spec)| refused(spec))
        && let Some(e) = parse(&resolved, &source)
    {
        out.push(
            Diagnostic::error(
                field,
                format!(
                    "State '{slug}' '{phase}' hook script '{resolved}' does not parse: {}",
                    e.message
                ),
            )
            .in_file(&resolved)
            .at(Some(crate::yaml::Pos {
                line: e.line,
                column: e.column,
            })),
        );
    }
    for (line, spec) in imports {
        if refused(&spec) {
            out.push(
                Diagnostic::error(
                    field,
                    format!(
                        "Hook script '{resolved}' imports from '{spec}'; a hook runs \
                         self-contained in the sandbox and may import only from \
                         '@archmax-ai/harness/*' (type-carrier imports such as defineHook)."
                    ),
                )
                .in_file(&resolved)
                .at(Some(crate::yaml::Pos { line, column: 1 })),
            );
        }
    }
}

/// The module specifier of every static `import … from '…'`, `import '…'` and
/// `export … from '…'`, with its 1-based line.
pub(crate) fn static_imports(source: &str) -> Vec<(u32, String)> {
    let mut out = Vec::new();
    let mut in_statement = false;
    for (i, raw) in source.lines().enumerate() {
        let line = raw.trim();
        let starts = line.starts_with("import ")
            || line.starts_with("import{")
            || line.starts_with("import'")
            || line.starts_with("import\"")
            || (line.starts_with("export ") && line.contains(" from"));
        if starts {
            in_statement = true;
        }
        if !in_statement {
            continue;
        }
        let spec = match line.find("from") {
            Some(at) => quoted(&line[at + 4..]),
            None if line.starts_with("import") && !line.contains('{') && !line.contains(" as ") => {
                quoted(&line[6..])
            }
            None => None,
        };
        if let Some(spec) = spec {
            out.push((u32::try_from(i + 1).unwrap_or(u32::MAX), spec));
            in_statement = false;
        } else if line.ends_with(';') {
            in_statement = false;
        }
    }
    out
}

/// The first quoted string at the start of `s` (after spaces).
fn quoted(s: &str) -> Option<String> {
    let s = s.trim_start();
    let q = s.chars().next().filter(|c| *c == '\'' || *c == '"')?;
    let rest = &s[1..];
    let end = rest.find(q)?;
    Some(rest[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::static_imports;

    #[test]
    fn imports_are_found_with_their_lines() {
        let src = "/** Doc. */\nimport { defineHook } from \"@archmax-ai/harness/sandbox\";\nimport fs from 'node:fs';\nimport {\n  a,\n} from \"lodash\";\nimport 'side-effect';\nexport { x } from './x.js';\nconst s = \"import y from 'nope'\";\n";
        let found = static_imports(src);
        assert_eq!(
            found,
            vec![
                (2, "@archmax-ai/harness/sandbox".to_string()),
                (3, "node:fs".to_string()),
                (6, "lodash".to_string()),
                (7, "side-effect".to_string()),
                (8, "./x.js".to_string()),
            ]
        );
    }
}

//! `archmax init [dir]`: writes a small workspace that `archmax validate`
//! passes and `archmax run` can start from: one workflow (`hello`) with an
//! after hook, a human state and a case file, plus `AGENTS.md` and the
//! `.env.example` to copy to `.env`. Nothing is overwritten: when any of the
//! files exists the command writes none of them.

use std::path::Path;

use crate::args::Parsed;
use crate::style::CHECK;
use crate::workspace::resolve_root;
use crate::{Cli, Failure};

/// The slug of the workflow `init` writes.
pub const WORKFLOW: &str = "hello";

/// The files `init` writes (workspace-relative path, content), in write order.
pub const FILES: &[(&str, &str)] = &[
    (
        ".env.example",
        include_str!("../templates/init/env.example"),
    ),
    ("AGENTS.md", include_str!("../templates/init/AGENTS.md")),
    (
        "workflows/hello/workflow.yaml",
        include_str!("../templates/init/workflows/hello/workflow.yaml"),
    ),
    (
        "workflows/hello/hooks/check-answer.js",
        include_str!("../templates/init/workflows/hello/hooks/check-answer.js"),
    ),
    (
        "workflows/hello/tests/parks-for-review.test.yaml",
        include_str!("../templates/init/workflows/hello/tests/parks-for-review.test.yaml"),
    ),
];

/// Runs the command: the directory is the positional, else `--root`, else the
/// current directory.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    let given = positionals
        .first()
        .and_then(Option::as_deref)
        .or(parsed.text("root"));
    let root = resolve_root(&cli.cwd, given);
    if let Some((existing, _)) = FILES.iter().find(|(p, _)| root.join(p).exists()) {
        return Err(Failure::Command(format!(
            "{} already exists; 'archmax init' writes a new workspace and changes none (nothing was written)",
            root.join(existing).display()
        )));
    }
    for (path, content) in FILES {
        let dir = root.join(path);
        let dir = dir.parent().unwrap_or(&root);
        write(&root, path, &with_schema(content, dir))?;
    }
    let s = cli.style;
    let mut err = format!(
        "{}\n",
        s.green(&s.bold(&format!("{CHECK} workspace {}", root.display())))
    );
    for (path, _) in FILES {
        err.push_str(&format!("  {}\n", s.dim(path)));
    }
    cli.err(&err);
    cli.out(&next_steps(&cli.cwd, &root));
    Ok(0)
}

fn write(root: &Path, path: &str, content: &str) -> Result<(), Failure> {
    let target = root.join(path);
    let cannot =
        |e: std::io::Error| Failure::Command(format!("cannot write {}: {e}", target.display()));
    if let Some(dir) = target.parent() {
        std::fs::create_dir_all(dir).map_err(cannot)?;
    }
    std::fs::write(&target, content).map_err(cannot)
}

/// The line that names a file's JSON Schema for editors (the YAML language server).
const SCHEMA_LINE: &str = "# yaml-language-server: $schema=";

/// `content` with its schema line (if it opens with one) naming where the schema is for a
/// file written in `dir`: see [`schema_target`].
fn with_schema(content: &str, dir: &Path) -> String {
    let (first, rest) = content.split_once('\n').unwrap_or((content, ""));
    match first.strip_prefix(SCHEMA_LINE) {
        Some(target) => {
            let name = target.rsplit('/').next().unwrap_or(target);
            format!("{SCHEMA_LINE}{}\n{rest}", schema_target(dir, name))
        }
        None => content.to_owned(),
    }
}

/// Where an editor finds the package's schema `name` from a file in `dir`: the installed
/// package's copy, relative to `dir`, in the nearest `node_modules` at or above it (so a
/// workspace in a subfolder of the project gets the right number of `..`); without one (a
/// global or `npx` install), the published copy of this version.
fn schema_target(dir: &Path, name: &str) -> String {
    for folder in dir.ancestors() {
        let schema = folder.join("node_modules/@archmax-ai/harness").join(name);
        if schema.is_file()
            && let Some(rel) = pathdiff::diff_paths(&schema, dir)
        {
            return rel.to_string_lossy().replace('\\', "/");
        }
    }
    format!(
        "https://unpkg.com/@archmax-ai/harness@{}/{name}",
        env!("CARGO_PKG_VERSION")
    )
}

/// What to do next, with `--root` as the user would type it.
fn next_steps(cwd: &Path, root: &Path) -> String {
    let shown = match root.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => None,
        Ok(rel) => Some(rel.display().to_string()),
        Err(_) => Some(root.display().to_string()),
    };
    let flag = shown
        .as_deref()
        .map(|r| format!(" --root {r}"))
        .unwrap_or_default();
    let dir = shown.map(|r| format!("{r}/")).unwrap_or_default();
    format!(
        "Next:\n  archmax validate{flag}\n  cp {dir}.env.example {dir}.env   # then set the endpoint\n  archmax run {WORKFLOW} \"Draft a thank-you note to the team\"{flag}\n"
    )
}

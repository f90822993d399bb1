//! `archmax skill install [dir]`: copies the authoring skill (`skills/archmax-harness/`,
//! built into the binary) into a coding agent's skills folder, `.claude/skills/` of the
//! project by default. The skill's own files are replaced, so installing again updates it;
//! nothing else in the folder is touched.

use std::path::Path;

use crate::args::Parsed;
use crate::style::CHECK;
use crate::workspace::resolve_root;
use crate::{Cli, Failure};

/// The skill's directory name.
pub const SKILL: &str = "archmax-harness";

/// Where the skill goes when no directory is given, under the project root.
pub const DEFAULT_DIR: &str = ".claude/skills";

/// The skill's files (path under the skill's directory, content).
pub const FILES: &[(&str, &str)] = &[
    (
        "SKILL.md",
        include_str!("../../../skills/archmax-harness/SKILL.md"),
    ),
    (
        "references/workflow-language.md",
        include_str!("../../../skills/archmax-harness/references/workflow-language.md"),
    ),
    (
        "references/hooks-and-scripts.md",
        include_str!("../../../skills/archmax-harness/references/hooks-and-scripts.md"),
    ),
    (
        "references/cases.md",
        include_str!("../../../skills/archmax-harness/references/cases.md"),
    ),
    (
        "references/diagnostics.md",
        include_str!("../../../skills/archmax-harness/references/diagnostics.md"),
    ),
    (
        "references/host-wiring.md",
        include_str!("../../../skills/archmax-harness/references/host-wiring.md"),
    ),
];

/// Runs the command: the folder is the positional, else `--dir`, else
/// `<--root or the current directory>/.claude/skills`.
pub(crate) fn run(
    cli: &mut Cli<'_>,
    parsed: &Parsed,
    positionals: &[Option<String>],
) -> Result<i32, Failure> {
    match positionals.first().and_then(Option::as_deref) {
        Some("install") => {}
        Some(other) => {
            return Err(Failure::Usage(format!(
                "unknown skill action '{other}' (expected 'install')"
            )));
        }
        None => return Err(Failure::Usage("missing the action ('install')".into())),
    }
    let given = positionals
        .get(1)
        .and_then(Option::as_deref)
        .or(parsed.text("dir"));
    let folder = match given {
        Some(dir) => resolve_root(&cli.cwd, Some(dir)),
        None => resolve_root(&cli.cwd, parsed.text("root")).join(DEFAULT_DIR),
    };
    let target = folder.join(SKILL);
    for (path, content) in FILES {
        write(&target, path, content)?;
    }
    let s = cli.style;
    let mut err = format!(
        "{}\n",
        s.green(&s.bold(&format!("{CHECK} skill {SKILL} → {}", target.display())))
    );
    for (path, _) in FILES {
        err.push_str(&format!("  {}\n", s.dim(path)));
    }
    cli.err(&err);
    cli.out(&format!("{}\n", target.display()));
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

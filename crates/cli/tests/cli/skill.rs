//! `archmax skill install [dir]`: the authoring skill, as the repo holds it, lands in
//! the project's `.claude/skills/` or the folder given, and the command says where.

use std::path::Path;

use crate::support::{Workspace, cli};

/// The repo's `skills/archmax-harness/`, every file (relative path, text), sorted.
fn repo_skill() -> Vec<(String, String)> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../skills/archmax-harness");
    let mut out = Vec::new();
    for rel in ["", "references"] {
        for e in std::fs::read_dir(root.join(rel))
            .expect("skill dir")
            .flatten()
        {
            if e.path().is_file() {
                let name = e.file_name().to_string_lossy().into_owned();
                let path = if rel.is_empty() {
                    name
                } else {
                    format!("{rel}/{name}")
                };
                out.push((path, std::fs::read_to_string(e.path()).expect("read")));
            }
        }
    }
    out.sort();
    out
}

fn installed(dir: &Path) -> Vec<(String, String)> {
    repo_skill()
        .into_iter()
        .map(|(p, _)| {
            let text = std::fs::read_to_string(dir.join(&p)).unwrap_or_default();
            (p, text)
        })
        .collect()
}

#[test]
fn install_copies_the_whole_skill_into_the_projects_claude_skills() {
    let ws = Workspace::new(&[]);
    let r = cli(&ws, None, &["skill", "install"]);
    assert_eq!(r.code, 0, "{}", r.err);
    let target = ws.root().join(".claude/skills/archmax-harness");
    assert_eq!(r.out, format!("{}\n", target.display()));
    assert!(
        r.err.contains("SKILL.md") && r.err.contains("references/cases.md"),
        "{}",
        r.err
    );
    assert_eq!(installed(&target), repo_skill());
    // Installing again replaces the skill's files and leaves the rest of the folder.
    std::fs::write(target.join("SKILL.md"), "old").expect("write");
    std::fs::write(target.join("notes.md"), "mine").expect("write");
    assert_eq!(cli(&ws, None, &["skill", "install"]).code, 0);
    assert_eq!(installed(&target), repo_skill());
    assert_eq!(
        std::fs::read_to_string(target.join("notes.md")).expect("kept"),
        "mine"
    );
}

#[test]
fn install_takes_a_folder_as_positional_or_dir_and_refuses_other_actions() {
    let ws = Workspace::new(&[]);
    assert_eq!(
        cli(&ws, None, &["skill", "install", "agents/skills"]).code,
        0
    );
    assert_eq!(
        installed(&ws.root().join("agents/skills/archmax-harness")),
        repo_skill()
    );
    assert_eq!(
        cli(&ws, None, &["skill", "install", "--dir", "other"]).code,
        0
    );
    assert_eq!(
        installed(&ws.root().join("other/archmax-harness")),
        repo_skill()
    );
    let bad = cli(&ws, None, &["skill", "remove"]);
    assert_eq!(bad.code, 2);
    assert_eq!(
        bad.err,
        "Error: unknown skill action 'remove' (expected 'install') (try: archmax skill --help)\n"
    );
}

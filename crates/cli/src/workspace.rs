//! The workspace root and the workflow slot (cli digest §3).

use std::path::{Component, Path, PathBuf};

/// Resolves `root` against `cwd` like Node's `path.resolve`: absolute, with
/// `.` and `..` removed lexically. `None` or empty means `cwd`.
pub fn resolve_root(cwd: &Path, root: Option<&str>) -> PathBuf {
    let joined = match root.filter(|r| !r.is_empty()) {
        Some(r) => cwd.join(r),
        None => cwd.to_path_buf(),
    };
    let mut out = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

/// The workflows of a workspace: directories directly under `<root>/workflows/`
/// holding a `workflow.yaml`, sorted. Symlinked directories are not followed.
pub fn workflow_candidates(root: &Path) -> Vec<String> {
    let dir = root.join("workflows");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter(|e| e.path().join("workflow.yaml").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The workflow slot: the given slug when non-empty, else the only workflow of
/// the workspace. The error is a usage message.
pub fn workflow_slot(given: Option<&str>, root: &Path) -> Result<String, String> {
    if let Some(slug) = given.filter(|s| !s.is_empty()) {
        return Ok(slug.to_string());
    }
    let candidates = workflow_candidates(root);
    match candidates.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!(
            "a workflow is required and none was found under {}",
            root.join("workflows").display()
        )),
        several => Err(format!(
            "a workflow is required; this workspace has several: {}",
            several.join(", ")
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_resolve_like_path_resolve() {
        let cwd = Path::new("/work/ws");
        assert_eq!(resolve_root(cwd, None), PathBuf::from("/work/ws"));
        assert_eq!(resolve_root(cwd, Some("")), PathBuf::from("/work/ws"));
        assert_eq!(
            resolve_root(cwd, Some("../other/./x/")),
            PathBuf::from("/work/other/x")
        );
        assert_eq!(resolve_root(cwd, Some("/abs/../b")), PathBuf::from("/b"));
    }

    fn temp_workspace(name: &str, workflows: &[&str]) -> PathBuf {
        let root =
            std::env::temp_dir().join(format!("archmax-cli-slot-{name}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        for w in workflows {
            let dir = root.join("workflows").join(w);
            std::fs::create_dir_all(&dir).expect("create workflow dir");
            std::fs::write(dir.join("workflow.yaml"), "states: {}\n").expect("write spec");
        }
        std::fs::create_dir_all(root.join("workflows/no-spec")).expect("create dir");
        root
    }

    #[test]
    fn the_slot_is_inferred_only_when_absent() {
        let one = temp_workspace("one", &["only"]);
        assert_eq!(workflow_slot(None, &one).as_deref(), Ok("only"));
        assert_eq!(workflow_slot(Some(""), &one).as_deref(), Ok("only"));
        assert_eq!(workflow_slot(Some("given"), &one).as_deref(), Ok("given"));
        let two = temp_workspace("two", &["b-flow", "a-flow"]);
        assert_eq!(
            workflow_slot(None, &two),
            Err("a workflow is required; this workspace has several: a-flow, b-flow".to_string())
        );
        let none = temp_workspace("none", &[]);
        assert_eq!(
            workflow_slot(None, &none),
            Err(format!(
                "a workflow is required and none was found under {}/workflows",
                none.display()
            ))
        );
        for dir in [one, two, none] {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

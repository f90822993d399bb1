//! Where the agent's files went: the files of `sessions/<id>/` (the
//! checkpoints aside) that a command's turn created or changed, as one stderr
//! line at its end, so a newcomer knows where to look.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use crate::style::Style;

/// At most this many paths are named; the rest are counted.
const SHOWN: usize = 5;

/// The folder of session `id` in the workspace's filesystem store (named by its storage key).
fn folder(root: &Path, id: &str) -> PathBuf {
    root.join(archmax_machine::store::SESSIONS_DIR)
        .join(&*archmax_machine::store::storage_key(
            id.trim_start_matches('/'),
        ))
}

/// The session's files before a turn: path → (modified, length).
#[derive(Debug, Default)]
pub(crate) struct Before(BTreeMap<PathBuf, (Option<SystemTime>, u64)>);

impl Before {
    /// The files under `<root>/sessions/<key>/` now (the folder of session `id`).
    pub(crate) fn take(root: &Path, id: &str) -> Self {
        let mut files = BTreeMap::new();
        walk(&folder(root, id), &mut files);
        Before(files)
    }

    /// The files created or changed since, relative to `root`, sorted.
    pub(crate) fn changed(&self, root: &Path, id: &str) -> Vec<String> {
        let mut now = BTreeMap::new();
        walk(&folder(root, id), &mut now);
        now.into_iter()
            .filter(|(path, seen)| self.0.get(path) != Some(seen))
            .filter_map(|(path, _)| {
                path.strip_prefix(root)
                    .ok()
                    .map(|p| p.to_string_lossy().replace('\\', "/"))
            })
            .collect()
    }
}

fn walk(dir: &Path, found: &mut BTreeMap<PathBuf, (Option<SystemTime>, u64)>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.filter_map(Result::ok) {
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() {
            // The checkpoints are the harness's, not the agent's.
            if entry.file_name() != "checkpoints" {
                walk(&path, found);
            }
        } else if kind.is_file()
            && let Ok(meta) = entry.metadata()
        {
            found.insert(path, (meta.modified().ok(), meta.len()));
        }
    }
}

/// The stderr line naming `files`, or "" when there are none.
pub(crate) fn line(style: &Style, files: &[String]) -> String {
    if files.is_empty() {
        return String::new();
    }
    let mut named = files
        .iter()
        .take(SHOWN)
        .cloned()
        .collect::<Vec<_>>()
        .join(", ");
    if files.len() > SHOWN {
        named.push_str(&format!(" (and {} more)", files.len() - SHOWN));
    }
    format!("\n{}     {named}\n", style.dim("files"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_new_and_changed_files_outside_the_checkpoints() {
        let root = std::env::temp_dir().join(format!("archmax-written-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&root);
        let session = root.join("sessions/s-1");
        std::fs::create_dir_all(session.join("checkpoints")).expect("mkdir");
        std::fs::create_dir_all(session.join("scratchpad")).expect("mkdir");
        std::fs::write(session.join("scratchpad/old.md"), "kept").expect("write");
        std::fs::write(session.join("scratchpad/edited.md"), "v1").expect("write");
        let before = Before::take(&root, "s-1");
        std::fs::write(session.join("checkpoints/state.json"), "{}").expect("write");
        std::fs::write(session.join("scratchpad/answer.md"), "hi").expect("write");
        std::fs::write(session.join("scratchpad/edited.md"), "v2 longer").expect("write");
        let files = before.changed(&root, "s-1");
        assert_eq!(
            files,
            vec![
                "sessions/s-1/scratchpad/answer.md".to_string(),
                "sessions/s-1/scratchpad/edited.md".to_string()
            ]
        );
        assert_eq!(
            line(&Style::new(false), &files[..1]),
            "\nfiles     sessions/s-1/scratchpad/answer.md\n"
        );
        assert_eq!(line(&Style::new(false), &[]), "");
        assert!(Before::take(&root, "s-1").changed(&root, "s-1").is_empty());
        let _ = std::fs::remove_dir_all(&root);
    }
}

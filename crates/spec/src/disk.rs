//! The one place this crate touches the file system: [`DiskFiles`].

use std::path::{Component, Path, PathBuf};

use crate::workspace::{DirEntry, Files};

/// A workspace on disk, read through workspace-relative `/`-separated paths.
#[derive(Debug, Clone)]
pub struct DiskFiles {
    root: PathBuf,
}

impl DiskFiles {
    /// A workspace rooted at `root`.
    pub fn new(root: impl Into<PathBuf>) -> Self {
        DiskFiles { root: root.into() }
    }

    /// The root directory.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The absolute path of a workspace-relative path; `None` if it climbs out.
    fn resolve(&self, rel: &str) -> Option<PathBuf> {
        let rel = Path::new(rel.trim_start_matches('/'));
        if rel
            .components()
            .any(|c| !matches!(c, Component::Normal(_) | Component::CurDir))
        {
            return None;
        }
        Some(self.root.join(rel))
    }
}

impl Files for DiskFiles {
    fn read(&self, path: &str) -> Option<String> {
        let p = self.resolve(path)?;
        let bytes = std::fs::read(p).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }

    fn list(&self, dir: &str) -> Vec<DirEntry> {
        let Some(p) = self.resolve(dir) else {
            return Vec::new();
        };
        let Ok(rd) = std::fs::read_dir(p) else {
            return Vec::new();
        };
        let mut out: Vec<DirEntry> = rd
            .filter_map(Result::ok)
            .filter_map(|e| {
                // Symlinked directories are not followed, as in the original.
                let ft = e.file_type().ok()?;
                Some(DirEntry {
                    name: e.file_name().to_string_lossy().into_owned(),
                    is_dir: ft.is_dir(),
                })
            })
            .collect();
        out.sort_by(|a, b| a.name.cmp(&b.name));
        out
    }
}

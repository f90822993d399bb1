//! The filesystem store's folder names: from an earlier layout to storage keys.
//!
//! Before session ids had storage keys, a session's folder was named by its id as given, so
//! `Acme` and `p~s:w:1` were folders of those names. Opening a store renames each such
//! top-level folder to its id's key ([`SessionId::key`]) once: a folder whose name is
//! already a key is left alone (every folder this layout makes is one), so the upgrade can
//! run again, or in two processes at once, without harm. A folder whose key is already
//! taken is left where it is (and warned about). Sessions nested inside another's folder
//! by an id holding `/` are not carried over: their records were reachable by the
//! session they sat in.

use std::fs;
use std::io::ErrorKind;
use std::path::Path;

use super::SessionId;
use super::fs::CHECKPOINTS_DIR;
use super::id::id_of_key;

/// Written in the store root once its folders are storage keys; its presence skips the scan.
pub const LAYOUT_FILE: &str = ".layout";
/// What [`LAYOUT_FILE`] holds.
const LAYOUT: &str = "session-keys/1\n";

/// Renames the earlier layout's session folders under `sessions` to their keys (best effort:
/// what cannot be read or renamed is warned about and left as it was).
pub(super) fn upgrade(sessions: &Path) {
    let marker = sessions.join(LAYOUT_FILE);
    if marker.exists() {
        return;
    }
    let entries = match fs::read_dir(sessions) {
        Ok(entries) => entries,
        Err(e) if e.kind() == ErrorKind::NotFound => return,
        Err(e) => {
            tracing::warn!(dir = %sessions.display(), error = %e, "cannot read the session store to upgrade its layout");
            return;
        }
    };
    let mut clean = true;
    for entry in entries.flatten() {
        let Ok(name) = entry.file_name().into_string() else {
            continue;
        };
        if id_of_key(&name).is_some() || !entry.path().join(CHECKPOINTS_DIR).is_dir() {
            continue;
        }
        let Ok(id) = SessionId::parse(&name) else {
            continue;
        };
        let to = sessions.join(&*id.key());
        if to.exists() {
            tracing::warn!(session = %name, "an earlier layout's session folder is left as it is: its new name is taken");
            clean = false;
            continue;
        }
        match fs::rename(entry.path(), &to) {
            Ok(()) => {}
            // Another process renamed it first.
            Err(e) if e.kind() == ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!(session = %name, error = %e, "cannot rename an earlier layout's session folder");
                clean = false;
            }
        }
    }
    if clean {
        let _ = fs::write(&marker, LAYOUT);
    }
}

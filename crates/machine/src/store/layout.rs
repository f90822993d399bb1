//! The filesystem store's layout: the names of its folders and files, and the upgrade of
//! its folder names from an earlier layout to storage keys.
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

use super::id::SessionId;
use super::id::id_of_key;

/// Folder of the session store under the workspace root.
pub const SESSIONS_DIR: &str = archmax_kernel::host::SESSION_STORE;
/// Spec snapshot folder at the store root.
pub const SPECS_DIR: &str = "_specs";
/// The state file of a session.
pub const STATE_FILE: &str = "state.json";
/// The temporary state file renamed over [`STATE_FILE`].
pub const STATE_TMP_FILE: &str = "state.json.tmp";
/// The append-only transcript of a session.
pub const TRANSCRIPT_FILE: &str = "transcript.jsonl";
/// The folder of a session's own files ([`STATE_FILE`], [`TRANSCRIPT_FILE`], the writer
/// lease): `checkpoints/`, a zone no agent tool may read or write (`zone.runtime-internal`),
/// so a turn can never forge or break its own checkpoint.
pub const CHECKPOINTS_DIR: &str = "checkpoints";
/// The agent working area, created on first commit.
pub const SCRATCHPAD_DIR: &str = "scratchpad";
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

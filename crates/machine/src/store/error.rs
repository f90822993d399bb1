//! Store errors.

use std::io;
use std::path::PathBuf;

/// An error of a [`SessionStore`](super::SessionStore). Every IO error names the session id
/// (when the operation concerns one) and the file path.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// A second writer arrived while a turn holds the session (runtime §2.1, exact text).
    #[error("{}", busy_message(.id, .status))]
    Busy {
        /// The session id.
        id: String,
        /// The stored state's `status`, or `unknown`.
        status: String,
    },
    /// A filesystem operation on a session's files failed.
    #[error("session '{id}': cannot {op} '{}': {source}", path.display())]
    Io {
        /// The session id.
        id: String,
        /// The file or folder concerned.
        path: PathBuf,
        /// What was attempted (`read`, `write`, `rename`, …).
        op: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A filesystem operation not tied to one session (listing, spec snapshots) failed.
    #[error("session store: cannot {op} '{}': {source}", path.display())]
    StoreIo {
        /// The file or folder concerned.
        path: PathBuf,
        /// What was attempted.
        op: &'static str,
        /// The underlying error.
        #[source]
        source: io::Error,
    },
    /// A session's stored files are inconsistent (not a crash leftover: those are tolerated).
    #[error("session '{id}': corrupt '{}': {detail}", path.display())]
    Corrupt {
        /// The session id.
        id: String,
        /// The file concerned.
        path: PathBuf,
        /// What is wrong.
        detail: String,
    },
    /// A value could not be encoded as JSON.
    #[error("session '{id}': cannot encode JSON: {source}")]
    Encode {
        /// The session id (or the spec hash for a snapshot).
        id: String,
        /// The underlying error.
        #[source]
        source: serde_json::Error,
    },
    /// A store the host implements (a JS object) failed: its method threw, rejected, was
    /// unreachable or answered something unreadable.
    #[error(
        "session store: {method}{} failed: {message}",
        id.as_deref().map(|id| format!(" of session '{id}'")).unwrap_or_default()
    )]
    Host {
        /// The store method (`load`, `commit`, `list`, …).
        method: &'static str,
        /// The session concerned, when the method is about one.
        id: Option<String>,
        /// What went wrong.
        message: String,
    },
    /// A store kept in a database (or another service) failed: unreachable, refused the
    /// statement, or holds data this version cannot read.
    #[error(
        "session store ({store}): cannot {op}{}: {message}",
        id.as_deref().map(|id| format!(" session '{id}'")).unwrap_or_default()
    )]
    Backend {
        /// What the store is (`postgres`).
        store: &'static str,
        /// What was attempted (`connect`, `commit`, `load`, …).
        op: &'static str,
        /// The session concerned, when the operation is about one.
        id: Option<String>,
        /// What went wrong.
        message: String,
    },
    /// The store keeps only a session's latest step, so it has no history to list or fork.
    #[error(
        "session '{id}': the {store} session store keeps only the latest step, so it has no history to list or fork from (the filesystem, in-memory and PostgreSQL stores keep every step)"
    )]
    NoHistory {
        /// The session id.
        id: String,
        /// What the store is.
        store: &'static str,
    },
    /// A spec hash that is not a plain file name (ASCII letters and digits only).
    #[error("invalid spec hash '{hash}': expected ASCII letters and digits only")]
    InvalidSpecHash {
        /// The refused hash.
        hash: String,
    },
}

/// `Session '<id>' has a turn in progress (status '<status>'). …` (runtime §2.1, exact text).
pub fn busy_message(id: &str, status: &str) -> String {
    format!(
        "Session '{id}' has a turn in progress (status '{status}'). A session has a single writer: retry once the turn parks or ends."
    )
}

impl StoreError {
    /// An IO error on a session file.
    pub(crate) fn io(
        id: &str,
        op: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> StoreError {
        let id = id.to_owned();
        let path = path.into();
        move |source| StoreError::Io {
            id,
            path,
            op,
            source,
        }
    }

    /// An IO error on a store-level file.
    pub(crate) fn store_io(
        op: &'static str,
        path: impl Into<PathBuf>,
    ) -> impl FnOnce(io::Error) -> StoreError {
        let path = path.into();
        move |source| StoreError::StoreIo { path, op, source }
    }
}

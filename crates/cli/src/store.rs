//! The session store a command works on: the workspace's `sessions/` folder, or the
//! PostgreSQL database `ARCHMAX_SESSION_STORE` names (`postgres://…`), from the environment,
//! else the working directory's or the workspace's `.env`.

use std::path::Path;
use std::sync::Arc;

use archmax_machine::store::{FsStore, SessionStore};
use archmax_store_pg::PgStore;

use crate::{Cli, Failure};

/// The variable that chooses the store.
pub(crate) const STORE_VAR: &str = "ARCHMAX_SESSION_STORE";

/// The value of [`STORE_VAR`], `None` when unset or blank.
pub(crate) fn choice(cli: &Cli<'_>, root: &Path) -> Option<String> {
    let value = cli.var(STORE_VAR).or_else(|| {
        // The workspace's `.env` may not be loaded yet (a session command reads the
        // session's record before it knows everything else).
        let mut env = cli.env.clone();
        let real = |n: &str| cli.io.env_var(n);
        env.load_file(&real, &root.join(".env"));
        env.get(&real, STORE_VAR)
    })?;
    let value = value.trim().to_string();
    (!value.is_empty()).then_some(value)
}

/// Opens the chosen store: PostgreSQL for a `postgres://` or `postgresql://` URL (its tables
/// made or migrated on the way), the workspace's folder when nothing is chosen.
pub(crate) fn open(cli: &Cli<'_>, root: &Path) -> Result<Arc<dyn SessionStore>, Failure> {
    match choice(cli, root) {
        None => Ok(Arc::new(FsStore::new(root))),
        Some(url) => Ok(Arc::new(postgres(&url)?)),
    }
}

/// The store a command's `--store` names: a `postgres://` or `postgresql://` URL, else a
/// folder of sessions (relative to the working directory; `archmax test --keep` names one);
/// without it, [`open`]'s.
pub(crate) fn open_given(
    cli: &Cli<'_>,
    root: &Path,
    given: Option<&str>,
) -> Result<Arc<dyn SessionStore>, Failure> {
    match given {
        None => open(cli, root),
        Some(url) if url.starts_with("postgres://") || url.starts_with("postgresql://") => {
            Ok(Arc::new(postgres(url)?))
        }
        Some(dir) => Ok(Arc::new(FsStore::with_sessions_dir(cli.cwd.join(dir)))),
    }
}

/// The PostgreSQL store at `url`; any other value of [`STORE_VAR`] is refused, naming it.
pub(crate) fn postgres(url: &str) -> Result<PgStore, Failure> {
    if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
        let shown: String = url.chars().take(40).collect();
        return Err(Failure::Command(format!(
            "{STORE_VAR} must be a postgres:// or postgresql:// URL (or unset, for the workspace's sessions folder), got '{shown}'"
        )));
    }
    PgStore::connect(url).map_err(|e| Failure::Command(e.to_string()))
}

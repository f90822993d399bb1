//! A session's files (`scratchpad/`, offloaded results, what the agent writes) in the
//! database: one `archmax_files` row per file (`content`) or folder (`content` NULL).
//!
//! A [`PgArea`] is a [`MemArea`] loaded from the session's rows, written through: every
//! change the memory area accepts is then written to the database before the call returns,
//! so the answers (error kinds, limits: `MAX_BYTES`, `MAX_ENTRIES`) are the memory store's
//! byte for byte, and the rows are the truth another worker loads. The store reloads a
//! session's area whenever it takes the session's writer lease (only the lease holder
//! changes a session's files), and when a write through failed (the area is then stale).

use std::io;
use std::path::{Component, Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use archmax_machine::files::{Backend, MemArea, Meta, ReadError, SessionFiles};
use deadpool_postgres::Pool;

use crate::{PgResult, block, db, pool_err};

/// The virtual folder PostgreSQL sessions' files are served under; no disk serves it.
pub const PG_FILES_ROOT: &str = "/archmax-postgres/sessions";

pub(crate) struct PgArea {
    /// The rows as last loaded, with the changes written through since; replaced whole by
    /// a reload, so every handle on the area sees the reloaded files.
    mem: RwLock<Arc<MemArea>>,
    base: PathBuf,
    pool: Pool,
    id: String,
    /// A write through failed or the load did: the next `session_files` reloads.
    stale: AtomicBool,
    /// Why the area could not be loaded (every call then answers it).
    unloaded: Mutex<Option<String>>,
}

impl std::fmt::Debug for PgArea {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgArea")
            .field("id", &self.id)
            .field("mem", &self.mem())
            .finish()
    }
}

/// One change to write through.
enum Change {
    /// Folders (area-relative keys), created if absent.
    Dirs(Vec<String>),
    /// A file and the folders above it.
    File {
        dirs: Vec<String>,
        key: String,
        bytes: Vec<u8>,
    },
    Remove(String),
}

impl PgArea {
    /// The session's area as its rows hold it.
    pub(crate) fn load(pool: Pool, id: &str) -> PgArea {
        let base = Path::new(PG_FILES_ROOT).join(&*archmax_machine::store::storage_key(id));
        let area = PgArea {
            mem: RwLock::new(Arc::new(MemArea::new(&base))),
            base,
            pool,
            id: id.to_owned(),
            stale: AtomicBool::new(false),
            unloaded: Mutex::new(None),
        };
        area.reload();
        area
    }

    /// Reads the session's rows again, replacing what the area holds. A failed load leaves
    /// an area that answers the failure to every call (and is stale, so reloaded next time).
    pub(crate) fn reload(&self) {
        let key = self.id.clone();
        let pool = self.pool.clone();
        let rows = block(async move {
            let client = pool.get().await.map_err(pool_err)?;
            let rows = client
                .query(
                    "SELECT path, content FROM archmax_files WHERE session_id = $1 ORDER BY path",
                    &[&key],
                )
                .await
                .map_err(db)?;
            let committed = client
                .query_opt("SELECT 1 FROM archmax_sessions WHERE id = $1", &[&key])
                .await
                .map_err(db)?
                .is_some();
            Ok((
                rows.into_iter()
                    .map(|r| (r.get::<_, String>(0), r.get::<_, Option<Vec<u8>>>(1)))
                    .collect::<Vec<_>>(),
                committed,
            ))
        });
        let mem = MemArea::new(&self.base);
        let failed = match rows {
            Err(e) => Some(e),
            Ok((rows, committed)) => fill(&mem, rows, committed).err(),
        };
        self.stale.store(failed.is_some(), Ordering::Relaxed);
        *self.unloaded.lock().unwrap_or_else(PoisonError::into_inner) = failed;
        *self.mem.write().unwrap_or_else(PoisonError::into_inner) = Arc::new(mem);
    }

    fn mem(&self) -> Arc<MemArea> {
        Arc::clone(&self.mem.read().unwrap_or_else(PoisonError::into_inner))
    }

    pub(crate) fn is_stale(&self) -> bool {
        self.stale.load(Ordering::Relaxed)
    }

    /// The session's first commit made `scratchpad/` (the commit wrote its row).
    pub(crate) fn first_commit(&self) -> io::Result<()> {
        self.mem().first_commit()
    }

    pub(crate) fn session_files(self: Arc<Self>) -> SessionFiles {
        SessionFiles {
            dir: self.base.clone(),
            backend: self,
        }
    }

    /// The area's memory, or the load's failure.
    fn loaded(&self) -> io::Result<Arc<MemArea>> {
        match &*self.unloaded.lock().unwrap_or_else(PoisonError::into_inner) {
            None => Ok(self.mem()),
            Some(e) => Err(io::Error::other(format!(
                "the session's files could not be read from PostgreSQL: {e}"
            ))),
        }
    }

    /// The area-relative key of `path` (the memory area accepted it, so it is under `base`).
    fn key(&self, path: &Path) -> String {
        let rel = path.strip_prefix(&self.base).unwrap_or(path);
        rel.components()
            .filter_map(|c| match c {
                Component::Normal(n) => n.to_str(),
                _ => None,
            })
            .collect::<Vec<_>>()
            .join("/")
    }

    /// `key` and every folder above it, outermost first.
    fn with_parents(key: &str) -> Vec<String> {
        key.match_indices('/')
            .map(|(i, _)| key[..i].to_string())
            .chain((!key.is_empty()).then(|| key.to_string()))
            .collect()
    }

    fn parents(&self, path: &Path) -> Vec<String> {
        path.parent()
            .map(|p| Self::with_parents(&self.key(p)))
            .unwrap_or_default()
    }

    /// Writes `change` to the database; on failure the area is stale (reloaded next time)
    /// and the caller gets the database's error.
    fn persist(&self, change: Change) -> io::Result<()> {
        let pool = self.pool.clone();
        let id = self.id.clone();
        let done: PgResult<()> = block(async move {
            let client = pool.get().await.map_err(pool_err)?;
            let dirs_sql = "INSERT INTO archmax_files (session_id, path, content) \
                            SELECT $1, p, NULL FROM unnest($2::text[]) AS p ON CONFLICT DO NOTHING";
            match change {
                Change::Dirs(dirs) => {
                    client.execute(dirs_sql, &[&id, &dirs]).await.map_err(db)?;
                }
                Change::File { dirs, key, bytes } => {
                    if !dirs.is_empty() {
                        client.execute(dirs_sql, &[&id, &dirs]).await.map_err(db)?;
                    }
                    client
                        .execute(
                            "INSERT INTO archmax_files (session_id, path, content) VALUES ($1, $2, $3) \
                             ON CONFLICT (session_id, path) DO UPDATE SET content = EXCLUDED.content",
                            &[&id, &key, &bytes],
                        )
                        .await
                        .map_err(db)?;
                }
                Change::Remove(key) => {
                    client
                        .execute(
                            "DELETE FROM archmax_files WHERE session_id = $1 AND path = $2",
                            &[&id, &key],
                        )
                        .await
                        .map_err(db)?;
                }
            }
            Ok(())
        });
        done.map_err(|e| {
            self.stale.store(true, Ordering::Relaxed);
            io::Error::other(format!(
                "the session's files could not be written to PostgreSQL: {e}"
            ))
        })
    }
}

/// Rebuilds the memory area from the rows (in path order, so a folder comes before what
/// it holds).
fn fill(mem: &MemArea, rows: Vec<(String, Option<Vec<u8>>)>, committed: bool) -> PgResult<()> {
    let base = mem.base().to_path_buf();
    for (key, content) in rows {
        let path: PathBuf = base.join(&key);
        let done = match content {
            None => mem.create_dir_all(&path),
            Some(bytes) => mem.write(&path, &bytes),
        };
        done.map_err(|e| format!("stored file '{key}' cannot be loaded: {e}"))?;
    }
    if committed {
        mem.first_commit().map_err(|e| e.to_string())?;
    }
    Ok(())
}

impl Backend for PgArea {
    fn waits_on_disk(&self) -> bool {
        true
    }

    fn meta(&self, path: &Path) -> io::Result<Meta> {
        self.loaded()?.meta(path)
    }

    fn read(&self, path: &Path) -> io::Result<Vec<u8>> {
        self.loaded()?.read(path)
    }

    fn read_dir(&self, path: &Path) -> io::Result<Vec<String>> {
        self.loaded()?.read_dir(path)
    }

    fn create_dir_all(&self, path: &Path) -> io::Result<()> {
        self.loaded()?.create_dir_all(path)?;
        let dirs = Self::with_parents(&self.key(path));
        if dirs.is_empty() {
            return Ok(());
        }
        self.persist(Change::Dirs(dirs))
    }

    fn write(&self, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.loaded()?.write(path, bytes)?;
        self.persist(Change::File {
            dirs: Vec::new(),
            key: self.key(path),
            bytes: bytes.to_vec(),
        })
    }

    fn remove_file(&self, path: &Path) -> io::Result<()> {
        self.loaded()?.remove_file(path)?;
        self.persist(Change::Remove(self.key(path)))
    }

    fn write_confined(&self, base: &Path, path: &Path, bytes: &[u8]) -> io::Result<()> {
        self.loaded()?.write_confined(base, path, bytes)?;
        self.persist(Change::File {
            dirs: self.parents(path),
            key: self.key(path),
            bytes: bytes.to_vec(),
        })
    }

    fn read_regular(&self, path: &Path, limit: u64) -> Result<Option<Vec<u8>>, ReadError> {
        match self.loaded() {
            Ok(mem) => mem.read_regular(path, limit),
            Err(e) => Err(ReadError::Io(e.to_string())),
        }
    }
}

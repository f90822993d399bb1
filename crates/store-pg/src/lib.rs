//! Sessions in PostgreSQL: the [`SessionStore`] that many workers on many machines share.
//!
//! ```no_run
//! # fn main() -> Result<(), archmax_machine::store::StoreError> {
//! use archmax_store_pg::PgStore;
//! let store = PgStore::builder("postgres://archmax@127.0.0.1:5432/archmax")
//!     .schema("support")                                 // optional: its own schema
//!     .lease_ttl(std::time::Duration::from_secs(30))     // optional: the writer lease's expiry
//!     .connect()?;                                       // creates or migrates the tables
//! # Ok(()) }
//! ```
//!
//! What each guarantee rests on (`docs/postgres.md` has the schema and the operations):
//! * **A step is durable when its commit returns**: the step's messages, the new state and
//!   the session's due time are written in one transaction (`commit`), so a kill at any
//!   instant leaves the last complete step; a load reads the state and the messages it
//!   covers in one statement (one snapshot).
//! * **One writer per session, across machines**: a lease row (`archmax_leases`) taken with
//!   one `INSERT … ON CONFLICT … WHERE expires_at < now()` (the database's clock, so the
//!   workers' clocks do not matter), renewed by a heartbeat every third of its time to live,
//!   and by every commit, deleted when the lease is dropped. A crashed worker's lease is
//!   taken over once expired; the worker that lost its lease cannot commit any more (each
//!   commit renews the lease row of its own holder in the same transaction, or fails).
//! * **Waits wake on time**: a commit stores a waiting session's `park.resumeAt` as
//!   `due_at`; [`PgStore::claim_due`] hands each due session to one worker
//!   (`FOR UPDATE SKIP LOCKED`, pushing its due time by the lease's time to live, so a
//!   worker that dies before resuming it leaves it due again).
//!
//! The [`SessionStore`] trait is synchronous; the driver (`tokio-postgres`, pooled by
//! `deadpool-postgres`) is async. Every operation runs on one process-wide runtime of the
//! store's own and the calling thread waits for its answer, so the store may be called from
//! any thread, inside another tokio runtime or not (it says [`SessionStore::waits_on_disk`],
//! so a turn calls it from the blocking pool).

mod files;
mod queue;
mod schema;

use std::collections::HashMap;
use std::future::Future;
use std::str::FromStr;
use std::sync::{Arc, LazyLock, Mutex, PoisonError, Weak};
use std::time::Duration;

use archmax_machine::files::SessionFiles;
use archmax_machine::store::{
    Checkpoint, History, Holders, SessionId, SessionStore, Snapshot, Step, StoreError, WriterLease,
    busy, check_spec_hash, is_descendant,
};
use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use serde_json::Value;
use tokio_postgres::NoTls;

pub use queue::{ClaimedDelivery, Delivery, DeliveryRecord};
pub use schema::SCHEMA_VERSION;

use files::PgArea;

/// What the store's messages call it.
const KIND: &str = "postgres";

/// The writer lease's default time to live.
pub const DEFAULT_LEASE_TTL: Duration = Duration::from_secs(30);

/// The connection pool's default size.
pub const DEFAULT_POOL_SIZE: usize = 8;

/// An operation's failure, before it is named ([`StoreError::Backend`]).
pub(crate) type PgResult<T> = Result<T, String>;

/// A driver error as text: the server's message (with its detail) or the client's chain.
pub(crate) fn db(e: tokio_postgres::Error) -> String {
    if let Some(db) = e.as_db_error() {
        return match db.detail() {
            Some(detail) => format!("{} ({detail})", db.message()),
            None => db.message().to_string(),
        };
    }
    let mut text = e.to_string();
    let mut source = std::error::Error::source(&e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

/// `sql` prepared once per connection (a query by text is prepared at every call: one more
/// round trip).
async fn cached(
    client: &deadpool_postgres::Client,
    sql: &str,
) -> PgResult<tokio_postgres::Statement> {
    client.prepare_cached(sql).await.map_err(db)
}

fn pool_err(e: deadpool_postgres::PoolError) -> String {
    match e {
        deadpool_postgres::PoolError::Backend(e) => db(e),
        other => other.to_string(),
    }
}

fn backend(op: &'static str, id: Option<&str>, message: String) -> StoreError {
    StoreError::Backend {
        store: KIND,
        op,
        id: id.map(str::to_owned),
        message,
    }
}

/// The runtime every PostgreSQL store of the process runs its driver on. Never dropped, so
/// a store may be dropped anywhere (a runtime cannot be dropped inside another).
static RUNTIME: LazyLock<Result<tokio::runtime::Runtime, String>> = LazyLock::new(|| {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_name("archmax-pg")
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the driver's runtime: {e}"))
});

/// Runs `work` on the store's runtime and waits for it on this thread.
pub(crate) fn block<T, F>(work: F) -> PgResult<T>
where
    T: Send + 'static,
    F: Future<Output = PgResult<T>> + Send + 'static,
{
    let rt = RUNTIME.as_ref().map_err(Clone::clone)?;
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    rt.spawn(async move {
        let _ = tx.send(work.await);
    });
    rx.recv()
        .map_err(|_| "the driver's runtime stopped before answering".to_string())?
}

/// Options of a [`PgStore`]; [`PgStoreBuilder::connect`] makes it.
#[derive(Debug, Clone)]
pub struct PgStoreBuilder {
    url: String,
    schema: Option<String>,
    lease_ttl: Duration,
    pool_size: usize,
}

impl PgStoreBuilder {
    /// Keep the tables in `schema` (created if absent) instead of the connection's
    /// `search_path` (`public` by default). ASCII letters, digits and `_`, not starting with
    /// a digit, at most 63 bytes.
    pub fn schema(mut self, schema: impl Into<String>) -> Self {
        self.schema = Some(schema.into());
        self
    }

    /// The writer lease's time to live: a worker that stops renewing (it crashed, or lost
    /// the database) loses its sessions after this long. Default [`DEFAULT_LEASE_TTL`].
    pub fn lease_ttl(mut self, ttl: Duration) -> Self {
        self.lease_ttl = ttl;
        self
    }

    /// The most connections this store opens. Default [`DEFAULT_POOL_SIZE`].
    pub fn pool_size(mut self, size: usize) -> Self {
        self.pool_size = size.max(1);
        self
    }

    /// Connects, creates or migrates the tables ([`SCHEMA_VERSION`]), and starts the lease
    /// heartbeat.
    pub fn connect(mut self) -> Result<PgStore, StoreError> {
        let fail = |m: String| backend("connect", None, m);
        let (url, params) = split_params(&self.url);
        if self.schema.is_none() {
            self.schema = params.schema;
        }
        if let Some(ms) = params.lease_ttl_ms {
            let ms: u64 = ms.parse().map_err(|_| {
                fail(format!(
                    "lease_ttl_ms must be a number of milliseconds, got '{ms}'"
                ))
            })?;
            self.lease_ttl = Duration::from_millis(ms);
        }
        let mut config = tokio_postgres::Config::from_str(&url)
            .map_err(|e| fail(format!("not a PostgreSQL URL: {}", db(e))))?;
        if let Some(schema) = &self.schema {
            check_schema_name(schema).map_err(fail)?;
            let options = config.get_options().unwrap_or_default();
            config.options(format!("{options} -c search_path={schema}").trim());
        }
        if config.get_application_name().is_none() {
            config.application_name("archmax");
        }
        if self.lease_ttl < Duration::from_millis(300) {
            return Err(fail(format!(
                "the lease time to live must be at least 300 ms, got {} ms",
                self.lease_ttl.as_millis()
            )));
        }
        let manager = Manager::from_config(
            config,
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        let pool = {
            // The pool's timers need the runtime it runs on.
            let rt = RUNTIME.as_ref().map_err(|e| fail(e.clone()))?;
            let _entered = rt.enter();
            Pool::builder(manager)
                .max_size(self.pool_size)
                .runtime(deadpool_postgres::Runtime::Tokio1)
                .wait_timeout(Some(Duration::from_secs(30)))
                .create_timeout(Some(Duration::from_secs(10)))
                .build()
                .map_err(|e| fail(e.to_string()))?
        };
        let schema = self.schema.clone();
        let migrating = pool.clone();
        block(async move {
            let mut client = migrating.get().await.map_err(pool_err)?;
            schema::migrate(&mut client, schema.as_deref()).await
        })
        .map_err(fail)?;
        let inner = Arc::new(Inner {
            pool,
            holder: holder_name(),
            ttl: self.lease_ttl,
            holders: Holders::default(),
            areas: Mutex::default(),
            applying: Mutex::default(),
        });
        heartbeat(Arc::downgrade(&inner));
        Ok(PgStore { inner })
    }
}

/// The store's own parameters in a URL's query, which the driver does not know.
#[derive(Debug, Default, PartialEq)]
struct UrlParams {
    /// `schema=<name>`: [`PgStoreBuilder::schema`].
    schema: Option<String>,
    /// `lease_ttl_ms=<n>`: [`PgStoreBuilder::lease_ttl`].
    lease_ttl_ms: Option<String>,
}

/// Takes the store's parameters out of `url`: `postgres://h/db?schema=support` is
/// `postgres://h/db` in schema `support`.
fn split_params(url: &str) -> (String, UrlParams) {
    let mut params = UrlParams::default();
    let Some((base, query)) = url.split_once('?') else {
        return (url.to_string(), params);
    };
    let rest: Vec<&str> = query
        .split('&')
        .filter(|pair| {
            if let Some(name) = pair.strip_prefix("schema=") {
                params.schema = Some(name.to_string());
            } else if let Some(ms) = pair.strip_prefix("lease_ttl_ms=") {
                params.lease_ttl_ms = Some(ms.to_string());
            } else {
                return true;
            }
            false
        })
        .collect();
    let url = if rest.is_empty() {
        base.to_string()
    } else {
        format!("{base}?{}", rest.join("&"))
    };
    (url, params)
}

fn check_schema_name(schema: &str) -> PgResult<()> {
    let ok = !schema.is_empty()
        && schema.len() <= 63
        && !schema.starts_with(|c: char| c.is_ascii_digit())
        && schema
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "invalid schema name '{schema}': expected ASCII letters, digits and '_', not starting with a digit, at most 63 bytes"
        ))
    }
}

/// A name for this store instance's leases: host, pid and a process-unique number.
fn holder_name() -> String {
    static N: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .ok()
        .filter(|h| !h.is_empty())
        .unwrap_or_else(|| "host".to_string());
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    format!(
        "{host}:{}:{}:{nanos:08x}",
        std::process::id(),
        N.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
    )
}

/// Renews this store's leases every third of their time to live while the store lives.
fn heartbeat(inner: Weak<Inner>) {
    let Ok(rt) = RUNTIME.as_ref() else { return };
    rt.spawn(async move {
        loop {
            let Some(period) = inner.upgrade().map(|i| i.ttl / 3) else {
                return;
            };
            tokio::time::sleep(period).await;
            let Some(store) = inner.upgrade() else { return };
            // A failed renewal is retried next period; past the time to live the sessions
            // go to another worker, and this one's commits fail (they check the lease).
            if let Ok(client) = store.pool.get().await {
                let _ = client
                    .execute(
                        "UPDATE archmax_leases SET expires_at = now() + make_interval(secs => $2) WHERE holder = $1",
                        &[&store.holder, &store.ttl.as_secs_f64()],
                    )
                    .await;
            }
        }
    });
}

/// Sessions in PostgreSQL. Cheap to clone; clones share the pool and the leases.
#[derive(Clone)]
pub struct PgStore {
    inner: Arc<Inner>,
}

impl std::fmt::Debug for PgStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PgStore")
            .field("holder", &self.inner.holder)
            .field("lease_ttl", &self.inner.ttl)
            .finish()
    }
}

struct Inner {
    pool: Pool,
    /// This store instance's name in `archmax_leases.holder`.
    holder: String,
    ttl: Duration,
    /// The sessions leased by this instance (the in-process half of the single writer).
    holders: Holders,
    /// Session files loaded from the database, per session; reloaded when a lease is taken.
    areas: Mutex<HashMap<String, Arc<PgArea>>>,
    /// The queued delivery the next commit of a session applies (`PgStore::apply_on_commit`).
    applying: Mutex<HashMap<String, i64>>,
}

/// A step's commit: `$1` id, `$2` the lease holder to check (NULL: unfenced), `$3` the
/// lease's time to live (s), `$4` state, `$5` status, `$6` message count, `$7` due time,
/// `$8` the messages, `$9` the queued delivery this commit applies (NULL: none). Answers
/// whether the fence held and whether the session was created. The state is kept twice:
/// as the session's (what a load reads) and as the step's checkpoint (its history).
const COMMIT_SQL: &str = r#"
WITH fence AS (
    UPDATE archmax_leases SET expires_at = now() + make_interval(secs => $3)
    WHERE $2::text IS NOT NULL AND session_id = $1 AND holder = $2
    RETURNING 1
), up AS (
    INSERT INTO archmax_sessions AS s (id, state, status, transcript_len, due_at, steps)
    SELECT $1, $4::text::json, $5, $6::bigint, $7::text::timestamptz, 1
    WHERE $2::text IS NULL OR EXISTS (SELECT 1 FROM fence)
    ON CONFLICT (id) DO UPDATE SET state = EXCLUDED.state, status = EXCLUDED.status,
        transcript_len = s.transcript_len + EXCLUDED.transcript_len,
        due_at = EXCLUDED.due_at, updated_at = now(), steps = s.steps + 1
    RETURNING s.transcript_len, s.steps, (s.xmax = 0) AS created
), checkpoint AS (
    INSERT INTO archmax_checkpoints (session_id, step, transcript_len, state)
    SELECT $1, up.steps, up.transcript_len, $4::text::json FROM up
), messages AS (
    INSERT INTO archmax_messages (session_id, seq, body)
    SELECT $1, up.transcript_len - $6::bigint + t.ord - 1, t.body::json
    FROM up, unnest($8::text[]) WITH ORDINALITY AS t(body, ord)
), scratchpad AS (
    INSERT INTO archmax_files (session_id, path, content)
    SELECT $1, 'scratchpad', NULL FROM up WHERE up.created
    ON CONFLICT DO NOTHING
), applied AS (
    UPDATE archmax_deliveries SET applied_at = now()
    WHERE $9::bigint IS NOT NULL AND seq = $9 AND EXISTS (SELECT 1 FROM up)
)
SELECT ($2::text IS NULL OR EXISTS (SELECT 1 FROM fence)), (SELECT created FROM up)
"#;

/// A held lease's row, deleted when the lease drops (before its in-process slot is freed).
struct LeaseRow {
    inner: Arc<Inner>,
    key: String,
}

impl Drop for LeaseRow {
    fn drop(&mut self) {
        let pool = self.inner.pool.clone();
        let holder = self.inner.holder.clone();
        let key = std::mem::take(&mut self.key);
        // Best effort: a lease that cannot be deleted expires.
        let _ = block(async move {
            let client = pool.get().await.map_err(pool_err)?;
            client
                .execute(
                    &cached(
                        &client,
                        "DELETE FROM archmax_leases WHERE session_id = $1 AND holder = $2",
                    )
                    .await?,
                    &[&key, &holder],
                )
                .await
                .map_err(db)
        });
    }
}

/// A session whose wait fell due, claimed by [`PgStore::claim_due`].
#[derive(Debug, Clone, PartialEq)]
pub struct DueSession {
    /// The session id.
    pub id: String,
    /// Its stored due time (ISO-8601 UTC, as in `park.resumeAt`).
    pub due_at: String,
}

impl PgStore {
    /// Options for a store at `url` (`postgres://user:password@host:port/database`, or any
    /// form `tokio-postgres` reads); a `schema=<name>` parameter is [`PgStoreBuilder::schema`],
    /// `lease_ttl_ms=<n>` is [`PgStoreBuilder::lease_ttl`].
    pub fn builder(url: impl Into<String>) -> PgStoreBuilder {
        PgStoreBuilder {
            url: url.into(),
            schema: None,
            lease_ttl: DEFAULT_LEASE_TTL,
            pool_size: DEFAULT_POOL_SIZE,
        }
    }

    /// A store at `url` with the default options.
    pub fn connect(url: &str) -> Result<PgStore, StoreError> {
        Self::builder(url).connect()
    }

    /// This instance's lease holder name (host, pid, instance).
    pub fn holder(&self) -> &str {
        &self.inner.holder
    }

    fn run<T, F>(
        &self,
        op: &'static str,
        id: Option<&SessionId>,
        work: impl FnOnce(Pool) -> F,
    ) -> Result<T, StoreError>
    where
        T: Send + 'static,
        F: Future<Output = PgResult<T>> + Send + 'static,
    {
        block(work(self.inner.pool.clone())).map_err(|m| backend(op, id.map(SessionId::as_str), m))
    }

    /// Runs one statement (no rows back) with `params`; the number of rows it changed.
    pub(crate) fn execute(
        &self,
        op: &'static str,
        sql: &'static str,
        params: Vec<Box<dyn tokio_postgres::types::ToSql + Send + Sync>>,
    ) -> Result<u64, StoreError> {
        self.run(op, None, move |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let refs: Vec<&(dyn tokio_postgres::types::ToSql + Sync)> = params
                .iter()
                .map(|p| p.as_ref() as &(dyn tokio_postgres::types::ToSql + Sync))
                .collect();
            client.execute(sql, &refs).await.map_err(db)
        })
    }

    /// Claims at most `limit` sessions whose wait is due, each for exactly one caller among
    /// all workers: their due time moves one lease time to live ahead (so a worker that dies
    /// before resuming one leaves it due again), and a session another worker is claiming
    /// right now is skipped (`FOR UPDATE SKIP LOCKED`). The claimer then takes the
    /// session's writer lease and resumes it; a commit that leaves the wait clears its due
    /// time. With `workflow`, only that workflow's sessions (the state's `workflow`).
    pub fn claim_due(
        &self,
        limit: u32,
        workflow: Option<&str>,
    ) -> Result<Vec<DueSession>, StoreError> {
        let ttl = self.inner.ttl.as_secs_f64();
        let limit = i64::from(limit);
        let workflow = workflow.map(str::to_owned);
        self.run("claim due sessions", None, move |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let rows = client
                .query(
                    r#"WITH due AS (
                        SELECT id, due_at FROM archmax_sessions
                        WHERE due_at <= now() AND ($3::text IS NULL OR state->>'workflow' = $3)
                        ORDER BY due_at
                        LIMIT $1
                        FOR UPDATE SKIP LOCKED
                    )
                    UPDATE archmax_sessions s
                    SET due_at = now() + make_interval(secs => $2)
                    FROM due WHERE s.id = due.id
                    RETURNING s.id, to_char(due.due_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#,
                    &[&limit, &ttl, &workflow],
                )
                .await
                .map_err(db)?;
            Ok(rows
                .iter()
                .map(|r| DueSession {
                    id: r.get(0),
                    due_at: r.get(1),
                })
                .collect())
        })
    }

    /// The time until the earliest stored due time (zero when one is due), `None` when no
    /// session waits on time.
    pub fn next_due_in(&self) -> Result<Option<Duration>, StoreError> {
        self.run("read due times", None, |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let row = client
                .query_one(
                    "SELECT extract(epoch FROM min(due_at) - now())::float8 FROM archmax_sessions WHERE due_at IS NOT NULL",
                    &[],
                )
                .await
                .map_err(db)?;
            Ok(row
                .get::<_, Option<f64>>(0)
                .map(|s| Duration::from_secs_f64(s.max(0.0))))
        })
    }

    /// The one text column `sql` answers for `key`, `None` when no row.
    fn text_by_key(
        &self,
        op: &'static str,
        id: Option<&SessionId>,
        sql: &'static str,
        key: &str,
    ) -> Result<Option<String>, StoreError> {
        let key = key.to_owned();
        self.run(op, id, move |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let row = client
                .query_opt(&cached(&client, sql).await?, &[&key])
                .await
                .map_err(db)?;
            Ok(row.map(|r| r.get::<_, String>(0)))
        })
    }

    fn cached_area(&self, id: &str) -> Option<Arc<PgArea>> {
        self.inner
            .areas
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(id)
            .cloned()
    }

    fn forget_areas(&self, id: &str) {
        self.inner
            .areas
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .retain(|k, _| k != id && !is_descendant(id, k));
    }
}

/// `park.resumeAt` of a state that waits on time, when it is the ISO-8601 UTC instant the
/// runtime writes (`YYYY-MM-DDTHH:MM:SS[.fff]Z`); anything else is no due time (a commit
/// never fails on it).
fn due_time(state: &Value) -> Option<String> {
    let at = state.get("park")?.get("resumeAt")?.as_str()?;
    let b = at.as_bytes();
    let digits =
        |r: std::ops::Range<usize>| b.get(r).is_some_and(|s| s.iter().all(u8::is_ascii_digit));
    let shape = b.len() >= 20
        && digits(0..4)
        && b[4] == b'-'
        && digits(5..7)
        && b[7] == b'-'
        && digits(8..10)
        && b[10] == b'T'
        && digits(11..13)
        && b[13] == b':'
        && digits(14..16)
        && b[16] == b':'
        && digits(17..19)
        && b.last() == Some(&b'Z')
        && (b.len() == 20 || (b[19] == b'.' && digits(20..b.len() - 1) && b.len() > 21));
    shape.then(|| at.to_string())
}

fn encode(id: &SessionId, value: &Value) -> Result<String, StoreError> {
    serde_json::to_string(value).map_err(|source| StoreError::Encode {
        id: id.as_str().to_owned(),
        source,
    })
}

impl SessionStore for PgStore {
    fn load(&self, id: &SessionId) -> Result<Option<Snapshot>, StoreError> {
        let key = id.as_str().to_owned();
        let rows = self.run("load", Some(id), move |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let statement = cached(
                &client,
                "SELECT s.state::text, s.transcript_len, m.body::text FROM archmax_sessions s \
                 LEFT JOIN archmax_messages m ON m.session_id = s.id AND m.seq < s.transcript_len \
                 WHERE s.id = $1 ORDER BY m.seq",
            )
            .await?;
            let rows = client.query(&statement, &[&key]).await.map_err(db)?;
            Ok(rows
                .into_iter()
                .map(|r| {
                    (
                        r.get::<_, String>(0),
                        r.get::<_, i64>(1),
                        r.get::<_, Option<String>>(2),
                    )
                })
                .collect::<Vec<_>>())
        })?;
        let Some((state, len, _)) = rows.first() else {
            return Ok(None);
        };
        let bad = |detail: String| StoreError::Corrupt {
            id: id.as_str().to_owned(),
            path: "archmax_messages".into(),
            detail,
        };
        let state: Value = serde_json::from_str(state)
            .map_err(|e| bad(format!("the stored state is not JSON: {e}")))?;
        let mut messages = Vec::with_capacity(rows.len());
        for (_, _, body) in &rows {
            if let Some(body) = body {
                messages.push(
                    serde_json::from_str(body)
                        .map_err(|e| bad(format!("a stored message is not JSON: {e}")))?,
                );
            }
        }
        if messages.len() as i64 != *len {
            return Err(bad(format!(
                "the state covers {len} messages but {} are stored",
                messages.len()
            )));
        }
        Ok(Some(Snapshot { state, messages }))
    }

    fn load_state(&self, id: &SessionId) -> Result<Option<Value>, StoreError> {
        let text = self.text_by_key(
            "load",
            Some(id),
            "SELECT state::text FROM archmax_sessions WHERE id = $1",
            id.as_str(),
        )?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| StoreError::Corrupt {
                id: id.as_str().to_owned(),
                path: "archmax_sessions".into(),
                detail: format!("the stored state is not JSON: {e}"),
            })
        })
        .transpose()
    }

    fn history(&self, id: &SessionId) -> Result<Option<History>, StoreError> {
        let key = id.as_str().to_owned();
        let (steps, bodies) =
            self.run("read the history of", Some(id), move |pool| async move {
                let client = pool.get().await.map_err(pool_err)?;
                let steps = client
                    .query(
                        &cached(
                            &client,
                            "SELECT step, transcript_len, state::text, \
                         (extract(epoch FROM at) * 1000)::bigint FROM archmax_checkpoints \
                         WHERE session_id = $1 ORDER BY step",
                        )
                        .await?,
                        &[&key],
                    )
                    .await
                    .map_err(db)?;
                let covered: i64 = steps.last().map_or(0, |r| r.get(1));
                // The messages the last step covers: committed with it, so visible with it.
                let bodies = client
                    .query(
                        &cached(
                            &client,
                            "SELECT body::text FROM archmax_messages \
                         WHERE session_id = $1 AND seq < $2 ORDER BY seq",
                        )
                        .await?,
                        &[&key, &covered],
                    )
                    .await
                    .map_err(db)?;
                Ok((
                    steps
                        .into_iter()
                        .map(|r| {
                            (
                                r.get::<_, i64>(0),
                                r.get::<_, i64>(1),
                                r.get::<_, String>(2),
                                r.get::<_, i64>(3),
                            )
                        })
                        .collect::<Vec<_>>(),
                    bodies
                        .into_iter()
                        .map(|r| r.get::<_, String>(0))
                        .collect::<Vec<_>>(),
                ))
            })?;
        if steps.is_empty() {
            return Ok(None);
        }
        let bad = |table: &str, detail: String| StoreError::Corrupt {
            id: id.as_str().to_owned(),
            path: table.into(),
            detail,
        };
        let checkpoints = steps
            .into_iter()
            .map(|(step, len, state, at)| {
                Ok(Checkpoint {
                    step: u64::try_from(step).unwrap_or(0),
                    transcript_len: u64::try_from(len).unwrap_or(0),
                    state: serde_json::from_str(&state).map_err(|e| {
                        bad(
                            "archmax_checkpoints",
                            format!("step {step}'s state is not JSON: {e}"),
                        )
                    })?,
                    at: u64::try_from(at).ok(),
                })
            })
            .collect::<Result<Vec<_>, StoreError>>()?;
        let messages = bodies
            .iter()
            .map(|b| {
                serde_json::from_str(b).map_err(|e| {
                    bad(
                        "archmax_messages",
                        format!("a stored message is not JSON: {e}"),
                    )
                })
            })
            .collect::<Result<Vec<Value>, StoreError>>()?;
        Ok(Some(History {
            checkpoints,
            messages,
        }))
    }

    fn commit(&self, id: &SessionId, step: Step<'_>) -> Result<(), StoreError> {
        let messages = step
            .new_messages
            .iter()
            .map(|m| encode(id, m))
            .collect::<Result<Vec<_>, _>>()?;
        let state = encode(id, step.state)?;
        let status = step
            .state
            .get("status")
            .and_then(Value::as_str)
            .map(str::to_owned);
        let due = due_time(step.state);
        // Fenced when this instance holds the session's lease: the commit renews the lease
        // row of this holder in its own transaction, or fails because the lease was lost.
        let fence = self
            .inner
            .holders
            .holds(id.as_str())
            .then(|| self.inner.holder.clone());
        let ttl = self.inner.ttl.as_secs_f64();
        let key = id.as_str().to_owned();
        let applying = self.take_applying(id.as_str());
        let created = self.run("commit", Some(id), move |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            // One statement, so one transaction and one round trip (prepared once per
            // connection): the fence, the session row, the messages numbered after the
            // stored transcript, and `scratchpad/` on the first commit. Any part failing
            // (a lost lease writes nothing) leaves the session as it was.
            let statement = cached(&client, COMMIT_SQL).await?;
            let n = messages.len() as i64;
            let row = client
                .query_one(
                    &statement,
                    &[
                        &key, &fence, &ttl, &state, &status, &n, &due, &messages, &applying,
                    ],
                )
                .await
                .map_err(db)?;
            let fenced_ok: bool = row.get(0);
            if !fenced_ok {
                return Err("the writer lease was lost (it expired, and another worker may hold the session); the step was not committed".to_string());
            }
            Ok(row.get::<_, Option<bool>>(1).unwrap_or(false))
        });
        let created = match created {
            Ok(created) => created,
            Err(e) => {
                // Nothing was written: the delivery is applied by the next commit instead.
                if let Some(seq) = applying {
                    self.apply_on_commit(id.as_str(), seq);
                }
                return Err(e);
            }
        };
        if created && let Some(area) = self.cached_area(id.as_str()) {
            area.first_commit().map_err(|e| {
                backend(
                    "commit",
                    Some(id.as_str()),
                    format!("cannot make scratchpad/: {e}"),
                )
            })?;
        }
        Ok(())
    }

    fn list(&self) -> Result<Vec<String>, StoreError> {
        self.run("list sessions", None, |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let rows = client
                .query("SELECT id FROM archmax_sessions ORDER BY id", &[])
                .await
                .map_err(db)?;
            Ok(rows.iter().map(|r| r.get(0)).collect())
        })
    }

    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        let key = id.as_str().to_owned();
        self.run("delete", Some(id), move |pool| async move {
            let mut client = pool.get().await.map_err(pool_err)?;
            let tx = client.transaction().await.map_err(db)?;
            let prefix = format!("{key}~");
            let rows = tx
                .query(
                    "SELECT id FROM archmax_sessions WHERE id = $1 OR starts_with(id, $2) \
                     UNION SELECT session_id FROM archmax_files WHERE session_id = $1 OR starts_with(session_id, $2)",
                    &[&key, &prefix],
                )
                .await
                .map_err(db)?;
            let doomed: Vec<String> = rows
                .iter()
                .map(|r| r.get::<_, String>(0))
                .filter(|k| *k == key || is_descendant(&key, k))
                .collect();
            if !doomed.is_empty() {
                tx.execute("DELETE FROM archmax_sessions WHERE id = ANY($1)", &[&doomed])
                    .await
                    .map_err(db)?;
                tx.execute("DELETE FROM archmax_files WHERE session_id = ANY($1)", &[&doomed])
                    .await
                    .map_err(db)?;
            }
            tx.commit().await.map_err(db)
        })?;
        self.forget_areas(id.as_str());
        Ok(())
    }

    fn acquire(&self, id: &SessionId) -> Result<WriterLease, StoreError> {
        let inner = &self.inner;
        if !inner.holders.claim(id.as_str()) {
            return Err(busy(self, id));
        }
        let key = id.as_str().to_owned();
        let holder = inner.holder.clone();
        let ttl = inner.ttl.as_secs_f64();
        // A row of this holder is this instance's own: a claim of `claim_interrupted`, or a
        // row whose deletion failed. The in-process slot taken above keeps it single here.
        let taken = self.run("take the writer lease of", Some(id), move |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let row = client
                .query_opt(&cached(&client, "INSERT INTO archmax_leases AS l (session_id, holder, expires_at) \
                     VALUES ($1, $2, now() + make_interval(secs => $3)) \
                     ON CONFLICT (session_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at \
                     WHERE l.expires_at < now() OR l.holder = EXCLUDED.holder RETURNING 1").await?, &[&key, &holder, &ttl])
                .await
                .map_err(db)?;
            Ok(row.is_some())
        });
        match taken {
            Ok(true) => {}
            Ok(false) => {
                inner.holders.release(id.as_str());
                return Err(busy(self, id));
            }
            Err(e) => {
                inner.holders.release(id.as_str());
                return Err(e);
            }
        }
        // Another worker may have changed the session's files since this one last saw them.
        if let Some(area) = self.cached_area(id.as_str()) {
            area.reload();
        }
        let row = LeaseRow {
            inner: Arc::clone(inner),
            key: id.as_str().to_owned(),
        };
        Ok(WriterLease::with_hold(
            id.as_str().to_owned(),
            inner.holders.clone(),
            Box::new(row),
        ))
    }

    fn write_spec_snapshot(&self, hash: &str, spec: &Value) -> Result<(), StoreError> {
        check_spec_hash(hash)?;
        let text = serde_json::to_string(spec).map_err(|source| StoreError::Encode {
            id: hash.to_owned(),
            source,
        })?;
        self.execute(
            "write a spec snapshot",
            "INSERT INTO archmax_specs (hash, spec) VALUES ($1, $2::text::json) ON CONFLICT DO NOTHING",
            vec![Box::new(hash.to_owned()), Box::new(text)],
        )
        .map(drop)
    }

    fn read_spec_snapshot(&self, hash: &str) -> Result<Option<Value>, StoreError> {
        check_spec_hash(hash)?;
        let text = self.text_by_key(
            "read a spec snapshot",
            None,
            "SELECT spec::text FROM archmax_specs WHERE hash = $1",
            hash,
        )?;
        text.map(|t| {
            serde_json::from_str(&t).map_err(|e| {
                backend(
                    "read a spec snapshot",
                    None,
                    format!("spec '{hash}' is not JSON: {e}"),
                )
            })
        })
        .transpose()
    }

    fn session_dir(&self, _id: &SessionId) -> Option<std::path::PathBuf> {
        None
    }

    fn session_files(&self, id: &SessionId) -> Option<SessionFiles> {
        // An area that cannot be loaded serves nothing and refuses every write, so the file
        // tools answer with the database's error instead of a stale view.
        let area = match self.cached_area(id.as_str()) {
            Some(area) => {
                if area.is_stale() {
                    area.reload();
                }
                area
            }
            None => {
                let area = Arc::new(PgArea::load(self.inner.pool.clone(), id.as_str()));
                self.inner
                    .areas
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner)
                    .insert(id.as_str().to_owned(), Arc::clone(&area));
                area
            }
        };
        Some(area.session_files())
    }

    fn seedable_files(&self, id: &SessionId) -> Option<SessionFiles> {
        // Rows of `archmax_files`: every worker sees what a host seeded.
        self.session_files(id)
    }

    fn kind(&self) -> &'static str {
        KIND
    }

    fn waits_on_disk(&self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::{UrlParams, due_time, split_params};

    #[test]
    fn the_stores_parameters_leave_the_url() {
        let schema = |s: &str| UrlParams {
            schema: Some(s.to_string()),
            lease_ttl_ms: None,
        };
        assert_eq!(
            split_params("postgres://h/db?schema=s1"),
            ("postgres://h/db".to_string(), schema("s1"))
        );
        assert_eq!(
            split_params("postgres://h/db?sslmode=disable&schema=s1&connect_timeout=3"),
            (
                "postgres://h/db?sslmode=disable&connect_timeout=3".to_string(),
                schema("s1")
            )
        );
        assert_eq!(
            split_params("postgres://h/db?lease_ttl_ms=900"),
            (
                "postgres://h/db".to_string(),
                UrlParams {
                    schema: None,
                    lease_ttl_ms: Some("900".to_string())
                }
            )
        );
        assert_eq!(
            split_params("postgres://h/db"),
            ("postgres://h/db".to_string(), UrlParams::default())
        );
    }

    #[test]
    fn due_time_takes_only_the_runtimes_instants() {
        let at = |v: &str| json!({"status": "awaiting_input", "park": {"resumeAt": v}});
        assert_eq!(
            due_time(&at("2026-03-02T09:30:00.000Z")).as_deref(),
            Some("2026-03-02T09:30:00.000Z")
        );
        assert_eq!(
            due_time(&at("2026-03-02T09:30:00Z")).as_deref(),
            Some("2026-03-02T09:30:00Z")
        );
        for bad in [
            "tomorrow",
            "2026-03-02",
            "2026-03-02T09:30:00.Z",
            "2026-03-02T09:30:00+01:00",
            "'; DROP",
        ] {
            assert_eq!(due_time(&at(bad)), None, "{bad}");
        }
        assert_eq!(due_time(&json!({"status": "running"})), None);
        assert_eq!(due_time(&json!({"park": {"resumeAt": 5}})), None);
    }
}

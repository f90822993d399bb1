//! The store's tables, created and migrated by the store itself.
//!
//! `archmax_schema` holds one row, the version of the tables below it. Connecting runs, in
//! one transaction under a database-wide advisory lock (so workers starting together
//! migrate once), every migration past the stored version. A database whose version is
//! newer than this build knows is refused rather than written with an older layout.

use tokio_postgres::Client;

use crate::{PgResult, db};

/// The advisory lock key migrations run under (any fixed 64-bit number; "archmax" in ASCII).
const MIGRATION_LOCK: i64 = 0x0061_7263_686d_6178;

/// Migration `n` (1-based) takes the tables from version `n - 1` to `n`. Append only.
pub(crate) const MIGRATIONS: &[&str] = &[
    // 1: sessions, their transcripts, spec snapshots, session files, writer leases.
    r#"
CREATE TABLE archmax_sessions (
    id             text COLLATE "C" PRIMARY KEY,
    state          json        NOT NULL,
    status         text,
    transcript_len bigint      NOT NULL,
    due_at         timestamptz,
    updated_at     timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX archmax_sessions_due ON archmax_sessions (due_at) WHERE due_at IS NOT NULL;
CREATE TABLE archmax_messages (
    session_id text   NOT NULL REFERENCES archmax_sessions (id) ON DELETE CASCADE,
    seq        bigint NOT NULL,
    body       json   NOT NULL,
    PRIMARY KEY (session_id, seq)
);
CREATE TABLE archmax_specs (
    hash text PRIMARY KEY,
    spec json NOT NULL
);
CREATE TABLE archmax_files (
    session_id text COLLATE "C" NOT NULL,
    path       text COLLATE "C" NOT NULL,
    content    bytea,
    PRIMARY KEY (session_id, path)
);
CREATE TABLE archmax_leases (
    session_id text PRIMARY KEY,
    holder     text        NOT NULL,
    expires_at timestamptz NOT NULL
);
"#,
    // 2: deliveries queued for the workers (`archmax deliver --enqueue`), run in order per
    // session; `applied_at` is written by the session commit that applied the delivery.
    r#"
CREATE TABLE archmax_deliveries (
    seq           bigserial   PRIMARY KEY,
    session_id    text COLLATE "C" NOT NULL,
    workflow      text,
    trigger       text        NOT NULL,
    variables     json        NOT NULL,
    message       text,
    enqueued_at   timestamptz NOT NULL DEFAULT now(),
    claimed_by    text,
    claimed_until timestamptz,
    applied_at    timestamptz,
    done_at       timestamptz,
    outcome       json,
    error         text
);
CREATE INDEX archmax_deliveries_open ON archmax_deliveries (session_id, seq) WHERE done_at IS NULL;
"#,
    // 3: every step's checkpoint, for a session's history and a fork from any step. A
    // session committed before keeps its latest state as its first step.
    r#"
ALTER TABLE archmax_sessions ADD COLUMN steps bigint NOT NULL DEFAULT 1;
CREATE TABLE archmax_checkpoints (
    session_id     text COLLATE "C" NOT NULL REFERENCES archmax_sessions (id) ON DELETE CASCADE,
    step           bigint      NOT NULL,
    transcript_len bigint      NOT NULL,
    state          json        NOT NULL,
    at             timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (session_id, step)
);
INSERT INTO archmax_checkpoints (session_id, step, transcript_len, state, at)
    SELECT id, 1, transcript_len, state, updated_at FROM archmax_sessions;
"#,
];

/// The version this build writes.
pub const SCHEMA_VERSION: i32 = MIGRATIONS.len() as i32;

/// Creates `schema` when given, then brings the tables to [`SCHEMA_VERSION`].
pub(crate) async fn migrate(client: &mut Client, schema: Option<&str>) -> PgResult<i32> {
    let tx = client.transaction().await.map_err(db)?;
    tx.execute("SELECT pg_advisory_xact_lock($1)", &[&MIGRATION_LOCK])
        .await
        .map_err(db)?;
    if let Some(schema) = schema {
        tx.batch_execute(&format!("CREATE SCHEMA IF NOT EXISTS \"{schema}\""))
            .await
            .map_err(db)?;
    }
    tx.batch_execute("CREATE TABLE IF NOT EXISTS archmax_schema (version integer NOT NULL)")
        .await
        .map_err(db)?;
    let row = tx
        .query_one("SELECT max(version) FROM archmax_schema", &[])
        .await
        .map_err(db)?;
    let found: i32 = row.get::<_, Option<i32>>(0).unwrap_or(0);
    if found > SCHEMA_VERSION {
        return Err(format!(
            "the database holds archmax tables of schema version {found}, newer than this build's {SCHEMA_VERSION}: upgrade archmax"
        ));
    }
    for sql in MIGRATIONS.iter().skip(found.max(0) as usize) {
        tx.batch_execute(sql).await.map_err(db)?;
    }
    if found != SCHEMA_VERSION {
        tx.execute("DELETE FROM archmax_schema", &[])
            .await
            .map_err(db)?;
        tx.execute(
            "INSERT INTO archmax_schema (version) VALUES ($1)",
            &[&SCHEMA_VERSION],
        )
        .await
        .map_err(db)?;
    }
    tx.commit().await.map_err(db)?;
    Ok(found)
}

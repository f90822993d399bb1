//! The PostgreSQL the tests run against: `ARCHMAX_TEST_PG_URL` (`.ci/run` starts a throwaway
//! cluster with `scripts/pg-test-server.sh` and sets it). Each test gets a schema of its
//! own, dropped afterwards. Without the URL a test fails under CI (`CI=true`) and is skipped
//! with a printed reason elsewhere.
#![allow(dead_code, clippy::unwrap_used, clippy::panic, clippy::expect_used)]

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use archmax_store_pg::{PgStore, PgStoreBuilder};

static N: AtomicU64 = AtomicU64::new(0);

/// The test database's URL; `None` (after saying why) when it is not configured locally.
pub fn url() -> Option<String> {
    match std::env::var("ARCHMAX_TEST_PG_URL") {
        Ok(url) if !url.is_empty() => Some(url),
        _ if std::env::var("CI").is_ok_and(|v| !v.is_empty() && v != "false" && v != "0") => {
            panic!(
                "ARCHMAX_TEST_PG_URL is not set: CI must run the PostgreSQL store's tests (start a server with scripts/pg-test-server.sh)"
            )
        }
        _ => {
            eprintln!(
                "skipped: ARCHMAX_TEST_PG_URL is not set (eval \"$(bash scripts/pg-test-server.sh start)\" to run the PostgreSQL tests)"
            );
            None
        }
    }
}

/// Drops its schema (and everything in it) when dropped.
pub struct Schema {
    pub url: String,
    pub name: String,
}

impl Schema {
    /// A fresh schema name, not yet created.
    pub fn new(url: &str, tag: &str) -> Schema {
        Schema {
            url: url.to_string(),
            name: format!(
                "t_{tag}_{}_{}",
                std::process::id(),
                N.fetch_add(1, Ordering::Relaxed)
            ),
        }
    }

    pub fn builder(&self) -> PgStoreBuilder {
        PgStore::builder(&self.url).schema(&self.name)
    }

    pub fn store(&self) -> PgStore {
        self.builder()
            .connect()
            .expect("connect to the test database")
    }

    /// Runs `work` with a client of the test database in this schema.
    fn with_client<T>(&self, work: impl AsyncFnOnce(&tokio_postgres::Client) -> T) -> T {
        let url = format!("{}?options=-c%20search_path%3D{}", self.url, self.name);
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
            .block_on(async move {
                let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .expect("connect");
                tokio::spawn(conn);
                work(&client).await
            })
    }

    /// Runs `sql` (statements separated by `;`) in this schema.
    pub fn sql(&self, sql: &str) {
        self.with_client(async |client| client.batch_execute(sql).await.expect("sql"));
    }

    /// The first column of the first row of `query`, as text.
    pub fn scalar(&self, query: &str) -> Option<String> {
        self.with_client(async |client| {
            let rows = client.simple_query(query).await.expect("query");
            rows.into_iter().find_map(|m| match m {
                tokio_postgres::SimpleQueryMessage::Row(r) => Some(r.get(0).map(str::to_owned)),
                _ => None,
            })?
        })
    }
}

impl Drop for Schema {
    fn drop(&mut self) {
        let url = self.url.clone();
        let sql = format!("DROP SCHEMA IF EXISTS \"{}\" CASCADE", self.name);
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async move {
                let (client, conn) = tokio_postgres::connect(&url, tokio_postgres::NoTls)
                    .await
                    .ok()?;
                tokio::spawn(conn);
                client.batch_execute(&sql).await.ok()
            })
        })
        .join();
    }
}

/// A store in a fresh schema and the guard that drops it; `None` when skipped.
pub fn store(tag: &str) -> Option<(PgStore, Schema)> {
    let url = url()?;
    let schema = Schema::new(&url, tag);
    Some((schema.store(), schema))
}

/// As [`store`], with a short lease (for takeover tests).
pub fn store_with_ttl(tag: &str, ttl: Duration) -> Option<(PgStore, Schema)> {
    let url = url()?;
    let schema = Schema::new(&url, tag);
    let store = schema.builder().lease_ttl(ttl).connect().expect("connect");
    Some((store, schema))
}

//! What the workers serve besides due waits: turns a stopped worker left `running`
//! ([`PgStore::claim_interrupted`]) and deliveries queued by any process
//! ([`PgStore::enqueue_delivery`], `archmax_deliveries`).
//!
//! A delivery is claimed by one worker (`FOR UPDATE SKIP LOCKED`, for one lease time to
//! live), only when every earlier delivery of its session is done and no writer holds the
//! session, so a session's deliveries run one at a time in arrival order. The session
//! commit that applies it marks it applied in the same transaction
//! ([`PgStore::apply_on_commit`]), so a delivery is applied at most once even when its
//! worker dies mid-turn; the worker then records its outcome (or refusal) and marks it done.

use serde_json::{Map, Value};

use crate::{DueSession, PgStore, cached, db, pool_err};
use archmax_machine::store::StoreError;

/// A delivery to queue: what `archmax deliver` takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Delivery {
    /// The session it is for.
    pub session: String,
    /// The session's workflow: only workers of that workflow serve it (`None`: any).
    pub workflow: Option<String>,
    /// The trigger delivered.
    pub trigger: String,
    /// Variables seeded locked.
    pub variables: Map<String, Value>,
    /// A person's message with the event, if any.
    pub message: Option<String>,
}

/// A queued delivery a worker claimed.
#[derive(Debug, Clone, PartialEq)]
pub struct ClaimedDelivery {
    /// Its number in the queue (arrival order).
    pub seq: i64,
    /// The delivery.
    pub delivery: Delivery,
    /// A commit already applied it (its worker stopped before recording the outcome): it
    /// must not be delivered again, only finished with the session's outcome.
    pub applied: bool,
}

/// A queued delivery as stored.
#[derive(Debug, Clone, PartialEq)]
pub struct DeliveryRecord {
    /// `queued`, `claimed`, `applied` (a commit applied it, the turn is not settled) or `done`.
    pub status: &'static str,
    /// The Outcome the delivery's turn settled with, as its JSON.
    pub outcome: Option<Value>,
    /// The refusal or failure when the delivery did not run (the text `archmax deliver`
    /// reports after `Error: `).
    pub error: Option<String>,
}

impl PgStore {
    /// Claims at most `limit` sessions whose turn was interrupted: status `running` with no
    /// live writer lease (the process running the turn stopped, and its lease expired). The
    /// claim is this instance's writer lease row, taken in the same statement (one claimer
    /// among all workers: `FOR UPDATE SKIP LOCKED`, and the lease row's upsert only over an
    /// expired row); the claimer then resumes the turn ([`archmax_machine::Harness::resume_interrupted`]),
    /// whose `acquire` finds the row its own. [`PgStore::drop_claim`] gives up a claim.
    /// A sub-workflow's child session (`<id>~…`) is not claimed: the turn of its root
    /// session, resumed, runs the delegation again.
    pub fn claim_interrupted(
        &self,
        limit: u32,
        workflow: Option<&str>,
    ) -> Result<Vec<DueSession>, StoreError> {
        let ttl = self.inner.ttl.as_secs_f64();
        let limit = i64::from(limit);
        let workflow = workflow.map(str::to_owned);
        let holder = self.inner.holder.clone();
        self.run("claim interrupted sessions", None, move |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let rows = client
                .query(
                    r#"WITH stuck AS (
                        SELECT s.id, s.updated_at FROM archmax_sessions s
                        WHERE s.status = 'running' AND ($3::text IS NULL OR s.state->>'workflow' = $3)
                          AND strpos(s.id, '~') = 0
                          AND NOT EXISTS (SELECT 1 FROM archmax_leases l
                                          WHERE l.session_id = s.id AND l.expires_at >= now())
                        ORDER BY s.updated_at
                        LIMIT $1
                        FOR UPDATE OF s SKIP LOCKED
                    )
                    INSERT INTO archmax_leases AS l (session_id, holder, expires_at)
                    SELECT id, $4, now() + make_interval(secs => $2) FROM stuck
                    ON CONFLICT (session_id) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
                    WHERE l.expires_at < now()
                    RETURNING l.session_id, to_char(now() AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')"#,
                    &[&limit, &ttl, &workflow, &holder],
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

    /// Gives up this instance's claim of `id` ([`PgStore::claim_interrupted`]) unless a
    /// writer lease of this instance holds the session now.
    pub fn drop_claim(&self, id: &str) -> Result<(), StoreError> {
        if self.inner.holders.holds(id) {
            return Ok(());
        }
        self.execute(
            "drop the claim of",
            "DELETE FROM archmax_leases WHERE session_id = $1 AND holder = $2",
            vec![Box::new(id.to_owned()), Box::new(self.inner.holder.clone())],
        )
        .map(drop)
    }

    /// The time until a worker may have something to do: the earliest due time, the
    /// earliest lease expiry of a `running` session, the earliest claim expiry of a queued
    /// delivery (zero when one is ready now); `None` when nothing waits.
    pub fn next_wake_in(&self) -> Result<Option<std::time::Duration>, StoreError> {
        self.run("read due times", None, |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let row = client
                .query_one(
                    "SELECT extract(epoch FROM min(t) - now())::float8 FROM ( \
                       SELECT min(due_at) AS t FROM archmax_sessions WHERE due_at IS NOT NULL \
                       UNION ALL SELECT min(coalesce(l.expires_at, now())) FROM archmax_sessions s \
                         LEFT JOIN archmax_leases l ON l.session_id = s.id WHERE s.status = 'running' \
                       UNION ALL SELECT min(coalesce(claimed_until, now())) FROM archmax_deliveries \
                         WHERE done_at IS NULL) AS x",
                    &[],
                )
                .await
                .map_err(db)?;
            Ok(row
                .get::<_, Option<f64>>(0)
                .map(|s| std::time::Duration::from_secs_f64(s.max(0.0))))
        })
    }

    /// Queues `delivery` for the workers; its number in the queue.
    pub fn enqueue_delivery(&self, delivery: &Delivery) -> Result<i64, StoreError> {
        let d = delivery.clone();
        let variables =
            serde_json::to_string(&Value::Object(d.variables.clone())).map_err(|source| {
                StoreError::Encode {
                    id: d.session.clone(),
                    source,
                }
            })?;
        let at = d.session.clone();
        self.run("queue a delivery for", None, move |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let row = client
                .query_one(
                    "INSERT INTO archmax_deliveries (session_id, workflow, trigger, variables, message) \
                     VALUES ($1, $2, $3, $4::text::json, $5) RETURNING seq",
                    &[&d.session, &d.workflow, &d.trigger, &variables, &d.message],
                )
                .await
                .map_err(db)?;
            Ok(row.get::<_, i64>(0))
        })
        .map_err(|e| relabel(e, &at))
    }

    /// Claims at most `limit` queued deliveries for this worker (one lease time to live):
    /// each the oldest open delivery of its session, whose session no writer holds. A
    /// delivery a commit applied whose worker stopped comes back `applied` once its claim
    /// expired and the session is no longer `running` (its turn was finished since).
    pub fn claim_deliveries(
        &self,
        limit: u32,
        workflow: Option<&str>,
    ) -> Result<Vec<ClaimedDelivery>, StoreError> {
        let ttl = self.inner.ttl.as_secs_f64();
        let limit = i64::from(limit);
        let workflow = workflow.map(str::to_owned);
        let holder = self.inner.holder.clone();
        let rows = self.run("claim deliveries", None, move |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let statement = cached(
                &client,
                r#"WITH next AS (
                    SELECT d.seq FROM archmax_deliveries d
                    WHERE d.done_at IS NULL
                      AND ($2::text IS NULL OR d.workflow IS NULL OR d.workflow = $2)
                      AND (d.claimed_until IS NULL OR d.claimed_until < now())
                      AND NOT EXISTS (SELECT 1 FROM archmax_deliveries e
                                      WHERE e.session_id = d.session_id AND e.seq < d.seq AND e.done_at IS NULL)
                      AND NOT EXISTS (SELECT 1 FROM archmax_leases l
                                      WHERE l.session_id = d.session_id AND l.expires_at >= now())
                      AND (d.applied_at IS NULL OR NOT EXISTS (
                           SELECT 1 FROM archmax_sessions s WHERE s.id = d.session_id AND s.status = 'running'))
                    ORDER BY d.seq
                    LIMIT $1
                    FOR UPDATE OF d SKIP LOCKED
                )
                UPDATE archmax_deliveries d
                SET claimed_by = $4, claimed_until = now() + make_interval(secs => $3)
                FROM next WHERE d.seq = next.seq
                RETURNING d.seq, d.session_id, d.workflow, d.trigger, d.variables::text, d.message,
                          d.applied_at IS NOT NULL"#,
            )
            .await?;
            let rows = client
                .query(&statement, &[&limit, &workflow, &ttl, &holder])
                .await
                .map_err(db)?;
            Ok(rows
                .iter()
                .map(|r| {
                    (
                        r.get::<_, i64>(0),
                        r.get::<_, String>(1),
                        r.get::<_, Option<String>>(2),
                        r.get::<_, String>(3),
                        r.get::<_, String>(4),
                        r.get::<_, Option<String>>(5),
                        r.get::<_, bool>(6),
                    )
                })
                .collect::<Vec<_>>())
        })?;
        let mut claimed: Vec<ClaimedDelivery> = rows
            .into_iter()
            .map(
                |(seq, session, workflow, trigger, variables, message, applied)| {
                    let variables = match serde_json::from_str(&variables) {
                        Ok(Value::Object(map)) => map,
                        _ => Map::new(),
                    };
                    ClaimedDelivery {
                        seq,
                        delivery: Delivery {
                            session,
                            workflow,
                            trigger,
                            variables,
                            message,
                        },
                        applied,
                    }
                },
            )
            .collect();
        claimed.sort_by_key(|c| c.seq);
        Ok(claimed)
    }

    /// The next commit of `session` by this instance applies delivery `seq` (in the commit's
    /// own transaction). Cleared by that commit, or by [`PgStore::finish_delivery`].
    pub fn apply_on_commit(&self, session: &str, seq: i64) {
        self.inner
            .applying
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .insert(session.to_owned(), seq);
    }

    pub(crate) fn take_applying(&self, session: &str) -> Option<i64> {
        self.inner
            .applying
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .remove(session)
    }

    /// Records what delivery `seq` came to (the turn's Outcome as JSON, or the refusal's
    /// text) and marks it done: the session's next delivery may run.
    pub fn finish_delivery(
        &self,
        seq: i64,
        result: Result<&Value, &str>,
    ) -> Result<(), StoreError> {
        let (outcome, error) = match result {
            Ok(v) => (Some(v.to_string()), None),
            Err(e) => (None, Some(e.to_owned())),
        };
        self.forget_applying(seq);
        self.execute(
            "finish a delivery",
            "UPDATE archmax_deliveries SET done_at = now(), outcome = $2::text::json, error = $3 \
             WHERE seq = $1",
            vec![Box::new(seq), Box::new(outcome), Box::new(error)],
        )
        .map(drop)
    }

    fn forget_applying(&self, seq: i64) {
        self.inner
            .applying
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .retain(|_, s| *s != seq);
    }

    /// Hands claimed delivery `seq` back to the queue unapplied (its session was busy).
    pub fn release_delivery(&self, seq: i64) -> Result<(), StoreError> {
        self.forget_applying(seq);
        self.execute(
            "release a delivery",
            "UPDATE archmax_deliveries SET claimed_by = NULL, claimed_until = NULL \
             WHERE seq = $1 AND applied_at IS NULL",
            vec![Box::new(seq)],
        )
        .map(drop)
    }

    /// Marks done, with `outcome`, the deliveries of `session` a commit applied whose turn
    /// was interrupted and has now been finished ([`PgStore::claim_interrupted`]).
    pub fn finish_applied(&self, session: &str, outcome: &Value) -> Result<(), StoreError> {
        self.execute(
            "finish the applied deliveries of",
            "UPDATE archmax_deliveries SET done_at = now(), outcome = $2::text::json \
             WHERE session_id = $1 AND applied_at IS NOT NULL AND done_at IS NULL",
            vec![Box::new(session.to_owned()), Box::new(outcome.to_string())],
        )
        .map(drop)
    }

    /// Queued delivery `seq` as stored, `None` when there is none.
    pub fn delivery(&self, seq: i64) -> Result<Option<DeliveryRecord>, StoreError> {
        let row = self.run("read a delivery", None, move |pool| async move {
            let client = pool.get().await.map_err(pool_err)?;
            let row = client
                .query_opt(
                    "SELECT CASE WHEN done_at IS NOT NULL THEN 'done' WHEN applied_at IS NOT NULL THEN 'applied' \
                       WHEN claimed_until > now() THEN 'claimed' ELSE 'queued' END, outcome::text, error \
                     FROM archmax_deliveries WHERE seq = $1",
                    &[&seq],
                )
                .await
                .map_err(db)?;
            Ok(row.map(|r| {
                (
                    r.get::<_, String>(0),
                    r.get::<_, Option<String>>(1),
                    r.get::<_, Option<String>>(2),
                )
            }))
        })?;
        Ok(row.map(|(status, outcome, error)| DeliveryRecord {
            status: match status.as_str() {
                "done" => "done",
                "applied" => "applied",
                "claimed" => "claimed",
                _ => "queued",
            },
            outcome: outcome.and_then(|t| serde_json::from_str(&t).ok()),
            error,
        }))
    }
}

/// Names the session a failed enqueue was for.
fn relabel(e: StoreError, session: &str) -> StoreError {
    match e {
        StoreError::Backend {
            store, op, message, ..
        } => StoreError::Backend {
            store,
            op,
            id: Some(session.to_owned()),
            message,
        },
        other => other,
    }
}

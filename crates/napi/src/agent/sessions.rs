//! `agent.sessions.*`: the stored sessions listed, pruned, read, deleted and seeded; a spec
//! snapshot; a session's run artifacts.

use napi_derive::napi;
use serde_json::{Value, json};

use super::NativeAgent;
use crate::events::collecting_events;
use crate::result::{kind, plain_error};

/// The standings an option names: a string of comma-separated words or an array of them
/// (`archmax_machine::standing::parse_status_words`); absent or null: none.
fn option_kinds(
    options: &Value,
    name: &str,
) -> std::result::Result<Vec<archmax_machine::StandingKind>, String> {
    let words = match options.get(name) {
        None | Some(Value::Null) => return Ok(Vec::new()),
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(a)) if a.iter().all(Value::is_string) => a
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join(","),
        Some(other) => {
            return Err(format!(
                "'{name}' must be a status word or an array of them, got {}",
                kind(other)
            ));
        }
    };
    archmax_machine::standing::parse_status_words(&words).map_err(|e| format!("'{name}': {e}"))
}

/// An age option: a duration text (`7d`, `12h`) or whole milliseconds; absent or null: none.
fn option_age(options: &Value, name: &str) -> std::result::Result<Option<u64>, String> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => archmax_machine::standing::parse_age(s)
            .map(Some)
            .map_err(|e| format!("'{name}': {e}")),
        Some(Value::Number(n)) => n.as_u64().map(Some).ok_or_else(|| {
            format!("'{name}' must be a duration such as '7d' or whole milliseconds, got {n}")
        }),
        Some(other) => Err(format!(
            "'{name}' must be a duration such as '7d' or whole milliseconds, got {}",
            kind(other)
        )),
    }
}

/// A boolean option; absent or null: false.
fn option_flag(options: &Value, name: &str) -> std::result::Result<bool, String> {
    match options.get(name) {
        None | Some(Value::Null) => Ok(false),
        Some(Value::Bool(b)) => Ok(*b),
        Some(other) => Err(format!("'{name}' must be a boolean, got {}", kind(other))),
    }
}

/// `agent.sessions.list`'s options.
fn session_query(
    query: Option<&Value>,
) -> std::result::Result<archmax_machine::SessionQuery, String> {
    let Some(q) = query.filter(|q| !q.is_null()) else {
        return Ok(archmax_machine::SessionQuery::default());
    };
    if !q.is_object() {
        return Err(format!(
            "sessions.list takes {{ status?, olderThan?, attention? }}, got {}",
            kind(q)
        ));
    }
    Ok(archmax_machine::SessionQuery {
        kinds: option_kinds(q, "status")?,
        older_than_ms: option_age(q, "olderThan")?,
        attention: option_flag(q, "attention")?,
    })
}

/// `agent.sessions.prune`'s options.
fn prune_options(o: &Value) -> std::result::Result<archmax_machine::PruneOptions, String> {
    if !(o.is_object() || o.is_null()) {
        return Err(format!(
            "sessions.prune takes {{ status?, olderThan?, dryRun?, sessionId? }}, got {}",
            kind(o)
        ));
    }
    let session_id = match o.get("sessionId") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(format!("'sessionId' must be a string, got {}", kind(other)));
        }
    };
    Ok(archmax_machine::PruneOptions {
        kinds: option_kinds(o, "status")?,
        older_than_ms: option_age(o, "olderThan")?,
        dry_run: option_flag(o, "dryRun")?,
        session_id,
    })
}

/// `agent.sessions.fork`'s options: the step (a whole number from 1) and the new id.
fn fork_options(options: Option<&Value>) -> std::result::Result<(u64, Option<String>), String> {
    let usage = "sessions.fork takes (sessionId, { at, as? }): 'at' the step to fork from (see sessions.history), 'as' the new session's id";
    let Some(o) = options.filter(|o| o.is_object()) else {
        return Err(format!("{usage}; got {}", options.map_or("nothing", kind)));
    };
    let at = match o.get("at") {
        Some(Value::Number(n)) if n.as_u64().is_some_and(|n| n >= 1) => n.as_u64().unwrap_or(1),
        Some(other) => {
            return Err(format!(
                "'at' must be a step number (a whole number from 1), got {}",
                if other.is_number() {
                    other.to_string()
                } else {
                    kind(other).to_string()
                }
            ));
        }
        None => return Err(format!("{usage}; 'at' is missing")),
    };
    let new_id = match o.get("as") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) => Some(s.clone()),
        Some(other) => {
            return Err(format!(
                "'as' must be a session id string, got {}",
                kind(other)
            ));
        }
    };
    Ok((at, new_id))
}

#[napi]
impl NativeAgent {
    /// The summaries `agent.sessions.list` selects: every session, or `{ status, olderThan,
    /// attention }` (`archmax_machine::SessionQuery`); a bad option answers `TypeError`.
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_list(
        &self,
        #[napi(
            ts_arg_type = "{ status?: string | string[]; olderThan?: string | number; attention?: boolean } | null"
        )]
        query: Option<Value>,
    ) -> Value {
        let query = match session_query(query.as_ref()) {
            Ok(q) => q,
            Err(e) => return plain_error("TypeError", e),
        };
        self.answer(|h| h.list_sessions(&query))
    }

    /// Removes sessions by standing and age, or one by id (`agent.sessions.prune`,
    /// `archmax_machine::PruneOptions`); a bad option answers `TypeError`.
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_prune(
        &self,
        #[napi(
            ts_arg_type = "{ status?: string | string[]; olderThan?: string | number; dryRun?: boolean; sessionId?: string }"
        )]
        options: Value,
    ) -> Value {
        let opts = match prune_options(&options) {
            Ok(o) => o,
            Err(e) => return plain_error("TypeError", e),
        };
        self.answer(|h| h.prune_sessions(&opts))
    }

    /// Every committed step of a session, `null` when it has not run
    /// (`agent.sessions.history`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_history(&self, session_id: String) -> Value {
        self.answer(|h| h.session_history(&session_id))
    }

    /// A new session from one step of another (`agent.sessions.fork`): `{ at, as? }`; a
    /// bad option answers `TypeError`.
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_fork(
        &self,
        session_id: String,
        #[napi(ts_arg_type = "{ at: number; as?: string } | null")] options: Option<Value>,
    ) -> Value {
        let (at, new_id) = match fork_options(options.as_ref()) {
            Ok(o) => o,
            Err(e) => return plain_error("TypeError", e),
        };
        self.answer(|h| h.fork_session(&session_id, at, new_id.as_deref()))
    }

    /// One session's summary, `null` when it has not run (`agent.sessions.get`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_get(&self, session_id: String) -> Value {
        self.answer(|h| h.session_summary(&session_id))
    }

    /// A parked session's park record with its state's instructions and approvers,
    /// `null` when not parked (`agent.sessions.park`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_park(&self, session_id: String) -> Value {
        self.answer(|h| h.session_park(&session_id))
    }

    /// The spec snapshot a session's `specHash` names, `null` when absent (`agent.getSpecSnapshot`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn spec_snapshot(&self, hash: String) -> Value {
        self.answer(|h| h.spec_snapshot(&hash))
    }

    /// One session's committed transcript (`agent.sessions.messages`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_messages(&self, session_id: String) -> Value {
        self.answer(|h| h.session_messages(&session_id))
    }

    /// How many messages a session's transcript holds (`agent.sessions.messageCount`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_message_count(&self, session_id: String) -> Value {
        self.answer(|h| h.message_count(&session_id))
    }

    /// Deletes a session and its child sessions; whether anything was removed.
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_delete(&self, session_id: String) -> Value {
        self.answer(|h| h.delete_session(&session_id))
    }

    /// Writes files into a session's folder (`agent.sessions.seed`).
    #[napi(ts_return_type = "Promise<NativeResult>")]
    pub async fn session_seed(
        &self,
        session_id: String,
        #[napi(ts_arg_type = "Record<string, unknown>")] files: Value,
    ) -> Value {
        let Value::Object(files) = files else {
            return plain_error(
                "TypeError",
                format!(
                    "'files' must be an object of path → content, got {}",
                    kind(&files)
                ),
            );
        };
        self.answer(|h| h.seed_session(&session_id, &files))
    }

    /// Writes session `sessionId`'s run artifacts under its `artifacts/` folder
    /// (`agent.emitRunArtifacts`): `{ ok: true, value: "<id>/artifacts", events }`, or `value:
    /// null` with the `warning` event (scope `run-artifacts`) in `events` (JSON texts, for
    /// `onEvent` in order) when they could not be written.
    #[napi(catch_unwind, ts_return_type = "NativeResult & { events?: string[] }")]
    pub fn emit_run_artifacts(
        &self,
        session_id: String,
        #[napi(ts_arg_type = "unknown")] trajectory: Value,
        #[napi(ts_arg_type = "unknown")] trail: Option<Value>,
    ) -> Value {
        let (mut answer, events) = collecting_events(|| {
            self.answer(|h| {
                h.emit_run_artifacts(
                    &session_id,
                    archmax_machine::run_artifacts::RunArtifacts {
                        trajectory,
                        trail: trail.filter(|t| !t.is_null()),
                        package_version: env!("CARGO_PKG_VERSION"),
                    },
                )
            })
        });
        if let Value::Object(m) = &mut answer {
            m.insert("events".into(), json!(events));
        }
        answer
    }
}

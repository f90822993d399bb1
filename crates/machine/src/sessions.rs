//! Session operations a host runs outside a turn (`agent.sessions`): summaries, the
//! committed transcript, deletion and seeding files into a session folder.
//!
//! ```no_run
//! # fn demo(h: &archmax_machine::Harness) -> Result<(), archmax_machine::RunError> {
//! for s in h.session_summaries()? {
//!     println!("{} {:?} {:?}", s.session_id, s.status, s.classification);
//! }
//! h.seed_session("s-1", &serde_json::from_str(r#"{ "trigger.json": { "from": "a@b.c" } }"#).unwrap_or_default())?;
//! # Ok(()) }
//! ```

use std::collections::BTreeMap;
use std::path::Path;

use archmax_kernel::Mounts;
use archmax_kernel::canonical::canonicalize;
use archmax_kernel::zones::{Zone, classify};
use serde::Serialize;
use serde_json::{Map, Value};
use ts_rs::TS;

use crate::outcome::{SessionExit, VariableEntry, variable_entries};
use crate::state::{Park, SessionState, Status, Usage};
use crate::store::{StoreError, is_descendant, parent_of};
use crate::{error::RunError, harness::Harness};

/// Whether a session has ended (`completed`, `failed`, `rejected`) or may still move.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "lowercase")]
#[ts(export)]
pub enum Classification {
    /// `completed`, `failed` or `rejected`.
    Finished,
    /// Anything else: running or parked.
    Open,
}

/// What a host lists about a session (`agent.sessions.get`/`list`).
#[derive(Debug, Clone, PartialEq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields)]
pub struct SessionSummary {
    /// The session id.
    pub session_id: String,
    /// Where the session stands.
    pub status: Status,
    /// `finished` or `open`.
    pub classification: Classification,
    /// The current state.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow_state: Option<String>,
    /// The spec hash the last turn ran under.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spec_hash: Option<String>,
    /// The parked state, when parked.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub state: Option<String>,
    /// What a session parked for input waits for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_reason: Option<String>,
    /// When a session parked for input should be woken (ISO-8601 UTC).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub resume_at: Option<String>,
    /// How a failed session ended (status `failed` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub exit: Option<SessionExit>,
    /// The run's variables; absent when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub variables: Option<BTreeMap<String, VariableEntry>>,
    /// Cumulative usage; absent when every counter is 0.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub usage: Option<Usage>,
    /// The parent of a child session (`<parent>~<state>:<workflow>:<ordinal>`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parent_session_id: Option<String>,
}

impl SessionSummary {
    /// The summary of session `id` as its state stands.
    pub fn of(id: &str, s: &SessionState) -> Self {
        let non_empty = |t: &str| (!t.is_empty()).then(|| t.to_string());
        let (wait_reason, resume_at) = match &s.park {
            Some(Park::Input {
                reason, resume_at, ..
            }) => (Some(reason.clone()), resume_at.clone()),
            _ => (None, None),
        };
        let variables = variable_entries(s);
        SessionSummary {
            session_id: id.to_string(),
            status: s.status,
            classification: if s.status.is_finished() {
                Classification::Finished
            } else {
                Classification::Open
            },
            workflow_state: non_empty(&s.workflow_state),
            spec_hash: non_empty(&s.spec_hash),
            state: s.park.as_ref().map(|p| p.state().to_string()),
            wait_reason,
            resume_at,
            exit: s
                .exit
                .clone()
                .filter(|_| s.status == Status::Failed)
                .map(SessionExit::Failure),
            variables: (!variables.is_empty()).then_some(variables),
            usage: (!s.usage.is_empty()).then_some(s.usage),
            parent_session_id: parent_of(id).map(str::to_string),
        }
    }
}

impl Harness {
    /// The spec a session ran under, by the `specHash` of its summary (written the first
    /// time a turn saw that hash); `None` when the store holds no such snapshot.
    ///
    /// Errors: `SessionStoreError` when the store fails or the hash is malformed.
    pub fn spec_snapshot(&self, hash: &str) -> Result<Option<Value>, RunError> {
        Ok(self.store.read_spec_snapshot(hash)?)
    }

    /// The summary of a session; `None` when it has not run.
    ///
    /// Errors: `SessionStoreIdError` for a bad id, `SessionStoreError` when the store fails.
    pub fn session_summary(&self, id: &str) -> Result<Option<SessionSummary>, RunError> {
        let sid = self.parse_session_id(id)?;
        Ok(self
            .session_state(sid.as_str())?
            .map(|s| SessionSummary::of(sid.as_str(), &s)))
    }

    /// The park a parked session waits on, as a host presents it after any restart: the
    /// persisted park record (the `pending` of the Outcome that parked it) with the parked
    /// state's `instructions` and `approvers` from the spec, as `archmax run` prints them.
    /// `None` when the session has not run or is not parked.
    ///
    /// Errors: `SessionStoreIdError`, `SessionStoreError`.
    pub fn session_park(&self, id: &str) -> Result<Option<Value>, RunError> {
        let Some(park) = self.session_state(id)?.and_then(|s| s.park) else {
            return Ok(None);
        };
        let mut record = match serde_json::to_value(&park) {
            Ok(Value::Object(m)) => m,
            Ok(_) | Err(_) => {
                return Err(RunError::Store(format!(
                    "session '{id}' has a park record that does not serialize"
                )));
            }
        };
        let decl = self.parked_declaration(id)?;
        let decl = decl.as_ref();
        if let Some(text) = decl
            .and_then(|s| s.instructions.as_deref())
            .map(str::trim)
            .filter(|t| !t.is_empty())
        {
            record.insert("instructions".into(), Value::String(text.to_string()));
        }
        if let Some(a) = decl
            .and_then(|s| s.approvers.as_ref())
            .filter(|a| !a.is_empty())
        {
            record.insert(
                "approvers".into(),
                Value::Array(a.iter().cloned().map(Value::String).collect()),
            );
        }
        Ok(Some(Value::Object(record)))
    }

    /// The declaration of the state session `id` is parked at, from the workflow declaring
    /// it: a caller presenting a parked child's park names the child's state (through every
    /// level of children), so it is looked up where the child's own session ran. `None`
    /// when the session is not parked or the declaring workflow no longer loads.
    ///
    /// Errors: `SessionStoreIdError`, `SessionStoreError`.
    pub fn parked_declaration(
        &self,
        id: &str,
    ) -> Result<Option<archmax_spec::model::State>, RunError> {
        let mut at = self.parse_session_id(id)?.as_str().to_string();
        // A chain of parked children is at most the dispatcher's depth deep.
        for _ in 0..8 {
            let Some(s) = self.session_state(&at)? else {
                return Ok(None);
            };
            if let Some(head) = s.presented_child() {
                at = format!("{at}{}{}", crate::store::CHILD_SEPARATOR, head.identity);
                continue;
            }
            let Some(park) = s.park else {
                return Ok(None);
            };
            let decl = if s.workflow == self.workflow || s.workflow.is_empty() {
                self.spec.states.get(park.state()).cloned()
            } else {
                self.child_harness(&s.workflow)
                    .ok()
                    .and_then(|h| h.spec.states.get(park.state()).cloned())
            };
            return Ok(decl);
        }
        Ok(None)
    }

    /// The summaries of every session of the store (child sessions as their own
    /// entries), in the store's order; sessions without a readable state are left out.
    ///
    /// Errors: `SessionStoreError` when the store cannot be listed.
    pub fn session_summaries(&self) -> Result<Vec<SessionSummary>, RunError> {
        Ok(self
            .session_ids()?
            .iter()
            .filter_map(|id| self.session_summary(id).ok().flatten())
            .collect())
    }

    /// The committed transcript of a session; empty when it has none.
    ///
    /// Errors: `SessionStoreIdError`, `SessionStoreError`.
    pub fn session_messages(&self, id: &str) -> Result<Vec<Value>, RunError> {
        let sid = self.parse_session_id(id)?;
        Ok(self
            .store
            .load(&sid)?
            .map(|s| s.messages)
            .unwrap_or_default())
    }

    /// How many messages the committed transcript holds (the cursor a host keeps to
    /// read what a later turn added); 0 when none.
    ///
    /// Errors: `SessionStoreIdError`, `SessionStoreError`.
    pub fn message_count(&self, id: &str) -> Result<usize, RunError> {
        Ok(self.session_state(id)?.map_or(0, |s| {
            usize::try_from(s.transcript_len).unwrap_or(usize::MAX)
        }))
    }

    /// Deletes a session and its child sessions; true when something was removed.
    /// The session's writer lease is taken first, so a session with a turn in flight
    /// is not deleted.
    ///
    /// Errors: `SessionStoreIdError` for a bad id, `SessionNotResumableError` while a
    /// turn holds the session, `SessionStoreError` when the store fails.
    pub fn delete_session(&self, id: &str) -> Result<bool, RunError> {
        let sid = self.parse_session_id(id)?;
        // Taking the lease creates the folder of an absent session: look first.
        let existed = self.store.session_dir(&sid).is_some_and(|d| d.exists())
            || self.store.load_state(&sid)?.is_some()
            || self
                .store
                .list()?
                .iter()
                .any(|other| is_descendant(sid.as_str(), other));
        let lease = self.store.acquire(&sid)?;
        self.store.delete(&sid)?;
        drop(lease);
        Ok(existed)
    }

    /// Writes files into a session's folder before (or between) turns: a string is
    /// written as is, any other value as pretty JSON and a newline. Every path must be
    /// an agent-visible session file (zone `run` or `run-open`); all are checked
    /// before anything is written.
    ///
    /// Errors: `SessionStoreIdError` for a bad id; a plain `Error` (code `Error`) naming
    /// the first refused path; `SessionStoreCapabilityError` when the store keeps no
    /// session folder (the in-memory store); `SessionStoreError` when a write fails.
    pub fn seed_session(&self, id: &str, files: &Map<String, Value>) -> Result<(), RunError> {
        let sid = self.parse_session_id(id)?;
        let mounts = Mounts::from_decls(&self.mounts);
        let writes = files
            .iter()
            .map(|(path, value)| Ok((seed_path(path, &mounts)?, seed_bytes(value))))
            .collect::<Result<Vec<(String, Vec<u8>)>, RunError>>()?;
        let Some(dir) = self.store.session_dir(&sid) else {
            return Err(RunError::StoreCapability {
                kind: self.store.kind(),
                capability: "seed",
                hint: "Seeding writes files into the session folder and needs a filesystem session store.",
            });
        };
        // The store root is the confinement base, so a linked session folder is refused too.
        let base = dir
            .parent()
            .map_or_else(|| dir.clone(), std::path::Path::to_path_buf);
        for (rel, bytes) in writes {
            write_seed(sid.as_str(), &base, &dir.join(&rel), &bytes)?;
        }
        Ok(())
    }
}

/// The canonical session path of a seeded file, or the refusal naming it.
fn seed_path(path: &str, mounts: &Mounts) -> Result<String, RunError> {
    let refuse = |why: String| {
        RunError::SeedPath(format!(
            "Cannot seed {}: {why}. Seedable paths are agent-visible session files (e.g. 'trigger.json', 'scratchpad/…').",
            serde_json::to_string(path).unwrap_or_else(|_| format!("\"{path}\""))
        ))
    };
    let drive = matches!(path.as_bytes(), [d, b':', b'/' | b'\\', ..] if d.is_ascii_alphabetic());
    if drive || path.starts_with(['/', '\\']) {
        return Err(refuse("it is an absolute path".to_string()));
    }
    let canonical = canonicalize(path);
    if !canonical.escapes && path.split(['/', '\\']).any(|seg| seg == "..") {
        return Err(refuse("'..' segments are not allowed".to_string()));
    }
    match classify(&canonical, mounts) {
        Zone::Run | Zone::RunOpen => Ok(canonical.path),
        zone => Err(refuse(format!(
            "it resolves to the '{}' zone",
            zone_name(zone)
        ))),
    }
}

/// The zone's name as the original's `classifyWorkspacePath` answers it.
fn zone_name(zone: Zone) -> &'static str {
    match zone {
        Zone::Escapes => "escapes",
        Zone::Root => "root",
        Zone::Authored => "authored",
        Zone::RunInternal => "run-internal",
        Zone::RunOffload => "run-offload",
        Zone::RunOpen => "run-open",
        Zone::Run => "run",
    }
}

/// A string verbatim; any other value as `JSON.stringify(v, null, 2) + "\n"`.
fn seed_bytes(value: &Value) -> Vec<u8> {
    match value {
        Value::String(text) => text.clone().into_bytes(),
        other => {
            let mut text = serde_json::to_string_pretty(other).unwrap_or_default();
            text.push('\n');
            text.into_bytes()
        }
    }
}

/// Writes one seeded file, creating its folders, overwriting what is there.
fn write_seed(id: &str, base: &Path, path: &Path, bytes: &[u8]) -> Result<(), RunError> {
    crate::store::confine::write_file(base, path, bytes).map_err(StoreError::io(
        id,
        "write",
        path.to_path_buf(),
    ))?;
    Ok(())
}

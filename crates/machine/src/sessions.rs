//! Session operations a host runs outside a turn (`agent.sessions`): summaries with their
//! standing, the listing by standing and the attention view, the committed transcript,
//! deletion, pruning and seeding files into a session folder.
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

use archmax_kernel::Mounts;
use archmax_kernel::canonical::canonicalize;
use archmax_kernel::zones::{Zone, classify};
use serde::Serialize;
use serde_json::{Map, Value};
use ts_rs::TS;

use crate::outcome::{SessionExit, VariableEntry, variable_entries};
use crate::standing::{Standing, StandingKind};
use crate::state::{Park, SessionState, Status, Usage};
use crate::store::{SessionId, StoreError, is_descendant, parent_of};
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
    /// Where the session stands, in words an operator can act on (beside the original's
    /// `status` and `classification`, which stay as they were).
    pub standing: Standing,
    /// The session and step it was forked from, when it is a fork.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forked_from: Option<crate::state::ForkedFrom>,
}

impl SessionSummary {
    /// The summary of session `id` as its state stands; `terminal` says whether its
    /// current state has no transitions (`None` when its workflow is not known).
    pub fn of(id: &str, s: &SessionState, terminal: Option<bool>) -> Self {
        let non_empty = |t: &str| (!t.is_empty()).then(|| t.to_string());
        let (wait_reason, resume_at) = match &s.park {
            Some(Park::Input {
                reason, resume_at, ..
            }) => (non_empty(reason), resume_at.clone()),
            _ => (None, None),
        };
        // The parked state: its park record's, else (a parked status without a record)
        // the current state.
        let parked = match &s.park {
            Some(p) => Some(p.state().to_string()),
            None if matches!(s.status, Status::AwaitingDecision | Status::AwaitingInput) => {
                non_empty(&s.workflow_state)
            }
            None => None,
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
            state: parked,
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
            standing: Standing::of(s, terminal),
            forked_from: s.forked_from.clone(),
        }
    }
}

/// Which sessions a listing shows ([`Harness::list_sessions`]).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SessionQuery {
    /// Only sessions standing so (empty: every standing).
    pub kinds: Vec<StandingKind>,
    /// Only sessions that have stood so for at least this long (milliseconds); a session
    /// whose `since` is unknown never matches.
    pub older_than_ms: Option<u64>,
    /// The attention view: only root sessions that need a person
    /// ([`Standing::attention`]), stalled work first, then old parks, each longest first.
    pub attention: bool,
}

/// The standings a prune by status removes when none is named: the sessions whose work
/// ended or broke (`done`, `failed`, `cancelled`, `rejected`). `idle` is removed only when
/// named; running and parked sessions never by status.
pub const PRUNE_DEFAULT: [StandingKind; 4] = [
    StandingKind::Done,
    StandingKind::Failed,
    StandingKind::Cancelled,
    StandingKind::Rejected,
];

/// What [`Harness::prune_sessions`] removes.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct PruneOptions {
    /// Root sessions standing so (empty: [`PRUNE_DEFAULT`]). A running or parked standing
    /// is refused here: such a session is pruned only by id.
    pub kinds: Vec<StandingKind>,
    /// Only sessions that have stood so for at least this long (milliseconds).
    pub older_than_ms: Option<u64>,
    /// Report what would be removed, remove nothing (and take no lease).
    pub dry_run: bool,
    /// This one session (and its child sessions), whatever it stands as, unless a turn
    /// holds it. Not with `kinds` or `older_than_ms`.
    pub session_id: Option<String>,
}

/// What a prune removed (or, on a dry run, would remove), and what it left and why.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields)]
pub struct PruneReport {
    /// Nothing was removed: `pruned` is what would have been.
    pub dry_run: bool,
    /// The sessions removed, each with its child sessions.
    pub pruned: Vec<PrunedSession>,
    /// Sessions the prune chose but left: a turn held them, they changed before their
    /// lease was taken, or (by id) there is no such session.
    pub skipped: Vec<SkippedSession>,
}

/// A session a prune removed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export, optional_fields)]
pub struct PrunedSession {
    /// The session id.
    pub session_id: String,
    /// Its workflow.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workflow: Option<String>,
    /// Where it stood.
    pub standing: Standing,
}

/// A session a prune chose and left.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, TS)]
#[serde(rename_all = "camelCase")]
#[ts(export)]
pub struct SkippedSession {
    /// The session id.
    pub session_id: String,
    /// Why it stays.
    pub reason: String,
}

/// Whether states of workflows are terminal, for a listing: the harness's own spec, a
/// delegation target it assembled, else the spec snapshot the session ran under (each
/// snapshot read once).
struct Terminals<'h> {
    h: &'h Harness,
    snapshots: BTreeMap<String, Option<Value>>,
}

impl<'h> Terminals<'h> {
    fn new(h: &'h Harness) -> Self {
        Terminals {
            h,
            snapshots: BTreeMap::new(),
        }
    }

    /// Whether the state session `s` stands at has no transitions; `None` when no spec
    /// this harness can read declares it.
    fn of(&mut self, s: &SessionState) -> Option<bool> {
        let at = s.workflow_state.as_str();
        if at.is_empty() {
            return None;
        }
        let own = s.workflow.is_empty() || s.workflow == self.h.workflow;
        if own && let Some(st) = self.h.spec.states.get(at) {
            return Some(st.is_terminal());
        }
        if !own
            && let Some(child) = self
                .h
                .children
                .lock()
                .ok()
                .and_then(|m| m.get(&s.workflow).cloned())
            && let Some(st) = child.spec.states.get(at)
        {
            return Some(st.is_terminal());
        }
        if s.spec_hash.is_empty() {
            return None;
        }
        let snapshot = self
            .snapshots
            .entry(s.spec_hash.clone())
            .or_insert_with(|| self.h.store.read_spec_snapshot(&s.spec_hash).ok().flatten());
        let state = snapshot.as_ref()?.get("states")?.get(at)?;
        Some(
            state
                .get("transitions")
                .and_then(Value::as_array)
                .is_none_or(Vec::is_empty),
        )
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
        let mut terminals = Terminals::new(self);
        Ok(self
            .session_state(sid.as_str())?
            .map(|s| SessionSummary::of(sid.as_str(), &s, terminals.of(&s))))
    }

    /// Where session `id` stands; `None` when it has not run.
    ///
    /// Errors: `SessionStoreIdError`, `SessionStoreError`.
    pub fn session_standing(&self, id: &str) -> Result<Option<Standing>, RunError> {
        let mut terminals = Terminals::new(self);
        Ok(self
            .session_state(id)?
            .map(|s| Standing::of(&s, terminals.of(&s))))
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
        self.list_sessions(&SessionQuery::default())
    }

    /// The summaries of the sessions `query` selects: in the store's order, or for the
    /// attention view stalled work first, then old parks, each longest-standing first.
    /// Sessions without a readable state are left out.
    ///
    /// Errors: `SessionStoreError` when the store cannot be listed.
    pub fn list_sessions(&self, query: &SessionQuery) -> Result<Vec<SessionSummary>, RunError> {
        self.list_sessions_at(query, crate::clock::now_ms())
    }

    /// [`list_sessions`](Self::list_sessions) as it would answer at `now` (epoch ms).
    pub fn list_sessions_at(
        &self,
        query: &SessionQuery,
        now: u64,
    ) -> Result<Vec<SessionSummary>, RunError> {
        let mut terminals = Terminals::new(self);
        let mut out: Vec<(u8, SessionSummary)> = Vec::new();
        for id in self.session_ids()? {
            let Ok(Some(s)) = self.session_state(&id) else {
                continue;
            };
            let summary = SessionSummary::of(&id, &s, terminals.of(&s));
            let st = &summary.standing;
            if !query.kinds.is_empty() && !query.kinds.contains(&st.kind) {
                continue;
            }
            if let Some(age) = query.older_than_ms
                && st.age(now).is_none_or(|a| a < age)
            {
                continue;
            }
            let rank = if query.attention {
                match st.attention(now) {
                    Some(rank) if summary.parent_session_id.is_none() => rank,
                    _ => continue,
                }
            } else {
                0
            };
            out.push((rank, summary));
        }
        if query.attention {
            out.sort_by(|(ra, a), (rb, b)| {
                let since = |s: &SessionSummary| s.standing.since.unwrap_or(u64::MAX);
                ra.cmp(rb)
                    .then(since(a).cmp(&since(b)))
                    .then(a.session_id.cmp(&b.session_id))
            });
        }
        Ok(out.into_iter().map(|(_, s)| s).collect())
    }

    /// Removes sessions by standing and age (root sessions, each with its child sessions),
    /// or one session by id whatever it stands as. Each session's writer lease is taken
    /// before it is removed and its standing read again under it, so a turn in flight, in
    /// any process, keeps its session (`skipped`). A dry run removes nothing and takes no
    /// lease.
    ///
    /// Errors: `TypeError` for a running or parked standing named without an id, or an id
    /// given with a standing or an age; `SessionStoreIdError` for a bad id;
    /// `SessionStoreError` when the store fails.
    pub fn prune_sessions(&self, opts: &PruneOptions) -> Result<PruneReport, RunError> {
        self.prune_sessions_at(opts, crate::clock::now_ms())
    }

    /// [`prune_sessions`](Self::prune_sessions) as it would answer at `now` (epoch ms).
    pub fn prune_sessions_at(
        &self,
        opts: &PruneOptions,
        now: u64,
    ) -> Result<PruneReport, RunError> {
        let mut report = PruneReport {
            dry_run: opts.dry_run,
            pruned: Vec::new(),
            skipped: Vec::new(),
        };
        if let Some(id) = &opts.session_id {
            if !opts.kinds.is_empty() || opts.older_than_ms.is_some() {
                return Err(RunError::Options(
                    "a prune by session id takes no status and no age: it removes that session whatever it stands as".to_string(),
                ));
            }
            let sid = self.parse_session_id(id)?;
            self.prune_one(&sid, None, &mut report)?;
            return Ok(report);
        }
        if let Some(live) = opts.kinds.iter().find(|k| k.is_live()) {
            return Err(RunError::Options(format!(
                "a prune by status never removes a {} session (running or parked); name the session to remove one: prune <session>",
                live.as_str()
            )));
        }
        let query = SessionQuery {
            kinds: if opts.kinds.is_empty() {
                PRUNE_DEFAULT.to_vec()
            } else {
                opts.kinds.clone()
            },
            older_than_ms: opts.older_than_ms,
            attention: false,
        };
        for summary in self.list_sessions_at(&query, now)? {
            if summary.parent_session_id.is_some() {
                // A child session goes with its root.
                continue;
            }
            let sid = self.parse_session_id(&summary.session_id)?;
            self.prune_one(&sid, Some((&query, now)), &mut report)?;
        }
        Ok(report)
    }

    /// Removes one session under its lease (`matches`: the query it must still answer
    /// under the lease; `None` for a prune by id), recording what happened in `report`.
    fn prune_one(
        &self,
        sid: &SessionId,
        matches: Option<(&SessionQuery, u64)>,
        report: &mut PruneReport,
    ) -> Result<(), RunError> {
        let id = sid.as_str().to_string();
        let skip = |report: &mut PruneReport, reason: String| {
            report.skipped.push(SkippedSession {
                session_id: id.clone(),
                reason,
            });
        };
        let chosen = |report: &mut PruneReport, s: &SessionState, standing: Standing| {
            report.pruned.push(PrunedSession {
                session_id: id.clone(),
                workflow: (!s.workflow.is_empty()).then(|| s.workflow.clone()),
                standing,
            });
        };
        let still = |standing: &Standing| {
            matches.is_none_or(|(q, now)| {
                q.kinds.contains(&standing.kind)
                    && q.older_than_ms
                        .is_none_or(|age| standing.age(now).is_some_and(|a| a >= age))
            })
        };
        // Taking the lease makes the folder of an absent session: look first.
        let Some(s) = self.session_state(&id)? else {
            skip(report, "there is no such session".to_string());
            return Ok(());
        };
        let mut terminals = Terminals::new(self);
        if report.dry_run {
            let standing = Standing::of(&s, terminals.of(&s));
            chosen(report, &s, standing);
            return Ok(());
        }
        let lease = match self.store.acquire(sid) {
            Ok(lease) => lease,
            Err(StoreError::Busy { .. }) => {
                skip(report, "a turn holds it (running)".to_string());
                return Ok(());
            }
            Err(e) => return Err(e.into()),
        };
        // Under the lease: what it stands as now.
        let Some(s) = self.session_state(&id)? else {
            drop(lease);
            skip(report, "there is no such session".to_string());
            return Ok(());
        };
        let standing = Standing::of(&s, terminals.of(&s));
        if !still(&standing) {
            drop(lease);
            skip(
                report,
                format!(
                    "it changed before it was removed: now {}",
                    standing.kind.as_str()
                ),
            );
            return Ok(());
        }
        self.store.delete(sid)?;
        drop(lease);
        chosen(report, &s, standing);
        Ok(())
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
        let Some(files) = self.store.seedable_files(&sid) else {
            return Err(RunError::StoreCapability {
                kind: self.store.kind(),
                capability: "seed",
                hint: "Seeding writes files into the session folder and needs a filesystem session store.",
            });
        };
        // The store root is the confinement base, so a linked session folder is refused too.
        let base = files
            .dir
            .parent()
            .map_or_else(|| files.dir.clone(), std::path::Path::to_path_buf);
        for (rel, bytes) in writes {
            let path = files.dir.join(&rel);
            files
                .backend
                .write_confined(&base, &path, &bytes)
                .map_err(StoreError::io(sid.as_str(), "write", path.clone()))?;
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

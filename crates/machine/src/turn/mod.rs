//! A turn: one arrival (a message, a decision, a reply, a delivery) and the loop it runs
//! until the session completes, is rejected, fails or parks. Every step is committed to the
//! store before the next one starts.
//!
//! ```text
//! arrivals  send · run_plain · decide · reply · deliver   → begin (lease + load)
//! boundary  open: position, trigger, seeds, requires       (fresh turns only)
//! run       loop: entry gate → budgets → request → model call → calls | completion
//!   request   system message, tool definitions, the borrowed conversation, usage
//!   budget    timeoutMs, maxTurns, maxModelCalls
//!   gates     before/after hooks and their correction budgets
//!   dispatch  one call: name → arguments → substitution → kernel → execute → result
//!   execute   control tools, file tools, host tools      code  archmax_eval / archmax_run
//!   parks     decision records, archmax_wait              settle  complete, route, fail
//!   delegate  archmax_workflow_<slug>: checks, the child, its answer
//!   child_parks  a parked child presented as its caller's park, resumed through it
//! transcript  the conversation's one home (stored lines + the wire view)
//! ```
//!
//! The state is grouped by who changes it: [`Transcript`] (only through its methods),
//! [`Mode`] (what the next model call may do: the loop and the parks), [`Visit`] (every move of the position, the gates,
//! the budgets read it), and the session itself, which each module's header says it touches.

mod arrivals;
mod boundary;
mod budget;
mod child_parks;
mod code;
pub(crate) mod delegate;
mod dispatch;
mod gates;
mod moves;
mod parks;
mod request;
mod run;
mod settle;
mod transcript;

use std::time::Instant;

use archmax_spec::signature::{TriggerSignature, signature_for_trigger};
use serde_json::{Map, Value};

use crate::cancel::Cancel;
use crate::error::RunError;
use crate::events::Event;
use crate::harness::Harness;
use crate::outcome::Outcome;
use crate::state::{SessionState, TrailStep};
use crate::store::SessionId;

use transcript::Transcript;

/// Default root `budget.maxModelCalls`.
pub const DEFAULT_MAX_MODEL_CALLS: u64 = 50;
/// The step backstop: model calls plus the tool steps between them (our formula,
/// see docs/decisions.md).
pub fn step_limit(max_model_calls: u64) -> u64 {
    max_model_calls.saturating_mul(4).saturating_add(20)
}

/// A message (or firing) that opens a turn.
#[derive(Debug, Clone, Default)]
pub struct SendInput {
    /// The person's message.
    pub message: String,
    /// The trigger (default `manual`).
    pub trigger: Option<String>,
    /// Host seeds: locked variables.
    pub variables: Map<String, Value>,
}

/// One turn in progress.
struct Turn<'h> {
    h: &'h Harness,
    id: SessionId,
    session: SessionState,
    transcript: Transcript,
    signature: Option<TriggerSignature>,
    steps: u64,
    visit: Visit,
    mode: Mode,
    /// How the reply-only directive opens.
    reply_case: crate::park::ReplyCase,
    /// `turn`, `decide`, `reply` or `deliver`: what opened the turn (its outcome and span say it).
    disposition: &'static str,
    /// Tripped by [`Harness::cancel`].
    cancel: Cancel,
    /// The `agent` sandbox of `archmax_eval`/`archmax_run`: built at the first call,
    /// shared by the turn's calls, dropped with the turn.
    sandbox: Option<std::sync::Arc<archmax_sandbox::Sandbox>>,
    /// The lineage of this turn's model requests (`ChatRequest::lineage`), unique per turn.
    lineage: u64,
    /// The tool-call ids this turn has answered: a model that repeats one gets it
    /// renamed (`dispatch::unique_call_ids`), so every result pairs with exactly one call.
    call_ids: std::collections::HashSet<String>,
    /// The workflows from the root session's down to this one (a root turn holds its own).
    chain: Vec<String>,
    /// The delegation this turn runs as the child of (`None` at the root): its own
    /// delegations are named under it, and every event it emits carries it.
    dispatch: Option<String>,
    /// Where this turn's events go: the harness's emitter, tagged with `dispatch`.
    emitter: crate::events::Emitter,
    /// The ancestors' workflow-wide denials, binding every call of this turn (empty at the root).
    inherited: std::sync::Arc<[archmax_kernel::Inherited]>,
    /// Delegations of this turn that failed and are not recovered yet (`delegate::settle`).
    failed: Vec<delegate::Failure>,
    /// The children this turn may run at once (`delegate::MAX_CONCURRENT`).
    delegations: std::sync::Arc<tokio::sync::Semaphore>,
    /// The turn's span and its current state segment's (`crate::trace`).
    spans: crate::trace::TurnSpans,
    /// The state this turn's last commit made durable: a commit with no new message and
    /// this same state has nothing to write, and is skipped.
    committed: Option<Value>,
    /// The status the store holds for the session (as loaded, then as last committed;
    /// `None` for a session not stored yet): a commit that changes it stamps
    /// `status_since`.
    stored_status: Option<crate::state::Status>,
    /// The states whose MCP tools this turn listed (each once: a server that cannot start
    /// is warned about once a turn, not at every step).
    mcp_listed: std::collections::HashSet<String>,
}

/// The current visit of a state: reset by every move of the position.
struct Visit {
    /// When the current state's segment of this turn began (for `budget.timeoutMs`).
    segment_started: Instant,
    /// The current state's `before` hooks already ran this visit.
    before_done: bool,
}

impl Visit {
    fn new() -> Self {
        Visit {
            segment_started: Instant::now(),
            before_done: false,
        }
    }
}

/// What the loop's next model call may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// Work: the model's calls run under governance.
    Work,
    /// A park was committed this turn and its one reply-only message is still owed.
    OwesReply,
    /// This model call is a parked session's reply-only message: every tool call is refused.
    ReplyOnly,
}

/// The next turn's lineage.
static NEXT_LINEAGE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.h.cancels.release(self.id.as_str(), &self.cancel);
    }
}

impl Harness {
    /// Runs `work` on the session store: on a blocking thread when the store waits on the
    /// disk (`crate::blocking`), so the turn's own thread is free meanwhile; in place
    /// otherwise.
    pub(crate) async fn store_io<T, F>(&self, work: F) -> Result<T, RunError>
    where
        T: Send + 'static,
        F: FnOnce(&dyn crate::store::SessionStore) -> T + Send + 'static,
    {
        if !self.store.waits_on_disk() {
            return Ok(work(self.store.as_ref()));
        }
        let store = std::sync::Arc::clone(&self.store);
        crate::blocking::run(move || work(store.as_ref()))
            .await
            .map_err(RunError::Store)
    }

    /// Gives the session's writer lease back (its lock file is removed through
    /// [`store_io`](Self::store_io)). A turn's early refusals just drop theirs.
    async fn release(&self, lease: crate::store::WriterLease) {
        let _ = self.store_io(move |_| drop(lease)).await;
    }

    /// [`begin`](Self::begin), run as a child session when `lineage` is given.
    async fn begin_as(
        &self,
        session_id: &str,
        lineage: Option<delegate::Lineage>,
    ) -> Result<(crate::store::WriterLease, Turn<'_>), RunError> {
        let from_caller = lineage.is_some();
        let (lease, mut turn) = self.begin_from(session_id, from_caller).await?;
        if let Some(lineage) = lineage {
            turn.adopt(lineage);
        }
        Ok((lease, turn))
    }

    /// Takes the session's writer lease and loads it into a turn (on a blocking thread
    /// when the store waits on the disk), writing this harness's spec snapshot on the way
    /// if this process has not yet.
    async fn begin(
        &self,
        session_id: &str,
    ) -> Result<(crate::store::WriterLease, Turn<'_>), RunError> {
        self.begin_from(session_id, false).await
    }

    /// [`begin`](Self::begin); `from_caller` when a caller's delegation starts or resumes
    /// the session. A host's arrival may continue a child session, never make one: a child
    /// id no caller started is refused before anything is made.
    async fn begin_from(
        &self,
        session_id: &str,
        from_caller: bool,
    ) -> Result<(crate::store::WriterLease, Turn<'_>), RunError> {
        let id = self.parse_session_id(session_id)?;
        if !from_caller && id.parent().is_some() {
            let at = id.clone();
            let exists = self
                .store_io(move |store| store.load_state(&at).map(|s| s.is_some()))
                .await??;
            if !exists {
                return Err(crate::store::SessionIdError::child_not_started(&id).into());
            }
        }
        let at = id.clone();
        let spec =
            (!self.spec_snapshot.written()).then(|| std::sync::Arc::clone(&self.spec_snapshot));
        let (lease, snapshot) = if self.store.waits_on_disk() {
            self.store_io(move |store| {
                let lease = store.acquire(&at)?;
                let snapshot = store.load(&at)?;
                // Best effort: a session that needs it and still lacks it writes it at its
                // boundary, where a failure is reported.
                if let Some(spec) = spec {
                    let _ = spec.ensure(store);
                }
                Ok::<_, crate::store::StoreError>((lease, snapshot))
            })
            .await??
        } else {
            // In place (`store_io` would run it here too); a store whose load answers later
            // (a host's JS store) is awaited, so no thread waits for it.
            let lease = self.store.acquire(&at)?;
            let snapshot = match std::sync::Arc::clone(&self.store).load_later(&at) {
                Some(later) => later.await?,
                None => self.store.load(&at)?,
            };
            if let Some(spec) = spec {
                let _ = spec.ensure(self.store.as_ref());
            }
            (lease, snapshot)
        };
        let stored = snapshot.is_some();
        let (session, messages) = match snapshot {
            Some(s) => {
                let state: SessionState = serde_json::from_value(s.state).map_err(|e| {
                    RunError::Store(format!(
                        "session '{}' has an unreadable state: {e}",
                        id.as_str()
                    ))
                })?;
                (state, s.messages)
            }
            None => (SessionState::default(), Vec::new()),
        };
        let signature = signature_for_trigger(&self.spec_json, &session.trigger);
        let cancel = self.cancels.register(id.as_str());
        let stored_status = stored.then_some(session.status);
        let turn = Turn {
            h: self,
            id,
            session,
            transcript: Transcript::loaded(messages),
            signature,
            steps: 0,
            visit: Visit::new(),
            mode: Mode::Work,
            reply_case: crate::park::ReplyCase::HandedOver,
            disposition: "turn",
            cancel,
            sandbox: None,
            lineage: NEXT_LINEAGE.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            call_ids: std::collections::HashSet::new(),
            chain: vec![self.workflow.clone()],
            dispatch: None,
            emitter: self.emitter.clone(),
            inherited: std::sync::Arc::new([]),
            failed: Vec::new(),
            delegations: std::sync::Arc::new(tokio::sync::Semaphore::new(delegate::MAX_CONCURRENT)),
            spans: crate::trace::TurnSpans::none(),
            committed: None,
            mcp_listed: std::collections::HashSet::new(),
            stored_status,
        };
        Ok((lease, turn))
    }
}

impl Turn<'_> {
    /// Runs this turn as a child session: its caller's chain, denials and cancel switch.
    fn adopt(&mut self, lineage: delegate::Lineage) {
        self.h.cancels.release(self.id.as_str(), &self.cancel);
        self.cancel = lineage.cancel;
        self.chain = lineage.chain;
        self.inherited = lineage.inherited;
        self.emitter = self.h.emitter.within(&lineage.dispatch_id);
        self.dispatch = Some(lineage.dispatch_id);
    }

    fn emit(&self, event: Event) {
        self.emitter.emit(Some(self.id.as_str()), event);
    }

    /// Writes the new messages and the state: the step is durable once this returns.
    /// Nothing new since this turn's last commit (no message, the same state): nothing to
    /// write, and no hand-off to the store.
    ///
    /// A store with a writer of its own (the filesystem store) takes the commit on its
    /// commit thread, where concurrent sessions' commits share one sync, and answers once
    /// the step is durable: the turn's own thread is free meanwhile and holds no blocking
    /// thread while it waits. Another store that waits on the disk commits on a blocking
    /// thread (`Harness::store_io`); one in memory, in place.
    async fn commit(&mut self) -> Result<(), RunError> {
        self.session.transcript_len = self.transcript.len() as u64;
        if self.stored_status != Some(self.session.status) {
            self.session.status_since = crate::clock::now_ms();
        }
        let state =
            serde_json::to_value(&self.session).map_err(|e| RunError::Store(e.to_string()))?;
        let new_messages = self.transcript.take_pending();
        if new_messages.is_empty() && self.committed.as_ref() == Some(&state) {
            return Ok(());
        }
        let id = self.id.clone();
        let step = crate::store::OwnedStep {
            new_messages,
            state,
        };
        // The step comes back with the result: its state is the committed one kept here.
        let (committed, step) = match std::sync::Arc::clone(&self.h.store).commit_queued(&id, step)
        {
            Ok(receipt) => receipt.wait().await,
            Err(step) => {
                let (committed, step) = self
                    .h
                    .store_io(move |store| store.commit_owned(&id, step))
                    .await?;
                (committed, Some(step))
            }
        };
        match committed {
            Ok(()) => {
                self.committed = step.map(|s| s.state);
                self.stored_status = Some(self.session.status);
                Ok(())
            }
            Err(e) => {
                // Nothing of the step is durable: its messages stay pending.
                if let Some(step) = step {
                    self.transcript.restore_pending(step.new_messages);
                }
                Err(e.into())
            }
        }
    }

    fn trail(&mut self, to: &str, kind: &str, reason: Option<&str>) {
        self.session.trail.push(TrailStep {
            to: to.to_string(),
            kind: kind.to_string(),
            reason: reason.map(str::to_string),
            workflow: None,
            status: None,
            ts: crate::clock::now_ms(),
        });
    }

    /// The trail step of a delegation that settled (`ok` or `error`): at the calling state.
    fn trail_delegation(&mut self, state: &str, workflow: &str, ok: bool) {
        self.session.trail.push(TrailStep {
            to: state.to_string(),
            kind: "sub-workflow".to_string(),
            reason: None,
            workflow: Some(workflow.to_string()),
            status: Some(if ok { "ok" } else { "error" }.to_string()),
            ts: crate::clock::now_ms(),
        });
    }

    fn workspace(&self) -> Option<crate::files::Workspace> {
        // A child session works in its root's files: it writes the caller's `scratchpad/`.
        let files = self.h.store.session_files(&self.id.root())?;
        let mounts = self
            .h
            .mounts
            .iter()
            .map(|m| crate::files::MountRoute {
                name: m.name.clone(),
                is_dir: m.kind == archmax_spec::workspace::MountKind::Dir,
                read_only: m.read_only,
            })
            .collect();
        Some(crate::files::Workspace::with_files(
            self.h.root.clone(),
            files,
            mounts,
        ))
    }

    /// The turn's span, a child of the current one (a delegation's tool call for a child
    /// session); a resumed park's turn links to the turn that parked it.
    fn turn_span(&self) -> tracing::Span {
        let workflow = self.h.workflow.as_str();
        let span = tracing::info_span!(
            "archmax.turn",
            otel.name = %format_args!("invoke_agent {workflow}"),
            otel.status_code = tracing::field::Empty,
            gen_ai.operation.name = "invoke_agent",
            gen_ai.agent.name = workflow,
            gen_ai.conversation.id = self.id.as_str(),
            archmax.session.id = self.id.as_str(),
            archmax.workflow = workflow,
            archmax.disposition = self.disposition,
            archmax.outcome = tracing::field::Empty,
            archmax.turn.tokens = tracing::field::Empty,
            archmax.turn.cost_usd = tracing::field::Empty,
            archmax.status = tracing::field::Empty,
            archmax.state = tracing::field::Empty,
            archmax.resumes = tracing::field::Empty,
            error.type = tracing::field::Empty,
        );
        if self.disposition != "turn"
            && let Some(parked) = &self.session.park_trace
        {
            span.record("archmax.resumes", parked.as_str());
            crate::trace::link(&span, parked);
        }
        span
    }

    /// A turn that ends parked records the park (a span under the turn) and stores the
    /// turn's `traceparent` with the session, for the resume to link to.
    fn park_trace(&mut self) {
        let Some(park) = &self.session.park else {
            return;
        };
        if self.spans.turn.is_disabled() {
            return;
        }
        let kind = match park {
            crate::state::Park::Decision { .. } => "decision",
            crate::state::Park::Input { .. } => "input",
        };
        let _park = tracing::info_span!(
            parent: &self.spans.turn,
            "archmax.park",
            otel.name = %format_args!("park {}", park.state()),
            archmax.session.id = self.id.as_str(),
            archmax.state = park.state(),
            archmax.park.kind = kind,
        );
        self.session.park_trace = crate::trace::traceparent(&self.spans.turn);
    }

    /// The turn's Outcome, once it has ended: its transcript moves into it.
    fn outcome(&mut self) -> Outcome {
        let messages = self.transcript.take_messages();
        Outcome::from_session_owning(self.id.as_str(), &self.session, messages)
            .with_disposition(self.disposition)
    }
}

#[cfg(test)]
mod behaviour_tests;

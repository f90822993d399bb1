//! The turn loop: render the prompt, call the model, and for each tool call in
//! order: resolve the name → substitute `${{…}}` → ask the kernel → run → record.
//! Every step is committed to the store before the next one starts.

use std::time::Instant;

use archmax_kernel::{CallContext, Origin};
use archmax_spec::signature::{TriggerSignature, signature_for_trigger, signature_value_issues};
use serde_json::{Map, Value, json};

use crate::cancel::{CANCELLED_REASON, Cancel, Raced, race};
use crate::control::{self, ControlResult};
use crate::events::Event;
use crate::governed::HostRun;
use crate::harness::{Harness, RunError};
use crate::hooks::{HookInput, Phase, Verdict};
use crate::model::types::{ChatMessage, ChatRequest, ChatResponse, ToolDef};
use crate::outcome::Outcome;
use crate::state::{Exit, LockedBy, SessionState, Status, TrailStep, Variable};
use crate::store::{SessionId, Step};
use crate::tools::ToolContext;

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

/// The tools the runtime can run itself, besides host tools.
const EXECUTABLE: [&str; 18] = [
    "archmax_advance",
    "archmax_wait",
    "archmax_reset",
    "archmax_raise",
    "archmax_get_variables",
    "archmax_set_variables",
    "archmax_eval",
    "archmax_run",
    "ls",
    "read_file",
    "write_file",
    "edit_file",
    "glob",
    "grep",
    "copy_file",
    "move_file",
    "remove_file",
    "write_todos",
];

/// Results longer than this are offloaded to `large_tool_results/`.
const OFFLOAD_CHARS: usize = 40_000;

/// A hook as events and the CLI name it: a script by its path, a rubric by its
/// position, a custom kind as `kind:value`.
fn hook_label(hook: &archmax_spec::model::Hook, index: usize) -> String {
    match hook {
        archmax_spec::model::Hook::Script { script, .. } => script.clone(),
        archmax_spec::model::Hook::Rubric { .. } => format!("rubric#{index}"),
        archmax_spec::model::Hook::Custom(m) => m
            .iter()
            .map(|(k, v)| format!("{k}:{v}"))
            .collect::<Vec<_>>()
            .join(","),
    }
}

/// What a phase's hooks decided, after the correction budgets.
enum Gate {
    /// Every hook passed.
    Pass,
    /// A recoverable refusal: the agent stays and retries.
    Block(String),
    /// A terminal failure: routed through `on_error`.
    Fail(String),
}

/// A transcript line as a wire message: lines are wire-form chat messages plus
/// our own markers, which the wire types ignore.
fn wire(line: &Value) -> Option<ChatMessage> {
    serde_json::from_value(line.clone()).ok()
}

/// One turn in progress.
struct Turn<'h> {
    h: &'h Harness,
    id: SessionId,
    session: SessionState,
    /// Messages appended since the last commit.
    pending: Vec<Value>,
    /// All messages of the session, as stored.
    messages: Vec<Value>,
    /// The same messages as the wire types the model is sent (kept in step, so a
    /// request never re-reads the transcript).
    chat: Vec<ChatMessage>,
    signature: Option<TriggerSignature>,
    steps: u64,
    /// When the current state's segment of this turn began (for `budget.timeoutMs`).
    segment_started: Instant,
    /// The current state's `before` hooks already ran this visit.
    before_done: bool,
    /// This model call is a reply-only turn of a parked session: every tool call is refused.
    reply_only: bool,
    /// A park was committed this turn and its one reply-only message is still owed.
    closing: bool,
    /// How the reply-only directive opens.
    reply_case: crate::park::ReplyCase,
    /// `turn`, `decide`, `reply` or `deliver`.
    disposition: &'static str,
    /// Tripped by [`Harness::cancel`].
    cancel: Cancel,
    /// The `agent` sandbox of `archmax_eval`/`archmax_run`: built at the first call,
    /// shared by the turn's calls, dropped with the turn.
    sandbox: Option<std::sync::Arc<archmax_sandbox::Sandbox>>,
    /// The lineage of this turn's model requests (`ChatRequest::lineage`), unique per turn.
    lineage: u64,
    /// The images the conversation's `read_file` calls showed: `(index in chat, mark)`.
    images: Vec<(usize, crate::images::ImageMark)>,
    /// The image the tool call being answered showed (`push_result` records it).
    shown: Option<crate::images::ImageMark>,
    /// The kernel refused the tool call being answered (`push_result` marks its message
    /// `governance_blocked`, as the original's `additional_kwargs.governance_blocked`).
    blocked: bool,
    /// The tool-call ids this turn has answered: a model that repeats one gets it
    /// renamed ([`unique_call_ids`]), so every result pairs with exactly one call.
    call_ids: std::collections::HashSet<String>,
}

/// `calls` with every id this turn already used (or an earlier call of the same message
/// used) renamed `{id}_2`, `{id}_3`, …: the assistant message is stored with the renamed
/// ids, so each tool result answers exactly one call.
fn unique_call_ids(
    mut calls: Vec<crate::model::types::ToolCall>,
    used: &mut std::collections::HashSet<String>,
) -> Vec<crate::model::types::ToolCall> {
    for call in &mut calls {
        if used.contains(&call.id) {
            let base = call.id.clone();
            let mut n = 2u64;
            while used.contains(&format!("{base}_{n}")) {
                n += 1;
            }
            call.id = format!("{base}_{n}");
        }
        used.insert(call.id.clone());
    }
    calls
}

/// The next turn's lineage.
static NEXT_LINEAGE: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

impl Drop for Turn<'_> {
    fn drop(&mut self) {
        self.h.cancels.release(self.id.as_str(), &self.cancel);
    }
}

impl Harness {
    /// The tool definitions offered in `state`: a function of the state alone, so they are
    /// built once per state and shared by every request (which also lets a model that keeps
    /// conversations, `model::delta`, see they did not change without comparing them).
    pub(crate) fn tool_defs(&self, state: &str) -> std::sync::Arc<[ToolDef]> {
        if let Some(defs) = self
            .tool_defs
            .read()
            .ok()
            .and_then(|m| m.get(state).cloned())
        {
            return defs;
        }
        let mut surface = self.policy.surface(state);
        if self.plain {
            surface.retain(|t| crate::plain::is_plain_tool(t, &self.tools));
        }
        let mut out = Vec::new();
        for name in surface {
            if EXECUTABLE.contains(&name.as_str()) {
                let def = if self.images.is_some() {
                    crate::tooldefs::built_in_with_images(&name)
                } else {
                    crate::tooldefs::built_in(&name)
                };
                if let Some(t) = def {
                    out.push(ToolDef {
                        name: t.name,
                        description: t.description,
                        parameters: t.parameters,
                    });
                }
            } else if let Some(t) = self.tools.iter().find(|t| t.name() == name) {
                out.push(ToolDef {
                    name: t.name().to_string(),
                    description: t.description().to_string(),
                    parameters: t.schema(),
                });
            }
        }
        let defs: std::sync::Arc<[ToolDef]> = out.into();
        if let Ok(mut m) = self.tool_defs.write() {
            m.insert(state.to_string(), std::sync::Arc::clone(&defs));
        }
        defs
    }

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

    /// Takes the session's writer lease and loads it into a turn (on a blocking thread
    /// when the store waits on the disk).
    async fn begin(
        &self,
        session_id: &str,
    ) -> Result<(crate::store::WriterLease, Turn<'_>), RunError> {
        let rules = crate::store::IdRules::with_mounts(self.mounts.iter().map(|m| m.name.clone()));
        let id = SessionId::parse_with(session_id, &rules)?;
        let at = id.clone();
        let (lease, snapshot) = self
            .store_io(move |store| {
                let lease = store.acquire(&at)?;
                Ok::<_, crate::store::StoreError>((lease, store.load(&at)?))
            })
            .await??;
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
        let mut chat = vec![ChatMessage::system(String::new())];
        let mut images = Vec::new();
        for m in &messages {
            if let Some(c) = wire(m) {
                chat.push(c);
                if let Some(mark) = crate::images::ImageMark::of(m) {
                    images.push((chat.len() - 1, mark));
                }
            }
        }
        let turn = Turn {
            h: self,
            id,
            session,
            pending: Vec::new(),
            // Slot 0 holds the system prompt, replaced before every call.
            chat,
            images,
            messages,
            signature,
            steps: 0,
            segment_started: Instant::now(),
            before_done: false,
            reply_only: false,
            closing: false,
            reply_case: crate::park::ReplyCase::HandedOver,
            disposition: "turn",
            cancel,
            sandbox: None,
            lineage: NEXT_LINEAGE.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            shown: None,
            blocked: false,
            call_ids: std::collections::HashSet::new(),
        };
        Ok((lease, turn))
    }

    /// Sends a message to a session: a new turn, the next turn of a finished one,
    /// a reply to a session parked at a human state, or a delivery to one parked for
    /// input (the trigger of the input, `manual` when none is given).
    pub async fn send(&self, session_id: &str, input: SendInput) -> Result<Outcome, RunError> {
        self.send_with(session_id, input, Vec::new(), false).await
    }

    /// [`Harness::send`] with `prior` messages appended before the message when a turn
    /// opens (`invoke`'s earlier input messages). `via_invoke`: a disabled workflow settles
    /// the fresh turn `rejected` instead of refusing it (the original's `invoke` path).
    pub(crate) async fn send_with(
        &self,
        session_id: &str,
        input: SendInput,
        prior: Vec<Value>,
        via_invoke: bool,
    ) -> Result<Outcome, RunError> {
        let (lease, mut turn) = self.begin(session_id).await?;
        match turn.session.status {
            Status::AwaitingDecision if turn.session.park.is_some() => {
                self.release(lease).await;
                return self.reply(session_id, &input.message).await;
            }
            Status::AwaitingInput if turn.session.park.is_some() => {
                self.release(lease).await;
                let trigger = input
                    .trigger
                    .clone()
                    .unwrap_or_else(|| "manual".to_string());
                let message = Some(input.message.as_str()).filter(|m| !m.trim().is_empty());
                return self
                    .deliver(session_id, &trigger, input.variables, message)
                    .await;
            }
            _ => {}
        }
        let trigger = input
            .trigger
            .clone()
            .unwrap_or_else(|| "manual".to_string());
        if turn.session.workflow_state.is_empty() && self.start_state(&trigger).is_err() {
            // A session that never ran has nowhere to start (the original's resolution refusal).
            return Err(RunError::UnknownSessionTrigger(trigger));
        }
        if self.spec.disabled == Some(true) && !via_invoke {
            return Err(RunError::WorkflowDisabled(self.workflow.clone()));
        }
        if input.message.trim().is_empty() {
            return Err(RunError::EmptyMessage(turn.id.as_str().to_string()));
        }
        crate::harness::check_variable_names(&input.variables, "seeded")?;
        let start = self.start_state(&trigger)?;
        if self.spec.disabled == Some(true) {
            turn.refuse_disabled(&trigger, &start, prior, &input)
                .await?;
            return Ok(turn.outcome());
        }
        turn.open(&trigger, &start, prior, &input).await?;
        let out = turn.run().await;
        self.release(lease).await;
        out
    }

    /// A plain agent's turn (`crate::plain`): `messages` appended, then the loop. No
    /// position moves, no trigger, seeds or spec snapshot: there is no workflow.
    pub(crate) async fn run_plain(
        &self,
        session_id: &str,
        messages: Vec<Value>,
    ) -> Result<Outcome, RunError> {
        let (lease, mut turn) = self.begin(session_id).await?;
        let s = &mut turn.session;
        s.workflow_state = crate::plain::PLAIN_STATE.to_string();
        s.entry_state = crate::plain::PLAIN_STATE.to_string();
        s.status = Status::Running;
        s.rejected = None;
        s.exit = None;
        s.state_turns = 0;
        s.turn_model_calls = 0;
        for m in messages {
            turn.push(m);
        }
        turn.commit().await?;
        let out = turn.run().await;
        self.release(lease).await;
        out
    }

    /// A person's decision at a human state: routed deterministically, then the
    /// target state's work runs in the same call.
    pub async fn decide(
        &self,
        session_id: &str,
        target: &str,
        comment: Option<&str>,
    ) -> Result<Outcome, RunError> {
        let (lease, mut turn) = self.begin(session_id).await?;
        let id = turn.id.as_str().to_string();
        let Some(crate::state::Park::Decision {
            state, transitions, ..
        }) = turn.session.park.clone()
        else {
            return Err(RunError::SessionNotParked(id));
        };
        let valid: Vec<&crate::state::DecisionOption> =
            transitions.iter().filter(|t| t.to != state).collect();
        let names = valid
            .iter()
            .map(|t| t.to.as_str())
            .collect::<Vec<_>>()
            .join(", ");
        let target = target.trim();
        if target.is_empty() {
            return Err(RunError::MissingDecisionTarget { id, valid: names });
        }
        let Some(edge) = valid.iter().find(|t| t.to == target) else {
            return Err(RunError::InvalidDecisionTarget {
                id,
                target: target.to_string(),
                valid: names,
            });
        };
        let kind = edge.kind.clone();
        turn.disposition = "decide";
        turn.resume_common();
        turn.emit(Event::Decided {
            state: state.clone(),
            to: target.to_string(),
            session_id: id,
        });
        turn.note(
            "decision",
            &crate::park::decision_note(&state, target, kind.as_deref(), comment),
        );
        turn.emit(Event::StateLeave {
            state: state.clone(),
            next: target.to_string(),
        });
        turn.session.park = None;
        turn.session.workflow_state = target.to_string();
        turn.session.status = Status::Running;
        turn.trail(
            target,
            "human",
            comment.map(str::trim).filter(|c| !c.is_empty()),
        );
        turn.emit(Event::StateEnter {
            state: target.to_string(),
        });
        if turn
            .h
            .spec
            .states
            .get(target)
            .is_some_and(archmax_spec::model::State::is_human)
        {
            turn.reply_case = crate::park::ReplyCase::Routed;
            turn.park_decision(target, Vec::new());
        }
        turn.commit().await?;
        let out = turn.run().await;
        self.release(lease).await;
        out
    }

    /// A message to a session awaiting a decision: one reply-only turn, and the
    /// session stays parked on the same record.
    pub async fn reply(&self, session_id: &str, message: &str) -> Result<Outcome, RunError> {
        let (lease, mut turn) = self.begin(session_id).await?;
        let id = turn.id.as_str().to_string();
        let Some(crate::state::Park::Decision { state, .. }) = turn.session.park.clone() else {
            return Err(RunError::SessionNotParked(id));
        };
        if message.trim().is_empty() {
            return Err(RunError::EmptyMessage(id));
        }
        turn.disposition = "reply";
        turn.resume_common();
        turn.emit(Event::ParkMessage {
            state,
            session_id: id,
            direction: "inbound".into(),
            text: message.to_string(),
        });
        turn.push(json!({ "role": "user", "content": message }));
        turn.reply_case = crate::park::ReplyCase::PersonWrote;
        turn.closing = true;
        turn.commit().await?;
        let out = turn.run().await;
        self.release(lease).await;
        out
    }

    /// An outside event for a session parked for input: it resumes in place, with
    /// the trigger recorded and the variables seeded locked.
    pub async fn deliver(
        &self,
        session_id: &str,
        trigger: &str,
        variables: Map<String, Value>,
        message: Option<&str>,
    ) -> Result<Outcome, RunError> {
        let (lease, mut turn) = self.begin(session_id).await?;
        let id = turn.id.as_str().to_string();
        let Some(crate::state::Park::Input { state, .. }) = turn.session.park.clone() else {
            return Err(RunError::SessionNotAwaitingInput(id));
        };
        let trigger = trigger.trim();
        if trigger.is_empty() {
            return Err(RunError::MissingDeliveryTrigger(id));
        }
        crate::harness::check_variable_names(&variables, &format!("delivered to session '{id}'"))?;
        turn.disposition = "deliver";
        turn.resume_common();
        turn.emit(Event::Delivered {
            state: state.clone(),
            trigger: trigger.to_string(),
            to: state.clone(),
            session_id: id.clone(),
        });
        let mut delivered_title = None;
        for (k, v) in &variables {
            if k == "title" {
                // The title stays the agent's: a delivered one is written unlocked, trimmed; a
                // malformed one is skipped with a warning (dropping the whole delivery over a
                // bad label would be the worse failure).
                if let Some(problem) = control::title_problem(v) {
                    turn.emit(Event::Warning {
                        scope: "workflow".into(),
                        message: format!("Delivered title ignored: {problem}"),
                    });
                    continue;
                }
                let t = v.as_str().unwrap_or_default().trim().to_string();
                delivered_title = Some(t.clone());
                turn.session.variables.insert(
                    k.clone(),
                    crate::state::Variable {
                        value: Value::String(t),
                        locked_by: None,
                    },
                );
            } else {
                turn.session.variables.insert(
                    k.clone(),
                    crate::state::Variable {
                        value: v.clone(),
                        locked_by: Some(LockedBy::Host),
                    },
                );
            }
        }
        turn.session.variables.insert(
            "trigger".into(),
            crate::state::Variable {
                value: Value::String(trigger.to_string()),
                locked_by: Some(LockedBy::Host),
            },
        );
        let names: Vec<String> = variables
            .keys()
            .filter(|k| *k != "title" || delivered_title.is_some())
            .cloned()
            .collect();
        if !names.is_empty() {
            turn.emit(Event::VariablesSet {
                state: Some(state.clone()),
                names,
                locked: true,
                call_id: None,
            });
        }
        if let Some(title) = delivered_title {
            turn.emit(Event::TitleSet {
                title,
                state: Some(state.clone()),
                call_id: None,
            });
        }
        turn.note(
            "event",
            &crate::park::event_note(trigger, &state, &variables, message.is_some()),
        );
        if let Some(m) = message {
            // A person wrote: the state's wait loop starts over, so `maxParks` bounds how long
            // the run waits unanswered, not how long a conversation lasts.
            turn.session.park_counts.remove(&state);
            turn.emit(Event::ParkMessage {
                state: state.clone(),
                session_id: id,
                direction: "inbound".into(),
                text: m.to_string(),
            });
            turn.push(json!({ "role": "user", "content": m }));
        }
        turn.session.trigger = trigger.to_string();
        turn.signature = signature_for_trigger(&turn.h.spec_json, trigger);
        turn.session.park = None;
        turn.session.status = Status::Running;
        turn.trail(&state, "trigger", Some(trigger));
        turn.emit(Event::StateEnter { state });
        // A delivery resumes the visit: the parked state's `before` hooks do not run again.
        turn.before_done = true;
        turn.commit().await?;
        let out = turn.run().await;
        self.release(lease).await;
        out
    }
}

impl Turn<'_> {
    /// What every resume resets: the per-turn budgets (each arrival counts from zero).
    fn resume_common(&mut self) {
        self.session.turn_model_calls = 0;
        self.session.state_turns = 0;
        self.session.budget_warned = false;
        self.session.budget_routed = false;
        self.session.rejected = None;
    }

    /// Parks at human state `state`: a decision record, status `awaiting_decision`,
    /// and the one reply-only message still owed.
    fn park_decision(&mut self, state: &str, attached: Vec<String>) {
        let st = self.h.spec.states.get(state);
        let mut evidence: Vec<String> = st.and_then(|s| s.evidence.clone()).unwrap_or_default();
        for p in attached {
            if !evidence.contains(&p) {
                evidence.push(p);
            }
        }
        self.session.decision_count += 1;
        let transitions = st
            .map(|s| {
                s.edges()
                    .iter()
                    .map(|t| crate::state::DecisionOption {
                        to: t.to.clone(),
                        description: t.description.clone(),
                        kind: t.kind.map(|k| k.as_str().to_string()),
                    })
                    .collect()
            })
            .unwrap_or_default();
        self.session.park = Some(crate::state::Park::Decision {
            state: state.to_string(),
            title: st.and_then(|s| s.title.clone()),
            seq: self.session.decision_count,
            transitions,
            evidence,
            created_at: crate::clock::iso(crate::clock::now_ms()),
        });
        self.session.status = Status::AwaitingDecision;
        self.closing = true;
        self.emit(Event::Parked {
            state: state.to_string(),
            session_id: self.id.as_str().to_string(),
            awaiting: "decision".into(),
            reason: None,
            resume_at: None,
            call_id: None,
        });
    }

    /// True when the agent already said something since the message that opened the turn.
    fn spoke_this_turn(&self) -> bool {
        for m in self.messages.iter().rev() {
            let role = m.get("role").and_then(Value::as_str);
            if role == Some("user") || m.get("archmax").is_some() {
                return false;
            }
            if role == Some("assistant")
                && m.get("content")
                    .and_then(Value::as_str)
                    .is_some_and(|t| !t.trim().is_empty())
            {
                return true;
            }
        }
        false
    }

    fn emit(&self, event: Event) {
        self.h.emitter.emit(Some(self.id.as_str()), event);
    }

    fn push(&mut self, msg: Value) {
        if let Some(m) = wire(&msg) {
            self.chat.push(m);
            if let Some(mark) = crate::images::ImageMark::of(&msg) {
                self.images.push((self.chat.len() - 1, mark));
            }
        }
        self.pending.push(msg.clone());
        self.messages.push(msg);
    }

    /// A tool call's answer, carrying the image its `read_file` showed, if any.
    fn push_result(&mut self, call_id: &str, content: String, is_error: bool) {
        let mut msg = json!({ "role": "tool", "tool_call_id": call_id, "content": content, "is_error": is_error });
        if let Some(mark) = self.shown.take() {
            msg["image"] = mark.to_value();
        }
        if std::mem::take(&mut self.blocked) {
            msg["governance_blocked"] = Value::Bool(true);
        }
        self.push(msg);
    }

    /// Writes the new messages and the state: the step is durable once this returns.
    ///
    /// A store that waits on the disk commits on a blocking thread (`Harness::store_io`):
    /// the turn's own thread is free meanwhile, and concurrent sessions' commits share
    /// their syncs (the filesystem store's group commit).
    async fn commit(&mut self) -> Result<(), RunError> {
        self.session.transcript_len = self.messages.len() as u64;
        let state =
            serde_json::to_value(&self.session).map_err(|e| RunError::Store(e.to_string()))?;
        let id = self.id.clone();
        let pending = std::mem::take(&mut self.pending);
        let committed = self
            .h
            .store_io(move |store| {
                let step = Step {
                    new_messages: &pending,
                    state: &state,
                };
                (store.commit(&id, step), pending)
            })
            .await?;
        match committed {
            (Ok(()), _) => Ok(()),
            (Err(e), pending) => {
                // Nothing of the step is durable: its messages stay pending.
                self.pending = pending;
                Err(e.into())
            }
        }
    }

    fn trail(&mut self, to: &str, kind: &str, reason: Option<&str>) {
        self.session.trail.push(TrailStep {
            to: to.to_string(),
            kind: kind.to_string(),
            reason: reason.map(str::to_string),
            ts: crate::clock::now_ms(),
        });
    }

    /// A fresh turn through `invoke` on a disabled workflow: settled `rejected` at the turn
    /// boundary with a warning, before any hook or model call (the input is kept).
    async fn refuse_disabled(
        &mut self,
        trigger: &str,
        start: &str,
        prior: Vec<Value>,
        input: &SendInput,
    ) -> Result<(), RunError> {
        let reason = format!(
            "Refusing to start: workflow '{}' is disabled.",
            self.h.workflow
        );
        let s = &mut self.session;
        s.workflow = self.h.workflow.clone();
        if s.workflow_state.is_empty() || !self.h.spec.states.contains_key(&s.workflow_state) {
            s.workflow_state = start.to_string();
        }
        if s.entry_state.is_empty() {
            s.entry_state = s.workflow_state.clone();
        }
        s.trigger = trigger.to_string();
        s.status = Status::Rejected;
        s.rejected = Some(reason.clone());
        s.exit = None;
        self.emit(Event::Warning {
            scope: "workflow".into(),
            message: reason,
        });
        for m in prior {
            self.push(m);
        }
        self.push(json!({ "role": "user", "content": input.message.trim() }));
        self.commit().await
    }

    /// The turn boundary: position, trigger, seeds, signature check, first commit.
    async fn open(
        &mut self,
        trigger: &str,
        start: &str,
        prior: Vec<Value>,
        input: &SendInput,
    ) -> Result<(), RunError> {
        let h = self.h;
        let s = &mut self.session;
        if s.status == Status::Running && !s.workflow_state.is_empty() {
            // The process running the previous turn stopped mid-turn: that turn failed.
            s.status = Status::Failed;
            s.exit = Some(Exit {
                code: "turn-error".into(),
                reason: "the process running the previous turn stopped before the turn finished"
                    .into(),
            });
        }
        s.workflow = h.workflow.clone();
        let reopening =
            !s.workflow_state.is_empty() && !h.spec.states.contains_key(&s.workflow_state);
        if s.workflow_state.is_empty() || reopening {
            s.workflow_state = start.to_string();
        }
        if s.entry_state.is_empty() {
            s.entry_state = s.workflow_state.clone();
        }
        if reopening {
            let entry = s.entry_state.clone();
            self.emit(Event::WorkflowReset { entry });
        }
        self.session.trigger = trigger.to_string();
        if self.session.spec_hash != h.spec_hash {
            let stripped = archmax_spec::hash::strip_metadata(&h.spec_json);
            let hash = h.spec_hash.clone();
            h.store_io(move |store| store.write_spec_snapshot(&hash, &stripped))
                .await??;
            self.session.spec_hash = h.spec_hash.clone();
        }
        let s = &mut self.session;
        let mut seeded_title = None;
        for (k, v) in &input.variables {
            if k == "title" {
                // An opening label: it loses to a title the session holds, and stays
                // unlocked so the agent can correct it.
                if !s.variables.contains_key("title") {
                    seeded_title = v.as_str().map(str::to_string);
                    s.variables.insert(
                        k.clone(),
                        Variable {
                            value: v.clone(),
                            locked_by: None,
                        },
                    );
                }
                continue;
            }
            s.variables.insert(
                k.clone(),
                Variable {
                    value: v.clone(),
                    locked_by: Some(LockedBy::Host),
                },
            );
        }
        s.variables.insert(
            "trigger".into(),
            Variable {
                value: Value::String(trigger.to_string()),
                locked_by: Some(LockedBy::Host),
            },
        );
        s.status = Status::Running;
        s.rejected = None;
        s.exit = None;
        // A turn boundary starts every park budget over (the original's `parkCounts: {}`).
        s.park_counts.clear();
        s.state_turns = 0;
        s.turn_model_calls = 0;
        s.budget_warned = false;
        s.budget_routed = false;
        let here = s.workflow_state.clone();
        self.signature = signature_for_trigger(&h.spec_json, trigger);
        self.emit(Event::Advance {
            from: "__start__".into(),
            to: here.clone(),
            reason: None,
            call_id: None,
        });
        if let Some(title) = seeded_title {
            self.emit(Event::TitleSet {
                title,
                state: None,
                call_id: None,
            });
        }
        self.trail(&here, "trigger", Some(trigger));
        if let Some(reason) = self.requires_refusal(trigger) {
            self.emit(Event::Warning {
                scope: "workflow".into(),
                message: reason.clone(),
            });
            self.session.status = Status::Rejected;
            self.session.rejected = Some(reason);
            return self.commit().await;
        }
        self.emit(Event::StateEnter {
            state: here.clone(),
        });
        if self
            .h
            .spec
            .states
            .get(&here)
            .is_some_and(archmax_spec::model::State::is_human)
        {
            // A turn opened at a human state presents the decision again on a fresh record
            // (`seq` + 1): the run owes the person one message, then waits where it stood.
            self.reply_case = crate::park::ReplyCase::PersonWrote;
            self.park_decision(&here, Vec::new());
        }
        for m in prior {
            self.push(m);
        }
        self.push(json!({ "role": "user", "content": input.message.trim() }));
        self.commit().await
    }

    /// The trigger's `requires` against the seeds: the refusal text, if any.
    fn requires_refusal(&self, trigger: &str) -> Option<String> {
        let sig = self.signature.as_ref()?;
        let values: Map<String, Value> = self
            .session
            .variables
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect();
        let missing: Vec<String> = sig
            .requires
            .iter()
            .filter(|e| !values.contains_key(&e.name))
            .map(|e| format!("'{}'", e.name))
            .collect();
        let typed: Vec<_> = sig
            .requires
            .iter()
            .filter(|e| e.ty.is_some() && values.contains_key(&e.name))
            .cloned()
            .collect();
        let invalid: Vec<String> = signature_value_issues(&typed, &values)
            .into_iter()
            .map(|i| i.message)
            .collect();
        let typed_text = |lead: &str| {
            format!(
                "{lead} declares typed inputs this firing does not satisfy: {}.",
                invalid.join("; ")
            )
        };
        match (missing.is_empty(), invalid.is_empty()) {
            (true, true) => None,
            (false, true) => Some(format!(
                "Refusing to start: trigger '{trigger}' requires {}, which this firing does not supply.",
                missing.join(", ")
            )),
            (true, false) => Some(typed_text(&format!(
                "Refusing to start: trigger '{trigger}'"
            ))),
            (false, false) => Some(format!(
                "Refusing to start: trigger '{trigger}' requires {}, which this firing does not supply. It also {}",
                missing.join(", "),
                typed_text("").trim_start()
            )),
        }
    }

    fn model_for(&self) -> String {
        let st = self.h.spec.states.get(&self.session.workflow_state);
        st.and_then(|s| s.model.clone())
            .or_else(|| self.h.spec.settings.as_ref().and_then(|s| s.model.clone()))
            .unwrap_or_else(|| self.h.default_model.clone())
    }

    fn max_model_calls(&self) -> u64 {
        self.h
            .spec
            .budget
            .as_ref()
            .and_then(|b| b.max_model_calls)
            .unwrap_or(DEFAULT_MAX_MODEL_CALLS)
    }

    /// The tool definitions the model is shown in the current state.
    fn tool_defs(&self) -> std::sync::Arc<[ToolDef]> {
        self.h.tool_defs(&self.session.workflow_state)
    }

    /// The system message: one text, or, where the endpoint takes Anthropic-style
    /// cache markers, `[static (cached), volatile]` blocks.
    fn system_message(&self) -> ChatMessage {
        let (static_part, volatile) = self.system_prompt();
        let (enabled, ttl) = self.h.prompt_cache();
        if enabled && crate::harness::takes_cache_markers(&self.model_for()) {
            let mut parts = vec![crate::model::ContentPart::cached_text(
                static_part,
                Some(ttl),
            )];
            if !volatile.is_empty() {
                parts.push(crate::model::ContentPart::text(volatile));
            }
            return ChatMessage::System {
                content: crate::model::MessageContent::Parts(parts),
            };
        }
        if volatile.is_empty() {
            return ChatMessage::system(static_part);
        }
        ChatMessage::system(format!("{static_part}\n\n{volatile}"))
    }

    /// The state a parked session waits in.
    fn parked_state(&self) -> Option<String> {
        match self.session.park.as_ref()? {
            crate::state::Park::Decision { state, .. }
            | crate::state::Park::Input { state, .. } => Some(state.clone()),
        }
    }

    /// The static prefix and the volatile block.
    fn system_prompt(&self) -> (String, String) {
        if self.h.plain {
            // A plain agent's prompt holds still: no state, clock or park to render.
            return (self.h.static_prompt.clone(), String::new());
        }
        let clock = crate::clock::clock_line(crate::clock::now_ms());
        if self.reply_only {
            let (state, title, reason) = match self.session.park.as_ref() {
                Some(crate::state::Park::Decision { state, title, .. }) => {
                    (state.clone(), title.clone(), String::new())
                }
                Some(crate::state::Park::Input {
                    state,
                    title,
                    reason,
                    ..
                }) => (state.clone(), title.clone(), reason.clone()),
                None => (self.session.workflow_state.clone(), None, String::new()),
            };
            let directive =
                crate::park::directive(self.reply_case, &state, title.as_deref(), &reason);
            return (
                self.h.static_prompt.clone(),
                format!("{clock}\n\n## This run is parked\n\n{directive}"),
            );
        }
        let volatile = crate::prompt::volatile_block(
            &self.h.spec,
            &self.h.policy,
            &crate::prompt::VolatileInput {
                clock: &clock,
                session: &self.session,
                skills: &self.h.skills,
                signature: self.signature.as_ref(),
            },
        );
        (self.h.static_prompt.clone(), volatile)
    }

    /// The loop, until the turn completes, is rejected or fails.
    async fn run(mut self) -> Result<Outcome, RunError> {
        let limit = if self.h.plain {
            crate::plain::PLAIN_MAX_MODEL_CALLS
        } else {
            step_limit(self.max_model_calls())
        };
        loop {
            if self.session.status.is_finished() {
                break;
            }
            if self.session.park.is_some() {
                if self.closing && !self.reply_only {
                    // The park's one reply-only message: tools stay listed, every call is refused.
                    self.closing = false;
                    self.reply_only = true;
                } else if !self.reply_only {
                    break;
                }
            } else if self.session.status != Status::Running {
                break;
            }
            if self.cancel.is_cancelled() {
                self.fail_cancelled().await?;
                break;
            }
            if !self.reply_only
                && let Some(reason) = self.entry_gate().await
            {
                let here = self.session.workflow_state.clone();
                self.push(json!({ "role": "assistant", "content": format!("Request rejected before the '{here}' state could run: {reason}") }));
                self.route_failure(&reason).await?;
                continue;
            }
            if !self.reply_only
                && let Some(reason) = self.budget_exhausted()
            {
                self.route_failure(&reason).await?;
                continue;
            }
            self.steps += 1;
            if self.steps > limit {
                self.fail(
                    "recursion-limit",
                    &format!("the turn exceeded its step limit ({limit} steps)"),
                )
                .await?;
                break;
            }
            let request = self.request();
            let raced = race(
                &self.cancel,
                self.segment_left(),
                self.h.model.complete(&request),
            )
            .await;
            // The conversation moves back out of the request (no per-call copy), unless the
            // request was a copy with images added (no lineage).
            if request.lineage.is_some() {
                self.chat = request.messages;
            }
            let response = match raced {
                Raced::Done(Ok(r)) => r,
                Raced::Done(Err(e)) => {
                    self.fail("turn-error", &e.to_string()).await?;
                    break;
                }
                Raced::TimedOut => {
                    let reason = self.timeout_reason().unwrap_or_default();
                    self.route_failure(&reason).await?;
                    continue;
                }
                Raced::Cancelled => {
                    self.fail_cancelled().await?;
                    break;
                }
            };
            self.session.state_turns += 1;
            self.session.turn_model_calls += 1;
            self.record_usage(&response);
            let calls = unique_call_ids(response.message.tool_calls.clone(), &mut self.call_ids);
            let text = response.message.content.clone().unwrap_or_default();
            let msg_id = format!("msg_{}_{}", self.messages.len(), crate::clock::now_ms());
            let mut assistant = json!({ "role": "assistant", "content": text });
            if !calls.is_empty() {
                assistant["tool_calls"] = Value::Array(
                    calls.iter().map(|c| json!({ "id": c.id, "type": "function", "function": { "name": c.name, "arguments": c.arguments } })).collect(),
                );
            }
            self.push(assistant);
            if !text.trim().is_empty() {
                self.emit(Event::AgentText {
                    state: self.session.workflow_state.clone(),
                    text: text.clone(),
                    message_id: Some(msg_id),
                });
            }
            if self.reply_only {
                // Any call of a reply-only turn is refused; the session stays parked either way.
                let mut moved = None;
                for (i, call) in calls.iter().enumerate() {
                    let (content, is_error) =
                        self.tool_call(call, calls.len() - 1, &mut moved, i).await;
                    self.push_result(&call.id, content, is_error);
                }
                // Only an answer to a person is a message to them from the park: the text
                // handing the run over (after a tool result or a runtime note) is not.
                let answers_person =
                    self.messages
                        .iter()
                        .rev()
                        .nth(1 + calls.len())
                        .is_some_and(|m| {
                            m.get("role").and_then(Value::as_str) == Some("user")
                                && m.get("archmax").is_none()
                        });
                if calls.is_empty()
                    && answers_person
                    && !text.trim().is_empty()
                    && let Some(state) = self.parked_state()
                {
                    self.emit(Event::ParkMessage {
                        state,
                        session_id: self.id.as_str().to_string(),
                        direction: "outbound".into(),
                        text: text.clone(),
                    });
                }
                self.reply_only = false;
                self.commit().await?;
                break;
            }
            if calls.is_empty() {
                let here = self.session.workflow_state.clone();
                let terminal = self
                    .h
                    .spec
                    .states
                    .get(&here)
                    .is_some_and(|s| s.is_terminal());
                if terminal && self.session.rejected.is_none() {
                    match self.run_hooks(&here, Phase::After, None, None).await {
                        Gate::Pass => {}
                        Gate::Block(r) => {
                            // The completion check did not pass: the agent revises in place.
                            self.note("after", &format!("[after] The '{here}' completion check did not pass: {r}. Revise your work and produce a corrected final response."));
                            self.commit().await?;
                            continue;
                        }
                        Gate::Fail(r) => {
                            self.route_failure(&r).await?;
                            continue;
                        }
                    }
                }
                self.complete().await?;
                // A failure routed at completion jumps back to the model: the handler's
                // segment runs, or, at a human handler, the park's one message is owed.
                if self.session.status == Status::Running
                    || (self.session.park.is_some() && self.closing)
                {
                    continue;
                }
                break;
            }
            let mut moved: Option<String> = None;
            for (i, call) in calls.iter().enumerate() {
                let others = calls.len() - 1;
                let (content, is_error) = self.tool_call(call, others, &mut moved, i).await;
                self.push_result(&call.id, content, is_error);
            }
            // A terminal failure of this step (a hook that could not run, an exhausted park
            // budget, an unevaluable guard) stays committed as `rejected`: the model reads
            // the refusal and goes on in this state, and the failure routes once it has
            // finished its segment (text without a tool call, `complete`), as the original's
            // `afterModel` does. The state does not move under the model's feet.
            if self.session.park.is_some() && self.session.rejected.is_some() {
                // A park refused by its budget: the failure routes instead.
                let reason = self.session.rejected.clone().unwrap_or_default();
                self.session.park = None;
                self.session.status = Status::Running;
                self.route_failure(&reason).await?;
                continue;
            }
            self.commit().await?;
        }
        self.commit().await?;
        Ok(self.outcome())
    }

    /// The next request. The conversation moves into it (and back after the call),
    /// so building a request never copies the transcript.
    /// The next model request. Its messages move out of `chat` (and back after the call:
    /// such a request carries the turn's lineage), except when images ride along: those are
    /// added to a copy (`crate::images`), so they never enter the conversation.
    fn request(&mut self) -> ChatRequest {
        let system = self.system_message();
        let tools = self.tool_defs();
        let with_images = self.h.images.filter(|_| !self.images.is_empty());
        let mut messages = match &with_images {
            Some(opts) => crate::images::with_images(
                self.workspace().as_ref(),
                &self.chat,
                &self.images,
                opts,
            ),
            None => std::mem::take(&mut self.chat),
        };
        match messages.first_mut() {
            Some(slot) => *slot = system,
            None => messages.push(system),
        }
        let mut req = ChatRequest::new(self.model_for(), messages).with_tools(tools);
        // `chat` only grows after message 0 while this turn lives (see `push`); images
        // inserted mid-conversation (and dropped past `keep`) break that promise.
        req.lineage = with_images.is_none().then_some(self.lineage);
        req.session = Some(self.id.as_str().to_string());
        req
    }

    fn record_usage(&mut self, r: &ChatResponse) {
        let Some(u) = &r.usage else { return };
        // The model id of the response, else the one requested, picks the price and is
        // reported; with neither (the placeholder a host that names no model gets), none is.
        let model = r
            .model
            .clone()
            .or_else(|| Some(self.model_for()).filter(|m| m != crate::UNNAMED_MODEL));
        let cost_usd = self
            .h
            .pricing
            .as_ref()
            .and_then(|table| table.cost_usd(model.as_deref().unwrap_or_default(), u));
        let total = &mut self.session.usage;
        total.input_tokens = total.input_tokens.saturating_add(u.input_tokens);
        total.output_tokens = total.output_tokens.saturating_add(u.output_tokens);
        total.cache_read_tokens = total.cache_read_tokens.saturating_add(u.cache_read_tokens);
        total.cache_creation_tokens = total
            .cache_creation_tokens
            .saturating_add(u.cache_creation_tokens);
        if let Some(cost) = cost_usd {
            let sum = total.cost_usd.unwrap_or(0.0) + cost;
            total.cost_usd = Some((sum * 1e6).round() / 1e6);
        }
        self.emit(Event::ModelUsage {
            state: self.session.workflow_state.clone(),
            input_tokens: u.input_tokens,
            output_tokens: u.output_tokens,
            cache_read_tokens: u.cache_read_tokens,
            cache_creation_tokens: u.cache_creation_tokens,
            model,
            cost_usd,
        });
    }

    /// The state's `budget.timeoutMs`, if it declares one.
    fn segment_timeout(&self) -> Option<u64> {
        let st = self.h.spec.states.get(&self.session.workflow_state)?;
        st.budget.as_ref()?.timeout_ms
    }

    /// Time left in the state's segment, when it is bounded.
    fn segment_left(&self) -> Option<std::time::Duration> {
        let ms = self.segment_timeout()?;
        Some(std::time::Duration::from_millis(ms).saturating_sub(self.segment_started.elapsed()))
    }

    fn timeout_reason(&self) -> Option<String> {
        let ms = self.segment_timeout()?;
        Some(format!(
            "state '{}' exceeded its time budget (timeoutMs: {ms})",
            self.session.workflow_state
        ))
    }

    /// `timeoutMs` of this segment, `maxTurns` of this visit, then the whole-turn
    /// `maxModelCalls`.
    fn budget_exhausted(&mut self) -> Option<String> {
        if self.h.plain {
            // No workflow, no budgets: the step limit alone bounds a plain turn.
            return None;
        }
        if self.segment_left().is_some_and(|left| left.is_zero()) {
            return self.timeout_reason();
        }
        let here = self.session.workflow_state.clone();
        let st = self.h.spec.states.get(&here);
        if let Some(max) = st.and_then(|s| s.budget.as_ref()).and_then(|b| b.max_turns)
            && self.session.state_turns + 1 > max
        {
            return Some(format!(
                "state '{here}' exhausted its turn budget (maxTurns: {max})"
            ));
        }
        let max = self.max_model_calls();
        let reason =
            format!("the turn exhausted its model-call budget (budget.maxModelCalls: {max})");
        if self.session.turn_model_calls + 1 > max {
            if !self.session.budget_routed {
                self.session.budget_routed = true;
                return Some(reason);
            }
            // After routing once, the error handler gets a grace of a tenth of the
            // budget (at least one call) to finish; then the turn ends rejected.
            if self.session.turn_model_calls + 1 > max + (max / 10).max(1) {
                return Some(reason);
            }
            return None;
        }
        let left = max - self.session.turn_model_calls;
        if !self.session.budget_warned && left * 5 <= max {
            self.session.budget_warned = true;
            let note = format!(
                "[budget] {left} of this turn's {max} model calls are left (budget.maxModelCalls). Finish the current work, or advance, before they run out."
            );
            self.note("budget", &note);
        }
        None
    }

    /// A runtime note: a synthetic `archmax_note` call and its result.
    fn note(&mut self, kind: &str, text: &str) {
        let id = format!("note_{}_{}", self.messages.len(), crate::clock::now_ms());
        self.push(json!({ "role": "assistant", "content": "", "tool_calls": [{ "id": id, "type": "function", "function": { "name": "archmax_note", "arguments": json!({ "note": kind }).to_string() } }], "archmax": { "note": kind } }));
        self.push(json!({ "role": "tool", "tool_call_id": id, "content": text, "archmax": { "note": kind } }));
    }

    /// A terminal failure: through the state's `on_error` when it has one, else the
    /// turn ends rejected.
    async fn route_failure(&mut self, reason: &str) -> Result<(), RunError> {
        let from = self.session.workflow_state.clone();
        let target = self
            .h
            .spec
            .states
            .get(&from)
            .and_then(|s| s.on_error.clone());
        self.session.rejected = None;
        match target {
            None => {
                self.session.status = Status::Rejected;
                self.session.rejected = Some(reason.to_string());
            }
            Some(to) => {
                self.emit(Event::StateErrorRouted {
                    state: from.clone(),
                    to: to.clone(),
                    reason: reason.to_string(),
                });
                self.emit(Event::StateLeave {
                    state: from.clone(),
                    next: to.clone(),
                });
                self.note("error", &format!("[error] The '{from}' state failed: {reason}. Routing to the '{to}' error handler."));
                self.session.workflow_state = to.clone();
                self.session.state_turns = 0;
                self.segment_started = Instant::now();
                self.before_done = false;
                self.trail(&to, "on_error", Some(reason));
                self.emit(Event::StateEnter { state: to.clone() });
                if self
                    .h
                    .spec
                    .states
                    .get(&to)
                    .is_some_and(archmax_spec::model::State::is_human)
                {
                    // An error handler that is a person's decision: the run parks there,
                    // owing them one message about the failure (the runtime note opens it).
                    self.reply_case = crate::park::ReplyCase::Routed;
                    self.park_decision(&to, Vec::new());
                }
            }
        }
        self.commit().await
    }

    /// A turn that throws ends the session failed with a session exit code.
    /// Ends the session `failed` with `turn-cancelled`.
    async fn fail_cancelled(&mut self) -> Result<(), RunError> {
        self.fail("turn-cancelled", CANCELLED_REASON).await
    }

    async fn fail(&mut self, code: &str, reason: &str) -> Result<(), RunError> {
        self.session.status = Status::Failed;
        self.session.exit = Some(Exit {
            code: code.to_string(),
            reason: reason.to_string(),
        });
        self.commit().await
    }

    /// Text without a tool call: the turn completes (returns checked first).
    /// Runs a state's hooks of one phase in order, stopping at the first non-ok, and
    /// reduces the verdict with each hook's correction budget (`max_iterations`,
    /// counted per hook position in the session state).
    async fn run_hooks(
        &mut self,
        state: &str,
        phase: Phase,
        to: Option<&str>,
        reason: Option<&str>,
    ) -> Gate {
        let Some(st) = self.h.spec.states.get(state) else {
            return Gate::Pass;
        };
        let spec = match phase {
            Phase::Before => &st.before,
            Phase::After => &st.after,
        };
        let Some(spec) = spec.clone() else {
            return Gate::Pass;
        };
        let variables = self.session.kernel_variables();
        // Governed against the session's state at the last model call: the source
        // state while a move is in its veto window, even for the target's hooks.
        let tools = self.script_tools(Origin::Lifecycle, variables.clone(), self.workspace());
        for (index, hook) in spec.hooks().iter().enumerate() {
            let input = HookInput {
                session_id: self.id.as_str().to_string(),
                state: state.to_string(),
                phase,
                index,
                trigger: self.session.trigger.clone(),
                variables: variables.clone(),
                to: to.map(str::to_string),
                reason: reason.map(str::to_string),
                user_request: self.first_user_message(),
                history: self.history(),
                tools: Some(tools.clone()),
            };
            let label = if matches!(hook, archmax_spec::model::Hook::Rubric { .. }) {
                "rubric"
            } else {
                "hook"
            };
            let key = format!("{state}::{}::{index}", phase.as_str());
            let shown = hook_label(hook, index);
            self.emit(Event::HookStart {
                state: state.to_string(),
                phase: phase.as_str().into(),
                label: shown.clone(),
            });
            let verdict = self.h.hooks.run(hook, input).await.bounded();
            let (word, why) = match &verdict {
                Verdict::Ok(r) => ("ok", r.clone()),
                Verdict::Correct(r) => ("correct", r.clone()),
                Verdict::Veto(r) => ("veto", r.clone()),
                Verdict::Error(e) => {
                    self.emit(Event::HookRejected {
                        state: state.to_string(),
                        phase: phase.as_str().into(),
                        reason: e.clone(),
                    });
                    ("", String::new())
                }
            };
            if !word.is_empty() {
                self.emit(Event::HookVerdict {
                    state: state.to_string(),
                    phase: phase.as_str().into(),
                    label: shown,
                    verdict: word.into(),
                    reason: why,
                });
            }
            let gate = match verdict {
                Verdict::Ok(_) => {
                    self.session.iterations.remove(&key);
                    continue;
                }
                Verdict::Error(e) => return Gate::Fail(e),
                Verdict::Veto(r) if phase == Phase::Before => Gate::Block(r),
                Verdict::Correct(r) if phase == Phase::Before => Gate::Block(format!(
                    "before hooks cannot request corrections ('correct' gates nothing at entry, treated as veto): {r}"
                )),
                Verdict::Veto(r) => Gate::Block(format!("{label} veto: {r}")),
                Verdict::Correct(r) => {
                    let max = hook.max_iterations().unwrap_or(0);
                    let used = self.session.iterations.get(&key).copied().unwrap_or(0);
                    if used >= max {
                        Gate::Fail(format!(
                            "{label} veto: reply still incomplete after {max} attempt(s) — {r}"
                        ))
                    } else {
                        self.session.iterations.insert(key, used + 1);
                        let call = match to {
                            Some(t) => format!("archmax_advance({{ to: \"{t}\" }})"),
                            None => "archmax_advance".to_string(),
                        };
                        Gate::Block(format!(
                            "{label}: reply incomplete — {r}. Update your answer and call {call} again. ({} attempt(s) remaining)",
                            max - used - 1
                        ))
                    }
                }
            };
            // A verdict that refuses is announced as the original does: `hook-rejected`
            // with the reason the agent reads.
            if let Gate::Block(r) | Gate::Fail(r) = &gate {
                self.emit(Event::HookRejected {
                    state: state.to_string(),
                    phase: phase.as_str().into(),
                    reason: r.clone(),
                });
            }
            return gate;
        }
        Gate::Pass
    }

    /// The first user message of the session.
    fn first_user_message(&self) -> String {
        self.messages
            .iter()
            .find(|m| m.get("role").and_then(Value::as_str) == Some("user"))
            .and_then(|m| m.get("content").and_then(Value::as_str))
            .unwrap_or_default()
            .to_string()
    }

    /// The last 24 messages as `{ role, content, toolCalls?, note? }` (`note`: a runtime note's kind).
    fn history(&self) -> Vec<Value> {
        let start = self.messages.len().saturating_sub(24);
        self.messages[start..]
            .iter()
            .map(|m| {
                let mut h = json!({ "role": m.get("role").cloned().unwrap_or(Value::Null), "content": m.get("content").cloned().unwrap_or(Value::Null) });
                if let Some(calls) = m.get("tool_calls") {
                    h["toolCalls"] = calls.clone();
                }
                if let Some(kind) = m.pointer("/archmax/note") {
                    h["note"] = kind.clone();
                }
                h
            })
            .collect()
    }

    /// The entry gate of the current state, once per visit, before its first model call.
    /// `Some(reason)` when it refused (the turn routes the failure).
    async fn entry_gate(&mut self) -> Option<String> {
        if self.before_done {
            return None;
        }
        self.before_done = true;
        let here = self.session.workflow_state.clone();
        match self.run_hooks(&here, Phase::Before, None, None).await {
            Gate::Pass => None,
            Gate::Block(r) | Gate::Fail(r) => Some(r),
        }
    }

    async fn complete(&mut self) -> Result<(), RunError> {
        let here = self.session.workflow_state.clone();
        if let Some(reason) = self.session.rejected.clone() {
            return self.route_failure(&reason).await;
        }
        if let Some(reason) = self.returns_shortfall(&here) {
            self.session.status = Status::Rejected;
            self.session.rejected = Some(reason);
            return self.commit().await;
        }
        if !self.h.plain {
            self.emit(Event::StateLeave {
                state: here.clone(),
                next: here,
            });
        }
        self.session.status = Status::Completed;
        self.commit().await
    }

    fn returns_shortfall(&self, here: &str) -> Option<String> {
        let sig = self.signature.as_ref()?;
        if sig.returns.is_empty() {
            return None;
        }
        let values: Map<String, Value> = self
            .session
            .variables
            .iter()
            .map(|(k, v)| (k.clone(), v.value.clone()))
            .collect();
        let t = &self.session.trigger;
        let unset: Vec<String> = sig
            .returns
            .iter()
            .filter(|e| !values.contains_key(&e.name))
            .map(|e| format!("'{}'", e.name))
            .collect();
        if !unset.is_empty() {
            let pronoun = if unset.len() == 1 { "it" } else { "them" };
            return Some(format!(
                "Completed in state '{here}' without setting {}, which trigger '{t}' declares in its 'returns'. Set {pronoun} with 'archmax_set_variables' before finishing.",
                unset.join(", ")
            ));
        }
        let typed: Vec<_> = sig
            .returns
            .iter()
            .filter(|e| e.ty.is_some())
            .cloned()
            .collect();
        let msgs: Vec<String> = signature_value_issues(&typed, &values)
            .into_iter()
            .map(|i| i.message)
            .collect();
        (!msgs.is_empty()).then(|| {
            format!(
                "Completed in state '{here}' with returns that do not conform to the types trigger '{t}' declares: {}. Set a conforming value with 'archmax_set_variables' before finishing.",
                msgs.join(" ")
            )
        })
    }

    /// One tool call: resolution, substitution, kernel, execution.
    async fn tool_call(
        &mut self,
        call: &crate::model::types::ToolCall,
        others: usize,
        moved: &mut Option<String>,
        _index: usize,
    ) -> (String, bool) {
        let state = self.session.workflow_state.clone();
        let Some(name) = self.resolve_name(&call.name) else {
            return (self.unknown_tool(&call.name), true);
        };
        let args = match crate::governed::arguments(&name, &call.arguments) {
            Ok(args) => args,
            Err(refusal) => return (refusal, true),
        };
        let vars = self.session.kernel_variables();
        let args = if name.starts_with(archmax_kernel::tools::WORKFLOW_TOOL_PREFIX) {
            args
        } else {
            match crate::substitute::substitute_args(&args, &vars) {
                Ok(a) => a,
                Err(f) => {
                    let reason = crate::substitute::unresolved_message(&f);
                    self.blocked = true;
                    self.emit(Event::ToolBlocked {
                        state,
                        tool: name,
                        reason: reason.clone(),
                        call_id: Some(call.id.clone()),
                        args: Some(args),
                        origin: None,
                    });
                    return (reason, true);
                }
            }
        };
        let ctx = CallContext {
            state: &state,
            origin: Origin::Agent,
            reply_only: self.reply_only,
            variables: Some(&vars),
        };
        let (args, verdict) =
            crate::governed::decide(&self.h.policy, self.id.as_str(), &name, args, &ctx);
        // The original's plain agent has no kernel: its file operations answer a read-only
        // mount themselves (`Cannot copy to '…': it is served by a read-only mount.`), and
        // they refuse it just as surely.
        let file_operation_answers = self.h.plain
            && verdict.rule == archmax_kernel::RuleId::ReadOnlyZone
            && matches!(name.as_str(), "copy_file" | "move_file" | "remove_file");
        if !verdict.allowed && !file_operation_answers {
            let reason = verdict.message.unwrap_or_default();
            self.blocked = true;
            if verdict.warn {
                self.emit(Event::ToolBlocked {
                    state,
                    tool: name,
                    reason: reason.clone(),
                    call_id: Some(call.id.clone()),
                    args: Some(args),
                    origin: None,
                });
            }
            if verdict.terminal {
                self.session.rejected = Some(reason.clone());
            }
            return (reason, true);
        }
        let started = Instant::now();
        self.emit(Event::ToolCalled {
            state: state.clone(),
            tool: name.clone(),
            call_id: Some(call.id.clone()),
            args: Some(args.clone()),
            detail: None,
            origin: None,
        });
        let moved_before = moved.is_some();
        let result = self.execute(&name, &args, &call.id, others, moved).await;
        let (text, is_error) = (result.text, result.is_error);
        // A refused move answers the agent without erroring its message, but the call did
        // not do what it was for: its `tool-result` says so (the original reads it off the
        // move).
        let settled_ok =
            !is_error && (name != "archmax_advance" || (!moved_before && moved.is_some()));
        let text = if matches!(name.as_str(), "ls" | "glob" | "grep") {
            self.h
                .policy
                .redact_listing(&state, Origin::Agent, &text)
                .into_owned()
        } else {
            text
        };
        let (text, is_error) = match self
            .workspace()
            .map(|ws| crate::files::offload(&ws, &call.id, &text, OFFLOAD_CHARS))
        {
            Some(Ok(Some(pointer))) => (pointer, is_error),
            Some(Err(refused)) => (refused, true),
            Some(Ok(None)) | None => (text, is_error),
        };
        self.emit(Event::tool_result(
            state,
            name,
            call.id.clone(),
            settled_ok,
            started,
            &text,
            None,
        ));
        (text, is_error)
    }

    fn resolve_name(&self, called: &str) -> Option<String> {
        let resolved = self.resolve_registered(called)?;
        // A plain agent has none of the runtime's own tools: they are not tools there.
        (!self.h.plain || crate::plain::is_plain_tool(&resolved, &self.h.tools)).then_some(resolved)
    }

    fn resolve_registered(&self, called: &str) -> Option<String> {
        let registered = |n: &str| {
            EXECUTABLE.contains(&n)
                || self.h.tools.iter().any(|t| t.name() == n)
                || n == "eval"
        };
        if registered(called) || archmax_kernel::tools::ALWAYS_ALLOWED.contains(&called) {
            return Some(called.to_string());
        }
        let suffix = format!("__{called}");
        let matches: Vec<&str> = self
            .h
            .tools
            .iter()
            .map(|t| t.name())
            .filter(|n| n.ends_with(&suffix))
            .collect();
        match matches.as_slice() {
            [one] => Some((*one).to_string()),
            _ => None,
        }
    }

    fn unknown_tool(&self, called: &str) -> String {
        let suffix = format!("__{called}");
        let matches: Vec<&str> = self
            .h
            .tools
            .iter()
            .map(|t| t.name())
            .filter(|n| n.ends_with(&suffix))
            .collect();
        let mut text = format!(
            "[workflow] '{called}' is not a tool. Call one of the tools you were given, by its exact name."
        );
        if matches.len() > 1 {
            text.push_str(&format!(
                " Did you mean one of: {}? Call it by its full name.",
                matches.join(", ")
            ));
        }
        text
    }

    /// `archmax_eval` (inline code) or `archmax_run` (a skill script read through the
    /// agent's workspace) in the turn's sandbox; `tools.*` carry the agent's authority
    /// and list the tools the state discloses.
    async fn run_code(&mut self, name: &str, args: &Value) -> ControlResult {
        let error = |text: String| ControlResult {
            text,
            is_error: true,
        };
        let variables = self.session.kernel_variables();
        let workspace = self.workspace();
        let (path, code, script_args) = if name == "archmax_eval" {
            let Some(code) = args.get("code").and_then(Value::as_str) else {
                return error("Error: 'code' must be a string of JavaScript.".into());
            };
            (None, code.to_string(), Value::Null)
        } else {
            let Some(file) = args.get("file_path").and_then(Value::as_str) else {
                return error("Error: 'file_path' must be the path of a script.".into());
            };
            let Some(ws) = &workspace else {
                return error("Error: 'archmax_run' needs a filesystem session store.".into());
            };
            let route = match crate::files::route::resolve(ws, file) {
                Ok(r) => r,
                Err(e) => return error(format!("Error: {e}")),
            };
            let read = route
                .fs
                .read_regular(&route.disk, archmax_spec::disk::MAX_AUTHORED_FILE_BYTES);
            match read.map_err(|why| format!("it {why}")).and_then(|bytes| {
                let bytes = bytes.ok_or_else(|| "it does not exist".to_string())?;
                String::from_utf8(bytes).map_err(|_| "it is not UTF-8 text".to_string())
            }) {
                Ok(code) => (
                    Some(route.rel.clone()),
                    code,
                    archmax_sandbox::eval_args(
                        args.get("args").cloned().unwrap_or(Value::Null),
                        variables.clone().into_iter().collect(),
                    ),
                ),
                Err(e) => {
                    return error(format!(
                        "Error: cannot read script '{}': {e}",
                        route.shown()
                    ));
                }
            }
        };
        let sandbox = match &self.sandbox {
            Some(s) => s.clone(),
            None => match archmax_sandbox::Sandbox::new(crate::ptc::limits(&self.h.spec)).await {
                Ok(s) => {
                    let s = std::sync::Arc::new(s);
                    self.sandbox = Some(s.clone());
                    s
                }
                Err(e) => return error(format!("Error: the sandbox could not start: {e}")),
            },
        };
        let bridge = self.script_tools(Origin::Script, variables, workspace);
        // QuickJS runs on a thread of its own; its tools.* calls are served here.
        let limit = crate::ptc::limits(&self.h.spec).timeout;
        let run = crate::script_thread::run(bridge, limit, move |bridge| async move {
            match path {
                None => sandbox.eval(&code, Value::Null, bridge).await,
                Some(p) => sandbox.run_file(&p, &code, script_args, bridge).await,
            }
        })
        .await;
        match run {
            Ok(run) => ControlResult {
                text: run.text,
                is_error: run.is_error,
            },
            Err(e) => {
                // The abandoned run still holds its sandbox; the next script gets a new one.
                self.sandbox = None;
                error(format!("Error: {e}"))
            }
        }
    }

    /// The `tools.*` of a script run by `origin`, bound to this session and its current
    /// state. A hook lists every tool a script may call; model code lists the ones the
    /// state discloses.
    fn script_tools(
        &self,
        origin: Origin,
        variables: archmax_kernel::Variables,
        workspace: Option<crate::files::Workspace>,
    ) -> std::sync::Arc<crate::ptc::ScriptTools> {
        let state = self.session.workflow_state.clone();
        let callable = crate::ptc::SCRIPT_FILE_TOOLS
            .iter()
            .map(|t| (*t).to_string())
            .chain(self.h.tools.iter().map(|t| t.name().to_string()));
        let listed = match origin {
            Origin::Lifecycle => callable.collect(),
            _ => {
                let disclosed = self.h.policy.surface(&state);
                callable.filter(|t| disclosed.contains(t)).collect()
            }
        };
        std::sync::Arc::new(crate::ptc::ScriptTools {
            cancel: self.cancel.clone(),
            deadline: self
                .segment_left()
                .map(|left| Instant::now() + left)
                .zip(self.timeout_reason()),
            policy: self.h.policy.clone(),
            origin,
            session_id: self.id.as_str().to_string(),
            state,
            variables,
            workspace,
            host: self.h.tools.clone(),
            listed,
            events: self.h.emitter.clone(),
            calls: Default::default(),
        })
    }

    fn workspace(&self) -> Option<crate::files::Workspace> {
        let files = self.h.store.session_files(&self.id)?;
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

    async fn execute(
        &mut self,
        name: &str,
        args: &Value,
        call_id: &str,
        others: usize,
        moved: &mut Option<String>,
    ) -> ControlResult {
        let state = self.session.workflow_state.clone();
        match name {
            "archmax_get_variables" => control::get_variables(&self.session, args),
            "archmax_eval" | "archmax_run" => self.run_code(name, args).await,
            "archmax_set_variables" => {
                match control::set_variables(
                    &mut self.session,
                    &self.h.spec,
                    self.signature.as_ref(),
                    args,
                ) {
                    Ok(w) => {
                        if let Some(t) = &w.title {
                            self.emit(Event::TitleSet {
                                title: t.clone(),
                                state: Some(state.clone()),
                                call_id: Some(call_id.to_string()),
                            });
                        }
                        let text = format!(
                            "Set {}{}.",
                            w.names.join(", "),
                            if w.locked { " (locked)" } else { "" }
                        );
                        self.emit(Event::VariablesSet {
                            state: Some(state),
                            names: w.names,
                            locked: w.locked,
                            call_id: Some(call_id.to_string()),
                        });
                        ControlResult {
                            text,
                            is_error: false,
                        }
                    }
                    Err(e) => e,
                }
            }
            "archmax_raise" => match control::raise_args(args, others) {
                Err(e) => e,
                Ok((code, reason)) => {
                    self.emit(Event::Raised {
                        state: state.clone(),
                        session_id: self.id.as_str().to_string(),
                        code: code.clone(),
                        reason: reason.clone(),
                        call_id: Some(call_id.to_string()),
                    });
                    self.emit(Event::StateLeave {
                        state: state.clone(),
                        next: state.clone(),
                    });
                    self.session.status = Status::Failed;
                    self.session.exit = Some(Exit {
                        code: code.clone(),
                        reason,
                    });
                    ControlResult {
                        text: control::raised_text(&code, &state),
                        is_error: false,
                    }
                }
            },
            "archmax_reset" => {
                if let Some(landed) = moved.as_ref() {
                    return control::second_move(name, landed);
                }
                let reason = args
                    .get("reason")
                    .and_then(Value::as_str)
                    .map(str::trim)
                    .filter(|r| !r.is_empty());
                let entry = self.session.entry_state.clone();
                let result = control::reset_result(reason, &entry);
                if !result.is_error {
                    self.emit(Event::StateLeave {
                        state: state.clone(),
                        next: entry.clone(),
                    });
                    self.session.workflow_state = entry.clone();
                    self.session.state_turns = 0;
                    self.segment_started = Instant::now();
                    self.before_done = false;
                    for v in self.session.variables.values_mut() {
                        if v.locked_by == Some(LockedBy::Agent) {
                            v.locked_by = None;
                        }
                    }
                    self.trail(&entry, "reset", reason);
                    self.emit(Event::StateEnter {
                        state: entry.clone(),
                    });
                    *moved = Some(entry);
                }
                result
            }
            "archmax_advance" => {
                if let Some(landed) = moved.as_ref() {
                    return control::second_move(name, landed);
                }
                let (to, reason) = match control::advance_args(args) {
                    Ok(x) => x,
                    Err(e) => return e,
                };
                let into_human = self
                    .h
                    .spec
                    .states
                    .get(&to)
                    .is_some_and(archmax_spec::model::State::is_human);
                let evidence = match crate::park::evidence_arg(args, &to, into_human) {
                    Ok(e) => e,
                    Err(text) => {
                        return ControlResult {
                            text,
                            is_error: false,
                        };
                    }
                };
                let vars = self.session.kernel_variables();
                let verdict = self.h.policy.transition(&state, &to, Some(&vars));
                if !verdict.allowed {
                    // A refused move answers the agent, not as an error: it stays and retries.
                    return ControlResult {
                        text: format!(
                            "archmax_advance rejected: {}",
                            verdict.message.unwrap_or_default()
                        ),
                        is_error: false,
                    };
                }
                for (gate, phase, target) in [
                    (&state, Phase::After, Some(to.as_str())),
                    (&to, Phase::Before, None),
                ] {
                    match self.run_hooks(gate, phase, target, Some(&reason)).await {
                        Gate::Pass => {}
                        Gate::Block(r) => {
                            return ControlResult {
                                text: format!("archmax_advance rejected: {r}"),
                                is_error: false,
                            };
                        }
                        Gate::Fail(r) => {
                            // A hook that cannot run is a terminal failure: routed at the end of the step.
                            self.session.rejected = Some(r.clone());
                            return ControlResult {
                                text: format!("archmax_advance rejected: {r}"),
                                is_error: false,
                            };
                        }
                    }
                }
                self.before_done = true;
                self.emit(Event::Advance {
                    from: state.clone(),
                    to: to.clone(),
                    reason: Some(reason.clone()),
                    call_id: Some(call_id.to_string()),
                });
                self.emit(Event::StateLeave {
                    state: state.clone(),
                    next: to.clone(),
                });
                self.session.workflow_state = to.clone();
                self.session.state_turns = 0;
                self.segment_started = Instant::now();
                self.session.rejected = None;
                self.trail(&to, "agent", Some(&reason));
                self.emit(Event::StateEnter { state: to.clone() });
                *moved = Some(to.clone());
                if into_human {
                    self.reply_case = crate::park::ReplyCase::HandedOver;
                    self.park_decision(&to, evidence);
                }
                ControlResult {
                    text: control::advanced_text(&to),
                    is_error: false,
                }
            }
            "archmax_wait" => self.wait(args, call_id),
            "write_todos" => {
                self.session.todos = args.get("todos").cloned().unwrap_or(Value::Null);
                ControlResult {
                    text: "Updated the todo list.".to_string(),
                    is_error: false,
                }
            }
            _ if EXECUTABLE.contains(&name) => match self.workspace() {
                Some(ws) => {
                    if name == "read_file"
                        && let Some(opts) = &self.h.images
                        && let Some((text, mark)) = crate::images::answer(&ws, args, opts)
                    {
                        self.shown = mark;
                        return ControlResult {
                            text,
                            is_error: false,
                        };
                    }
                    let out = crate::files::run_tool_async(&ws, name, args).await;
                    ControlResult {
                        text: out.text,
                        is_error: out.is_error,
                    }
                }
                None => ControlResult {
                    text: format!("Error: '{name}' needs a filesystem session store."),
                    is_error: true,
                },
            },
            _ => match self.h.tools.iter().find(|t| t.name() == name).cloned() {
                Some(tool) => {
                    let workspace = std::sync::Arc::new(crate::host_workspace::HostWorkspace::new(
                        std::sync::Arc::clone(&self.h.policy),
                        self.id.as_str(),
                        &state,
                        Origin::Agent,
                        self.session.kernel_variables(),
                        self.reply_only,
                        self.workspace(),
                    ));
                    let ctx = ToolContext {
                        session_id: self.id.as_str().to_string(),
                        state,
                        call_id: Some(call_id.to_string()),
                        workspace: Some(std::sync::Arc::clone(&workspace)),
                    };
                    let left = self.segment_left();
                    let run = crate::governed::run_host_tool(
                        &self.h.policy,
                        &tool,
                        args.clone(),
                        ctx,
                        &self.cancel,
                        left,
                    )
                    .await;
                    workspace.close();
                    let result = match run {
                        HostRun::Done(r) => r,
                        HostRun::Escapes(text) => Err(text),
                        HostRun::TimedOut => {
                            let reason = self.timeout_reason().unwrap_or_default();
                            self.session.rejected = Some(reason.clone());
                            Err(format!("'{name}' was stopped: {reason}"))
                        }
                        // The loop ends the turn before the next model call.
                        HostRun::Cancelled => {
                            Err(format!("'{name}' was stopped: {CANCELLED_REASON}"))
                        }
                    };
                    match result {
                        Ok(text) => ControlResult {
                            text,
                            is_error: false,
                        },
                        Err(e) => ControlResult {
                            text: e,
                            is_error: true,
                        },
                    }
                }
                None => ControlResult {
                    text: self.unknown_tool(name),
                    is_error: true,
                },
            },
        }
    }

    /// `archmax_wait({ reason, until? })`: park in place until an event is delivered.
    fn wait(&mut self, args: &Value, call_id: &str) -> ControlResult {
        let state = self.session.workflow_state.clone();
        let Some(reason) = args
            .get("reason")
            .and_then(Value::as_str)
            .map(str::trim)
            .filter(|r| !r.is_empty())
        else {
            return ControlResult {
                text: "archmax_wait rejected: a non-empty 'reason' is required — say what the run is waiting for.".into(),
                is_error: true,
            };
        };
        let now = crate::clock::now_ms();
        let resume_at = match args.get("until").filter(|u| !u.is_null()) {
            None => None,
            Some(u) => match crate::park::parse_until(u.as_str().unwrap_or_default(), now) {
                Ok(ms) => Some(crate::clock::iso(ms)),
                Err(problem) => {
                    return ControlResult {
                        text: crate::park::until_error(&problem),
                        is_error: true,
                    };
                }
            },
        };
        let used = self.session.park_counts.get(&state).copied().unwrap_or(0);
        let max = self
            .h
            .spec
            .states
            .get(&state)
            .and_then(|s| s.budget.as_ref())
            .and_then(|b| b.max_parks);
        if let Some(max) = max.filter(|m| used + 1 > *m) {
            let text = format!(
                "archmax_wait rejected: state '{state}' exhausted its park budget (maxParks: {max}) — it asked to wait again for: {reason}"
            );
            self.session.rejected = Some(
                text.trim_start_matches("archmax_wait rejected: ")
                    .to_string(),
            );
            return ControlResult {
                text,
                is_error: true,
            };
        }
        self.session.park_counts.insert(state.clone(), used + 1);
        self.closing = !self.spoke_this_turn();
        self.reply_case = crate::park::ReplyCase::Waiting;
        self.session.park = Some(crate::state::Park::Input {
            state: state.clone(),
            title: self.h.spec.states.get(&state).and_then(|s| s.title.clone()),
            reason: reason.to_string(),
            parked_at: crate::clock::iso(now),
            resume_at: resume_at.clone(),
        });
        self.session.status = Status::AwaitingInput;
        self.emit(Event::Parked {
            state: state.clone(),
            session_id: self.id.as_str().to_string(),
            awaiting: "input".into(),
            reason: Some(reason.to_string()),
            resume_at: resume_at.clone(),
            call_id: Some(call_id.to_string()),
        });
        ControlResult {
            text: crate::park::waiting_text(&state, resume_at.as_deref()),
            is_error: false,
        }
    }

    fn outcome(&self) -> Outcome {
        Outcome::from_session(self.id.as_str(), &self.session, &self.messages)
            .with_disposition(self.disposition)
    }
}

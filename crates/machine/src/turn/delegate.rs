//! Delegation (`runtime.md` §7): a call of `archmax_workflow_<slug>` runs the target as a
//! child session on its own spec, seeded with the call's arguments, and answers with its
//! closing message (and its returns, for a signed target), or, when the child parks, that
//! it stopped (`child_parks.rs` presents the park).
//!
//! `prepare` runs the dispatch checks in the digest's order (a refusal is a blocked call the
//! agent can correct); `delegate` runs the child (`&self`: a batch's delegations run at
//! once, at most [`MAX_CONCURRENT`]); `settle` keeps the failure bookkeeping, which routes
//! through `on_error` when the model finishes unless a later success recovers it.
//!
//! State it changes: the session's delegation counter (`prepare`) and the turn's
//! outstanding failures (`settle`, cleared by every move, park and route).

use std::sync::Arc;
use std::time::Instant;

use archmax_spec::grammar::scan_references;
use archmax_spec::signature::signature_value_issues;
use serde_json::{Map, Value, json};

use crate::control::ControlResult;
use crate::error::RunError;
use crate::events::Event;
use crate::harness::Harness;
use crate::outcome::{Outcome, OutcomeKind};
use crate::state::PendingDelegation;

use super::{SendInput, Turn};

/// Delegations below the root a chain may reach (the dispatcher's `maxDepth`).
const MAX_DEPTH: usize = 3;
/// Children of one turn that run at once (the dispatcher's `maxConcurrent`); the rest queue.
pub(super) const MAX_CONCURRENT: usize = 4;
/// The closing message of a child that said nothing.
const NO_CLOSING: &str = "(the sub-workflow completed without a closing message)";

/// A delegation that passed its dispatch checks.
pub(crate) struct Delegation {
    workflow: String,
    child: Arc<Harness>,
    /// The resolved arguments: the child's seeds.
    seeds: Map<String, Value>,
    ordinal: u64,
}

/// A delegation's result, for the failure bookkeeping.
pub(super) struct Settled {
    workflow: String,
    state: String,
    input: Map<String, Value>,
    failure: Option<String>,
    /// The child parked: neither a failure nor a success, it waits in the session's queue.
    parked: Option<PendingDelegation>,
}

/// What running a child came to, when it did not fail.
pub(crate) enum Ran {
    /// The call's answer.
    Answer(String),
    /// The child parked for a person or an event (only where the caller may park with it).
    Parked(Box<PendingDelegation>),
}

/// How a dispatch settled, as its `sub-workflow-result` reports it.
pub(crate) struct Settlement<'a> {
    pub(crate) duration_ms: u64,
    /// `ok`, `error` or `parked`.
    pub(crate) status: &'a str,
    pub(crate) reason: Option<&'a str>,
    /// The names of the returns a signed child set.
    pub(crate) returns: Option<Vec<String>>,
}

impl<'a> Settlement<'a> {
    /// A child that answered `Ok` or failed `Err` since `started`.
    pub(crate) fn of(started: Instant, result: Result<&'a str, &'a str>) -> Self {
        Settlement {
            duration_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            status: if result.is_ok() { "ok" } else { "error" },
            reason: result.err(),
            returns: result.ok().and_then(returns_named),
        }
    }
}

/// Who a child session's turn runs as: the workflows down to it, what binds inside it,
/// and its caller's cancel switch.
pub(crate) struct Lineage {
    pub(crate) chain: Vec<String>,
    /// The delegation the child session runs for (its events carry it).
    pub(crate) dispatch_id: String,
    pub(crate) inherited: Arc<[archmax_kernel::Inherited]>,
    pub(crate) cancel: crate::cancel::Cancel,
}

/// What resumes a parked child: the caller's decision, or the event delivered to it.
pub(crate) enum Resume {
    Decision {
        target: String,
        comment: Option<String>,
    },
    Delivery {
        trigger: String,
        variables: Map<String, Value>,
        message: Option<String>,
    },
}

/// A failed delegation not yet recovered.
pub(super) struct Failure {
    workflow: String,
    state: String,
    input: Map<String, Value>,
    reason: String,
    /// The model step that made the call: a success recovers only earlier steps' failures.
    step: u64,
}

/// A call's argument resolved for seeding: non-strings pass through, a string that is one
/// whole reference seeds the referenced value with its type, mixed text is substituted.
fn resolve_param(value: &Value, vars: &Map<String, Value>) -> Result<Value, String> {
    let Value::String(text) = value else {
        return Ok(value.clone());
    };
    let refs = scan_references(text);
    if let [r] = refs.as_slice()
        && r.start == 0
        && r.end == text.len()
        && !r.escaped
    {
        archmax_kernel::guard::reference_text(r, Some(vars))
            .map_err(|f| format!("{}, which does not resolve ({})", f.reference, f.detail()))?;
        let mut at = vars.get(r.name.as_str());
        for seg in &r.path {
            at = at.and_then(|v| match v {
                Value::Object(m) => m.get(seg.as_str()),
                Value::Array(a) => seg.parse::<usize>().ok().and_then(|i| a.get(i)),
                _ => None,
            });
        }
        if let Some(v) = at {
            return Ok(v.clone());
        }
    }
    crate::substitute::substitute_args(value, vars)
        .map_err(|f| format!("{}, which does not resolve ({})", f.reference, f.detail()))
}

/// `'a', 'b'` (the missing-param list).
fn names(list: &[String]) -> String {
    list.iter()
        .map(|n| format!("'{n}'"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The opening message of a child (§7.5): what it was started with, within bounds.
fn opening_text(seeds: &Map<String, Value>) -> String {
    const LINE: usize = 200;
    const TOTAL: usize = 1000;
    let mut sorted: Vec<(&String, &Value)> = seeds.iter().collect();
    sorted.sort_by(|a, b| a.0.cmp(b.0));
    let (mut shown, mut hidden, mut used) = (Vec::new(), Vec::new(), 0usize);
    for (name, value) in sorted {
        let text = match value {
            Value::String(s) => Some(
                serde_json::to_string(s)
                    .unwrap_or_default()
                    .replace('\u{2028}', "\\u2028")
                    .replace('\u{2029}', "\\u2029"),
            ),
            Value::Number(n) => Some(n.to_string()),
            Value::Bool(b) => Some(b.to_string()),
            _ => None,
        };
        match text.map(|t| format!("- {name}: {t}")) {
            Some(line) if line.chars().count() <= LINE && used + line.len() <= TOTAL => {
                used += line.len();
                shown.push(line);
            }
            _ => hidden.push(name.clone()),
        }
    }
    let mut out = String::from("Begin. Your instructions are already in context.");
    if !shown.is_empty() {
        out.push_str(" You were started with these inputs:");
    }
    for line in &shown {
        out.push('\n');
        out.push_str(line);
    }
    if !hidden.is_empty() {
        let lead = if shown.is_empty() {
            "Your inputs are not shown here"
        } else {
            "Not shown here"
        };
        out.push_str(&format!(
            "\n{lead}: {}. Read one with archmax_get_variables when you need its value.",
            hidden.join(", ")
        ));
    }
    out
}

/// A child's outcome as the call's answer, or the failure's reason (§7.3, §7.6).
pub(super) fn answer(workflow: &str, child: &Harness, out: &Outcome) -> Result<String, String> {
    let s = &out.state;
    match out.kind {
        OutcomeKind::Completed => {}
        OutcomeKind::Rejected => {
            return Err(format!(
                "Sub-workflow '{workflow}' was rejected in state '{s}': {}",
                out.rejected.clone().unwrap_or_default()
            ));
        }
        OutcomeKind::Failed => {
            let code = out
                .exit
                .as_ref()
                .and_then(|e| e.get("code"))
                .and_then(Value::as_str);
            let reason = out
                .exit
                .as_ref()
                .and_then(|e| e.get("reason"))
                .and_then(Value::as_str)
                .unwrap_or_default();
            return Err(match code {
                Some("turn-error" | "turn-cancelled" | "recursion-limit") | None => {
                    format!("Sub-workflow '{workflow}' failed: {reason}")
                }
                Some(code) => format!(
                    "Sub-workflow '{workflow}' failed: its agent raised '{code}' in state '{s}': {reason}"
                ),
            });
        }
        _ => {
            return Err(format!(
                "Sub-workflow '{workflow}' settled in state '{s}' with status '{}' but no pending suspension, so nothing could resume it.",
                out.status
            ));
        }
    }
    let message = Some(out.reply.trim())
        .filter(|r| !r.is_empty())
        .unwrap_or(NO_CLOSING)
        .to_string();
    let Some(sig) = child.manual_signature().filter(|s| !s.returns.is_empty()) else {
        return Ok(message);
    };
    let value_of = |name: &str| {
        out.variables
            .get(name)
            .and_then(|v| v.get("value"))
            .cloned()
    };
    let set: Map<String, Value> = sig
        .returns
        .iter()
        .filter_map(|e| value_of(&e.name).map(|v| (e.name.clone(), v)))
        .collect();
    let typed: Vec<_> = sig
        .returns
        .iter()
        .filter(|e| e.ty.is_some() && set.contains_key(&e.name))
        .cloned()
        .collect();
    let issues: Vec<String> = signature_value_issues(&typed, &set)
        .into_iter()
        .map(|i| i.message)
        .collect();
    if !issues.is_empty() {
        return Err(format!(
            "Sub-workflow '{workflow}' settled in state '{s}' with returns its 'manual' trigger types otherwise: {}.",
            issues.join(" ")
        ));
    }
    let unset: Vec<String> = sig
        .returns
        .iter()
        .filter(|e| !set.contains_key(&e.name))
        .map(|e| format!("'{}'", e.name))
        .collect();
    let mut returns = set;
    if !unset.is_empty() {
        let verb = if unset.len() == 1 { "was" } else { "were" };
        returns.insert(
            "note".into(),
            json!(format!(
                "Not all return variables were set by the sub-workflow: {} {verb} not set.",
                unset.join(", ")
            )),
        );
    }
    Ok(json!({ "message": message, "returns": returns }).to_string())
}

/// A mocked delegation's answer (§6.8): `{ error }` fails the call; `{ message, state? }`,
/// a string, or any other value (as JSON) is the closing message; a signed target's declared
/// returns are read from `result.returns` and held to its contract as a real child's are.
fn mocked_answer(
    workflow: &str,
    child: &Harness,
    result: Option<&Value>,
) -> Result<String, String> {
    let result = result.cloned().unwrap_or(Value::Null);
    if let Some(error) = result.get("error") {
        let error = match error {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        return Err(format!(
            "Sub-workflow '{workflow}' failed (mocked): {error}"
        ));
    }
    let message = match &result {
        Value::String(s) => s.clone(),
        Value::Object(o) if o.get("message").is_some_and(Value::is_string) => o
            .get("message")
            .and_then(Value::as_str)
            .unwrap_or_default()
            .to_string(),
        other => other.to_string(),
    };
    let state = result
        .get("state")
        .and_then(Value::as_str)
        .unwrap_or("(mocked)")
        .to_string();
    let mut session = crate::state::SessionState {
        status: crate::state::Status::Completed,
        workflow_state: state,
        ..Default::default()
    };
    for (name, value) in result
        .get("returns")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
    {
        session.variables.insert(
            name.clone(),
            crate::state::Variable {
                value: value.clone(),
                locked_by: None,
            },
        );
    }
    let messages = [json!({ "role": "assistant", "content": message })];
    answer(
        workflow,
        child,
        &Outcome::from_session("", &session, &messages),
    )
}

impl Harness {
    /// A child session's turn: the `manual` entry, seeded with the call's arguments, the
    /// opening note, then the loop; it runs under its caller's cancel switch.
    pub(crate) fn run_child<'a>(
        &'a self,
        id: &'a str,
        seeds: Map<String, Value>,
        lineage: Lineage,
    ) -> crate::tools::BoxFuture<'a, Result<Outcome, RunError>> {
        // Boxed: a child's turn may delegate in turn, so this future contains itself.
        Box::pin(async move {
            let (lease, mut turn) = self.begin_as(id, Some(lineage)).await?;
            let trigger = crate::registry::MANUAL;
            let start = self.start_state(trigger)?;
            let input = SendInput {
                message: opening_text(&seeds),
                trigger: Some(trigger.to_string()),
                variables: seeds,
            };
            turn.open(trigger, &start, Vec::new(), &input).await?;
            let out = turn.run().await;
            self.release(lease).await;
            out
        })
    }

    /// A parked child session resumed by its caller's decision or delivery: the same
    /// arrival a host's would be, run as the child.
    pub(crate) fn resume_child<'a>(
        &'a self,
        id: &'a str,
        resume: Resume,
        lineage: Lineage,
    ) -> crate::tools::BoxFuture<'a, Result<Outcome, RunError>> {
        // Boxed: the child may hold a parked grandchild, which this resumes in turn.
        Box::pin(async move {
            match resume {
                Resume::Decision { target, comment } => {
                    self.decide_as(id, &target, comment.as_deref(), Some(lineage))
                        .await
                }
                Resume::Delivery {
                    trigger,
                    variables,
                    message,
                } => {
                    self.deliver_as(id, &trigger, variables, message.as_deref(), Some(lineage))
                        .await
                }
            }
        })
    }
}

/// The dispatch checks of §7.2, in order, for a call of `workflow` from a caller running
/// `chain` (the workflows from the root's down to the caller's); `child` is the target as
/// the registry loads it. `Err` is the refusal.
///
/// As in the original, the cycle check and the refusals' chain count the delegations only:
/// the root session's own workflow is not among them, so a workflow may call itself once
/// (the child runs) and the child's own call of it is refused.
pub(crate) fn check(
    workflow: &str,
    chain: &[String],
    vars: &Map<String, Value>,
    args: &Value,
    child: Result<Arc<Harness>, String>,
) -> Result<(Arc<Harness>, Map<String, Value>), String> {
    let w = workflow;
    let delegations = chain.get(1..).unwrap_or_default();
    let depth = delegations.len() + 1;
    let through = || {
        let mut all = delegations.to_vec();
        all.push(w.to_string());
        all.join(" → ")
    };
    if depth > MAX_DEPTH {
        return Err(format!(
            "Refusing to run sub-workflow '{w}': it would be {depth} delegations deep, past the dispatcher's limit of {MAX_DEPTH}. Chain so far: {}.",
            through()
        ));
    }
    if delegations.iter().any(|c| c == w) {
        return Err(format!(
            "Refusing to run sub-workflow '{w}': it is already running in this chain ({}), so the run would not terminate.",
            through()
        ));
    }
    let mut seeds = Map::new();
    for (param, value) in args.as_object().into_iter().flatten() {
        let resolved = resolve_param(value, vars).map_err(|detail| {
            format!("Cannot run sub-workflow '{w}': its param '{param}' references {detail}.")
        })?;
        seeds.insert(param.clone(), resolved);
    }
    let child = child.map_err(|e| {
        format!("Refusing to run sub-workflow '{w}': it does not load in this workspace ({e}).")
    })?;
    let Some(sig) = child.manual_signature() else {
        return Err(format!(
            "Refusing to run sub-workflow '{w}': it has no 'manual' entry, so there is no state a call could start it in."
        ));
    };
    if child.spec.disabled == Some(true) {
        return Err(format!(
            "Refusing to run sub-workflow '{w}': it is disabled ('disabled: true' in its workflow.yaml), so it starts no run. Remove that flag to re-enable it."
        ));
    }
    let missing: Vec<String> = sig
        .requires
        .iter()
        .filter(|e| !seeds.contains_key(&e.name))
        .map(|e| e.name.clone())
        .collect();
    if !missing.is_empty() {
        let which = if missing.len() == 1 {
            "that argument"
        } else {
            "those arguments"
        };
        return Err(format!(
            "Refusing to run sub-workflow '{w}': it requires {}, which this call does not supply. Call it again with {which}.",
            names(&missing)
        ));
    }
    let typed: Vec<_> = sig
        .requires
        .iter()
        .filter(|e| e.ty.is_some())
        .cloned()
        .collect();
    let issues: Vec<String> = signature_value_issues(&typed, &seeds)
        .into_iter()
        .map(|i| i.message)
        .collect();
    if !issues.is_empty() {
        let which = if issues.len() == 1 {
            "a value"
        } else {
            "values"
        };
        return Err(format!(
            "Refusing to run sub-workflow '{w}': {}. Call it again with {which} of the declared type.",
            issues.join("; ")
        ));
    }
    Ok((child, seeds))
}

/// The workflow a delegation tool names.
pub(crate) fn target(name: &str) -> &str {
    name.strip_prefix(archmax_kernel::tools::WORKFLOW_TOOL_PREFIX)
        .unwrap_or(name)
}

/// Who delegates: what running a child and reporting it needs from the caller, the same
/// for the agent's calls and a script's.
#[derive(Clone)]
pub(crate) struct Caller {
    pub(crate) parent: crate::store::SessionId,
    pub(crate) state: String,
    /// The workflows from the root down to the caller's.
    pub(crate) chain: Vec<String>,
    /// The delegation the caller itself runs for, when it is a child session: the
    /// caller's delegations are named under it, so a dispatch id names one child of the
    /// whole root session.
    pub(crate) dispatch: Option<String>,
    /// What binds inside the children: the caller's inherited denials and its own.
    pub(crate) inherited: Arc<[archmax_kernel::Inherited]>,
    pub(crate) cancel: crate::cancel::Cancel,
    pub(crate) emitter: crate::events::Emitter,
    /// The turn's slots for children (`MAX_CONCURRENT`).
    pub(crate) slots: Arc<tokio::sync::Semaphore>,
    /// The cases' mocks: a matching `archmax_workflow_<slug>` mock answers instead of a child.
    pub(crate) mocks: Arc<crate::mocks::ToolMocks>,
}

impl Caller {
    fn emit(&self, event: Event) {
        self.emitter.emit(Some(self.parent.as_str()), event);
    }

    /// The id of the caller's delegation number `ordinal`: `subwf-<ordinal>` at the root,
    /// `<the caller's own id>.<ordinal>` inside a child.
    pub(crate) fn dispatch_id(&self, ordinal: u64) -> String {
        match &self.dispatch {
            None => format!("subwf-{ordinal}"),
            Some(own) => format!("{own}.{ordinal}"),
        }
    }

    pub(crate) fn chain_to(&self, workflow: &str) -> Vec<String> {
        let mut chain = self.chain.clone();
        chain.push(workflow.to_string());
        chain
    }

    fn announce(&self, workflow: &str, dispatch_id: &str, call_id: &str) {
        self.emit(Event::SubWorkflowStart {
            state: self.state.clone(),
            workflow: workflow.to_string(),
            dispatch_id: dispatch_id.to_string(),
            depth: self.chain.len() as u64,
            tool_call_id: Some(call_id.to_string()),
            chain: Some(self.chain_to(workflow)),
        });
    }

    pub(crate) fn result(
        &self,
        workflow: &str,
        dispatch_id: &str,
        call_id: &str,
        settled: Settlement<'_>,
    ) {
        let Settlement {
            duration_ms,
            status,
            reason,
            returns,
        } = settled;
        self.emit(Event::SubWorkflowResult {
            state: self.state.clone(),
            workflow: workflow.to_string(),
            dispatch_id: dispatch_id.to_string(),
            depth: self.chain.len() as u64,
            tool_call_id: Some(call_id.to_string()),
            chain: Some(self.chain_to(workflow)),
            status: status.to_string(),
            duration_ms,
            reason: reason.map(str::to_string),
            returns,
        });
    }

    /// The events of a delegation refused at dispatch: `sub-workflow-start`, then its
    /// `error` result with no duration (`next`: the ordinal the call would have had).
    pub(crate) fn refused(&self, name: &str, next: u64, call_id: &str, reason: &str) {
        let workflow = target(name);
        let dispatch_id = self.dispatch_id(next);
        self.announce(workflow, &dispatch_id, call_id);
        let refused = Settlement {
            duration_ms: 0,
            status: "error",
            reason: Some(reason),
            returns: None,
        };
        self.result(workflow, &dispatch_id, call_id, refused);
    }

    /// Runs the child (once a slot is free) and answers with its result, or the failure.
    /// `may_park`: a child that parks is handed back to queue (an agent's call); otherwise
    /// it fails the call `parked` (a script's call, which cannot wait for a person).
    pub(crate) async fn run(
        &self,
        d: &Delegation,
        call_id: &str,
        may_park: bool,
    ) -> Result<Ran, String> {
        let dispatch_id = self.dispatch_id(d.ordinal);
        // Never closed, so acquiring only waits for a free slot.
        let _slot = self.slots.acquire().await;
        self.announce(&d.workflow, &dispatch_id, call_id);
        let started = Instant::now();
        let tool = format!(
            "{}{}",
            archmax_kernel::tools::WORKFLOW_TOOL_PREFIX,
            d.workflow
        );
        let mocked = self
            .mocks
            .find(self.parent.as_str(), &tool, &Value::Object(d.seeds.clone()));
        let result = match self.parent.child(&self.state, &d.workflow, d.ordinal) {
            _ if mocked.is_some() => {
                mocked_answer(&d.workflow, &d.child, mocked.as_ref()).map(Ran::Answer)
            }
            None => Err(format!(
                "Sub-workflow '{}' failed: no child session id can be formed from state '{}' (the child's id would be too long to store)",
                d.workflow, self.state
            )),
            Some(child_id) => {
                let run = d.child.run_child(
                    child_id.as_str(),
                    d.seeds.clone(),
                    self.lineage_to(&d.workflow, &dispatch_id),
                );
                match run.await {
                    Ok(out) => match out.pending.clone() {
                        Some(park) if may_park && out.kind == OutcomeKind::Parked => {
                            Ok(Ran::Parked(Box::new(PendingDelegation {
                                state: self.state.clone(),
                                workflow: d.workflow.clone(),
                                tool_call_id: call_id.to_string(),
                                identity: format!("{}:{}:{}", self.state, d.workflow, d.ordinal),
                                dispatch_id: dispatch_id.clone(),
                                decision: park,
                            })))
                        }
                        _ => answer(&d.workflow, &d.child, &out).map(Ran::Answer),
                    },
                    Err(e) => Err(format!("Sub-workflow '{}' failed: {e}", d.workflow)),
                }
            }
        };
        let settled = match &result {
            Ok(Ran::Answer(text)) => Settlement::of(started, Ok(text.as_str())),
            Ok(Ran::Parked(_)) => Settlement {
                status: "parked",
                ..Settlement::of(started, Ok(""))
            },
            Err(reason) => Settlement::of(started, Err(reason.as_str())),
        };
        self.result(&d.workflow, &dispatch_id, call_id, settled);
        result
    }

    /// The lineage of a child of `workflow` run by this caller for delegation `dispatch_id`.
    pub(crate) fn lineage_to(&self, workflow: &str, dispatch_id: &str) -> Lineage {
        Lineage {
            chain: self.chain_to(workflow),
            dispatch_id: dispatch_id.to_string(),
            inherited: Arc::clone(&self.inherited),
            cancel: self.cancel.clone(),
        }
    }
}

/// The answer of a call whose child parked.
fn stopped_text(p: &PendingDelegation) -> String {
    format!(
        "The '{}' sub-workflow stopped for a person at its '{}' step. This run is now waiting on that decision and will continue here once it is made.",
        p.workflow,
        p.decision.state()
    )
}

/// The names a signed child's answer returns (`sub-workflow-result`'s `returns`), as the
/// answer holds them: `note` among them when the child set fewer than it declares.
fn returns_named(text: &str) -> Option<Vec<String>> {
    let v: Value = serde_json::from_str(text).ok()?;
    let names = v.get("returns")?.as_object()?.keys();
    Some(names.cloned().collect())
}

/// A script's delegation tools (`tools.archmaxWorkflow…`): the targets the state
/// discloses, loaded before the script runs, and the session's next ordinal.
pub(crate) struct ScriptDelegations {
    pub(crate) caller: Caller,
    pub(crate) children: std::collections::HashMap<String, Result<Arc<Harness>, String>>,
    pub(crate) next: std::sync::atomic::AtomicU64,
    /// The children that ran, in settling order (workflow, succeeded), for the trail.
    pub(crate) ran: std::sync::Mutex<Vec<(String, bool)>>,
}

impl ScriptDelegations {
    /// One call of delegation tool `name` from a script: checked and run as the agent's
    /// are; a refusal or failure is the call's error.
    pub(crate) async fn call(
        &self,
        name: &str,
        args: &Value,
        vars: &Map<String, Value>,
        call_id: &str,
    ) -> Result<String, String> {
        use std::sync::atomic::Ordering::SeqCst;
        let workflow = target(name);
        let child = self
            .children
            .get(workflow)
            .cloned()
            .unwrap_or_else(|| Err(format!("'{name}' is not a tool this script can call")));
        match check(workflow, &self.caller.chain, vars, args, child) {
            Err(reason) => {
                self.caller
                    .refused(name, self.next.load(SeqCst), call_id, &reason);
                Err(reason)
            }
            Ok((child, seeds)) => {
                let d = Delegation {
                    workflow: workflow.to_string(),
                    child,
                    seeds,
                    ordinal: self.next.fetch_add(1, SeqCst),
                };
                let result = self.caller.run(&d, call_id, false).await;
                if let Ok(mut ran) = self.ran.lock() {
                    ran.push((d.workflow.clone(), matches!(result, Ok(Ran::Answer(_)))));
                }
                match result? {
                    Ran::Answer(text) => Ok(text),
                    // Not handed back when the caller may not park; kept total all the same.
                    Ran::Parked(p) => Err(format!(
                        "Sub-workflow '{}' parked where its caller cannot wait for it.",
                        p.workflow
                    )),
                }
            }
        }
    }
}

impl crate::ptc::DelegationTools for ScriptDelegations {
    fn call<'a>(
        &'a self,
        name: &'a str,
        args: &'a Value,
        vars: &'a Map<String, Value>,
        call_id: &'a str,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Result<String, String>> + Send + 'a>>
    {
        Box::pin(ScriptDelegations::call(self, name, args, vars, call_id))
    }
}

impl Turn<'_> {
    /// What binds inside this turn's children: every ancestor's workflow-wide denials,
    /// outermost first, then this workflow's own.
    fn children_inherit(&self) -> Arc<[archmax_kernel::Inherited]> {
        let own = self
            .chain
            .last()
            .map(|w| self.h.policy.inherited(w))
            .filter(|d| !d.is_empty());
        self.inherited.iter().cloned().chain(own).collect()
    }

    /// Who this turn delegates as, from its current state.
    pub(super) fn caller(&self) -> Caller {
        Caller {
            parent: self.id.clone(),
            state: self.session.workflow_state.clone(),
            chain: self.chain.clone(),
            dispatch: self.dispatch.clone(),
            inherited: self.children_inherit(),
            cancel: self.cancel.clone(),
            emitter: self.emitter.clone(),
            slots: Arc::clone(&self.delegations),
            mocks: Arc::clone(&self.h.mocks),
        }
    }

    /// The dispatch checks of an agent's call; a passing call takes the next ordinal.
    pub(super) fn prepare(&mut self, name: &str, args: &Value) -> Result<Delegation, String> {
        let workflow = target(name);
        let vars = self.session.kernel_variables();
        let child = self.h.child_harness(workflow).map_err(|e| e.to_string());
        let (child, seeds) = check(workflow, &self.chain, &vars, args, child)?;
        let ordinal = self.session.sub_workflow_count;
        self.session.sub_workflow_count += 1;
        Ok(Delegation {
            workflow: workflow.to_string(),
            child,
            seeds,
            ordinal,
        })
    }

    /// The events of an agent's call refused at dispatch.
    pub(super) fn refused(&self, name: &str, call_id: &str, reason: &str) {
        self.caller()
            .refused(name, self.session.sub_workflow_count, call_id, reason);
    }

    /// Runs the child of an agent's call: its answer, and the result for the bookkeeping.
    pub(super) async fn delegate(&self, d: &Delegation, call_id: &str) -> (ControlResult, Settled) {
        let (result, parked) = match self.caller().run(d, call_id, true).await {
            Ok(Ran::Answer(text)) => (Ok(text), None),
            Ok(Ran::Parked(p)) => (Ok(stopped_text(&p)), Some(*p)),
            Err(reason) => (Err(reason), None),
        };
        let settled = Settled {
            workflow: d.workflow.clone(),
            state: self.session.workflow_state.clone(),
            input: d.seeds.clone(),
            failure: result.as_ref().err().cloned(),
            parked,
        };
        let answer = match result {
            Ok(text) => ControlResult {
                text,
                is_error: false,
            },
            Err(text) => ControlResult {
                text,
                is_error: true,
            },
        };
        (answer, settled)
    }

    /// The failure bookkeeping: a failure waits; a success of the same workflow from the
    /// same state in a later step recovers one (the deep-equal call, else the oldest).
    pub(super) fn settle(&mut self, s: Settled) {
        if let Some(parked) = s.parked {
            self.session.pending_delegations.push(parked);
            return;
        }
        self.trail_delegation(&s.state, &s.workflow, s.failure.is_none());
        match s.failure {
            Some(reason) => self.failed.push(Failure {
                workflow: s.workflow,
                state: s.state,
                input: s.input,
                reason,
                step: self.steps,
            }),
            None => {
                let earlier = |f: &Failure| {
                    f.workflow == s.workflow && f.state == s.state && f.step < self.steps
                };
                let hit = self
                    .failed
                    .iter()
                    .position(|f| earlier(f) && f.input == s.input)
                    .or_else(|| self.failed.iter().position(earlier));
                if let Some(i) = hit {
                    self.failed.remove(i);
                }
            }
        }
    }

    /// The reason outstanding failures fail the state with, if any are left; taken.
    pub(super) fn take_failures(&mut self) -> Option<String> {
        if self.failed.is_empty() {
            return None;
        }
        let reasons: Vec<String> = std::mem::take(&mut self.failed)
            .into_iter()
            .map(|f| format!("{} (called with {})", f.reason, Value::Object(f.input)))
            .collect();
        Some(reasons.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vars() -> Map<String, Value> {
        match json!({ "count": 4, "order_id": "KK-1", "o": { "n": 2 } }) {
            Value::Object(m) => m,
            _ => Map::new(),
        }
    }

    #[test]
    fn a_whole_argument_reference_keeps_its_type_and_mixed_text_is_substituted() {
        assert_eq!(resolve_param(&json!("${{count}}"), &vars()), Ok(json!(4)));
        assert_eq!(resolve_param(&json!("${{o.n}}"), &vars()), Ok(json!(2)));
        assert_eq!(
            resolve_param(&json!("order ${{order_id}}"), &vars()),
            Ok(json!("order KK-1"))
        );
        assert_eq!(resolve_param(&json!(7), &vars()), Ok(json!(7)));
        let err = resolve_param(&json!("${{missing}}"), &vars()).expect_err("unset");
        assert_eq!(
            err,
            "${{missing}}, which does not resolve (variable 'missing' is not set)"
        );
    }

    #[test]
    fn the_opening_note_lists_what_it_can_show() {
        let mut seeds = Map::new();
        seeds.insert("order_id".into(), json!("KK-1\u{2028}"));
        seeds.insert("n".into(), json!(3));
        seeds.insert("items".into(), json!([1, 2]));
        assert_eq!(
            opening_text(&seeds),
            "Begin. Your instructions are already in context. You were started with these inputs:\n- n: 3\n- order_id: \"KK-1\\u2028\"\nNot shown here: items. Read one with archmax_get_variables when you need its value."
        );
        let mut only = Map::new();
        only.insert("blob".into(), json!({ "a": 1 }));
        assert_eq!(
            opening_text(&only),
            "Begin. Your instructions are already in context.\nYour inputs are not shown here: blob. Read one with archmax_get_variables when you need its value."
        );
        assert_eq!(
            opening_text(&Map::new()),
            "Begin. Your instructions are already in context."
        );
    }
}

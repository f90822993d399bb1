//! A session store implemented by a JS object ([`JsStore`]).
//!
//! A host store's methods cross as one weak threadsafe function taking JSON text
//! (`{ method, id?, … }`) and answering an `{ ok, value | error }` envelope (`store.js` wraps
//! the object so nothing it does throws into Rust). The two calls a turn makes every step,
//! `load` at its start and `commit` after each step, are awaited by the turn
//! ([`SessionStore::load_later`], [`SessionStore::commit_queued`]): no thread waits for the
//! host. The others (`loadState`, `list`, `delete`, spec snapshots) go through the
//! synchronous `SessionStore` trait from tokio workers, so such a call blocks its worker
//! (`block_in_place`) until the JS answer arrives. It is never made on the JS main thread:
//! the answer needs that thread, so waiting there would deadlock; such a call fails with a
//! store error instead. `dispose` releases every waiting call. A host store's sessions keep
//! their files on this side, in memory ([`MemAreas`]), as the memory store does; the host's
//! methods never see them (`design/decisions/0088-host-store-files-in-addon-memory.md`).

use std::collections::HashMap;
use std::future::Future;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};
use std::thread::ThreadId;

use archmax_machine::files::{MemAreas, SessionFiles};
use archmax_machine::store::{
    CommitReceipt, Holders, LoadLater, OwnedStep, SessionId, SessionStore, Snapshot, Step,
    StoreError, WriterLease, is_descendant,
};
use serde_json::{Value, json};
use tokio::runtime::{Handle, RuntimeFlavor};
use tokio::sync::watch;

use crate::callback::{AsyncJsFn, Slot, call_js, take};
use crate::result::kind;

/// What a host store reads as in error texts.
const HOST_KIND: &str = "host";

/// What the agents sharing a host store share on the Rust side.
#[derive(Default)]
pub(super) struct HostShared {
    /// Writer leases, in process (a host store has no lock of its own).
    holders: Holders,
    /// Spec snapshots, when the host store keeps none (`writeSpec`/`readSpec` absent).
    specs: Mutex<HashMap<String, Value>>,
    /// The sessions' files (`scratchpad/`, offloads, written files): kept here, in this
    /// process's memory, as the memory store keeps them (`docs/decisions.md`).
    files: MemAreas,
}

/// Where a host store may be waited on: never on the JS main thread, and not after dispose.
pub(super) struct Gate {
    main: ThreadId,
    closed: watch::Sender<bool>,
}

impl Gate {
    /// Records the calling thread as the JS main thread.
    pub(super) fn new() -> Gate {
        Gate {
            main: std::thread::current().id(),
            closed: watch::Sender::new(false),
        }
    }

    /// Releases every call waiting, and refuses those to come.
    pub(super) fn close(&self) {
        self.closed.send_replace(true);
    }
}

/// A session store implemented by a JS object (`store.js` documents its methods).
pub(super) struct JsStore {
    f: Slot<AsyncJsFn>,
    gate: Arc<Gate>,
    shared: Arc<HostShared>,
    /// Whether the host keeps spec snapshots.
    specs: bool,
}

impl JsStore {
    /// The store whose methods `f` answers; `specs`: whether the host keeps spec snapshots.
    pub(super) fn new(
        f: Slot<AsyncJsFn>,
        gate: Arc<Gate>,
        shared: Arc<HostShared>,
        specs: bool,
    ) -> JsStore {
        JsStore {
            f,
            gate,
            shared,
            specs,
        }
    }

    /// Calls the host's `method` with `args` (its `id`, if any, names the session in errors)
    /// and waits for its answer.
    fn call(
        &self,
        method: &'static str,
        id: Option<&SessionId>,
        mut args: serde_json::Map<String, Value>,
    ) -> Result<Value, StoreError> {
        args.insert("method".to_string(), Value::from(method));
        if let Some(id) = id {
            args.insert("id".to_string(), Value::from(id.as_str()));
        }
        self.call_with(method, id, Value::Object(args).to_string())
    }

    /// [`call`](Self::call) with the call already written (`input`, JSON text naming
    /// `method` and the session `id`).
    fn call_with(
        &self,
        method: &'static str,
        id: Option<&SessionId>,
        input: String,
    ) -> Result<Value, StoreError> {
        if std::thread::current().id() == self.gate.main {
            return Err(host_error(
                method,
                id,
                "called on the JS main thread, where waiting for the store's answer would deadlock"
                    .to_string(),
            ));
        }
        wait(self.start(input)).map_err(|message| host_error(method, id, message))
    }

    /// Sends the call `input` (JSON text naming its method) to the host: its answer, or why
    /// there is none (the agent disposed before or while it waits). Nothing waits here.
    fn start(&self, input: String) -> impl Future<Output = Result<Value, String>> + Send + 'static {
        let f = take(&self.f);
        let mut closed = self.gate.closed.subscribe();
        async move {
            let f = f.ok_or_else(|| "the agent was disposed".to_string())?;
            tokio::select! {
                answer = call_js(f, input, "store", "session store") => answer,
                _ = closed.wait_for(|closed| *closed) => {
                    Err("the agent was disposed while waiting for the store's answer".to_string())
                }
            }
        }
    }

    /// What the host's `load` answered, as a snapshot (`None`: it holds no such session).
    fn snapshot(&self, id: &SessionId, answer: Value) -> Result<Option<Snapshot>, StoreError> {
        let bad = |what: String| {
            host_error(
                "load",
                Some(id),
                format!("it answered {what}; expected {{ state, messages }} or null"),
            )
        };
        match answer {
            Value::Null => Ok(self.absent(id)),
            Value::Object(mut m) => {
                let state = m.remove("state").unwrap_or(Value::Null);
                if state.is_null() {
                    return Ok(self.absent(id));
                }
                match m.remove("messages") {
                    None | Some(Value::Null) => Ok(Some(Snapshot {
                        state,
                        messages: Vec::new(),
                    })),
                    Some(Value::Array(messages)) => Ok(Some(Snapshot { state, messages })),
                    Some(other) => Err(bad(format!("'messages' as {}", kind(&other)))),
                }
            }
            other => Err(bad(kind(&other).to_string())),
        }
    }

    /// After the host's `commit` of `id` answered: the first commit makes `scratchpad/`,
    /// as the other stores' do.
    fn committed(&self, id: &SessionId) -> Result<(), StoreError> {
        self.shared.files.committed(id.as_str()).map_err(|e| {
            host_error(
                "commit",
                Some(id),
                format!("the session's scratchpad could not be made: {e}"),
            )
        })
    }

    /// The host holds no session `id`: files left from an earlier session of that id
    /// (deleted in the host's storage, not through the agent) are dropped, so a new
    /// session starts with none.
    fn absent<T>(&self, id: &SessionId) -> Option<T> {
        self.shared.files.forget_committed(id.as_str());
        None
    }

    fn spec_call(
        &self,
        method: &'static str,
        args: serde_json::Map<String, Value>,
    ) -> Result<Value, StoreError> {
        self.call(method, None, args)
    }
}

/// Blocks this thread until `answer` settles: on a tokio worker through `block_in_place`,
/// elsewhere on napi's runtime.
pub(crate) fn wait<T>(answer: impl Future<Output = Result<T, String>>) -> Result<T, String> {
    match Handle::try_current() {
        Ok(h) if h.runtime_flavor() == RuntimeFlavor::CurrentThread => Err(
            "called on a single-threaded tokio runtime, which cannot wait for the store's answer"
                .to_string(),
        ),
        Ok(h) => tokio::task::block_in_place(|| h.block_on(answer)),
        Err(_) => napi::bindgen_prelude::block_on(answer),
    }
}

/// A host store call of `method` failed: `message` says why.
fn host_error(method: &'static str, id: Option<&SessionId>, message: String) -> StoreError {
    StoreError::Host {
        method,
        id: id.map(|id| id.as_str().to_owned()),
        message,
    }
}

/// A host store's `commit` call, written from the step without copying it.
#[derive(serde::Serialize)]
struct CommitCall<'a> {
    method: &'static str,
    id: &'a str,
    messages: &'a [Value],
    state: &'a Value,
}

impl CommitCall<'_> {
    /// The call's JSON text for committing `step` to session `id`.
    fn input(id: &SessionId, step: Step<'_>) -> serde_json::Result<String> {
        serde_json::to_string(&CommitCall {
            method: "commit",
            id: id.as_str(),
            messages: step.new_messages,
            state: step.state,
        })
    }
}

fn args(pairs: impl IntoIterator<Item = (&'static str, Value)>) -> serde_json::Map<String, Value> {
    pairs.into_iter().map(|(k, v)| (k.to_string(), v)).collect()
}

/// Spec hashes name snapshots: ASCII letters and digits only, non-empty (as the other stores).
fn check_hash(hash: &str) -> Result<(), StoreError> {
    if !hash.is_empty() && hash.bytes().all(|b| b.is_ascii_alphanumeric()) {
        Ok(())
    } else {
        Err(StoreError::InvalidSpecHash {
            hash: hash.to_owned(),
        })
    }
}

impl SessionStore for JsStore {
    fn load(&self, id: &SessionId) -> Result<Option<Snapshot>, StoreError> {
        let answer = self.call("load", Some(id), args([]))?;
        self.snapshot(id, answer)
    }

    /// The host answers on the JS thread: the turn awaits its answer, and no thread blocks
    /// on it (a worker blocked per call made tokio start a thread for each of a thousand
    /// sessions loading at once).
    fn load_later(self: Arc<Self>, id: &SessionId) -> Option<LoadLater> {
        let input = json!({ "method": "load", "id": id.as_str() }).to_string();
        let answer = self.start(input);
        let id = id.clone();
        Some(Box::pin(async move {
            let value = answer
                .await
                .map_err(|message| host_error("load", Some(&id), message))?;
            self.snapshot(&id, value)
        }))
    }

    fn load_state(&self, id: &SessionId) -> Result<Option<Value>, StoreError> {
        let state = self.call("loadState", Some(id), args([]))?;
        if state.is_null() {
            return Ok(self.absent(id));
        }
        Ok(Some(state))
    }

    fn commit(&self, id: &SessionId, step: Step<'_>) -> Result<(), StoreError> {
        let input = CommitCall::input(id, step)
            .map_err(|e| host_error("commit", Some(id), format!("the step is not JSON: {e}")))?;
        self.call_with("commit", Some(id), input)?;
        self.committed(id)
    }

    /// As [`load_later`](Self::load_later): the commit is answered when the host's is, with
    /// no thread waiting for it; the step comes back whole (the host kept a copy).
    fn commit_queued(
        self: Arc<Self>,
        id: &SessionId,
        step: OwnedStep,
    ) -> Result<CommitReceipt, OwnedStep> {
        let Ok(input) = CommitCall::input(id, step.as_step()) else {
            // Not JSON (it always is): the caller commits in place and reports it.
            return Err(step);
        };
        let answer = self.start(input);
        let id = id.clone();
        Ok(CommitReceipt::new(async move {
            let result = match answer.await {
                Ok(_) => self.committed(&id),
                Err(message) => Err(host_error("commit", Some(&id), message)),
            };
            (result, Some(step))
        }))
    }

    fn list(&self) -> Result<Vec<String>, StoreError> {
        let bad = |what: &str| StoreError::Host {
            method: "list",
            id: None,
            message: format!("it answered {what}; expected an array of session ids"),
        };
        match self.call("list", None, args([]))? {
            Value::Array(ids) => ids
                .into_iter()
                .map(|id| match id {
                    Value::String(id) => Ok(id),
                    other => Err(bad(&format!("an array holding {}", kind(&other)))),
                })
                .collect(),
            other => Err(bad(kind(&other))),
        }
    }

    fn delete(&self, id: &SessionId) -> Result<(), StoreError> {
        self.call("delete", Some(id), args([]))?;
        self.shared.files.remove(id.as_str());
        // Child sessions (`<id>~…`) go with their parent, as in the other stores.
        for other in self.list()? {
            if is_descendant(id.as_str(), &other)
                && let Ok(child) = SessionId::parse(&other)
            {
                self.call("delete", Some(&child), args([]))?;
            }
        }
        Ok(())
    }

    fn acquire(&self, id: &SessionId) -> Result<WriterLease, StoreError> {
        self.shared.holders.lease(id.as_str()).ok_or_else(|| {
            let status = self
                .load_state(id)
                .ok()
                .flatten()
                .and_then(|s| s.get("status").and_then(Value::as_str).map(str::to_owned))
                .unwrap_or_else(|| "unknown".to_owned());
            StoreError::Busy {
                id: id.as_str().to_owned(),
                status,
            }
        })
    }

    fn write_spec_snapshot(&self, hash: &str, spec: &Value) -> Result<(), StoreError> {
        check_hash(hash)?;
        if self.specs {
            return self
                .spec_call(
                    "writeSpec",
                    args([("hash", Value::from(hash)), ("spec", spec.clone())]),
                )
                .map(drop);
        }
        self.shared
            .specs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .entry(hash.to_owned())
            .or_insert_with(|| spec.clone());
        Ok(())
    }

    fn read_spec_snapshot(&self, hash: &str) -> Result<Option<Value>, StoreError> {
        check_hash(hash)?;
        if self.specs {
            let spec = self.spec_call("readSpec", args([("hash", Value::from(hash))]))?;
            return Ok((!spec.is_null()).then_some(spec));
        }
        Ok(self
            .shared
            .specs
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(hash)
            .cloned())
    }

    fn session_dir(&self, _id: &SessionId) -> Option<PathBuf> {
        None
    }

    fn session_files(&self, id: &SessionId) -> Option<SessionFiles> {
        Some(self.shared.files.session_files(id.as_str()))
    }

    fn kind(&self) -> &'static str {
        HOST_KIND
    }
}

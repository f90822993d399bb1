//! Session stores chosen from JS (`workspace.sessionStore`): the filesystem store under a
//! folder of the host's choice, the in-memory store, the PostgreSQL store, or a store object
//! the host implements in JS ([`JsStore`](host::JsStore)).
//!
//! ```js
//! const store = createMemorySessionStore()            // NativeSessionStore.memory()
//! native.useSessionStore(store[NATIVE], null, false)  // before native.open(…)
//! ```

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use archmax_machine::store::{FsStore, MemStore, SessionStore};
use archmax_store_pg::PgStore;
use napi_derive::napi;
use serde_json::{Value, json};

use crate::callback::{AsyncJsFn, Slot};
use crate::result::kind;

mod host;

pub(crate) use host::wait;
use host::{Gate, HostShared, JsStore};

/// A session store as JS holds it: made by `createFilesystemSessionStore`,
/// `createMemorySessionStore`, or once per host store object. Agents given the same
/// one share its sessions (memory) and its writer leases.
#[napi]
pub struct NativeSessionStore {
    backing: Backing,
}

enum Backing {
    Filesystem(PathBuf),
    Memory(Arc<MemStore>),
    Postgres(Arc<PgStore>),
    Host(Arc<HostShared>),
}

#[napi]
impl NativeSessionStore {
    /// The filesystem store with its sessions under `dir` (absolute, or relative to the cwd).
    #[napi(factory)]
    pub fn filesystem(dir: String) -> Self {
        let dir = PathBuf::from(dir);
        let dir = if dir.is_absolute() {
            dir
        } else {
            std::env::current_dir()
                .map(|cwd| cwd.join(&dir))
                .unwrap_or(dir)
        };
        NativeSessionStore {
            backing: Backing::Filesystem(dir),
        }
    }

    /// An empty in-memory store.
    #[napi(factory)]
    pub fn memory() -> Self {
        NativeSessionStore {
            backing: Backing::Memory(Arc::new(MemStore::new())),
        }
    }

    /// Sessions in the PostgreSQL database at `url` (its tables created or migrated now),
    /// in `schema` when given; the writer lease expires `leaseTtlMs` after its holder stops
    /// renewing it (default 30 s). Agents given the same store share one pool and its leases.
    #[napi(factory)]
    pub fn postgres(
        url: String,
        schema: Option<String>,
        lease_ttl_ms: Option<u32>,
    ) -> napi::Result<Self> {
        let mut builder = PgStore::builder(url);
        if let Some(schema) = schema {
            builder = builder.schema(schema);
        }
        if let Some(ms) = lease_ttl_ms {
            builder = builder.lease_ttl(std::time::Duration::from_millis(u64::from(ms)));
        }
        let store = builder
            .connect()
            .map_err(|e| napi::Error::from_reason(e.to_string()))?;
        Ok(NativeSessionStore {
            backing: Backing::Postgres(Arc::new(store)),
        })
    }

    /// The Rust side of a host (JS object) store: its leases and fallback spec snapshots.
    #[napi(factory)]
    pub fn host() -> Self {
        NativeSessionStore {
            backing: Backing::Host(Arc::default()),
        }
    }

    /// Queues a delivery for the workers (`archmax worker`) of a PostgreSQL store: its
    /// number in the queue. `variables` is an object (seeded locked), `workflow` the
    /// workflow whose workers serve it (any worker when null).
    #[napi(ts_return_type = "Promise<number>")]
    pub async fn enqueue_delivery(
        &self,
        session_id: String,
        trigger: String,
        #[napi(ts_arg_type = "Record<string, unknown> | null")] variables: Option<Value>,
        message: Option<String>,
        workflow: Option<String>,
    ) -> napi::Result<i64> {
        let store = self.postgres_only("enqueueDelivery")?;
        let variables = match variables {
            None | Some(Value::Null) => serde_json::Map::new(),
            Some(Value::Object(map)) => map,
            Some(other) => {
                return Err(napi::Error::new(
                    napi::Status::InvalidArg,
                    format!(
                        "enqueueDelivery: 'variables' must be an object, got {}",
                        kind(&other)
                    ),
                ));
            }
        };
        let trigger = trigger.trim().to_string();
        if trigger.is_empty() {
            return Err(napi::Error::new(
                napi::Status::InvalidArg,
                format!(
                    "enqueueDelivery: a trigger id is required to deliver to session '{session_id}'"
                ),
            ));
        }
        let delivery = archmax_store_pg::Delivery {
            session: session_id,
            workflow,
            trigger,
            variables,
            message,
        };
        napi::bindgen_prelude::spawn_blocking(move || store.enqueue_delivery(&delivery))
            .await
            .map_err(|e| napi::Error::from_reason(e.to_string()))?
            .map_err(|e| napi::Error::from_reason(e.to_string()))
    }

    /// A queued delivery of a PostgreSQL store: `{ status, outcome, error }` (`status`
    /// `queued`, `claimed`, `applied` or `done`; `outcome` the Outcome its turn settled
    /// with, `error` the refusal's text), `null` when there is none.
    #[napi(
        ts_return_type = "Promise<{ status: 'queued' | 'claimed' | 'applied' | 'done', outcome: Record<string, unknown> | null, error: string | null } | null>"
    )]
    pub async fn delivery(&self, seq: i64) -> napi::Result<Value> {
        let store = self.postgres_only("delivery")?;
        let record = napi::bindgen_prelude::spawn_blocking(move || store.delivery(seq))
            .await
            .map_err(|e| napi::Error::from_reason(e.to_string()))?
            .map_err(|e| napi::Error::from_reason(e.to_string()))?;
        Ok(record.map_or(
            Value::Null,
            |r| json!({ "status": r.status, "outcome": r.outcome, "error": r.error }),
        ))
    }
}

impl NativeSessionStore {
    fn postgres_only(&self, what: &str) -> napi::Result<Arc<PgStore>> {
        match &self.backing {
            Backing::Postgres(store) => Ok(Arc::clone(store)),
            _ => Err(napi::Error::new(
                napi::Status::GenericFailure,
                format!(
                    "{what} needs a PostgreSQL session store (createPostgresSessionStore): the workers serve the queue from its database"
                ),
            )),
        }
    }
}

/// The session store an agent assembles with, and what `dispose` must release.
pub(crate) struct StoreChoice {
    chosen: Mutex<Option<Chosen>>,
    gate: Arc<Gate>,
}

enum Chosen {
    Filesystem(PathBuf),
    Memory(Arc<MemStore>),
    Postgres(Arc<PgStore>),
    Host {
        shared: Arc<HostShared>,
        f: Slot<AsyncJsFn>,
        specs: bool,
    },
}

impl StoreChoice {
    /// The default (the filesystem store at `<root>/sessions`); records the calling thread,
    /// the JS main thread, as the one a host store must never block.
    pub(crate) fn new() -> Self {
        StoreChoice {
            chosen: Mutex::new(None),
            gate: Arc::new(Gate::new()),
        }
    }

    fn chosen(&self) -> std::sync::MutexGuard<'_, Option<Chosen>> {
        self.chosen.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Chooses `store` for the next [`build`](Self::build). A host store needs `handler`,
    /// which answers its method calls (else `Err`, why); `host_specs` says whether the host
    /// keeps spec snapshots.
    pub(crate) fn choose(
        &self,
        store: &NativeSessionStore,
        handler: Option<AsyncJsFn>,
        host_specs: Option<bool>,
    ) -> Result<(), &'static str> {
        let chosen = match (&store.backing, handler) {
            (Backing::Filesystem(dir), _) => Chosen::Filesystem(dir.clone()),
            (Backing::Memory(m), _) => Chosen::Memory(Arc::clone(m)),
            (Backing::Postgres(p), _) => Chosen::Postgres(Arc::clone(p)),
            (Backing::Host(shared), Some(f)) => Chosen::Host {
                shared: Arc::clone(shared),
                f: Arc::new(RwLock::new(Some(Arc::new(f)))),
                specs: host_specs.unwrap_or(false),
            },
            (Backing::Host(_), None) => {
                return Err("a host session store needs its method handler");
            }
        };
        *self.chosen() = Some(chosen);
        Ok(())
    }

    /// The store to assemble with; the workspace's `<root>/sessions` unless one was chosen.
    pub(crate) fn build(&self, root: &Path) -> Arc<dyn SessionStore> {
        match &*self.chosen() {
            None => Arc::new(FsStore::new(root)),
            Some(Chosen::Filesystem(dir)) => Arc::new(FsStore::with_sessions_dir(dir)),
            Some(Chosen::Memory(store)) => Arc::clone(store) as Arc<dyn SessionStore>,
            Some(Chosen::Postgres(store)) => Arc::clone(store) as Arc<dyn SessionStore>,
            Some(Chosen::Host { shared, f, specs }) => Arc::new(JsStore::new(
                Arc::clone(f),
                Arc::clone(&self.gate),
                Arc::clone(shared),
                *specs,
            )),
        }
    }

    /// Whether the chosen store is a JS object (whose calls block a worker thread).
    pub(crate) fn is_host(&self) -> bool {
        matches!(&*self.chosen(), Some(Chosen::Host { .. }))
    }

    /// Releases the host store's callback and every call waiting for it.
    pub(crate) fn close(&self) {
        self.gate.close();
        if let Some(Chosen::Host { f, .. }) = &*self.chosen()
            && let Ok(mut g) = f.write()
        {
            *g = None;
        }
    }
}

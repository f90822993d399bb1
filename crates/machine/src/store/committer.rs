//! Queued commits: the filesystem store's own writer thread.
//!
//! The thread commits through [`TwoPhaseCommit`], the two halves of a commit around the
//! shared sync, which the filesystem store (`fs.rs`) implements.
//!
//! A turn's commit through [`SessionStore::commit_queued`](super::SessionStore::commit_queued)
//! is handed to one thread per store, which takes every commit waiting at that moment,
//! writes each step, makes them all durable with one sync ([`GroupSync::durable_all`]),
//! then writes their caches and answers each commit's [`CommitReceipt`]. A thousand
//! sessions committing at once thus cost one thread hand-off and a few syncs, not a
//! thousand blocking-pool threads parked on a sync each (what `blocking::run` around
//! [`SessionStore::commit`](super::SessionStore::commit) costs).
//!
//! A commit still returns only once its own step is durable: the receipt is answered after
//! the sync that covers its write. Commits of one session never share a batch (a turn
//! awaits each commit before the next, and the lease keeps other writers out), but a batch
//! that held two would be split there, so each write sees the one before it finished.
//!
//! The thread starts at the first queued commit and ends when the store is dropped (its
//! channel closes); a job holds the store only while it runs.
//!
//! [`GroupSync::durable_all`]: super::group_sync::GroupSync::durable_all

use std::collections::HashSet;
use std::future::Future;
use std::pin::Pin;
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::oneshot;

use super::group_sync::GroupSync;
use super::{OwnedStep, SessionId, Step, StoreError};

/// At most this many commits share one batch (and so one sync), which bounds how long the
/// first of them waits behind the others' writes.
const MAX_BATCH: usize = 256;

/// The outcome of a queued commit, with the step back (its state for the caller to keep as
/// the committed one, a failed commit's messages to stay pending with the caller).
type Answer = (Result<(), StoreError>, OwnedStep);

/// A queued commit's answer, to await: the commit is durable when it says `Ok`. Made by
/// the filesystem store's commit thread, or by any store whose commit answers later
/// without a thread waiting for it ([`CommitReceipt::new`]: a host's JS store).
pub struct CommitReceipt {
    answer: Pin<Box<dyn Future<Output = Settled> + Send>>,
}

/// How a commit settled: its result, and the step back (`None` only when the store lost it,
/// which fails the commit).
pub type Settled = (Result<(), StoreError>, Option<OwnedStep>);

impl std::fmt::Debug for CommitReceipt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CommitReceipt").finish_non_exhaustive()
    }
}

impl CommitReceipt {
    /// The receipt of a commit that `answer` settles: its result, and the step back as
    /// [`SessionStore::commit_owned`](super::SessionStore::commit_owned) gives it (`None`
    /// only when the store lost it, which must fail the commit).
    pub fn new(answer: impl Future<Output = Settled> + Send + 'static) -> Self {
        Self {
            answer: Box::pin(answer),
        }
    }

    /// Waits for the commit: its result, and the step back (`None` only when the store's
    /// writer is gone, which fails the commit).
    pub async fn wait(self) -> Settled {
        self.answer.await
    }
}

/// A store whose commit the thread runs in two halves around one sync shared by a run of
/// commits: the filesystem store (`fs.rs`).
pub(super) trait TwoPhaseCommit: Send + Sync + 'static {
    /// A step written, not yet durable: what the commit's second half needs.
    type Written;
    /// A commit's first half: the step's messages and checkpoint line written, not yet
    /// durable.
    fn write_step(&self, id: &SessionId, step: Step<'_>) -> Result<Self::Written, StoreError>;
    /// The file a written step went to, which the shared sync makes durable.
    fn written_file(written: &Self::Written) -> &std::fs::File;
    /// That file's path, for an error.
    fn written_path(written: &Self::Written) -> &std::path::Path;
    /// The group commit the store's commits share.
    fn group(&self) -> &GroupSync;
    /// A commit's second half, once its write is durable.
    fn finish(&self, written: Self::Written) -> Result<(), StoreError>;
}

struct Job<S> {
    store: Arc<S>,
    id: SessionId,
    step: OwnedStep,
    answer: oneshot::Sender<Answer>,
}

/// One store's commit thread (see the module doc), started on first use.
#[derive(Debug)]
pub(crate) struct Committer<S> {
    jobs: Mutex<Option<Sender<Job<S>>>>,
}

impl<S> Default for Committer<S> {
    fn default() -> Self {
        Self {
            jobs: Mutex::new(None),
        }
    }
}

impl<S: TwoPhaseCommit> Committer<S> {
    /// Queues a commit of `step` on `store`'s thread; the step back when the thread cannot
    /// be started (the caller then commits in place).
    pub(crate) fn queue(
        &self,
        store: Arc<S>,
        id: SessionId,
        step: OwnedStep,
    ) -> Result<CommitReceipt, OwnedStep> {
        let tx = {
            let mut jobs = self.jobs.lock().unwrap_or_else(PoisonError::into_inner);
            match &*jobs {
                Some(tx) => tx.clone(),
                None => {
                    let (tx, rx) = mpsc::channel();
                    let started = std::thread::Builder::new()
                        .name("archmax-commits".to_owned())
                        .spawn(move || serve(&rx));
                    if started.is_err() {
                        return Err(step);
                    }
                    *jobs = Some(tx.clone());
                    tx
                }
            }
        };
        let (answer, receipt) = oneshot::channel::<Answer>();
        let sid = id.as_str().to_owned();
        let receipt = CommitReceipt::new(async move {
            match receipt.await {
                Ok((result, step)) => (result, Some(step)),
                Err(_) => (
                    Err(StoreError::Io {
                        id: sid,
                        op: "commit to",
                        path: std::path::PathBuf::from(super::layout::TRANSCRIPT_FILE),
                        source: std::io::Error::other("the session store's commit thread stopped"),
                    }),
                    None,
                ),
            }
        });
        let job = Job {
            store,
            id,
            step,
            answer,
        };
        tx.send(job)
            .map(|()| receipt)
            .map_err(|mpsc::SendError(job)| {
                // The thread is gone (it never panics, but if it did): start another next time.
                *self.jobs.lock().unwrap_or_else(PoisonError::into_inner) = None;
                job.step
            })
    }
}

/// The thread: batches of whatever is waiting, until the store is dropped.
fn serve<S: TwoPhaseCommit>(jobs: &Receiver<Job<S>>) {
    crate::blocking::disk_thread();
    while let Ok(first) = jobs.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match jobs.try_recv() {
                Ok(job) => batch.push(job),
                Err(_) => break,
            }
        }
        let mut rest = batch.into_iter().peekable();
        while rest.peek().is_some() {
            // A run of commits of distinct sessions shares one sync.
            let mut seen = HashSet::new();
            let mut run = Vec::new();
            while let Some(job) = rest.next_if(|j| seen.insert(j.id.as_str().to_owned())) {
                run.push(job);
            }
            commit_run(run);
        }
    }
}

/// Writes each commit of `run`, one sync for all of them, then their second halves.
fn commit_run<S: TwoPhaseCommit>(run: Vec<Job<S>>) {
    let Some(store) = run.first().map(|j| Arc::clone(&j.store)) else {
        return;
    };
    let written: Vec<_> = run
        .into_iter()
        .map(|job| {
            let written = job.store.write_step(&job.id, job.step.as_step());
            (job, written)
        })
        .collect();
    let files: Vec<&std::fs::File> = written
        .iter()
        .filter_map(|(_, w)| w.as_ref().ok().map(S::written_file))
        .collect();
    let synced = store.group().durable_all(&files);
    for (job, written) in written {
        let result = written.and_then(|w| match &synced {
            Ok(()) => store.finish(w),
            Err(e) => Err(StoreError::io(
                job.id.as_str(),
                "append to",
                S::written_path(&w),
            )(std::io::Error::new(e.kind(), e.to_string()))),
        });
        // A durable step's messages are not needed back (`SessionStore::commit_owned`):
        // they are freed here, not on the turn's thread (Node's, for a JS-driven turn).
        let mut step = job.step;
        if result.is_ok() {
            step.new_messages = Vec::new();
        }
        // The caller may have stopped waiting (its turn was dropped): nothing to answer.
        let _ = job.answer.send((result, step));
    }
}

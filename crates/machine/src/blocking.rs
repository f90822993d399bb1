//! Blocking IO off the turn's thread.
//!
//! A turn driven from JS is polled on Node's main thread; a filesystem store's reads, the
//! writer lease, the file tools and the offloader touch the disk, and on a busy disk (other
//! sessions' `fdatasync`s keep the journal committing) a file creation can wait for
//! milliseconds. [`run`] hands such work to a small pool of threads of its own and awaits
//! it, so the turn's thread (and the host's event loop) is free meanwhile. Work that only
//! touches memory (the memory store) stays where it is: see each caller.
//!
//! Why not tokio's blocking pool: with a thousand sessions at once, bounding it took a
//! semaphore, and a turn that waited for a permit was woken twice per piece of work (the
//! permit, then the result); a JS-driven turn pays a poll of its state machine on the JS
//! thread for every wake-up. Here a piece of work is queued at once (the queue is the
//! bound) and its turn is woken once, by its result. The pool's threads are started once,
//! never on demand from the thread that asked, and live as long as the process.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex, OnceLock, PoisonError};

/// How many pieces of blocking work run at once. With a filesystem store's commits on its
/// own commit thread, what runs here is short (a file tool, a lease, a load).
const WORKERS: usize = 16;

type Job = Box<dyn FnOnce() + Send>;

/// The pool's queue; `None` when not one thread could be started (work then goes to
/// tokio's blocking pool).
fn pool() -> Option<&'static Sender<Job>> {
    static POOL: OnceLock<Option<Sender<Job>>> = OnceLock::new();
    POOL.get_or_init(|| {
        let (tx, rx) = mpsc::channel::<Job>();
        let rx = Arc::new(Mutex::new(rx));
        let started = (0..WORKERS)
            .filter(|i| {
                let rx = Arc::clone(&rx);
                std::thread::Builder::new()
                    .name(format!("archmax-io-{i}"))
                    .spawn(move || serve(&rx))
                    .is_ok()
            })
            .count();
        (started > 0).then_some(tx)
    })
    .as_ref()
}

/// Marks the calling thread, one of the harness's own (a script's thread, a tokio worker
/// polling a turn; the threads that wait on the disk through [`disk_thread`]), as
/// background work for the OS scheduler: on Linux `SCHED_BATCH`, under which waking it
/// never preempts the thread that woke it. That thread is usually Node's main thread, whose event loop every
/// JS-driven turn and the host share: with the default policy, each answer it handed to a
/// worker let the worker take its CPU at once, for up to 16 ms (`perf`'s `sched_switch`
/// under `scripts/bench-sessions.sh`). The thread keeps its fair share of the CPU; only when
/// it runs after a wake-up changes. Done once per thread; elsewhere, or when the call is
/// refused, nothing changes. Never called on the JS thread.
pub fn background_thread() {
    mark(false);
}

/// [`background_thread`], and a smaller share of a busy CPU (nice [`DISK_NICE`]): for the
/// threads that wait on the disk (the blocking pool, the commit thread). When file
/// operations turn slow (ext4 without a journal skipping recently freed inodes, ~1 ms per
/// file created), sixteen of them in the kernel at once took turns with Node's main thread
/// at every scheduler tick and held it off for 50-75 ms at a time; at nice 10 each weighs a
/// tenth of it.
pub(crate) fn disk_thread() {
    mark(true);
}

/// The nice value of [`disk_thread`]s.
const DISK_NICE: i32 = 10;

fn mark(disk: bool) {
    thread_local! {
        static MARKED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
    }
    if !MARKED.with(|m| m.replace(true)) {
        batch_policy();
        #[cfg(target_os = "linux")]
        if disk {
            // On Linux a priority set for "this process" (no pid) is the calling thread's.
            let _ = rustix::process::setpriority_process(None, DISK_NICE);
        }
        #[cfg(not(target_os = "linux"))]
        let _ = disk;
    }
}

#[cfg(target_os = "linux")]
#[allow(unsafe_code)]
fn batch_policy() {
    let param = libc::sched_param { sched_priority: 0 };
    // SAFETY: `sched_setscheduler` reads `param`, a valid `sched_param` that outlives the
    // call; pid 0 names the calling thread. A refusal leaves the policy as it was.
    let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_BATCH, &param) };
}

#[cfg(not(target_os = "linux"))]
fn batch_policy() {}

/// A worker: runs each job it takes, until the queue is gone.
fn serve(jobs: &Mutex<Receiver<Job>>) {
    disk_thread();
    loop {
        let next = jobs.lock().unwrap_or_else(PoisonError::into_inner).recv();
        match next {
            Ok(job) => job(),
            Err(_) => return,
        }
    }
}

/// Runs `work` on a blocking thread when there is a runtime whose turn would otherwise
/// wait on it (else here); its output, or why it did not finish (the work panicked).
pub(crate) async fn run<T, F>(work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return Ok(work());
    };
    let (tx, rx) = tokio::sync::oneshot::channel();
    let job: Job = Box::new(move || {
        let _ = tx.send(catch_unwind(AssertUnwindSafe(work)));
    });
    let queued = match pool() {
        Some(jobs) => jobs.send(job).map_err(|mpsc::SendError(job)| job),
        None => Err(job),
    };
    if let Err(job) = queued {
        // No pool thread: tokio's blocking pool runs it (its result reaches `rx` alike).
        drop(handle.spawn_blocking(job));
    }
    match rx.await {
        Ok(Ok(out)) => Ok(out),
        Ok(Err(panic)) => Err(format!(
            "blocking work did not finish: it panicked: {}",
            panic_text(panic.as_ref())
        )),
        Err(_) => Err("blocking work did not finish: its thread stopped".to_string()),
    }
}

fn panic_text(panic: &(dyn std::any::Any + Send)) -> &str {
    panic
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| panic.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(no message)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    /// Far more pieces of work than threads, each waiting a little: every one is answered
    /// (no lost wake-up), and no more than the pool's threads ran at once.
    #[tokio::test(flavor = "current_thread")]
    async fn many_pieces_of_work_all_finish_on_a_bounded_pool() {
        use std::sync::atomic::{AtomicUsize, Ordering};
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let tasks: Vec<_> = (0..200usize)
            .map(|i| {
                let (running, most) = (Arc::clone(&running), Arc::clone(&most));
                tokio::spawn(run(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    std::thread::sleep(Duration::from_millis(2));
                    running.fetch_sub(1, Ordering::SeqCst);
                    i * 2
                }))
            })
            .collect();
        let all = tokio::time::timeout(Duration::from_secs(30), async {
            let mut out = Vec::new();
            for t in tasks {
                out.push(t.await.expect("task").expect("work"));
            }
            out
        })
        .await
        .expect("every piece of work is answered");
        assert_eq!(all, (0..200).map(|i| i * 2).collect::<Vec<_>>());
        let most = most.load(Ordering::SeqCst);
        assert!((1..=WORKERS).contains(&most), "{most} ran at once");
    }

    /// A piece of work that panics is that caller's error; the pool goes on serving.
    #[tokio::test(flavor = "current_thread")]
    async fn a_panicking_piece_of_work_fails_alone() {
        let failed = run(|| -> u32 { panic!("disk on fire") }).await;
        let e = failed.expect_err("the panic is an error");
        assert!(e.contains("panicked: disk on fire"), "{e}");
        for _ in 0..(2 * WORKERS) {
            assert_eq!(run(|| 7).await, Ok(7));
        }
    }

    /// Work started from inside a piece of work (no runtime there) runs in place: a full
    /// pool never waits on itself.
    #[tokio::test(flavor = "current_thread")]
    async fn nested_work_runs_in_place() {
        let tasks: Vec<_> = (0..(2 * WORKERS))
            .map(|_| {
                tokio::spawn(run(|| {
                    let inner = block_on_here(run(|| 5));
                    inner.expect("inner") + 1
                }))
            })
            .collect();
        for t in tasks {
            let out = tokio::time::timeout(Duration::from_secs(30), t)
                .await
                .expect("no deadlock")
                .expect("task");
            assert_eq!(out, Ok(6));
        }
    }

    /// Polls `fut` to its end on this thread (no runtime: `run` works in place).
    fn block_on_here<F: std::future::Future>(fut: F) -> F::Output {
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        let mut fut = std::pin::pin!(fut);
        loop {
            if let std::task::Poll::Ready(out) = fut.as_mut().poll(&mut cx) {
                return out;
            }
        }
    }
}

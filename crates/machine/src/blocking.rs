//! Blocking IO off the turn's thread.
//!
//! A turn driven from JS is polled on Node's main thread; a filesystem store's reads, the
//! writer lease, the file tools and the offloader touch the disk, and on a busy disk (other
//! sessions' `fdatasync`s keep the journal committing) a file creation can wait for
//! milliseconds. [`run`] hands such work to tokio's blocking pool and awaits it, so the
//! turn's thread (and the host's event loop) is free meanwhile. Work that only touches
//! memory (the memory store) stays where it is: see each caller.

/// How many pieces of blocking work run at once. Each one beyond the pool's idle threads
/// makes tokio start a thread, on the thread that asked (Node's, for a JS-driven turn);
/// a bound keeps the pool small and its threads reused. With a filesystem store's group
/// commit, more threads buy little: one sync covers every commit waiting for it.
const MAX_AT_ONCE: usize = 64;
static AT_ONCE: tokio::sync::Semaphore = tokio::sync::Semaphore::const_new(MAX_AT_ONCE);

/// Runs `work` on a blocking thread when there is a runtime to lend one (else here); its
/// output, or why it did not finish (the work panicked).
pub(crate) async fn run<T, F>(work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    let Ok(handle) = tokio::runtime::Handle::try_current() else {
        return Ok(work());
    };
    let _permit = AT_ONCE.acquire().await.map_err(|e| e.to_string())?;
    handle
        .spawn_blocking(work)
        .await
        .map_err(|e| format!("blocking work did not finish: {e}"))
}

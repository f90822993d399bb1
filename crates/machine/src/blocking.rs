//! Blocking IO off the turn's thread.
//!
//! A turn driven from JS is polled on Node's main thread; a filesystem store's reads, the
//! writer lease, the file tools and the offloader touch the disk, and on a busy disk (other
//! sessions' `fdatasync`s keep the journal committing) a file creation can wait for
//! milliseconds. [`run`] hands such work to tokio's blocking pool and awaits it, so the
//! turn's thread (and the host's event loop) is free meanwhile. Work that only touches
//! memory (the memory store) stays where it is: see each caller.

/// Runs `work` on a blocking thread when there is a runtime to lend one (else here); its
/// output, or why it did not finish (the work panicked).
pub(crate) async fn run<T, F>(work: F) -> Result<T, String>
where
    T: Send + 'static,
    F: FnOnce() -> T + Send + 'static,
{
    match tokio::runtime::Handle::try_current() {
        Ok(handle) => handle
            .spawn_blocking(work)
            .await
            .map_err(|e| format!("blocking work did not finish: {e}")),
        Err(_) => Ok(work()),
    }
}

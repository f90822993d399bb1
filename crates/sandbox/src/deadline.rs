//! The wall-clock deadline of a run, and the allocator that enforces it.
//!
//! QuickJS consults its interrupt handler once every 10 000 polls (bytecode jumps and calls). A
//! builtin that works for milliseconds per call without polling (a `'x'.repeat(1e7)`, a join
//! of a million elements, a BigInt product near the 1 Mbit maximum) called in a loop therefore
//! runs 10 000 such calls, tens of seconds, between two checks. [`DeadlineAllocator`] closes that
//! gap for every builtin that allocates: once the deadline has passed it refuses to grow memory,
//! so the builtin fails at once, and the next poll, at most 10 000 cheap steps later, ends the
//! run through the interrupt handler.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use rquickjs::allocator::{Allocator, RustAllocator};

/// Sentinel for "no deadline armed".
const NO_DEADLINE: u64 = u64::MAX;

/// The deadline of the current run, shared by the interrupt handler, the allocator and the
/// host's check function.
#[derive(Debug)]
pub(crate) struct Deadline {
    base: Instant,
    deadline_ns: AtomicU64,
    fired: AtomicBool,
}

impl Deadline {
    pub(crate) fn new() -> Deadline {
        Deadline {
            base: Instant::now(),
            deadline_ns: AtomicU64::new(NO_DEADLINE),
            fired: AtomicBool::new(false),
        }
    }

    fn now_ns(&self) -> u64 {
        u64::try_from(self.base.elapsed().as_nanos()).unwrap_or(NO_DEADLINE - 1)
    }

    /// Arms the deadline `timeout` from now and clears the fired flag.
    pub(crate) fn arm(&self, timeout: Duration) {
        self.fired.store(false, Ordering::Relaxed);
        let timeout_ns = u64::try_from(timeout.as_nanos()).unwrap_or(NO_DEADLINE / 2);
        let deadline = self
            .now_ns()
            .saturating_add(timeout_ns)
            .min(NO_DEADLINE - 1);
        self.deadline_ns.store(deadline, Ordering::Relaxed);
    }

    /// Disarms the deadline; answers whether it fired during the run.
    pub(crate) fn disarm(&self) -> bool {
        self.deadline_ns.store(NO_DEADLINE, Ordering::Relaxed);
        self.fired.load(Ordering::Relaxed)
    }

    /// Whether an armed deadline has passed; records that it fired.
    pub(crate) fn passed(&self) -> bool {
        let deadline = self.deadline_ns.load(Ordering::Relaxed);
        if deadline == NO_DEADLINE || self.now_ns() < deadline {
            return false;
        }
        self.fired.store(true, Ordering::Relaxed);
        true
    }

    #[cfg(test)]
    pub(crate) fn fired(&self) -> bool {
        self.fired.load(Ordering::Relaxed)
    }
}

/// QuickJS's allocator: Rust's, refusing to grow memory once the run's deadline has passed.
pub(crate) struct DeadlineAllocator {
    deadline: Arc<Deadline>,
}

impl DeadlineAllocator {
    pub(crate) fn new(deadline: Arc<Deadline>) -> DeadlineAllocator {
        DeadlineAllocator { deadline }
    }
}

// The one `unsafe` of the crate: rquickjs's allocator trait is unsafe to implement.
// SAFETY: every call is forwarded to `RustAllocator` unchanged, or answered with a null pointer,
// which the trait allows for `alloc`, `calloc` and `realloc` (a refused `realloc` leaves the old
// block in place, as C's does).
#[allow(unsafe_code)]
unsafe impl Allocator for DeadlineAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if self.deadline.passed() {
            return std::ptr::null_mut();
        }
        RustAllocator.alloc(size)
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        if self.deadline.passed() {
            return std::ptr::null_mut();
        }
        RustAllocator.calloc(count, size)
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        // SAFETY: `ptr` came from this allocator, i.e. from `RustAllocator`.
        unsafe { RustAllocator.dealloc(ptr) }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` (when not null) came from `RustAllocator`.
        let grows = ptr.is_null() || unsafe { RustAllocator::usable_size(ptr) } < new_size;
        if grows && self.deadline.passed() {
            return std::ptr::null_mut();
        }
        // SAFETY: as above.
        unsafe { RustAllocator.realloc(ptr, new_size) }
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: `ptr` came from `RustAllocator`.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

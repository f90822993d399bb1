//! The wall-clock deadline of a run, and the allocator that enforces it and the memory limit.
//!
//! QuickJS consults its interrupt handler once every 10 000 polls (bytecode jumps and calls). A
//! builtin that works for milliseconds per call without polling (a `'x'.repeat(1e7)`, a join
//! of a million elements, a BigInt product near the 1 Mbit maximum) called in a loop therefore
//! runs 10 000 such calls, tens of seconds, between two checks. [`LimitAllocator`] closes that
//! gap for every builtin that allocates: once the deadline has passed it refuses to grow memory,
//! so the builtin fails at once, and the next poll, at most 10 000 cheap steps later, ends the
//! run through the interrupt handler.
//!
//! The same allocator enforces the memory limit (QuickJS's own limit is left off), so that every
//! refused allocation goes through [`LimitAllocator::refuse`]. QuickJS does not survive every
//! refusal by itself: `resize_properties` (an object outgrowing its property table) takes the
//! object's shape off the GC list, reallocates it, and, when that fails, throws `out of memory`
//! before putting the shape back. Building that error object can start a GC pass, which then
//! walks the object, reaches its unlisted shape and unlinks it again (`list_del` through a null
//! pointer: the process dies with SIGSEGV). So a refusal first switches QuickJS's automatic GC
//! off (the GC threshold goes to `usize::MAX`); the run that saw a refusal has broken a limit,
//! and the sandbox discards its runtime afterwards (`Heap::take_refused`), GC-less state and
//! all. See design/decisions/0240-no-gc-after-a-refused-allocation.md.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use rquickjs::allocator::{Allocator, RustAllocator};
use rquickjs::qjs;

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

/// What the sandbox shares with its runtime's [`LimitAllocator`]: the memory limit, the runtime
/// served, and whether an allocation was refused since the last look.
#[derive(Debug)]
pub(crate) struct Heap {
    /// Bytes the runtime may hold at once; 0 while the runtime is being built (no limit).
    limit: AtomicUsize,
    /// The runtime the allocator serves, once known (null before).
    runtime: AtomicPtr<qjs::JSRuntime>,
    refused: AtomicBool,
}

impl Heap {
    pub(crate) fn new() -> Heap {
        Heap {
            limit: AtomicUsize::new(0),
            runtime: AtomicPtr::new(std::ptr::null_mut()),
            refused: AtomicBool::new(false),
        }
    }

    /// Names the runtime the allocator serves and puts its memory limit (`0`: none) in force.
    pub(crate) fn attach(&self, runtime: *mut qjs::JSRuntime, limit: usize) {
        self.runtime.store(runtime, Ordering::Relaxed);
        self.limit.store(limit, Ordering::Relaxed);
    }

    /// Whether an allocation was refused since the last call; clears the record.
    pub(crate) fn take_refused(&self) -> bool {
        self.refused.swap(false, Ordering::Relaxed)
    }
}

/// QuickJS's allocator: Rust's, refusing to grow memory beyond the memory limit or once the
/// run's deadline has passed, and switching the runtime's automatic GC off before it refuses.
pub(crate) struct LimitAllocator {
    deadline: Arc<Deadline>,
    heap: Arc<Heap>,
    /// Bytes held through this allocator (usable sizes).
    used: usize,
}

impl LimitAllocator {
    pub(crate) fn new(deadline: Arc<Deadline>, heap: Arc<Heap>) -> LimitAllocator {
        LimitAllocator {
            deadline,
            heap,
            used: 0,
        }
    }

    /// Whether `extra` more bytes may be held now.
    fn admits(&self, extra: usize) -> bool {
        if self.deadline.passed() {
            return false;
        }
        let limit = self.heap.limit.load(Ordering::Relaxed);
        limit == 0 || self.used.saturating_add(extra) <= limit
    }

    /// Records the refusal and turns the runtime's automatic GC off, then answers null.
    #[allow(unsafe_code)]
    fn refuse(&self) -> *mut u8 {
        self.heap.refused.store(true, Ordering::Relaxed);
        let runtime = self.heap.runtime.load(Ordering::Relaxed);
        if !runtime.is_null() {
            // SAFETY: `runtime` is the runtime this allocator belongs to (`Heap::attach`), and
            // QuickJS calls its allocator only while that runtime's struct is allocated (freeing
            // it is the runtime's last call here). We are inside one of its allocation calls,
            // on its thread; `JS_SetGCThreshold` only stores the threshold field.
            unsafe { qjs::JS_SetGCThreshold(runtime, qjs::size_t::MAX) };
        }
        std::ptr::null_mut()
    }
}

// rquickjs's allocator trait is unsafe to implement.
// SAFETY: every block comes from `RustAllocator` and goes back to it unchanged; a refusal answers
// a null pointer, which the trait allows for `alloc`, `calloc` and `realloc` (a refused `realloc`
// leaves the old block in place, as C's does). `used` follows the usable size of every block
// handed out and taken back.
#[allow(unsafe_code)]
unsafe impl Allocator for LimitAllocator {
    fn alloc(&mut self, size: usize) -> *mut u8 {
        if !self.admits(size) {
            return self.refuse();
        }
        let ptr = RustAllocator.alloc(size);
        if !ptr.is_null() {
            // SAFETY: `ptr` was just allocated by `RustAllocator`.
            self.used += unsafe { RustAllocator::usable_size(ptr) };
        }
        ptr
    }

    fn calloc(&mut self, count: usize, size: usize) -> *mut u8 {
        if !self.admits(count.saturating_mul(size)) {
            return self.refuse();
        }
        let ptr = RustAllocator.calloc(count, size);
        if !ptr.is_null() {
            // SAFETY: `ptr` was just allocated by `RustAllocator`.
            self.used += unsafe { RustAllocator::usable_size(ptr) };
        }
        ptr
    }

    unsafe fn dealloc(&mut self, ptr: *mut u8) {
        // SAFETY: `ptr` came from this allocator, i.e. from `RustAllocator`.
        let size = unsafe { RustAllocator::usable_size(ptr) };
        self.used = self.used.saturating_sub(size);
        // SAFETY: as above.
        unsafe { RustAllocator.dealloc(ptr) }
    }

    unsafe fn realloc(&mut self, ptr: *mut u8, new_size: usize) -> *mut u8 {
        if ptr.is_null() {
            return self.alloc(new_size);
        }
        // SAFETY: `ptr` came from this allocator, i.e. from `RustAllocator`.
        let old_size = unsafe { RustAllocator::usable_size(ptr) };
        if old_size < new_size && !self.admits(new_size - old_size) {
            return self.refuse();
        }
        // SAFETY: as above.
        let new_ptr = unsafe { RustAllocator.realloc(ptr, new_size) };
        if !new_ptr.is_null() {
            // SAFETY: `new_ptr` was just allocated by `RustAllocator`.
            let size = unsafe { RustAllocator::usable_size(new_ptr) };
            self.used = self.used.saturating_sub(old_size) + size;
        }
        new_ptr
    }

    unsafe fn usable_size(ptr: *mut u8) -> usize {
        // SAFETY: `ptr` came from `RustAllocator`.
        unsafe { RustAllocator::usable_size(ptr) }
    }
}

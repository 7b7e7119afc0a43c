//! A global allocator that counts allocations (and live bytes), for the tests that prove a path allocates
//! nothing. Each such test binary installs it with
//! `#[global_allocator] static GLOBAL: Counting = Counting;` and holds one test, so no other
//! test's allocations are counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

/// The system allocator, counting every allocation in [`ALLOCATIONS`].
pub struct Counting;

/// Allocations made through [`Counting`] so far.
pub static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Allocations made through [`Counting`] by this thread.
    static THREAD_ALLOCATIONS: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

/// Allocations this thread made so far: unlike [`ALLOCATIONS`], blind to the test harness's
/// own threads.
#[allow(dead_code)] // Not every test binary that counts allocations needs it.
pub fn thread_allocations() -> usize {
    THREAD_ALLOCATIONS.with(std::cell::Cell::get)
}

/// Bytes allocated through [`Counting`] and not freed yet.
#[allow(dead_code)] // Not every test binary that counts allocations weighs them.
pub static LIVE_BYTES: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // A const thread-local allocates nothing; one being torn down is not counted.
        let _ = THREAD_ALLOCATIONS.try_with(|count| count.set(count.get() + 1));
        LIVE_BYTES.fetch_add(layout.size(), Ordering::SeqCst);
        // SAFETY: the caller's contract is passed through.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size(), Ordering::SeqCst);
        // SAFETY: the caller's contract is passed through.
        unsafe { System.dealloc(ptr, layout) }
    }
}

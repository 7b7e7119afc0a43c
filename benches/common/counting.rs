//! A global allocator that counts live heap bytes while [`COUNTING`] is set, for the memory
//! tables (`memory.rs`, `queue.rs`). A benchmark installs it with
//! `#[global_allocator] static GLOBAL: Counting = Counting;`.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicBool, AtomicIsize, Ordering};

/// The system allocator, counting live bytes in [`LIVE_BYTES`] while [`COUNTING`].
pub struct Counting;

/// Heap bytes allocated and not yet freed, over the whole process, while [`COUNTING`].
pub static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

/// Whether allocations are counted: only in the memory cases, so the shared counter's cache
/// line does not slow the speed loops.
pub static COUNTING: AtomicBool = AtomicBool::new(false);

// SAFETY: defers to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed through.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if COUNTING.load(Ordering::Relaxed) {
            LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        }
        // SAFETY: the caller's contract is passed through.
        unsafe { System.dealloc(ptr, layout) }
    }
}

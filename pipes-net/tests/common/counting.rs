//! A global allocator that counts the bytes the process holds, for the test programs that
//! measure what a node keeps live. Each such program declares it as its own
//! `#[global_allocator]` (and so is its own program: parallel tests would blur the count).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering};

/// Counts into [`LIVE`], and defers to the system allocator.
pub struct Counting;

/// Bytes allocated and not yet freed, by the whole process.
pub static LIVE: AtomicIsize = AtomicIsize::new(0);

/// Bytes allocated and not yet freed now.
pub fn live() -> isize {
    LIVE.load(Ordering::Relaxed)
}

// SAFETY: defers to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE.fetch_add(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE.fetch_sub(layout.size() as isize, Ordering::Relaxed);
        // SAFETY: the caller's contract, passed on.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        LIVE.fetch_add(
            new_size as isize - layout.size() as isize,
            Ordering::Relaxed,
        );
        // SAFETY: the caller's contract, passed on.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

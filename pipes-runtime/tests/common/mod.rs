//! Helpers shared by the runtime's integration tests.
#![allow(dead_code)]

pub mod bombs;
pub mod counting;
pub mod pingpong;
pub mod task;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// A payload that counts its drops, to prove every message is dropped exactly once.
#[derive(Debug)]
pub struct Counted {
    pub value: u64,
    drops: Arc<AtomicUsize>,
}

/// Makes `Counted` values that share one drop counter.
#[derive(Clone, Default)]
pub struct DropCounter(Arc<AtomicUsize>);

impl DropCounter {
    pub fn make(&self, value: u64) -> Counted {
        Counted {
            value,
            drops: self.0.clone(),
        }
    }

    pub fn drops(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
    }
}

/// Long enough that the other thread is surely blocked (used only to order events; no test
/// asserts on time).
pub const SETTLE: std::time::Duration =
    std::time::Duration::from_millis(if cfg!(miri) { 1 } else { 30 });

/// Scales a test size down under Miri, which runs ~1000x slower.
pub const fn size(normal: usize, miri: usize) -> usize {
    if cfg!(miri) { miri } else { normal }
}

/// `mem::forget`, as a user may (it is safe): the value's drop never runs and every borrow in
/// it ends. The value is kept in a leaked box reachable from a static rather than forgotten,
/// only so that Miri's leak check (which skips memory reachable from statics) stays quiet; it
/// is never touched again.
pub fn forget<T>(value: T) {
    /// A pointer never dereferenced.
    struct Kept(#[allow(dead_code)] *mut ());
    // SAFETY: the pointer is only stored, never read through, on any thread.
    unsafe impl Send for Kept {}
    static KEPT: std::sync::Mutex<Vec<Kept>> = std::sync::Mutex::new(Vec::new());
    let kept = Box::into_raw(Box::new(value)).cast::<()>();
    KEPT.lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
        .push(Kept(kept));
}

/// A stack far too small for one frame per message of a long backlog, so recursion fails fast.
pub const SMALL_STACK: usize = 256 * 1024;

/// Runs `f` on a fresh thread with a [`SMALL_STACK`], returning what it returns.
pub fn on_a_small_stack<R: Send + 'static>(f: impl FnOnce() -> R + Send + 'static) -> R {
    std::thread::Builder::new()
        .stack_size(SMALL_STACK)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap()
}

//! The first of several panics: what a drop of many things, or a wake of many waiters, keeps
//! while it goes on with the rest, and resumes at the end. One payload whose `Drop` panics, or
//! one waker that panics, must not leak the others or leave them unwoken.

use std::any::Any;
use std::mem;
use std::panic::{self, AssertUnwindSafe};
use std::thread;

/// The first panic caught while dropping (or waking) several things, resumed once all of them
/// are done.
#[derive(Default)]
pub(crate) struct Panics(Option<Box<dyn Any + Send>>);

impl Panics {
    /// Runs `f`, keeping its panic if it is the first. Returns whether `f` returned.
    pub(crate) fn catch(&mut self, f: impl FnOnce()) -> bool {
        match panic::catch_unwind(AssertUnwindSafe(f)) {
            Ok(()) => true,
            Err(payload) => {
                match self.0 {
                    None => self.0 = Some(payload),
                    Some(_) => drop_quietly(payload),
                }
                false
            }
        }
    }

    /// Resumes the first panic, unless this thread is already unwinding (resuming would abort).
    pub(crate) fn resume(self) {
        if let Some(payload) = self.0 {
            if thread::panicking() {
                drop_quietly(payload);
            } else {
                panic::resume_unwind(payload);
            }
        }
    }
}

/// Drops a panic's payload; one whose own `Drop` panics is leaked rather than let out.
fn drop_quietly(payload: Box<dyn Any + Send>) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| drop(payload))) {
        mem::forget(payload);
    }
}

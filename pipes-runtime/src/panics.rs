//! The first of several panics: what a drop of many things, or a wake of many waiters, keeps
//! while it goes on with the rest, and resumes at the end. One payload whose `Drop` panics, or
//! one waker that panics, must not leak the others or leave them unwoken.
//!
//! A drop path (an endpoint's drop, closing a session or a lane) wakes its peer midway, and
//! must still finish: free what it holds, close what is left. It runs inside [`deferring`],
//! which holds back every panic resumed on its thread meanwhile until the path is done.

use std::any::Any;
#[cfg(not(loom))]
use std::cell::RefCell;
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
                self.keep(payload);
                false
            }
        }
    }

    /// Resumes the first panic, unless this thread is already unwinding (resuming would abort),
    /// or runs a drop path (then [`deferring`] resumes it once the path is done).
    pub(crate) fn resume(self) {
        if let Some(payload) = self.0 {
            if thread::panicking() {
                drop_quietly(payload);
            } else if let Some(payload) = defer(payload) {
                panic::resume_unwind(payload);
            }
        }
    }

    /// Keeps `payload` if it is the first.
    fn keep(&mut self, payload: Box<dyn Any + Send>) {
        match self.0 {
            None => self.0 = Some(payload),
            Some(_) => drop_quietly(payload),
        }
    }
}

#[cfg(not(loom))]
thread_local! {
    /// The panics held back by the drop path this thread runs, if it runs one.
    static DEFERRED: RefCell<Option<Panics>> = const { RefCell::new(None) };
}

/// Runs `f`, a drop path, holding back the panics resumed inside it (a waker's, a payload
/// `Drop`'s) until it returns: then the first goes on. Nested calls defer to the outermost.
/// Where this thread's locals are gone, or under loom (whose threads share one OS thread's),
/// panics go on at once, as outside a drop path.
pub(crate) fn deferring<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(not(loom))]
    {
        let outermost = DEFERRED
            .try_with(|deferred| {
                let mut deferred = deferred.borrow_mut();
                deferred.is_none() && {
                    *deferred = Some(Panics::default());
                    true
                }
            })
            .unwrap_or(false);
        // Ends the scope on return and on unwind (then `resume` drops what it held).
        struct Scope;
        impl Drop for Scope {
            fn drop(&mut self) {
                if let Ok(Some(panics)) = DEFERRED.try_with(|deferred| deferred.borrow_mut().take())
                {
                    panics.resume();
                }
            }
        }
        // Not `then_some(Scope)`: that makes a `Scope` either way, and drops it at once.
        let _scope = if outermost { Some(Scope) } else { None };
        f()
    }
    #[cfg(loom)]
    f()
}

/// Holds `payload` back for the drop path this thread runs; hands it back if there is none.
fn defer(payload: Box<dyn Any + Send>) -> Option<Box<dyn Any + Send>> {
    #[cfg(not(loom))]
    {
        let mut payload = Some(payload);
        let _ = DEFERRED.try_with(|deferred| {
            if let Some(panics) = deferred.borrow_mut().as_mut() {
                panics.keep(payload.take().expect("not yet taken"));
            }
        });
        payload
    }
    #[cfg(loom)]
    Some(payload)
}

/// Drops a panic's payload; one whose own `Drop` panics is leaked rather than let out.
fn drop_quietly(payload: Box<dyn Any + Send>) {
    if let Err(payload) = panic::catch_unwind(AssertUnwindSafe(|| drop(payload))) {
        mem::forget(payload);
    }
}

//! The one place that chooses between std, parking_lot and loom primitives, so the algorithms in
//! `packet`, `waiter`, `spin`, `select`, `port_set` and `shared` never name loom. Build with
//! `RUSTFLAGS="--cfg loom"` to model-check them.

#[cfg(loom)]
pub(crate) use loom::{
    cell::UnsafeCell,
    sync::Arc,
    sync::atomic::{AtomicPtr, AtomicUsize, Ordering, fence},
    thread,
};

#[cfg(not(loom))]
pub(crate) use std::{
    sync::Arc,
    sync::atomic::{AtomicPtr, AtomicUsize, Ordering, fence},
    thread,
};

/// parking_lot's mutex outside loom: no poisoning, and an uncontended lock is one CAS.
#[cfg(not(loom))]
pub(crate) use parking_lot::Mutex;

/// loom's mutex behind parking_lot's `lock()` (no poisoning), so callers compile against both.
#[cfg(loom)]
#[derive(Debug)]
pub(crate) struct Mutex<T>(loom::sync::Mutex<T>);

#[cfg(loom)]
impl<T> Mutex<T> {
    pub(crate) fn new(value: T) -> Self {
        Self(loom::sync::Mutex::new(value))
    }

    pub(crate) fn lock(&self) -> loom::sync::MutexGuard<'_, T> {
        // A panic while holding the lock already fails the model; poisoning adds nothing.
        self.0
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

use std::time::Instant;

/// `std::cell::UnsafeCell` behind loom's closure API, so the same code compiles against both.
#[cfg(not(loom))]
#[derive(Debug)]
pub(crate) struct UnsafeCell<T>(std::cell::UnsafeCell<T>);

#[cfg(not(loom))]
impl<T> UnsafeCell<T> {
    pub(crate) const fn new(value: T) -> Self {
        Self(std::cell::UnsafeCell::new(value))
    }

    pub(crate) fn with_mut<R>(&self, f: impl FnOnce(*mut T) -> R) -> R {
        f(self.0.get())
    }
}

/// Parks the current thread until it is unparked, or until `deadline` passes if there is one
/// (spurious returns are allowed: callers re-check their condition). Returns `false` once the
/// deadline has passed.
pub(crate) fn park(deadline: Option<Instant>) -> bool {
    match deadline {
        None => {
            thread::park();
            true
        }
        Some(deadline) => park_until(deadline),
    }
}

/// Parks the current thread until it is unparked or `deadline` passes (spurious returns are
/// allowed: callers re-check their condition). Returns `false` once the deadline has passed.
#[cfg(not(loom))]
pub(crate) fn park_until(deadline: Instant) -> bool {
    let now = Instant::now();
    if now >= deadline {
        return false;
    }
    thread::park_timeout(deadline - now);
    true
}

/// Under loom there is no clock: a timed park returns at once and reports the deadline as
/// passed, so every model explores "the timeout fired before the message came".
#[cfg(loom)]
pub(crate) fn park_until(_deadline: Instant) -> bool {
    thread::yield_now();
    false
}

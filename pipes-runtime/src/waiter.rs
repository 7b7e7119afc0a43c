//! Who to wake: the handle a blocked receiver leaves in a packet's state word.
//!
//! A waiter travels as an `Arc<Waiter>` turned into a raw pointer and stored in the state word
//! itself (see `packet`). Whoever swaps the pointer out of the word owns that reference, so a
//! sender can wake the receiver without touching the packet again, and the receiver is free to
//! release the packet the moment it sees the message. A waiter is a parked thread or an async
//! task's `Waker` ([`Waiter::Task`]); the state machine does not tell them apart.
//!
//! A select leaves the same thread waiter in several words at once, one reference per word. A
//! port set leaves a [`Waiter::Ready`] in each port it waits on: waking it queues that port on
//! the set's ready list, so the set learns *which* port is ready without scanning them all.

use std::task::Waker;

use crate::port_set::ReadyList;
use crate::sync::{Arc, AtomicUsize, thread};

/// A parked receiver, woken by the peer that settles the packet it waits on.
#[derive(Debug)]
pub(crate) enum Waiter {
    /// A thread blocked in `recv`, `recv_timeout` or a select.
    Thread(thread::Thread),
    /// An async task polling a receive future (`future.rs`): waking it wakes the task, which
    /// polls again and finds the packet settled.
    Task(Waker),
    /// A port of a port set: waking it pushes this waiter (naming `port`) on the set's ready
    /// list and unparks the set's thread if it sleeps.
    Ready {
        /// The set's ready list, shared with every waiter of the set.
        list: Arc<ReadyList>,
        /// The port's index in the set.
        port: usize,
        /// The ready list is intrusive: while this waiter is on it, the waiter queued before.
        next: AtomicUsize,
    },
}

impl Waiter {
    /// The waiter of the current thread. Outside loom it is created once per thread and shared,
    /// so blocking costs a reference-count increment, not an allocation.
    pub(crate) fn current() -> Arc<Waiter> {
        #[cfg(not(loom))]
        {
            thread_local! {
                static CURRENT: Arc<Waiter> = Arc::new(Waiter::Thread(thread::current()));
            }
            CURRENT.with(Arc::clone)
        }
        #[cfg(loom)]
        {
            Arc::new(Waiter::Thread(thread::current()))
        }
    }

    /// A task waiter holding `waker`. Outside loom it reuses a waiter this thread let go of
    /// (see [`Waiter::recycle`]), so an async wait usually allocates nothing.
    pub(crate) fn task(waker: &Waker) -> Arc<Waiter> {
        #[cfg(not(loom))]
        if let Some(mut waiter) = SPARE_TASK.take()
            && let Some(Waiter::Task(old)) = Arc::get_mut(&mut waiter)
        {
            old.clone_from(waker);
            return waiter;
        }
        Arc::new(Waiter::Task(waker.clone()))
    }

    /// Lets go of a task waiter no state word holds any more. If nobody else holds it either
    /// (the sender that swapped it out may still be waking it), it is kept for this thread's
    /// next [`Waiter::task`], with its waker replaced by a no-op one so the task is not kept
    /// alive by it.
    pub(crate) fn recycle(waiter: Arc<Waiter>) {
        #[cfg(not(loom))]
        {
            let mut waiter = waiter;
            if let Some(Waiter::Task(waker)) = Arc::get_mut(&mut waiter) {
                *waker = Waker::noop().clone();
                SPARE_TASK.set(Some(waiter));
            }
        }
        // Under loom every waiter is fresh, so each model execution frees its own.
        #[cfg(loom)]
        drop(waiter);
    }

    /// Wakes the waiter, consuming the reference the caller swapped out of a state word. Waking
    /// a thread that is not parked is harmless: its next park returns at once and it re-checks
    /// its condition. A port set's waiter is queued on the set's ready list with that very
    /// reference, which the set takes back when it drains the list.
    pub(crate) fn wake(this: Arc<Waiter>) {
        match &*this {
            Waiter::Thread(thread) => thread.unpark(),
            Waiter::Task(waker) => waker.wake_by_ref(),
            Waiter::Ready { .. } => ReadyList::push(this),
        }
    }

    /// Turns a waiter into the word stored in a packet's state. The word is never 0, 1 or 2
    /// (the other states), because an `Arc`'s data pointer is non-null and aligned to 8.
    pub(crate) fn into_word(waiter: Arc<Waiter>) -> usize {
        Arc::into_raw(waiter) as usize
    }

    /// Takes back the reference that [`Waiter::into_word`] stored.
    ///
    /// # Safety
    /// `word` came from `into_word` and the caller owns it: it swapped or compare-exchanged it
    /// out of a state word, so nobody else will take it back.
    pub(crate) unsafe fn from_word(word: usize) -> Arc<Waiter> {
        // SAFETY: the caller guarantees `word` is a pointer from `Arc::into_raw` whose reference
        // it now owns exclusively.
        unsafe { Arc::from_raw(word as *const Waiter) }
    }
}

#[cfg(not(loom))]
thread_local! {
    /// One task waiter kept for reuse by [`Waiter::task`].
    static SPARE_TASK: std::cell::Cell<Option<Arc<Waiter>>> = const { std::cell::Cell::new(None) };
}

const _: () = assert!(
    std::mem::align_of::<Waiter>() >= 4,
    "state words 1 and 2 must stay free"
);

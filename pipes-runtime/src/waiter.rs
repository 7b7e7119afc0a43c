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
//!
//! # Several watchers of one word
//!
//! A word has one sender and one receiving endpoint, but an endpoint can be watched by more than
//! one future at a time (two async selects over a borrowed port, in two tasks), and a watch can
//! outlive its future (`mem::forget`). So a receiving side that finds another waiter in the word
//! takes it out (it then owns that reference) and either wakes it at once (a thread about to
//! block, or a port set: the displaced watcher polls again later and registers anew) or, for a
//! task, *carries* it: the task's waiter keeps the displaced one in `below`, and whoever wakes
//! the task's waiter wakes everything below it too. So one word holds a chain of task waiters,
//! one per distinct task, and a send still takes the whole chain with its one swap.

use std::task::Waker;

use crate::port_set::ReadyList;
use crate::sync::{Arc, AtomicUsize, Ordering, thread};

/// `below` when a task waiter carries no other waiter.
const NONE: usize = 0;

/// A parked receiver, woken by the peer that settles the packet it waits on.
#[derive(Debug)]
pub(crate) enum Waiter {
    /// A thread blocked in `recv`, `recv_timeout` or a select.
    Thread(thread::Thread),
    /// An async task polling a receive or select future (`future.rs`, `select.rs`): waking it
    /// wakes the task, which polls again and finds the packet settled.
    Task {
        /// The task to wake.
        waker: Waker,
        /// The waiter this one displaced from the word and carries, as a word ([`NONE`] if
        /// none): one reference, owned by whoever owns this waiter's word reference (the word,
        /// or whoever took it out of the word). Written before the waiter is published.
        below: AtomicUsize,
    },
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
    /// so blocking costs a reference-count increment, not an allocation. A thread whose
    /// thread-locals are being destroyed (a receive inside a thread-local's destructor) gets a
    /// fresh one.
    pub(crate) fn current() -> Arc<Waiter> {
        #[cfg(not(loom))]
        {
            thread_local! {
                static CURRENT: Arc<Waiter> = Arc::new(Waiter::Thread(thread::current()));
            }
            CURRENT
                .try_with(Arc::clone)
                .unwrap_or_else(|_| Arc::new(Waiter::Thread(thread::current())))
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
        if let Ok(Some(mut waiter)) = SPARE_TASK.try_with(std::cell::Cell::take)
            && let Some(Waiter::Task { waker: old, .. }) = Arc::get_mut(&mut waiter)
        {
            old.clone_from(waker);
            return waiter;
        }
        Self::carrying(waker, NONE)
    }

    /// A fresh task waiter holding `waker` and carrying `below` (a waiter word whose reference
    /// the caller hands over, or [`NONE`]).
    pub(crate) fn carrying(waker: &Waker, below: usize) -> Arc<Waiter> {
        Arc::new(Waiter::Task {
            waker: waker.clone(),
            below: AtomicUsize::new(below),
        })
    }

    /// Takes the waiter a task waiter carries, with its reference. Only whoever owns this
    /// waiter's word reference may call it (see [`Waiter::Task`]).
    pub(crate) fn take_below(&self) -> Option<Arc<Waiter>> {
        let Waiter::Task { below, .. } = self else {
            return None;
        };
        match below.swap(NONE, Ordering::Relaxed) {
            NONE => None,
            // SAFETY: `below` held one reference, now moved to us by the swap.
            word => Some(unsafe { Waiter::from_word(word) }),
        }
    }

    /// Whether this is a task waiter whose own waker wakes the task of `waker` (what it carries
    /// is not looked at: only the owner of its word reference may).
    pub(crate) fn is_task_of(&self, waker: &Waker) -> bool {
        matches!(self, Waiter::Task { waker: own, .. } if own.will_wake(waker))
    }

    /// Whether waking this waiter, or one it carries, wakes the task of `waker`. The caller
    /// owns this waiter's word reference, so the chain below it stays put while it looks.
    pub(crate) fn wakes(&self, waker: &Waker) -> bool {
        let mut waiter = self;
        loop {
            let Waiter::Task { waker: own, below } = waiter else {
                return false;
            };
            if own.will_wake(waker) {
                return true;
            }
            match below.load(Ordering::Relaxed) {
                NONE => return false,
                // SAFETY: the chain below a waiter whose word reference the caller owns is
                // owned with it and stays alive while the caller holds that reference.
                word => waiter = unsafe { &*(word as *const Waiter) },
            }
        }
    }

    /// Lets go of a task waiter no state word holds any more. If nobody else holds it either
    /// (the sender that swapped it out may still be waking it), it is kept for this thread's
    /// next [`Waiter::task`], with its waker replaced by a no-op one so the task is not kept
    /// alive by it.
    pub(crate) fn recycle(waiter: Arc<Waiter>) {
        #[cfg(not(loom))]
        {
            let mut waiter = waiter;
            if let Some(Waiter::Task { waker, below }) = Arc::get_mut(&mut waiter)
                && *below.get_mut() == NONE
            {
                *waker = Waker::noop().clone();
                // A thread being torn down keeps no spare: the waiter is simply dropped.
                let _ = SPARE_TASK.try_with(|spare| spare.set(Some(waiter)));
            }
        }
        // Under loom every waiter is fresh, so each model execution frees its own.
        #[cfg(loom)]
        drop(waiter);
    }

    /// Wakes the waiter, consuming the reference the caller swapped out of a state word. Waking
    /// a thread that is not parked is harmless: its next park returns at once and it re-checks
    /// its condition. A port set's waiter is queued on the set's ready list with that very
    /// reference, which the set takes back when it drains the list. A task waiter's chain is
    /// woken top to bottom, iteratively.
    pub(crate) fn wake(this: Arc<Waiter>) {
        let mut next = Some(this);
        while let Some(waiter) = next.take() {
            match &*waiter {
                Waiter::Thread(thread) => thread.unpark(),
                Waiter::Task { waker, .. } => {
                    waker.wake_by_ref();
                    // We own the word reference, so the chain below is ours to walk.
                    next = waiter.take_below();
                }
                Waiter::Ready { .. } => ReadyList::push(waiter),
            }
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

impl Drop for Waiter {
    /// Lets go of a carried chain without recursing once per link. Waiters are woken before
    /// their word reference goes, so a chain still here is one nobody needs to wake.
    fn drop(&mut self) {
        let mut below = self.take_below();
        while let Some(waiter) = below.take() {
            // We own the link's chain reference, so what it carries is ours to take; the link
            // then goes with nothing below it.
            below = waiter.take_below();
        }
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

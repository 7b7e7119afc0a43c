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

use std::ptr;
use std::task::Waker;

use crate::panics::Panics;
use crate::sync::{Arc, AtomicPtr, Mutex, Ordering, thread};

/// A word as it travels through an atomic: a waiter word (an `Arc<Waiter>`'s pointer, with its
/// provenance) or one of the other values a word can hold (a number in a pointer without
/// provenance, never dereferenced: see [`word_of`]). Pointers, not integers, so Miri checks every
/// waiter taken out of a word under strict provenance.
pub(crate) type Word = *mut Waiter;

/// The word for the number `bits` (not a waiter): a pointer without provenance. Read a word's
/// number back with `.addr()`.
#[inline]
pub(crate) const fn word_of(bits: usize) -> Word {
    ptr::without_provenance_mut(bits)
}

/// `below` when a task waiter carries no other waiter.
const NONE: Word = ptr::null_mut();

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
        below: AtomicPtr<Waiter>,
    },
    /// A port of a port set: waking it pushes this waiter (naming `port`) on the set's ready
    /// list and unparks the set's thread if it sleeps.
    Ready {
        /// The set's ready list, shared with every waiter of the set.
        list: Arc<ReadyList>,
        /// The port's index in the set.
        port: usize,
        /// The ready list is intrusive: while this waiter is on it, the waiter queued before.
        next: AtomicPtr<Waiter>,
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
        Arc::new(Waiter::Task {
            waker: waker.clone(),
            below: AtomicPtr::new(NONE),
        })
    }

    /// Makes a fresh task waiter, in no word yet and carrying nothing, carry `below` (a waiter
    /// word whose reference the caller hands over).
    pub(crate) fn carry(&self, below: Word) {
        if let Waiter::Task { below: own, .. } = self {
            debug_assert_eq!(own.load(Ordering::Relaxed), NONE);
            own.store(below, Ordering::Relaxed);
        }
    }

    /// The chain `top` heads, without `other` (which it holds, see [`Waiter::holds`]): the
    /// chain's reference to `other` is dropped, and what `other` carried takes its place. The
    /// caller owns `top`'s word reference.
    pub(crate) fn without(top: Arc<Waiter>, other: &Arc<Waiter>) -> Option<Arc<Waiter>> {
        if Arc::ptr_eq(&top, other) {
            return top.take_below();
        }
        let mut waiter: &Waiter = &top;
        while let Waiter::Task { below, .. } = waiter {
            let word = below.load(Ordering::Relaxed);
            if word.is_null() {
                break;
            }
            if ptr::eq(word, Arc::as_ptr(other)) {
                // Link past `other`, to what it carried.
                below.store(
                    other.take_below().map_or(NONE, Waiter::into_word),
                    Ordering::Relaxed,
                );
                // SAFETY: `below` held one reference to `other`; the store above let go of the
                // link, so that reference is ours to drop.
                drop(unsafe { Waiter::from_word(word) });
                break;
            }
            // SAFETY: as in `holds`: the chain below a waiter whose word reference the caller
            // owns stays alive while the caller holds it.
            waiter = unsafe { &*word };
        }
        Some(top)
    }

    /// Takes the waiter a task waiter carries, with its reference. Only whoever owns this
    /// waiter's word reference may call it (see [`Waiter::Task`]).
    pub(crate) fn take_below(&self) -> Option<Arc<Waiter>> {
        let Waiter::Task { below, .. } = self else {
            return None;
        };
        let word = below.swap(NONE, Ordering::Relaxed);
        // SAFETY: `below` held one reference, now moved to us by the swap.
        (!word.is_null()).then(|| unsafe { Waiter::from_word(word) })
    }

    /// Whether this is a task waiter whose own waker wakes the task of `waker` (what it carries
    /// is not looked at: only the owner of its word reference may).
    pub(crate) fn is_task_of(&self, waker: &Waker) -> bool {
        matches!(self, Waiter::Task { waker: own, .. } if own.will_wake(waker))
    }

    /// Whether `other` is this waiter or one it carries. The caller owns this waiter's word
    /// reference, so the chain below it stays put while it looks.
    pub(crate) fn holds(&self, other: &Arc<Waiter>) -> bool {
        let mut waiter = self;
        loop {
            if ptr::eq(waiter, Arc::as_ptr(other)) {
                return true;
            }
            let Waiter::Task { below, .. } = waiter else {
                return false;
            };
            match below.load(Ordering::Relaxed) {
                word if word.is_null() => return false,
                // SAFETY: the chain below a waiter whose word reference the caller owns is
                // owned with it and stays alive while the caller holds that reference.
                word => waiter = unsafe { &*word },
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
                && below.get_mut().is_null()
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
    /// woken top to bottom, iteratively. A `Waker` that panics does not stop the chain: every
    /// task below is woken, then the first panic goes on.
    pub(crate) fn wake(this: Arc<Waiter>) {
        let mut panics = Panics::default();
        let mut next = Some(this);
        while let Some(waiter) = next.take() {
            match &*waiter {
                Waiter::Thread(thread) => thread.unpark(),
                Waiter::Task { waker, .. } => {
                    panics.catch(|| waker.wake_by_ref());
                    // We own the word reference, so the chain below is ours to walk.
                    next = waiter.take_below();
                }
                Waiter::Ready { .. } => {
                    ReadyList::push(waiter);
                    continue;
                }
            }
            // Letting go may drop a `Waker`, user code whose panic must not stop the chain.
            panics.catch(|| drop(waiter));
        }
        panics.resume();
    }

    /// Turns a waiter into the word stored in a packet's state. The word's address is never
    /// 0, 1 or 2 (the other states), because an `Arc`'s data pointer is non-null and aligned
    /// to 8.
    pub(crate) fn into_word(waiter: Arc<Waiter>) -> Word {
        Arc::into_raw(waiter).cast_mut()
    }

    /// Takes back the reference that [`Waiter::into_word`] stored.
    ///
    /// # Safety
    /// `word` came from `into_word` and the caller owns it: it swapped or compare-exchanged it
    /// out of a state word, so nobody else will take it back.
    pub(crate) unsafe fn from_word(word: Word) -> Arc<Waiter> {
        // SAFETY: the caller guarantees `word` is a pointer from `Arc::into_raw` whose reference
        // it now owns exclusively.
        unsafe { Arc::from_raw(word) }
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

/// The ready list's word when nothing is queued and no one is registered to be woken.
pub(crate) const IDLE: usize = 0;
/// Nothing is queued and waiters may be registered (see [`ReadyList`]): the push that ends this
/// wakes every one of them.
pub(crate) const SLEEPING: usize = 1;
/// The set is gone: a push drops its waiter instead of queuing it.
pub(crate) const CLOSED: usize = 2;

/// The ports of a set that senders found watched and woke, shared by the set and the waiters it
/// leaves in its ports' packets; and the *sleepers*, everyone waiting for the next such port.
/// Written by senders, emptied by the set's thread.
///
/// The queue is one word: [`IDLE`], [`SLEEPING`], [`CLOSED`], or else a pointer to the waiter
/// queued last, whose `next` leads to the one queued before (a push-only stack; `Arc` pointers
/// are aligned, so never 0, 1 or 2). A sender pushes the waiter it swapped out of a packet with
/// the reference the swap gave it: one compare-exchange, no lock and no reference count moved.
/// The set takes the whole stack with one swap and reverses it, so ports are served in the
/// order they were woken. Push-only with take-all is free of ABA: a push only needs its `next`
/// to be the head it replaces.
///
/// # Sleepers
///
/// Several may wait on one set at once: pending async selects over `&set` (several tasks
/// sharing the set, or one task joining two), forgotten futures (a
/// [`PortSet::recv_async`](crate::PortSet::recv_async) among them: its exclusive borrow of the
/// set ends when it is forgotten, its registration stays), and a thread in `recv` or a select
/// or one live `recv_async` future, all on the set's thread. Each registers an entry of its own in
/// `sleepers`: its own waiter, whose address identifies the entry (the entry holds a
/// reference, so no other waiter can take that address while it is there; a thread's waiter is
/// shared by that thread's blocking waits, which never overlap). Nothing is merged: two futures
/// polled with the same waker are two entries, and each takes back only its own.
///
/// - Registering ([`ReadyList::arm`]), under the mutex: turn an `IDLE` word `SLEEPING` (or find
///   it `SLEEPING` already), then add the entry. A stack in the word means ports are queued:
///   nothing is added, drain them instead.
/// - A push that replaces `SLEEPING` takes every entry out under the mutex and, after unlocking,
///   wakes each one (threads unparked, wakers woken) and drops it. The exchange comes first and
///   the lock after, so a sender never locks unless it ends a sleep.
/// - Leaving ([`ReadyList::disarm`]: a future that resolves or is dropped, a select that
///   returns, a timed-out thread), under the mutex: remove the own entry if a push has not
///   taken it; if no entry is left, turn `SLEEPING` back to `IDLE`, so senders stop locking. The
///   word goes back to `IDLE` only when no registrant remains.
/// - Anyone woken checks under the mutex whether its entry is still there, and registers again
///   if the set still sleeps and a push took it (see below).
///
/// Why no wake is lost: a registrant that read `SLEEPING` under the mutex is found by the push
/// that ends that sleep. Mutex sections are totally ordered; if the sender's section came
/// first, its exchange (sequenced before its lock) happens before the registrant's read (after
/// its lock), and by coherence that read returns the sender's stack or a later value: a later
/// stack, `IDLE` after the set drained, or the `SLEEPING` of a *new* sleep, never the one the
/// sender ended. So the registrant's section comes first, and the sender's lock, which
/// synchronizes with the registrant's unlock, finds its entry. That is all the argument needs
/// from the mutex; the orderings on the word are for the stack (a push's Release publishes its
/// `next` to the drain's Acquire). A sender that ended a sleep can be slow to take the lock:
/// meanwhile the set may drain and sleep again, and that sender then takes and wakes the new
/// sleep's entries too. Those registrants wake spuriously, find the word still `SLEEPING` and
/// their entries gone, and register again; until then they are covered by that very wake.
///
/// A future forgotten while pending (`mem::forget`) leaves its entry behind: the next push
/// that ends a sleep wakes it spuriously and drops it (so does the set's drop), and until then
/// the word stays `SLEEPING`, which only makes those pushes lock. Entries never pile up from
/// futures that are dropped: each takes its own back.
#[derive(Debug)]
pub(crate) struct ReadyList {
    pub(crate) head: AtomicPtr<Waiter>,
    /// Everyone to wake when a push ends the sleep: task and thread waiters, one entry each
    /// (see above). Locked to register and to leave, and by the one sender that ends a sleep.
    pub(crate) sleepers: Mutex<Vec<Arc<Waiter>>>,
}

/// The waking side of a ready list: senders push. The set's side is in `ready_list.rs`.
impl ReadyList {
    pub(crate) fn new() -> Self {
        ReadyList {
            head: AtomicPtr::new(word_of(IDLE)),
            sleepers: Mutex::new(Vec::new()),
        }
    }

    /// Queues a woken port's waiter, with the reference its sender swapped out of a packet (or
    /// a new port's, from [`PortSet::add`](crate::PortSet::add)), and wakes every sleeper if
    /// the set sleeps. Each watch queues its port at most once.
    pub(crate) fn push(waiter: Arc<Waiter>) {
        let node = Waiter::into_word(waiter);
        // SAFETY: we own the reference `node` stands for until the exchange below publishes it,
        // so the waiter and the list it names are alive while we use them here.
        let Waiter::Ready { list, next, .. } = (unsafe { &*node }) else {
            unreachable!("only a port set's waiters are queued");
        };
        let mut head = list.head.load(Ordering::Relaxed);
        // Held only while the set sleeps: once the exchange lands, the set may wake, drain the
        // list and drop itself and our waiter, and we still have to wake its sleepers.
        let mut keep: Option<Arc<ReadyList>> = None;
        loop {
            if head.addr() == CLOSED {
                // SAFETY: not published; the reference is still ours, and the set is gone.
                drop(unsafe { Waiter::from_word(node) });
                return;
            }
            if head.addr() == SLEEPING && keep.is_none() {
                keep = Some(Arc::clone(list));
            }
            next.store(
                if head.addr() == SLEEPING {
                    word_of(IDLE)
                } else {
                    head
                },
                Ordering::Relaxed,
            );
            // Release publishes `next` (and the waiter) to the set's Acquire swap.
            match list
                .head
                .compare_exchange_weak(head, node, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => break,
                Err(found) => head = found,
            }
        }
        if head.addr() == SLEEPING {
            let list = keep.expect("cloned when the set was seen sleeping");
            // Taken under the lock, woken and dropped after it: a waker may run any code,
            // including a drop of a future that leaves this very list.
            let sleepers = std::mem::take(&mut *list.sleepers.lock());
            // A panicking waker leaves the other sleepers woken all the same.
            let mut panics = Panics::default();
            for sleeper in sleepers {
                panics.catch(|| Waiter::wake(sleeper));
            }
            panics.resume();
        }
    }
}

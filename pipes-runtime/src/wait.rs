//! Waiting and waking on one word: the protocol every receive, select and port set uses to
//! wait for a sender, written once for packets and lanes.
//!
//! A [`StateWord`] is written by one sender, by swaps only, and read by one receiving side.
//! Besides the sender's words it may hold a *waiter word*: an `Arc<Waiter>` turned into a
//! pointer (nonzero, aligned to 4, so never a sender's word), left there by a receiving side
//! that waits. What the sender's words mean depends on the word's owner:
//!
//! - a packet (`packet.rs`): [`EMPTY`], then [`FULL`] or [`TERMINATED`], each final (a
//!   sender that ends the protocol for a [`Cause`] other than a drop leaves [`terminated`]'s
//!   word for it, with `TERMINATED`'s tag bits);
//! - a lane (`lane.rs`): the tail index the sender has published (tagged with a low bit 1), or
//!   the tail at which it hung up.
//!
//! Every function here takes the word that means *nothing for the receiver yet*: `idle`, which
//! is [`EMPTY`] for a packet and, for a lane, the word of the index the receiver has reached.
//! Any other sender's word is [`Settled`]: the receiver has something to take (a message or a
//! hang-up), and the word stays that way until the receiver takes it. A waiter is registered
//! only over `idle`, and a sender that swaps one out owns that reference and wakes it: a send is
//! one swap whether a receiver waits or not, and a receiver that registered and then re-checks
//! cannot miss a sender (the register and the send are read-modify-writes of the same word).

use std::fmt;
use std::ptr;
use std::task::{Poll, Waker};
use std::time::Instant;

use crate::error::Cause;
use crate::spin::spin_until;
use crate::sync::{Arc, AtomicPtr, Ordering, park};
use crate::waiter::{Waiter, Word, word_of};

/// No message yet, both endpoints alive.
pub(crate) const EMPTY: usize = 0;
/// The message is in the slot and the sender is done with the packet.
pub(crate) const FULL: usize = 1;
/// An endpoint was dropped: no message will be sent, or none will be received.
pub(crate) const TERMINATED: usize = 2;

/// The word a packet's sender leaves when it ends the protocol for `cause`: [`TERMINATED`] for
/// a dropped endpoint ([`Cause::Closed`]), the cause's index above the tag bits otherwise.
/// Never a waiter word (its tag bits are `TERMINATED`'s).
pub(crate) const fn terminated(cause: Cause) -> usize {
    TERMINATED | (cause.index() << 2)
}

/// Whether a packet's `word` is one of [`terminated`]'s.
pub(crate) const fn is_terminated(word: usize) -> bool {
    word & WAITER_ALIGN_MASK == TERMINATED
}

/// Whether `word` is a waiter word rather than one of a sender's.
pub(crate) fn is_waiter(word: usize) -> bool {
    word != 0 && word & WAITER_ALIGN_MASK == 0
}

/// Whether `word` is a sender's word other than `idle`: the receiver has something to take.
pub(crate) fn is_settled(word: usize, idle: usize) -> bool {
    word != idle && !is_waiter(word)
}

/// The low bits that are zero in every waiter word.
const WAITER_ALIGN_MASK: usize = 3;

/// A word holding something for the receiver, read with Acquire: a sender's word other than
/// `idle` (for a packet, `FULL` or `TERMINATED`: the sender's final transition). Only this crate
/// makes one, and a receiving end takes its packet or slots only with one, so no receive can
/// take (or free) what its sender may still write, whatever else it found in the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settled(usize);

impl Settled {
    /// `word` as settled, if it is.
    pub(crate) fn new(word: usize, idle: usize) -> Option<Self> {
        is_settled(word, idle).then_some(Settled(word))
    }

    /// Whether the sender sent its message (rather than hung up), for a packet's word.
    pub(crate) fn is_full(self) -> bool {
        self.0 == FULL
    }

    /// Why the sender hung up without sending, for a packet's word that is not full.
    pub(crate) fn cause(self) -> Cause {
        Cause::from_index(self.0 >> 2)
    }
}

/// Why [`StateWord::register`] left no waiter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Found {
    /// The sender is done: a receive would not wait.
    Settled(Settled),
    /// The word holds this very waiter already (one select waiting on an endpoint twice).
    Duplicate,
}

/// A packet's or a lane's state word, seen from outside: what select and port sets wait on.
/// Opaque: only this crate reads or writes it.
///
/// A pointer, not an integer, so a waiter word keeps its provenance; a sender's word is a
/// number in a pointer without provenance (`waiter::word_of`), read back with `.addr()`.
pub struct StateWord(pub(crate) AtomicPtr<Waiter>);

impl fmt::Debug for StateWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateWord").finish_non_exhaustive()
    }
}

/// The receiving side's transitions: wait, register a waiter, take it back.
///
/// The receiving side of a word (its endpoint, and the selects and port sets watching it) acts
/// from one thread at a time: endpoints are not `Sync`, and a future that borrows one is not
/// `Send`. Only the sender acts concurrently, and only by swapping in its words.
/// But the receiving side may find in the word a waiter it did not leave in this call: a watch
/// of a select future that is still pending or was forgotten (`mem::forget` is safe). So
/// nothing here ever takes a waiter word for a settled one, and whoever takes a waiter out of the
/// word owns its reference and wakes it (or, for a task, carries it; see `waiter.rs`): a
/// leftover watch costs at worst a spurious wake.
impl StateWord {
    /// A word holding the sender's word `bits`.
    #[inline]
    pub(crate) fn new(bits: usize) -> Self {
        StateWord(AtomicPtr::new(word_of(bits)))
    }

    /// Waits until the sender has made its final transition, or `deadline` passes (then
    /// `None`, with no waiter of ours left in the word).
    pub(crate) fn wait(&self, idle: usize, deadline: Option<Instant>) -> Option<Settled> {
        if let Some(settled) = self.settled(idle) {
            return Some(settled);
        }
        if spin_until(deadline, || {
            is_settled(self.0.load(Ordering::Relaxed).addr(), idle)
        }) {
            return self.settled(idle);
        }
        let me = Waiter::current();
        let blocked = Arc::as_ptr(&me).addr();
        loop {
            match self.register(idle, &me) {
                Err(Found::Settled(settled)) => return Some(settled),
                // A reference of ours already there (a select of this thread that unwound
                // midway left it) wakes us all the same.
                Ok(_) | Err(Found::Duplicate) => {}
            }
            loop {
                // The word changes only when a sender swaps our waiter out (spurious unparks are
                // possible, hence the loop).
                let word = self.load();
                if let Some(settled) = Settled::new(word, idle) {
                    return Some(settled);
                }
                if word != blocked {
                    // Displaced, which no one can do while we block; register again all the same.
                    break;
                }
                if !park(deadline) {
                    return self
                        .unregister(idle, &me)
                        .err()
                        .and_then(|word| Settled::new(word, idle));
                }
            }
        }
    }

    /// The word, read with Acquire, so a `FULL` one makes the payload visible.
    #[inline]
    pub(crate) fn load(&self) -> usize {
        self.0.load(Ordering::Acquire).addr()
    }

    /// A sender's transition: swaps in its word `bits` and returns what it took out, a waiter
    /// word the caller now owns and [`wake`]s. Release publishes what the sender wrote before;
    /// Acquire orders it after the registration of the waiter it takes.
    #[inline]
    pub(crate) fn swap(&self, bits: usize) -> Word {
        self.0.swap(word_of(bits), Ordering::AcqRel)
    }

    /// [`StateWord::swap`], then wakes the waiter it took out, if any. Returns the word found.
    #[inline]
    pub(crate) fn swap_and_wake(&self, bits: usize) -> usize {
        let found = self.swap(bits);
        if is_waiter(found.addr()) {
            // SAFETY: a waiter word, just swapped out by us: its reference is ours.
            unsafe { wake(found) };
        }
        found.addr()
    }

    /// Replaces the word `current` with `new`, neither of them a waiter word (a receiving side
    /// resetting a word the sender left, say). Returns whether the word held `current`.
    #[inline]
    pub(crate) fn replace(&self, current: usize, new: usize) -> bool {
        self.0
            .compare_exchange(
                word_of(current),
                word_of(new),
                Ordering::AcqRel,
                Ordering::Relaxed,
            )
            .is_ok()
    }

    /// Stores the sender's word `bits` where no waiter can be in the word (a slot the receiver
    /// is done with, say), with the ordering the caller's protocol needs.
    #[inline]
    pub(crate) fn store(&self, bits: usize, order: Ordering) {
        self.0.store(word_of(bits), order);
    }

    /// The word if the sender is done with it.
    #[inline]
    pub(crate) fn settled(&self, idle: usize) -> Option<Settled> {
        Settled::new(self.load(), idle)
    }

    /// Whether the sender has made its final transition: a receive would not wait.
    #[inline]
    pub(crate) fn is_ready(&self, idle: usize) -> bool {
        is_settled(self.load(), idle)
    }

    /// Leaves one reference to `waiter` (a thread's, shared by every word a select waits on, or
    /// a port set's) in the word, so the sender that fills or terminates the packet wakes it. A
    /// waiter of another watcher found there is displaced and woken (when the returned
    /// [`Displaced`] drops): its owner, if it still waits, looks again after us. Fails when the
    /// sender is done, or when the word holds `waiter` already.
    pub(crate) fn register(&self, idle: usize, waiter: &Arc<Waiter>) -> Result<Displaced, Found> {
        // The reference is made before the exchange: once the word holds it, a sender may take
        // it and let it go at once.
        let word = Waiter::into_word(Arc::clone(waiter));
        let mut found = self.0.load(Ordering::Acquire);
        let result = loop {
            if let Some(settled) = Settled::new(found.addr(), idle) {
                break Err(Found::Settled(settled));
            }
            if found == word {
                break Err(Found::Duplicate);
            }
            // Release publishes the waiter to the sender that swaps it out; Acquire makes a
            // displaced waiter (and, on failure, a settled word's payload) visible.
            match self
                .0
                .compare_exchange(found, word, Ordering::AcqRel, Ordering::Acquire)
            {
                Ok(_) => {
                    // SAFETY: a waiter word (or idle), exchanged out by us.
                    return Ok(Displaced(
                        (found.addr() != idle).then(|| unsafe { Waiter::from_word(found) }),
                    ));
                }
                Err(now) => found = now,
            }
        };
        // SAFETY: the word was never stored: its reference is still ours.
        drop(unsafe { Waiter::from_word(word) });
        result
    }

    /// Takes back a reference that [`StateWord::register`] left, restoring `idle`. Fails with
    /// the word found when the word no longer holds `waiter`: a sender swapped it out and owns
    /// that reference (it wakes the waiter, harmlessly late), a receive displaced it, or it was
    /// already taken back.
    pub(crate) fn unregister(&self, idle: usize, waiter: &Arc<Waiter>) -> Result<(), usize> {
        let mine = Arc::as_ptr(waiter).cast_mut();
        match self
            .0
            .compare_exchange(mine, word_of(idle), Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(stored) => {
                // SAFETY: we exchanged our own word out of the state word, so the reference it
                // stood for is ours again (taken back through the word stored, which has the
                // provenance `into_word` gave it).
                drop(unsafe { Waiter::from_word(stored) });
                Ok(())
            }
            Err(found) => Err(found.addr()),
        }
    }

    /// Watches the word for the task of `waker`: `Ready` once the sender is done, otherwise
    /// leaves a waiter that wakes the task and returns `Pending`. `mine` is this watcher's
    /// registration, kept between polls; a re-poll with the same waker while it is on top of
    /// the word is two loads.
    ///
    /// Other watchers found in the word are kept: they are carried by ours (see `waiter.rs`),
    /// so two tasks watching one word never displace each other back and forth, and two
    /// futures of one task each keep a registration of their own.
    pub(crate) fn watch(
        &self,
        idle: usize,
        waker: &Waker,
        mine: &mut Option<Arc<Waiter>>,
    ) -> Poll<Settled> {
        loop {
            let found = self.0.load(Ordering::Acquire);
            if let Some(settled) = Settled::new(found.addr(), idle) {
                // A sender took the waiters with its swap and wakes them; our reference goes.
                if let Some(waiter) = mine.take() {
                    Waiter::recycle(waiter);
                }
                return Poll::Ready(settled);
            }
            if let Some(waiter) = mine.as_ref()
                && ptr::eq(Arc::as_ptr(waiter), found)
                && waiter.is_task_of(waker)
            {
                return Poll::Pending;
            }
            // The waiter that is to carry what we find, made first: it clones the waker, user
            // code that may panic, which must not happen while others' waiters are out of the
            // word and held only by us.
            let fresh = Waiter::task(waker);
            // Take the waiters out to look at them: whoever owns a waiter's word reference may
            // read the chain below it. While the word is `idle` a sender that settles it wakes
            // nobody, so if putting back fails below, we wake what we hold.
            let mut taken = None;
            if found.addr() != idle {
                if self
                    .0
                    .compare_exchange(found, word_of(idle), Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    Waiter::recycle(fresh);
                    continue;
                }
                // SAFETY: a waiter word, exchanged out by us.
                taken = Some(unsafe { Waiter::from_word(found) });
            }
            // Our own registration, if it is in the chain: with this waker it stands (another
            // task's watch carries it); with an older waker it is taken out and replaced, so
            // that a task whose waker changes on every poll does not grow the chain. (Not any
            // waiter of this task will do: another future of the task, one select among two
            // joined, may take its own back and leave us unwatched.)
            //
            // A waiter of ours that goes (the old registration, or `fresh` if that one stands)
            // is let go of only once the chain is back in the word: letting go drops a user
            // `Waker`, whose drop may panic.
            let mut stands = false;
            let mut retired = None;
            if let (Some(chain), Some(waiter)) = (&taken, &*mine)
                && chain.holds(waiter)
            {
                if waiter.is_task_of(waker) {
                    stands = true;
                } else {
                    let chain = taken.take().expect("matched above");
                    taken = Waiter::without(chain, waiter);
                    retired = mine.take();
                }
            }
            let (put, ours) = match taken {
                Some(chain) if stands => {
                    retired = Some(fresh);
                    (chain, false)
                }
                Some(chain) if matches!(*chain, Waiter::Task { .. }) => {
                    fresh.carry(Waiter::into_word(chain));
                    (fresh, true)
                }
                // A thread or a port set does not wait on a word that a task watches (they are
                // on one thread); a stale one is woken to look again.
                Some(other) => {
                    Waiter::wake(other);
                    (fresh, true)
                }
                None => (fresh, true),
            };
            if ours && let Some(old) = mine.replace(Arc::clone(&put)) {
                // Not in the chain (it was cut out above if it was), so nothing else retired.
                debug_assert!(retired.is_none());
                retired = Some(old);
            }
            let put_word = Waiter::into_word(put);
            // Release publishes the chain to the sender that swaps it out.
            let stored = self
                .0
                .compare_exchange(word_of(idle), put_word, Ordering::AcqRel, Ordering::Acquire)
                .is_ok();
            if !stored {
                // Only a sender changes an `idle` word: it is settled now, and we hold the
                // waiters its swap would have woken. Ours needs no wake: the loop returns
                // `Ready`. A waker that panics here has every other one woken first.
                // SAFETY: the word was never stored: its reference is still ours.
                let put = unsafe { Waiter::from_word(put_word) };
                if ours {
                    if let Some(below) = put.take_below() {
                        Waiter::wake(below);
                    }
                } else {
                    Waiter::wake(put);
                }
            }
            // Nothing of anyone else's is held now.
            if let Some(old) = retired {
                Waiter::recycle(old);
            }
            if stored {
                return Poll::Pending;
            }
        }
    }

    /// Ends a [`StateWord::watch`]: takes `mine` back out of the word if it is on top, putting
    /// back what it carried. Returns the word if the sender is done (the watch was swapped out,
    /// and the message is there for the endpoint's next receive). A registration that another
    /// watcher carries stays where it is, and costs at worst a spurious wake.
    pub(crate) fn unwatch(&self, idle: usize, mine: &mut Option<Arc<Waiter>>) -> Option<Settled> {
        let waiter = mine.take()?;
        let mine = Arc::as_ptr(&waiter).cast_mut();
        let taken_back =
            self.0
                .compare_exchange(mine, word_of(idle), Ordering::Acquire, Ordering::Acquire);
        let result = match taken_back {
            Ok(stored) => {
                // SAFETY: our own waiter word, exchanged out by us (taken back through the word
                // stored, with the provenance `into_word` gave it).
                let taken = unsafe { Waiter::from_word(stored) };
                if let Some(below) = taken.take_below() {
                    let below = Waiter::into_word(below);
                    // Release republishes the carried chain.
                    if let Err(found) = self.0.compare_exchange(
                        word_of(idle),
                        below,
                        Ordering::AcqRel,
                        Ordering::Acquire,
                    ) {
                        // Settled meanwhile: the waiters the sender would have woken are ours.
                        // SAFETY: the word was never stored: its reference is still ours.
                        Waiter::wake(unsafe { Waiter::from_word(below) });
                        debug_assert!(is_settled(found.addr(), idle));
                    }
                }
                None
            }
            Err(found) => Settled::new(found.addr(), idle),
        };
        Waiter::recycle(waiter);
        result
    }
}

/// A waiter that [`StateWord::register`] pushed out of a word, woken when this drops. A task's
/// `Waker` is user code that may call back into the runtime, so a caller that holds a borrow
/// (a port set's state) keeps this until the borrow ends.
#[must_use = "dropping it wakes the displaced waiter at once"]
pub(crate) struct Displaced(Option<Arc<Waiter>>);

impl Displaced {
    /// Nothing displaced.
    pub(crate) fn none() -> Self {
        Displaced(None)
    }

    /// Whether a waiter was displaced (and is woken on drop).
    pub(crate) fn is_some(&self) -> bool {
        self.0.is_some()
    }
}

impl Drop for Displaced {
    fn drop(&mut self) {
        if let Some(waiter) = self.0.take() {
            Waiter::wake(waiter);
        }
    }
}

/// Wakes the waiter whose reference the caller swapped out of a state word.
///
/// # Safety
/// `word` is a BLOCKED word the caller just took out of a state word.
pub(crate) unsafe fn wake(word: Word) {
    // SAFETY: the swap that returned `word` moved its reference to the caller.
    Waiter::wake(unsafe { Waiter::from_word(word) });
}

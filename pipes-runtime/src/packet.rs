//! The packet: one message slot and one state word shared by a sending and a receiving
//! endpoint. This file holds the state machine ([`Packet`]) and the single-use packets of
//! unbounded protocols ([`SendPacket`], [`RecvPacket`]); `buffer.rs` reuses the same machine
//! for the packets of a bounded protocol's session buffer.
//!
//! # State words
//!
//! | word           | meaning                                                               |
//! |----------------|-----------------------------------------------------------------------|
//! | [`EMPTY`]      | no message yet; both endpoints alive                                  |
//! | [`FULL`]       | the sender wrote the message and is done with this packet             |
//! | [`TERMINATED`] | an endpoint was dropped without sending or receiving                  |
//! | BLOCKED        | any other word: the receiver is parked, and the word is its [`Waiter`] |
//!
//! Transitions, each one atomic operation:
//!
//! - send: write the payload, then swap in `FULL`. `EMPTY` -> done; BLOCKED -> wake the waiter
//!   whose reference the swap just took; `TERMINATED` -> the receiver is gone: take the
//!   payload back and hand it to the caller.
//! - receive: load `FULL` (Acquire) and take the payload: no write at all when the message is
//!   already there. Otherwise spin (see `spin`), then compare-exchange `EMPTY` -> BLOCKED and
//!   park until the word changes. A receive with a deadline that expires compare-exchanges
//!   BLOCKED -> `EMPTY` and takes its waiter back; if that fails the sender got there first.
//! - drop of either endpoint: swap in `TERMINATED`; a BLOCKED word means wake the receiver.
//!
//! Single-use packets count no references: each endpoint makes exactly one final transition,
//! so whoever makes the second one frees the packet. The sender's `FULL` swap is final for it,
//! so a receiver that sees `FULL` owns the packet outright. Storing the waiter in the state word
//! (rather than in a slot beside it) is what makes this sound: a sender that swaps out a BLOCKED
//! word owns the waiter reference and never reads the packet again, so the receiver may free
//! the packet as soon as it sees the new word, even if it woke spuriously.

use std::fmt;
use std::marker::PhantomData;
use std::mem::{self, MaybeUninit};
use std::ptr::NonNull;
use std::task::{Poll, Waker};
use std::time::{Duration, Instant};

use crate::alloc::{alloc_packet, free_packet};
use crate::drop_queue::{self, DropQueue};
use crate::error::{RecvError, RecvTimeoutError, TryRecvError};
use crate::future::RecvFuture;
use crate::spin::spin_until;
use crate::sync::{Arc, AtomicUsize, Ordering, UnsafeCell, park_until, thread};
use crate::waiter::Waiter;

/// No message yet, both endpoints alive.
pub(crate) const EMPTY: usize = 0;
/// The message is in the slot and the sender is done with the packet.
pub(crate) const FULL: usize = 1;
/// An endpoint was dropped: no message will be sent, or none will be received.
pub(crate) const TERMINATED: usize = 2;

/// Whether the sender has made its final transition, so the receiver may take the packet.
pub(crate) fn is_settled(word: usize) -> bool {
    word == FULL || word == TERMINATED
}

/// Names a protocol state for the errors a receive in it can return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateName {
    /// The protocol, as declared.
    pub protocol: &'static str,
    /// The state, as declared.
    pub state: &'static str,
}

impl StateName {
    pub(crate) fn closed(&self) -> RecvError {
        RecvError::new(self.protocol, self.state)
    }
}

/// A state word whose sender has made its final transition: `FULL` or `TERMINATED`, read with
/// Acquire. Only this crate makes one, and a receiving end takes its packet only with one, so no
/// receive can take (or free) a packet its sender may still write, whatever else it found in
/// the word.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Settled(usize);

impl Settled {
    /// `word` as settled, if it is.
    pub(crate) fn new(word: usize) -> Option<Self> {
        is_settled(word).then_some(Settled(word))
    }

    /// Whether the sender sent its message (rather than hung up).
    pub(crate) fn is_full(self) -> bool {
        self.0 == FULL
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

/// A packet's state word, seen from outside the packet: what select and port sets wait on.
/// Opaque: only this crate reads or writes it.
pub struct StateWord(pub(crate) AtomicUsize);

impl fmt::Debug for StateWord {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StateWord").finish_non_exhaustive()
    }
}

/// The receiving side's transitions: wait, register a waiter, take it back.
///
/// The receiving side of a word (its endpoint, and the selects and port sets watching it) acts
/// from one thread at a time: endpoints are not `Sync`, and a future that borrows one is not
/// `Send`. Only the sender acts concurrently, and only by swapping in `FULL` or `TERMINATED`.
/// But the receiving side may find in the word a waiter it did not leave in this call: a watch
/// of a select future that is still pending or was forgotten (`mem::forget` is safe). So
/// nothing here ever takes a waiter word for a settled one, and whoever takes a waiter out of the
/// word owns its reference and wakes it (or, for a task, carries it; see `waiter.rs`): a
/// leftover watch costs at worst a spurious wake.
impl StateWord {
    /// Waits until the sender has made its final transition, or `deadline` passes (then
    /// `None`, with no waiter of ours left in the word).
    pub(crate) fn wait(&self, deadline: Option<Instant>) -> Option<Settled> {
        if let Some(settled) = self.settled() {
            return Some(settled);
        }
        if spin_until(deadline, || is_settled(self.0.load(Ordering::Relaxed))) {
            return self.settled();
        }
        let me = Waiter::current();
        let blocked = Arc::as_ptr(&me) as usize;
        loop {
            match self.register(&me) {
                Err(Found::Settled(settled)) => return Some(settled),
                // A reference of ours already there (a select of this thread that unwound
                // midway left it) wakes us all the same.
                Ok(()) | Err(Found::Duplicate) => {}
            }
            loop {
                // The word changes only when a sender swaps our waiter out (spurious unparks are
                // possible, hence the loop).
                let word = self.0.load(Ordering::Acquire);
                if let Some(settled) = Settled::new(word) {
                    return Some(settled);
                }
                if word != blocked {
                    // Displaced, which no one can do while we block; register again all the same.
                    break;
                }
                match deadline {
                    None => thread::park(),
                    Some(deadline) => {
                        if !park_until(deadline) {
                            return self.unregister(&me).err().and_then(Settled::new);
                        }
                    }
                }
            }
        }
    }

    /// The word, read with Acquire, so a `FULL` one makes the payload visible.
    pub(crate) fn load(&self) -> usize {
        self.0.load(Ordering::Acquire)
    }

    /// The word if the sender is done with it.
    pub(crate) fn settled(&self) -> Option<Settled> {
        Settled::new(self.load())
    }

    /// Whether the sender has made its final transition: a receive would not wait.
    pub(crate) fn is_ready(&self) -> bool {
        is_settled(self.0.load(Ordering::Acquire))
    }

    /// Leaves one reference to `waiter` (a thread's, shared by every word a select waits on, or
    /// a port set's) in the word, so the sender that fills or terminates the packet wakes it. A
    /// waiter of another watcher found there is displaced and woken: its owner, if it still
    /// waits, looks again after us. Fails when the sender is done, or when the word holds
    /// `waiter` already.
    pub(crate) fn register(&self, waiter: &Arc<Waiter>) -> Result<(), Found> {
        // The reference is made before the exchange: once the word holds it, a sender may take
        // it and let it go at once.
        let word = Waiter::into_word(Arc::clone(waiter));
        let mut found = self.0.load(Ordering::Acquire);
        let result = loop {
            if let Some(settled) = Settled::new(found) {
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
                    if found != EMPTY {
                        // SAFETY: a waiter word, exchanged out by us.
                        unsafe { wake(found) };
                    }
                    return Ok(());
                }
                Err(now) => found = now,
            }
        };
        // SAFETY: the word was never stored: its reference is still ours.
        drop(unsafe { Waiter::from_word(word) });
        result
    }

    /// Takes back a reference that [`StateWord::register`] left, restoring `EMPTY`. Fails with
    /// the word found when the word no longer holds `waiter`: a sender swapped it out and owns
    /// that reference (it wakes the waiter, harmlessly late), a receive displaced it, or it was
    /// already taken back.
    pub(crate) fn unregister(&self, waiter: &Arc<Waiter>) -> Result<(), usize> {
        let word = Arc::as_ptr(waiter) as usize;
        match self
            .0
            .compare_exchange(word, EMPTY, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => {
                // SAFETY: we exchanged our own word out of the state word, so the reference it
                // stood for is ours again.
                drop(unsafe { Waiter::from_word(word) });
                Ok(())
            }
            Err(found) => Err(found),
        }
    }

    /// Watches the word for the task of `waker`: `Ready` once the sender is done, otherwise
    /// leaves a waiter that wakes the task and returns `Pending`. `mine` is this watcher's
    /// registration, kept between polls; a re-poll with the same waker while it is on top of
    /// the word is two loads.
    ///
    /// Other watchers found in the word are kept: a task's waiter that wakes this task already
    /// is put back as it is; other tasks' waiters are carried by ours (see `waiter.rs`), so two
    /// tasks watching one word never displace each other back and forth.
    pub(crate) fn watch(&self, waker: &Waker, mine: &mut Option<Arc<Waiter>>) -> Poll<Settled> {
        loop {
            let found = self.0.load(Ordering::Acquire);
            if let Some(settled) = Settled::new(found) {
                // A sender took the waiters with its swap and wakes them; our reference goes.
                if let Some(waiter) = mine.take() {
                    Waiter::recycle(waiter);
                }
                return Poll::Ready(settled);
            }
            if let Some(waiter) = mine.as_ref()
                && Arc::as_ptr(waiter) as usize == found
                && waiter.is_task_of(waker)
            {
                return Poll::Pending;
            }
            // Take the waiters out to look at them: whoever owns a waiter's word reference may
            // read the chain below it. While the word is `EMPTY` a sender that settles it wakes
            // nobody, so if putting back fails below, we wake what we hold.
            let mut taken = None;
            if found != EMPTY {
                if self
                    .0
                    .compare_exchange(found, EMPTY, Ordering::Acquire, Ordering::Relaxed)
                    .is_err()
                {
                    continue;
                }
                // SAFETY: a waiter word, exchanged out by us.
                taken = Some(unsafe { Waiter::from_word(found) });
            }
            // Our own registration on top is replaced, not carried.
            if let (Some(top), Some(waiter)) = (&taken, &*mine)
                && Arc::ptr_eq(top, waiter)
            {
                taken = top.take_below();
                if let Some(waiter) = mine.take() {
                    Waiter::recycle(waiter);
                }
            }
            let (put, ours) = match taken {
                Some(chain) if chain.wakes(waker) => (chain, false),
                Some(chain) if matches!(*chain, Waiter::Task { .. }) => {
                    (Waiter::carrying(waker, Waiter::into_word(chain)), true)
                }
                // A thread or a port set does not wait on a word that a task watches (they are
                // on one thread); a stale one is woken to look again.
                Some(other) => {
                    Waiter::wake(other);
                    (Waiter::task(waker), true)
                }
                None => (Waiter::task(waker), true),
            };
            if ours && let Some(old) = mine.replace(Arc::clone(&put)) {
                Waiter::recycle(old);
            }
            let word = Waiter::into_word(put);
            // Release publishes the chain to the sender that swaps it out.
            if self
                .0
                .compare_exchange(EMPTY, word, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
            {
                return Poll::Pending;
            }
            // Only a sender changes an `EMPTY` word: it is settled now, and we hold the waiters
            // its swap would have woken. Ours needs no wake: the loop returns `Ready`.
            // SAFETY: the word was never stored: its reference is still ours.
            let put = unsafe { Waiter::from_word(word) };
            if ours {
                if let Some(below) = put.take_below() {
                    Waiter::wake(below);
                }
            } else {
                Waiter::wake(put);
            }
        }
    }

    /// Ends a [`StateWord::watch`]: takes `mine` back out of the word if it is on top, putting
    /// back what it carried. Returns the word if the sender is done (the watch was swapped out,
    /// and the message is there for the endpoint's next receive). A registration that another
    /// watcher carries stays where it is, and costs at worst a spurious wake.
    pub(crate) fn unwatch(&self, mine: &mut Option<Arc<Waiter>>) -> Option<Settled> {
        let waiter = mine.take()?;
        let word = Arc::as_ptr(&waiter) as usize;
        let result =
            match self
                .0
                .compare_exchange(word, EMPTY, Ordering::Acquire, Ordering::Acquire)
            {
                Ok(_) => {
                    // SAFETY: our own waiter word, exchanged out by us.
                    let taken = unsafe { Waiter::from_word(word) };
                    if let Some(below) = taken.take_below() {
                        let below = Waiter::into_word(below);
                        // Release republishes the carried chain.
                        if let Err(found) = self.0.compare_exchange(
                            EMPTY,
                            below,
                            Ordering::AcqRel,
                            Ordering::Acquire,
                        ) {
                            // Settled meanwhile: the waiters the sender would have woken are ours.
                            // SAFETY: the word was never stored: its reference is still ours.
                            Waiter::wake(unsafe { Waiter::from_word(below) });
                            debug_assert!(is_settled(found));
                        }
                    }
                    None
                }
                Err(found) => Settled::new(found),
            };
        Waiter::recycle(waiter);
        result
    }
}

/// The state word of an endpoint that has no packet left (a stream port whose chan is known to
/// be gone): forever `TERMINATED`, so select sees it ready and never writes to it.
#[cfg(not(loom))]
pub(crate) fn closed_word() -> &'static StateWord {
    static CLOSED: StateWord = StateWord(AtomicUsize::new(TERMINATED));
    &CLOSED
}

/// Under loom an atomic cannot live in a plain static (it belongs to one model execution), so
/// each execution makes its own.
#[cfg(loom)]
pub(crate) fn closed_word() -> &'static StateWord {
    loom::lazy_static! {
        static ref CLOSED: StateWord = StateWord(AtomicUsize::new(TERMINATED));
    }
    &CLOSED
}

/// The state machine: a state word and a payload slot. Its methods are the transitions; who
/// may call which, and who frees or reuses the packet afterwards, is up to the endpoints.
pub(crate) struct Packet<T> {
    state: StateWord,
    payload: UnsafeCell<MaybeUninit<T>>,
}

// SAFETY: the payload is written by one thread and read by another only across the state
// word's Release/Acquire pair, so sharing a packet is sound when `T` may move between threads.
unsafe impl<T: Send> Sync for Packet<T> {}

impl<T> Packet<T> {
    pub(crate) fn new() -> Self {
        Packet {
            state: StateWord(AtomicUsize::new(EMPTY)),
            payload: UnsafeCell::new(MaybeUninit::uninit()),
        }
    }

    pub(crate) fn state(&self) -> &AtomicUsize {
        &self.state.0
    }

    pub(crate) fn state_word(&self) -> &StateWord {
        &self.state
    }

    /// The state word of the packet at `this`, reached without a reference to the whole
    /// packet. The transitions below take the packet by pointer, not `&self`: the peer may free
    /// a single-use packet the moment it sees the word they swap in, and a `&Packet` argument
    /// would assert (to Miri's Stacked Borrows, through the padding bytes that lie outside any
    /// `UnsafeCell`) that the whole packet outlives the call.
    ///
    /// # Safety
    /// The packet is alive when this is called; the reference is used only while it is (an
    /// `&AtomicUsize` asserts nothing after the atomic operation that may let the peer free it).
    unsafe fn state_at<'a>(this: NonNull<Self>) -> &'a AtomicUsize {
        // SAFETY: the caller guarantees the packet is alive; the place projection creates no
        // reference to the packet itself.
        unsafe { &(*this.as_ptr()).state.0 }
    }

    /// The payload cell of the packet at `this`, reached without a reference to the whole
    /// packet (see [`Packet::state_at`]).
    ///
    /// # Safety
    /// The packet is alive while the reference is used.
    unsafe fn payload_at<'a>(this: NonNull<Self>) -> &'a UnsafeCell<MaybeUninit<T>> {
        // SAFETY: the caller guarantees the packet is alive; no reference to the packet itself.
        unsafe { &(*this.as_ptr()).payload }
    }

    /// The send transition. On `Err` the receiver had terminated: the message comes back and
    /// the word is left `FULL` over an empty slot, for the caller to free or repair.
    ///
    /// # Safety
    /// `this` is a live packet whose sender is the caller, which has not made its final
    /// transition.
    pub(crate) unsafe fn send(this: NonNull<Self>, message: T) -> Result<(), T> {
        // SAFETY: our final transition has not happened yet, so the packet is alive.
        let payload = unsafe { Self::payload_at(this) };
        payload.with_mut(|slot| {
            // SAFETY: only the sender writes the slot, and the receiver reads it only after it
            // sees the `FULL` swapped in below.
            unsafe { (*slot).write(message) };
        });
        // Release publishes the payload; Acquire orders us after a receiver that terminated or
        // registered its waiter.
        // SAFETY: the packet is alive until the swap; after it we touch it only if the receiver
        // had terminated, in which case nobody frees it but our caller.
        match unsafe { Self::state_at(this) }.swap(FULL, Ordering::AcqRel) {
            EMPTY => Ok(()),
            TERMINATED => Err(payload.with_mut(|slot| {
                // SAFETY: we wrote the slot above and the receiver, being gone, never read it.
                unsafe { (*slot).assume_init_read() }
            })),
            FULL => unreachable!("a packet is sent at most once per use"),
            blocked => {
                // SAFETY: a BLOCKED word, just swapped out by us.
                unsafe { wake(blocked) };
                Ok(())
            }
        }
    }

    /// The sender's drop transition. Returns the word it replaced.
    ///
    /// # Safety
    /// `this` is a live packet whose sender is the caller, which has not made its final
    /// transition.
    pub(crate) unsafe fn close_sender(this: NonNull<Self>) -> usize {
        // SAFETY: the packet is alive until the swap, and not touched after it.
        let word = unsafe { Self::state_at(this) }.swap(TERMINATED, Ordering::AcqRel);
        if !is_settled(word) && word != EMPTY {
            // SAFETY: a BLOCKED word, just swapped out by us.
            unsafe { wake(word) };
        }
        debug_assert_ne!(word, FULL, "a sender that sent is never dropped");
        word
    }

    /// The receiver's drop transition. Returns the word it replaced: after `FULL` the message
    /// is still in the slot and the caller owns it (and, for a single-use packet, the packet),
    /// after `TERMINATED` the caller owns an empty packet, and after anything else the sender
    /// has not made its final transition, so the packet is not the caller's to free.
    ///
    /// A waiter word here is a watch nobody took back (a select future that was
    /// `mem::forget`-ed leaves its task waiter in the words it watched): the swap took that
    /// reference, so it is woken (a spurious wake is harmless) and the sender frees the packet
    /// when it comes.
    ///
    /// # Safety
    /// `this` is a live packet whose receiver is the caller, which has not made its final
    /// transition.
    pub(crate) unsafe fn close_receiver(this: NonNull<Self>) -> usize {
        // SAFETY: the packet is alive until the swap, and not touched after it here.
        let word = unsafe { Self::state_at(this) }.swap(TERMINATED, Ordering::AcqRel);
        if !is_settled(word) && word != EMPTY {
            // SAFETY: a waiter word, just swapped out by us.
            unsafe { wake(word) };
        }
        word
    }

    /// Moves the message out after [`StateWord::wait`] (or a load) returned `FULL`.
    ///
    /// # Safety
    /// The caller is this packet's receiver and read `FULL` from the state word with Acquire.
    pub(crate) unsafe fn take(&self) -> T {
        self.payload.with_mut(|slot| {
            // SAFETY: the Acquire read of `FULL` made the sender's write visible, and the sender
            // never touches the slot again.
            unsafe { (*slot).assume_init_read() }
        })
    }
}

/// Wakes the waiter whose reference the caller swapped out of a state word.
///
/// # Safety
/// `word` is a BLOCKED word the caller just took out of a state word.
pub(crate) unsafe fn wake(word: usize) {
    // SAFETY: the swap that returned `word` moved its reference to the caller.
    Waiter::wake(unsafe { Waiter::from_word(word) });
}

/// A receiving end of a packet, single-use ([`RecvPacket`]) or in a session buffer
/// (`RecvSlot`): the ways to receive, written once over how each end takes a settled packet.
/// Public only so [`RecvFuture`] can name it; not a public API.
pub trait Receiving: Sized {
    /// What a receive yields.
    type Output;

    /// The state word of the packet this end receives from.
    fn word(&self) -> &StateWord;

    /// Consumes the end once the sender has made its final transition: the message, or `None`
    /// if the sender hung up. Only the runtime can make a [`Settled`].
    fn take(self, settled: Settled) -> Option<Self::Output>;

    /// Blocks until the message arrives or the sender is dropped.
    fn receive(self, at: &StateName) -> Result<Self::Output, RecvError> {
        match self.word().wait(None) {
            Some(settled) => self.take(settled).ok_or_else(|| at.closed()),
            None => unreachable!("a wait without a deadline ends only when the word settles"),
        }
    }

    /// Takes the message if it is already here; otherwise hands the end back.
    fn try_receive(self, at: &StateName) -> Result<Self::Output, TryRecvError<Self>> {
        match self.word().settled() {
            Some(settled) => self
                .take(settled)
                .ok_or_else(|| TryRecvError::Disconnected(at.closed())),
            None => Err(TryRecvError::Empty(self)),
        }
    }

    /// A future that receives the message on any executor; dropping it drops the end (see
    /// [`RecvFuture`]).
    fn receive_async(self, at: &StateName) -> RecvFuture<Self> {
        RecvFuture::new(self, *at)
    }

    /// Blocks for at most `timeout`; hands the end back if nothing arrived in time.
    fn receive_within(
        self,
        timeout: Duration,
        at: &StateName,
    ) -> Result<Self::Output, RecvTimeoutError<Self>> {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.receive_until(deadline, at),
            // A timeout too far away to represent is no timeout at all.
            None => self.receive(at).map_err(RecvTimeoutError::Disconnected),
        }
    }

    /// Blocks until `deadline` at the latest; hands the end back if nothing arrived.
    fn receive_until(
        self,
        deadline: Instant,
        at: &StateName,
    ) -> Result<Self::Output, RecvTimeoutError<Self>> {
        match self.word().wait(Some(deadline)) {
            Some(settled) => self
                .take(settled)
                .ok_or_else(|| RecvTimeoutError::Disconnected(at.closed())),
            None => Err(RecvTimeoutError::Timeout(self)),
        }
    }
}

/// Makes a fresh single-use packet and returns its two endpoints.
pub fn entangle<T>() -> (SendPacket<T>, RecvPacket<T>) {
    let packet = alloc_packet(Packet::new());
    (
        SendPacket {
            packet,
            _owns: PhantomData,
        },
        RecvPacket {
            packet,
            _owns: PhantomData,
        },
    )
}

/// Frees a single-use packet whose other endpoint has made its final transition.
///
/// # Safety
/// The caller is the second endpoint to make its final transition (so nobody else can reach the
/// packet), and any payload in the slot has already been moved out or dropped.
unsafe fn free<T>(packet: NonNull<Packet<T>>) {
    // SAFETY: the packet came from `alloc_packet` in `entangle`, and the caller guarantees it is
    // the last user. `MaybeUninit` drops nothing, so a moved-out payload is not dropped twice.
    unsafe { free_packet(packet) };
}

/// The sending end of a single-use packet: sends one message, or terminates the packet when
/// dropped.
pub struct SendPacket<T> {
    packet: NonNull<Packet<T>>,
    _owns: PhantomData<T>,
}

// SAFETY: the endpoint moves a `T` to the receiving thread, which is sound when `T: Send`; all
// shared state is behind the atomic state word.
unsafe impl<T: Send> Send for SendPacket<T> {}

impl<T> SendPacket<T> {
    /// Sends `message`. Never blocks. If the receiver is gone the message is handed back.
    pub fn send(self, message: T) -> Result<(), T> {
        let ptr = self.packet;
        mem::forget(self);
        // SAFETY: we are the sender and have not made our final transition (this is it), so
        // the packet is alive.
        let result = unsafe { Packet::send(ptr, message) };
        if result.is_err() {
            // SAFETY: the receiver terminated before us and the slot was moved out.
            unsafe { free(ptr) };
        }
        result
    }
}

impl<T> Drop for SendPacket<T> {
    fn drop(&mut self) {
        // SAFETY: we are the sender and have not made our final transition (this is it).
        if unsafe { Packet::close_sender(self.packet) } == TERMINATED {
            // SAFETY: the receiver terminated first; the slot was never written.
            unsafe { free(self.packet) };
        }
    }
}

impl<T> fmt::Debug for SendPacket<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendPacket").finish_non_exhaustive()
    }
}

/// The receiving end of a single-use packet: receives one message, or terminates the packet
/// when dropped.
pub struct RecvPacket<T> {
    packet: NonNull<Packet<T>>,
    _owns: PhantomData<T>,
}

// SAFETY: the endpoint receives a `T` sent from another thread, which is sound when `T: Send`;
// all shared state is behind the atomic state word.
unsafe impl<T: Send> Send for RecvPacket<T> {}

impl<T> RecvPacket<T> {
    fn packet(&self) -> &Packet<T> {
        // SAFETY: we have not made our final transition, so the packet is alive.
        unsafe { self.packet.as_ref() }
    }

    /// The state word select waits on.
    pub fn state_word(&self) -> &StateWord {
        self.packet().state_word()
    }

    /// Blocks until the message arrives or the sender is dropped.
    pub fn recv(self, at: &StateName) -> Result<T, RecvError> {
        self.receive(at)
    }

    /// Takes the message if it is already here; otherwise hands the endpoint back.
    pub fn try_recv(self, at: &StateName) -> Result<T, TryRecvError<Self>> {
        self.try_receive(at)
    }

    /// Blocks for at most `timeout`; hands the endpoint back if nothing arrived in time.
    pub fn recv_timeout(
        self,
        timeout: Duration,
        at: &StateName,
    ) -> Result<T, RecvTimeoutError<Self>> {
        self.receive_within(timeout, at)
    }

    /// Blocks until `deadline` at the latest; hands the endpoint back if nothing arrived.
    pub fn recv_deadline(
        self,
        deadline: Instant,
        at: &StateName,
    ) -> Result<T, RecvTimeoutError<Self>> {
        self.receive_until(deadline, at)
    }

    /// A future that receives the message on any executor. Dropping it before it resolves
    /// drops this endpoint, so the sender sees the pipe closed.
    pub fn recv_async(self, at: &StateName) -> RecvFuture<Self> {
        self.receive_async(at)
    }
}

impl<T> Receiving for RecvPacket<T> {
    type Output = T;

    fn word(&self) -> &StateWord {
        self.state_word()
    }

    /// Moves the message out and frees the packet.
    fn take(self, settled: Settled) -> Option<T> {
        let ptr = self.packet;
        mem::forget(self);
        // SAFETY: the sender made its final transition, so we own the packet; a full `settled`
        // is `FULL` read with Acquire, so the message is there and visible.
        let message = settled.is_full().then(|| unsafe { ptr.as_ref().take() });
        // SAFETY: the sender made its final transition before us and the slot is moved out.
        unsafe { free(ptr) };
        message
    }
}

impl<T> Drop for RecvPacket<T> {
    fn drop(&mut self) {
        // A `FULL` word is the sender's final transition: the packet is ours without a swap,
        // which keeps dropping a backlog (one packet per message) at a load per message.
        // SAFETY: we are the receiver and have not made our final transition, so the packet is
        // alive.
        let word = match unsafe { Packet::state_at(self.packet) }.load(Ordering::Acquire) {
            FULL => FULL,
            // SAFETY: as above; this is our final transition.
            _ => unsafe { Packet::close_receiver(self.packet) },
        };
        match word {
            // SAFETY: the sender made its final transition first, so the packet and the message
            // in it are ours; `dispose_message` is the disposal for this packet's type.
            FULL => unsafe {
                drop_queue::dispose(
                    (&raw const *self).cast(),
                    self.packet.cast(),
                    dispose_message::<T>,
                )
            },
            // SAFETY: the sender made its final transition first without sending.
            TERMINATED => unsafe { free(self.packet) },
            // `EMPTY`: the sender frees the packet when it sends or drops. A waiter word: the
            // sender has not made its final transition either, and will free it.
            _ => {}
        }
    }
}

/// Moves the message out of a single-use packet, frees the packet, then drops the message: a
/// payload whose `Drop` panics cannot leak its packet.
///
/// # Safety
/// As [`drop_queue::Dispose`] asks: `packet` is a `Packet<T>` from [`entangle`] that the caller
/// owns outright (both endpoints made their final transitions) and that holds a message.
unsafe fn dispose_message<T>(packet: NonNull<()>, queue: Option<&DropQueue>) {
    let packet = packet.cast::<Packet<T>>();
    // SAFETY: the packet is ours and `FULL` (read with Acquire by the swap that closed it).
    let message = unsafe { packet.as_ref().take() };
    // SAFETY: both endpoints are done with the packet and its slot was just moved out.
    unsafe { free(packet) };
    drop_queue::drop_message(message, queue);
}

impl<T> fmt::Debug for RecvPacket<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvPacket").finish_non_exhaustive()
    }
}

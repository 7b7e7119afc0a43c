//! The packet: one message slot and one state word shared by a sending and a receiving
//! endpoint. This file holds the state machine ([`Packet`]) and the single-use packets of
//! unbounded protocols ([`SendPacket`], [`RecvPacket`]); `buffer.rs` reuses the same machine
//! for the packets of a bounded protocol's session buffer.
//!
//! # State words
//!
//! | word           | meaning                                                               |
//! |----------------|-----------------------------------------------------------------------|
//! | `EMPTY`        | no message yet; both endpoints alive                                  |
//! | `FULL`         | the sender wrote the message and is done with this packet             |
//! | `TERMINATED`   | an endpoint was dropped without sending or receiving                  |
//! | BLOCKED        | any other word: the receiver is parked, and the word is its waiter     |
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
use std::time::{Duration, Instant};

use crate::alloc::{alloc_packet, free_packet};
use crate::drop_queue::{self, DropQueue};
use crate::error::{Cause, RecvError, RecvTimeoutError, TryRecvError};
use crate::sync::UnsafeCell;
use crate::wait::{EMPTY, FULL, Settled, StateWord, TERMINATED, is_terminated, terminated, wake};

/// Names a protocol state for the errors a receive in it can return.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StateName {
    /// The protocol, as declared.
    pub protocol: &'static str,
    /// The state, as declared.
    pub state: &'static str,
}

impl StateName {
    /// The error of a receive in this state that found the protocol ended for `cause`.
    pub(crate) fn closed(&self, cause: Cause) -> RecvError {
        RecvError::new(self.protocol, self.state, cause)
    }
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
            state: StateWord::new(EMPTY),
            payload: UnsafeCell::new(MaybeUninit::uninit()),
        }
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
    /// `&StateWord`, an atomic alone, asserts nothing after the atomic operation that may let
    /// the peer free it).
    unsafe fn state_at<'a>(this: NonNull<Self>) -> &'a StateWord {
        // SAFETY: the caller guarantees the packet is alive; the place projection creates no
        // reference to the packet itself.
        unsafe { &(*this.as_ptr()).state }
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
        let found = unsafe { Self::state_at(this) }.swap(FULL);
        match found.addr() {
            EMPTY => Ok(()),
            TERMINATED => Err(payload.with_mut(|slot| {
                // SAFETY: we wrote the slot above and the receiver, being gone, never read it.
                unsafe { (*slot).assume_init_read() }
            })),
            FULL => unreachable!("a packet is sent at most once per use"),
            _ => {
                // SAFETY: a BLOCKED word, just swapped out by us.
                unsafe { wake(found) };
                Ok(())
            }
        }
    }

    /// The sender's drop transition, leaving `cause` for the receiver. Returns the word it
    /// replaced.
    ///
    /// # Safety
    /// `this` is a live packet whose sender is the caller, which has not made its final
    /// transition.
    pub(crate) unsafe fn close_sender(this: NonNull<Self>, cause: Cause) -> usize {
        // SAFETY: the packet is alive until the swap, and not touched after it.
        let word = unsafe { Self::state_at(this) }.swap_and_wake(terminated(cause));
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
        unsafe { Self::state_at(this) }.swap_and_wake(TERMINATED)
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

/// Keeps [`Receiving`] implemented only by the runtime's ends.
pub(crate) mod sealed {
    /// An end of the runtime's own: its `take` trusts a [`Settled`](crate::wait::Settled) of
    /// its own word, so no other implementation may be handed one to pass on.
    pub trait End {}
}

/// A receiving end of a packet, single-use ([`RecvPacket`]) or in a session buffer
/// (`RecvSlot`), or of an unbounded session's lane (`Duplex`): the ways to receive, written
/// once over how each end takes what settled its word. Not a public API.
///
/// Sealed: a [`Settled`] says what one word holds, and an implementation outside the runtime
/// would be handed one in its `take` and could pass it to another end's.
pub trait Receiving: sealed::End + Sized {
    /// What a receive yields.
    type Output;

    /// The state word of the packet (or lane) this end receives from.
    fn word(&self) -> &StateWord;

    /// The word in [`word`](Receiving::word) that means nothing for this end yet: `EMPTY` for a
    /// packet, the word of the receiver's own position for a lane (see `wait.rs`).
    fn idle(&self) -> usize {
        EMPTY
    }

    /// Consumes the end once the sender has made its final transition: the message, or why
    /// the sender hung up instead. Only the runtime can make a [`Settled`].
    fn take(self, settled: Settled) -> Result<Self::Output, Cause>;

    /// Blocks until the message arrives or the sender is dropped.
    #[inline]
    fn receive(self, at: &StateName) -> Result<Self::Output, RecvError> {
        match self.word().wait(self.idle(), None) {
            Some(settled) => self.take(settled).map_err(|cause| at.closed(cause)),
            None => unreachable!("a wait without a deadline ends only when the word settles"),
        }
    }

    /// Takes the message if it is already here; otherwise hands the end back.
    fn try_receive(self, at: &StateName) -> Result<Self::Output, TryRecvError<Self>> {
        match self.word().settled(self.idle()) {
            Some(settled) => self
                .take(settled)
                .map_err(|cause| TryRecvError::Disconnected(at.closed(cause))),
            None => Err(TryRecvError::Empty(self)),
        }
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
        match self.word().wait(self.idle(), Some(deadline)) {
            Some(settled) => self
                .take(settled)
                .map_err(|cause| RecvTimeoutError::Disconnected(at.closed(cause))),
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

impl<T> SendPacket<T> {
    /// Sends the message `message` builds around one end of a fresh packet, and returns the
    /// packet's other end: how a message carries the receiver's endpoint for the next state
    /// while the sender keeps its own. If the receiver is gone, the message is handed back (and
    /// the fresh packet is freed with the ends).
    pub fn send_with<N: Entangled>(self, message: impl FnOnce(N) -> T) -> Result<N::Kept, T> {
        let (carried, kept) = N::entangle();
        self.send(message(carried)).map(|()| kept)
    }
}

/// One end of a fresh single-use packet, to be carried in a message, and the end its sender
/// keeps (see [`SendPacket::send_with`]).
pub trait Entangled: Sized {
    /// The other end.
    type Kept;
    /// A fresh packet's two ends: this one, and the other.
    fn entangle() -> (Self, Self::Kept);
}

impl<T> Entangled for SendPacket<T> {
    type Kept = RecvPacket<T>;

    fn entangle() -> (Self, RecvPacket<T>) {
        entangle()
    }
}

impl<T> Entangled for RecvPacket<T> {
    type Kept = SendPacket<T>;

    fn entangle() -> (Self, SendPacket<T>) {
        let (send, recv) = entangle();
        (recv, send)
    }
}

impl<T> SendPacket<T> {
    /// Ends the protocol without sending, so the receiver's receive fails for `cause`.
    pub fn close_with(self, cause: Cause) {
        let ptr = self.packet;
        mem::forget(self);
        // SAFETY: we are the sender and have not made our final transition (this is it).
        unsafe { close(ptr, cause) };
    }
}

/// The sender's hang-up: [`Packet::close_sender`], freeing the packet if the receiver went
/// first.
///
/// # Safety
/// The caller is the packet's sender and has not made its final transition.
unsafe fn close<T>(packet: NonNull<Packet<T>>, cause: Cause) {
    // SAFETY: as the caller guarantees.
    if unsafe { Packet::close_sender(packet, cause) } == TERMINATED {
        // SAFETY: the receiver terminated first; the slot was never written.
        unsafe { free(packet) };
    }
}

impl<T> Drop for SendPacket<T> {
    fn drop(&mut self) {
        // SAFETY: we are the sender and have not made our final transition (this is it).
        unsafe { close(self.packet, Cause::Closed) };
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
}

impl<T> sealed::End for RecvPacket<T> {}

impl<T> Receiving for RecvPacket<T> {
    type Output = T;

    fn word(&self) -> &StateWord {
        self.state_word()
    }

    /// Moves the message out and frees the packet.
    fn take(self, settled: Settled) -> Result<T, Cause> {
        let ptr = self.packet;
        mem::forget(self);
        // SAFETY: the sender made its final transition, so we own the packet; a full `settled`
        // is `FULL` read with Acquire, so the message is there and visible.
        let message = settled.is_full().then(|| unsafe { ptr.as_ref().take() });
        // SAFETY: the sender made its final transition before us and the slot is moved out.
        unsafe { free(ptr) };
        message.ok_or(settled.cause())
    }
}

impl<T> Drop for RecvPacket<T> {
    fn drop(&mut self) {
        // A `FULL` word is the sender's final transition: the packet is ours without a swap,
        // which keeps dropping a backlog (one packet per message) at a load per message.
        // SAFETY: we are the receiver and have not made our final transition, so the packet is
        // alive.
        let word = match unsafe { Packet::state_at(self.packet) }.load() {
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
            word if is_terminated(word) => unsafe { free(self.packet) },
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

//! Session buffers for bounded protocols: one allocation per session, holding one packet
//! ([`Slot`]) per state, reused every time the protocol comes round: no allocation per message.
//!
//! Reuse is safe because of the 2012 liveness rule: in a bounded protocol no state can be
//! outstanding twice, so a slot is always received (and reset to `EMPTY`) before anyone sends
//! into it again, and that receive happens-before the next send through the chain of messages
//! between them.
//!
//! # Misuse is a panic, not a race
//!
//! Generated code is plain Rust text (build.rs output too), so whatever it calls here safe code
//! can call as well. The runtime therefore checks what the liveness rule promises instead of
//! trusting it, and nothing here is `unsafe` to call:
//! - each slot's type says which side sends into it ([`SentByClient`], [`SentByServer`]),
//!   and a share builds only its own side's endpoints: one sender and one receiver per slot;
//! - a slot a share picks must lie inside that share's buffer, so no slot is shared between
//!   sessions;
//! - a send writes only into a slot whose last message was received: the receive stores
//!   `EMPTY` with Release and the send's check reads it with Acquire, so the receive
//!   happens-before the next write even without the chain of messages;
//! - only the runtime closes slots ([`Closer`]).
//!
//! A protocol that passes the liveness check never trips these; code that breaks them gets a
//! panic naming the rule.
//!
//! # Who frees the buffer
//!
//! Each side of the session (client and server) holds one [`Session`] share at a time, inside
//! its current endpoint. A send or receive hands the share on to the endpoint for the next
//! state, built by the side itself from the same buffer: no endpoint ever travels inside a slot,
//! so no reference count moves per message. The count (2 at the start) drops once per side:
//! - normally, when a side sends or receives a message that ends the protocol (`-> !`): the
//!   generated code calls [`Session::finish`];
//! - abnormally, when a side drops an endpoint or meets a closed peer: dropping a share
//!   terminates every slot that is `EMPTY` or BLOCKED (waking a parked peer), so the peer's next
//!   send or receive fails wherever it is in the protocol, as it would with single-use packets.
//!   A side closed for a [`Cause`] (`close_with`, what a remote session's pump does when the
//!   wire fails) leaves the cause in the buffer before it closes any slot, so the peer's failed
//!   receive reports it.
//!
//! Whoever drops the count to zero frees the buffer; a message still in a slot is dropped then.
//! A message whose `Drop` panics there (or in a receiving endpoint's drop) does not stop the
//! other slots from being dropped nor the buffer from being freed: the first panic reaches the
//! caller once they are, and later ones are dropped (a panic while unwinding would abort).

use std::fmt;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::num::NonZeroUsize;
use std::ptr::{self, NonNull};
use std::time::{Duration, Instant};

use crate::drop_queue;
use crate::error::{Cause, RecvError, RecvTimeoutError, TryRecvError};
use crate::packet::{self, Packet, Receiving, StateName};
use crate::panics::{Panics, deferring};
use crate::sync::{AtomicUsize, Ordering, fence};
use crate::wait::{EMPTY, FULL, Settled, StateWord, TERMINATED, is_settled, wake};
use crate::waiter::word_of;

/// A side of a session: which share a slot's sender holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Side {
    /// The server's share.
    Server,
    /// The client's share.
    Client,
}

/// Which side sends into a [`Slot`]: [`SentByClient`] or [`SentByServer`], in the slot's
/// type, so that checking it reads nothing of the slot (whose line its peer may hold).
pub trait Sender: side::Sealed {
    /// The side.
    const SIDE: Side;
}

mod side {
    /// Keeps [`Sender`](super::Sender) to the two markers.
    pub trait Sealed {}
}

/// A [`Slot`] the client sends into.
#[derive(Debug)]
pub enum SentByClient {}

/// A [`Slot`] the server sends into.
#[derive(Debug)]
pub enum SentByServer {}

impl side::Sealed for SentByClient {}
impl side::Sealed for SentByServer {}

impl Sender for SentByClient {
    const SIDE: Side = Side::Client;
}

impl Sender for SentByServer {
    const SIDE: Side = Side::Server;
}

/// The packet of one state in a session buffer, sent into by the side `S` says.
pub struct Slot<T, S: Sender> {
    packet: Packet<T>,
    _sender: PhantomData<S>,
}

impl<T, S: Sender> Slot<T, S> {
    /// An empty slot.
    pub fn new() -> Self {
        Slot {
            packet: Packet::new(),
            _sender: PhantomData,
        }
    }

    /// Terminates the slot unless it holds a message or is already terminated, waking a receiver
    /// parked on it. Used when a side of the session goes away.
    fn close(&self) {
        let state = &self.packet.state_word().0;
        let mut word = state.load(Ordering::Acquire);
        while !is_settled(word.addr(), EMPTY) {
            match state.compare_exchange(
                word,
                word_of(TERMINATED),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    if word.addr() != EMPTY {
                        // SAFETY: a BLOCKED word, just exchanged out by us.
                        unsafe { wake(word) };
                    }
                    return;
                }
                Err(current) => word = current,
            }
        }
    }
}

impl<T, S: Sender> Default for Slot<T, S> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T, S: Sender> Drop for Slot<T, S> {
    /// Drops a message nobody received with the buffer. If its `Drop` panics, the panic goes on
    /// to the buffer's caller while the other slots are still dropped and the buffer freed
    /// (drop glue does both while unwinding); their own panics, if any, are dropped, since a
    /// panic while unwinding would abort.
    fn drop(&mut self) {
        if self.packet.state_word().load() == FULL {
            // SAFETY: the buffer is being freed, so both sides are gone and the message is ours.
            let message = unsafe { self.packet.take() };
            let at = (&raw const *self).cast();
            let mut panics = Panics::default();
            // Through the drop queue: the buffer is freed as a message is (`Session::release`).
            panics.catch(|| drop_queue::drop_inside(at, message));
            panics.resume();
        }
    }
}

impl<T, S: Sender> fmt::Debug for Slot<T, S> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Slot").finish_non_exhaustive()
    }
}

/// The slots of a bounded protocol's session buffer: a struct with one [`Slot`] per state,
/// generated by `proto!`.
pub trait Slots: Sized {
    /// Closes every slot, with `closer`.
    fn close(&self, closer: &Closer<'_>);
}

/// Closes the slots of the buffer whose share is being dropped: handed only to
/// [`Slots::close`], only by that drop, so nothing else can close a slot under a live sender.
pub struct Closer<'a> {
    buffer: Bounds,
    _buffer: PhantomData<&'a ()>,
}

impl Closer<'_> {
    /// Terminates `slot` unless it holds a message or is already terminated, waking a receiver
    /// parked on it. A slot of another buffer is left alone: it is not this drop's to close
    /// (and a panic here could be one while unwinding).
    pub fn close<T, S: Sender>(&self, slot: &Slot<T, S>) {
        if self.buffer.holds(slot) {
            slot.close();
        }
    }
}

impl fmt::Debug for Closer<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Closer").finish_non_exhaustive()
    }
}

/// The bytes of one buffer's slots, to check that a slot is one of them.
#[derive(Clone, Copy)]
struct Bounds {
    start: usize,
    end: usize,
}

impl Bounds {
    fn of<B>(slots: &B) -> Self {
        let start = ptr::from_ref(slots).addr();
        Bounds {
            start,
            end: start + size_of::<B>(),
        }
    }

    /// Whether `slot` lies wholly inside these bytes.
    fn holds<T, S: Sender>(self, slot: &Slot<T, S>) -> bool {
        let at = ptr::from_ref(slot).addr();
        self.start <= at && at + size_of::<Slot<T, S>>() <= self.end
    }
}

struct Buffer<B> {
    /// Sides still holding a share: 2, 1, then 0 and the buffer is freed.
    sides: AtomicUsize,
    /// Why a side ended the session abnormally (a [`Cause`]'s index), written before its drop
    /// closes the slots and read by the other only after it found its slot closed.
    cause: AtomicUsize,
    slots: B,
}

/// Allocates a session buffer and returns the server's and the client's shares of it.
///
/// The shares are meant to be used as the states of a bounded protocol (what `proto!`
/// generates for one that passes the liveness check); any other use panics where it would
/// break the slots' rules (see the module docs), never races.
pub fn session<B: Slots>(slots: B) -> (Session<B>, Session<B>) {
    let buffer = Box::new(Buffer {
        sides: AtomicUsize::new(2),
        cause: AtomicUsize::new(Cause::Closed.index()),
        slots,
    });
    let buffer = NonNull::from(Box::leak(buffer));
    let share = |side| Session {
        tagged: buffer.map_addr(|addr| addr | (side == Side::Client) as usize),
        _owns: PhantomData,
    };
    (share(Side::Server), share(Side::Client))
}

/// One side's share of a session buffer. Dropping it ends that side abnormally (see the module
/// docs); [`Session::finish`] ends it normally.
pub struct Session<B: Slots> {
    /// The buffer, with its lowest bit set for the client's share (a buffer holds atomics, so
    /// that bit of its address is free): which side holds the share, kept in the pointer so
    /// that a share stays one word and an endpoint two, returned in registers. A field of its
    /// own made them three, returned through memory: bounded pingpong lost a third.
    tagged: NonNull<Buffer<B>>,
    _owns: PhantomData<B>,
}

// SAFETY: a share gives access to the buffer's slots from another thread, which needs them to
// be `Sync`, and the last share to go drops them on its own thread, which needs them `Send`.
unsafe impl<B: Slots + Send + Sync> Send for Session<B> {}

impl<B: Slots> Session<B> {
    /// Which side holds this share: it sends into the slots from this side only.
    fn side(&self) -> Side {
        if self.tagged.addr().get() & 1 == 1 {
            Side::Client
        } else {
            Side::Server
        }
    }

    /// The buffer, without the side's tag.
    fn buffer_ptr(&self) -> NonNull<Buffer<B>> {
        self.tagged
            .map_addr(|addr| NonZeroUsize::new(addr.get() & !1).unwrap_or(addr))
    }

    fn slots(&self) -> &B {
        &self.buffer().slots
    }

    /// The sending endpoint for the slot `slot` picks, holding this share. Panics if the slot
    /// is not in this buffer or is sent into by the other side (see the module docs).
    pub fn sender<T, S: Sender>(self, slot: impl FnOnce(&B) -> &Slot<T, S>) -> SendSlot<T, B> {
        let packet = self.pick(slot, true);
        SendSlot {
            session: ManuallyDrop::new(self),
            packet,
        }
    }

    /// The receiving endpoint for the slot `slot` picks, holding this share. Panics if the
    /// slot is not in this buffer or is sent into by this side (see the module docs).
    pub fn receiver<T, S: Sender>(self, slot: impl FnOnce(&B) -> &Slot<T, S>) -> RecvSlot<T, B> {
        let packet = self.pick(slot, false);
        RecvSlot {
            session: ManuallyDrop::new(self),
            packet,
        }
    }

    /// The packet of the slot `slot` picks, checked to be in this buffer and sent into by
    /// this side if `sends` (by the other if not). Reads nothing of the slot: its line may be
    /// the peer's, and this side's next touch of it is its send or receive.
    #[inline]
    fn pick<T, S: Sender>(
        &self,
        slot: impl FnOnce(&B) -> &Slot<T, S>,
        sends: bool,
    ) -> NonNull<Packet<T>> {
        let slots = self.slots();
        let slot = slot(slots);
        assert!(
            Bounds::of(slots).holds(slot),
            "pipes: a session's endpoint was built over a slot of another buffer"
        );
        assert!(
            (S::SIDE == self.side()) == sends,
            "pipes: a session's {} endpoint was built over a slot the other side {}",
            if sends { "sending" } else { "receiving" },
            if sends { "sends into" } else { "receives from" },
        );
        NonNull::from(&slot.packet)
    }

    fn buffer(&self) -> &Buffer<B> {
        // SAFETY: our share keeps the buffer alive.
        unsafe { self.buffer_ptr().as_ref() }
    }

    /// Ends this side abnormally for `cause`: the peer's next receive fails for it.
    pub fn close_with(self, cause: Cause) {
        self.leave_cause(cause);
        drop(self);
    }

    /// Leaves `cause` for the peer, before this side closes any slot. Relaxed: the closing
    /// swap publishes it (the peer reads it only after an Acquire load of a closed slot's
    /// word).
    fn leave_cause(&self, cause: Cause) {
        self.buffer().cause.store(cause.index(), Ordering::Relaxed);
    }

    /// Why the peer ended the session, once a receive found its slot closed.
    fn cause(&self) -> Cause {
        Cause::from_index(self.buffer().cause.load(Ordering::Relaxed))
    }

    /// Ends this side normally: the protocol reached `!`, so the peer needs no warning.
    pub fn finish(self) {
        let this = ManuallyDrop::new(self);
        this.release();
    }

    fn release(&self) {
        // SAFETY: our share keeps the buffer alive until the decrement below.
        let buffer = unsafe { self.buffer_ptr().as_ref() };
        // Release orders our uses of the buffer before the decrement; the last side's Acquire
        // fence orders them before the free, as in `Arc`.
        if buffer.sides.fetch_sub(1, Ordering::Release) == 1 {
            fence(Ordering::Acquire);
            // SAFETY: both shares are gone, so nobody else can reach the buffer, which came
            // from `Box::leak` in `session`.
            let buffer = unsafe { Box::from_raw(self.buffer_ptr().as_ptr()) };
            // Messages left in its slots go through the drop queue: a share that lies in a
            // message being dropped (an endpoint delegated in it) has them queued there.
            drop_queue::drop_freed((&raw const *self).cast(), buffer);
        }
    }
}

impl<B: Slots> Drop for Session<B> {
    /// Closes every slot, waking whoever waits on one, and lets go of the buffer; a waker that
    /// panics holds up neither (see [`deferring`]).
    fn drop(&mut self) {
        deferring(|| {
            let slots = self.slots();
            slots.close(&Closer {
                buffer: Bounds::of(slots),
                _buffer: PhantomData,
            });
            self.release();
        });
    }
}

impl<B: Slots> fmt::Debug for Session<B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Session").finish_non_exhaustive()
    }
}

/// The sending endpoint of a slot in a session buffer.
pub struct SendSlot<T, B: Slots> {
    session: ManuallyDrop<Session<B>>,
    packet: NonNull<Packet<T>>,
}

// SAFETY: sending moves a `T` to the peer's thread; the share is `Send` (see `Session`).
unsafe impl<T: Send, B: Slots + Send + Sync> Send for SendSlot<T, B> {}

impl<T, B: Slots> SendSlot<T, B> {
    /// Sends `message`. Never blocks. Returns this side's share, to build the endpoint for the
    /// next state or to [`Session::finish`]; if the peer is gone, hands the message back (and
    /// this side ends).
    ///
    /// Panics if this side's last message in the slot is still there (see the module docs).
    pub fn send(self, message: T) -> Result<Session<B>, T> {
        let (session, packet) = self.into_parts();
        // SAFETY: the share keeps the slot alive.
        let packet = unsafe { packet.as_ref() };
        // The one-slot rule, checked: only this side makes the slot `FULL`, so what this sees
        // holds until the write below. Acquire pairs with the receive's Release `EMPTY`, so
        // the payload's last read happens-before our write. Here, right before the write, and
        // not when the endpoint is built: a read of the slot's line then, long before the
        // write, fetched it from the peer once to read and once more to write (bounded
        // pingpong twice as slow); here it costs nothing measurable (benches/RESULTS.md).
        if packet.state_word().load() == FULL {
            panic!("pipes: a session's slot was sent into again before its message was received");
        }
        // SAFETY: we are the slot's sender for this use, and this is our final transition; the
        // share keeps the packet alive.
        match unsafe { Packet::send(NonNull::from(packet), message) } {
            Ok(()) => Ok(session),
            Err(message) => {
                // The failed send left `FULL` over an empty slot; the peer is gone, so put back
                // the word that says so before the buffer can be freed.
                packet.state_word().store(TERMINATED, Ordering::Relaxed);
                Err(message)
            }
        }
    }

    /// Ends this side without sending, so the peer's receive fails for `cause`.
    pub fn close_with(self, cause: Cause) {
        let (session, packet) = self.into_parts();
        // First: the peer may be waiting on this very slot, and reads the cause as soon as the
        // close below lands.
        session.leave_cause(cause);
        // SAFETY: the share keeps the slot alive, and we are its sender for this use, not yet
        // done with it.
        unsafe { close_unsent(packet, cause) };
        drop(session);
    }

    fn into_parts(self) -> (Session<B>, NonNull<Packet<T>>) {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so the share is moved out once.
        let session = unsafe { ManuallyDrop::take(&mut this.session) };
        (session, this.packet)
    }
}

impl<T, B: Slots> Drop for SendSlot<T, B> {
    fn drop(&mut self) {
        // The close wakes the receiver: a waker that panics must not keep the share (see
        // `deferring`).
        deferring(|| {
            // SAFETY: the share keeps the slot alive, and we are its sender for this use, not
            // yet done with it.
            unsafe { close_unsent(self.packet, Cause::Closed) };
            // SAFETY: dropped once, here.
            unsafe { ManuallyDrop::drop(&mut self.session) };
        });
    }
}

/// A sending endpoint's close without a send: the peer's receive in this slot fails for
/// `cause`. Unless the slot still holds this side's last message (a misuse, see the module
/// docs: the endpoint was built over a full slot): that message stays for the peer, and the
/// share's drop closes the slot once it is received.
///
/// # Safety
/// `packet` is alive, and the caller is its sender for this use, not yet done with it.
unsafe fn close_unsent<T>(packet: NonNull<Packet<T>>, cause: Cause) {
    // SAFETY: as the caller guarantees.
    if unsafe { packet.as_ref() }.state_word().load() != FULL {
        // SAFETY: as the caller guarantees; only this side makes the slot `FULL`, so it is not.
        unsafe { Packet::close_sender(packet, cause) };
    }
}

impl<T, B: Slots> fmt::Debug for SendSlot<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendSlot").finish_non_exhaustive()
    }
}

/// The receiving endpoint of a slot in a session buffer.
pub struct RecvSlot<T, B: Slots> {
    session: ManuallyDrop<Session<B>>,
    packet: NonNull<Packet<T>>,
}

// SAFETY: receiving takes a `T` sent from the peer's thread; the share is `Send`.
unsafe impl<T: Send, B: Slots + Send + Sync> Send for RecvSlot<T, B> {}

impl<T, B: Slots> RecvSlot<T, B> {
    fn packet(&self) -> &Packet<T> {
        // SAFETY: the share keeps the slot alive.
        unsafe { self.packet.as_ref() }
    }

    /// The state word select waits on.
    pub fn state_word(&self) -> &StateWord {
        self.packet().state_word()
    }

    /// Blocks until the message arrives or the peer is gone. Returns the message and this
    /// side's share, to build the endpoint for the next state or to [`Session::finish`].
    pub fn recv(self, at: &StateName) -> Result<(T, Session<B>), RecvError> {
        self.receive(at)
    }

    /// Takes the message if it is already here; otherwise hands the endpoint back.
    pub fn try_recv(self, at: &StateName) -> Result<(T, Session<B>), TryRecvError<Self>> {
        self.try_receive(at)
    }

    /// Blocks for at most `timeout`; hands the endpoint back if nothing arrived in time.
    pub fn recv_timeout(
        self,
        timeout: Duration,
        at: &StateName,
    ) -> Result<(T, Session<B>), RecvTimeoutError<Self>> {
        self.receive_within(timeout, at)
    }

    /// Blocks until `deadline` at the latest; hands the endpoint back if nothing arrived.
    pub fn recv_deadline(
        self,
        deadline: Instant,
        at: &StateName,
    ) -> Result<(T, Session<B>), RecvTimeoutError<Self>> {
        self.receive_until(deadline, at)
    }
}

impl<T, B: Slots> packet::sealed::End for RecvSlot<T, B> {}

impl<T, B: Slots> Receiving for RecvSlot<T, B> {
    type Output = (T, Session<B>);

    fn word(&self) -> &StateWord {
        self.state_word()
    }

    /// Takes the message and resets the slot for its next use, or ends this side.
    fn take(self, settled: Settled) -> Result<(T, Session<B>), Cause> {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never used or dropped again, so the share is moved out once.
        let session = unsafe { ManuallyDrop::take(&mut this.session) };
        if !settled.is_full() {
            return Err(session.cause());
        }
        let packet = this.packet();
        // SAFETY: we are the receiver and read `FULL` with Acquire.
        let message = unsafe { packet.take() };
        // The next send into this slot happens-after this store through the messages between
        // (the liveness rule); Release lets the sender's check see it so without trusting that
        // rule (see `Session::sender`).
        packet.state_word().store(EMPTY, Ordering::Release);
        Ok((message, session))
    }
}

impl<T, B: Slots> RecvSlot<T, B> {
    /// Ends this side without receiving, so the peer's next receive fails for `cause` (a
    /// message already here is dropped, as by the endpoint's drop).
    pub fn close_with(self, cause: Cause) {
        self.session.leave_cause(cause);
        drop(self);
    }
}

impl<T, B: Slots> Drop for RecvSlot<T, B> {
    /// Ends this side; an unreceived message is moved out of the slot first and dropped after
    /// the share is let go, so a `Drop` that panics can neither keep the buffer alive nor stop
    /// the share from closing the session.
    fn drop(&mut self) {
        // The close may wake the sender: a waker that panics must not keep the share or the
        // message (see `deferring`).
        deferring(|| {
            // SAFETY: the share keeps the slot alive, and we are its receiver for this use,
            // not yet done with it.
            let word = unsafe { Packet::close_receiver(NonNull::from(self.packet())) };
            // SAFETY: `FULL` was swapped out (with Acquire) by us, the receiver, so the message
            // is ours; the slot is left `TERMINATED` over a moved-out payload, which nothing
            // reads.
            let message = (word == FULL).then(|| unsafe { self.packet().take() });
            // Letting go of the share may free the buffer, dropping other slots' messages. In
            // place, so the buffer's drop knows whether the share lies in a message.
            let session = &mut self.session;
            let mut panics = Panics::default();
            // SAFETY: dropped once, here; `self` is not used again but for its address.
            panics.catch(|| unsafe { ManuallyDrop::drop(session) });
            // Through the drop queue: an endpoint in the message (the next session's, say) is
            // queued, not recursed into.
            let at = (&raw const *self).cast();
            panics.catch(|| {
                if let Some(message) = message {
                    drop_queue::drop_held(at, message);
                }
            });
            panics.resume();
        });
    }
}

impl<T, B: Slots> fmt::Debug for RecvSlot<T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvSlot").finish_non_exhaustive()
    }
}

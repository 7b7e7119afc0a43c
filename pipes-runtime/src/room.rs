//! Room: a sender that must not run too far ahead of its receiver waits for it.
//!
//! Sends never block, so a session whose receiver is slower than its sender grows a backlog in
//! the lane between them. In one process that is the sender's choice, as with any unbounded
//! channel. A remote session's pump is such a receiver: it forwards a message only once the
//! peer has granted credit, so a user that sends faster than the peer reads would fill the lane
//! to the pump without bound. A receiver that reports its takes ([`Backlog::report`]) lets a
//! sender that wants its memory bounded wait for room before it sends: blocking with
//! [`wait_room`], or with a [`RoomFuture`] on any executor. Endpoints whose receiver does not
//! report (every local session's, and those that move one message at a time) always have room.
//! `pipes-net`'s pumps report, and its `writable` waits here.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Instant;

use crate::buffer::{RecvSlot, SendSlot, Slots};
use crate::duplex::Duplex;
use crate::lane::Room;
use crate::packet::{RecvPacket, SendPacket};
use crate::state::Registration;

/// An endpoint's view of the backlog between its side and the peer's: the room its sends
/// leave, and the report of its takes. Generated code implements it for every endpoint of a
/// state with messages, through the end it holds. Not a public API.
#[doc(hidden)]
pub trait Backlog {
    /// The room this side's sends leave, if they go over a lane (an unbounded session's).
    fn room(&self) -> Option<Room<'_>>;

    /// From now on, reports this side's takes, so that the peer's sends wait (when they ask
    /// to) until at most `room` of them are still to be taken here. For a pump.
    fn report(&self, room: usize);
}

/// Ends that move one message at a time leave the bound to the protocol.
macro_rules! no_backlog {
    ($($end:ty $(where $b:ident: $bound:path)?),*) => {$(
        impl<T $(, $b: $bound)?> Backlog for $end {
            fn room(&self) -> Option<Room<'_>> {
                None
            }

            fn report(&self, _: usize) {}
        }
    )*};
}

no_backlog!(SendPacket<T>, RecvPacket<T>, SendSlot<T, B> where B: Slots, RecvSlot<T, B> where B: Slots);

impl<Tx, Rx> Backlog for Duplex<Tx, Rx> {
    fn room(&self) -> Option<Room<'_>> {
        Some(self.room())
    }

    fn report(&self, room: usize) {
        Duplex::report(self, room);
    }
}

/// Blocks until `endpoint`'s sends have room (see the module docs), or `deadline` passes (then
/// `false`).
pub fn wait_room<E: Backlog>(endpoint: &E, deadline: Option<Instant>) -> bool {
    endpoint.room().is_none_or(|room| room.wait(deadline))
}

/// A future that resolves to its endpoint once the endpoint's sends have room (see the module
/// docs). `Send` when the endpoint is. [`cancel`](RoomFuture::cancel) hands the endpoint back;
/// dropping the future drops it. No waker is left behind either way.
#[must_use = "a future does nothing unless polled"]
pub struct RoomFuture<E: Backlog> {
    endpoint: Option<E>,
    registration: Registration,
    /// The word our registration was left over.
    idle: usize,
}

// The future never hands out a pinned reference to its fields, and the word holds the waiter's
// address, not the future's.
impl<E: Backlog> Unpin for RoomFuture<E> {}

impl<E: Backlog> RoomFuture<E> {
    /// Waits for room for `endpoint`'s sends.
    pub fn new(endpoint: E) -> Self {
        RoomFuture {
            endpoint: Some(endpoint),
            registration: Registration::default(),
            idle: 0,
        }
    }

    /// Stops waiting and hands the endpoint back (for a wait under a timeout that expired).
    pub fn cancel(mut self) -> E {
        self.unwatch();
        self.endpoint
            .take()
            .expect("RoomFuture cancelled after it resolved")
    }

    /// Takes our registration out of the word, if we left one.
    fn unwatch(&mut self) {
        if let Some(room) = self.endpoint.as_ref().and_then(Backlog::room) {
            self.registration.cancel(room.word(), self.idle);
        }
    }
}

impl<E: Backlog> Future for RoomFuture<E> {
    type Output = E;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<E> {
        let this = self.get_mut();
        loop {
            let endpoint = this
                .endpoint
                .as_ref()
                .expect("RoomFuture polled after it resolved");
            let Some(found) = endpoint.room().and_then(|room| room.full()) else {
                this.unwatch();
                return Poll::Ready(this.endpoint.take().expect("the endpoint is still ours"));
            };
            let room = endpoint.room().expect("a full room is a room");
            // A waiter in the word (`full` says 0) is ours, left over the word we saw then:
            // a re-poll finds it there (only this future, which owns the endpoint, waits on
            // the word now; a forgotten one's waiter was displaced by our registration).
            let idle = if found == 0 { this.idle } else { found };
            // A registration over another word (the receiver took meanwhile) is replaced.
            if idle != this.idle {
                this.registration.cancel(room.word(), this.idle);
                this.idle = idle;
            }
            match this.registration.poll(room.word(), idle, cx) {
                // The receiver took something, or is gone: look again.
                Poll::Ready(_) => continue,
                Poll::Pending => return Poll::Pending,
            }
        }
    }
}

impl<E: Backlog> Drop for RoomFuture<E> {
    fn drop(&mut self) {
        self.unwatch();
    }
}

impl<E: Backlog> fmt::Debug for RoomFuture<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RoomFuture")
            .field("pending", &self.endpoint.is_some())
            .finish_non_exhaustive()
    }
}

//! Async receives: [`RecvFuture`], a `Future` over any receiving end of a packet, for any
//! executor (the runtime depends on none).
//!
//! A future polls the same state word a blocking receive waits on. The message already there
//! is taken at once; otherwise the future leaves a `Waiter::Task` holding the task's `Waker`
//! in the word (compare-exchange `EMPTY` -> waiter word), exactly where a blocked thread would
//! leave its handle, and returns `Pending`. The sender's swap takes that reference and wakes the
//! task, so a send stays one swap and never blocks whether the receiver is a thread or a task.
//!
//! # Polling with another waker
//!
//! When the task moves (a re-poll with a waker that would not wake the same task), the future
//! takes its registration back out of the word (which returns the reference to it) and
//! registers the new waker. If the sender swapped the waiter out first, the packet is settled
//! and the message is taken on this very poll. (`StateWord::watch` in `packet.rs` does both.)
//!
//! # Cancel safety
//!
//! Dropping a pending future drops the endpoint it owns: first it takes its registration back
//! (or finds the sender already took it), then the endpoint is dropped as any endpoint is, so
//! the peer sees the pipe closed: a later send hands its message back, and a message that was
//! already sent is dropped with the endpoint. Nothing is lost silently *and* nothing is kept:
//! to stop waiting without closing the pipe, do not drop the future, or use `try_recv`.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::error::RecvError;
use crate::packet::{Receiving, RecvPacket, StateName};
use crate::sync::Arc;
use crate::wait::{EMPTY, Settled, StateWord};
use crate::waiter::Waiter;

/// A task's registration in one state word: the core of every receive future here.
#[derive(Debug, Default)]
pub(crate) struct Registration {
    /// Our reference to the task waiter we left in the state word, if we left one. The word
    /// holds a second reference, owned by whoever swaps it out: the sender, or us taking it
    /// back. Another watcher of the same word may carry it (see `waiter.rs`).
    waiter: Option<Arc<Waiter>>,
}

impl Registration {
    /// `Ready` once the sender is done with the packet, so the endpoint may take it; otherwise
    /// leaves the task's waker in `word` and `Pending`. A re-poll with another waker moves the
    /// registration to it.
    pub(crate) fn poll(
        &mut self,
        word: &StateWord,
        idle: usize,
        cx: &Context<'_>,
    ) -> Poll<Settled> {
        word.watch(idle, cx.waker(), &mut self.waiter)
    }

    /// Takes our waiter back out of `word`. `Some` if the sender was done meanwhile (it swapped
    /// the waiter out and owns that reference).
    pub(crate) fn cancel(&mut self, word: &StateWord, idle: usize) -> Option<Settled> {
        word.unwatch(idle, &mut self.waiter)
    }
}

/// A future that receives one message from a receiving end of a packet (a single-use
/// `RecvPacket` or a session buffer's `RecvSlot`). Resolves to what the blocking `recv` returns.
///
/// Cancel-safe in the sense that matters for pipes: dropping it before it resolves drops the
/// endpoint, so the peer sees the pipe closed (see the module docs); no waker is leaked.
#[must_use = "a future does nothing unless polled; dropping it closes the pipe"]
pub struct RecvFuture<R: Receiving> {
    /// The endpoint, until the future resolves.
    end: Option<R>,
    registration: Registration,
    /// Names the state for the error of a closed pipe.
    at: StateName,
}

// The future never hands out a pinned reference to its fields, and the state word holds the
// waiter's address, not the future's: moving the future between polls is fine.
impl<R: Receiving> Unpin for RecvFuture<R> {}

impl<R: Receiving> RecvFuture<R> {
    pub(crate) fn new(end: R, at: StateName) -> Self {
        RecvFuture {
            end: Some(end),
            registration: Registration::default(),
            at,
        }
    }
}

impl<T> RecvPacket<T> {
    /// A future that receives the message on any executor. Dropping it before it resolves
    /// drops this endpoint, so the sender sees the pipe closed.
    pub fn recv_async(self, at: &StateName) -> RecvFuture<Self> {
        RecvFuture::new(self, *at)
    }
}

impl<R: Receiving> Future for RecvFuture<R> {
    type Output = Result<R::Output, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let end = this
            .end
            .as_ref()
            .expect("RecvFuture polled after it resolved");
        let settled = std::task::ready!(this.registration.poll(end.word(), EMPTY, cx));
        let end = this.end.take().expect("the endpoint is still ours");
        Poll::Ready(end.take(settled).ok_or_else(|| this.at.closed()))
    }
}

impl<R: Receiving> Drop for RecvFuture<R> {
    fn drop(&mut self) {
        if let Some(end) = self.end.take() {
            // The waiter must be out of the word before the endpoint's drop swaps in
            // `TERMINATED` (which expects no waiter) and, for a single-use packet, may free it.
            // A failed take-back means the sender swapped it out: the packet is settled, and
            // dropping the endpoint drops any message in it.
            self.registration.cancel(end.word(), EMPTY);
            drop(end);
        }
    }
}

impl<R: Receiving> fmt::Debug for RecvFuture<R> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvFuture")
            .field("state", &self.at)
            .field("resolved", &self.end.is_none())
            .field("registration", &self.registration)
            .finish()
    }
}

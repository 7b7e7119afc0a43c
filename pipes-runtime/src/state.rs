//! A protocol state's receiving endpoint as generated code describes it ([`RecvEndpoint`]),
//! and its async receive ([`RecvFuture`]), for any executor (the runtime depends on none).
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
//! `cancel` takes the registration back (or finds the sender already took it) and hands the
//! endpoint back untouched. Dropping a pending future does the same, then drops the endpoint as
//! any endpoint is dropped, so the peer sees the pipe closed: a later send hands its message
//! back, and a message that was already sent is dropped with the endpoint.

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::error::RecvError;
use crate::packet::{Receiving, StateName};
use crate::sync::Arc;
use crate::wait::{Settled, StateWord};
use crate::waiter::Waiter;

/// A protocol state's receiving endpoint, as generated code describes it: the end of the packet
/// (or session slot) its message arrives in, and how what arrives becomes the state's enum.
/// [`Recv`] is implemented once for all of them. Not a public API: it changes with the code
/// generator.
///
/// Whatever an implementation does, it cannot make the runtime unsound: the runtime takes
/// waiters out of a state word only by the word's own protocol, so at worst a wrong `end`
/// costs a spurious wake or a receive that waits on another word.
#[doc(hidden)]
pub trait RecvEndpoint: Sized {
    /// The state's enum of messages, as the user matches on it.
    type Message;
    /// What the message arrives in.
    type End: Receiving;
    /// Names the state in the error of a closed pipe.
    const STATE: StateName;
    /// The end, for a receive.
    fn into_end(self) -> Self::End;
    /// The endpoint again, for a receive that hands it back.
    fn from_end(end: Self::End) -> Self;
    /// The end, for select to wait on.
    fn end(&self) -> &Self::End;
    /// What arrived, as the state's enum (building the receiver's next endpoint).
    fn arrive(arrived: <Self::End as Receiving>::Output) -> Self::Message;
}

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

/// The future of a protocol endpoint's `recv_async` (or of `endpoint.await`): receives the
/// message of the endpoint's state on any executor, resolving to what the blocking `recv`
/// returns. `Send` when the payloads are.
///
/// Cancel-safe: [`cancel`](RecvFuture::cancel) stops waiting and hands the endpoint back, with
/// any message that arrived meanwhile still in it, so a timed-out receive (under
/// `tokio::time::timeout(limit, &mut future)`, or a `select!` branch over `&mut future`) can be
/// retried without closing the session. Dropping the future instead drops the endpoint, so the
/// peer sees the pipe closed; no waker is leaked either way.
#[must_use = "a future does nothing unless polled; dropping it closes the pipe"]
pub struct RecvFuture<E: RecvEndpoint> {
    /// The endpoint's end, until the future resolves or is cancelled.
    end: Option<E::End>,
    registration: Registration,
}

// The future never hands out a pinned reference to its fields, and the state word holds the
// waiter's address, not the future's: moving the future between polls is fine.
impl<E: RecvEndpoint> Unpin for RecvFuture<E> {}

impl<E: RecvEndpoint> RecvFuture<E> {
    pub(crate) fn new(endpoint: E) -> Self {
        RecvFuture {
            end: Some(endpoint.into_end()),
            registration: Registration::default(),
        }
    }

    /// Stops waiting and hands the endpoint back, as it was: a message that arrived meanwhile
    /// is still there for its next receive. `None` if the future already resolved.
    pub fn cancel(mut self) -> Option<E> {
        let end = self.end.take()?;
        // Our waiter must leave the word before anyone else waits on it. If the sender swapped
        // it out first, the word is settled and the next receive finds the message (or the
        // hang-up) at once.
        self.registration.cancel(end.word(), end.idle());
        Some(E::from_end(end))
    }
}

impl<E: RecvEndpoint> Future for RecvFuture<E> {
    type Output = Result<E::Message, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        let end = this
            .end
            .as_ref()
            .expect("RecvFuture polled after it resolved or was cancelled");
        let settled = std::task::ready!(this.registration.poll(end.word(), end.idle(), cx));
        let end = this.end.take().expect("the endpoint is still ours");
        Poll::Ready(
            end.take(settled)
                .map(E::arrive)
                .map_err(|cause| E::STATE.closed(cause)),
        )
    }
}

impl<E: RecvEndpoint> Drop for RecvFuture<E> {
    fn drop(&mut self) {
        if let Some(end) = &self.end {
            // The waiter must be out of the word before the endpoint's drop swaps in
            // `TERMINATED` (which expects no waiter) and, for a single-use packet, may free it.
            // A failed take-back means the sender swapped it out: the packet is settled, and
            // dropping the endpoint drops any message in it.
            self.registration.cancel(end.word(), end.idle());
        }
        // The end drops where it lies, after this: a future that is a field of a message being
        // dropped has its end queued by the drop queue, not recursed into (`drop_queue.rs`).
    }
}

impl<E: RecvEndpoint> fmt::Debug for RecvFuture<E> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RecvFuture")
            .field("state", &E::STATE)
            .field("pending", &self.end.is_some())
            .field("registration", &self.registration)
            .finish()
    }
}

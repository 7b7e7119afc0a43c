//! Streams: many messages of one type, in order, from one sender to one receiver (the 2012
//! library's `streamp`).
//!
//! [`stream()`] makes the two ends: a [`Port`] that receives and a [`Chan`] that sends. Sends
//! never block and never fail while the port is there; the port receives the messages in the
//! order they were sent and is an [`Iterator`] that ends once the chan is dropped and every
//! message is taken.
//!
//! ```
//! # use pipes_runtime as pipes;
//! let (port, chan) = pipes::stream::<u32>();
//! let producer = std::thread::spawn(move || {
//!     for i in 0..3 {
//!         chan.send(i).unwrap();
//!     }
//!     // Dropping the chan ends the stream.
//! });
//! assert_eq!(port.collect::<Vec<_>>(), [0, 1, 2]);
//! producer.join().unwrap();
//! ```
//!
//! # When to use a stream
//!
//! - One producer, one consumer, any number of messages of one type: a stream.
//! - Exactly one message: a [oneshot](mod@crate::oneshot), which costs less.
//! - A conversation whose messages differ from step to step: a protocol declared with
//!   [`proto!`](crate::proto), so the compiler checks every step.
//! - Many producers: [`SharedChan`](crate::SharedChan) if messages from different producers
//!   must keep the order in which they were sent, or a [`PortSet`](crate::PortSet) with a
//!   chan per producer (`set.chan()`) if not; the port set scales better.
//! - Many consumers taking from one queue: no stream does that; workers pull their work over
//!   a protocol of their own ([a pool of workers](mod@crate::select#a-pool-of-workers)).
//!
//! # Receiving
//!
//! A [`Port`] is received from through `&self`, so it is not used up:
//! - [`Port::recv`] blocks; [`Port::try_recv`] and [`Port::peek`] never block;
//!   [`Port::recv_timeout`] and [`Port::recv_deadline`] block for a while.
//! - [`Port::iter`] (also `for message in &port`) blocks for each message;
//!   [`Port::try_iter`] takes what is already there.
//! - [`Port::recv_async`] is a [`PortRecvFuture`] future for any executor. It is cancel-safe: a
//!   future dropped before it resolves loses nothing.
//! - `&Port` is a receiving endpoint for [select](mod@crate::select), beside endpoints of any
//!   protocol.
//!
//! Every receive fails with a [`RecvError`] once the chan is gone and the stream is drained;
//! a [`Chan::send`] after the port is gone hands the message back in a [`SendError`].
//!
//! ```
//! # use pipes_runtime as pipes;
//! use std::time::Duration;
//!
//! let (port, chan) = pipes::stream::<&str>();
//! assert!(port.try_recv().is_err()); // nothing yet, and no wait
//! chan.send("one").unwrap();
//! chan.send("two").unwrap();
//! assert_eq!(port.try_iter().collect::<Vec<_>>(), ["one", "two"]);
//! assert!(port.recv_timeout(Duration::from_millis(1)).unwrap_err().into_endpoint().is_some());
//! drop(chan);
//! assert!(port.recv().is_err());
//! ```
//!
//! # Costs
//!
//! A send writes a slot and publishes it with one atomic swap; it wakes the receiver only if
//! the receiver is parked. A receive of a message already sent touches no shared memory
//! except once per batch. Messages live in segments that the port hands back to the chan
//! once read, so a stream whose port keeps up allocates nothing, and a backlog costs the size
//! of a message per message (8 bytes for a `u64`). A stream is one allocation of about 2.5
//! KiB at first; a backlog grows its segments up to 32 KiB each, and a stream keeps the two
//! it cycles through (at most 64 KiB) until it is dropped. A receiver that finds nothing spins
//! briefly before it parks (see [`spin`](mod@crate::spin)). Dropping a port with
//! messages still queued drops them in a loop, not by recursion, also when they hold ports.

// Implementation: a stream is one lane (`lane.rs`): a send is a slot write and one swap, a
// receive of a message already published touches no shared word, and used-up segments go back
// to the chan. When the chan becomes a shared chan (`SharedChan::new`), the lane is closed
// into the shared chan's queue: the port drains the lane, then receives from the queue.

use std::cell::OnceCell;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::mem::ManuallyDrop;
use std::ops::Deref;
use std::pin::Pin;
use std::ptr::{self, NonNull};
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use crate::drop_queue::{self, DropQueue};
use crate::endpoint::Recv;
use crate::endpoint::sealed::Sealed;
use crate::error::{Cause, RecvError, RecvTimeoutError, SendError, TryRecvError};
use crate::lane::{LaneRx, LaneTx, lane};
use crate::mpsc::SharedQueue;
use crate::spin::Chase;
use crate::sync::Arc;
use crate::take::Take;
use crate::target::{PortTarget, Target};
use crate::wait::{Displaced, Found};
use crate::waiter::Waiter;

/// Makes a stream: the receiving and the sending end, in that order.
pub fn stream<T>() -> (Port<T>, Chan<T>) {
    let (rx, tx) = lane();
    (
        Port {
            rx,
            shared: OnceCell::new(),
            chase: Chase::default(),
        },
        Chan { tx },
    )
}

/// The sending end of a stream. Not `Sync`: share it through a `SharedChan`.
pub struct Chan<T> {
    tx: LaneTx<T>,
}

impl<T> Chan<T> {
    /// Sends a message. Never blocks; hands the message back if the port is gone.
    #[inline]
    pub fn send(&self, message: T) -> Result<(), SendError<T>> {
        self.tx.send(message).map_err(SendError)
    }

    /// Hangs up, handing the port over to `queue`: the port receives what this chan sent, then
    /// what the queue's senders send (`SharedChan::new`).
    pub(crate) fn upgrade(self, queue: Arc<SharedQueue<T>>) {
        self.tx.upgrade(queue);
    }
}

/// The receiving end of a stream. It is an [`Iterator`] that ends when the chan is dropped and
/// every message is taken. Dropping it with messages still queued drops them in a loop, not by
/// recursion, also when messages hold ports of other streams.
pub struct Port<T> {
    /// The lane from the chan.
    rx: LaneRx<T>,
    /// Once the chan became a shared chan and the lane is drained: the queue its senders send
    /// into, whose one consumer this port is.
    shared: OnceCell<Arc<SharedQueue<T>>>,
    /// Whether blocking receives keep catching up with a sender sending flat out.
    chase: Chase,
}

impl<T> Port<T> {
    /// The shared chan's queue, once the lane ran out into it.
    fn queue(&self) -> Option<&SharedQueue<T>> {
        self.shared.get().map(|queue| &**queue)
    }

    /// Takes the next message, without building an error when there is none. When the lane
    /// is closed and drained and its chan became a shared chan, the port moves on to the queue.
    #[inline]
    pub(crate) fn take_next(&self) -> Take<T> {
        if let Some(queue) = self.queue() {
            // SAFETY: this port is the queue's one consumer, on one thread at a time (it is not
            // `Sync`), and it closes the queue only in its drop.
            return unsafe { queue.take() };
        }
        match self.rx.try_recv() {
            Take::Closed if self.upgrade() => self.take_next(),
            taken => taken,
        }
    }

    /// What a receive would find, without taking it.
    #[inline]
    pub(crate) fn look(&self) -> Take<()> {
        if let Some(queue) = self.queue() {
            // SAFETY: as in `take_next`.
            return unsafe { queue.look() };
        }
        match self.rx.look() {
            Take::Closed if self.upgrade() => self.look(),
            found => found,
        }
    }

    /// Moves on to the shared chan's queue if the closed lane's chan became one.
    fn upgrade(&self) -> bool {
        match self.rx.take_upgrade() {
            Some(queue) => {
                let _ = self.shared.set(queue);
                true
            }
            None => false,
        }
    }

    /// Waits until a receive would not wait, or `deadline` passes (then `false`; a spurious
    /// `true` is possible).
    fn wait(&self, deadline: Option<Instant>) -> bool {
        match self.queue() {
            // SAFETY: as in `take_next`.
            Some(queue) => unsafe { queue.wait(deadline) },
            None => self.rx.word().wait(self.rx.idle(), deadline).is_some(),
        }
    }

    /// Blocks until a message arrives; fails once the chan is dropped and the stream drained.
    pub fn recv(&self) -> Result<T, RecvError> {
        loop {
            match self.take_next() {
                Take::Message(message) => return Ok(message),
                Take::Closed => return Err(closed()),
                Take::Empty => {
                    if !self.chase.caught_up(|| !matches!(self.look(), Take::Empty)) {
                        self.wait(None);
                    }
                }
            }
        }
    }

    /// Takes a message if one is already here.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        match self.take_next() {
            Take::Message(message) => Ok(message),
            Take::Empty => Err(TryRecvError::Empty(())),
            Take::Closed => Err(TryRecvError::Disconnected(closed())),
        }
    }

    /// Blocks for at most `timeout` waiting for a message.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.recv_deadline(deadline),
            None => self.recv().map_err(RecvTimeoutError::Disconnected),
        }
    }

    /// Blocks until `deadline` at the latest waiting for a message.
    pub fn recv_deadline(&self, deadline: Instant) -> Result<T, RecvTimeoutError> {
        let mut timed_out = false;
        loop {
            match self.take_next() {
                Take::Message(message) => return Ok(message),
                Take::Closed => return Err(RecvTimeoutError::Disconnected(closed())),
                // One last look after the deadline, so a message that came with it is taken.
                Take::Empty if timed_out => return Err(RecvTimeoutError::Timeout(())),
                Take::Empty => {
                    if !self.chase.caught_up(|| !matches!(self.look(), Take::Empty)) {
                        timed_out = !self.wait(Some(deadline));
                    }
                }
            }
        }
    }

    /// Whether a message is waiting, so `try_recv` would return it (the 2012 `peek`). `false`
    /// when the stream is empty, and also once the chan is gone and every message taken.
    pub fn peek(&self) -> bool {
        matches!(self.look(), Take::Message(()))
    }

    /// What select waits on: this port, through [`PortTarget`].
    pub(crate) fn target(&self) -> Target<'_> {
        Target::port(self)
    }

    /// Leaves `waiter` where the next send (or the chan's drop) wakes it. `false` (and nothing
    /// left) if a receive would not wait. A waiter it pushes out goes to `displaced`, to be
    /// woken when the caller lets go of it.
    pub(crate) fn watch(&self, waiter: &Arc<Waiter>, displaced: &mut Displaced) -> bool {
        if !matches!(self.look(), Take::Empty) {
            return false;
        }
        match self.queue() {
            // SAFETY: as in `take_next`.
            Some(queue) => unsafe { queue.register(waiter, displaced) },
            None => match self.rx.word().register(self.rx.idle(), waiter) {
                Ok(pushed_out) => {
                    *displaced = pushed_out;
                    true
                }
                // A waiter already there (one select given the port twice) stays registered.
                Err(Found::Duplicate) => true,
                Err(Found::Settled(_)) => false,
            },
        }
    }

    /// Takes back a waiter [`Port::watch`] left, if no sender took it meanwhile.
    pub(crate) fn unwatch(&self, waiter: &Arc<Waiter>) {
        match self.queue() {
            Some(queue) => {
                // SAFETY: as in `take_next`.
                unsafe { queue.unregister(waiter) };
            }
            None => {
                let _ = self.rx.word().unregister(self.rx.idle(), waiter);
            }
        }
    }

    /// A future of the next message, for any executor; resolves as `recv` returns.
    ///
    /// Cancel-safe: dropping it before it resolves loses nothing, and the port stays open: a
    /// message that arrived meanwhile is the next one received, by this port's next receive.
    /// A future that is merely created (never polled) touches nothing.
    ///
    /// It borrows the port mutably, as `tokio::sync::mpsc::Receiver::recv` does, and so it is
    /// `Send` when `T` is: `tokio::spawn(async move { port.recv_async().await })` runs on a
    /// multi-threaded executor, the task's future moving between threads with the port in it.
    /// A shared borrow could not give that: a port is single-consumer, so it is not `Sync`
    /// (two threads receiving at once would race on its lane), and `&Port` is therefore not
    /// `Send`. The exclusive borrow is what says no other receive runs while the future lives.
    pub fn recv_async(&mut self) -> PortRecvFuture<'_, T> {
        PortRecvFuture::new(self)
    }

    /// An iterator over messages that blocks for each and ends when the chan is gone.
    pub fn iter(&self) -> Iter<'_, T> {
        Iter { port: self }
    }

    /// An iterator over the messages already here; it never blocks.
    pub fn try_iter(&self) -> TryIter<'_, T> {
        TryIter { port: self }
    }
}

/// Select's view of a port: its lane until the lane runs out into a shared chan's queue, then
/// the queue, whose one consumer the port is. Called from the port's own thread while it is
/// borrowed (not received from).
impl<T> PortTarget for Port<T> {
    fn is_ready(&self) -> bool {
        !matches!(self.look(), Take::Empty)
    }

    fn register(&self, waiter: &Arc<Waiter>) -> bool {
        // No borrow is held here: a displaced waiter is woken at once.
        self.watch(waiter, &mut Displaced::none())
    }

    fn woken(&self, waiter: &Arc<Waiter>) -> bool {
        if self.is_ready() {
            return true;
        }
        match self.queue() {
            // SAFETY: as in `take_next`.
            Some(queue) => unsafe { queue.woken(waiter) },
            // Still in the word: a spurious wake. Otherwise displaced (or swapped out by a
            // hang-up into a queue, now looked at): register again.
            None if self.rx.word().load() == Arc::as_ptr(waiter).addr() => false,
            None => !self.watch(waiter, &mut Displaced::none()),
        }
    }

    fn unregister(&self, waiter: &Arc<Waiter>) -> bool {
        self.unwatch(waiter);
        self.is_ready()
    }

    fn watch(&self, waker: &Waker, mine: &mut Option<Arc<Waiter>>) -> bool {
        loop {
            if self.is_ready() {
                return true;
            }
            match self.queue() {
                // SAFETY: as in `take_next`.
                Some(queue) => return unsafe { queue.watch(waker, mine) },
                None => {
                    let word = self.rx.word();
                    if word.watch(self.rx.idle(), waker, mine).is_pending() {
                        return false;
                    }
                    // The lane moved: a message, a hang-up, or a hang-up into a queue.
                }
            }
        }
    }

    fn unwatch(&self, mine: &mut Option<Arc<Waiter>>) {
        match self.queue() {
            // SAFETY: as in `take_next`.
            Some(queue) => unsafe { queue.unwatch(mine) },
            None => {
                self.rx.word().unwatch(self.rx.idle(), mine);
            }
        }
    }
}

impl<T> Drop for Port<T> {
    /// Closes the shared chan's queue if the port moved on to one (its senders then get their
    /// messages back) and drops what was sent into it, through the drop queue as the lane
    /// does (a port dropped inside a message being dropped is queued, not recursed into); the
    /// lane closes itself.
    fn drop(&mut self) {
        self.close_shared((&raw const *self).cast());
    }
}

impl<T> Port<T> {
    /// Drops the port as if it lay at `at`, where a runtime container that owns it on the heap
    /// lies (a port set): queued, not recursed into, when the container is a field of a message
    /// being dropped (see `drop_queue::dispose`).
    pub(crate) fn drop_as_if_at(self, at: *const u8) {
        let mut this = ManuallyDrop::new(self);
        this.close_shared(at);
        // SAFETY: `this` is never used or dropped again, and `rx` is the one field left with a
        // drop to run (`shared` was emptied just above; `chase` is a `Cell`).
        let rx = unsafe { ptr::read(&this.rx) };
        rx.drop_as_if_at(at);
    }

    /// [`Port`]'s drop of its shared chan's queue, through the drop queue as if the port lay
    /// at `at`.
    fn close_shared(&mut self, at: *const u8) {
        if let Some(queue) = self.shared.take() {
            let queue = NonNull::new(Arc::into_raw(queue).cast_mut()).expect("an Arc's pointer");
            // SAFETY: `close_queue::<T>` is the disposal for this pointer's type, and our
            // reference to the queue is ours to give up.
            unsafe { drop_queue::dispose(at, queue.cast(), close_queue::<T>) };
        }
    }
}

/// A port's drop of the shared chan's queue it moved on to: closes it, dropping its messages
/// through `drops`.
///
/// # Safety
/// As [`drop_queue::Dispose`] asks: `queue` is an `Arc<SharedQueue<T>>` given up with
/// `Arc::into_raw` by `Port::drop`, whose port is gone.
unsafe fn close_queue<T>(queue: NonNull<()>, drops: Option<&DropQueue>) {
    // SAFETY: as the caller guarantees.
    let queue = unsafe { Arc::from_raw(queue.cast::<SharedQueue<T>>().as_ptr()) };
    // SAFETY: the port was the queue's one consumer, and it is gone.
    unsafe { queue.close(drops) };
}

/// The future of [`Port::recv_async`]. `Send` when `T` is: it holds the port's exclusive
/// borrow and the task's waiter (see [`Port::recv_async`]).
///
/// `B` is the borrow: `&mut Port<T>` for `recv_async`, `&Port<T>` for a borrowed port's
/// [`Recv::recv_async`] (which, like every shared borrow of a port, is not `Send`).
#[must_use = "a future does nothing unless polled"]
pub struct PortRecvFuture<'a, T, B: Deref<Target = Port<T>> = &'a mut Port<T>> {
    /// Exclusive for `recv_async`, so that this future is the port's one receiver while it
    /// lives, whatever thread polls it (`&mut Port<T>` is `Send` when `Port<T>` is, `&Port<T>`
    /// never).
    port: B,
    /// The task's waiter, left in the lane's word or with the queue while pending.
    watch: Option<Arc<Waiter>>,
    _borrow: PhantomData<&'a ()>,
}

impl<'a, T, B: Deref<Target = Port<T>>> PortRecvFuture<'a, T, B> {
    fn new(port: B) -> Self {
        PortRecvFuture {
            port,
            watch: None,
            _borrow: PhantomData,
        }
    }
}

// Nothing is pinned: the lane's word holds the waiter's address, not the future's.
impl<T, B: Deref<Target = Port<T>>> Unpin for PortRecvFuture<'_, T, B> {}

impl<T, B: Deref<Target = Port<T>>> Future for PortRecvFuture<'_, T, B> {
    type Output = Result<T, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            match this.port.take_next() {
                Take::Message(message) => return Poll::Ready(Ok(message)),
                Take::Closed => return Poll::Ready(Err(closed())),
                Take::Empty => {
                    if !this.port.target().watch(&mut this.watch, cx.waker()) {
                        return Poll::Pending;
                    }
                }
            }
        }
    }
}

impl<T, B: Deref<Target = Port<T>>> Drop for PortRecvFuture<'_, T, B> {
    fn drop(&mut self) {
        // Take the waker back, or find a sender took it: the message is there for the port's
        // next receive.
        self.port.target().unwatch(&mut self.watch);
    }
}

impl<T, B: Deref<Target = Port<T>>> fmt::Debug for PortRecvFuture<'_, T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortRecvFuture").finish_non_exhaustive()
    }
}

/// The error of a port whose chan is known to be gone.
fn closed() -> RecvError {
    RecvError::new("stream", "Open", Cause::Closed)
}

impl<T> Iterator for Port<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.recv().ok()
    }
}

/// Blocking iterator over a borrowed [`Port`]; see [`Port::iter`].
#[derive(Debug)]
pub struct Iter<'a, T> {
    port: &'a Port<T>,
}

impl<T> Iterator for Iter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.port.recv().ok()
    }
}

/// Non-blocking iterator over a borrowed [`Port`]; see [`Port::try_iter`].
#[derive(Debug)]
pub struct TryIter<'a, T> {
    port: &'a Port<T>,
}

impl<T> Iterator for TryIter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.port.try_recv().ok()
    }
}

/// A borrowed port is a receiving endpoint for select: `select2(&a, &b)` waits on two streams,
/// and the port that was not ready is simply the borrow handed back. Unlike a protocol's
/// endpoints it is not consumed by a receive, so `try_recv` hands back the same borrow.
impl<T> Sealed for &Port<T> {}

impl<'a, T> Recv for &'a Port<T> {
    type Message = T;
    type Future = PortRecvFuture<'a, T, &'a Port<T>>;

    fn recv(self) -> Result<T, RecvError> {
        Port::recv(self)
    }

    fn try_recv(self) -> Result<T, TryRecvError<Self>> {
        Port::try_recv(self).map_err(|error| error.map(|()| self))
    }

    fn recv_timeout(self, timeout: Duration) -> Result<T, RecvTimeoutError<Self>> {
        Port::recv_timeout(self, timeout).map_err(|error| error.map(|()| self))
    }

    /// Borrows the port shared, so unlike [`Port::recv_async`] the future is not `Send`.
    fn recv_async(this: Self) -> PortRecvFuture<'a, T, &'a Port<T>> {
        PortRecvFuture::new(this)
    }

    fn __select_target(&self) -> Target<'_> {
        self.target()
    }
}

impl<'a, T> IntoIterator for &'a Port<T> {
    type Item = T;
    type IntoIter = Iter<'a, T>;

    fn into_iter(self) -> Iter<'a, T> {
        self.iter()
    }
}

impl<T> fmt::Debug for Chan<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Chan").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for Port<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Port").finish_non_exhaustive()
    }
}

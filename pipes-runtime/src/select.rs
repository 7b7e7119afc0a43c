//! Select: wait on several receiving endpoints at once, of any protocols and states, and learn
//! which one is ready (a message is there, or its peer is gone).
//!
//! An endpoint here is anything [`Selectable`]: every protocol endpoint that receives (every
//! [`Recv`] type, a [`PortOne`](crate::PortOne) among them), a borrowed stream
//! [`Port`](crate::Port) and a borrowed [`PortSet`](crate::PortSet).
//!
//! | wait on | blocking | with a time limit | async |
//! |---|---|---|---|
//! | two endpoints, receive from the ready one | [`select2`] | [`select2_timeout`] | [`select2_async`] |
//! | endpoints of one type, receive from the ready one | [`select()`] | [`select_timeout`] | |
//! | any endpoints, borrowed: which one is ready | [`selecti`] | [`selecti_timeout`] | [`selecti_async`] |
//! | generated endpoints, `match` on the message | [`select!`](macro@crate::select) | its `timeout(..)` arm | [`select_async!`](crate::select_async) |
//!
//! [`select2`] and [`select()`] take their endpoints, receive from the one that is ready, and
//! hand the others back untouched; the message is an `Err` when that endpoint's peer is gone.
//! [`selecti`] only borrows and receives nothing: it returns the index of an endpoint that is
//! ready, and the caller receives from it, which then does not block. The `select!` macro
//! writes that receive and a `match` on the message for you, in protocol words.
//!
//! ```
//! # use pipes_runtime as pipes;
//! use pipes::{Either, oneshot, select2};
//!
//! let (a, _a_chan) = oneshot::<u32>();
//! let (b, b_chan) = oneshot::<&str>();
//! b_chan.send("b first").unwrap();
//! match select2(a, b) {
//!     Either::Left(_) => unreachable!("nothing was sent on a"),
//!     // The endpoint that was not ready comes back, to wait on again.
//!     Either::Right((_a, message)) => assert_eq!(message.unwrap(), "b first"),
//! }
//! ```
//!
//! Endpoints of different kinds, borrowed:
//!
//! ```
//! # use pipes_runtime as pipes;
//! use std::time::Duration;
//! use pipes::select::{selecti, selecti_timeout};
//!
//! let (reply, _reply_chan) = pipes::oneshot::<u32>();
//! let (port, chan) = pipes::stream::<String>();
//! let set = pipes::PortSet::<u64>::new();
//! let _worker = set.chan();
//! // Nothing is ready: a zero timeout only looks.
//! assert_eq!(selecti_timeout(&[&reply, &port, &set], Duration::ZERO), None);
//! chan.send("hello".into()).unwrap();
//! assert_eq!(selecti(&[&reply, &port, &set]), 1);
//! assert_eq!(port.recv().unwrap(), "hello");
//! ```
//!
//! A list that changes as the program runs is a `Vec` of the same references, built each time
//! round (the endpoints stay where they are):
//!
//! ```
//! # use pipes_runtime as pipes;
//! use pipes::select::{Selectable, selecti};
//!
//! let (ports, chans): (Vec<_>, Vec<_>) = (0..3).map(|_| pipes::stream::<u32>()).unzip();
//! chans[2].send(7).unwrap();
//! let waiting: Vec<&dyn Selectable> = ports.iter().map(|port| port as &dyn Selectable).collect();
//! let ready = selecti(&waiting);
//! assert_eq!((ready, ports[ready].recv().unwrap()), (2, 7));
//! ```
//!
//! # Fairness
//!
//! When several endpoints are ready, one is chosen uniformly at random among them, as Go's
//! select does, so a loop over `select2` on two always-ready streams serves both about equally,
//! however the loop interleaves its selects.
//!
//! # Costs
//!
//! A select looks at every endpoint; if none is ready it spins for a while (see
//! [`spin`](mod@crate::spin)), then leaves a waiter in every endpoint, parks until a sender wakes
//! it, and takes the waiters back. So it costs O(n) in the number of endpoints, as in 2012; a
//! [`PortSet`](crate::PortSet) is the O(1)-per-message way to wait on many ports of one type.
//! An async select leaves its task's waker where a thread's select leaves its waiter, and
//! returns `Pending` where a thread would park; dropping a pending [`selecti_async`] future
//! loses nothing.
//!
//! # A pool of workers
//!
//! There is no channel that many receivers take from: a stream, a port set and a shared chan
//! each have one receiver. A pool of workers pulls its work instead: each worker has a session
//! with the dispatcher in which it says it is free, and the dispatcher waits on every worker
//! with [`select()`] and answers the first that asks. A worker that is busy is not asked, and
//! shutting down is a message of the protocol.
//!
//! ```
//! # use pipes_runtime as pipes;
//! pipes::proto! {
//!     pub work {
//!         Free: send { Ready -> Assign, Done(u64) -> Assign }
//!         Assign: recv { Task(u64) -> Free, Stop -> ! }
//!     }
//! }
//!
//! let mut free = Vec::new();
//! let mut workers = Vec::new();
//! for _ in 0..3 {
//!     let (server, client) = work::init();
//!     free.push(server);
//!     workers.push(std::thread::spawn(move || {
//!         let mut assign = client.ready().unwrap();
//!         while let work::Assign::Task(n, free) = assign.recv().unwrap() {
//!             assign = free.done(n * n).unwrap();
//!         }
//!     }));
//! }
//! let mut tasks = 1..=10u64;
//! let mut total = 0;
//! while !free.is_empty() {
//!     // The worker that asked is taken out of `free`; the others come back.
//!     let (_, asked, rest) = pipes::select(free);
//!     free = rest;
//!     let assign = match asked.unwrap() {
//!         work::Free::Ready(assign) => assign,
//!         work::Free::Done(square, assign) => {
//!             total += square;
//!             assign
//!         }
//!     };
//!     match tasks.next() {
//!         Some(task) => free.push(assign.task(task).unwrap()),
//!         None => assign.stop().unwrap(),
//!     }
//! }
//! assert_eq!(total, 385);
//! # for worker in workers { worker.join().unwrap(); }
//! ```

// Implementation: how a thread's select waits.
//
// 1. Look at every endpoint's state word; a ready one is returned at once, with no write.
// 2. Spin for the thread's adaptive time budget (`spin.rs`), looking again.
// 3. Register: leave one reference to this thread's waiter in every `EMPTY` word (a
//    compare-exchange each). A word found `FULL` or `TERMINATED` ends registration early.
// 4. Park until a registered word changes: the first sender to swap the waiter out wakes us.
// 5. Unregister: compare-exchange our waiter back out of every word we registered in, taking its
//    reference back. A failed exchange means a sender swapped it out first: that sender owns the
//    reference and wakes us (at worst a harmless spurious unpark later), and the endpoint is
//    ready.
//
// A port set takes part too: it is ready when a receive from it would not block (a port holds
// a message, or no port is left; a hang-up alone is not enough), and "registering" arms its
// ready list, so the sender that queues one of its ports wakes us.

use std::fmt;
use std::future::Future;
use std::ops::Deref;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use crate::endpoint::Recv;
use crate::error::{RecvError, TryRecvError};
use crate::spin::spin_until;
use crate::sync::{Arc, park};
use crate::target::{Registration, Target};
use crate::waiter::Waiter;

/// One of two outcomes: what [`select2`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Either<L, R> {
    /// The first (left) endpoint was ready.
    Left(L),
    /// The second (right) endpoint was ready.
    Right(R),
}

/// Something select can wait on without consuming it: every [`Recv`] endpoint, a stream
/// [`Port`](crate::Port) and a [`PortSet`](crate::PortSet). Object safe, for [`selecti`]'s
/// `&[&dyn Selectable]` (and [`selecti_async`]'s `&mut [&mut (dyn Selectable + Send)]`).
///
/// Sealed: it comes with [`Recv`] and with those two types, and cannot be implemented directly.
pub trait Selectable: sealed::Sealed {
    /// What to wait on. Not a public API.
    #[doc(hidden)]
    fn __select_target(&self) -> Target<'_>;
}

/// Keeps [`Selectable`] to the runtime's types: what it waits on is the runtime's business.
pub(crate) mod sealed {
    /// The supertrait no type outside the runtime can implement.
    pub trait Sealed {}
}

impl<R: Recv> sealed::Sealed for R {}
impl<T> sealed::Sealed for crate::Port<T> {}

impl<R: Recv> Selectable for R {
    fn __select_target(&self) -> Target<'_> {
        Recv::__select_target(self)
    }
}

impl<T> Selectable for crate::Port<T> {
    fn __select_target(&self) -> Target<'_> {
        self.target()
    }
}

/// A number below `k` (at least 1), from a per-thread xorshift generator: where a select starts
/// registering, and which of several ready endpoints it takes.
fn random_below(k: usize) -> usize {
    #[cfg(not(loom))]
    {
        use std::hash::{BuildHasher, Hasher};
        thread_local! {
            static STATE: std::cell::Cell<u64> = std::cell::Cell::new(
                // Seeded from std's random hash keys, which differ from thread to thread; never 0.
                std::collections::hash_map::RandomState::new().build_hasher().finish() | 1,
            );
        }
        // A select inside a thread-local's destructor takes the first.
        STATE
            .try_with(|state| {
                let mut x = state.get();
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                state.set(x);
                ((x >> 32).wrapping_mul(k as u64) >> 32) as usize
            })
            .unwrap_or(0)
    }
    // Loom needs every execution of a model to make the same choices.
    #[cfg(loom)]
    {
        let _ = k;
        0
    }
}

/// One of the targets ready now, chosen uniformly among them (reservoir sampling), as Go's select
/// does: no endpoint is favoured by its position, or by how a thread interleaves its selects.
fn pick_ready<'a>(n: usize, target: &impl Fn(usize) -> Target<'a>) -> Option<usize> {
    let mut chosen = None;
    let mut seen = 0;
    for i in 0..n {
        if target(i).is_ready() {
            seen += 1;
            if random_below(seen) == 0 {
                chosen = Some(i);
            }
        }
    }
    chosen
}

/// Waits until one of the `n` words is ready (`FULL` or `TERMINATED`) or `deadline` passes, and
/// returns its index, or `None` on a timeout. Leaves no waiter registered either way. The
/// caller keeps every word alive (does not receive on its endpoint) until this returns.
pub(crate) fn wait_ready<'a>(
    n: usize,
    target: impl Fn(usize) -> Target<'a>,
    deadline: Option<Instant>,
) -> Option<usize> {
    assert!(
        n > 0 || deadline.is_some(),
        "select over no endpoints would wait forever"
    );
    if n == 0 {
        return None;
    }
    if let Some(i) = pick_ready(n, &target) {
        return Some(i);
    }
    if spin_until(deadline, || (0..n).any(|i| target(i).is_ready())) {
        // A ready target stays ready until its endpoint receives, so this finds one.
        return pick_ready(n, &target);
    }
    let start = random_below(n);
    let at = |step: usize| (start + step) % n;

    let waiter = Waiter::current();
    // Register with every target, in looking order; `registered` targets (steps
    // 0..registered) may hold our waiter afterwards.
    let mut ready = None;
    let mut registered = n;
    for step in 0..n {
        match target(at(step)).register(&waiter) {
            Registration::Stored | Registration::Duplicate => {}
            Registration::Ready => {
                ready = Some(at(step));
                registered = step;
                break;
            }
        }
    }

    if ready.is_none() {
        ready = loop {
            // Only a sender changes a registration, so a changed one is (likely) ready;
            // spurious unparks are possible, hence the loop.
            if let Some(i) = (0..registered).map(at).find(|&i| target(i).woken(&waiter)) {
                break Some(i);
            }
            if !park(deadline) {
                break None;
            }
        };
    }

    for step in 0..registered {
        let i = at(step);
        if target(i).unregister(&waiter) && ready.is_none() {
            ready = Some(i);
        }
    }
    ready
}

/// Waits until one of `endpoints` is ready (a message is there, or its peer is gone) and
/// returns its index. Receives nothing: the caller receives from that endpoint next.
///
/// # Panics
/// If `endpoints` is empty: nothing could ever wake the wait.
pub fn selecti(endpoints: &[&dyn Selectable]) -> usize {
    wait_ready(endpoints.len(), |i| endpoints[i].__select_target(), None)
        .expect("a select without a deadline returns only when an endpoint is ready")
}

/// [`selecti`] with a time limit: `None` if no endpoint became ready within `timeout`. A zero
/// timeout only looks (the 2012 `peek`, over many endpoints); an empty slice returns `None`.
pub fn selecti_timeout(endpoints: &[&dyn Selectable], timeout: Duration) -> Option<usize> {
    if endpoints.is_empty() {
        return None;
    }
    match Instant::now().checked_add(timeout) {
        Some(deadline) => wait_ready(
            endpoints.len(),
            |i| endpoints[i].__select_target(),
            Some(deadline),
        ),
        // A timeout too far away to represent is no timeout at all.
        None => Some(selecti(endpoints)),
    }
}

/// Receives from a ready endpoint. The wait made it ready, and only its receiver undoes that,
/// so `try_recv` finds the message or the closed peer; `recv` covers an endpoint whose
/// `try_recv` is more cautious than that, and returns at once.
fn recv_ready<E: Recv>(endpoint: E) -> Result<E::Message, RecvError> {
    match endpoint.try_recv() {
        Ok(message) => Ok(message),
        Err(TryRecvError::Disconnected(error)) => Err(error),
        Err(TryRecvError::Empty(endpoint)) => endpoint.recv(),
    }
}

/// What [`select2`] returns: the ready side's receive result and the other endpoint untouched.
pub type Selected2<A, B> = Either<
    (Result<<A as Recv>::Message, RecvError>, B),
    (A, Result<<B as Recv>::Message, RecvError>),
>;

/// Waits on two endpoints, of any protocols and states, and receives from the first one ready:
/// `Left((message, b))` or `Right((a, message))`. The message is an `Err` when that endpoint's
/// peer is gone. When both are ready either may be chosen.
pub fn select2<A: Recv, B: Recv>(a: A, b: B) -> Selected2<A, B> {
    let targets = [Recv::__select_target(&a), Recv::__select_target(&b)];
    let ready = wait_ready(2, |i| targets[i], None);
    finish2(
        a,
        b,
        ready.expect("a select without a deadline returns only when an endpoint is ready"),
    )
}

/// [`select2`] with a time limit: `Err((a, b))` hands both endpoints back if neither became
/// ready within `timeout`.
pub fn select2_timeout<A: Recv, B: Recv>(
    a: A,
    b: B,
    timeout: Duration,
) -> Result<Selected2<A, B>, (A, B)> {
    let Some(deadline) = Instant::now().checked_add(timeout) else {
        return Ok(select2(a, b));
    };
    let targets = [Recv::__select_target(&a), Recv::__select_target(&b)];
    match wait_ready(2, |i| targets[i], Some(deadline)) {
        Some(ready) => Ok(finish2(a, b, ready)),
        None => Err((a, b)),
    }
}

fn finish2<A: Recv, B: Recv>(a: A, b: B, ready: usize) -> Selected2<A, B> {
    if ready == 0 {
        Either::Left((recv_ready(a), b))
    } else {
        Either::Right((a, recv_ready(b)))
    }
}

/// What [`select`] returns: the ready endpoint's index, its receive result, and the other
/// endpoints in their original order.
pub type Selected<E> = (usize, Result<<E as Recv>::Message, RecvError>, Vec<E>);

/// Waits on endpoints of one type, receives from the first one ready, and returns its index,
/// the message (an `Err` when its peer is gone), and the other endpoints. The ready endpoint
/// is removed with `Vec::remove`, so the rest keep their order (the 2012 `select` used
/// `swap_remove` and reordered them): endpoint `j > index` is now at `j - 1`.
///
/// # Panics
/// If `endpoints` is empty: nothing could ever wake the wait.
pub fn select<E: Recv>(endpoints: Vec<E>) -> Selected<E> {
    let ready = wait_ready(
        endpoints.len(),
        |i| Recv::__select_target(&endpoints[i]),
        None,
    )
    .expect("a select without a deadline returns only when an endpoint is ready");
    finish(endpoints, ready)
}

/// [`select`] with a time limit: `Err(endpoints)` hands them all back, in order, if none became
/// ready within `timeout`. An empty vector is handed back at once.
pub fn select_timeout<E: Recv>(
    endpoints: Vec<E>,
    timeout: Duration,
) -> Result<Selected<E>, Vec<E>> {
    if endpoints.is_empty() {
        return Err(endpoints);
    }
    let Some(deadline) = Instant::now().checked_add(timeout) else {
        return Ok(select(endpoints));
    };
    match wait_ready(
        endpoints.len(),
        |i| Recv::__select_target(&endpoints[i]),
        Some(deadline),
    ) {
        Some(ready) => Ok(finish(endpoints, ready)),
        None => Err(endpoints),
    }
}

fn finish<E: Recv>(mut endpoints: Vec<E>, ready: usize) -> Selected<E> {
    let endpoint = endpoints.remove(ready);
    (ready, recv_ready(endpoint), endpoints)
}

/// An async select's registrations: one task waiter in every target (a waiter per target, as
/// another task may watch the same endpoint and be carried by ours), returning `Pending` where a
/// thread's select would park.
#[derive(Debug, Default)]
struct TaskSelect {
    /// Per target, by index: this select's waiter there, if it left one.
    watches: Vec<Option<Arc<Waiter>>>,
}

impl TaskSelect {
    /// The index of a ready target, or `Pending` with the task's waker left in every target.
    fn poll<'a>(
        &mut self,
        n: usize,
        target: impl Fn(usize) -> Target<'a>,
        cx: &Context<'_>,
    ) -> Poll<usize> {
        assert!(n > 0, "select over no endpoints would wait forever");
        // Before anything is registered, a ready target costs no write.
        let ready = if self.watches.is_empty() {
            pick_ready(n, &target)
        } else {
            None
        };
        let start = random_below(n);
        let at = move |step: usize| (start + step) % n;
        let ready = ready.or_else(|| {
            self.watches.resize_with(n, || None);
            // Registering is also the check: a target is ready, or it now holds our waiter.
            (0..n)
                .map(at)
                .find(|&i| target(i).watch(&mut self.watches[i], cx.waker()))
        });
        match ready {
            Some(i) => {
                self.cancel(&target);
                Poll::Ready(i)
            }
            None => Poll::Pending,
        }
    }

    /// Takes the waiter back from every target that may hold it.
    fn cancel<'a>(&mut self, target: impl Fn(usize) -> Target<'a>) {
        for (i, watch) in self.watches.iter_mut().enumerate() {
            target(i).unwatch(watch);
        }
    }
}

/// What [`selecti_async`] waits on: a list of borrowed endpoints, each a reference (`&E` or
/// `&mut E`, or a `Box`: anything that dereferences to a [`Selectable`]).
///
/// - a slice, array or `Vec` of them, by reference or by value: `&[&dyn Selectable]` as
///   [`selecti`] takes, `&mut [&mut (dyn Selectable + Send)]`, `[&mut a, &mut b]` of one type.
///   The list is generic, so rustc does not coerce its elements to one type as it does for
///   [`selecti`]'s parameter: endpoints of different types need a `dyn` type, written once
///   (`[&a as &dyn Selectable, &b]`, or a `let` with the list's type);
/// - a list of any types, `(first, (second, (third, ())))`, which is what [`select_async!`]
///   builds, one exclusive borrow per endpoint.
///
/// The future is `Send` exactly when the list is. A shared borrow of an endpoint is never
/// `Send` (endpoints are not `Sync`), an exclusive one is when the endpoint is: so a select
/// over `&mut` borrows of `Send` endpoints runs inside `tokio::spawn` on a multi-threaded
/// runtime, and one over shared borrows stays on its thread, where other code may use the
/// same endpoints while it waits.
///
/// Implemented by the runtime only in practice: the methods are hidden, and whatever an
/// implementation returns costs at worst a spurious wake or a leaked waiter (see
/// [`Recv`]'s hidden hook).
///
/// [`select_async!`]: crate::select_async
pub trait SelectList {
    /// How many endpoints. Not a public API.
    #[doc(hidden)]
    fn __len(&self) -> usize;

    /// What to wait on for endpoint `i` (below `__len`). Not a public API.
    #[doc(hidden)]
    fn __target(&self, i: usize) -> Target<'_>;
}

impl<R> SelectList for [R]
where
    R: Deref<Target: Selectable>,
{
    fn __len(&self) -> usize {
        self.len()
    }

    fn __target(&self, i: usize) -> Target<'_> {
        self[i].__select_target()
    }
}

/// An array or a `Vec` is its slice (generic code gets no unsized coercion to it).
macro_rules! select_list_as_slice {
    ($([$($param:tt)*] $list:ty;)*) => {$(
        impl<$($param)*> SelectList for $list
        where
            R: Deref<Target: Selectable>,
        {
            fn __len(&self) -> usize {
                self.as_slice().__len()
            }

            fn __target(&self, i: usize) -> Target<'_> {
                self.as_slice().__target(i)
            }
        }
    )*};
}

select_list_as_slice! {
    [R, const N: usize] [R; N];
    [R] Vec<R>;
}

impl<L: SelectList + ?Sized> SelectList for &L {
    fn __len(&self) -> usize {
        (**self).__len()
    }

    fn __target(&self, i: usize) -> Target<'_> {
        (**self).__target(i)
    }
}

impl<L: SelectList + ?Sized> SelectList for &mut L {
    fn __len(&self) -> usize {
        (**self).__len()
    }

    fn __target(&self, i: usize) -> Target<'_> {
        (**self).__target(i)
    }
}

/// The end of a `(first, (second, ()))` list.
impl SelectList for () {
    fn __len(&self) -> usize {
        0
    }

    fn __target(&self, _: usize) -> Target<'_> {
        unreachable!("select: no endpoint past the end of the list")
    }
}

/// One endpoint, then the rest: a list of endpoints of different types that keeps each type,
/// so the list is `Send` when they all are.
impl<R, L> SelectList for (R, L)
where
    R: Deref<Target: Selectable>,
    L: SelectList,
{
    fn __len(&self) -> usize {
        1 + self.1.__len()
    }

    fn __target(&self, i: usize) -> Target<'_> {
        match i {
            0 => self.0.__select_target(),
            _ => self.1.__target(i - 1),
        }
    }
}

/// The future of [`selecti_async`]. `Send` when its [`SelectList`] is.
#[must_use = "a future does nothing unless polled"]
pub struct SelectiFuture<L: SelectList> {
    /// The borrowed endpoints; a `&mut` borrow is exclusive for the future's life, so no
    /// other code receives from (or selects on) that endpoint while the future may be polled
    /// on another thread.
    endpoints: L,
    select: TaskSelect,
}

/// [`selecti`] for async tasks: a future of the index of the first endpoint ready, for any
/// executor. Receives nothing. Cancel-safe: dropping it takes its waker back from every
/// endpoint, which stay the caller's and lose nothing.
///
/// `endpoints` is a [`SelectList`]: the `&[&dyn Selectable]` that [`selecti`] takes, or
/// exclusive borrows, which make the future `Send` when the endpoints are, so it can be
/// awaited in a task of a multi-threaded executor:
///
/// ```
/// use pipes_runtime::select::{Selectable, selecti_async};
/// use pipes_runtime::{oneshot, stream};
///
/// let (mut port, chan) = stream::<u32>();
/// let (mut one, _one_chan) = oneshot::<String>();
/// chan.send(7).unwrap();
/// let future = async move {
///     let endpoints: &mut [&mut (dyn Selectable + Send)] = &mut [&mut one, &mut port];
///     let ready = selecti_async(endpoints).await;
///     (ready, port.try_recv().unwrap())
/// };
/// fn is_send<T: Send>(_: &T) {}
/// is_send(&future);
/// # let mut future = Box::pin(future);
/// # let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// # assert_eq!(future.as_mut().poll(&mut cx), std::task::Poll::Ready((1, 7)));
/// # use std::future::Future;
/// ```
///
/// # Panics
/// When polled, if `endpoints` is empty: nothing could ever wake the wait.
pub fn selecti_async<L: SelectList>(endpoints: L) -> SelectiFuture<L> {
    SelectiFuture {
        endpoints,
        select: TaskSelect::default(),
    }
}

// Nothing is pinned: the targets' words hold the waiters' addresses, not the future's.
impl<L: SelectList> Unpin for SelectiFuture<L> {}

impl<L: SelectList> Future for SelectiFuture<L> {
    type Output = usize;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
        let this = self.get_mut();
        let endpoints = &this.endpoints;
        this.select
            .poll(endpoints.__len(), |i| endpoints.__target(i), cx)
    }
}

impl<L: SelectList> Drop for SelectiFuture<L> {
    fn drop(&mut self) {
        let endpoints = &self.endpoints;
        self.select.cancel(|i| endpoints.__target(i));
    }
}

impl<L: SelectList> fmt::Debug for SelectiFuture<L> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SelectiFuture")
            .field("endpoints", &self.endpoints.__len())
            .finish_non_exhaustive()
    }
}

/// The future of [`select2_async`].
#[must_use = "a future does nothing unless polled; dropping it drops both endpoints"]
pub struct Select2Future<A: Recv, B: Recv> {
    /// The endpoints, until the future resolves.
    endpoints: Option<(A, B)>,
    select: TaskSelect,
}

/// [`select2`] for async tasks: a future that receives from the first of two endpoints ready,
/// for any executor, resolving as `select2` returns. Dropping it before it resolves takes its
/// waker back and drops both endpoints, so both peers see their pipes closed.
pub fn select2_async<A: Recv, B: Recv>(a: A, b: B) -> Select2Future<A, B> {
    Select2Future {
        endpoints: Some((a, b)),
        select: TaskSelect::default(),
    }
}

// Nothing is pinned: the targets' words live in the packets, not in the future.
impl<A: Recv, B: Recv> Unpin for Select2Future<A, B> {}

impl<A: Recv, B: Recv> Future for Select2Future<A, B> {
    type Output = Selected2<A, B>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Selected2<A, B>> {
        let this = self.get_mut();
        let (a, b) = this
            .endpoints
            .as_ref()
            .expect("Select2Future polled after it resolved");
        let targets = [Recv::__select_target(a), Recv::__select_target(b)];
        let ready = std::task::ready!(this.select.poll(2, |i| targets[i], cx));
        let (a, b) = this.endpoints.take().expect("the endpoints are still ours");
        Poll::Ready(finish2(a, b, ready))
    }
}

impl<A: Recv, B: Recv> Drop for Select2Future<A, B> {
    fn drop(&mut self) {
        if let Some((a, b)) = &self.endpoints {
            let targets = [Recv::__select_target(a), Recv::__select_target(b)];
            self.select.cancel(|i| targets[i]);
        }
    }
}

impl<A: Recv, B: Recv> fmt::Debug for Select2Future<A, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Select2Future")
            .field("resolved", &self.endpoints.is_none())
            .finish_non_exhaustive()
    }
}

//! Select: wait on several receiving endpoints at once, of any protocols and states, and learn
//! which one is ready (a message is there, or its peer is gone).
//!
//! ```
//! use pipes_runtime::{Either, oneshot, select2};
//!
//! let (a, _a_chan) = oneshot::<u32>();
//! let (b, b_chan) = oneshot::<&str>();
//! b_chan.send("b first").unwrap();
//! match select2(a, b) {
//!     Either::Left(_) => unreachable!("nothing was sent on a"),
//!     Either::Right((_a, message)) => assert_eq!(message.unwrap(), "b first"),
//! }
//! ```
//!
//! # How it waits
//!
//! 1. Look at every endpoint's state word; a ready one is returned at once, with no write.
//! 2. Spin for the thread's adaptive time budget (`spin.rs`), looking again.
//! 3. Register: leave one reference to this thread's waiter in every `EMPTY` word (a
//!    compare-exchange each). A word found `FULL` or `TERMINATED` ends registration early.
//! 4. Park until a registered word changes: the first sender to swap the waiter out wakes us.
//! 5. Unregister: compare-exchange our waiter back out of every word we registered in, taking its
//!    reference back. A failed exchange means a sender swapped it out first: that sender owns the
//!    reference and wakes us (at worst a harmless spurious unpark later), and the endpoint is
//!    ready.
//!
//! So a select costs O(n) in the number of endpoints, as in 2012; a [`PortSet`](crate::PortSet)
//! is the O(1)-per-message way to wait on many ports of one type.
//!
//! When several endpoints are ready, which one is returned is unspecified: each call starts
//! looking at a different endpoint (a per-thread counter), so a loop over `select2` on two
//! always-ready streams serves both.

use std::time::{Duration, Instant};

use crate::endpoint::Recv;
use crate::error::{RecvError, TryRecvError};
use crate::packet::StateWord;
use crate::spin::spin_until;
use crate::sync::{Arc, park_until, thread};
use crate::waiter::Waiter;

/// One of two outcomes: what [`select2`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Either<L, R> {
    /// The first (left) endpoint was ready.
    Left(L),
    /// The second (right) endpoint was ready.
    Right(R),
}

/// Something select can wait on without consuming it: every [`Recv`] endpoint, and a stream
/// [`Port`](crate::Port). Object safe, for [`selecti`]'s `&[&dyn Selectable]`.
pub trait Selectable {
    /// The state word of the packet the next message arrives in. Not a public API.
    #[doc(hidden)]
    fn __select_word(&self) -> &StateWord;
}

impl<R: Recv> Selectable for R {
    fn __select_word(&self) -> &StateWord {
        self.__state_word()
    }
}

impl<T> Selectable for crate::Port<T> {
    fn __select_word(&self) -> &StateWord {
        self.state_word()
    }
}

/// Where a select starts looking, so that no endpoint is always looked at first.
fn first_to_look_at(n: usize) -> usize {
    #[cfg(not(loom))]
    {
        thread_local! {
            static NEXT: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
        }
        NEXT.with(|next| {
            let start = next.get();
            next.set(start.wrapping_add(1));
            start % n
        })
    }
    // Loom needs every execution of a model to make the same choices.
    #[cfg(loom)]
    {
        let _ = n;
        0
    }
}

/// Waits until one of the `n` words is ready (`FULL` or `TERMINATED`) or `deadline` passes, and
/// returns its index, or `None` on a timeout. Leaves no waiter registered either way. The
/// caller keeps every word alive (does not receive on its endpoint) until this returns.
pub(crate) fn wait_ready<'a>(
    n: usize,
    word: impl Fn(usize) -> &'a StateWord,
    deadline: Option<Instant>,
) -> Option<usize> {
    assert!(
        n > 0 || deadline.is_some(),
        "select over no endpoints would wait forever"
    );
    if n == 0 {
        return None;
    }
    let start = first_to_look_at(n);
    let at = |step: usize| (start + step) % n;
    let find_ready = || (0..n).map(at).find(|&i| word(i).is_ready());
    if let Some(i) = find_ready() {
        return Some(i);
    }
    if spin_until(deadline, || find_ready().is_some()) {
        // A ready word stays ready until its endpoint receives, so this finds it.
        return find_ready();
    }

    let waiter = Waiter::current();
    // Every registration stores this same word: one pointer, one reference per word.
    let blocked = Arc::as_ptr(&waiter) as usize;

    // Register in every word, in looking order; `registered` words (steps 0..registered) may
    // hold our waiter afterwards.
    let mut ready = None;
    let mut registered = n;
    for step in 0..n {
        match word(at(step)).register(&waiter) {
            Ok(()) => {}
            // Already ours: the same endpoint twice. The first registration stands for both.
            Err(found) if found == blocked => {}
            Err(found) => {
                // No other waiter can be there: an endpoint has one receiver, and it is us.
                debug_assert!(
                    crate::packet::is_settled(found),
                    "one receiver per endpoint"
                );
                ready = Some(at(step));
                registered = step;
                break;
            }
        }
    }

    if ready.is_none() {
        ready = loop {
            // Only a sender changes a word holding our waiter, by swapping it out, so a changed
            // word is a ready one (spurious unparks are possible, hence the loop).
            if let Some(i) = (0..registered).map(at).find(|&i| word(i).load() != blocked) {
                break Some(i);
            }
            match deadline {
                None => thread::park(),
                Some(deadline) => {
                    if !park_until(deadline) {
                        break None;
                    }
                }
            }
        };
    }

    for step in 0..registered {
        let i = at(step);
        if let Err(found) = word(i).unregister(&waiter) {
            // Swapped out by a sender (so ready), or `EMPTY`: a duplicate already taken back.
            if ready.is_none() && found != crate::packet::EMPTY {
                ready = Some(i);
            }
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
    wait_ready(endpoints.len(), |i| endpoints[i].__select_word(), None)
        .expect("a select without a deadline returns only when an endpoint is ready")
}

/// [`selecti`] with a time limit: `None` if no endpoint became ready within `timeout`. A zero
/// timeout only looks (the 2012 `peek`, over many endpoints); an empty slice returns `None`.
pub fn selecti_timeout(endpoints: &[&dyn Selectable], timeout: Duration) -> Option<usize> {
    match Instant::now().checked_add(timeout) {
        Some(deadline) => wait_ready(
            endpoints.len(),
            |i| endpoints[i].__select_word(),
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
    let words = [a.__state_word(), b.__state_word()];
    let ready = wait_ready(2, |i| words[i], None);
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
    let words = [a.__state_word(), b.__state_word()];
    match wait_ready(2, |i| words[i], Some(deadline)) {
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
    let ready = wait_ready(endpoints.len(), |i| endpoints[i].__state_word(), None)
        .expect("a select without a deadline returns only when an endpoint is ready");
    finish(endpoints, ready)
}

/// [`select`] with a time limit: `Err(endpoints)` hands them all back, in order, if none became
/// ready within `timeout`. An empty vector is handed back at once.
pub fn select_timeout<E: Recv>(
    endpoints: Vec<E>,
    timeout: Duration,
) -> Result<Selected<E>, Vec<E>> {
    let Some(deadline) = Instant::now().checked_add(timeout) else {
        return Ok(select(endpoints));
    };
    match wait_ready(
        endpoints.len(),
        |i| endpoints[i].__state_word(),
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

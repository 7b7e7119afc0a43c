//! The many-senders side of a stream: a shared chan's lock-free queue (`queue.rs`) and the word
//! its port waits on, wired into the one wait protocol (`wait.rs`).
//!
//! The queue never makes a sender look at the port: a sender publishes its message with the
//! read-modify-write that also tells it whether the port armed a wait on that very slot
//! (`Queue::arm`), and only then rings the port's *signal* word (swaps in [`RUNG`], waking a
//! waiter it takes out). So a send is two `fetch_add`s (claim, publish) when nobody waits.
//!
//! The port's side, from one thread at a time:
//! - *look*: pop into the stash, so select and port sets can ask whether a receive would wait
//!   without receiving (the stashed message is the next one received);
//! - *register* a waiter: reset a stale ring, leave the waiter in the signal word over
//!   [`QUIET`] (the word protocol of `wait.rs`: a thread's or a port set's waiter displaces and
//!   wakes one found there; a task's watch carries other tasks' watches, as on a lane), then
//!   arm the queue's next slot; if that slot was published meanwhile, take the waiters out and
//!   look again;
//! - *unregister*: take the waiter back, and the arm once no waiter is left in the word (the
//!   arm is the port's: two tasks waiting on the port share it).
//!
//! A ring can be stale: a wait that gave up disarms, but the producer of the slot it armed may
//! have seen the arm already and rings later. Stale rings cost a spurious wake, never a lost
//! one: a waiter woken with nothing to take registers again (and re-arms).

use std::task::Waker;
use std::time::Instant;

use crossbeam_utils::CachePadded;

use crate::drop_queue::{self, DropQueue};
use crate::panics::deferring;
use crate::queue::{Pop, Queue};
use crate::spin::spin_until;
use crate::sync::{Arc, UnsafeCell, park};
use crate::take::Take;
use crate::wait::{Displaced, Found, StateWord, is_waiter};
use crate::waiter::Waiter;

/// The signal word when no ring came since the port last reset it: its idle word.
pub(crate) const QUIET: usize = 1;
/// A sender published a slot the port had armed.
const RUNG: usize = 3;

/// What only the port touches.
struct Consumer<T> {
    /// A message popped by a look and not yet received; or the queue found closed.
    stash: Option<Take<T>>,
    /// Whether we armed the queue and no pop has spent the arm since: an arm to take back
    /// when the last waiter gives up. An arm on a segment's link is spent by the link without
    /// a pop, so this can be stale; taking back a spent arm is harmless (the slot it would
    /// clear has no arm of ours), and a wait arms again rather than trust it.
    armed: bool,
}

/// A shared chan's queue, its signal word and the port's state: shared by every `SharedChan`
/// clone and the port that receives from it.
pub(crate) struct SharedQueue<T> {
    queue: Queue<T>,
    signal: CachePadded<StateWord>,
    consumer: UnsafeCell<Consumer<T>>,
}

// SAFETY: senders share only the queue (`Sync` for `T: Send`) and the signal word (atomic);
// `consumer` is touched by the port alone, from one thread at a time (the port is not `Sync`).
unsafe impl<T: Send> Sync for SharedQueue<T> {}
// SAFETY: moving the queue moves `T`s between threads, sound when `T: Send`.
unsafe impl<T: Send> Send for SharedQueue<T> {}

impl<T> SharedQueue<T> {
    /// A queue with one sender registered: the first `SharedChan`'s.
    pub(crate) fn new() -> Arc<Self> {
        Arc::new(SharedQueue {
            queue: Queue::new(),
            signal: CachePadded::new(StateWord::new(QUIET)),
            consumer: UnsafeCell::new(Consumer {
                stash: None,
                armed: false,
            }),
        })
    }

    /// Sends `message` behind every send that happened before it; hands it back if the port
    /// is gone.
    pub(crate) fn send(&self, message: T) -> Result<(), T> {
        if self.queue.push(message)? {
            self.ring();
        }
        Ok(())
    }

    /// Registers another sender (a clone).
    pub(crate) fn add_sender(&self) {
        self.queue.add_sender();
    }

    /// Unregisters a sender; the last one closes the queue for the port once it is drained.
    pub(crate) fn remove_sender(&self) {
        if self.queue.remove_sender() {
            self.ring();
        }
    }

    /// Tells the port a slot it armed is published.
    fn ring(&self) {
        // Release publishes nothing new (the publish did); Acquire takes the waiter.
        self.signal.swap_and_wake(RUNG);
    }

    /// Runs `f` on the port's state.
    ///
    /// # Safety
    /// The caller is the port, and nothing else of it runs on this thread meanwhile.
    unsafe fn consumer<R>(&self, f: impl FnOnce(&mut Consumer<T>) -> R) -> R {
        // SAFETY: as the caller guarantees.
        self.consumer
            .with_mut(|consumer| f(unsafe { &mut *consumer }))
    }

    /// Pops the next message, or finds the queue empty or closed.
    ///
    /// # Safety
    /// As for [`SharedQueue::consumer`], and the port has not closed the queue.
    unsafe fn pop(&self, consumer: &mut Consumer<T>) -> Take<T> {
        // SAFETY: as the caller guarantees: the port is the one consumer.
        match unsafe { self.queue.pop() } {
            Pop::Message(message) => {
                // The armed slot, if any, was this one: its arm is spent.
                consumer.armed = false;
                Take::Message(message)
            }
            Pop::Empty => Take::Empty,
            Pop::Closed => {
                consumer.armed = false;
                Take::Closed
            }
        }
    }

    /// Takes the next message (the stashed one first).
    ///
    /// # Safety
    /// As for [`SharedQueue::pop`].
    pub(crate) unsafe fn take(&self) -> Take<T> {
        // SAFETY: as the caller guarantees.
        unsafe {
            self.consumer(|consumer| match consumer.stash.take() {
                Some(Take::Closed) => {
                    consumer.stash = Some(Take::Closed);
                    Take::Closed
                }
                Some(taken) => taken,
                None => self.pop(consumer),
            })
        }
    }

    /// What a receive would find, without receiving: a popped message waits in the stash.
    ///
    /// # Safety
    /// As for [`SharedQueue::pop`].
    pub(crate) unsafe fn look(&self) -> Take<()> {
        // SAFETY: as the caller guarantees.
        unsafe {
            self.consumer(|consumer| {
                if consumer.stash.is_none() {
                    match self.pop(consumer) {
                        Take::Empty => return Take::Empty,
                        found => consumer.stash = Some(found),
                    }
                }
                match consumer.stash {
                    Some(Take::Message(_)) => Take::Message(()),
                    _ => Take::Closed,
                }
            })
        }
    }

    /// Whether a receive would not wait.
    ///
    /// # Safety
    /// As for [`SharedQueue::pop`].
    pub(crate) unsafe fn is_ready(&self) -> bool {
        // SAFETY: as the caller guarantees.
        !matches!(unsafe { self.look() }, Take::Empty)
    }

    /// Leaves `waiter` to be woken by the send of the next message (or the last sender's
    /// drop), and arms the queue for it. `false` (and nothing left) if a receive would not
    /// wait. A waiter it pushes out of the signal word goes to `displaced`, to be woken when the
    /// caller lets go of it.
    ///
    /// # Safety
    /// As for [`SharedQueue::pop`].
    pub(crate) unsafe fn register(&self, waiter: &Arc<Waiter>, displaced: &mut Displaced) -> bool {
        loop {
            // SAFETY: as the caller guarantees.
            if unsafe { self.is_ready() } {
                return false;
            }
            // A ring that came since the last wait is stale (or for a message just looked for).
            self.signal.replace(RUNG, QUIET);
            match self.signal.register(QUIET, waiter) {
                // Only the port puts waiters in the word, and a retry below took ours back: a
                // second round displaces nothing, so this keeps the first round's.
                Ok(pushed_out) => {
                    if pushed_out.is_some() {
                        *displaced = pushed_out;
                    }
                }
                Err(Found::Duplicate) => {}
                // Rung in between: look again.
                Err(Found::Settled(_)) => continue,
            }
            // SAFETY: as the caller guarantees; the queue said empty just above and nothing
            // was popped since.
            let armed = unsafe { self.queue.arm() };
            // SAFETY: as the caller guarantees.
            unsafe { self.consumer(|consumer| consumer.armed = armed) };
            if armed {
                return true;
            }
            // Published meanwhile: nobody will ring for this arm, so take the waiter back and
            // look again. Unless a stale ring (for an arm taken back earlier) swapped it out
            // first: it is woken then, as a registration's waiter is, so this is one (a port
            // set that also listed the port itself would list it twice).
            if self.signal.unregister(QUIET, waiter).is_err() {
                return true;
            }
        }
    }

    /// Takes back a registration: takes `waiter` out of the signal word unless a ring took it,
    /// and the arm with it if no other waiter is left there. Returns whether a receive would now
    /// not wait.
    ///
    /// # Safety
    /// As for [`SharedQueue::pop`].
    pub(crate) unsafe fn unregister(&self, waiter: &Arc<Waiter>) -> bool {
        let _ = self.signal.unregister(QUIET, waiter);
        // SAFETY: as the caller guarantees.
        unsafe { self.release_arm() };
        // SAFETY: as the caller guarantees.
        unsafe { self.is_ready() }
    }

    /// Takes back an arm that no pop spent, once no waiter is left in the signal word to be
    /// rung for it. The arm is the port's, not a waiter's: two tasks waiting on the port share
    /// it, and the one that gives up first must not take it from the other.
    ///
    /// # Safety
    /// As for [`SharedQueue::pop`].
    unsafe fn release_arm(&self) {
        if is_waiter(self.signal.load()) {
            return;
        }
        // SAFETY: as the caller guarantees; `armed` says no pop spent the arm.
        unsafe {
            self.consumer(|consumer| {
                if std::mem::take(&mut consumer.armed) {
                    self.queue.disarm();
                }
            })
        };
    }

    /// After a wake-up of a registered `waiter`: whether a receive would not wait. A
    /// registration that a stale ring took is made again.
    ///
    /// # Safety
    /// As for [`SharedQueue::pop`].
    pub(crate) unsafe fn woken(&self, waiter: &Arc<Waiter>) -> bool {
        // SAFETY: as the caller guarantees.
        if unsafe { self.is_ready() } {
            return true;
        }
        if self.signal.load() == Arc::as_ptr(waiter).addr() {
            return false;
        }
        // SAFETY: as the caller guarantees.
        !unsafe { self.register(waiter, &mut Displaced::none()) }
    }

    /// Blocks until a receive would not wait, or `deadline` passes (then `false`).
    ///
    /// # Safety
    /// As for [`SharedQueue::pop`].
    pub(crate) unsafe fn wait(&self, deadline: Option<Instant>) -> bool {
        if spin_until(deadline, || {
            // SAFETY: as the caller guarantees.
            unsafe { self.is_ready() }
        }) {
            return true;
        }
        let me = Waiter::current();
        // SAFETY: as the caller guarantees.
        if !unsafe { self.register(&me, &mut Displaced::none()) } {
            return true;
        }
        loop {
            if !park(deadline) {
                // SAFETY: as the caller guarantees.
                return unsafe { self.unregister(&me) };
            }
            // SAFETY: as the caller guarantees.
            if unsafe { self.woken(&me) } {
                // SAFETY: as the caller guarantees.
                unsafe { self.unregister(&me) };
                return true;
            }
        }
    }

    /// A task's wait: `true` if a receive would not wait; otherwise leaves a watch for the task
    /// of `waker` (kept in `mine` between polls) in the signal word and arms the queue.
    ///
    /// The watch follows `StateWord::watch`: other tasks' watches found in the word are carried
    /// by ours, not displaced, so two tasks waiting on one port (or one select given the port
    /// twice) do not wake each other in turn for ever, and a ring wakes them all.
    ///
    /// # Safety
    /// As for [`SharedQueue::pop`].
    pub(crate) unsafe fn watch(&self, waker: &Waker, mine: &mut Option<Arc<Waiter>>) -> bool {
        loop {
            // SAFETY: as the caller guarantees.
            if unsafe { self.is_ready() } {
                return true;
            }
            // A ring that came since the last wait is stale (it woke whoever was there).
            self.signal.replace(RUNG, QUIET);
            if self.signal.watch(QUIET, waker, mine).is_ready() {
                // Rung in between: look again.
                continue;
            }
            // Armed again even if an earlier watch armed: `armed` may speak of an arm on a
            // segment's link that the linker has spent (it rang, and the receive that followed
            // moved to the new segment and found it empty), and nobody would ring for the slot
            // a receive takes next. Arming is idempotent on a slot, and on a link not yet made.
            // SAFETY: as the caller guarantees; the queue said empty just above and nothing
            // was popped since.
            let armed = unsafe { self.queue.arm() };
            // SAFETY: as the caller guarantees.
            unsafe { self.consumer(|consumer| consumer.armed = armed) };
            if armed {
                return false;
            }
            // Published meanwhile, so nobody will ring for this arm: wake every watch in the
            // word (ours among them, spuriously), as a ring would, and take the message.
            self.signal.swap_and_wake(QUIET);
            if let Some(waiter) = mine.take() {
                Waiter::recycle(waiter);
            }
        }
    }

    /// Ends a [`SharedQueue::watch`]: takes the watch back out of the word if it is on top
    /// (putting back the watches it carries), and the arm once no waiter is left.
    ///
    /// # Safety
    /// As for [`SharedQueue::pop`].
    pub(crate) unsafe fn unwatch(&self, mine: &mut Option<Arc<Waiter>>) {
        let _ = self.signal.unwatch(QUIET, mine);
        // SAFETY: as the caller guarantees.
        unsafe { self.release_arm() };
    }

    /// The port's drop: closes the queue (later sends hand their message back), drops every
    /// message sent before, and the stash, through `drops` (the thread's drop queue, if it is
    /// still there: ports among a message's fields are queued there, not recursed into);
    /// wakes a watch left behind.
    ///
    /// # Safety
    /// The caller is the port, last thing.
    pub(crate) unsafe fn close(&self, drops: Option<&DropQueue>) {
        // A waker that panics must not keep the queue open (see `deferring`).
        deferring(|| {
            // A waiter here is a forgotten future's watch.
            self.signal.swap_and_wake(QUIET);
            // SAFETY: as the caller guarantees.
            let stash = unsafe { self.consumer(|consumer| consumer.stash.take()) };
            // SAFETY: as the caller guarantees: no consumer method runs after this.
            unsafe {
                self.queue
                    .close_with(|message| drop_queue::drop_message(message, drops))
            };
            drop_queue::drop_message(stash, drops);
        });
    }
}

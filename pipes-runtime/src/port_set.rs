//! Port sets: many stream ports of one message type, received from as one, at a cost per message
//! that does not grow with the number of ports (the 2012 set called an O(n) select per receive,
//! which is where it broke down).
//!
//! ```
//! let set = pipes_runtime::PortSet::new();
//! let handles: Vec<_> = (0..4u64)
//!     .map(|i| {
//!         let chan = set.chan();
//!         std::thread::spawn(move || chan.send(i).unwrap())
//!     })
//!     .collect();
//! // The set ends once every chan is gone and every message is taken.
//! let mut got: Vec<u64> = set.iter().collect();
//! got.sort();
//! assert_eq!(got, [0, 1, 2, 3]);
//! # for handle in handles { handle.join().unwrap(); }
//! ```
//!
//! # How it stays flat
//!
//! Every port is, at any moment, in exactly one of two places:
//! - on the set's *local ready list* (a FIFO): its next packet may hold a message or a hang-up,
//!   or it was just added and not looked at yet;
//! - *watched*: a [`Waiter::Ready`] for it sits in its next packet's state word (or a sender has
//!   just swapped it out and is about to queue the port).
//!
//! A receive pops the front of the local list and takes the message. If the port's next packet is
//! already `FULL` (its sender is ahead) the port goes to the back of the list without any write
//! to shared memory; if it is `EMPTY` the port is watched. A sender that swaps a watching waiter
//! out pushes it on the shared [`ReadyList`] (lock-free) and unparks the set's thread if it
//! sleeps; the set moves those ports to the back of its local list before every receive. So a receive touches
//! one port and the two lists, whatever their size; and because ports are served from a FIFO and
//! woken ports join at the back, every ready port is served within one round of the others: no
//! port is starved by ports that are always ready.
//!
//! Ports are never looked at twice for one message: a watched port is not polled, a listed port
//! is not watched.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Waker};
use std::time::{Duration, Instant};

use crate::endpoint::Recv;
use crate::error::{RecvError, RecvTimeoutError, TryRecvError};
use crate::packet::{FULL, StateWord, TERMINATED, closed_word};
use crate::select::{Selectable, SetTarget, Target};
use crate::spin::spin_until;
use crate::stream::{Chan, Port, stream};
use crate::sync::{Arc, AtomicUsize, Mutex, Ordering, park_until, thread};
use crate::waiter::Waiter;

/// The ready list's word when nothing is queued and the set's thread is not parked.
const IDLE: usize = 0;
/// Nothing is queued and the set's thread is parked (or about to): the next push unparks it.
const SLEEPING: usize = 1;
/// The set is gone: a push drops its waiter instead of queuing it.
const CLOSED: usize = 2;

/// The ports of a set that senders found watched and woke, shared by the set and the waiters it
/// leaves in its ports' packets. Written by senders, emptied by the set's thread.
///
/// It is one word: [`IDLE`], [`SLEEPING`], [`CLOSED`], or else a pointer to the waiter queued
/// last, whose `next` leads to the one queued before (a push-only stack; `Arc` pointers are
/// aligned, so never 0, 1 or 2). A sender pushes the waiter it swapped out of a packet with the
/// reference the swap gave it: one compare-exchange, no lock and no reference count moved. The
/// set takes the whole stack with one swap and reverses it, so ports are served in the order
/// they were woken. Push-only with take-all is free of ABA: a push only needs its `next` to be
/// the head it replaces.
#[derive(Debug)]
pub(crate) struct ReadyList {
    head: AtomicUsize,
    /// The thread to unpark when the word is [`SLEEPING`]: written by the set before it sleeps,
    /// read by the one sender that ends the sleep. Locked only around a park.
    sleeper: Mutex<Option<Sleeper>>,
}

/// Who waits for the set: a parked thread (`recv`, select) or a task (`recv_async`).
#[derive(Debug)]
enum Sleeper {
    Thread(thread::Thread),
    Task(Waker),
}

impl Sleeper {
    fn wake(&self) {
        match self {
            Sleeper::Thread(thread) => thread.unpark(),
            Sleeper::Task(waker) => waker.wake_by_ref(),
        }
    }
}

impl ReadyList {
    fn new() -> Self {
        ReadyList {
            head: AtomicUsize::new(IDLE),
            sleeper: Mutex::new(None),
        }
    }

    /// Queues a woken port's waiter, with the reference its sender swapped out of the packet,
    /// and unparks the set's thread if it sleeps. Each watch queues its port at most once.
    pub(crate) fn push(waiter: Arc<Waiter>) {
        let node = Arc::into_raw(waiter);
        // SAFETY: we own the reference `node` stands for until the exchange below publishes it,
        // so the waiter and the list it names are alive while we use them here.
        let Waiter::Ready { list, next, .. } = (unsafe { &*node }) else {
            unreachable!("only a port set's waiters are queued");
        };
        let mut head = list.head.load(Ordering::Relaxed);
        // Held only while the set sleeps: once the exchange lands, the set may wake, drain the
        // list and drop itself and our waiter, and we still have to unpark it.
        let mut keep: Option<Arc<ReadyList>> = None;
        loop {
            if head == CLOSED {
                // SAFETY: not published; the reference is still ours, and the set is gone.
                drop(unsafe { Arc::from_raw(node) });
                return;
            }
            if head == SLEEPING && keep.is_none() {
                keep = Some(Arc::clone(list));
            }
            next.store(
                if head == SLEEPING { IDLE } else { head },
                Ordering::Relaxed,
            );
            // Release publishes `next` (and the waiter) to the set's Acquire swap.
            match list.head.compare_exchange_weak(
                head,
                node as usize,
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(found) => head = found,
            }
        }
        if head == SLEEPING {
            let list = keep.expect("cloned when the set was seen sleeping");
            if let Some(sleeper) = list.sleeper.lock().as_ref() {
                sleeper.wake();
            }
        }
    }

    /// Arms the list for a select waiting as `waiter` (a thread, or an async select's task): the
    /// next push wakes it. Fails when
    /// ports are already queued (drain them first) or the list is armed already.
    pub(crate) fn arm(&self, waiter: &Waiter) -> Result<(), Armed> {
        *self.sleeper.lock() = Some(match waiter {
            Waiter::Thread(thread) => Sleeper::Thread(thread.clone()),
            Waiter::Task { waker, .. } => Sleeper::Task(waker.clone()),
            Waiter::Ready { .. } => unreachable!("a port set's waiter does not select"),
        });
        match self
            .head
            .compare_exchange(IDLE, SLEEPING, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) => Ok(()),
            Err(SLEEPING) => Err(Armed::Already),
            Err(_) => Err(Armed::Pending),
        }
    }

    /// Whether a push has ended the armed (or sleeping) state since [`ReadyList::arm`].
    pub(crate) fn pushed(&self) -> bool {
        self.head.load(Ordering::Acquire) != SLEEPING
    }

    /// Disarms after a select. Returns whether it was still armed; if not, a push came (or it
    /// was disarmed already), and the queue may hold ports.
    pub(crate) fn disarm(&self) -> bool {
        self.head
            .compare_exchange(SLEEPING, IDLE, Ordering::AcqRel, Ordering::Acquire)
            .is_ok()
    }

    /// Whether a port is queued (a read only; the set's thread alone takes them).
    fn is_pending(&self) -> bool {
        self.head.load(Ordering::Relaxed) > CLOSED
    }

    /// Moves every queued port to the back of `local`, oldest first, taking back the waiters'
    /// references. `spare` is an empty vector, kept to reuse its allocation.
    fn drain(&self, local: &mut VecDeque<usize>, spare: &mut Vec<usize>) {
        if !self.is_pending() {
            return;
        }
        // Only senders change the word while it holds a stack, and only by pushing, so it still
        // holds one. Acquire pairs with the pushes' Release: every `next` is visible.
        let mut node = self.head.swap(IDLE, Ordering::Acquire);
        while node != IDLE {
            // SAFETY: taken off the stack by our swap: the reference its sender pushed is ours.
            let waiter = unsafe { Arc::from_raw(node as *const Waiter) };
            let Waiter::Ready { port, next, .. } = &*waiter else {
                unreachable!("only a port set's waiters are queued");
            };
            spare.push(*port);
            node = next.load(Ordering::Relaxed);
        }
        local.extend(spare.drain(..).rev());
    }

    /// Parks the set's thread until a port is queued or `deadline` passes (then returns
    /// `false`). Returns at once if a port is already queued. Leaves the word not
    /// [`SLEEPING`].
    fn sleep(&self, deadline: Option<Instant>) -> bool {
        // The set may have moved to another thread since it last slept.
        *self.sleeper.lock() = Some(Sleeper::Thread(thread::current()));
        // Acquire on failure: a stack is there, to drain.
        if self
            .head
            .compare_exchange(IDLE, SLEEPING, Ordering::AcqRel, Ordering::Acquire)
            .is_err()
        {
            return true;
        }
        loop {
            // Only a push ends `SLEEPING`; unparks may be spurious, hence the loop.
            if self.head.load(Ordering::Acquire) != SLEEPING {
                return true;
            }
            match deadline {
                None => thread::park(),
                Some(deadline) => {
                    if !park_until(deadline) {
                        // Disarm; if a push got in first, there is something to drain.
                        return self
                            .head
                            .compare_exchange(SLEEPING, IDLE, Ordering::AcqRel, Ordering::Acquire)
                            .is_err();
                    }
                }
            }
        }
    }

    /// Leaves the task's waker as the set's sleeper and marks the set sleeping, as
    /// [`ReadyList::sleep`] does for a thread, without blocking. Returns `false` when ports are
    /// queued already (drain them instead); `true` when the next push will wake the task.
    fn sleep_task(&self, waker: &Waker) -> bool {
        {
            let mut sleeper = self.sleeper.lock();
            if !matches!(&*sleeper, Some(Sleeper::Task(old)) if old.will_wake(waker)) {
                *sleeper = Some(Sleeper::Task(waker.clone()));
            }
        }
        // The sleeper is set before the word says `SLEEPING`, so the push that ends the sleep
        // (its exchange comes after ours) locks the mutex after us and finds this waker.
        match self
            .head
            .compare_exchange(IDLE, SLEEPING, Ordering::AcqRel, Ordering::Acquire)
        {
            // Already sleeping: an earlier poll armed it, and the waker above replaced its own.
            Ok(_) | Err(SLEEPING) => true,
            Err(_) => false,
        }
    }

    /// Ends a task's sleep that no push ended (the future resolved another way or was
    /// dropped), so a later blocking receive does not find the word `SLEEPING`, and lets the
    /// task's waker go.
    fn wake_task_up(&self) {
        let _ = self
            .head
            .compare_exchange(SLEEPING, IDLE, Ordering::AcqRel, Ordering::Acquire);
        let mut sleeper = self.sleeper.lock();
        if matches!(&*sleeper, Some(Sleeper::Task(_))) {
            *sleeper = None;
        }
    }

    /// Marks the set gone and takes back the references of waiters still queued. Pushes after
    /// this drop their own.
    fn close(&self) {
        let mut node = self.head.swap(CLOSED, Ordering::Acquire);
        while node > CLOSED {
            // SAFETY: taken off the stack by our swap, as in `drain`.
            let waiter = unsafe { Arc::from_raw(node as *const Waiter) };
            let Waiter::Ready { next, .. } = &*waiter else {
                unreachable!("only a port set's waiters are queued");
            };
            node = next.load(Ordering::Relaxed);
        }
    }
}

/// Why [`ReadyList::arm`] did not arm.
pub(crate) enum Armed {
    /// Armed already (the same set selected twice).
    Already,
    /// Ports are queued.
    Pending,
}

/// One port of a set, with the waiter it leaves in its packets.
struct Member<T> {
    port: Port<T>,
    /// A [`Waiter::Ready`] naming this port; one reference per watch goes into a state word.
    waiter: Arc<Waiter>,
    /// Whether the port is watched (see the module docs); if not, it is on the local list.
    watched: bool,
}

impl<T> Member<T> {
    /// Watches the port's next packet. Returns `false` (and watches nothing) when that packet is
    /// already ready, so the caller lists the port instead.
    fn watch(&mut self) -> bool {
        match self.port.state_word().register(&self.waiter) {
            Ok(()) => {
                self.watched = true;
                true
            }
            // A settled packet (a waiter left by a select before the port joined the set was
            // displaced and woken by `register`).
            Err(_) => false,
        }
    }
}

/// What the set's thread alone touches.
struct Local<T> {
    /// Slots of the ports; a port that hung up leaves a hole, reused by the next `add`.
    members: Vec<Option<Member<T>>>,
    /// The holes in `members`.
    free: Vec<usize>,
    /// Ports still in the set.
    live: usize,
    /// The local ready list (see the module docs).
    ready: VecDeque<usize>,
    /// An empty vector to swap with the shared list's, kept to reuse its allocation.
    spare: Vec<usize>,
}

/// What one look at the set found.
enum Poll<T> {
    Message(T),
    Empty,
    Closed,
}

/// Many [`Port`]s of one message type treated as one: a receive takes the next message from any
/// of them. Messages from one chan arrive in order; a port with messages is never starved by
/// others; a receive costs the same with 1 port or 10,000. Receiving fails only once every chan
/// is dropped and every message taken. `Send` when `T` is, not `Sync`: one thread receives.
pub struct PortSet<T> {
    local: RefCell<Local<T>>,
    list: Arc<ReadyList>,
}

fn closed() -> RecvError {
    RecvError::new("port_set", "Open")
}

impl<T> PortSet<T> {
    /// An empty set. Receiving from it fails until a port is added.
    pub fn new() -> Self {
        PortSet {
            local: RefCell::new(Local {
                members: Vec::new(),
                free: Vec::new(),
                live: 0,
                ready: VecDeque::new(),
                spare: Vec::new(),
            }),
            list: Arc::new(ReadyList::new()),
        }
    }

    /// Adds a port: its messages are received through the set from now on.
    pub fn add(&self, port: Port<T>) {
        let mut local = self.local.borrow_mut();
        let index = local.free.pop().unwrap_or(local.members.len());
        let member = Member {
            port,
            waiter: Arc::new(Waiter::Ready {
                list: Arc::clone(&self.list),
                port: index,
                next: AtomicUsize::new(IDLE),
            }),
            watched: false,
        };
        if index == local.members.len() {
            local.members.push(Some(member));
        } else {
            local.members[index] = Some(member);
        }
        local.live += 1;
        // Looked at on the next receive, which watches it if it is empty.
        local.ready.push_back(index);
    }

    /// Makes a new stream whose port joins the set, and returns its chan.
    pub fn chan(&self) -> Chan<T> {
        let (port, chan) = stream();
        self.add(port);
        chan
    }

    /// How many ports are in the set: added, and not yet seen to have hung up.
    pub fn len(&self) -> usize {
        self.local.borrow().live
    }

    /// Whether the set has no ports (a receive would fail).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Blocks until a message arrives on any port; fails once every chan is dropped and every
    /// message taken.
    pub fn recv(&self) -> Result<T, RecvError> {
        loop {
            match self.poll() {
                Poll::Message(message) => return Ok(message),
                Poll::Closed => return Err(closed()),
                Poll::Empty => {
                    self.wait(None);
                }
            }
        }
    }

    /// Takes a message if one is already here.
    pub fn try_recv(&self) -> Result<T, TryRecvError> {
        match self.poll() {
            Poll::Message(message) => Ok(message),
            Poll::Empty => Err(TryRecvError::Empty(())),
            Poll::Closed => Err(TryRecvError::Disconnected(closed())),
        }
    }

    /// Blocks for at most `timeout` waiting for a message.
    pub fn recv_timeout(&self, timeout: Duration) -> Result<T, RecvTimeoutError> {
        match Instant::now().checked_add(timeout) {
            Some(deadline) => self.recv_deadline(deadline),
            // A timeout too far away to represent is no timeout at all.
            None => self.recv().map_err(RecvTimeoutError::Disconnected),
        }
    }

    /// Blocks until `deadline` at the latest waiting for a message.
    pub fn recv_deadline(&self, deadline: Instant) -> Result<T, RecvTimeoutError> {
        let mut timed_out = false;
        loop {
            match self.poll() {
                Poll::Message(message) => return Ok(message),
                Poll::Closed => return Err(RecvTimeoutError::Disconnected(closed())),
                // One last look after the deadline, so a message that came with it is taken.
                Poll::Empty if timed_out => return Err(RecvTimeoutError::Timeout(())),
                Poll::Empty => timed_out = !self.wait(Some(deadline)),
            }
        }
    }

    /// A future of the next message from any port, for any executor; resolves as `recv`
    /// returns. Cancel-safe: dropping it before it resolves loses nothing, and the ports stay
    /// in the set. It borrows the set, which is not `Sync`, so it is not `Send`: own the set
    /// inside the task to receive on a multi-threaded executor.
    pub fn recv_async(&self) -> PortSetRecv<'_, T> {
        PortSetRecv {
            set: self,
            sleeping: false,
        }
    }

    /// An iterator over messages that blocks for each and ends when every chan is gone.
    pub fn iter(&self) -> PortSetIter<'_, T> {
        PortSetIter { set: self }
    }

    /// Serves the local ready list until a message turns up or the list runs dry. O(1) per
    /// message: each port popped either yields one, or is watched, or leaves the set.
    fn poll(&self) -> Poll<T> {
        let mut local = self.local.borrow_mut();
        let local = &mut *local;
        loop {
            // Woken ports join the back first, so ports that stay ready cannot starve them.
            self.list.drain(&mut local.ready, &mut local.spare);
            let Some(index) = local.ready.pop_front() else {
                return if local.live == 0 {
                    Poll::Closed
                } else {
                    Poll::Empty
                };
            };
            let member = local.members[index]
                .as_mut()
                .expect("a port on the ready list is in the set");
            // On the list, so not watched: a sender swapped the waiter out, or none was left.
            member.watched = false;
            match member.port.try_recv() {
                Ok(message) => {
                    if !member.watch() {
                        local.ready.push_back(index);
                    }
                    return Poll::Message(message);
                }
                Err(TryRecvError::Empty(())) => {
                    if !member.watch() {
                        local.ready.push_back(index);
                    }
                }
                Err(TryRecvError::Disconnected(_)) => {
                    local.members[index] = None;
                    local.free.push(index);
                    local.live -= 1;
                }
            }
        }
    }

    /// Waits for a sender to queue a port: spins for the thread's budget, then parks. Returns
    /// `false` once `deadline` has passed. Spurious returns are fine: the caller polls again.
    fn wait(&self, deadline: Option<Instant>) -> bool {
        if spin_until(deadline, || self.list.is_pending()) {
            return true;
        }
        self.list.sleep(deadline)
    }
}

/// The future of [`PortSet::recv_async`]: serves the set's ready list as `recv` does, and where
/// `recv` would park it leaves the task's waker as the set's sleeper, so the sender that queues
/// a port wakes the task. O(1) per message, as `recv`.
#[must_use = "a future does nothing unless polled"]
pub struct PortSetRecv<'a, T> {
    set: &'a PortSet<T>,
    /// Whether the set's ready list may still be marked sleeping for this future's task.
    sleeping: bool,
}

impl<T> Future for PortSetRecv<'_, T> {
    type Output = Result<T, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> std::task::Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            let resolved = match this.set.poll() {
                Poll::Message(message) => Ok(message),
                Poll::Closed => Err(closed()),
                Poll::Empty => {
                    if this.set.list.sleep_task(cx.waker()) {
                        this.sleeping = true;
                        return std::task::Poll::Pending;
                    }
                    // Ports were queued meanwhile: serve them.
                    continue;
                }
            };
            if std::mem::take(&mut this.sleeping) {
                this.set.list.wake_task_up();
            }
            return std::task::Poll::Ready(resolved);
        }
    }
}

impl<T> Drop for PortSetRecv<'_, T> {
    fn drop(&mut self) {
        // Queued ports stay queued for the set's next receive; only the sleep is undone.
        if self.sleeping {
            self.set.list.wake_task_up();
        }
    }
}

impl<T> fmt::Debug for PortSetRecv<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortSetRecv")
            .field("sleeping", &self.sleeping)
            .finish_non_exhaustive()
    }
}

impl<T> SetTarget for PortSet<T> {
    /// Serves the local list as a receive would, without receiving: a port whose packet is
    /// `FULL` stays at the front (the receive takes it), a hung-up port leaves the set, an empty
    /// one is watched.
    fn settle(&self) -> bool {
        let mut local = self.local.borrow_mut();
        let local = &mut *local;
        self.list.drain(&mut local.ready, &mut local.spare);
        while let Some(&index) = local.ready.front() {
            let member = local.members[index]
                .as_mut()
                .expect("a port on the ready list is in the set");
            member.watched = false;
            match member.port.state_word().load() {
                FULL => return true,
                TERMINATED => {
                    local.ready.pop_front();
                    local.members[index] = None;
                    local.free.push(index);
                    local.live -= 1;
                }
                _ => {
                    local.ready.pop_front();
                    if !member.watch() {
                        // Filled or hung up just now: look again.
                        local.ready.push_front(index);
                    }
                }
            }
        }
        local.live == 0
    }

    fn ready_list(&self) -> &ReadyList {
        &self.list
    }
}

impl<T> Selectable for PortSet<T> {
    fn __select_target(&self) -> Target<'_> {
        Target::set(self)
    }
}

/// A borrowed port set is a receiving endpoint for select, as a borrowed [`Port`] is: it is not
/// consumed by a receive, so the endpoint handed back is the same borrow.
impl<T> Recv for &PortSet<T> {
    type Message = T;

    fn recv(self) -> Result<T, RecvError> {
        PortSet::recv(self)
    }

    fn try_recv(self) -> Result<T, TryRecvError<Self>> {
        PortSet::try_recv(self).map_err(|error| error.map(|()| self))
    }

    fn recv_timeout(self, timeout: Duration) -> Result<T, RecvTimeoutError<Self>> {
        PortSet::recv_timeout(self, timeout).map_err(|error| error.map(|()| self))
    }

    /// A set has no one state word; select uses [`Recv::__select_target`] instead.
    fn __state_word(&self) -> &StateWord {
        closed_word()
    }

    fn __select_target(&self) -> Target<'_> {
        Target::set(*self)
    }
}

impl<T> Default for PortSet<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for PortSet<T> {
    /// Takes every watching waiter back before the ports drop, as a port must not be dropped
    /// with a waiter in its packet, then closes the ready list, taking back the references of
    /// the waiters queued on it. A waiter a sender swapped out and has not pushed yet is the
    /// sender's: its push finds the list closed and drops it.
    fn drop(&mut self) {
        for member in self.local.get_mut().members.iter_mut().flatten() {
            if member.watched {
                // An `Err` means a sender owns the waiter now, as above.
                let _ = member.port.state_word().unregister(&member.waiter);
                member.watched = false;
            }
        }
        self.list.close();
    }
}

impl<T> Iterator for PortSet<T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.recv().ok()
    }
}

/// Blocking iterator over a borrowed [`PortSet`]; see [`PortSet::iter`].
pub struct PortSetIter<'a, T> {
    set: &'a PortSet<T>,
}

impl<T> Iterator for PortSetIter<'_, T> {
    type Item = T;

    fn next(&mut self) -> Option<T> {
        self.set.recv().ok()
    }
}

impl<'a, T> IntoIterator for &'a PortSet<T> {
    type Item = T;
    type IntoIter = PortSetIter<'a, T>;

    fn into_iter(self) -> PortSetIter<'a, T> {
        self.iter()
    }
}

impl<T> fmt::Debug for PortSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortSet").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for PortSetIter<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortSetIter").finish_non_exhaustive()
    }
}

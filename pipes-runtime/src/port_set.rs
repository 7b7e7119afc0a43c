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
//! Every port is, at any moment, in exactly one of three places:
//! - on the set's *local ready list* (a FIFO): its next packet may hold a message or a hang-up;
//! - *queued* on the shared [`ReadyList`]: a sender woke it, or it was just added;
//! - *watched*: a [`Waiter::Ready`] for it sits in its next packet's state word (or a sender has
//!   just swapped it out and is about to queue it).
//!
//! A receive pops the front of the local list and takes the message. If the port's next packet is
//! already `FULL` (its sender is ahead) the port goes to the back of the list without any write
//! to shared memory; if it is `EMPTY` the port is watched. A sender that swaps a watching waiter
//! out pushes it on the shared [`ReadyList`] (lock-free) and, if the set sleeps, wakes whoever
//! waits on it; the set moves those ports to the back of its local list before every receive.
//! [`PortSet::add`] queues a new port the same way, so a waiter learns of it as of any woken
//! port. So a receive touches one port and the two lists, whatever their size; and because
//! ports are served from a FIFO and woken ports join at the back, every ready port is served
//! within one round of the others: no port is starved by ports that are always ready.
//!
//! Ports are never looked at twice for one message: a watched port is not polled, a listed port
//! is not watched.
//!
//! # Who waits
//!
//! Only the set's own thread receives (the set is not `Sync`), but several waits can be under
//! way there at once: pending [`PortSet::recv_async`] futures of several tasks (or two joined
//! in one task), a pending async select over the set, a pending future forgotten with
//! `mem::forget`, and beside them a thread blocked in `recv` or a select. Each registers an
//! entry of its own with the ready list (a *sleeper*), the push that ends the set's sleep wakes
//! all of them, and each takes back only its own entry, so no waiter's leaving can end another's
//! wait; the ready list's docs give the protocol and why no wake is lost.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::task::Context;
use std::time::{Duration, Instant};

use crate::endpoint::Recv;
use crate::error::{RecvError, RecvTimeoutError, TryRecvError};
use crate::packet::{FULL, StateWord, TERMINATED, closed_word};
use crate::select::{Selectable, SetTarget, Target};
use crate::spin::spin_until;
use crate::stream::{Chan, Port, stream};
use crate::sync::{Arc, AtomicUsize, Mutex, Ordering, park_until, thread};
use crate::waiter::Waiter;

/// The ready list's word when nothing is queued and no one is registered to be woken.
const IDLE: usize = 0;
/// Nothing is queued and waiters may be registered (see [`ReadyList`]): the push that ends this
/// wakes every one of them.
const SLEEPING: usize = 1;
/// The set is gone: a push drops its waiter instead of queuing it.
const CLOSED: usize = 2;

/// The ports of a set that senders found watched and woke, shared by the set and the waiters it
/// leaves in its ports' packets; and the *sleepers*, everyone waiting for the next such port.
/// Written by senders, emptied by the set's thread.
///
/// The queue is one word: [`IDLE`], [`SLEEPING`], [`CLOSED`], or else a pointer to the waiter
/// queued last, whose `next` leads to the one queued before (a push-only stack; `Arc` pointers
/// are aligned, so never 0, 1 or 2). A sender pushes the waiter it swapped out of a packet with
/// the reference the swap gave it: one compare-exchange, no lock and no reference count moved.
/// The set takes the whole stack with one swap and reverses it, so ports are served in the
/// order they were woken. Push-only with take-all is free of ABA: a push only needs its `next`
/// to be the head it replaces.
///
/// # Sleepers
///
/// Several may wait on one set at once: pending [`PortSet::recv_async`] futures (several tasks
/// sharing the set, or one task joining two futures), a pending async select, and a thread in
/// `recv` or a select, all on the set's thread. Each registers an entry of its own in
/// `sleepers`: its own waiter, whose address identifies the entry (the entry holds a
/// reference, so no other waiter can take that address while it is there; a thread's waiter is
/// shared by that thread's blocking waits, which never overlap). Nothing is merged: two futures
/// polled with the same waker are two entries, and each takes back only its own.
///
/// - Registering ([`ReadyList::arm`]), under the mutex: turn an `IDLE` word `SLEEPING` (or find
///   it `SLEEPING` already), then add the entry. A stack in the word means ports are queued:
///   nothing is added, drain them instead.
/// - A push that replaces `SLEEPING` takes every entry out under the mutex and, after unlocking,
///   wakes each one (threads unparked, wakers woken) and drops it. The exchange comes first and
///   the lock after, so a sender never locks unless it ends a sleep.
/// - Leaving ([`ReadyList::disarm`]: a future that resolves or is dropped, a select that
///   returns, a timed-out thread), under the mutex: remove the own entry if a push has not
///   taken it; if no entry is left, turn `SLEEPING` back to `IDLE`, so senders stop locking. The
///   word goes back to `IDLE` only when no registrant remains.
/// - Anyone woken checks under the mutex whether its entry is still there, and registers again
///   if the set still sleeps and a push took it (see below).
///
/// Why no wake is lost: a registrant that read `SLEEPING` under the mutex is found by the push
/// that ends that sleep. Mutex sections are totally ordered; if the sender's section came
/// first, its exchange (sequenced before its lock) happens before the registrant's read (after
/// its lock), and by coherence that read returns the sender's stack or a later value: a later
/// stack, `IDLE` after the set drained, or the `SLEEPING` of a *new* sleep, never the one the
/// sender ended. So the registrant's section comes first, and the sender's lock, which
/// synchronizes with the registrant's unlock, finds its entry. That is all the argument needs
/// from the mutex; the orderings on the word are for the stack (a push's Release publishes its
/// `next` to the drain's Acquire). A sender that ended a sleep can be slow to take the lock:
/// meanwhile the set may drain and sleep again, and that sender then takes and wakes the new
/// sleep's entries too. Those registrants wake spuriously, find the word still `SLEEPING` and
/// their entries gone, and register again; until then they are covered by that very wake.
///
/// A future forgotten while pending (`mem::forget`) leaves its entry behind: the next push
/// that ends a sleep wakes it spuriously and drops it (so does the set's drop), and until then
/// the word stays `SLEEPING`, which only makes those pushes lock. Entries never pile up from
/// futures that are dropped: each takes its own back.
#[derive(Debug)]
pub(crate) struct ReadyList {
    head: AtomicUsize,
    /// Everyone to wake when a push ends the sleep: task and thread waiters, one entry each
    /// (see above). Locked to register and to leave, and by the one sender that ends a sleep.
    sleepers: Mutex<Vec<Arc<Waiter>>>,
}

impl ReadyList {
    fn new() -> Self {
        ReadyList {
            head: AtomicUsize::new(IDLE),
            sleepers: Mutex::new(Vec::new()),
        }
    }

    /// Queues a woken port's waiter, with the reference its sender swapped out of a packet (or
    /// a new port's, from [`PortSet::add`]), and wakes every sleeper if the set sleeps. Each
    /// watch queues its port at most once.
    pub(crate) fn push(waiter: Arc<Waiter>) {
        let node = Arc::into_raw(waiter);
        // SAFETY: we own the reference `node` stands for until the exchange below publishes it,
        // so the waiter and the list it names are alive while we use them here.
        let Waiter::Ready { list, next, .. } = (unsafe { &*node }) else {
            unreachable!("only a port set's waiters are queued");
        };
        let mut head = list.head.load(Ordering::Relaxed);
        // Held only while the set sleeps: once the exchange lands, the set may wake, drain the
        // list and drop itself and our waiter, and we still have to wake its sleepers.
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
            // Taken under the lock, woken and dropped after it: a waker may run any code,
            // including a drop of a future that leaves this very list.
            let sleepers = std::mem::take(&mut *list.sleepers.lock());
            for sleeper in sleepers {
                Waiter::wake(sleeper);
            }
        }
    }

    /// Registers `waiter` (a thread, or a task) to be woken by the next push, and marks the set
    /// sleeping. Fails when ports are already queued (drain them first), or when `waiter` is
    /// registered already (the same set selected twice, or a wait that registered before); it
    /// is woken then as it is.
    pub(crate) fn arm(&self, waiter: &Arc<Waiter>) -> Result<(), Armed> {
        debug_assert!(
            !matches!(**waiter, Waiter::Ready { .. }),
            "a port set's waiter does not wait on a set"
        );
        let mut sleepers = self.sleepers.lock();
        // Under the lock, so the sender that ends this sleep finds the entry (type docs).
        // Acquire on failure: a stack is there, to drain.
        match self
            .head
            .compare_exchange(IDLE, SLEEPING, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) | Err(SLEEPING) => {}
            Err(_) => return Err(Armed::Pending),
        }
        if sleepers.iter().any(|sleeper| Arc::ptr_eq(sleeper, waiter)) {
            // Registered in this sleep, or in one whose sender has yet to take the entry: a
            // wake is coming either way.
            return Err(Armed::Already);
        }
        sleepers.push(Arc::clone(waiter));
        Ok(())
    }

    /// Whether a push may have come since `waiter` was armed: the set no longer sleeps, or a
    /// push took `waiter`'s entry (and wakes it). `false` means it is still registered, and
    /// the push that ends the sleep wakes it.
    pub(crate) fn pushed(&self, waiter: &Arc<Waiter>) -> bool {
        if self.head.load(Ordering::Acquire) != SLEEPING {
            return true;
        }
        let sleepers = self.sleepers.lock();
        !sleepers.iter().any(|sleeper| Arc::ptr_eq(sleeper, waiter))
    }

    /// Takes `waiter`'s entry back after a wait, and ends the sleep if no one else is
    /// registered. Returns whether it was still armed (registered, and the set asleep); if
    /// not, a push came, and ports may be queued.
    pub(crate) fn disarm(&self, waiter: &Arc<Waiter>) -> bool {
        let mut sleepers = self.sleepers.lock();
        let mine = sleepers
            .iter()
            .position(|sleeper| Arc::ptr_eq(sleeper, waiter))
            .map(|at| sleepers.swap_remove(at));
        let asleep = if sleepers.is_empty() {
            // The last registrant leaves: pushes need not lock any more. A failed exchange
            // means a push came (or the set drained after one).
            self.head
                .compare_exchange(SLEEPING, IDLE, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        } else {
            self.head.load(Ordering::Acquire) == SLEEPING
        };
        drop(sleepers);
        mine.is_some() && asleep
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
    /// `false`). Returns at once if a port is already queued. Registers the thread beside any
    /// other sleeper (a pending task's, say) and takes only its own entry back.
    fn sleep(&self, deadline: Option<Instant>) -> bool {
        // The set may have moved to another thread since it last slept: this thread's waiter.
        let me = Waiter::current();
        if let Err(Armed::Pending) = self.arm(&me) {
            return true;
        }
        loop {
            match deadline {
                None => thread::park(),
                Some(deadline) => {
                    if !park_until(deadline) {
                        // If a push got in first, there is something to drain.
                        return !self.disarm(&me);
                    }
                }
            }
            if !self.still_asleep(&me) {
                return true;
            }
        }
    }

    /// After a sleeping thread's wake-up, under one lock: whether the set still sleeps (an
    /// unpark that was spurious, or came from the sender of an earlier sleep, which took the
    /// entry: it is put back). If not, a push came, and the thread's entry is taken back if
    /// that push has yet to take it.
    fn still_asleep(&self, me: &Arc<Waiter>) -> bool {
        let mut sleepers = self.sleepers.lock();
        let mine = sleepers.iter().position(|sleeper| Arc::ptr_eq(sleeper, me));
        // Read under the lock, as `arm` reads it: a put-back entry is found by the push that
        // ends this sleep (type docs).
        if self.head.load(Ordering::Acquire) == SLEEPING {
            if mine.is_none() {
                sleepers.push(Arc::clone(me));
            }
            return true;
        }
        let mine = mine.map(|at| sleepers.swap_remove(at));
        drop(sleepers);
        drop(mine);
        false
    }

    /// Marks the set gone and takes back the references of waiters still queued. Pushes after
    /// this drop their own. Drops the entries that futures forgotten while pending left.
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
        // Outside the lock: dropping a waker may run any code.
        let forgotten = std::mem::take(&mut *self.sleepers.lock());
        drop(forgotten);
    }
}

/// Why [`ReadyList::arm`] did not arm.
pub(crate) enum Armed {
    /// This waiter is registered already (the same set selected twice).
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

    /// Adds a port: its messages are received through the set from now on. Whoever waits on
    /// the set (a pending [`PortSet::recv_async`], an async select) is woken to look at it.
    pub fn add(&self, port: Port<T>) {
        let waiter = {
            let mut local = self.local.borrow_mut();
            let index = local.free.pop().unwrap_or(local.members.len());
            let waiter = Arc::new(Waiter::Ready {
                list: Arc::clone(&self.list),
                port: index,
                next: AtomicUsize::new(IDLE),
            });
            let member = Member {
                port,
                waiter: Arc::clone(&waiter),
                watched: false,
            };
            if index == local.members.len() {
                local.members.push(Some(member));
            } else {
                local.members[index] = Some(member);
            }
            local.live += 1;
            waiter
        };
        // Announced as a sender announces a port it woke: queued on the shared list with a
        // reference of its own, which ends any sleep and wakes every sleeper, so each waiter,
        // thread or task, select or receive, hears of the port the one way it hears of any
        // (the local list is the set's alone, and no one is woken by a port put there). The
        // next receive looks at it and watches it if it is empty. After the borrow ends: a
        // waker may run code that uses the set.
        ReadyList::push(waiter);
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
    /// inside the task to receive on a multi-threaded executor (or share it between tasks on
    /// one thread, as an `Rc<PortSet>`).
    ///
    /// Any number may be pending on one set at once, beside a blocked [`PortSet::recv`] or a
    /// select: a message wakes every one of them, and those that find it taken wait again. A
    /// pending future forgotten with `mem::forget` leaves its registration behind, which the
    /// next message wakes once and drops.
    pub fn recv_async(&self) -> PortSetRecv<'_, T> {
        PortSetRecv {
            set: self,
            waiter: None,
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
/// `recv` would park it registers the task's waker with the set, beside any other waiter's, so
/// the sender that queues a port wakes the task. O(1) per message, as `recv`.
#[must_use = "a future does nothing unless polled"]
pub struct PortSetRecv<'a, T> {
    set: &'a PortSet<T>,
    /// The task waiter this future registered with the set's ready list, while it may still be
    /// there; its address is the registration's identity.
    waiter: Option<Arc<Waiter>>,
}

impl<T> PortSetRecv<'_, T> {
    /// Takes this future's registration back (a push may have taken it already).
    fn leave(&mut self) {
        if let Some(waiter) = self.waiter.take() {
            self.set.list.disarm(&waiter);
            Waiter::recycle(waiter);
        }
    }
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
                    let same_task = matches!(
                        this.waiter.as_deref(),
                        Some(waiter) if waiter.is_task_of(cx.waker())
                    );
                    if !same_task {
                        // Moved to another task: its own entry replaces the old one.
                        this.leave();
                        this.waiter = Some(Waiter::task(cx.waker()));
                    }
                    let waiter = this.waiter.as_ref().expect("set just above");
                    match this.set.list.arm(waiter) {
                        // Registered now, or still (a re-poll before any push).
                        Ok(()) | Err(Armed::Already) => return std::task::Poll::Pending,
                        // Ports were queued meanwhile: serve them.
                        Err(Armed::Pending) => continue,
                    }
                }
            };
            this.leave();
            return std::task::Poll::Ready(resolved);
        }
    }
}

impl<T> Drop for PortSetRecv<'_, T> {
    fn drop(&mut self) {
        // Queued ports stay queued for the set's next receive; only the registration goes.
        self.leave();
    }
}

impl<T> fmt::Debug for PortSetRecv<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortSetRecv")
            .field("registered", &self.waiter.is_some())
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

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::mem::ManuallyDrop;
    use std::task::Waker;

    fn sleepers<T>(set: &PortSet<T>) -> usize {
        set.list.sleepers.lock().len()
    }

    fn word<T>(set: &PortSet<T>) -> usize {
        set.list.head.load(Ordering::Relaxed)
    }

    fn pending<F: Future + Unpin>(future: &mut F) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        Pin::new(future).poll(&mut cx).is_pending()
    }

    #[test]
    fn futures_polled_and_dropped_in_a_loop_leave_no_entry_and_the_set_idle() {
        let set = PortSet::<u8>::new();
        let _chan = set.chan();
        for _ in 0..size(1000, 20) {
            let mut one = set.recv_async();
            let mut two = set.recv_async();
            assert!(pending(&mut one) && pending(&mut two));
            assert_eq!(sleepers(&set), 2);
            drop(one);
            assert_eq!(word(&set), SLEEPING, "two still waits");
            drop(two);
        }
        assert_eq!(sleepers(&set), 0);
        assert_eq!(word(&set), IDLE, "pushes need not lock");
    }

    #[test]
    fn a_push_takes_the_entries_of_forgotten_futures() {
        let set = PortSet::new();
        let chan = set.chan();
        // Forgotten: `ManuallyDrop` until the end rather than `mem::forget` only so that Miri's
        // leak check stays quiet.
        let mut forgotten: Vec<_> = (0..3)
            .map(|_| ManuallyDrop::new(set.recv_async()))
            .collect();
        for future in &mut forgotten {
            assert!(pending(&mut **future));
        }
        assert_eq!(sleepers(&set), 3, "each left its entry");
        chan.send(1u8).unwrap();
        assert_eq!(sleepers(&set), 0, "woken once and dropped");
        assert_eq!(set.try_recv().unwrap(), 1);
        assert_eq!(word(&set), IDLE);
        for future in &mut forgotten {
            // SAFETY: each is dropped once, here, and not used again.
            unsafe { ManuallyDrop::drop(future) };
        }
    }

    #[test]
    fn a_thread_timing_out_takes_back_only_its_own_entry() {
        let set = PortSet::<u8>::new();
        let _chan = set.chan();
        let mut waiting = set.recv_async();
        assert!(pending(&mut waiting));
        assert!(set.recv_timeout(Duration::from_millis(1)).is_err());
        assert_eq!(sleepers(&set), 1);
        assert_eq!(word(&set), SLEEPING);
        drop(waiting);
        assert_eq!((sleepers(&set), word(&set)), (0, IDLE));
    }

    /// Scales a test size down under Miri.
    const fn size(normal: usize, miri: usize) -> usize {
        if cfg!(miri) { miri } else { normal }
    }
}

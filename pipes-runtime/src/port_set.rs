//! Port sets: many stream ports of one message type, received from as one, at a cost per
//! message that does not grow with the number of ports (the 2012 set called an O(n) select per
//! receive, which is where it broke down).
//!
//! A [`PortSet`] holds [`Port`]s; a receive takes the next message from any of them.
//! [`PortSet::chan`] makes a new stream whose port joins the set and returns its chan, which
//! is the usual way to fan many producers in; [`PortSet::add`] adds a port made elsewhere.
//! Receiving fails only once every chan is dropped and every message taken, so a set is an
//! iterator over all its ports' messages.
//!
//! ```
//! # use pipes_runtime as pipes;
//! let set = pipes::PortSet::new();
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
//! # When to use a port set
//!
//! - Fan-in: many producers, one consumer, messages of one type, no order needed across
//!   producers. Each producer gets its own chan (`set.chan()`), so sends never contend.
//! - A dynamic set of streams: ports join with [`PortSet::add`] and leave when their chans
//!   are dropped and drained.
//! - If messages from different producers must arrive in the order they were sent, use a
//!   [`SharedChan`](crate::SharedChan); to wait on a few endpoints of different types or
//!   protocols, use [select](mod@crate::select) (a set can be one of them).
//!
//! # Order and fairness
//!
//! Messages from one chan arrive in the order they were sent; the order across chans is not
//! kept (use a [`SharedChan`](crate::SharedChan) for that). Ports are served in turns of up
//! to 32 messages, round-robin among the ports that have messages, so a port that is always
//! busy cannot starve the others: every ready port is served within one round.
//!
//! # Receiving
//!
//! A set is received from through `&self`, on one thread at a time (it is `Send` when the
//! message type is, never `Sync`):
//! - [`PortSet::recv`] blocks; [`PortSet::try_recv`] never blocks; [`PortSet::recv_timeout`]
//!   and [`PortSet::recv_deadline`] block for a while; [`PortSet::iter`] (also `for message
//!   in &set`) blocks for each message.
//! - [`PortSet::recv_async`] (on `&mut self`) is a [`PortSetRecvFuture`] future for any executor,
//!   cancel-safe, and `Send` when the messages are. Several tasks on one thread sharing an
//!   `Rc<PortSet>` wait with an async select over the set
//!   (`selecti_async([&*set as &dyn Selectable])`), then `try_recv`.
//! - A set takes part in [select](mod@crate::select) beside other endpoints: `&PortSet` is a
//!   [`Recv`] endpoint, and a set is ready when a receive would not block.
//!
//! ```
//! # use pipes_runtime as pipes;
//! let set = pipes::PortSet::new();
//! let (port, chan) = pipes::stream();
//! set.add(port);
//! let other = set.chan();
//! chan.send("from the added port").unwrap();
//! other.send("from the set's own chan").unwrap();
//! let mut got = vec![set.recv().unwrap(), set.recv().unwrap()];
//! got.sort();
//! assert_eq!(got, ["from the added port", "from the set's own chan"]);
//! assert!(set.try_recv().is_err());
//! ```
//!
//! # Costs
//!
//! A receive costs the same with 1 port or 10,000: it takes the next message of the port being
//! served, from the batch its stream already published, and looks at the set's shared list of
//! woken ports once a turn. A port that runs dry is watched: the next send on it queues the
//! port on that list (one lock-free push) and wakes the set if it sleeps. A waiting receive
//! lingers a moment on the port it just emptied, then spins and parks as every receive does
//! (see [`spin`](mod@crate::spin)).

// Implementation: how it stays flat.
//
// Every port is, at any moment, in exactly one of four places:
// - *served*: the set takes messages from its lane, up to `BATCH` in one turn;
// - on the set's *local ready list* (a FIFO): its lane may hold a message or a hang-up;
// - *queued* on the shared `ReadyList`: a sender woke it, or it was just added;
// - *watched*: a `Waiter::Ready` for it sits in its lane's word (or a sender has just
//   swapped it out and is about to queue it).
//
// A receive takes the next message of the served port: from the batch its lane published,
// without a write to shared memory. When the turn is over the port goes to the back of the
// local list, behind the ports woken meanwhile, and the front one is served next. A port that
// runs dry during its turn goes to the back too, unwatched: it is likely busy, and looking at it
// again next round costs a load, where a watch costs a write its sender would have to swap
// out and queue. A port found dry at the start of its turn is watched. A sender that swaps a
// watching waiter out pushes it on the shared `ReadyList` (lock-free) and, if the set sleeps,
// wakes whoever waits on it. `PortSet::add` queues a new port the same way, so a waiter
// learns of it as of any woken port. So a receive touches one port and, once a turn, the two
// lists, whatever their size; and because ports are served from a FIFO and woken ports join
// at the back, every ready port is served within one round of turns: no port is starved by
// ports that are always ready. Each chan's messages arrive in order; the order across chans
// is not kept (as in 2012).

// Who waits.
//
// Only the set's own thread receives (the set is not `Sync`), but several waits can be under
// way there at once: pending async selects over `&set` (of several tasks, or two joined in
// one task), a pending future forgotten with `mem::forget` (a `PortSet::recv_async` too: it
// borrows the set exclusively only while it lives), and beside them a thread blocked in `recv`
// or a select, or one `recv_async` future. Each registers an entry of its own with the ready
// list (a *sleeper*), the push that ends the set's sleep wakes all of them, and each takes back
// only its own entry, so no waiter's leaving can end another's wait; the ready list's docs give
// the protocol and why no wake is lost.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::ops::Deref;
use std::panic::AssertUnwindSafe;
use std::pin::Pin;
use std::task::Context;
use std::time::{Duration, Instant};

use crate::endpoint::Recv;
use crate::endpoint::sealed::Sealed;
use crate::error::{Cause, RecvError, RecvTimeoutError, TryRecvError};
use crate::ready_list::Armed;
use crate::select::Selectable;
use crate::spin::{Chase, linger, spin_until};
use crate::stream::{Chan, Port, stream};
use crate::sync::{Arc, AtomicPtr};
use crate::take::Take;
use crate::target::{SetTarget, Target};
use crate::wait::Displaced;
use crate::waiter::{IDLE, ReadyList, Waiter, word_of};

/// How long a blocking receive lingers on the one port it just emptied, when no other port is
/// ready, before it watches that port and waits: a sender sending flat out refills a lane
/// within this, and a watch costs a write its sender must swap out and queue, then a wake.
const LINGER: Duration = Duration::from_nanos(1500);

/// Messages a port gives in one turn before it goes to the back of the ready list: enough that
/// a busy port is served from its lane's batch without a look at shared words, few enough that
/// the others wait at most one round of such turns.
const BATCH: usize = 32;

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
    ///
    /// A waiter left by a select before the port joined the set is displaced: it goes to
    /// `later`, woken once the caller has let go of the set's state (a task's `Waker` is user
    /// code, which may use the set).
    fn watch(&mut self, later: &mut Later<T>) -> bool {
        let mut displaced = Displaced::none();
        self.watched = self.port.watch(&self.waiter, &mut displaced);
        if displaced.is_some() {
            later.displaced.push(displaced);
        }
        self.watched
    }
}

/// What the set lets go of only once its state's borrow ends, since dropping it may run user
/// code that uses the set: a displaced task's `Waker`, and a hung-up port (its drop drops what
/// its chan sent after the set stopped looking). Kept in the state, not built per receive: two
/// empty `Vec`s dropped on every receive made msgsend through a set a quarter slower.
struct Later<T> {
    displaced: Vec<Displaced>,
    gone: Vec<Member<T>>,
}

impl<T> Later<T> {
    fn new() -> Self {
        Later {
            displaced: Vec::new(),
            gone: Vec::new(),
        }
    }

    fn is_empty(&self) -> bool {
        self.displaced.is_empty() && self.gone.is_empty()
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
    /// The port being served, and how many messages it has given in this turn. Not on the
    /// ready list and not watched.
    current: Option<(usize, usize)>,
    /// The local ready list (see the module docs).
    ready: VecDeque<usize>,
    /// An empty vector to swap with the shared list's, kept to reuse its allocation.
    spare: Vec<usize>,
    /// What the current borrow lets go of once it ends.
    later: Later<T>,
    /// A message a receive had taken when letting go of `later` panicked (a waker it
    /// displaced, a port's drop): the next receive's, before any other.
    stash: Option<T>,
}

impl<T> Local<T> {
    /// Takes the port at `index` out of the set (it hung up and is drained); its drop waits in
    /// `later`.
    fn remove(&mut self, index: usize) {
        if let Some(member) = self.members[index].take() {
            self.later.gone.push(member);
        }
        self.free.push(index);
        self.live -= 1;
    }
}

/// What one look at the set found.
enum Poll<T> {
    Message(T),
    Empty,
    Closed,
}

/// Many [`Port`]s of one message type treated as one: a receive takes the next message from any
/// of them. Messages from one chan arrive in order; a port with messages is never starved by
/// others (ports are served in turns of up to 32 messages, round-robin); a receive costs the
/// same with 1 port or 10,000. Receiving fails only once every chan
/// is dropped and every message taken. `Send` when `T` is, not `Sync`: one thread receives.
pub struct PortSet<T> {
    local: RefCell<Local<T>>,
    list: Arc<ReadyList>,
    /// Whether blocking receives keep catching up with one port's sender sending flat out.
    chase: Chase,
}

fn closed() -> RecvError {
    RecvError::new("port_set", "Open", Cause::Closed)
}

impl<T> PortSet<T> {
    /// An empty set. Receiving from it fails until a port is added.
    pub fn new() -> Self {
        PortSet {
            local: RefCell::new(Local {
                members: Vec::new(),
                free: Vec::new(),
                live: 0,
                current: None,
                ready: VecDeque::new(),
                spare: Vec::new(),
                later: Later::new(),
                stash: None,
            }),
            list: Arc::new(ReadyList::new()),
            chase: Chase::default(),
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
                next: AtomicPtr::new(word_of(IDLE)),
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
            match self.poll(true) {
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
        match self.poll(false) {
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
            match self.poll(!timed_out) {
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
    /// in the set: a message that arrived meanwhile is the next one received.
    ///
    /// It borrows the set mutably, as [`Port::recv_async`] borrows its port, and so it is
    /// `Send` when `T` is: `tokio::spawn(async move { set.recv_async().await })` runs on a
    /// multi-threaded executor. The set is not `Sync` (one thread serves its ports), so a
    /// future holding `&PortSet` could never be `Send`; the exclusive borrow is what says
    /// nothing else receives from the set, adds to it or selects on it while the future lives.
    ///
    /// Other waits may still be registered with the set beside this one: async selects over
    /// `&set` left pending before, and a future forgotten with `mem::forget`, whose
    /// registration the next message wakes once and drops. A message wakes every one of them,
    /// and each takes back only its own registration.
    pub fn recv_async(&mut self) -> PortSetRecvFuture<'_, T> {
        PortSetRecvFuture::new(self)
    }

    /// An iterator over messages that blocks for each and ends when every chan is gone.
    pub fn iter(&self) -> PortSetIter<'_, T> {
        PortSetIter { set: self }
    }

    /// Serves the local ready list until a message turns up or the list runs dry. O(1) per
    /// message: each port popped either yields one, or is watched, or leaves the set.
    fn poll(&self, linger: bool) -> Poll<T> {
        let mut local = self.local.borrow_mut();
        let polled = self.serve(&mut local, linger);
        if local.later.is_empty() {
            return polled;
        }
        let later = std::mem::replace(&mut local.later, Later::new());
        drop(local);
        // Displaced wakers and ports' drops are user code: if one panics, the panic goes on to
        // the caller, and the message taken stays for the next receive.
        match std::panic::catch_unwind(AssertUnwindSafe(|| drop(later))) {
            Ok(()) => polled,
            Err(panic) => {
                if let Poll::Message(message) = polled {
                    self.stash(message);
                }
                std::panic::resume_unwind(panic)
            }
        }
    }

    /// Keeps a message taken by a receive that panics before it returns it (user code it ran
    /// after the take panicked): the next receive's, before any other.
    fn stash(&self, message: T) {
        let mut local = self.local.borrow_mut();
        // A receive takes the stash first, so it was empty when this one took a message.
        debug_assert!(local.stash.is_none());
        local.stash = Some(message);
    }

    /// Runs `f` on the set's state, then drops what it left in [`Later`] once the borrow has
    /// ended.
    #[inline]
    fn with_local<R>(&self, f: impl FnOnce(&mut Local<T>) -> R) -> R {
        let mut local = self.local.borrow_mut();
        let result = f(&mut local);
        if !local.later.is_empty() {
            let later = std::mem::replace(&mut local.later, Later::new());
            drop(local);
            drop(later);
        }
        result
    }

    /// [`PortSet::poll`] on the borrowed state.
    #[inline]
    fn serve(&self, local: &mut Local<T>, linger: bool) -> Poll<T> {
        // Looked at before taken: `take` would write the empty option back on every receive.
        if local.stash.is_some()
            && let Some(message) = local.stash.take()
        {
            return Poll::Message(message);
        }
        loop {
            if let Some((index, served)) = local.current {
                let member = local.members[index]
                    .as_mut()
                    .expect("the port being served is in the set");
                match member.port.take_next() {
                    Take::Message(message) => {
                        if served + 1 == BATCH {
                            // Its turn is over: to the back, behind the ports woken meanwhile.
                            local.current = None;
                            self.list.drain(&mut local.ready, &mut local.spare);
                            local.ready.push_back(index);
                        } else {
                            local.current = Some((index, served + 1));
                        }
                        return Poll::Message(message);
                    }
                    Take::Empty => {
                        local.current = None;
                        let alone = local.ready.is_empty() && !self.list.is_pending();
                        // The one busy port ran dry in its turn: if its sender keeps sending a
                        // moment later, let it run ahead (see `Chase`), unless another port
                        // turned up meanwhile.
                        if served > 0
                            && linger
                            && alone
                            && self.chase.caught_up(|| {
                                !matches!(member.port.look(), Take::Empty)
                                    && !self.list.is_pending()
                            })
                        {
                            local.current = Some((index, 0));
                            continue;
                        }
                        // A port that ran dry in its turn is likely busy: it goes to the back
                        // unwatched and is looked at again next round, which costs a load
                        // where a watch costs a write its sender would have to take back. A
                        // port found dry at the start of its turn is watched, unless a wait
                        // would come next and its sender sends within a moment.
                        if served == 0 && linger && alone && self.lingered(&member.port) {
                            local.current = Some((index, 0));
                            continue;
                        }
                        if served > 0 || !member.watch(&mut local.later) {
                            self.list.drain(&mut local.ready, &mut local.spare);
                            local.ready.push_back(index);
                        }
                    }
                    Take::Closed => {
                        local.current = None;
                        local.remove(index);
                    }
                }
            }
            // Woken ports join the back first, so ports that stay ready cannot starve them.
            self.list.drain(&mut local.ready, &mut local.spare);
            let Some(index) = local.ready.pop_front() else {
                return if local.live == 0 {
                    Poll::Closed
                } else {
                    Poll::Empty
                };
            };
            // On the list, so not watched: a sender swapped the waiter out, or none was left.
            local.members[index]
                .as_mut()
                .expect("a port on the ready list is in the set")
                .watched = false;
            local.current = Some((index, 0));
        }
    }

    /// Spins up to [`LINGER`] until `port` has something to receive; gives up early when a
    /// sender queues another port.
    fn lingered(&self, port: &Port<T>) -> bool {
        linger(LINGER, || {
            !matches!(port.look(), Take::Empty) || self.list.is_pending()
        }) && !matches!(port.look(), Take::Empty)
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
///
/// `Send` when `T` is: it holds the set's exclusive borrow (see [`PortSet::recv_async`]).
#[must_use = "a future does nothing unless polled"]
///
/// `B` is the borrow: `&mut PortSet<T>` for `recv_async`, `&PortSet<T>` for a borrowed set's
/// [`Recv::recv_async`] (not `Send`; several may be pending on one set, each with its own
/// registration).
pub struct PortSetRecvFuture<'a, T, B: Deref<Target = PortSet<T>> = &'a mut PortSet<T>> {
    /// Exclusive for `recv_async`, so that this future is the set's one user while it lives,
    /// whatever thread polls it (`&mut PortSet<T>` is `Send` when `PortSet<T>` is, `&PortSet<T>`
    /// never).
    set: B,
    /// The task waiter this future registered with the set's ready list, while it may still be
    /// there; its address is the registration's identity.
    waiter: Option<Arc<Waiter>>,
    _borrow: PhantomData<&'a ()>,
}

impl<'a, T, B: Deref<Target = PortSet<T>>> PortSetRecvFuture<'a, T, B> {
    fn new(set: B) -> Self {
        PortSetRecvFuture {
            set,
            waiter: None,
            _borrow: PhantomData,
        }
    }

    /// Takes this future's registration back (a push may have taken it already).
    fn leave(&mut self) {
        if let Some(waiter) = self.waiter.take() {
            self.set.list.disarm(&waiter);
            Waiter::recycle(waiter);
        }
    }
}

// Nothing is pinned: the ready list holds the waiter's address, not the future's.
impl<T, B: Deref<Target = PortSet<T>>> Unpin for PortSetRecvFuture<'_, T, B> {}

impl<T, B: Deref<Target = PortSet<T>>> Future for PortSetRecvFuture<'_, T, B> {
    type Output = Result<T, RecvError>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> std::task::Poll<Self::Output> {
        let this = self.get_mut();
        loop {
            let resolved = match this.set.poll(false) {
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
            // Letting go of the registration drops the task's old waker, user code: if its drop
            // panics, the message taken stays for the next receive.
            if let Err(panic) = std::panic::catch_unwind(AssertUnwindSafe(|| this.leave())) {
                if let Ok(message) = resolved {
                    this.set.stash(message);
                }
                std::panic::resume_unwind(panic);
            }
            return std::task::Poll::Ready(resolved);
        }
    }
}

impl<T, B: Deref<Target = PortSet<T>>> Drop for PortSetRecvFuture<'_, T, B> {
    fn drop(&mut self) {
        // Queued ports stay queued for the set's next receive; only the registration goes.
        self.leave();
    }
}

impl<T, B: Deref<Target = PortSet<T>>> fmt::Debug for PortSetRecvFuture<'_, T, B> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortSetRecvFuture")
            .field("registered", &self.waiter.is_some())
            .finish_non_exhaustive()
    }
}

impl<T> SetTarget for PortSet<T> {
    /// Serves the local list as a receive would, without receiving: a port whose packet is
    /// `FULL` stays at the front (the receive takes it), a hung-up port leaves the set, an empty
    /// one is watched.
    fn settle(&self) -> bool {
        self.with_local(|local| {
            // A stashed message is the next receive's.
            if local.stash.is_some() {
                return true;
            }
            // The port being served is looked at first, as a receive would.
            if let Some((index, _)) = local.current.take() {
                local.ready.push_front(index);
            }
            self.list.drain(&mut local.ready, &mut local.spare);
            while let Some(&index) = local.ready.front() {
                let member = local.members[index]
                    .as_mut()
                    .expect("a port on the ready list is in the set");
                member.watched = false;
                match member.port.look() {
                    Take::Message(()) => return true,
                    Take::Closed => {
                        local.ready.pop_front();
                        local.remove(index);
                    }
                    Take::Empty => {
                        local.ready.pop_front();
                        if !member.watch(&mut local.later) {
                            // Filled or hung up just now: look again.
                            local.ready.push_front(index);
                        }
                    }
                }
            }
            local.live == 0
        })
    }

    fn ready_list(&self) -> &ReadyList {
        &self.list
    }
}

impl<T> crate::select::sealed::Sealed for PortSet<T> {}

impl<T> Selectable for PortSet<T> {
    fn __select_target(&self) -> Target<'_> {
        Target::set(self)
    }
}

/// A borrowed port set is a receiving endpoint for select, as a borrowed [`Port`] is: it is not
/// consumed by a receive, so the endpoint handed back is the same borrow.
impl<T> Sealed for &PortSet<T> {}

impl<'a, T> Recv for &'a PortSet<T> {
    type Message = T;
    type Future = PortSetRecvFuture<'a, T, &'a PortSet<T>>;

    fn recv(self) -> Result<T, RecvError> {
        PortSet::recv(self)
    }

    fn try_recv(self) -> Result<T, TryRecvError<Self>> {
        PortSet::try_recv(self).map_err(|error| error.map(|()| self))
    }

    fn recv_timeout(self, timeout: Duration) -> Result<T, RecvTimeoutError<Self>> {
        PortSet::recv_timeout(self, timeout).map_err(|error| error.map(|()| self))
    }

    /// Borrows the set shared, so unlike [`PortSet::recv_async`] the future is not `Send`.
    fn recv_async(this: Self) -> PortSetRecvFuture<'a, T, &'a PortSet<T>> {
        PortSetRecvFuture::new(this)
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
                // If a sender took the waiter it owns it now, as above.
                member.port.unwatch(&member.waiter);
                member.watched = false;
            }
        }
        self.list.close();
        // The ports drop as if they lay where the set lies: a set that is a field of a message
        // being dropped has their disposals queued (`drop_queue.rs`), so a chain of sets in
        // messages does not recurse once per link. Their message type is the set's, so what
        // they hold lives as long as the message the set lies in.
        let at = (&raw const *self).cast::<u8>();
        let local = self.local.get_mut();
        let gone = local.later.gone.drain(..);
        for member in local.members.drain(..).flatten().chain(gone) {
            member.port.drop_as_if_at(at);
        }
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
    use crate::sync::Ordering;
    use crate::waiter::SLEEPING;
    use std::mem::ManuallyDrop;
    use std::task::Waker;

    fn sleepers<T>(set: &PortSet<T>) -> usize {
        set.list.sleepers.lock().len()
    }

    fn word<T>(set: &PortSet<T>) -> usize {
        set.list.head.load(Ordering::Relaxed).addr()
    }

    fn pending<F: Future + Unpin>(future: &mut F) -> bool {
        let mut cx = Context::from_waker(Waker::noop());
        Pin::new(future).poll(&mut cx).is_pending()
    }

    /// Async selects over `&set`: the one form of several async waits pending on one set at
    /// once (a pending `recv_async` borrows the set exclusively).
    fn select(set: &PortSet<u8>) -> crate::select::SelectiFuture<[&dyn Selectable; 1]> {
        crate::select::selecti_async([set as &dyn Selectable])
    }

    #[test]
    fn futures_polled_and_dropped_in_a_loop_leave_no_entry_and_the_set_idle() {
        let mut set = PortSet::<u8>::new();
        let _chan = set.chan();
        for _ in 0..size(1000, 20) {
            let mut receive = set.recv_async();
            assert!(pending(&mut receive));
            assert_eq!(sleepers(receive.set), 1);
            drop(receive);
            assert_eq!((sleepers(&set), word(&set)), (0, IDLE));
            let mut one = select(&set);
            let mut two = select(&set);
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
        let mut set = PortSet::new();
        let chan = set.chan();
        // A forgotten receive: its exclusive borrow ends with `mem::forget`, its registration
        // stays. Boxed and kept out of sight rather than forgotten only so that Miri's leak
        // check stays quiet: it is never touched again (its borrow of the set is stale).
        let mut receive = Box::new(set.recv_async());
        assert!(pending(&mut *receive));
        // A pointer to `()`, so that no borrow of the set is kept alive through its type.
        let forgotten = Box::into_raw(receive).cast::<()>();
        // Forgotten selects beside it: `ManuallyDrop` until the end rather than
        // `mem::forget`, for the same reason.
        let mut selects: Vec<_> = (0..2).map(|_| ManuallyDrop::new(select(&set))).collect();
        for future in &mut selects {
            assert!(pending(&mut **future));
        }
        assert_eq!(sleepers(&set), 3, "each left its entry");
        chan.send(1u8).unwrap();
        assert_eq!(sleepers(&set), 0, "woken once and dropped");
        assert_eq!(set.try_recv().unwrap(), 1);
        assert_eq!(word(&set), IDLE);
        for future in &mut selects {
            // SAFETY: each is dropped once, here, and not used again.
            unsafe { ManuallyDrop::drop(future) };
        }
        // The forgotten receive's own reference to its waiter, freed without touching the
        // future (whose borrow of the set is stale): only its waiter field is read.
        // SAFETY: `forgotten` came from `Box::into_raw` above and is not used again; the
        // box's memory is freed without running the future's drop (the `ManuallyDrop`), and
        // its waiter is taken out by value, reading nothing through the stale borrow.
        unsafe {
            let forgotten =
                Box::from_raw(forgotten.cast::<ManuallyDrop<PortSetRecvFuture<'_, u8>>>());
            drop(std::ptr::read(&forgotten.waiter));
        }
    }

    #[test]
    fn a_thread_timing_out_takes_back_only_its_own_entry() {
        let set = PortSet::<u8>::new();
        let _chan = set.chan();
        let mut waiting = select(&set);
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

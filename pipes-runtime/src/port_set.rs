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
//! out pushes the port's index on the shared [`ReadyList`] and unparks the set's thread; the set
//! moves those indices to the back of its local list before every receive. So a receive touches
//! one port and the two lists, whatever their size; and because ports are served from a FIFO and
//! woken ports join at the back, every ready port is served within one round of the others: no
//! port is starved by ports that are always ready.
//!
//! Ports are never looked at twice for one message: a watched port is not polled, a listed port
//! is not watched.

use std::cell::RefCell;
use std::collections::VecDeque;
use std::fmt;
use std::mem;
use std::time::{Duration, Instant};

use crate::error::{RecvError, RecvTimeoutError, TryRecvError};
use crate::spin::spin_until;
use crate::stream::{Chan, Port, stream};
use crate::sync::{Arc, AtomicBool, Mutex, Ordering, park_until, thread};
use crate::waiter::Waiter;

/// The ports of a set that senders found watched and woke: shared by the set and the waiters it
/// leaves in its ports' packets. Written by senders, emptied by the set's thread.
#[derive(Debug)]
pub(crate) struct ReadyList {
    inner: Mutex<Queued>,
    /// Set when `inner.ports` may be non-empty: lets the set look without taking the lock.
    pending: AtomicBool,
}

#[derive(Debug)]
struct Queued {
    /// Indices of woken ports, in the order they were woken.
    ports: Vec<usize>,
    /// The set's thread, when it is about to park with nothing queued: the next push wakes it.
    sleeper: Option<thread::Thread>,
}

impl ReadyList {
    fn new() -> Self {
        ReadyList {
            inner: Mutex::new(Queued {
                ports: Vec::new(),
                sleeper: None,
            }),
            pending: AtomicBool::new(false),
        }
    }

    /// Queues `port` as ready and wakes the set's thread if it sleeps. Called by the sender that
    /// swapped the port's waiter out of its packet, so each watch queues its port once.
    pub(crate) fn push(&self, port: usize) {
        let sleeper = {
            let mut queued = self.inner.lock();
            queued.ports.push(port);
            self.pending.store(true, Ordering::Release);
            queued.sleeper.take()
        };
        // Unparked outside the lock, so other senders do not wait on the syscall.
        if let Some(thread) = sleeper {
            thread.unpark();
        }
    }

    fn is_pending(&self) -> bool {
        self.pending.load(Ordering::Acquire)
    }

    /// Moves every queued port to the back of `local`. `spare` is an empty vector swapped in
    /// under the lock, so the lock is held for O(1) and no allocation happens in steady state.
    fn drain(&self, local: &mut VecDeque<usize>, spare: &mut Vec<usize>) {
        if !self.is_pending() {
            return;
        }
        {
            let mut queued = self.inner.lock();
            self.pending.store(false, Ordering::Relaxed);
            mem::swap(&mut queued.ports, spare);
        }
        local.extend(spare.drain(..));
    }

    /// Arranges for the next push to unpark this thread. Returns `false` (and arranges nothing)
    /// when a port is already queued, so the caller must not park.
    fn arm(&self) -> bool {
        let mut queued = self.inner.lock();
        if !queued.ports.is_empty() {
            return false;
        }
        queued.sleeper = Some(thread::current());
        true
    }
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
            Err(found) => {
                debug_assert!(crate::packet::is_settled(found), "only the set watches");
                false
            }
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
        if !self.list.arm() {
            return true;
        }
        match deadline {
            None => {
                thread::park();
                true
            }
            Some(deadline) => park_until(deadline),
        }
    }
}

impl<T> Default for PortSet<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for PortSet<T> {
    /// Takes every watching waiter back before the ports drop, as a port must not be dropped
    /// with a waiter in its packet. A waiter a sender already swapped out is the sender's: it
    /// queues the port on the list, which lives on in that waiter until the sender is done.
    fn drop(&mut self) {
        for member in self.local.get_mut().members.iter_mut().flatten() {
            if member.watched {
                // An `Err` means a sender owns the waiter now, as above.
                let _ = member.port.state_word().unregister(&member.waiter);
                member.watched = false;
            }
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

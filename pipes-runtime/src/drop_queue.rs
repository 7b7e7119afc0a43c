//! Iterative drops: why dropping a receiving endpoint with a backlog behind it never recurses
//! once per message, and how a payload that panics in `Drop` is contained.
//!
//! In a protocol whose state loops on itself, each message carries the receiving endpoint of
//! the next packet. Dropping the first endpoint drops its message, which drops the next
//! endpoint, which drops its message ...: drop glue alone recurses once per unreceived message
//! and overflows the stack on a long backlog. This holds for any protocol (and for payloads that
//! carry endpoints), so it is solved here, under every [`RecvPacket`](crate::packet::RecvPacket),
//! not in generated code.
//!
//! # The trampoline
//!
//! A receiving endpoint dropped over a `FULL` packet *disposes* of the packet: it moves the
//! message out onto its own stack frame, frees the packet, then drops the message. While that
//! message is being dropped, this thread's [`DropQueue`] remembers the bytes the message
//! occupies. A receiving endpoint dropped *inside those bytes* (one of the message's own
//! fields, such as the endpoint for the next state) does not dispose of its packet there and
//! then: it pushes the packet (a type-erased pointer and the function that disposes of it) on the
//! queue and returns. The outermost disposal then pops and disposes until the queue is back where
//! it found it. A linear backlog thus runs in a loop at constant stack depth, with at most one
//! entry queued at a time; the queue's buffer is kept, so the steady state allocates nothing.
//!
//! # Why only inside the message's bytes
//!
//! Deferring a drop is sound only while everything the deferred value borrows stays alive until
//! the queue gets to it. An endpoint stored in the message's bytes is a field of the message, so
//! its payload type's lifetimes are the message's, which the endpoint being dropped keeps alive
//! until its drop returns, after the queue is drained. An endpoint dropped anywhere else (a local
//! of some `Drop` impl that the message's drop glue runs, or in a `Box` the message owns) may
//! carry a payload that borrows a local of that very `Drop` impl, which is gone by the time the
//! queue would get to it. Such an endpoint disposes of its packet at once, as a nested run of
//! its own (it queues and drains only its own message's fields). So a chain that goes through a
//! heap indirection the user built (a payload holding a `Box` that holds the next endpoint)
//! recurses per link; the chains a protocol itself builds (the next endpoint is a field of the
//! message) never do. Nor do those through the runtime's own containers: a port set, which
//! owns its ports on the heap, drops them as if they lay where the set lies (their message type
//! is the set's, so what they hold lives as long as the set's place does), and a receive
//! future drops its endpoint in place. A session buffer's messages are not in an endpoint's
//! bytes either: an endpoint that takes its unreceived message out boxes it to queue it
//! (`drop_held`, an allocation only there), and a buffer whose last share lies in a message
//! being dropped is itself queued, then freed as a message is (`drop_freed`).
//!
//! # A sender that keeps sending
//!
//! An endpoint dropped while its sender is still sending must reach the packet the sender is
//! filling (and close it) before the sender learns that the receiver is gone: until then every
//! message sent adds a packet to the chain being dropped. The drop ends once it outruns the
//! sender, so its cost per message matters. Here it is a load, a free and a queue round trip
//! per message, about 1.5-2x a receive; the runtime's own `Port` drops with a receive loop
//! (`stream.rs`) and falls back to this only for the packet it finds filled behind it. Lanes
//! (a closed flag the sender reads on every send) will end the chase outright.
//!
//! # Panics
//!
//! Every disposal frees its packet before it drops the message, and each one runs under
//! `catch_unwind`: a payload whose `Drop` panics leaks nothing, the rest of the backlog (drop glue
//! goes on to the message's other fields while unwinding, which queues the next endpoint) is still
//! dropped, and once the queue is drained the first panic is resumed in the caller of the drop.
//! Later panics are dropped. If the thread is already unwinding, the first panic is dropped too:
//! resuming it would be a panic while panicking, which aborts.
//!
//! # No thread-local
//!
//! In a thread-local destructor that runs after this thread's queue is gone, a disposal drops the
//! message directly (recursing over a backlog, as drop glue would), and never panics for want of
//! the queue. Under loom, which runs model threads on one OS thread, disposals are always direct.

// Under loom every disposal is direct, so the queue's machinery goes unused.
#![cfg_attr(loom, allow(dead_code))]

use std::cell::{Cell, RefCell};
use std::mem::{self, ManuallyDrop};
use std::ptr::NonNull;

use crate::panics::Panics;

/// A packet whose receiver was dropped while it held a message, waiting to be disposed of.
#[derive(Clone, Copy)]
struct Deferred {
    packet: NonNull<()>,
    dispose: Dispose,
}

/// Moves the message out of the packet, frees the packet and drops the message, the latter
/// through [`DropQueue::drop_within`] when given the queue.
///
/// # Safety
/// The pointer is the packet this function was paired with, the caller owns it outright (both
/// endpoints have made their final transitions), and it holds a message.
pub(crate) type Dispose = unsafe fn(NonNull<()>, Option<&DropQueue>);

/// A thread's queue of packets to dispose of (the bytes of the message being dropped are in
/// [`WITHIN`]).
pub(crate) struct DropQueue {
    queued: RefCell<Vec<Deferred>>,
}

/// Entries the queue's buffer keeps between runs: enough for any message with a few hundred
/// endpoints among its fields, without holding on to the buffer of a one-off wide drop.
const KEPT: usize = 256;

#[cfg(not(loom))]
thread_local! {
    static QUEUE: DropQueue = const {
        DropQueue {
            queued: RefCell::new(Vec::new()),
        }
    };
}

thread_local! {
    /// `start..end` of the message this thread's innermost disposal is dropping; empty outside
    /// one. Apart from [`QUEUE`] because it needs no destructor: it is read on every session's
    /// end (`drop_freed`), and a thread-local without one is a plain load, with no check that
    /// it is still alive (it always is).
    static WITHIN: Cell<(usize, usize)> = const { Cell::new((0, 0)) };
}

/// Whether `at` lies inside the message this thread is dropping (never under loom, whose
/// disposals are direct).
fn within(at: *const u8) -> bool {
    if cfg!(loom) {
        return false;
    }
    let (start, end) = WITHIN.with(Cell::get);
    (start..end).contains(&at.addr())
}

/// Disposes of a packet whose receiving endpoint, at `endpoint`, is being dropped over a
/// message, or queues it if the endpoint is a field of a message this thread is dropping.
///
/// # Safety
/// As for [`Dispose`]: `dispose` is the function for this packet's type, the caller owns the
/// packet, and the packet holds a message. `endpoint` is where the dropped endpoint lies, or
/// where a runtime container that owns it lies, if the endpoint's message type is one of the
/// container's type parameters.
pub(crate) unsafe fn dispose(endpoint: *const u8, packet: NonNull<()>, dispose: Dispose) {
    let deferred = Deferred { packet, dispose };
    #[cfg(not(loom))]
    if QUEUE
        .try_with(|queue| queue.defer_or_run(endpoint, deferred))
        .is_ok()
    {
        return;
    }
    #[cfg(loom)]
    let _ = endpoint;
    // SAFETY: the caller's promise, passed on; the closure above did not run, so this is the
    // packet's only disposal.
    unsafe { (deferred.dispose)(deferred.packet, None) };
}

impl DropQueue {
    /// Queues `deferred` if `endpoint` lies inside the message being dropped; otherwise runs
    /// it and everything it queues.
    fn defer_or_run(&self, endpoint: *const u8, deferred: Deferred) {
        if within(endpoint) {
            self.queued.borrow_mut().push(deferred);
            return;
        }
        // SAFETY: the entry is the caller's to dispose of, once (see `dispose`).
        self.run(|| unsafe { (deferred.dispose)(deferred.packet, Some(self)) });
    }

    /// Runs `first`, then disposes of everything it queued.
    fn run(&self, first: impl FnOnce()) {
        // A nested run (inside some other message's drop) leaves the entries below `mark` to
        // the run that queued them.
        let mark = self.queued.borrow().len();
        let mut panics = Panics::default();
        panics.catch(first);
        // One `catch_unwind` for the whole drain, entered again after a panic: each entry is
        // taken off before it is disposed of, so the drain goes on with the rest.
        while !panics.catch(|| {
            while let Some(deferred) = self.pop_above(mark) {
                // SAFETY: each entry was queued once, by an endpoint that owned the packet and
                // gave it up to us, with the function for its type.
                unsafe { (deferred.dispose)(deferred.packet, Some(self)) };
            }
        }) {}
        if mark == 0 {
            let mut queued = self.queued.borrow_mut();
            if queued.capacity() > KEPT {
                *queued = Vec::new();
            }
        }
        panics.resume();
    }

    fn pop_above(&self, mark: usize) -> Option<Deferred> {
        let mut queued = self.queued.borrow_mut();
        if queued.len() > mark {
            queued.pop()
        } else {
            None
        }
    }

    /// Drops `message`, queueing the packets of the receiving endpoints among its fields
    /// instead of disposing of them while it is dropped.
    pub(crate) fn drop_within<T>(&self, message: T) {
        let mut message = ManuallyDrop::new(message);
        let start = (&raw const message).addr();
        // SAFETY: dropped once, here; never used again.
        self.dropping(start, mem::size_of::<T>(), || unsafe {
            ManuallyDrop::drop(&mut message)
        });
    }

    /// Queues `block`, to be freed as a message by the run under way.
    fn queue_block<T>(&self, block: Box<T>) {
        self.queued.borrow_mut().push(Deferred {
            packet: NonNull::from(Box::leak(block)).cast(),
            dispose: free_block::<T>,
        });
    }

    /// Frees `block` as [`DropQueue::drop_within`] drops a message.
    fn free_within<T>(&self, block: Box<T>) {
        let start = (&raw const *block).addr();
        self.dropping(start, mem::size_of::<T>(), || drop(block));
    }

    /// Runs `drop`, which drops the `size` bytes at `start`, with those bytes as the message
    /// being dropped.
    fn dropping(&self, start: usize, size: usize, drop: impl FnOnce()) {
        let outer = WITHIN.with(|within| within.replace((start, start + size)));
        // Restores the outer message's bytes even if this drop panics: the outer drop glue
        // goes on dropping its other fields while unwinding.
        struct Restore((usize, usize));
        impl Drop for Restore {
            fn drop(&mut self) {
                WITHIN.with(|within| within.set(self.0));
            }
        }
        let _restore = Restore(outer);
        drop();
    }
}

/// Runs `f` with this thread's queue. Where the queue is gone (in a thread-local destructor)
/// and under loom, `f` is dropped unrun, and what it owns with it: directly.
fn with_queue(f: impl FnOnce(&DropQueue)) {
    #[cfg(not(loom))]
    let _ = QUEUE.try_with(f);
    #[cfg(loom)]
    drop(f);
}

/// Frees `block`, a heap block (a session buffer) whose last holder was the value at `holder`
/// (a share of it). Queued if `holder` lies inside a message being dropped, so a chain of
/// buffers, each freed by a share that lies in a message left in the one before, does not
/// recurse: the run frees it as a message, and the messages left in it drop through the queue
/// ([`drop_inside`]). Otherwise freed at once, with no run: every session's end comes here,
/// and a run cost it as much again (32 against 17 ns a session, benches/RESULTS.md); a message
/// left in a slot then gets a run of its own.
pub(crate) fn drop_freed<T>(holder: *const u8, block: Box<T>) {
    if within(holder) {
        with_queue(move |queue| queue.queue_block(block));
    } else {
        drop(block);
    }
}

/// Drops `message`, which lay at `at` inside a block [`drop_freed`] is freeing (a slot of a
/// session buffer): its endpoints are queued for the run freeing the block.
pub(crate) fn drop_inside<T>(at: *const u8, message: T) {
    with_queue(move |queue| {
        if within(at) {
            queue.drop_within(message);
        } else {
            queue.run(|| queue.drop_within(message));
        }
    });
}

/// Drops `message`, which the endpoint at `endpoint` held and took out of a buffer it shares
/// (a session's slot): boxed and queued if the endpoint lies inside a message being dropped, so
/// a chain of such endpoints does not recurse; otherwise dropped at once, under a run of its
/// own that queues the endpoints among its fields. Boxing costs an allocation, only for an
/// endpoint dropped over an unreceived message inside another unreceived message.
pub(crate) fn drop_held<T>(endpoint: *const u8, message: T) {
    with_queue(move |queue| {
        if within(endpoint) {
            queue.queue_block(Box::new(message));
        } else {
            queue.run(|| queue.drop_within(message));
        }
    });
}

/// The disposal of a block [`DropQueue::queue_block`] queued: frees it as a message.
///
/// # Safety
/// `packet` came from a `Box<T>` that `queue_block` leaked, and is disposed of once.
unsafe fn free_block<T>(packet: NonNull<()>, queue: Option<&DropQueue>) {
    // SAFETY: as the caller guarantees.
    let block = unsafe { Box::from_raw(packet.cast::<T>().as_ptr()) };
    match queue {
        Some(queue) => queue.free_within(block),
        None => drop(block),
    }
}

/// Drops a message under a queue if there is one, or directly.
pub(crate) fn drop_message<T>(message: T, queue: Option<&DropQueue>) {
    match queue {
        Some(queue) => queue.drop_within(message),
        None => drop(message),
    }
}

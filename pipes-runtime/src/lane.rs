//! The lane: one direction of a stream, a single-producer single-consumer queue of segments.
//!
//! A send writes the next slot and publishes the new tail with one swap of the lane's
//! [`StateWord`]; a receive reads the published tail once per batch (when it has taken
//! everything it knew of) and takes slots up to it without touching shared words at all. The
//! swap also tells the sender whether a receiver waits: the receiving side leaves its waiter in
//! the word (over the word of the index it has reached, see `wait.rs`), and a swap that takes a
//! waiter out wakes it. Segments the receiver is done with go back to the sender as its spare,
//! so a stream whose receiver keeps up allocates nothing. A lane starts with a 2 KiB segment in
//! its own allocation (one `malloc` a lane); when the sender finds no spare (the receiver is a
//! segment or more behind), it allocates one twice the size of the last, up to 32 KiB, so a
//! backlog costs a `malloc` per 4096 `u64`s, not per 256. A lane that once held such a backlog
//! keeps its two segments (up to 64 KiB) until it is dropped, as a `VecDeque` keeps its
//! capacity.
//!
//! # Words
//!
//! | word                 | meaning                                                      |
//! |----------------------|--------------------------------------------------------------|
//! | `index << 2 \| 1`    | the sender has published every message before `index`       |
//! | `index << 2 \| 3`    | the same, and the sender is gone (no message at `index`)     |
//! | [`RX_CLOSED`]        | the receiver is gone; only the sender ever sees it           |
//! | a waiter word        | the receiving side waits (the tail is the receiver's `head`) |
//!
//! Indices wrap at 2^(bits - 2); only equality is ever asked of them.
//!
//! # Closing and freeing
//!
//! The receiver's drop swaps in [`RX_CLOSED`]: the word it takes out says how far the sender had
//! published, and it drops exactly those messages, in a loop. A send that takes `RX_CLOSED` out
//! knows its message was never seen and hands it back. The sender's drop swaps in the hung-up
//! word; the receiver takes what came before it and then reports the lane closed. Each end then
//! lets go of the lane, and the second to do so frees it (`ends` counts them). So a receiver's
//! drop never chases a sender that keeps sending: it is over after one pass over what was there.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::cell::Cell;
use std::marker::PhantomData;
use std::mem::{ManuallyDrop, MaybeUninit};
use std::ptr::{self, NonNull};

use crossbeam_utils::CachePadded;

use crate::drop_queue::{self, DropQueue};
use crate::error::Cause;
use crate::mpsc::SharedQueue;
use crate::panics::{Panics, deferring};
use crate::spin::Chase;
use crate::sync::{Arc, AtomicPtr, AtomicUsize, Ordering, UnsafeCell};
use crate::take::Take;
use crate::wait::{StateWord, is_waiter, wake};
use crate::waiter::Word;

/// Bytes of slots in a lane's first segment, which lies in the lane's own allocation: a lane
/// that holds a few messages costs about 2.5 KiB (10,000 idle ports of a set, 25 MB). Not
/// less: segments rotate (the receiver hands each used one back as the sender's spare), so a
/// first segment smaller than a protocol's bursts (100 messages in `tests/allocations.rs`)
/// drags the rotation down to its size, and a burst then allocates again in the steady state.
const FIRST_SEGMENT_BYTES: usize = 2048;

/// Bytes of slots a segment grows to. A backlog is where segments are made and freed: each new
/// one is a `malloc` on the sending thread and a `free` on the receiving one, and at 2 KiB apiece
/// those (with the page faults of a heap that grows and shrinks) took a fifth of msgsend's CPU.
/// Each segment the sender has to allocate is twice the last, up to this: below glibc's `mmap`
/// threshold (128 KiB), so freed segments go back to the heap for the next ones.
const LAST_SEGMENT_BYTES: usize = 32 * 1024;

/// Slots in a segment of `bytes` for `T`: at least 8 and at most 4096 (a zero-sized `T` takes
/// no room: the most).
const fn slots_in<T>(bytes: usize) -> usize {
    let slots = match bytes.checked_div(std::mem::size_of::<T>()) {
        Some(slots) => slots,
        None => 4096,
    };
    if slots < 8 {
        8
    } else if slots > 4096 {
        4096
    } else {
        slots
    }
}

/// Slots in a lane's first segment. Under loom, 2, so models see segments linked and recycled
/// within a few messages.
const fn first_slots<T>() -> usize {
    if cfg!(loom) {
        2
    } else {
        slots_in::<T>(FIRST_SEGMENT_BYTES)
    }
}

/// The most slots a segment grows to. Under loom, 2: a model that saw a segment grow would need
/// more messages than loom explores in minutes before it also saw a spare reused, the part two
/// threads race on (the size is only read from a header published with the link, which Miri
/// checks in `tests/stream.rs`).
const fn last_slots<T>() -> usize {
    if cfg!(loom) {
        2
    } else {
        slots_in::<T>(LAST_SEGMENT_BYTES)
    }
}

/// Tag of a published index while the sender is alive.
const OPEN: usize = 1;
/// Tag of the index at which the sender hung up.
const HUNG_UP: usize = 3;
/// The tag bits of a word.
const TAG: usize = 3;
/// The receiver is gone. Tag 2, never a waiter (aligned to 4) nor an index word (odd).
pub(crate) const RX_CLOSED: usize = 2;
/// Indices are kept below this mask so that `index << 2` loses nothing.
const INDEX_MASK: usize = usize::MAX >> 2;

/// The word of a published `index` while the sender is alive: also what the receiving side
/// waits over, with `index` its own position.
pub(crate) fn open_word(index: usize) -> usize {
    (index << 2) | OPEN
}

fn next_index(index: usize) -> usize {
    index.wrapping_add(1) & INDEX_MASK
}

/// A segment: this header, then `slots` slots in the same allocation. Linked to the next once
/// the sender moves on to it.
#[repr(C)]
struct Segment<T> {
    /// The segment after this one, written by the sender before it publishes an index in it.
    next: AtomicPtr<Segment<T>>,
    /// How many slots follow the header; set when the segment is made and never changed.
    slots: usize,
    _slots: PhantomData<[UnsafeCell<MaybeUninit<T>>]>,
}

impl<T> Segment<T> {
    /// The layout of a segment of `slots` slots, and where the slots start (the same for
    /// every size).
    fn layout(slots: usize) -> (Layout, usize) {
        Layout::new::<Segment<T>>()
            .extend(
                Layout::array::<UnsafeCell<MaybeUninit<T>>>(slots)
                    .expect("a segment's size fits in an isize"),
            )
            .expect("a segment's size fits in an isize")
    }

    /// A fresh segment of `slots` slots with no next.
    fn alloc(slots: usize) -> NonNull<Segment<T>> {
        let (layout, _) = Self::layout(slots);
        // SAFETY: the layout has the header's nonzero size.
        let Some(segment) = NonNull::new(unsafe { alloc(layout) }) else {
            handle_alloc_error(layout)
        };
        // SAFETY: the allocation is ours and has the segment's layout.
        unsafe { Self::init(segment.cast(), slots) }
    }

    /// Makes a segment of `slots` slots with no next at `segment`.
    ///
    /// # Safety
    /// `segment` is ours to write, aligned and large enough for `Self::layout(slots)`.
    unsafe fn init(segment: NonNull<Segment<T>>, slots: usize) -> NonNull<Segment<T>> {
        // SAFETY: the caller's memory fits the header; the slots are `MaybeUninit` behind
        // `UnsafeCell`, valid uninitialized.
        unsafe {
            segment.write(Segment {
                next: AtomicPtr::new(ptr::null_mut()),
                slots,
                _slots: PhantomData,
            })
        };
        // Loom's cells carry model state, so each is made for real.
        #[cfg(loom)]
        for index in 0..slots {
            // SAFETY: slot `index` lies in the caller's memory, after the header.
            unsafe { Self::slot_at(segment, index).write(UnsafeCell::new(MaybeUninit::uninit())) };
        }
        segment
    }

    /// Slot `index` of the segment at `this`.
    ///
    /// # Safety
    /// The segment is alive while the reference is used, and `index` is below its `slots`.
    unsafe fn slot<'a>(this: NonNull<Segment<T>>, index: usize) -> &'a UnsafeCell<MaybeUninit<T>> {
        // SAFETY: the caller keeps `index` in the segment and the segment alive, and the slot
        // is initialized (`init`).
        unsafe { Self::slot_at(this, index).as_ref() }
    }

    /// Where slot `index` of the segment at `this` lies.
    ///
    /// # Safety
    /// `this` is a segment's allocation and `index` is below its `slots`.
    unsafe fn slot_at(
        this: NonNull<Segment<T>>,
        index: usize,
    ) -> NonNull<UnsafeCell<MaybeUninit<T>>> {
        // The slots start at the same offset for every size.
        let (_, offset) = Self::layout(1);
        // SAFETY: slot `index` lies in the allocation, after the header (the caller's promise).
        unsafe {
            this.cast::<u8>()
                .add(offset)
                .cast::<UnsafeCell<MaybeUninit<T>>>()
                .add(index)
        }
    }

    /// Frees a segment whose slots hold no message.
    ///
    /// # Safety
    /// `segment` came from [`Segment::alloc`] and nobody uses it any more.
    unsafe fn free(segment: NonNull<Segment<T>>) {
        // SAFETY: the caller's segment is alive until the `dealloc` below.
        let slots = unsafe { segment.as_ref() }.slots;
        let (layout, _) = Self::layout(slots);
        // SAFETY: as the caller guarantees.
        unsafe { Self::deinit(segment) };
        // SAFETY: as the caller guarantees; the slots and header need no more drop.
        unsafe { dealloc(segment.as_ptr().cast(), layout) };
    }

    /// Ends a segment whose slots hold no message, before its memory goes.
    ///
    /// # Safety
    /// `segment` was made by [`Segment::init`] and nobody uses it any more.
    unsafe fn deinit(segment: NonNull<Segment<T>>) {
        // Loom's cells carry model state, made in `init`.
        #[cfg(loom)]
        {
            // SAFETY: as the caller guarantees.
            let slots = unsafe { segment.as_ref() }.slots;
            for index in 0..slots {
                // SAFETY: each slot was written in `init` and holds no message.
                unsafe { Self::slot_at(segment, index).drop_in_place() };
            }
        }
        // `MaybeUninit` slots drop nothing; the header's atomic only under loom.
        // SAFETY: as the caller guarantees.
        unsafe { segment.drop_in_place() };
    }
}

/// What the receiving end alone reads and writes. In the lane rather than in the endpoint so
/// that a drop deferred by the drop queue (`drop_queue.rs`) finds it after the endpoint is gone.
struct Rx<T> {
    /// The index of the next message to take.
    head: usize,
    /// The published tail as last read: messages up to it may be taken without a look at the
    /// word.
    limit: usize,
    /// Whether the sender hung up at `limit`.
    hung_up: bool,
    /// The segment `head` is in, its number of slots, and `head`'s slot in it (`slots` when it
    /// is used up).
    segment: NonNull<Segment<T>>,
    slots: usize,
    slot: usize,
    /// Whether blocking receives keep catching up with a sender sending flat out.
    chase: Chase,
    /// Whether each take is reported in the lane's `taken` word (see [`LaneRx::report`]).
    report: bool,
}

/// What the sending end alone reads and writes. In the lane rather than in the endpoint so that
/// the endpoint is one pointer: a protocol's endpoints move on every message (a 48-byte move
/// through memory cost more than the send itself).
struct Tx<T> {
    /// The index of the next message.
    tail: usize,
    /// The segment being filled, its number of slots, and the next slot in it (`slots` when it
    /// is full).
    segment: NonNull<Segment<T>>,
    slots: usize,
    slot: usize,
    /// Whether a send found the receiver gone.
    closed: bool,
}

/// The shared part of a lane.
struct Lane<T> {
    /// The sender's word (see the module docs), alone on its cache line: the sender swaps it on
    /// every send, the receiver reads it once per batch.
    word: CachePadded<StateWord>,
    tx: CachePadded<UnsafeCell<Tx<T>>>,
    rx: CachePadded<UnsafeCell<Rx<T>>>,
    /// A used-up segment handed back by the receiver, for the sender's next one (or null).
    spare: AtomicPtr<Segment<T>>,
    /// The ends still holding the lane: 2, then 1; the end that takes it to 0 frees the lane.
    ends: AtomicUsize,
    /// Why the sender hung up (a [`Cause`]'s index), written before its hang-up publishes it
    /// and read by the receiver only after it saw the hang-up.
    cause: AtomicUsize,
    /// Where the messages go after the sender's last one, if it became a shared chan: one
    /// reference of an `Arc<SharedQueue<T>>`, stored before the sender hangs up and taken by
    /// whichever end swaps it out first (see [`LaneTx::upgrade`]). Null otherwise.
    upgrade: AtomicPtr<SharedQueue<T>>,
    /// How far the receiver has taken, for a sender that waits for room ([`Room`]): the open
    /// word of the receiver's `head`, swapped in after each take once the receiver reports (a
    /// remote session's pump does; local lanes never do), [`RX_CLOSED`] once the receiver is
    /// gone, or the waiter of a sender that waits.
    taken: StateWord,
    /// How many messages sent and not yet taken leave the sender room: set by the receiver's
    /// report, 0 (no limit) until then.
    room: AtomicUsize,
}

// SAFETY: a lane moves `T`s from the sender's thread to the receiver's; the slots are written
// by one end and read by the other across the word's Release/Acquire, and `rx` is only touched
// by the receiving end (and by the last end, after both let go with AcqRel).
unsafe impl<T: Send> Sync for Lane<T> {}

impl<T> Lane<T> {
    /// The layout of a lane with its first segment after it, in one allocation (a session's
    /// lanes are made and freed with it: a second `malloc` and `free` each cost a fifth of an
    /// unbounded session's life, `benches/sessions.rs`), and where that segment starts.
    fn layout() -> (Layout, usize) {
        Layout::new::<Lane<T>>()
            .extend(Segment::<T>::layout(first_slots::<T>()).0)
            .expect("a lane's size fits in an isize")
    }

    /// Whether `segment` is the first segment, the one in the lane's own allocation, which is
    /// freed with the lane and never alone.
    fn holds(&self, segment: NonNull<Segment<T>>) -> bool {
        let first = (&raw const *self).addr() + Self::layout().1;
        segment.addr().get() == first
    }
}

/// Makes a lane and returns its receiving and sending ends.
pub(crate) fn lane<T>() -> (LaneRx<T>, LaneTx<T>) {
    let slots = first_slots::<T>();
    let (layout, offset) = Lane::<T>::layout();
    // SAFETY: the layout has the lane's nonzero size.
    let Some(block) = NonNull::new(unsafe { alloc(layout) }) else {
        handle_alloc_error(layout)
    };
    // SAFETY: the segment's place in the block, aligned and sized for it by `layout`.
    let segment = unsafe { Segment::init(block.add(offset).cast(), slots) };
    let lane = block.cast::<Lane<T>>();
    // SAFETY: the block's start is aligned and sized for the lane.
    unsafe {
        lane.write(Lane {
            word: CachePadded::new(StateWord::new(open_word(0))),
            tx: CachePadded::new(UnsafeCell::new(Tx {
                tail: 0,
                segment,
                slots,
                slot: 0,
                closed: false,
            })),
            rx: CachePadded::new(UnsafeCell::new(Rx {
                head: 0,
                limit: 0,
                hung_up: false,
                segment,
                slots,
                slot: 0,
                chase: Chase::default(),
                report: false,
            })),
            spare: AtomicPtr::new(ptr::null_mut()),
            ends: AtomicUsize::new(2),
            cause: AtomicUsize::new(Cause::Closed.index()),
            upgrade: AtomicPtr::new(ptr::null_mut()),
            taken: StateWord::new(open_word(0)),
            room: AtomicUsize::new(0),
        })
    };
    (
        LaneRx {
            lane,
            _owns: PhantomData,
        },
        LaneTx {
            lane,
            _owns: PhantomData,
        },
    )
}

/// Lets go of one end's hold on the lane; the second end to let go frees it.
///
/// # Safety
/// Each end calls this once, last thing, and the receiving end has taken every message it was
/// sent (so no segment holds one).
unsafe fn release<T>(lane: NonNull<Lane<T>>) {
    // SAFETY: the caller still holds the lane.
    if unsafe { lane.as_ref() }.ends.fetch_sub(1, Ordering::AcqRel) != 1 {
        return;
    }
    // SAFETY: both ends let go (AcqRel orders their last writes before this), so the lane is
    // ours alone, until it is freed below.
    let shared = unsafe { lane.as_ref() };
    // Frees a segment unless it is the lane's own, which goes with the lane.
    let free = |segment: NonNull<Segment<T>>| {
        if !shared.holds(segment) {
            // SAFETY: a segment from `Segment::alloc` (not the lane's own), holding no
            // message, reachable only from here now.
            unsafe { Segment::free(segment) };
        }
    };
    // The segments from the receiver's on are linked, up to the sender's last.
    // SAFETY: both ends are done, so `rx` is ours.
    let mut segment = shared.rx.with_mut(|rx| unsafe { (*rx).segment.as_ptr() });
    while let Some(current) = NonNull::new(segment) {
        // SAFETY: every linked segment is alive until freed here.
        segment = unsafe { current.as_ref() }.next.load(Ordering::Relaxed);
        free(current);
    }
    // A sender's waiter is taken out of `taken` by the receiver's close, and none is left
    // after it (the sender finds the receiver gone and waits no more).
    debug_assert!(!is_waiter(shared.taken.0.load(Ordering::Relaxed).addr()));
    if let Some(spare) = NonNull::new(shared.spare.load(Ordering::Relaxed)) {
        // The spare is linked nowhere and nobody else can take it now.
        free(spare);
    }
    // An upgrade neither end took: the queue has no port, so close it for its senders. Every
    // order of the two ends' swaps has one of them take it (the receiver's close, or the
    // sender's hang-up when the receiver closed first), so this is a fallback; it would find
    // the queue empty anyway, as `LaneTx::upgrade` explains.
    // SAFETY: both ends are gone, so nobody else takes it.
    if let Some(queue) = unsafe { take_upgrade(shared) } {
        // SAFETY: no port ever received from this queue, and none will.
        unsafe { queue.close(None) };
    }
    let (layout, offset) = Lane::<T>::layout();
    // SAFETY: the lane's own segment, made in `lane`, holds no message (the caller's promise)
    // and is used by nobody now; then the lane itself, ours alone, and the block they share,
    // allocated in `lane` with this layout.
    unsafe {
        Segment::deinit(lane.cast::<u8>().add(offset).cast::<Segment<T>>());
        lane.drop_in_place();
        dealloc(lane.as_ptr().cast(), layout);
    }
}

/// Takes the lane's upgrade, if it holds one nobody took yet.
///
/// # Safety
/// The caller is an end of the lane (or its last user).
unsafe fn take_upgrade<T>(lane: &Lane<T>) -> Option<Arc<SharedQueue<T>>> {
    // Acquire: the queue as the sender made it.
    let queue = lane.upgrade.swap(ptr::null_mut(), Ordering::Acquire);
    // SAFETY: a non-null upgrade is a reference from `Arc::into_raw`, ours once swapped out.
    (!queue.is_null()).then(|| unsafe { Arc::from_raw(queue) })
}

/// The sending end of a lane: one pointer (its state is in the lane). Not `Sync`: one thread
/// sends at a time.
pub(crate) struct LaneTx<T> {
    lane: NonNull<Lane<T>>,
    /// Not `Sync`, as if it held its state in cells.
    _owns: PhantomData<(T, Cell<()>)>,
}

// SAFETY: the end moves `T`s to the receiving thread, which is sound when `T: Send`; its own
// state is in the lane, touched only by this end, and what it shares is behind atomics.
unsafe impl<T: Send> Send for LaneTx<T> {}

impl<T> LaneTx<T> {
    fn lane(&self) -> &Lane<T> {
        // SAFETY: this end holds the lane until its drop.
        unsafe { self.lane.as_ref() }
    }

    /// Sends `message`: one slot write and one swap. Hands the message back if the receiver is
    /// gone.
    #[inline]
    pub(crate) fn send(&self, message: T) -> Result<(), T> {
        let lane = self.lane();
        // SAFETY: only this end touches `tx`, and nothing else of it runs now: it is not
        // `Sync`, and `send` calls out to nothing.
        let found = lane
            .tx
            .with_mut(|tx| unsafe { send(lane, &mut *tx, message) })?;
        // The wake runs a task's `Waker`, user code that may send on this very chan: so only
        // after the state above is let go of.
        if is_waiter(found.addr()) {
            // SAFETY: a waiter word, just swapped out by the send.
            unsafe { wake(found) };
        }
        Ok(())
    }
}

/// [`LaneTx::send`], but for the wake: returns the word the publish took out, a waiter the
/// caller wakes once it no longer holds `tx`.
///
/// # Safety
/// `tx` is `lane`'s sending state and the caller is its sending end.
#[inline]
unsafe fn send<T>(lane: &Lane<T>, tx: &mut Tx<T>, message: T) -> Result<Word, T> {
    if tx.closed {
        return Err(message);
    }
    if tx.slot == tx.slots {
        // The spare, or a new segment twice the size of the last (see `LAST_SEGMENT_BYTES`).
        let next = NonNull::new(lane.spare.swap(ptr::null_mut(), Ordering::Acquire))
            .unwrap_or_else(|| Segment::alloc((tx.slots * 2).min(last_slots::<T>())));
        // SAFETY: the segment being filled is alive (the receiver frees or recycles a segment
        // only once it has moved past it, which needs this link). Relaxed: the swap below
        // publishes the link with the message.
        unsafe { tx.segment.as_ref() }
            .next
            .store(next.as_ptr(), Ordering::Relaxed);
        tx.segment = next;
        // SAFETY: the segment is ours to fill; its size never changes.
        tx.slots = unsafe { next.as_ref() }.slots;
        tx.slot = 0;
    }
    // SAFETY: the slot is past the published tail, so the receiver does not read it until the
    // swap below; the segment is alive as above.
    let cell = unsafe { Segment::slot(tx.segment, tx.slot) };
    // SAFETY: as above: the slot is ours to write.
    cell.with_mut(|slot| unsafe { (*slot).write(message) });
    tx.slot += 1;
    tx.tail = next_index(tx.tail);
    // Release publishes the slot (and a new segment's link); Acquire orders us after the
    // receiver's close, or the registration of its waiter.
    let found = lane.word.swap(open_word(tx.tail));
    match found.addr() {
        RX_CLOSED => {
            tx.closed = true;
            // SAFETY: the receiver closed before this publish, so it never reads this slot: the
            // message we just wrote is still ours.
            Err(cell.with_mut(|slot| unsafe { (*slot).assume_init_read() }))
        }
        _ => Ok(found),
    }
}

impl<T> LaneTx<T> {
    /// How much room the receiver leaves this end: what a sender that must not run too far
    /// ahead of its receiver waits on (see [`LaneRx::report`]).
    pub(crate) fn room(&self) -> Room<'_> {
        let lane = self.lane();
        // SAFETY: only this end touches `tx`.
        let tail = lane.tx.with_mut(|tx| unsafe { (*tx).tail });
        Room {
            taken: &lane.taken,
            room: &lane.room,
            tail,
            _one_thread: PhantomData,
        }
    }

    /// Hangs up, so that the receiver, once it has taken what was sent, finds the lane closed
    /// for `cause`.
    pub(crate) fn close_with(self, cause: Cause) {
        // Relaxed: the hang-up's swap in `drop` publishes it (the receiver reads it only after
        // an Acquire load of that word).
        self.lane().cause.store(cause.index(), Ordering::Relaxed);
        drop(self);
    }

    /// Hangs up, leaving `queue` for the receiver: once it has taken every message sent here, it
    /// receives from the queue (a stream whose chan became a shared chan). If the receiver is
    /// gone, the queue is closed, so its senders get their messages back.
    ///
    /// The queue holds no message yet ([`SharedChan::new`](crate::SharedChan::new) upgrades
    /// before it hands the shared chan out), so a close here drops nothing: it needs no drop
    /// queue, and a chain of chans cannot recurse through it.
    pub(crate) fn upgrade(self, queue: Arc<SharedQueue<T>>) {
        // A swap, not a store, so the slot only ever changes by read-modify-writes: the
        // receiver's take is a swap too. (Loom also misreads a plain store after another
        // thread's swap.) Nothing was there: only this, the sender's one upgrade, fills it.
        let found = self
            .lane()
            .upgrade
            .swap(Arc::into_raw(queue).cast_mut(), Ordering::AcqRel);
        debug_assert!(found.is_null(), "a lane is upgraded once");
        drop(self);
    }
}

impl<T> Drop for LaneTx<T> {
    /// Hangs up, waking the receiver, and lets go of the lane; a waker that panics holds up
    /// neither (see [`deferring`]).
    fn drop(&mut self) {
        deferring(|| self.hang_up());
    }
}

impl<T> LaneTx<T> {
    /// [`LaneTx`]'s drop.
    fn hang_up(&mut self) {
        // SAFETY: only this end touches `tx`.
        let (closed, tail) = self
            .lane()
            .tx
            .with_mut(|tx| unsafe { ((*tx).closed, (*tx).tail) });
        let gone = closed || {
            let hung_up = (tail << 2) | HUNG_UP;
            self.lane().word.swap_and_wake(hung_up) == RX_CLOSED
        };
        if gone {
            // The receiver closed before our hang-up, so it may not have seen an upgrade: if it
            // did not take it, no port will receive from the queue. Nothing was sent into it yet
            // (see `upgrade`), so the close drops nothing.
            // SAFETY: we are the sender.
            if let Some(queue) = unsafe { take_upgrade(self.lane()) } {
                // SAFETY: no port ever received from this queue, and none will.
                unsafe { queue.close(None) };
            }
        }
        // SAFETY: this is the sender's one release; what it sent the receiver takes or drops
        // before its own.
        unsafe { release(self.lane) };
    }
}

/// The receiving end of a lane. Not `Sync`: one thread receives at a time.
pub(crate) struct LaneRx<T> {
    lane: NonNull<Lane<T>>,
    _owns: PhantomData<T>,
}

// SAFETY: the end receives `T`s sent from another thread, which is sound when `T: Send`; its
// state is in the lane, touched only by this end.
unsafe impl<T: Send> Send for LaneRx<T> {}

impl<T> LaneRx<T> {
    fn lane(&self) -> &Lane<T> {
        // SAFETY: this end holds the lane until its drop.
        unsafe { self.lane.as_ref() }
    }

    /// The word select and port sets wait on.
    #[inline]
    pub(crate) fn word(&self) -> &StateWord {
        &self.lane().word
    }

    /// The word that means nothing new for this end: the open word of its own position.
    #[inline]
    pub(crate) fn idle(&self) -> usize {
        // SAFETY: only this end touches `rx`, and nothing else of it runs now (it is not
        // `Sync`, and no method calls out while it holds the reference).
        self.lane()
            .rx
            .with_mut(|rx| open_word(unsafe { (*rx).head }))
    }

    /// Takes the next message if the sender has published it.
    #[inline]
    pub(crate) fn try_recv(&self) -> Take<T> {
        let lane = self.lane();
        // SAFETY: as in `idle`.
        let taken = lane.rx.with_mut(|rx| unsafe { take(lane, &mut *rx) });
        // The report may wake a sender's task (user code): only once `rx` is let go of. (Read
        // apart from the take: returning it with the message cost a receive 0.7 ns.)
        if let Take::Message(_) = taken {
            // SAFETY: as in `idle`.
            let report = lane
                .rx
                .with_mut(|rx| unsafe { (*rx).report.then(|| (*rx).head) });
            if let Some(head) = report {
                report_taken(lane, head);
            }
        }
        taken
    }

    /// After a blocking receive found nothing: whether a message is here a moment later,
    /// pausing first while the receiver keeps catching up with its sender (see [`Chase`]).
    pub(crate) fn caught_up(&self) -> bool {
        let lane = self.lane();
        lane.rx.with_mut(|rx| {
            // SAFETY: as in `idle`.
            let rx = unsafe { &mut *rx };
            let chase = std::mem::take(&mut rx.chase);
            // SAFETY: as in `idle`.
            let found = chase.caught_up(|| !matches!(unsafe { look(lane, rx) }, Take::Empty));
            rx.chase = chase;
            found
        })
    }

    /// From now on, reports each message this end takes, so that its sender can wait until
    /// fewer than `room` (at least 1) of the messages it sent are still to be taken ([`Room`]):
    /// then one more send leaves at most `room`. Once
    /// per lane; later calls change nothing.
    pub(crate) fn report(&self, room: usize) {
        let lane = self.lane();
        let head = lane.rx.with_mut(|rx| {
            // SAFETY: as in `idle`.
            let rx = unsafe { &mut *rx };
            if rx.report {
                return None;
            }
            rx.report = true;
            Some(rx.head)
        });
        if let Some(head) = head {
            // Release: a sender that reads the room reads the word reported after it.
            lane.room.store(room.max(1), Ordering::Release);
            report_taken(lane, head);
        }
    }

    /// Once a receive found the lane closed: why the sender hung up.
    pub(crate) fn cause(&self) -> Cause {
        Cause::from_index(self.lane().cause.load(Ordering::Relaxed))
    }

    /// Once the lane is closed: the queue its sender upgraded to, if it did (once; the
    /// receiving end is its port from then on).
    pub(crate) fn take_upgrade(&self) -> Option<Arc<SharedQueue<T>>> {
        // SAFETY: we are the receiving end.
        unsafe { take_upgrade(self.lane()) }
    }

    /// What a receive would find, without taking it: a message, the sender gone, or nothing.
    #[inline]
    pub(crate) fn look(&self) -> Take<()> {
        let lane = self.lane();
        // SAFETY: as in `idle`.
        lane.rx.with_mut(|rx| unsafe { look(lane, &mut *rx) })
    }
}

/// What a receive would find; reads the word only when the receiving end has taken all it knew
/// of, and then remembers how far the sender has published.
///
/// # Safety
/// As for [`take`].
#[inline]
unsafe fn look<T>(lane: &Lane<T>, rx: &mut Rx<T>) -> Take<()> {
    if rx.head == rx.limit {
        if rx.hung_up {
            return Take::Closed;
        }
        // Acquire makes the slots up to the published tail (and the links to them) visible. A
        // waiter word is one the receiving side left over its own position: nothing new.
        let found = lane.word.load();
        if found & TAG == OPEN || found & TAG == HUNG_UP {
            rx.limit = found >> 2;
            rx.hung_up = found & TAG == HUNG_UP;
        }
        if rx.head == rx.limit {
            return if rx.hung_up {
                Take::Closed
            } else {
                Take::Empty
            };
        }
    }
    Take::Message(())
}

/// Takes the next message for the receiving end, reading the word only when it has taken all it
/// knew of.
///
/// # Safety
/// `rx` is `lane`'s receiving state and the caller is its receiving end (or the last end).
#[inline]
unsafe fn take<T>(lane: &Lane<T>, rx: &mut Rx<T>) -> Take<T> {
    // SAFETY: as the caller guarantees.
    match unsafe { look(lane, rx) } {
        Take::Message(()) => {}
        Take::Empty => return Take::Empty,
        Take::Closed => return Take::Closed,
    }
    if rx.slot == rx.slots {
        let used = rx.segment;
        // SAFETY: the sender linked the next segment before it published an index in it, and
        // `limit` is past the end of this one; the segment stays alive until we let it go.
        let next = unsafe { used.as_ref() }.next.load(Ordering::Acquire);
        rx.segment = NonNull::new(next).expect("a published index past a segment has a link");
        // SAFETY: the link was published with the index, so the segment's header is visible.
        rx.slots = unsafe { rx.segment.as_ref() }.slots;
        rx.slot = 0;
        // SAFETY: the sender moved on to `next` before linking it and never touches `used`
        // again, and we have taken every message in it.
        unsafe { recycle(lane, used) };
    }
    // SAFETY: `head` is below the published tail, so the sender wrote this slot before the
    // Release swap whose word we read with Acquire, and never touches it again.
    let message = unsafe { Segment::slot(rx.segment, rx.slot) }
        .with_mut(|slot| unsafe { (*slot).assume_init_read() });
    rx.slot += 1;
    rx.head = next_index(rx.head);
    Take::Message(message)
}

/// Reports that the receiver has taken every message before `head`, waking a sender that waits
/// for room.
fn report_taken<T>(lane: &Lane<T>, head: usize) {
    // Release orders our takes before the sender's next look; Acquire makes its waiter
    // visible.
    lane.taken.swap_and_wake(open_word(head));
}

/// Hands a used-up segment back to the sender as its spare, or frees it if there is one.
///
/// # Safety
/// Nobody uses `segment` any more, and it holds no message.
unsafe fn recycle<T>(lane: &Lane<T>, segment: NonNull<Segment<T>>) {
    // SAFETY: ours, as the caller guarantees.
    unsafe { segment.as_ref() }
        .next
        .store(ptr::null_mut(), Ordering::Relaxed);
    // Release hands the segment (our reads of its slots, its cleared link) to the sender's
    // Acquire swap.
    if lane
        .spare
        .compare_exchange(
            ptr::null_mut(),
            segment.as_ptr(),
            Ordering::Release,
            Ordering::Relaxed,
        )
        .is_err()
        && !lane.holds(segment)
    {
        // SAFETY: as the caller guarantees; it was offered to nobody, and it is not the
        // lane's own (which goes with the lane).
        unsafe { Segment::free(segment) };
    }
}

impl<T> Drop for LaneRx<T> {
    /// Closes the lane and drops what was sent into it, through the drop queue: a receiving end
    /// dropped inside a message being dropped (a stream of streams) is queued, not recursed
    /// into.
    fn drop(&mut self) {
        // SAFETY: this is the end's drop.
        unsafe { self.dispose((&raw const *self).cast()) }
    }
}

impl<T> LaneRx<T> {
    /// Drops this end as if it lay at `at`, where a runtime container that owns it on the heap
    /// lies (a port set): queued, not recursed into, when the container is a field of a message
    /// being dropped (see `drop_queue::dispose`).
    pub(crate) fn drop_as_if_at(self, at: *const u8) {
        let this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped, so this is the end's one disposal.
        unsafe { this.dispose(at) }
    }

    /// Closes the lane through the drop queue, as if this end lay at `at`.
    ///
    /// # Safety
    /// Called once, as the end's drop.
    unsafe fn dispose(&self, at: *const u8) {
        // SAFETY: `close_receiver::<T>` is the disposal for this lane's type, and the lane is
        // this end's to close, as the caller guarantees.
        unsafe { drop_queue::dispose(at, self.lane.cast(), close_receiver::<T>) }
    }
}

/// The receiving end's drop: swaps in [`RX_CLOSED`], drops every message published before it,
/// and lets go of the lane. A payload whose `Drop` panics stops nothing: the rest are dropped,
/// the lane is let go, then the first panic is resumed.
///
/// # Safety
/// As [`drop_queue::Dispose`] asks: `lane` is a `Lane<T>` whose receiving end is gone without
/// closing it.
unsafe fn close_receiver<T>(lane: NonNull<()>, queue: Option<&DropQueue>) {
    // The close wakes the sender's waiters: a waker that panics must not keep the backlog or
    // the lane.
    // SAFETY: as the caller guarantees.
    deferring(|| unsafe { close_receiver_now::<T>(lane, queue) });
}

/// [`close_receiver`], its panics not held back.
///
/// # Safety
/// As for [`close_receiver`].
unsafe fn close_receiver_now<T>(lane: NonNull<()>, queue: Option<&DropQueue>) {
    let lane = lane.cast::<Lane<T>>();
    // SAFETY: the receiving end's hold on the lane is ours until `release`.
    let shared = unsafe { lane.as_ref() };
    // A watch nobody took back (a forgotten future) is woken: the swap took its reference.
    let found = shared.word.swap_and_wake(RX_CLOSED);
    // The sender hung up into a shared chan before our close (or is about to: then whichever
    // of us swaps the upgrade out closes it): its queue has no port from now on.
    // SAFETY: we act as the receiving end.
    if let Some(upgrade) = unsafe { take_upgrade(shared) } {
        // SAFETY: the port never received from this queue (it would have taken the upgrade).
        unsafe { upgrade.close(queue) };
    }
    // A sender waiting for room has all it will get.
    shared.taken.swap_and_wake(RX_CLOSED);
    let mut panics = Panics::default();
    shared.rx.with_mut(|rx| {
        // SAFETY: the receiving end is gone; its state is ours.
        let rx = unsafe { &mut *rx };
        // The close above is the last report.
        rx.report = false;
        if found & TAG == OPEN || found & TAG == HUNG_UP {
            rx.limit = found >> 2;
        }
        // Nothing is sent after the close, so this pass ends.
        rx.hung_up = true;
        while !panics.catch(|| {
            // SAFETY: we act as the receiving end, which is gone.
            while let Take::Message(message) = unsafe { take(shared, rx) } {
                drop_queue::drop_message(message, queue);
            }
        }) {}
    });
    // SAFETY: every message sent before the close is dropped; later sends take theirs back.
    unsafe { release(lane) };
    panics.resume();
}

/// A sending end's room: whether the receiver has taken enough of what was sent that the
/// sender may go on, once the receiver reports its takes (`LaneRx::report`; before that, and
/// once the receiver is gone, there is always room). A sender that waits here keeps at most the
/// room's messages between itself and its receiver.
///
/// The waiting follows the state word's protocol (`wait.rs`) on the lane's `taken` word: the
/// receiver swaps in how far it has taken after each take, and a sender that waits leaves its
/// waiter over the word it last read.
///
/// Neither `Send` nor `Sync`, as the `&LaneTx` it is lent from: the sender is the `taken`
/// word's one waiting side, acting from one thread at a time (`wait.rs`). A room that crossed
/// threads let two threads wait on the word at once, and one's wait without a deadline then
/// returned "timed out" (it saw the word settled, and by its second look the other had left
/// its waiter there).
#[derive(Clone, Copy, Debug)]
pub struct Room<'a> {
    taken: &'a StateWord,
    room: &'a AtomicUsize,
    /// The sender's tail: the messages it has sent.
    tail: usize,
    /// Not `Send` nor `Sync`: a borrow of the sending end, which is not `Sync`.
    _one_thread: PhantomData<*const ()>,
}

impl<'a> Room<'a> {
    /// The word that the sender waits on, the one it last read, if it has no room; `None` if
    /// it has room.
    pub(crate) fn full(&self) -> Option<usize> {
        // Acquire: the report's word, written after the room.
        let room = self.room.load(Ordering::Acquire);
        if room == 0 {
            return None;
        }
        match self.taken.load() {
            RX_CLOSED => None,
            // A waiter of an earlier wait (a forgotten future's): the receiver has taken nothing
            // since it was left, which was when there was no room. Waiting over 0, never a
            // word of the receiver's, displaces it.
            word if is_waiter(word) => Some(0),
            word => {
                let backlog = self.tail.wrapping_sub(word >> 2) & INDEX_MASK;
                (backlog >= room).then_some(word)
            }
        }
    }

    /// The word waited on.
    pub(crate) fn word(&self) -> &'a StateWord {
        self.taken
    }

    /// Blocks until there is room, or `deadline` passes (then `false`).
    pub(crate) fn wait(&self, deadline: Option<std::time::Instant>) -> bool {
        while let Some(idle) = self.full() {
            if self.taken.wait(idle, deadline).is_none() {
                return self.full().is_none();
            }
        }
        true
    }
}

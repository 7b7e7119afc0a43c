//! The multi-producer, single-consumer queue behind shared chans: lock-free, unbounded, one
//! `fetch_add` per push, and the order std's mpsc and Go give (a push that happens before
//! another is popped first). This file is only the data structure; blocking and waking are the
//! caller's, through the hook described under "Waking".
//!
//! # Implementation notes
//!
//! - Messages live in *segments* of [`SEGMENT`] slots, linked into a list. A *position* is a
//!   message's place in the queue, counted in steps of 2 (`tail`'s low bit is [`CLOSED`]), and
//!   a segment holds the positions `start .. start + SPAN`. Positions wrap; they are compared
//!   by their wrapping difference.
//! - Push: `tail.fetch_add` claims a position (if `CLOSED` was set, the value goes back). The
//!   producer finds the position's segment by walking from `tail_segment`, usually not at all,
//!   writes its slot and publishes it by adding the slot's `WRITTEN` bit to the segment's ready
//!   words (two bits a slot, [`SLOTS_PER_WORD`] slots a word): one `lock xadd`. The consumer
//!   pops in position order, so a push that happens before another is popped first: its
//!   `fetch_add` comes first in `tail`'s modification order.
//! - Linking: the producer that claims the first slot of a segment moves `tail_segment` up to
//!   it, writes and publishes its slot, and only then links the *next* segment (a recycled
//!   spare, or a new allocation) and sets the segment's `linked` flag. After the publish, so
//!   the consumer never waits on a slot for an allocation (before, a `malloc` inside the
//!   claim-to-publish window, page faults included, stalled the consumer and every producer a
//!   segment ahead). A producer that needs a link and finds none after a few spins links it
//!   itself (the loser of the race hands its segment to the spare): with more producers than
//!   cores the linker is often descheduled, and waiting for it cost a time slice per segment.
//!   The consumer that reaches a segment's end before its link sees [`Pop::Empty`]; to sleep
//!   there it arms the link word itself ([`ARMED_LINK`]), and whoever links swaps the tag out.
//! - Reclaiming: a producer may still read a segment it loaded from `tail_segment` after every
//!   slot in it was popped. So whoever moves `tail_segment` past a segment *retires* it with
//!   the tail it observes right after the move, through an RMW (`fetch_add(0)`), and the
//!   consumer recycles a segment only once it is retired, the consumer has popped every
//!   position below that observed tail, and the segment's linker has set `linked` (it visits
//!   the segment after its own publish). Why the observed tail suffices, with no `SeqCst`: a
//!   producer whose `fetch_add` comes after the retiring RMW in `tail`'s modification order
//!   synchronizes with it (every write to `tail` is an RMW, so the release sequence runs
//!   unbroken), so it loads the new `tail_segment` or a later one; a producer whose `fetch_add`
//!   comes before claimed a position below the observed tail, and the consumer cannot pop
//!   that position before the producer published it, which it does only when done walking.
//!   Segments are recycled in list order, so a walk forward from a protected segment stays on
//!   protected ones, and a walk backward (a producer that loaded a `tail_segment` beyond its
//!   own position) never passes the producer's own segment, which holds its unpublished slot.
//!   Loom checks all this: under `cfg(loom)` every producer visit to a segment reads a cell
//!   that its recycling writes, and recycled segments are never freed while the model runs.
//! - One spare: the consumer hands a recycled segment to the spare word, freeing the previous
//!   spare if nobody took it; the next link takes it. A queue that keeps up allocates nothing.
//! - Layout: a segment's header (read by every push, written once) comes before its slots, its
//!   ready words (written by every push) after them, so reading the header is not a miss on
//!   the line other producers' publishes keep taking.
//! - Producers register ([`Queue::add_sender`]); the last one to leave pushes a *close marker*
//!   (a slot published with no value, its position in `closed_at`), so "closed and drained" is
//!   exact: every message pushed before the last producer left is popped before
//!   [`Pop::Closed`].
//! - Consumer close ([`Queue::close`]): sets `CLOSED` in `tail` with one `fetch_or`, so every
//!   later push hands its value back; every position claimed before it is waited for (each
//!   producer is between its claim and its publish, the same bounded moment), its value
//!   dropped; then it waits for the link duty of every segment whose first slot was claimed,
//!   and frees every segment. Values are dropped in a loop, each under `catch_unwind`, so a
//!   payload whose `Drop` panics leaks nothing (the first panic is resumed afterwards, as in
//!   `drop_queue`). Dropping the queue without a close does the same.
//!
//! # Waking
//!
//! The consumer never needs a `SeqCst` fence to sleep: it arms the word it waits on, the same
//! word the producer publishes with (the slot's ready word, or the link), so the two RMWs are
//! ordered and exactly one of them sees the other.
//!
//! - Consumer: `pop()` says [`Pop::Empty`]; register the waiter (store the thread handle or
//!   `Waker` where producers will find it); then [`Queue::arm`]: `true` means nothing is there
//!   yet and whoever publishes it will see the arm, so park (or return `Pending`); `false`
//!   means a message (or the close marker, or a link) got there first, so pop again. After a
//!   wake, pop again (wakes may be spurious). A wait that gives up (a timeout, a dropped future)
//!   calls [`Queue::disarm`], which says whether a signal is already on its way.
//! - Producer: [`Queue::push`] returns `Ok(true)` when the consumer armed the slot it just
//!   published or a link it made (and [`Queue::remove_sender`] returns `true` likewise for the
//!   close marker): that producer, and only it, signals the waiter, after the push returns.
//!   The publishing RMW is `AcqRel`, so the waiter the consumer stored before arming is
//!   visible to it. `Ok(false)` needs nothing more: no wait was armed there, and none will be.

use std::fmt;
use std::marker::PhantomData;
use std::mem::MaybeUninit;
use std::ptr;

#[cfg(not(loom))]
use crossbeam_utils::Backoff;
use crossbeam_utils::CachePadded;

use crate::panics::Panics;
use crate::spin;
use crate::sync::{AtomicPtr, AtomicUsize, Ordering, UnsafeCell};

/// Slots per segment. 32 keeps a segment's ready bits in one word on 64-bit targets and its
/// header and ready word to 1.5 bytes a slot (a backlog of `u64` costs 9.5 bytes a message);
/// 64 and 128 measured no faster.
#[cfg(not(loom))]
pub(crate) const SEGMENT: usize = 32;
/// Slots per segment under loom: tiny, so small models link, retire and recycle segments.
#[cfg(loom)]
pub(crate) const SEGMENT: usize = 2;

/// Slots whose two ready bits share one word.
const SLOTS_PER_WORD: usize = usize::BITS as usize / 2;
/// Ready words per segment.
const WORDS: usize = SEGMENT.div_ceil(SLOTS_PER_WORD);
/// Positions advance by 2: `tail`'s low bit is [`CLOSED`].
const STEP: usize = 2;
/// Positions one segment spans.
const SPAN: usize = SEGMENT * STEP;
/// In `tail`: the consumer closed the queue; pushes hand their value back.
const CLOSED: usize = 1;
/// In a `next` word instead of a link: the consumer reached this segment's end before the link
/// and waits for it. Never dereferenced (segments are aligned to more than 1).
const ARMED_LINK: usize = 1;
/// In a retired segment's `retired` word, and in `closed_at`: the low bit marks the word set
/// (positions are even, so `0` means "not yet").
const SET: usize = 1;

/// What [`Queue::pop`] found.
#[derive(Debug, PartialEq, Eq)]
pub enum Pop<T> {
    /// The next message, in push order.
    Message(T),
    /// Nothing to pop now; a producer may push later. The next position may even be claimed
    /// already, by a producer that has not published yet: the order waits for it.
    Empty,
    /// Every producer is gone and every message was popped. Stays so.
    Closed,
}

/// A lock-free multi-producer single-consumer queue (see the module notes). Producers share it
/// by reference (`&Queue`, `Sync` when `T: Send`); consumer methods are `unsafe fn`s whose
/// contract is that one thread at a time calls them.
pub struct Queue<T> {
    /// Written on every push: the tail position (with [`CLOSED`]) and the segment producers
    /// start looking from. One line, so a push's load of `tail_segment` hits the line its
    /// `fetch_add` just took.
    producers: CachePadded<Producers<T>>,
    /// The consumer's own state, and the close marker it reads on every pop.
    consumer: CachePadded<ConsumerSide<T>>,
    /// Registered producers.
    senders: AtomicUsize,
    /// A recycled segment for the next link, or 0.
    spare: SegmentWord<T>,
    /// Under loom, segments are never given back to the allocator while the model runs, so a
    /// producer touching one after its recycling or freeing is a race loom reports (see
    /// `Segment::touch`), not a use after free it cannot see. A std mutex on purpose: loom
    /// does not model it, so it adds no happens-before edge that could hide a race.
    #[cfg(loom)]
    graveyard: std::sync::Mutex<Vec<usize>>,
    /// The queue owns the `T`s in its slots.
    _owns: PhantomData<T>,
}

struct Producers<T> {
    /// The next position to claim (even), `| CLOSED` once the consumer closed the queue.
    tail: AtomicUsize,
    /// A segment at or behind the one holding `tail`: where a producer starts looking. Moves
    /// forward only.
    tail_segment: SegmentWord<T>,
}

struct ConsumerSide<T> {
    /// The close marker's position `| SET`, or 0 while a producer is registered.
    closed_at: AtomicUsize,
    state: UnsafeCell<Consumer<T>>,
}

/// What only the consumer touches.
struct Consumer<T> {
    /// The position of the next message.
    head: usize,
    /// The segment holding `head` (or ending at it: `offset == SEGMENT`). Null once the
    /// queue's segments are freed.
    segment: *mut Segment<T>,
    /// `head`'s slot in `segment`.
    offset: usize,
    /// The last value loaded from the ready word holding `offset` (0 after a move to another
    /// word). One Acquire load that saw a slot's `WRITTEN` bit synchronizes with its producer,
    /// so bits seen here need no second load.
    ready: usize,
    /// The oldest segment not yet recycled: at or before `segment`.
    oldest: *mut Segment<T>,
}

/// A segment pointer in an atomic word: `AtomicPtr` with the orderings the queue uses in one
/// place, so pointers keep their provenance (Miri checks them under strict provenance).
struct SegmentWord<T>(AtomicPtr<Segment<T>>);

impl<T> SegmentWord<T> {
    fn new(segment: *mut Segment<T>) -> Self {
        SegmentWord(AtomicPtr::new(segment))
    }

    fn load(&self, order: Ordering) -> *mut Segment<T> {
        self.0.load(order)
    }

    fn store(&self, segment: *mut Segment<T>, order: Ordering) {
        self.0.store(segment, order);
    }

    fn swap(&self, segment: *mut Segment<T>, order: Ordering) -> *mut Segment<T> {
        self.0.swap(segment, order)
    }

    fn compare_exchange(
        &self,
        current: *mut Segment<T>,
        new: *mut Segment<T>,
    ) -> Result<*mut Segment<T>, *mut Segment<T>> {
        self.0
            .compare_exchange(current, new, Ordering::AcqRel, Ordering::Acquire)
    }
}

/// [`SEGMENT`] slots, their ready bits and the links. A recycled segment is reset by the
/// consumer (ready words, `next`, `retired`, `linked`) and given `start` and `prev` by its
/// linker.
///
/// `repr(C)`, in this order: the header that every push reads (`start`) but that is written
/// once per segment comes first, the ready words that every push writes come after the slots,
/// so a push's read of `start` is not a cache miss on the line other producers' publishes
/// just took (measured: a seventh of a contended push).
#[repr(C)]
struct Segment<T> {
    /// The first position in this segment.
    start: AtomicUsize,
    /// The segment before, for producers that loaded a `tail_segment` past their position.
    prev: SegmentWord<T>,
    /// The segment after, linked by the producer of this segment's first slot (or a helper).
    next: SegmentWord<T>,
    /// The tail observed after `tail_segment` moved past this segment, `| SET`; 0 before.
    retired: AtomicUsize,
    /// 1 once the producer of this segment's first slot is done with its link duty (and
    /// with this segment): it links after its publish, so nothing else keeps the segment alive
    /// for it, and a helper may have linked first.
    linked: AtomicUsize,
    slots: [UnsafeCell<MaybeUninit<T>>; SEGMENT],
    /// Two bits per slot: `WRITTEN` (its producer published it) and `WAITING` (the consumer
    /// armed it), set by RMWs only.
    ready: [AtomicUsize; WORDS],
    /// Touched by producers on every visit and by the consumer when it recycles: loom then
    /// checks every visit happens before the recycle.
    #[cfg(loom)]
    life: UnsafeCell<()>,
}

/// A slot's `WRITTEN` bit in its ready word.
fn written(offset: usize) -> usize {
    1 << (2 * (offset % SLOTS_PER_WORD))
}

/// A slot's `WAITING` bit in its ready word.
fn waiting(offset: usize) -> usize {
    2 << (2 * (offset % SLOTS_PER_WORD))
}

/// Whether a `next` word holds a link (not null, not [`ARMED_LINK`]).
fn is_link<T>(next: *mut Segment<T>) -> bool {
    next.addr() > ARMED_LINK
}

/// The [`ARMED_LINK`] tag as a `next` word.
fn armed_link<T>() -> *mut Segment<T> {
    ptr::without_provenance_mut(ARMED_LINK)
}

/// Whether position `position` is at or past `mark`, for positions that wrap.
fn reached(position: usize, mark: usize) -> bool {
    position.wrapping_sub(mark) as isize >= 0
}

impl<T> Segment<T> {
    /// Allocates a segment for the positions from `start`, after `prev`.
    fn alloc(start: usize, prev: *mut Segment<T>) -> *mut Segment<T> {
        #[cfg(all(test, not(loom)))]
        tests::ALLOCATED.with(|allocated| allocated.set(allocated.get() + 1));
        // Built in place: a segment of large payloads would not fit on the stack.
        let mut segment = Box::<Segment<T>>::new_uninit();
        let raw = segment.as_mut_ptr();
        // SAFETY: `raw` points to an allocation for a `Segment<T>`; every field is written
        // once through raw places (no reference to uninitialised memory is made) before
        // `assume_init`.
        unsafe {
            (&raw mut (*raw).ready).write(std::array::from_fn(|_| AtomicUsize::new(0)));
            (&raw mut (*raw).start).write(AtomicUsize::new(start));
            (&raw mut (*raw).prev).write(SegmentWord::new(prev));
            (&raw mut (*raw).next).write(SegmentWord::new(ptr::null_mut()));
            (&raw mut (*raw).retired).write(AtomicUsize::new(0));
            (&raw mut (*raw).linked).write(AtomicUsize::new(0));
            let slots = (&raw mut (*raw).slots).cast::<UnsafeCell<MaybeUninit<T>>>();
            for i in 0..SEGMENT {
                slots.add(i).write(UnsafeCell::new(MaybeUninit::uninit()));
            }
            #[cfg(loom)]
            (&raw mut (*raw).life).write(UnsafeCell::new(()));
            Box::into_raw(segment.assume_init())
        }
    }

    /// Frees a segment. Its slots hold no value (they were popped, dropped, or never written).
    ///
    /// # Safety
    ///
    /// `segment` came from [`Segment::alloc`], is freed once, and nobody reads it afterwards.
    unsafe fn free(segment: *mut Segment<T>) {
        // SAFETY: the caller's contract.
        drop(unsafe { Box::from_raw(segment) });
    }

    /// The ready word holding the bits of the slot at `offset`.
    fn word(&self, offset: usize) -> &AtomicUsize {
        &self.ready[offset / SLOTS_PER_WORD]
    }

    /// The slot at `offset`.
    fn slot(&self, offset: usize) -> &UnsafeCell<MaybeUninit<T>> {
        &self.slots[offset]
    }

    /// A producer's visit: under loom, a read of `life` that must happen before the recycle.
    fn touch(&self) {
        #[cfg(loom)]
        self.life.with(|_| ());
    }
}

/// Waits a moment for another producer (a link, or a publish the close waits for).
struct Snooze {
    #[cfg(not(loom))]
    backoff: Backoff,
    waited: u32,
}

/// Snoozes a producer waits for a link before it links the segment itself. Short: a link is
/// a few dozen nanoseconds after its producer's publish, so a longer wait means that producer
/// is descheduled, and with more producers than cores that lasts a time slice.
const HELP_AFTER: u32 = if cfg!(loom) { 1 } else { 3 };

impl Snooze {
    fn new() -> Self {
        Snooze {
            #[cfg(not(loom))]
            backoff: Backoff::new(),
            waited: 0,
        }
    }

    /// How many times this waiter snoozed.
    fn waited(&self) -> u32 {
        self.waited
    }

    fn snooze(&mut self) {
        self.waited += 1;
        // Spins a little, then yields: the producer we wait for may be queued behind us.
        #[cfg(not(loom))]
        self.backoff.snooze();
        #[cfg(loom)]
        crate::sync::thread::yield_now();
    }
}

impl<T> Queue<T> {
    /// An empty queue with one registered producer (the creator's).
    pub fn new() -> Self {
        Self::starting_at(0)
    }

    /// An empty queue whose first position is `start` (even): tests start near the wrap.
    fn starting_at(start: usize) -> Self {
        let first = Segment::alloc(start, ptr::null_mut());
        Queue {
            producers: CachePadded::new(Producers {
                tail: AtomicUsize::new(start),
                tail_segment: SegmentWord::new(first),
            }),
            consumer: CachePadded::new(ConsumerSide {
                closed_at: AtomicUsize::new(0),
                state: UnsafeCell::new(Consumer {
                    head: start,
                    segment: first,
                    offset: 0,
                    ready: 0,
                    oldest: first,
                }),
            }),
            senders: AtomicUsize::new(1),
            spare: SegmentWord::new(ptr::null_mut()),
            #[cfg(loom)]
            graveyard: std::sync::Mutex::new(Vec::new()),
            _owns: PhantomData,
        }
    }

    /// Pushes `value` behind every push that happened before this one. `Err(value)` if the
    /// consumer closed the queue. `Ok(true)`: the consumer armed a wait on this very message
    /// (or on a link this push made), so the caller must signal it (see "Waking" in the module
    /// notes); `Ok(false)`: nothing to do. Lock-free: one `fetch_add` to claim and one to
    /// publish; a producer that finds the segment it needs not linked yet spins a moment, then
    /// links it itself (an allocation, unless the spare is there).
    ///
    /// Call it only while registered as a producer (from [`Queue::new`] or
    /// [`Queue::add_sender`], until [`Queue::remove_sender`]): a push after the last producer
    /// left lands behind the close marker, never popped (dropped with the queue).
    pub fn push(&self, value: T) -> Result<bool, T> {
        // Acquire: a push after a retiring RMW (see the notes) must see the new tail segment.
        let tail = self.producers.tail.fetch_add(STEP, Ordering::Acquire);
        if tail & CLOSED != 0 {
            return Err(value);
        }
        let (segment, offset, armed) = self.claimed(tail);
        // SAFETY: `segment` holds our unpublished slot, so the consumer cannot recycle it.
        let found = unsafe { &*segment };
        // SAFETY: the position is ours alone (claimed by the `fetch_add`), and the consumer
        // reads the slot only after our `WRITTEN` bit, set below.
        found
            .slot(offset)
            .with_mut(|slot| unsafe { slot.write(MaybeUninit::new(value)) });
        // SAFETY: `segment` holds the slot we claimed and wrote.
        let armed = unsafe { self.publish(segment, offset) } | armed;
        // After the publish: the consumer, and every later claim's pop, wait for it.
        spin::give_way(ptr::from_ref(self).addr(), tail / STEP);
        Ok(armed)
    }

    /// Registers another producer (a clone of a sending endpoint). Call it only while some
    /// producer is registered.
    pub fn add_sender(&self) {
        // Relaxed, as `Arc::clone`: the caller already holds a registration.
        let before = self.senders.fetch_add(1, Ordering::Relaxed);
        if before > isize::MAX as usize {
            std::process::abort();
        }
    }

    /// Unregisters a producer. The last one pushes the close marker: the consumer pops every
    /// message pushed before it, then [`Pop::Closed`]. Returns `true` if the consumer armed a
    /// wait on the marker's slot: the caller must signal it, exactly as after a push.
    pub fn remove_sender(&self) -> bool {
        // AcqRel: the last producer's marker goes behind every other producer's pushes.
        if self.senders.fetch_sub(1, Ordering::AcqRel) != 1 {
            return false;
        }
        let tail = self.producers.tail.fetch_add(STEP, Ordering::Acquire);
        if tail & CLOSED != 0 {
            return false;
        }
        let (segment, offset, armed) = self.claimed(tail);
        // Relaxed: the consumer reads it after the Acquire that sees the marker's slot.
        self.consumer.closed_at.store(tail | SET, Ordering::Relaxed);
        // SAFETY: `segment` holds the slot we claimed.
        armed | unsafe { self.publish(segment, offset) }
    }

    /// Pops the next message in push order.
    ///
    /// # Safety
    ///
    /// Consumer methods (`pop`, `arm`, `disarm`, `close`) are called from one thread at a time,
    /// and none after `close`.
    pub unsafe fn pop(&self) -> Pop<T> {
        self.consumer.state.with_mut(|consumer| {
            // SAFETY: only the consumer touches its state, and the caller is the consumer.
            let consumer = unsafe { &mut *consumer };
            // SAFETY: the caller's contract (one consumer, not closed).
            if !unsafe { self.head_slot(consumer) } {
                return Pop::Empty;
            }
            let bit = written(consumer.offset);
            if consumer.ready & bit == 0 {
                // SAFETY: the consumer's segment is live until the consumer recycles it.
                let segment = unsafe { &*consumer.segment };
                consumer.ready = segment.word(consumer.offset).load(Ordering::Acquire);
                if consumer.ready & bit == 0 {
                    return Pop::Empty;
                }
            }
            if self.consumer.closed_at.load(Ordering::Relaxed) == consumer.head | SET {
                return Pop::Closed;
            }
            // SAFETY: the slot is published (its `WRITTEN` bit, seen by an Acquire load), not
            // the close marker, and popped once: `head` moves past it below.
            let value = unsafe { Self::take(consumer) };
            Pop::Message(value)
        })
    }

    /// Arms a wait on the next message, after [`Pop::Empty`] and after registering the
    /// waiter: on its slot, or, at a segment's end before the next segment is linked, on the
    /// link. `true`: nothing there yet, and whoever publishes it (the slot's producer, or the
    /// linker) will be told to signal (`Ok(true)` from `push`, `true` from the last
    /// `remove_sender`): park. `false`: something is there now: pop it.
    ///
    /// # Safety
    ///
    /// As for [`Queue::pop`].
    pub unsafe fn arm(&self) -> bool {
        self.consumer.state.with_mut(|consumer| {
            // SAFETY: as in `pop`.
            let consumer = unsafe { &mut *consumer };
            // SAFETY: the caller's contract.
            while !unsafe { self.head_slot(consumer) } {
                // SAFETY: as in `pop`.
                let segment = unsafe { &*consumer.segment };
                // AcqRel: releases the waiter to the linker, whose swap takes the tag.
                match segment.next.compare_exchange(ptr::null_mut(), armed_link()) {
                    Ok(_) => return true,
                    Err(next) if !is_link(next) => return true, // Armed already.
                    Err(_) => {}                                // Linked meanwhile: move on.
                }
            }
            // SAFETY: as in `pop`.
            let segment = unsafe { &*consumer.segment };
            let offset = consumer.offset;
            // AcqRel: releases the waiter registered before, to the producer that sees the bit.
            let before = segment
                .word(offset)
                .fetch_or(waiting(offset), Ordering::AcqRel);
            consumer.ready = before | waiting(offset);
            before & written(offset) == 0
        })
    }

    /// Takes back the wait an [`Queue::arm`] that returned `true` left (a timeout, a dropped
    /// future). Returns `true` if the slot (or link) was published meanwhile: its producer saw
    /// the arm, so a signal is on its way (or came); `false`: nobody will signal for that arm.
    ///
    /// # Safety
    ///
    /// As for [`Queue::pop`], and no other consumer call since that `arm`.
    pub unsafe fn disarm(&self) -> bool {
        self.consumer.state.with_mut(|consumer| {
            // SAFETY: as in `pop`.
            let consumer = unsafe { &mut *consumer };
            // SAFETY: `arm` left the consumer on the armed slot's segment, live as in `pop`.
            let segment = unsafe { &*consumer.segment };
            if consumer.offset == SEGMENT {
                // `arm` armed the link: if the tag is gone, the linker took it.
                return segment
                    .next
                    .compare_exchange(armed_link(), ptr::null_mut())
                    .is_err();
            }
            let offset = consumer.offset;
            let before = segment
                .word(offset)
                .fetch_and(!waiting(offset), Ordering::AcqRel);
            consumer.ready = before & !waiting(offset);
            before & written(offset) != 0
        })
    }

    /// Closes the queue from the consumer's side (the receiving endpoint is dropped): later
    /// pushes hand their value back; every value pushed before is dropped here, in a loop,
    /// waiting for producers between their claim and their publish; every segment is freed.
    /// If a value's `Drop` panics, the rest are still dropped and the first panic is resumed
    /// at the end (unless this thread is already unwinding).
    ///
    /// # Safety
    ///
    /// As for [`Queue::pop`]; no consumer method is called afterwards.
    pub unsafe fn close(&self) {
        // SAFETY: as the caller guarantees.
        unsafe { self.close_with(drop) };
    }

    /// [`Queue::close`], dropping each value with `drop_value` (which a port gives its
    /// thread's drop queue, so that ports among a value's fields do not recurse).
    ///
    /// # Safety
    ///
    /// As for [`Queue::close`].
    pub(crate) unsafe fn close_with(&self, mut drop_value: impl FnMut(T)) {
        let tail = self.producers.tail.fetch_or(CLOSED, Ordering::AcqRel);
        if tail & CLOSED != 0 {
            return;
        }
        self.consumer.state.with_mut(|consumer| {
            // SAFETY: as in `pop`; `tail` is where claims stopped.
            unsafe { self.drain(&mut *consumer, tail, &mut drop_value) }
        });
    }

    /// Finds the segment of a claimed position and, for a segment's first slot, moves
    /// `tail_segment` up to it (the claimer's first duty; the second, linking the next
    /// segment, comes after its publish). Returns the segment, the slot's offset in it, and
    /// whether we linked a segment the consumer had armed (a push must then signal).
    fn claimed(&self, position: usize) -> (*mut Segment<T>, usize, bool) {
        let (segment, armed) = self.find(position);
        // SAFETY: `find` returns the segment holding our unpublished slot.
        let found = unsafe { &*segment };
        let offset = position.wrapping_sub(found.start.load(Ordering::Relaxed)) / STEP;
        if offset == 0 {
            self.advance_to(segment);
        }
        (segment, offset, armed)
    }

    /// The segment holding a claimed, unpublished `position`, and whether we linked a segment
    /// the consumer had armed (helping).
    fn find(&self, position: usize) -> (*mut Segment<T>, bool) {
        // Acquire: the segment's fields as its linker wrote them (linkers publish with Release,
        // and a move of `tail_segment` is a Release CAS by a producer that acquired the link).
        let mut segment = self.producers.tail_segment.load(Ordering::Acquire);
        let mut snooze = Snooze::new();
        let mut armed = false;
        loop {
            // SAFETY: live, by the reclaiming argument in the notes: we loaded it (or walked
            // to it) after our claim, and our position is not popped before we publish.
            let visiting = unsafe { &*segment };
            visiting.touch();
            let distance = position.wrapping_sub(visiting.start.load(Ordering::Relaxed)) as isize;
            if distance < 0 {
                // Behind us: `prev` was written before this segment was linked.
                segment = visiting.prev.load(Ordering::Relaxed);
            } else if (distance as usize) < SPAN {
                return (segment, armed);
            } else {
                let next = visiting.next.load(Ordering::Acquire);
                if is_link(next) {
                    segment = next;
                    snooze = Snooze::new();
                } else if snooze.waited() < HELP_AFTER {
                    // The producer of this segment's first slot is about to link the next one.
                    snooze.snooze();
                } else {
                    // It is slow (descheduled, most likely): link it ourselves.
                    // SAFETY: live, as above.
                    armed |= unsafe { self.link_next(segment) };
                }
            }
        }
    }

    /// Links a segment after `segment` unless one is linked already: the duty of the producer
    /// of `segment`'s first slot, after its publish, and the help of a producer that waited
    /// for the link too long. The loser of a race hands its segment to the spare. Returns
    /// whether the consumer had armed the link.
    ///
    /// # Safety
    ///
    /// `segment` is live until we return: we are its first slot's producer (the consumer
    /// recycles it only after our `linked` flag), or a producer walking it, as in `find`.
    unsafe fn link_next(&self, segment: *mut Segment<T>) -> bool {
        // SAFETY: the caller's contract.
        let current = unsafe { &*segment };
        current.touch();
        let mut before = current.next.load(Ordering::Acquire);
        if is_link(before) {
            return false;
        }
        let start = current.start.load(Ordering::Relaxed).wrapping_add(SPAN);
        // Acquire: the consumer's reset of the recycled segment.
        let spare = self.spare.swap(ptr::null_mut(), Ordering::Acquire);
        let next = if spare.is_null() {
            Segment::alloc(start, segment)
        } else {
            // SAFETY: the spare is ours alone once swapped out, reset by the consumer, and
            // unreachable from the list until our link.
            let recycled = unsafe { &*spare };
            recycled.start.store(start, Ordering::Relaxed);
            recycled.prev.store(segment, Ordering::Relaxed);
            spare
        };
        loop {
            current.touch();
            // AcqRel: Release publishes the new segment's fields to whoever follows the link;
            // Acquire sees the waiter the consumer registered before arming the link.
            match current.next.compare_exchange(before, next) {
                Ok(_) => return before == armed_link(),
                Err(actual) if is_link(actual) => {
                    // SAFETY: never linked, so ours alone.
                    unsafe { self.give_back(next) };
                    return false;
                }
                Err(actual) => before = actual, // The consumer armed or disarmed the link.
            }
        }
    }

    /// Makes an unlinked segment the spare, freeing the previous spare.
    ///
    /// # Safety
    ///
    /// `segment` is ours alone, unreachable, holds no value, and its ready words, `next`,
    /// `retired` and `linked` are as `alloc` or `recycle` leave them.
    unsafe fn give_back(&self, segment: *mut Segment<T>) {
        // AcqRel: Release hands its state to the next taker; Acquire, the previous spare's.
        let previous = self.spare.swap(segment, Ordering::AcqRel);
        if !previous.is_null() {
            // SAFETY: a spare nobody took is unreachable: only linkers take it, and they swap
            // it out.
            unsafe { self.bury(previous) };
        }
    }

    /// Moves `tail_segment` up to `segment` (whose first slot we claimed) unless it is there
    /// or past it already, and retires every segment it moved past.
    fn advance_to(&self, segment: *mut Segment<T>) {
        // SAFETY: holds our unpublished slot.
        let target = unsafe { &*segment }.start.load(Ordering::Relaxed);
        let tail_segment = &self.producers.tail_segment;
        let mut current = tail_segment.load(Ordering::Acquire);
        loop {
            if current == segment {
                return;
            }
            // SAFETY: loaded after our claim: live, as in `find`.
            let visiting = unsafe { &*current };
            visiting.touch();
            if !reached(target, visiting.start.load(Ordering::Relaxed)) {
                return; // Another producer moved it further on.
            }
            match tail_segment.compare_exchange(current, segment) {
                Ok(_) => break,
                Err(actual) => current = actual,
            }
        }
        // The retiring RMW (see the notes): a producer claiming after it sees the new
        // `tail_segment`; one claiming before it has a position below `observed`.
        let observed = self.producers.tail.fetch_add(0, Ordering::AcqRel) & !CLOSED;
        while current != segment {
            // SAFETY: from the segment we moved past, forward to ours: not recycled before the
            // consumer pops `observed`, which is past our own unpublished position.
            let retiring = unsafe { &*current };
            retiring.touch();
            let next = retiring.next.load(Ordering::Acquire);
            retiring.retired.store(observed | SET, Ordering::Release);
            current = next;
        }
    }

    /// Publishes a written slot and, for a segment's first slot, then links the next segment
    /// (unless a helper did) and sets `linked`: after the publish, so the consumer never waits
    /// on a slot for an allocation. Returns whether the consumer had armed the slot or the
    /// link.
    ///
    /// # Safety
    ///
    /// `segment` holds the slot at `offset`, claimed by us and written (or the close marker).
    unsafe fn publish(&self, segment: *mut Segment<T>, offset: usize) -> bool {
        // SAFETY: holds our unpublished slot.
        let published = unsafe { &*segment };
        published.touch();
        // AcqRel: Release publishes the value; Acquire sees the waiter the consumer registered
        // before arming. An add, not an or: the bit is set once (one claim per position), and
        // `fetch_add` is one `lock xadd` on x86, where a `fetch_or` whose result is used is a
        // `cmpxchg` loop that producers publishing into one word make retry.
        let before = published
            .word(offset)
            .fetch_add(written(offset), Ordering::AcqRel);
        let mut armed = before & waiting(offset) != 0;
        if offset == 0 {
            // SAFETY: we are the first slot's producer, and have not set `linked` yet.
            armed |= unsafe { self.link_next(segment) };
            published.touch();
            // Release: our visits, before the consumer's recycle (it checks this flag).
            published.linked.store(1, Ordering::Release);
        }
        armed
    }

    /// Makes `consumer.segment` hold `head`: at a segment's end, moves to the next and recycles
    /// whatever it can behind. Returns `false` if the next segment is not linked yet (its
    /// linker links it right after publishing the segment's first slot).
    ///
    /// # Safety
    ///
    /// Called by the consumer, before `close`.
    unsafe fn head_slot(&self, consumer: &mut Consumer<T>) -> bool {
        if consumer.offset < SEGMENT {
            return true;
        }
        // SAFETY: the consumer's segment is live.
        let segment = unsafe { &*consumer.segment };
        // Acquire: the next segment's fields.
        let next = segment.next.load(Ordering::Acquire);
        if !is_link(next) {
            return false;
        }
        consumer.segment = next;
        consumer.offset = 0;
        consumer.ready = 0;
        // SAFETY: the consumer's.
        unsafe { self.recycle_behind(consumer) };
        true
    }

    /// Recycles, oldest first, the segments behind the consumer that are retired and whose
    /// observed tail the consumer has reached.
    ///
    /// # Safety
    ///
    /// Called by the consumer.
    unsafe fn recycle_behind(&self, consumer: &mut Consumer<T>) {
        while consumer.oldest != consumer.segment {
            // SAFETY: not recycled yet; only the consumer recycles.
            let oldest = unsafe { &*consumer.oldest };
            let retired = oldest.retired.load(Ordering::Acquire);
            if retired == 0
                || !reached(consumer.head, retired & !SET)
                || oldest.linked.load(Ordering::Acquire) == 0
            {
                return;
            }
            // The consumer walked this link already.
            let next = oldest.next.load(Ordering::Relaxed);
            let recycled = consumer.oldest;
            consumer.oldest = next;
            // SAFETY: every producer that could reach it is done (the notes); the consumer
            // popped all of it and moved on.
            unsafe { self.recycle(recycled) };
        }
    }

    /// Resets a segment nobody can reach and makes it the spare, freeing the previous spare.
    ///
    /// # Safety
    ///
    /// Called by the consumer, with a segment no producer will visit again and whose slots
    /// hold no value.
    unsafe fn recycle(&self, segment: *mut Segment<T>) {
        // SAFETY: the caller's contract: ours alone.
        let reset = unsafe { &*segment };
        #[cfg(loom)]
        reset.life.with_mut(|_| ());
        for word in &reset.ready {
            word.store(0, Ordering::Relaxed);
        }
        reset.next.store(ptr::null_mut(), Ordering::Relaxed);
        reset.retired.store(0, Ordering::Relaxed);
        reset.linked.store(0, Ordering::Relaxed);
        // AcqRel: Release hands the reset to the linker that takes it.
        let previous = self.spare.swap(segment, Ordering::AcqRel);
        if !previous.is_null() {
            // SAFETY: a spare nobody took: only linkers take it, and they swap it out.
            unsafe { self.bury(previous) };
        }
    }

    /// Frees a segment (under loom: keeps it until the queue is dropped, see `graveyard`).
    ///
    /// # Safety
    ///
    /// As for [`Segment::free`].
    unsafe fn bury(&self, segment: *mut Segment<T>) {
        #[cfg(loom)]
        {
            // SAFETY: the caller's contract: nobody visits it again.
            unsafe { &*segment }.life.with_mut(|_| ());
            let mut graveyard = self.graveyard.lock().unwrap_or_else(|e| e.into_inner());
            graveyard.push(segment.expose_provenance());
        }
        // SAFETY: the caller's contract.
        #[cfg(not(loom))]
        unsafe {
            Segment::free(segment)
        };
    }

    /// Moves the value out of the head slot and moves `head` past it.
    ///
    /// # Safety
    ///
    /// The head slot is published (seen with Acquire), holds a value (not the close marker),
    /// and `consumer.segment` holds it.
    unsafe fn take(consumer: &mut Consumer<T>) -> T {
        // SAFETY: the consumer's segment is live.
        let segment = unsafe { &*consumer.segment };
        // SAFETY: the caller's contract: written once by its producer, read once here.
        let value = segment
            .slot(consumer.offset)
            .with_mut(|slot| unsafe { slot.read().assume_init() });
        Self::advance_head(consumer);
        value
    }

    /// Moves `head` past its slot.
    fn advance_head(consumer: &mut Consumer<T>) {
        consumer.head = consumer.head.wrapping_add(STEP);
        consumer.offset += 1;
        if consumer.offset.is_multiple_of(SLOTS_PER_WORD) {
            consumer.ready = 0;
        }
    }

    /// Drops every value from `head` up to the claim position `end` with `drop_value` (waiting
    /// for each to be published), then frees every segment and the spare.
    ///
    /// # Safety
    ///
    /// Called by the consumer, once; every position below `end` was claimed by a producer that
    /// did not see `CLOSED`, and no claim at or past `end` touches a segment (the queue is
    /// `CLOSED` at `end`, or nobody else holds it).
    unsafe fn drain(&self, consumer: &mut Consumer<T>, end: usize, drop_value: &mut impl FnMut(T)) {
        if consumer.segment.is_null() {
            return;
        }
        let mut panics = Panics::default();
        // One `catch_unwind` for the whole drain, entered again after a panic: each value is
        // moved out (and `head` past it) before it is dropped.
        while !panics.catch(|| {
            let mut snooze = Snooze::new();
            while consumer.head != end {
                // SAFETY: the consumer's, before the segments are freed.
                if !unsafe { self.head_slot(consumer) } {
                    // A position below `end` lies past this link: its linker is at work.
                    snooze.snooze();
                    continue;
                }
                // SAFETY: as in `pop`.
                let segment = unsafe { &*consumer.segment };
                let bit = written(consumer.offset);
                let word = &segment.word(consumer.offset);
                // Its producer claimed it before the close: it is between claim and publish.
                while consumer.ready & bit == 0 {
                    consumer.ready = word.load(Ordering::Acquire);
                    if consumer.ready & bit == 0 {
                        snooze.snooze();
                    }
                }
                if self.consumer.closed_at.load(Ordering::Relaxed) == consumer.head | SET {
                    // The close marker holds no value.
                    Self::advance_head(consumer);
                    continue;
                }
                // SAFETY: published and holding a value.
                drop_value(unsafe { Self::take(consumer) });
            }
        }) {}
        // Every producer that claimed below `end` published, after its last visit to a segment
        // but for one duty: the producer of a segment's first slot links the next segment
        // after its publish, then sets `linked`. So wait for `linked` on every segment whose
        // first position is below `end`; then nobody visits a segment again: free them all.
        let mut snooze = Snooze::new();
        let mut segment = consumer.oldest;
        loop {
            // SAFETY: the list from the oldest live segment, not freed yet.
            let visiting = unsafe { &*segment };
            if reached(visiting.start.load(Ordering::Relaxed), end) {
                break; // Its first slot was claimed after the close, or never: no duty.
            }
            if visiting.linked.load(Ordering::Acquire) == 0 {
                snooze.snooze();
                continue;
            }
            segment = visiting.next.load(Ordering::Acquire);
            // Once per segment, on a close: an invariant worth a real check.
            assert!(
                is_link(segment),
                "pipes: a segment's link duty ended with no link"
            );
        }
        let mut segment = consumer.oldest;
        while !segment.is_null() {
            // SAFETY: the list from the oldest live segment; each freed once.
            let next = unsafe { &*segment }.next.load(Ordering::Acquire);
            // SAFETY: nobody reads it again (above).
            unsafe { self.bury(segment) };
            segment = if is_link(next) { next } else { ptr::null_mut() };
        }
        let spare = self.spare.swap(ptr::null_mut(), Ordering::Acquire);
        if !spare.is_null() {
            // SAFETY: as above.
            unsafe { self.bury(spare) };
        }
        consumer.segment = ptr::null_mut();
        consumer.oldest = ptr::null_mut();
        panics.resume();
    }
}

impl<T> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for Queue<T> {
    fn drop(&mut self) {
        let tail = self.producers.tail.load(Ordering::Acquire);
        self.consumer.state.with_mut(|consumer| {
            // SAFETY: `&mut self`: nobody else holds the queue, so every claim below `tail` was
            // published (a claim after a consumer close found `segment` null already).
            let consumer = unsafe { &mut *consumer };
            if tail & CLOSED == 0 {
                // SAFETY: as above.
                unsafe { self.drain(consumer, tail, &mut drop) };
            }
        });
        #[cfg(loom)]
        for segment in self
            .graveyard
            .get_mut()
            .unwrap_or_else(|e| e.into_inner())
            .drain(..)
        {
            // SAFETY: kept only for loom's sake, freed once here.
            unsafe { Segment::<T>::free(ptr::with_exposed_provenance_mut(segment)) };
        }
    }
}

impl<T> fmt::Debug for Queue<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Queue").finish_non_exhaustive()
    }
}

// SAFETY: the queue owns values of `T` and hands them from producers to the consumer, so it may
// move to another thread when `T: Send`. Its raw segment pointers are the queue's own.
unsafe impl<T: Send> Send for Queue<T> {}
// SAFETY: shared, it moves `T`s between threads (never lends a `&T`), so `T: Send` suffices as
// for std's channels. The consumer state is touched only by the consumer (`unsafe fn`s'
// contract); everything producers share is atomic or guarded by the publish protocol.
unsafe impl<T: Send> Sync for Queue<T> {}

/// White-box tests: links, recycling, wrapping positions and the wake bits. The behaviour
/// through the API (order, closes, drops, panics, stress) is in `tests/queue.rs`.
#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::cell::Cell;

    thread_local! {
        /// Segments allocated by this thread.
        pub(super) static ALLOCATED: Cell<usize> = const { Cell::new(0) };
    }

    fn allocated() -> usize {
        ALLOCATED.with(Cell::get)
    }

    fn pop<T>(queue: &Queue<T>) -> Pop<T> {
        // SAFETY: each test is its queue's only consumer, and pops before any close.
        unsafe { queue.pop() }
    }

    fn arm<T>(queue: &Queue<T>) -> bool {
        // SAFETY: as in `pop`.
        unsafe { queue.arm() }
    }

    fn disarm<T>(queue: &Queue<T>) -> bool {
        // SAFETY: as in `pop`, right after an `arm`.
        unsafe { queue.disarm() }
    }

    impl<T> Queue<T> {
        /// Segments from the consumer's oldest to the last linked, and whether a spare waits.
        fn segments(&self) -> (usize, bool) {
            let mut count = 0;
            self.consumer.state.with_mut(|consumer| {
                // SAFETY: the tests call this between their own operations, single-threaded.
                let mut segment = unsafe { (*consumer).oldest };
                while !segment.is_null() {
                    count += 1;
                    // SAFETY: a live segment of the list.
                    segment = unsafe { &*segment }.next.load(Ordering::Relaxed);
                }
            });
            (count, !self.spare.load(Ordering::Relaxed).is_null())
        }
    }

    #[test]
    fn a_backlog_links_a_segment_per_segment_of_messages_and_pops_in_order() {
        let queue = Queue::new();
        for i in 0..10 * SEGMENT {
            assert_eq!(queue.push(i), Ok(false));
        }
        // Ten full segments, and the eleventh linked by the first push into the tenth.
        assert_eq!(queue.segments(), (11, false));
        for i in 0..10 * SEGMENT {
            assert_eq!(pop(&queue), Pop::Message(i));
        }
        assert_eq!(pop(&queue), Pop::Empty);
        // Only the last few stay: each is recycled once the tail observed at its retirement
        // is popped; the spare keeps one, the rest are freed.
        let (live, spare) = queue.segments();
        assert!(live <= 3, "{live} segments still live");
        assert!(spare);
    }

    #[test]
    fn a_queue_that_keeps_up_allocates_nothing_in_steady_state() {
        let queue = Queue::new();
        for i in 0..4 * SEGMENT {
            queue.push(i).unwrap();
            assert_eq!(pop(&queue), Pop::Message(i));
        }
        let warm = allocated();
        for i in 0..100 * SEGMENT {
            queue.push(i).unwrap();
            assert_eq!(pop(&queue), Pop::Message(i));
        }
        assert_eq!(allocated(), warm);
        assert!(queue.segments().0 <= 3);
    }

    #[test]
    fn positions_wrap_around() {
        // Three segments before the wrap, so pushes cross it and links, retirements and
        // recycling compare positions on both sides of it.
        let queue = Queue::starting_at(0usize.wrapping_sub(3 * SPAN));
        for round in 0..3 {
            for i in 0..5 * SEGMENT {
                queue.push((round, i)).unwrap();
            }
            for i in 0..5 * SEGMENT {
                assert_eq!(pop(&queue), Pop::Message((round, i)));
            }
        }
        assert_eq!(pop(&queue), Pop::Empty);
        assert!(queue.segments().0 <= 3);
    }

    #[test]
    fn the_producer_of_an_armed_slot_and_only_it_is_told_to_signal() {
        let queue = Queue::new();
        assert!(arm(&queue), "nothing published: park");
        assert_eq!(queue.push(1), Ok(true));
        assert_eq!(queue.push(2), Ok(false), "armed for message 1 only");
        assert!(!arm(&queue), "message 1 is there");
        assert_eq!(pop(&queue), Pop::Message(1));
        assert_eq!(pop(&queue), Pop::Message(2));
        assert!(arm(&queue));
        assert!(!disarm(&queue), "nothing published: no signal coming");
        assert_eq!(queue.push(3), Ok(false), "disarmed");
        assert_eq!(pop(&queue), Pop::Message(3));
        assert!(arm(&queue));
        assert_eq!(queue.push(4), Ok(true));
        assert!(
            disarm(&queue),
            "published after the arm: a signal is coming"
        );
        assert_eq!(pop(&queue), Pop::Message(4));
    }

    #[test]
    fn an_arm_at_a_segment_end_moves_to_the_next_segment() {
        let queue = Queue::new();
        for i in 0..SEGMENT {
            queue.push(i).unwrap();
            assert_eq!(pop(&queue), Pop::Message(i));
        }
        assert!(arm(&queue));
        assert_eq!(queue.push(SEGMENT), Ok(true));
        assert_eq!(pop(&queue), Pop::Message(SEGMENT));
    }

    /// Undoes the link after the consumer's segment, as if the producer of its first slot
    /// were still between its publish and its link; returns the segment that was linked.
    fn unlink_after_head<T>(queue: &Queue<T>) -> (*mut Segment<T>, *mut Segment<T>) {
        queue.consumer.state.with_mut(|consumer| {
            // SAFETY: the tests call this between their own operations, single-threaded.
            let segment = unsafe { (*consumer).segment };
            // SAFETY: the consumer's segment is live.
            let linked = unsafe { &*segment }
                .next
                .swap(ptr::null_mut(), Ordering::Relaxed);
            (segment, linked)
        })
    }

    #[test]
    fn a_consumer_ahead_of_a_link_arms_the_link_and_the_linker_is_told_to_signal() {
        let queue = Queue::new();
        for i in 0..SEGMENT {
            queue.push(i).unwrap();
            assert_eq!(pop(&queue), Pop::Message(i));
        }
        let (head, linked) = unlink_after_head(&queue);
        assert_eq!(pop(&queue), Pop::Empty, "at the segment's end, no link yet");
        assert!(arm(&queue), "armed the link");
        assert!(arm(&queue), "armed already");
        assert!(!disarm(&queue), "nobody linked: no signal coming");
        assert!(arm(&queue));
        // SAFETY: we stand in for the producer of `head`'s first slot, and free the segment
        // it had linked, now unreachable.
        unsafe {
            assert!(queue.link_next(head), "the linker finds the arm");
            assert!(!queue.link_next(head), "linked already: nothing to do");
            Segment::free(linked);
        }
        assert!(
            disarm(&queue),
            "the link took the arm: a signal is on its way"
        );
        assert_eq!(pop(&queue), Pop::Empty);
        assert_eq!(queue.push(SEGMENT), Ok(false));
        assert_eq!(pop(&queue), Pop::Message(SEGMENT));
    }

    #[test]
    fn the_close_marker_is_armed_like_a_message_and_pops_as_closed() {
        let queue = Queue::<u8>::new();
        queue.add_sender();
        assert!(!queue.remove_sender(), "not the last");
        assert!(arm(&queue));
        assert!(queue.remove_sender(), "the last, onto the armed slot");
        assert_eq!(pop(&queue), Pop::Closed);
        assert_eq!(pop(&queue), Pop::Closed);
    }

    #[test]
    fn a_consumer_close_frees_every_segment() {
        let queue = Queue::new();
        for i in 0..3 * SEGMENT {
            queue.push(i.to_string()).unwrap();
        }
        assert_eq!(pop(&queue), Pop::Message("0".to_string()));
        // SAFETY: the only consumer, closing once.
        unsafe { queue.close() };
        assert_eq!(queue.segments(), (0, false));
        assert_eq!(queue.push("late".to_string()), Err("late".to_string()));
    }
}

//! Where single-use packets live: carved from small per-thread chunks instead of one `malloc`
//! each.
//!
//! An unbounded protocol allocates a packet per message on the sending thread and frees it on
//! the receiving one. That is the worst pattern for a general allocator (every free is remote,
//! every allocation refills an emptied cache); profiles of msgsend showed `malloc` and `free`
//! above everything else in a stream's cost. Here a thread takes packets from a chunk of slots
//! of one size class that it alone carves (a plain cursor, no atomics); each slot remembers its
//! chunk, and releasing a slot is one atomic decrement of the chunk's count, on a line the
//! sender no longer touches. The last release frees the chunk. Slots are never reused, so there
//! is no ABA and no cross-thread free list.
//!
//! # What a live packet costs
//!
//! A chunk outlives its slots' longest holder, so a live packet pins its whole chunk, and a
//! `mem::forget`-ed endpoint leaks it. Chunks are therefore small: at most [`MAX_SLOTS`] slots
//! and [`SLOT_BYTES`] bytes of slots (one slot if a single one is larger), plus a 64-byte head.
//! A live packet pins at most 640 bytes of heap: 576 for any packet up to 496 bytes (8 slots
//! of 64 bytes for the smallest, such as a oneshot or a stream of `u64`; 4 of 128; 2 of 256),
//! 640 for the largest class (one 576-byte slot). Measured with `cargo bench --bench memory`
//! (50,000 live oneshots, each made after 31 short-lived ones on the same thread: the worst
//! case), heap per live oneshot against the slots per chunk, and with a `Box` per packet:
//!
//! | slots per chunk | 32    | 16    | 8 (this) | 4   | `Box` |
//! |-----------------|------:|------:|---------:|----:|------:|
//! | sparse live     | 2,128 | 1,104 |      592 | 336 |    32 |
//! | forgotten port  | 2,112 | 1,088 |      576 | 320 |    16 |
//!
//! (tokio's oneshot: 88 B; crossbeam-channel's `bounded(1)`: 688 B.) A `Box` per packet pins
//! nothing and made the two-thread pingpongs faster (a thread's next allocation reuses the
//! packet it just freed, cache-hot), but it loses the race a dropped receiver runs against a
//! sender that keeps sending: the drop has to reach the packet being filled before the sender
//! learns the receiver is gone, and with `malloc` on one side and `free` on the other it fell
//! far behind (28-188 million messages queued at worst in runs of four such pairs, two runs in
//! seven never catching up), where chunks of 8 slots stayed within 1-17 million (one run in
//! fifteen past 50 million) and 32-slot ones within 1-9. Smaller chunks cost msgsend about
//! 5-10% (one `malloc` per 8 messages instead of 32); the pingpongs did not move. Details in
//! `benches/RESULTS.md` ("memory").
//!
//! Packets too large or too aligned for the size classes (and every packet under loom, which
//! models the plain `Box` path) are boxed.

use std::alloc::{Layout, alloc, dealloc, handle_alloc_error};
use std::cell::RefCell;
use std::mem::{align_of, size_of};
use std::ptr::NonNull;

use crate::sync::{AtomicUsize, Ordering, fence};

/// Most slots per chunk: one `malloc` per this many messages.
const MAX_SLOTS: usize = 8;
/// Most bytes of slots per chunk: bounds what one live packet pins (with the head).
const SLOT_BYTES: usize = 512;
/// Size classes are multiples of this, which is also every slot's alignment.
const GRAIN: usize = 16;
/// The largest packet served from chunks; larger ones are boxed.
const MAX_SIZE: usize = 512;
/// Every slot starts with a pointer to its chunk, padded to keep the packet aligned.
const PREFIX: usize = GRAIN;
const CLASSES: usize = MAX_SIZE / GRAIN;
/// Slots are padded to this, the cache line of the machines we target.
const CACHE_LINE: usize = 64;
/// The chunk's head, rounded up to keep the slots after it aligned.
const HEAD: usize = size_of::<Chunk>().next_multiple_of(CACHE_LINE);

/// The head of a chunk: how many of its slots are still allocated or not yet handed out.
struct Chunk {
    live: AtomicUsize,
    /// Bytes per slot, prefix included, and slots: what the chunk's layout is rebuilt from.
    stride: usize,
    slots: usize,
}

fn chunk_layout(stride: usize, slots: usize) -> Layout {
    Layout::from_size_align(HEAD + slots * stride, GRAIN).expect("a chunk's layout is small")
}

/// A chunk of `slots` slots of `stride` bytes, all of them live.
fn new_chunk(stride: usize, slots: usize) -> NonNull<Chunk> {
    let layout = chunk_layout(stride, slots);
    // SAFETY: the layout has a non-zero size.
    let Some(chunk) = NonNull::new(unsafe { alloc(layout) }.cast::<Chunk>()) else {
        handle_alloc_error(layout)
    };
    // SAFETY: fresh memory, aligned to `GRAIN`, which is at least `Chunk`'s alignment.
    unsafe {
        chunk.as_ptr().write(Chunk {
            live: AtomicUsize::new(slots),
            stride,
            slots,
        })
    };
    chunk
}

/// Slot `index` of `chunk`: writes its prefix and returns where its packet goes.
///
/// # Safety
/// `index` is below the chunk's slot count and the slot was never handed out.
unsafe fn slot(chunk: NonNull<Chunk>, index: usize) -> NonNull<u8> {
    // SAFETY: the slot lies inside the chunk's allocation and its prefix is aligned for a
    // pointer (the caller's promise and `GRAIN`).
    unsafe {
        let stride = chunk.as_ref().stride;
        let slot = chunk.cast::<u8>().add(HEAD + index * stride);
        slot.cast::<NonNull<Chunk>>().write(chunk);
        slot.add(PREFIX)
    }
}

/// A thread's chunk in one size class, its slot count, and how many it has handed out.
struct Carving {
    chunk: NonNull<Chunk>,
    slots: usize,
    next: usize,
}

/// The chunks this thread is carving, by size class.
struct Carvings([Option<Carving>; CLASSES]);

impl Drop for Carvings {
    /// A thread that ends gives up the slots it never handed out.
    fn drop(&mut self) {
        for carving in self.0.iter_mut().filter_map(Option::take) {
            // SAFETY: the thread's claim on its unhanded slots is what these counts are.
            unsafe { release(carving.chunk, carving.slots - carving.next) };
        }
    }
}

thread_local! {
    static CARVINGS: RefCell<Carvings> = const { RefCell::new(Carvings([const { None }; CLASSES])) };
}

/// The size class of `T`, if it is served from chunks.
fn class_of<T>() -> Option<usize> {
    let (size, align) = (size_of::<T>(), align_of::<T>());
    (!cfg!(loom) && size > 0 && size <= MAX_SIZE && align <= GRAIN)
        .then(|| size.div_ceil(GRAIN) - 1)
}

/// Moves `value` into a fresh slot (or a box) and returns it.
pub(crate) fn alloc_packet<T>(value: T) -> NonNull<T> {
    let Some(class) = class_of::<T>() else {
        return NonNull::from(Box::leak(Box::new(value)));
    };
    let stride = stride_of(class);
    // A thread being torn down can no longer carve: it gets a chunk of one slot.
    let slot = CARVINGS
        .try_with(|carvings| carve(&mut carvings.borrow_mut().0[class], stride))
        // SAFETY: slot 0 of a fresh one-slot chunk.
        .unwrap_or_else(|_| unsafe { slot(new_chunk(stride, 1), 0) });
    let packet = slot.cast::<T>();
    // SAFETY: the slot is fresh, sized and aligned for any `T` of this class.
    unsafe { packet.as_ptr().write(value) };
    packet
}

/// Bytes per slot of a size class, prefix included. Slots never share a cache line: a receiver
/// spinning on one packet's state word must not be disturbed by the sender writing the next
/// packet beside it.
fn stride_of(class: usize) -> usize {
    (PREFIX + (class + 1) * GRAIN).next_multiple_of(CACHE_LINE)
}

/// How many `stride`-byte slots a chunk holds: as many as fit in [`SLOT_BYTES`], at most
/// [`MAX_SLOTS`], at least one.
fn slots_per_chunk(stride: usize) -> usize {
    (SLOT_BYTES / stride).clamp(1, MAX_SLOTS)
}

/// Hands out the next slot of the thread's chunk of `stride`-byte slots, starting a chunk
/// when needed. Returns where the packet goes (after the slot's prefix).
fn carve(carving: &mut Option<Carving>, stride: usize) -> NonNull<u8> {
    if carving.as_ref().is_none_or(|c| c.next == c.slots) {
        let slots = slots_per_chunk(stride);
        *carving = Some(Carving {
            chunk: new_chunk(stride, slots),
            slots,
            next: 0,
        });
    }
    let carving = carving.as_mut().expect("a chunk was just made");
    let index = carving.next;
    carving.next += 1;
    // SAFETY: `index` is below the chunk's slot count, and the cursor hands each slot out once.
    unsafe { slot(carving.chunk, index) }
}

/// Drops the packet in place and gives its memory back.
///
/// # Safety
/// `packet` came from [`alloc_packet`] for this `T`, and nobody uses it afterwards.
pub(crate) unsafe fn free_packet<T>(packet: NonNull<T>) {
    if class_of::<T>().is_none() {
        // SAFETY: packets outside the size classes are boxed.
        drop(unsafe { Box::from_raw(packet.as_ptr()) });
        return;
    }
    // SAFETY: the caller hands the packet over; the prefix just before it names its chunk.
    unsafe {
        packet.as_ptr().drop_in_place();
        let prefix = packet.cast::<u8>().sub(PREFIX).cast::<NonNull<Chunk>>();
        release(prefix.read(), 1);
    }
}

/// Gives `n` slots of `chunk` back; the last one frees the chunk.
///
/// # Safety
/// The caller owns `n` of the chunk's live count.
unsafe fn release(chunk: NonNull<Chunk>, n: usize) {
    if n == 0 {
        return;
    }
    // SAFETY: the chunk lives while its count is above zero, and we hold `n` of it.
    let live = &unsafe { chunk.as_ref() }.live;
    // Release orders this slot's last use before the count drops; the last one's Acquire fence
    // orders every slot's uses before the free, as in `Arc`.
    if live.fetch_sub(n, Ordering::Release) == n {
        fence(Ordering::Acquire);
        // SAFETY: every slot is released, so nobody can reach the chunk; it was allocated with
        // this layout in `carve`.
        unsafe {
            let (stride, slots) = (chunk.as_ref().stride, chunk.as_ref().slots);
            dealloc(chunk.as_ptr().cast(), chunk_layout(stride, slots));
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    use std::sync::Arc;
    use std::sync::atomic::AtomicUsize as Counter;

    /// Counts its drops, so each test checks every packet is dropped exactly once.
    struct Counted(Arc<Counter>, #[allow(dead_code)] [u8; 40]);

    impl Drop for Counted {
        fn drop(&mut self) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn counted(drops: &Arc<Counter>) -> Counted {
        Counted(drops.clone(), [7; 40])
    }

    /// A packet moved to another thread to be freed there (a pointer, not its address, so
    /// Miri checks the free under strict provenance).
    struct Moved(NonNull<Counted>);

    // SAFETY: `Counted` is `Send`, and each packet is freed by one thread only.
    unsafe impl Send for Moved {}

    #[test]
    fn packets_carved_on_one_thread_are_freed_on_another() {
        let drops = Arc::new(Counter::new(0));
        let n = if cfg!(miri) { 70 } else { 1000 };
        let packets: Vec<Moved> = (0..n)
            .map(|_| Moved(alloc_packet(counted(&drops))))
            .collect();
        let freer = std::thread::spawn(move || {
            for Moved(packet) in packets {
                // SAFETY: each packet was allocated above and is freed once.
                unsafe { free_packet(packet) };
            }
        });
        freer.join().unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), n);
    }

    #[test]
    fn a_thread_that_ends_mid_chunk_gives_its_unhanded_slots_back() {
        let drops = Arc::new(Counter::new(0));
        let packets = {
            let drops = drops.clone();
            // Three slots of an 8-slot chunk; the thread ends holding the other 5.
            std::thread::spawn(move || {
                (0..3)
                    .map(|_| Moved(alloc_packet(counted(&drops))))
                    .collect::<Vec<_>>()
            })
            .join()
            .unwrap()
        };
        for Moved(packet) in packets {
            // SAFETY: allocated by the ended thread, freed once here; Miri checks the chunk is
            // freed by the last of these (no leak) and not before.
            unsafe { free_packet(packet) };
        }
        assert_eq!(drops.load(Ordering::SeqCst), 3);
    }

    #[test]
    fn a_chunk_of_any_class_is_at_most_640_bytes() {
        for class in 0..CLASSES {
            let stride = stride_of(class);
            let slots = slots_per_chunk(stride);
            assert!((1..=MAX_SLOTS).contains(&slots));
            assert!(chunk_layout(stride, slots).size() <= 640, "class {class}");
        }
        assert_eq!(slots_per_chunk(64), 8);
    }

    #[test]
    fn packets_outside_the_size_classes_are_boxed() {
        assert_eq!(class_of::<[u8; 1024]>(), None);
        assert_eq!(class_of::<()>(), None);
        assert_eq!(class_of::<u64>(), Some(0));
        assert_eq!(class_of::<[u8; 17]>(), Some(1));
        let packet = alloc_packet([1u8; 1024]);
        // SAFETY: allocated just above, freed once.
        unsafe { free_packet(packet) };
    }
}

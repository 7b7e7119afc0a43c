//! An async receive on a shared chan's port that waits at a segment's end, before the next
//! segment is linked, and so arms the *link*; the linker rings it; the re-poll moves on to the
//! new segment and finds its first slot not yet published. It used to keep the spent link arm
//! as if it stood on that slot (found by an adversarial review), so the slot was published with
//! no `WAITING` bit and nobody rang: the task was never woken. A watch now arms every time.
//!
//! To hold a linker inside its link deterministically, this binary's allocator stalls the one
//! allocation a marked thread makes (the new segment of `Queue::link_next`) until released.

mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread;

use common::task::{counting, poll_once, wakes};
use pipes_runtime::{SharedChan, stream};

struct Stalling;

thread_local! {
    /// Set on the thread whose next allocation stalls (const: no allocation to reach it).
    static STALL_NEXT: Cell<bool> = const { Cell::new(false) };
}
static STALLED: AtomicBool = AtomicBool::new(false);
static RELEASE: AtomicBool = AtomicBool::new(false);

// SAFETY: forwards to `System`; the stall only waits.
unsafe impl GlobalAlloc for Stalling {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if STALL_NEXT
            .try_with(|stall| stall.replace(false))
            .unwrap_or(false)
        {
            STALLED.store(true, Ordering::SeqCst);
            while !RELEASE.load(Ordering::SeqCst) {
                std::hint::spin_loop();
                thread::yield_now();
            }
        }
        // SAFETY: as the caller guarantees.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: as the caller guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Stalling = Stalling;

/// The send into the first slot of the segment whose link the task waited for wakes the task
/// (a real executor would never poll it again otherwise).
#[test]
fn an_async_receive_that_armed_a_link_is_woken_by_the_message_after_it() {
    let (mut port, chan) = stream::<u64>();
    let shared = SharedChan::new(chan);
    // The port takes the lane's hang-up and moves on to the queue.
    assert!(port.try_recv().is_err());
    // Segment 0, full; its first push linked segment 1.
    for i in 0..32 {
        shared.send(i).unwrap();
    }
    for i in 0..32 {
        assert_eq!(port.try_recv().unwrap(), i);
    }
    assert!(port.try_recv().is_err(), "at segment 1's first slot");

    // A producer whose push into segment 1's first slot publishes, then stalls in its link
    // duty (allocating segment 2).
    let linker = {
        let shared = shared.clone();
        thread::spawn(move || {
            STALL_NEXT.with(|stall| stall.set(true));
            shared.send(100).unwrap();
        })
    };
    while !STALLED.load(Ordering::SeqCst) {
        thread::yield_now();
    }
    // The rest of segment 1, from here; the port takes all of it.
    for i in 101..132 {
        shared.send(i).unwrap();
    }
    for i in 100..132 {
        assert_eq!(port.try_recv().unwrap(), i);
    }

    let (count, waker) = counting();
    {
        let mut receive = port.recv_async();
        // At segment 1's end, with no link yet: the watch arms the link.
        assert!(poll_once(&mut receive, &waker).is_pending());
        RELEASE.store(true, Ordering::SeqCst);
        linker.join().unwrap();
        assert_eq!(wakes(&count), 1, "the linker rang the armed link");
        // Woken, re-polled: segment 2 is linked, its first slot not yet published.
        assert!(poll_once(&mut receive, &waker).is_pending());
        shared.send(999).unwrap();
        assert_eq!(
            wakes(&count),
            2,
            "the message the task waits for was sent, and the task was not woken: lost wake-up"
        );
        assert_eq!(
            poll_once(&mut receive, &waker).map(Result::unwrap),
            std::task::Poll::Ready(999)
        );
    }
}

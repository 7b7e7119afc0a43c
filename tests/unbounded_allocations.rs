//! An unbounded protocol declared with `proto!` runs over two lanes allocated by `init()`, and
//! once their segments have gone round, nothing per message: a counting global allocator watches
//! bursts of sends drained by the peer, acknowledged round trips between them. One test per
//! binary, so no other test's allocations are counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

// SAFETY: defers to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        // SAFETY: the caller's contract is passed through.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: the caller's contract is passed through.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

pipes::proto! {
    // `Open` sends to itself: unbounded, so a session is two lanes.
    batches {
        Open: send { Item(u64) -> Open, Flush -> Flushed, Quit -> ! }
        Flushed: recv { Ack(u64) -> Open }
    }
}

/// Sends `rounds` bursts of 100 items (most of a segment: a lane keeps one spare, so a backlog
/// of up to a segment costs nothing), each acknowledged with the
/// sum of its items.
fn rounds(mut client: batches::client::Open, rounds: u64) -> batches::client::Open {
    for round in 0..rounds {
        for i in 0..100 {
            client = client.item(round + i).unwrap();
        }
        let batches::Flushed::Ack(sum, next) = client.flush().unwrap().recv().unwrap();
        assert_eq!(sum, (0..100).map(|i| round + i).sum::<u64>());
        client = next;
    }
    client
}

#[test]
fn unbounded_sessions_after_warm_up_allocate_nothing_per_message() {
    let (server, client) = batches::init();
    let summer = thread::spawn(move || {
        let mut server = server;
        let mut sum = 0;
        loop {
            match server.recv().unwrap() {
                batches::Open::Item(n, next) => {
                    sum += n;
                    server = next;
                }
                batches::Open::Flush(flushed) => {
                    server = flushed.ack(std::mem::take(&mut sum)).unwrap();
                }
                batches::Open::Quit => return,
            }
        }
    });
    // Warm up: the lanes' segments go round once and each thread's waiter is made.
    let client = rounds(client, 5);
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    let client = rounds(client, 100);
    let allocations = ALLOCATIONS.load(Ordering::SeqCst) - before;
    client.quit().unwrap();
    summer.join().unwrap();
    assert_eq!(
        allocations, 0,
        "10,000 messages and 100 round trips allocated {allocations} times"
    );
}

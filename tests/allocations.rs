//! Protocols declared with `proto!` allocate their sessions in `init()` and nothing per
//! message: a counting global allocator watches a bounded protocol's round trips (one session
//! buffer) and an unbounded one's bursts (two lanes, whose segments go round). Only the threads
//! of a test count (`count_this_thread`), and the tests take turns (`SERIAL`), so no test counts
//! another's allocations, nor the harness's (libtest records a finished test, its name
//! included, on that test's thread after the test released `SERIAL`: under load, inside the
//! next test's count).

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

struct Counting;

static ALLOCATIONS: AtomicUsize = AtomicUsize::new(0);

thread_local! {
    /// Whether this thread's allocations count.
    static COUNTED: Cell<bool> = const { Cell::new(false) };
}

/// Counts the allocations of the calling thread from now on.
fn count_this_thread() {
    COUNTED.set(true);
}

// SAFETY: defers to the system allocator and only counts.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if COUNTED.try_with(Cell::get).unwrap_or(false) {
            ALLOCATIONS.fetch_add(1, Ordering::SeqCst);
        }
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

/// Held by each test while it runs, so the counts are its own.
static SERIAL: Mutex<()> = Mutex::new(());

pipes::proto! {
    pingpong {
        Ping: send { Ping(u64) -> Pong, Quit -> ! }
        Pong: recv { Pong(u64) -> Ping }
    }
}

#[test]
fn bounded_round_trips_after_init_allocate_nothing() {
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    count_this_thread();
    let settle = Duration::from_millis(30);
    let (server, client) = pingpong::init();
    let echo = thread::spawn(move || {
        count_this_thread();
        let mut server = server;
        let mut first = true;
        loop {
            match server.recv().unwrap() {
                pingpong::Ping::Ping(n, pong) => {
                    if std::mem::take(&mut first) {
                        // Make the client park once, so its waiter exists before counting.
                        thread::sleep(settle);
                    }
                    server = pong.pong(n + 1).unwrap();
                }
                pingpong::Ping::Quit => return,
            }
        }
    });
    // Warm up: each thread parks once, creating its lazily made waiter; then count.
    let pingpong::Pong::Pong(_, client) = client.ping(0).unwrap().recv().unwrap();
    thread::sleep(settle);
    let pingpong::Pong::Pong(_, mut client) = client.ping(0).unwrap().recv().unwrap();
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    for i in 0..1000 {
        let pingpong::Pong::Pong(n, next) = client.ping(i).unwrap().recv().unwrap();
        assert_eq!(n, i + 1);
        client = next;
    }
    let allocations = ALLOCATIONS.load(Ordering::SeqCst) - before;
    client.quit().unwrap();
    echo.join().unwrap();
    assert_eq!(
        allocations, 0,
        "1000 round trips allocated {allocations} times"
    );
}

/// Makes the calling thread's waiter, which a thread allocates at its first park: waits out a
/// timeout on an empty stream, which spins for at most its budget (200 µs) and then parks.
fn make_waiter() {
    let (port, _chan) = pipes::stream::<()>();
    assert!(port.recv_timeout(Duration::from_millis(5)).is_err());
}

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
    let _serial = SERIAL
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner());
    count_this_thread();
    let (server, client) = batches::init();
    let summer = thread::spawn(move || {
        count_this_thread();
        make_waiter();
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
    // Warm up: each thread's waiter is made (the rounds alone may all be caught spinning and
    // leave it to a park under load, inside the count), and the lanes' segments go round.
    make_waiter();
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

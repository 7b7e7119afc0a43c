//! A bounded protocol declared with `proto!` allocates its session buffer in `init()` and
//! nothing per message: a counting global allocator watches a thousand round trips. One test
//! per binary, so no other test's allocations are counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

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
    pingpong {
        Ping: send { Ping(u64) -> Pong, Quit -> ! }
        Pong: recv { Pong(u64) -> Ping }
    }
}

#[test]
fn bounded_round_trips_after_init_allocate_nothing() {
    let settle = Duration::from_millis(30);
    let (server, client) = pingpong::init();
    let echo = thread::spawn(move || {
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

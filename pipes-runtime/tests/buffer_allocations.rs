//! A bounded protocol allocates its session buffer once, in `init()`, and nothing per message:
//! a counting global allocator watches a thousand round trips. One test per binary, so no other
//! test's allocations are counted.

mod common;

use std::sync::atomic::Ordering;
use std::thread;

use common::counting::{ALLOCATIONS, Counting};
use common::pingpong::{self, Ping};
use common::{SETTLE, size};

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn round_trips_after_init_allocate_nothing() {
    let (server, client) = pingpong::init::<u64>();
    let n = size(1_000, 20) as u64;
    let echo = thread::spawn(move || {
        let mut server = server;
        let mut first = true;
        loop {
            match server.recv().ok().unwrap() {
                Ping::Ping(x, pong) => {
                    if std::mem::take(&mut first) {
                        // Make the client park once, so its waiter exists before counting.
                        thread::sleep(SETTLE);
                    }
                    server = pong.pong(x + 1).ok().unwrap();
                }
                Ping::Bye => return,
            }
        }
    });
    // Warm up: each thread parks once, creating its lazily made waiter; then count.
    let (_, client) = client.ping(0).ok().unwrap().recv().unwrap();
    thread::sleep(SETTLE);
    let (_, mut client) = client.ping(0).ok().unwrap().recv().unwrap();
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    for i in 0..n {
        let (x, ping) = client.ping(i).ok().unwrap().recv().unwrap();
        assert_eq!(x, i + 1);
        client = ping;
    }
    let allocations = ALLOCATIONS.load(Ordering::SeqCst) - before;
    client.bye().unwrap();
    echo.join().unwrap();
    assert_eq!(
        allocations, 0,
        "{n} round trips allocated {allocations} times"
    );
}

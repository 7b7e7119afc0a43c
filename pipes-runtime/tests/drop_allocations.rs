//! Dropping a backlog allocates nothing once the thread's drop queue has its buffer: a
//! counting global allocator watches the drop. One test per binary, so no other test's
//! allocations are counted.

mod common;

use std::sync::atomic::Ordering;

use common::counting::{ALLOCATIONS, Counting};
use common::size;

#[global_allocator]
static GLOBAL: Counting = Counting;

pipes_runtime::proto! {
    ticks {
        Tick: send { Tick(u64) -> Tick }
    }
}

/// A backlog of `n` ticks, its receiving end and the sending end after it.
fn backlog(n: u64) -> (ticks::server::Tick, ticks::client::Tick) {
    let (server, client) = ticks::init();
    let mut client = client;
    for i in 0..n {
        client = client.tick(i).unwrap();
    }
    (server, client)
}

#[test]
fn dropping_a_backlog_allocates_nothing_after_the_first() {
    // Warm up: the first drop on this thread gives its queue a buffer.
    drop(backlog(10));
    let (server, client) = backlog(size(100_000, 100) as u64);
    let before = ALLOCATIONS.load(Ordering::SeqCst);
    drop(server);
    assert_eq!(ALLOCATIONS.load(Ordering::SeqCst), before);
    drop(client);
}

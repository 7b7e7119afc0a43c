//! A stream whose port keeps up allocates nothing per message (its lane recycles segments), and
//! a backlog of `u64`s costs about 8 bytes a message and an allocation per 4096. A counting global allocator watches; one
//! test per binary, so no other test's allocations are counted.

mod common;

use std::sync::atomic::Ordering;

use common::counting::{Counting, LIVE_BYTES, thread_allocations};
use common::size;

#[global_allocator]
static GLOBAL: Counting = Counting;

#[test]
fn a_stream_that_keeps_up_allocates_nothing_and_a_backlog_costs_eight_bytes_a_message() {
    let (port, chan) = pipes_runtime::stream::<u64>();
    // Warm-up: the lane's second segment is allocated once, then the two take turns.
    for round in 0..4 {
        for i in 0..300 {
            chan.send(round * 1000 + i).unwrap();
        }
        for i in 0..300 {
            assert_eq!(port.recv().unwrap(), round * 1000 + i);
        }
    }
    let before = thread_allocations();
    let rounds = size(1000, 20) as u64;
    for round in 0..rounds {
        for i in 0..100 {
            chan.send(round * 100 + i).unwrap();
        }
        for i in 0..100 {
            assert_eq!(port.recv().unwrap(), round * 100 + i);
        }
    }
    assert_eq!(
        thread_allocations() - before,
        0,
        "{} messages in steady state",
        rounds * 100
    );

    // Miri: enough for every segment size (the last one, 4096 slots, part filled).
    let n = size(1_000_000, 5_000) as u64;
    let before = LIVE_BYTES.load(Ordering::SeqCst);
    let allocations = thread_allocations();
    for i in 0..n {
        chan.send(i).unwrap();
    }
    let backlog = LIVE_BYTES.load(Ordering::SeqCst) - before;
    // Segments grow to 32 KiB (4096 `u64`s) as the backlog does: a malloc and a free per 4096
    // messages, not per 256.
    let allocations = thread_allocations() - allocations;
    assert!(
        allocations <= n as usize / 4096 + 8,
        "a backlog of {n} u64s took {allocations} allocations"
    );
    // 8 bytes of payload, a segment header and the allocator's own per segment, and at most one
    // segment's worth (32 KiB) not yet filled.
    assert!(
        backlog <= n as usize * 9 + 32 * 1024,
        "a backlog of {n} u64s holds {backlog} bytes"
    );
    eprintln!("a backlog of {n} u64s holds {backlog} bytes");
    assert_eq!(port.try_iter().count(), n as usize);
}

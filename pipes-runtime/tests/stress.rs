//! Stress: many messages and many threads, every message counted.

mod common;

use std::thread;

use common::size;
use pipes_runtime::{ChanOne, oneshot, stream};

#[test]
fn a_million_messages_over_one_stream_in_order() {
    let n = size(1_000_000, 1_000) as u64;
    let (port, chan) = stream();
    let sender = thread::spawn(move || {
        for i in 0..n {
            chan.send(i).unwrap();
        }
    });
    let mut expected = 0;
    for i in port {
        assert_eq!(i, expected);
        expected += 1;
    }
    assert_eq!(expected, n);
    sender.join().unwrap();
}

/// A ball in a game of catch: a count and where to throw it back.
struct Ball(u64, ChanOne<Ball>);

#[test]
fn sixty_four_threads_each_doing_oneshot_round_trips() {
    let threads = size(64, 4);
    let round_trips = size(10_000, 20) as u64;
    let mut handles = Vec::new();
    for _ in 0..threads / 2 {
        let (first_port, first_chan) = oneshot::<Ball>();
        // Serves: catches the ball and throws it back one higher, on a fresh oneshot each time.
        handles.push(thread::spawn(move || {
            let mut port = first_port;
            for _ in 0..round_trips {
                let Ball(n, back) = port.recv().unwrap();
                let (next_port, next_chan) = oneshot();
                back.send(Ball(n + 1, next_chan)).ok().unwrap();
                port = next_port;
            }
            port
        }));
        // Throws: each round trip adds one, so the count proves none was lost.
        handles.push(thread::spawn(move || {
            let mut chan = first_chan;
            let mut count = 0;
            for _ in 0..round_trips {
                let (port, back) = oneshot();
                chan.send(Ball(count, back)).ok().unwrap();
                let Ball(n, next) = port.recv().unwrap();
                assert_eq!(n, count + 1);
                count = n;
                chan = next;
            }
            drop(chan);
            // Keep the pair's types the same for the vector of handles.
            oneshot::<Ball>().0
        }));
    }
    for handle in handles {
        handle.join().unwrap();
    }
}

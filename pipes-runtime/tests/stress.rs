//! Stress: many messages and many threads, every message counted.

mod common;

use std::thread;

use common::size;
use pipes_runtime::{ChanOne, PortSet, SharedChan, oneshot, stream};

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

/// Senders and messages for the many-senders tests: 16 x 100,000, shrunk under Miri.
fn senders_and_messages() -> (usize, u64) {
    (size(16, 3), size(100_000, 30) as u64)
}

/// Checks that every sender's messages arrived, all of them, in the order it sent them.
fn check_per_sender_order(received: impl Iterator<Item = (usize, u64)>, senders: usize, n: u64) {
    let mut next = vec![0u64; senders];
    for (sender, i) in received {
        assert_eq!(i, next[sender], "sender {sender} out of order");
        next[sender] += 1;
    }
    assert!(
        next.iter().all(|&count| count == n),
        "lost messages: {next:?}"
    );
}

#[test]
fn sixteen_senders_into_a_port_set_none_lost_each_in_order() {
    let (senders, n) = senders_and_messages();
    let set = PortSet::new();
    let handles: Vec<_> = (0..senders)
        .map(|s| {
            let chan = set.chan();
            thread::spawn(move || {
                for i in 0..n {
                    chan.send((s, i)).unwrap();
                }
            })
        })
        .collect();
    check_per_sender_order(set.iter(), senders, n);
    for handle in handles {
        handle.join().unwrap();
    }
}

#[test]
fn sixteen_senders_into_a_shared_chan_none_lost_each_in_order() {
    let (senders, n) = senders_and_messages();
    let (port, chan) = stream();
    let chan = SharedChan::new(chan);
    let handles: Vec<_> = (0..senders)
        .map(|s| {
            let chan = chan.clone();
            thread::spawn(move || {
                for i in 0..n {
                    chan.send((s, i)).unwrap();
                }
            })
        })
        .collect();
    drop(chan);
    check_per_sender_order(port.iter(), senders, n);
    for handle in handles {
        handle.join().unwrap();
    }
}

/// Senders that pause now and then, so the set keeps parking and ports keep being watched and
/// woken, across many ports.
#[test]
fn bursty_senders_into_a_port_set_of_many_ports() {
    let senders = size(8, 2);
    let ports_each = size(64, 3);
    let n = size(5_000, 20) as u64;
    let set = PortSet::new();
    let handles: Vec<_> = (0..senders)
        .map(|s| {
            let chans: Vec<_> = (0..ports_each).map(|_| set.chan()).collect();
            thread::spawn(move || {
                for i in 0..n {
                    // Every message of a sender on the same chan keeps its order checkable.
                    chans[0].send((s, i)).unwrap();
                    chans[(i as usize) % ports_each]
                        .send((usize::MAX, i))
                        .unwrap();
                    if i % 512 == 0 {
                        thread::sleep(std::time::Duration::from_micros(200));
                    }
                }
            })
        })
        .collect();
    let mut extra = 0u64;
    check_per_sender_order(
        set.iter().filter(|&(s, _)| {
            extra += u64::from(s == usize::MAX);
            s != usize::MAX
        }),
        senders,
        n,
    );
    assert_eq!(extra, senders as u64 * n);
    for handle in handles {
        handle.join().unwrap();
    }
}

/// Selects that block and wake over and over while the senders race them.
#[test]
fn select_over_streams_fed_by_racing_senders() {
    let streams = 4;
    let n = size(20_000, 30) as u64;
    let (ports, chans): (Vec<_>, Vec<_>) = (0..streams).map(|_| stream::<u64>()).unzip();
    let handles: Vec<_> = chans
        .into_iter()
        .map(|chan| {
            thread::spawn(move || {
                for i in 0..n {
                    chan.send(i).unwrap();
                }
            })
        })
        .collect();
    let mut next = vec![0u64; streams];
    let mut open: Vec<usize> = (0..streams).collect();
    while !open.is_empty() {
        let refs: Vec<&pipes_runtime::Port<u64>> = open.iter().map(|&i| &ports[i]).collect();
        let (k, message, _) = pipes_runtime::select(refs);
        match message {
            Ok(i) => {
                assert_eq!(i, next[open[k]]);
                next[open[k]] += 1;
            }
            Err(_) => {
                open.remove(k);
            }
        }
    }
    assert!(next.iter().all(|&count| count == n));
    for handle in handles {
        handle.join().unwrap();
    }
}

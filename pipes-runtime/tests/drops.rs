//! Every message is dropped exactly once on every path: received, never received, and handed
//! back from a dropped receiver.

mod common;

use std::thread;

use common::{DropCounter, size};
use pipes_runtime::{oneshot, stream};

#[test]
fn oneshot_sent_and_received() {
    let counter = DropCounter::default();
    let (port, chan) = oneshot();
    chan.send(counter.make(1)).unwrap();
    let message = port.recv().unwrap();
    assert_eq!(counter.drops(), 0);
    drop(message);
    assert_eq!(counter.drops(), 1);
}

#[test]
fn oneshot_handed_back_from_a_dropped_receiver() {
    let counter = DropCounter::default();
    let (port, chan) = oneshot();
    drop(port);
    let error = chan.send(counter.make(1)).unwrap_err();
    assert_eq!(counter.drops(), 0);
    assert_eq!(error.0.value, 1);
    drop(error);
    assert_eq!(counter.drops(), 1);
}

#[test]
fn oneshot_never_sent_drops_nothing() {
    let counter = DropCounter::default();
    let (port, chan) = oneshot::<common::Counted>();
    drop(chan);
    assert!(port.recv().is_err());
    assert_eq!(counter.drops(), 0);
}

#[test]
fn stream_received_never_received_and_handed_back() {
    let counter = DropCounter::default();
    let (port, chan) = stream();
    for i in 0..10 {
        chan.send(counter.make(i)).unwrap();
    }
    // Received: dropped by the receiver's code.
    for i in 0..4 {
        assert_eq!(port.recv().unwrap().value, i);
    }
    assert_eq!(counter.drops(), 4);
    // Never received: dropped with the port.
    drop(port);
    assert_eq!(counter.drops(), 10);
    // Handed back: dropped by the sender's code.
    let unsent = chan.send(counter.make(10)).unwrap_err();
    assert_eq!(counter.drops(), 10);
    drop(unsent);
    assert_eq!(counter.drops(), 11);
}

#[test]
fn a_long_backlog_drops_without_recursion() {
    // Each queued message holds the rest of the stream; dropping must not recurse per message.
    let counter = DropCounter::default();
    let n = size(200_000, 200);
    let (port, chan) = stream();
    for i in 0..n {
        chan.send(counter.make(i as u64)).unwrap();
    }
    drop(chan);
    drop(port);
    assert_eq!(counter.drops(), n);
}

#[test]
fn across_threads_every_message_is_dropped_once() {
    let counter = DropCounter::default();
    let n = size(10_000, 100);
    let (port, chan) = stream();
    let sender = {
        let counter = counter.clone();
        thread::spawn(move || {
            let mut handed_back = 0;
            for i in 0..n {
                if chan.send(counter.make(i as u64)).is_err() {
                    handed_back += 1;
                }
            }
            handed_back
        })
    };
    // Receive half, then hang up while the sender may still be sending.
    for i in 0..n / 2 {
        assert_eq!(port.recv().unwrap().value, i as u64);
    }
    drop(port);
    let handed_back = sender.join().unwrap();
    assert!(handed_back <= n / 2);
    assert_eq!(counter.drops(), n);
}

//! Every message is dropped exactly once on every path: received, never received, and handed
//! back from a dropped receiver.

mod common;

use std::thread;

use common::{DropCounter, size};
use pipes_runtime::{PortSet, SharedChan, oneshot, select::select_timeout, stream};

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

#[test]
fn port_set_dropped_with_messages_in_listed_and_watched_ports() {
    let counter = DropCounter::default();
    let set = PortSet::new();
    let chans: Vec<_> = (0..4).map(|_| set.chan()).collect();
    chans[0].send(counter.make(0)).unwrap();
    drop(set.recv().unwrap());
    // Looks at every port: all empty now, so all are watched.
    assert!(set.try_recv().is_err());
    // Stranded in ports whose waiter these sends swap out; ports 2 and 3 stay watched, so the
    // drop takes their waiters back.
    chans[1].send(counter.make(1)).unwrap();
    chans[0].send(counter.make(2)).unwrap();
    chans[0].send(counter.make(3)).unwrap();
    assert_eq!(counter.drops(), 1);
    drop(set);
    assert_eq!(counter.drops(), 4);
    // The chans see the set is gone and hand messages back.
    let back = chans[2].send(counter.make(4)).unwrap_err();
    assert_eq!(counter.drops(), 4);
    drop(back);
    assert_eq!(counter.drops(), 5);
}

#[test]
fn port_set_dropped_while_senders_race_it() {
    let counter = DropCounter::default();
    let n = size(2_000, 20) as u64;
    let set = PortSet::new();
    let handles: Vec<_> = (0..4)
        .map(|_| {
            let chan = set.chan();
            let counter = counter.clone();
            thread::spawn(move || {
                let mut sent = 0usize;
                for i in 0..n {
                    match chan.send(counter.make(i)) {
                        Ok(()) => sent += 1,
                        Err(back) => drop(back),
                    }
                }
                sent
            })
        })
        .collect();
    let mut received = 0;
    while received < 10 {
        drop(set.recv().unwrap());
        received += 1;
    }
    drop(set);
    let sent: usize = handles.into_iter().map(|h| h.join().unwrap()).sum();
    assert!(sent >= received);
    assert_eq!(counter.drops(), 4 * n as usize);
}

#[test]
fn shared_chan_hands_back_and_a_dropped_port_drops_the_backlog() {
    let counter = DropCounter::default();
    let (port, chan) = stream();
    let chan = SharedChan::new(chan);
    for i in 0..5 {
        chan.clone().send(counter.make(i)).unwrap();
    }
    drop(port);
    assert_eq!(counter.drops(), 5);
    let back = chan.send(counter.make(5)).unwrap_err();
    assert_eq!(counter.drops(), 5);
    drop(back);
    assert_eq!(counter.drops(), 6);
}

#[test]
fn select_receives_one_and_the_rest_keep_their_messages() {
    let counter = DropCounter::default();
    let (ports, chans): (Vec<_>, Vec<_>) = (0..3).map(|_| oneshot()).unzip();
    for (i, chan) in chans.into_iter().enumerate() {
        chan.send(counter.make(i as u64)).unwrap();
    }
    let (_, message, rest) = select_timeout(ports, std::time::Duration::ZERO).unwrap();
    drop(message);
    assert_eq!(counter.drops(), 1);
    drop(rest);
    assert_eq!(counter.drops(), 3);
}

//! Shared chans: cloned senders into one port, the message handed back once the port is gone.

mod common;

use std::thread;

use common::size;
use pipes_runtime::{SharedChan, stream};

#[test]
fn clones_send_into_one_port_in_per_sender_order() {
    let (port, chan) = stream::<(usize, usize)>();
    let chan = SharedChan::new(chan);
    let senders = size(4, 2);
    let each = size(1000, 20);
    let handles: Vec<_> = (0..senders)
        .map(|s| {
            let chan = chan.clone();
            thread::spawn(move || {
                for i in 0..each {
                    chan.send((s, i)).unwrap();
                }
            })
        })
        .collect();
    drop(chan);
    let mut next = vec![0; senders];
    for (s, i) in port {
        assert_eq!(i, next[s]);
        next[s] += 1;
    }
    assert!(next.iter().all(|&n| n == each));
    for handle in handles {
        handle.join().unwrap();
    }
}

#[test]
fn send_hands_the_message_back_once_the_port_is_gone() {
    let (port, chan) = stream::<String>();
    let chan = SharedChan::from(chan);
    let other = chan.clone();
    chan.send("kept".into()).unwrap();
    drop(port);
    assert_eq!(chan.send("a".into()).unwrap_err().into_inner(), "a");
    assert_eq!(other.send("b".into()).unwrap_err().into_inner(), "b");
}

#[test]
fn the_port_ends_when_the_last_clone_is_dropped() {
    let (port, chan) = stream::<u8>();
    let chan = SharedChan::new(chan);
    let other = chan.clone();
    chan.send(1).unwrap();
    drop(chan);
    other.send(2).unwrap();
    assert_eq!(port.recv().unwrap(), 1);
    assert_eq!(port.recv().unwrap(), 2);
    assert_eq!(port.try_recv(), Err(pipes_runtime::TryRecvError::Empty(())));
    drop(other);
    assert!(port.recv().is_err());
}

#[test]
fn a_shared_chan_can_feed_a_port_set() {
    let set = pipes_runtime::PortSet::new();
    let shared = SharedChan::new(set.chan());
    let plain = set.chan();
    let handle = {
        let shared = shared.clone();
        thread::spawn(move || shared.send(1u8).unwrap())
    };
    plain.send(2).unwrap();
    drop((shared, plain));
    handle.join().unwrap();
    let mut got: Vec<u8> = set.iter().collect();
    got.sort();
    assert_eq!(got, [1, 2]);
}

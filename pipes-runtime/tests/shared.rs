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

/// What the chan sent before it was shared arrives first, then what the shared chan sends.
#[test]
fn messages_sent_before_sharing_come_first() {
    let (port, chan) = stream::<u32>();
    for i in 0..100 {
        chan.send(i).unwrap();
    }
    let shared = SharedChan::new(chan);
    for i in 100..200 {
        shared.send(i).unwrap();
    }
    drop(shared);
    assert_eq!(
        port.iter().collect::<Vec<_>>(),
        (0..200).collect::<Vec<_>>()
    );
}

/// A port dropped before its chan is shared: the shared chan's sends hand their messages back.
#[test]
fn sharing_a_chan_whose_port_is_gone_hands_messages_back() {
    let (port, chan) = stream::<String>();
    drop(port);
    let shared = SharedChan::new(chan);
    let error = shared.send("lost".to_string()).unwrap_err();
    assert_eq!(error.0, "lost");
    // And the other way round: the port goes after the sharing.
    let (port, chan) = stream::<String>();
    let shared = SharedChan::new(chan);
    shared.send("queued".to_string()).unwrap();
    drop(port);
    assert_eq!(shared.send("late".to_string()).unwrap_err().0, "late");
}

/// A send that happens before another (here: the first sender tells the second, through a
/// oneshot, that it has sent) is received first, across senders (std's, crossbeam's and Go's
/// order).
#[test]
fn a_send_that_happens_before_another_is_received_first() {
    let rounds = size(2000, 50) as u32;
    let (port, chan) = stream::<(u32, u8)>();
    let shared = SharedChan::new(chan);
    for round in 0..rounds {
        let (told, tell) = pipes_runtime::oneshot::<()>();
        let first = {
            let shared = shared.clone();
            thread::spawn(move || {
                shared.send((round, 1)).unwrap();
                tell.send(()).unwrap();
            })
        };
        let second = {
            let shared = shared.clone();
            thread::spawn(move || {
                told.recv().unwrap();
                shared.send((round, 2)).unwrap();
            })
        };
        assert_eq!(port.recv().unwrap(), (round, 1));
        assert_eq!(port.recv().unwrap(), (round, 2));
        first.join().unwrap();
        second.join().unwrap();
    }
}

/// A shared chan's port in select, with a timeout, beside a plain stream, and in an async
/// receive: each waits on the shared chan's queue and is woken by its sender.
#[test]
fn a_shared_chans_port_selects_and_receives_async() {
    use common::task::block_on;
    use pipes_runtime::{
        select::{Selectable, selecti_timeout},
        selecti,
    };
    use std::time::Duration;

    let (mut port, chan) = stream::<u8>();
    let shared = SharedChan::new(chan);
    let (other, _other_chan) = stream::<u8>();
    assert_eq!(
        selecti_timeout(&[&port, &other], Duration::from_millis(20)),
        None
    );
    let sender = {
        let shared = shared.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            shared.send(7).unwrap();
        })
    };
    let endpoints: [&dyn Selectable; 2] = [&other, &port];
    assert_eq!(selecti(&endpoints), 1);
    assert_eq!(port.recv().unwrap(), 7);
    sender.join().unwrap();

    let sender = {
        let shared = shared.clone();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(20));
            shared.send(8).unwrap();
        })
    };
    assert_eq!(block_on(port.recv_async()).unwrap(), 8);
    sender.join().unwrap();
    drop(shared);
    assert!(block_on(port.recv_async()).is_err());
}

/// Port sets watch a shared chan's port as any other: its senders wake the set.
#[test]
fn a_port_set_sleeps_on_a_shared_chans_port() {
    let set = pipes_runtime::PortSet::new();
    let shared = SharedChan::new(set.chan());
    let senders: Vec<_> = (0..4u64)
        .map(|i| {
            let shared = shared.clone();
            thread::spawn(move || {
                for j in 0..size(1000, 10) as u64 {
                    if j % 100 == 0 {
                        thread::sleep(std::time::Duration::from_millis(1));
                    }
                    shared.send(i * 1_000_000 + j).unwrap();
                }
            })
        })
        .collect();
    drop(shared);
    let got: Vec<u64> = set.iter().collect();
    assert_eq!(got.len(), 4 * size(1000, 10));
    for sender in senders {
        sender.join().unwrap();
    }
}

/// A select waiting on a port whose chan becomes a shared chan meanwhile keeps waiting (the
/// lane's hang-up is not the end of the stream) and reports the port once a message is there.
#[test]
fn a_select_waiting_while_the_chan_is_shared_reports_the_port_with_its_message() {
    use pipes_runtime::selecti;
    use std::time::Duration;

    let (port, chan) = stream::<u8>();
    let (other, _other_chan) = stream::<u8>();
    let sharer = thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        let shared = SharedChan::new(chan);
        thread::sleep(Duration::from_millis(20));
        shared.send(5).unwrap();
        shared
    });
    assert_eq!(selecti(&[&other, &port]), 1);
    assert_eq!(port.try_recv().unwrap(), 5);
    drop(sharer.join().unwrap());
    assert!(port.recv().is_err());
}

//! Port sets: many ports received from as one. Order per chan, no starvation, the end of the
//! set, timeouts, and ports added while others wait.

mod common;

use std::thread;
use std::time::Duration;

use common::{SETTLE, size};
use pipes_runtime::{PortSet, RecvTimeoutError, TryRecvError, stream};

#[test]
fn an_empty_set_fails_at_once() {
    let set = PortSet::<u8>::new();
    assert!(set.is_empty());
    assert!(set.recv().is_err());
    assert!(matches!(set.try_recv(), Err(TryRecvError::Disconnected(_))));
    assert!(matches!(
        set.recv_timeout(Duration::from_secs(60)),
        Err(RecvTimeoutError::Disconnected(_))
    ));
}

#[test]
fn messages_from_one_chan_stay_in_order_and_the_set_ends_with_its_last_chan() {
    let set = PortSet::new();
    let chans: Vec<_> = (0..3).map(|_| set.chan()).collect();
    for i in 0..10u32 {
        for (c, chan) in chans.iter().enumerate() {
            chan.send((c, i)).unwrap();
        }
    }
    drop(chans);
    let mut next = [0u32; 3];
    for (c, i) in &set {
        assert_eq!(i, next[c]);
        next[c] += 1;
    }
    assert_eq!(next, [10; 3]);
    assert!(set.recv().is_err());
    assert_eq!(set.len(), 0);
}

#[test]
fn recv_fails_only_once_every_chan_is_dropped_and_every_message_taken() {
    let set = PortSet::new();
    let a = set.chan();
    let b = set.chan();
    a.send(1u8).unwrap();
    drop(a);
    assert_eq!(set.recv().unwrap(), 1);
    assert!(matches!(set.try_recv(), Err(TryRecvError::Empty(()))));
    assert_eq!(set.len(), 1, "a's hang-up was seen, b's chan lives");
    b.send(2).unwrap();
    drop(b);
    assert_eq!(set.recv().unwrap(), 2);
    assert!(set.recv().is_err());
}

#[test]
fn a_blocked_recv_is_woken_by_any_port_and_by_the_last_hang_up() {
    let set = PortSet::new();
    let chans: Vec<_> = (0..size(50, 5)).map(|_| set.chan()).collect();
    let sender = thread::spawn(move || {
        thread::sleep(SETTLE);
        chans[3].send(3u32).unwrap();
        thread::sleep(SETTLE);
        drop(chans);
    });
    assert_eq!(set.recv().unwrap(), 3);
    assert!(set.recv().is_err());
    sender.join().unwrap();
}

#[test]
fn recv_timeout_times_out_then_still_receives() {
    let set = PortSet::new();
    let chan = set.chan();
    assert!(matches!(
        set.recv_timeout(Duration::from_millis(5)),
        Err(RecvTimeoutError::Timeout(()))
    ));
    let sender = thread::spawn(move || {
        thread::sleep(SETTLE);
        chan.send(5u8).unwrap();
    });
    assert_eq!(set.recv_timeout(Duration::from_secs(60)).unwrap(), 5);
    sender.join().unwrap();
    assert!(matches!(
        set.recv_timeout(Duration::from_secs(60)),
        Err(RecvTimeoutError::Disconnected(_))
    ));
}

#[test]
fn ports_added_while_the_set_is_in_use_join_it() {
    let set = PortSet::new();
    let first = set.chan();
    first.send(1u8).unwrap();
    assert_eq!(set.recv().unwrap(), 1);
    let (port, chan) = stream();
    chan.send(2).unwrap();
    set.add(port);
    assert_eq!(set.recv().unwrap(), 2);
    drop(first);
    drop(chan);
    assert!(set.recv().is_err());
    // A slot freed by a hung-up port is reused by the next one.
    let again = set.chan();
    again.send(3).unwrap();
    assert_eq!(set.recv().unwrap(), 3);
}

/// Fairness: two ports that are always ready are both served, in turn.
#[test]
fn two_always_ready_ports_are_both_served() {
    let set = PortSet::new();
    let a = set.chan();
    let b = set.chan();
    let rounds = size(1000, 20);
    for _ in 0..rounds {
        a.send('a').unwrap();
        b.send('b').unwrap();
    }
    let got: Vec<char> = (0..rounds).map(|_| set.recv().unwrap()).collect();
    let from_a = got.iter().filter(|&&c| c == 'a').count();
    assert_eq!(from_a, rounds / 2, "round-robin serves each in turn");
}

/// A port that a sender wakes is served within one round, even while two others stay ready.
#[test]
fn a_woken_port_is_not_starved_by_ports_that_stay_ready() {
    let set = PortSet::new();
    let quiet = set.chan();
    let a = set.chan();
    let b = set.chan();
    a.send('a').unwrap();
    // Looks at every port once: `quiet` is empty, so it is watched from now on.
    assert_eq!(set.recv().unwrap(), 'a');
    for _ in 0..100 {
        a.send('a').unwrap();
        b.send('b').unwrap();
    }
    quiet.send('q').unwrap();
    let next: Vec<char> = (0..3).map(|_| set.recv().unwrap()).collect();
    assert!(next.contains(&'q'), "got {next:?}");
}

#[test]
fn ten_thousand_ports_one_message_each() {
    let n = size(10_000, 50);
    let set = PortSet::new();
    let chans: Vec<_> = (0..n).map(|_| set.chan()).collect();
    // Every port is watched once this times out.
    assert!(set.recv_timeout(Duration::from_millis(1)).is_err());
    let sender = thread::spawn(move || {
        for (i, chan) in chans.iter().enumerate().rev() {
            chan.send(i).unwrap();
        }
    });
    let mut seen = vec![false; n];
    for _ in 0..n {
        let i = set.recv().unwrap();
        assert!(!seen[i]);
        seen[i] = true;
    }
    sender.join().unwrap();
    assert!(set.recv().is_err());
}

#[test]
fn a_port_set_can_move_to_another_thread_between_receives() {
    let set = PortSet::new();
    let chan = set.chan();
    chan.send(1u8).unwrap();
    assert_eq!(set.recv().unwrap(), 1);
    let receiver = thread::spawn(move || set.recv().unwrap());
    thread::sleep(SETTLE);
    chan.send(2).unwrap();
    assert_eq!(receiver.join().unwrap(), 2);
}

#[test]
fn the_owned_iterator_ends_with_the_chans() {
    let set = PortSet::new();
    let chan = set.chan();
    let sender = thread::spawn(move || {
        for i in 0..100u32 {
            chan.send(i).unwrap();
        }
    });
    assert_eq!(set.sum::<u32>(), 4950);
    sender.join().unwrap();
}

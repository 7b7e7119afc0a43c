//! Ports whose chans became shared chans (a lane's backlog, then a queue's), in port sets and
//! selects, over panicking payloads and timed-out waits: probes of an adversarial review that
//! held, kept as regression tests.

mod common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use common::bombs::{panic_message, quiet_bombs};
use common::task::{counting, poll_once, wakes};
use common::{DropCounter, forget, size};
use pipes_runtime::{PortSet, SharedChan, stream};

/// A payload that counts its drops and panics in `Drop` when told to.
struct Bomb {
    drops: Arc<AtomicUsize>,
    explode: bool,
}

/// Makes bombs that count their drops in `drops`.
fn bombs(drops: &Arc<AtomicUsize>) -> impl Fn(bool) -> Bomb + '_ {
    |explode| Bomb {
        drops: drops.clone(),
        explode,
    }
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.explode {
            panic!("bomb payload");
        }
    }
}

/// A port whose lane holds a backlog and whose chan became a shared chan with its own
/// backlog (the upgrade not yet taken by the port), dropped with panicking payloads in both:
/// every payload is dropped once and the first panic reaches the caller.
#[test]
fn a_port_dropped_over_a_lane_and_a_queue_backlog_drops_each_once_despite_panics() {
    quiet_bombs();
    let drops = Arc::new(AtomicUsize::new(0));
    let bomb = bombs(&drops);
    let (port, chan) = stream::<Bomb>();
    for i in 0..40 {
        chan.send(bomb(i % 7 == 3)).unwrap();
    }
    let shared = SharedChan::new(chan);
    for i in 0..40 {
        shared.send(bomb(i % 5 == 1)).unwrap();
    }
    let dropped = panic::catch_unwind(AssertUnwindSafe(|| drop(port)));
    assert_eq!(panic_message(&*dropped.unwrap_err()), "bomb payload");
    assert_eq!(drops.load(Ordering::SeqCst), 80);
    // Later sends get their message back.
    let back = shared.send(bomb(false)).unwrap_err();
    drop(back);
    assert_eq!(drops.load(Ordering::SeqCst), 81);
}

/// The same, with the port already moved on to the queue (it took the upgrade).
#[test]
fn a_port_on_its_queue_dropped_with_panicking_payloads_drops_each_once() {
    quiet_bombs();
    let drops = Arc::new(AtomicUsize::new(0));
    let bomb = bombs(&drops);
    let (port, chan) = stream::<Bomb>();
    chan.send(bomb(false)).unwrap();
    let shared = SharedChan::new(chan);
    drop(port.recv().unwrap());
    assert!(port.try_recv().is_err(), "on the queue now");
    for i in 0..70 {
        shared.send(bomb(i % 9 == 0)).unwrap();
    }
    // A stashed message too: a look pops into the stash.
    assert!(port.peek());
    let dropped = panic::catch_unwind(AssertUnwindSafe(|| drop(port)));
    assert_eq!(panic_message(&*dropped.unwrap_err()), "bomb payload");
    assert_eq!(drops.load(Ordering::SeqCst), 71);
}

/// A port dropped while its thread already unwinds, over payloads that panic: no abort
/// (a second panic while panicking), every payload dropped.
#[test]
fn a_port_dropped_during_unwinding_over_panicking_payloads_does_not_abort() {
    quiet_bombs();
    let drops = Arc::new(AtomicUsize::new(0));
    let (port, chan) = stream::<Bomb>();
    for _ in 0..3 {
        chan.send(Bomb {
            drops: drops.clone(),
            explode: true,
        })
        .unwrap();
    }
    let shared = SharedChan::new(chan);
    for _ in 0..3 {
        shared
            .send(Bomb {
                drops: drops.clone(),
                explode: true,
            })
            .unwrap();
    }
    let caught = panic::catch_unwind(AssertUnwindSafe(move || {
        let _port = port;
        panic!("bomb first");
    }));
    assert_eq!(panic_message(&*caught.unwrap_err()), "bomb first");
    assert_eq!(drops.load(Ordering::SeqCst), 6);
}

/// The upgrade from a lane to a shared queue while messages are in flight: one thread
/// sends on the chan, shares it mid-stream and sends on; a clone sends from another thread
/// meanwhile; the port, receiving all along, gets every message once and each sender's in
/// order (the chan's before the shared sends of that thread).
#[test]
fn an_upgrade_mid_stream_keeps_per_sender_order_and_loses_nothing() {
    let n = size(20_000, 60) as u64;
    let (port, chan) = stream::<(u8, u64)>();
    let (clone_port, clone_chan) = stream::<SharedChan<(u8, u64)>>();
    let first = thread::spawn(move || {
        for i in 0..n {
            chan.send((0, i)).unwrap();
        }
        let shared = SharedChan::new(chan);
        clone_chan.send(shared.clone()).unwrap();
        for i in n..2 * n {
            shared.send((0, i)).unwrap();
        }
    });
    let second = thread::spawn(move || {
        let shared = clone_port.recv().unwrap();
        for i in 0..n {
            shared.send((1, i)).unwrap();
        }
    });
    let mut next = [0u64; 2];
    for (sender, i) in &port {
        assert_eq!(i, next[sender as usize], "sender {sender} out of order");
        next[sender as usize] += 1;
    }
    assert_eq!(next, [2 * n, n]);
    first.join().unwrap();
    second.join().unwrap();
}

/// Timed-out receives on a shared chan's port (each takes back its waiter and its arm)
/// racing producers across many segment boundaries: nothing lost, nothing twice, no hang.
#[test]
fn timed_out_receives_on_a_shared_port_race_producers_without_loss() {
    let n = size(20_000, 100) as u64;
    let (port, chan) = stream::<u64>();
    let shared = SharedChan::new(chan);
    let producers: Vec<_> = (0..2u64)
        .map(|p| {
            let shared = shared.clone();
            thread::spawn(move || {
                for i in 0..n {
                    shared.send(p * n + i).unwrap();
                    if i % 64 == 0 {
                        thread::sleep(Duration::from_micros(50));
                    }
                }
            })
        })
        .collect();
    drop(shared);
    let mut seen = vec![false; 2 * n as usize];
    let mut got = 0;
    loop {
        match port.recv_timeout(Duration::from_micros(20)) {
            Ok(i) => {
                assert!(!seen[i as usize], "{i} twice");
                seen[i as usize] = true;
                got += 1;
            }
            Err(error) if error.into_endpoint().is_some() => {}
            Err(_) => break,
        }
    }
    assert_eq!(got, 2 * n);
    for producer in producers {
        producer.join().unwrap();
    }
}

/// A port set dropped while pending `recv_async` futures were forgotten and ports are
/// watched, queued and served: the forgotten waker is dropped (not woken), nothing leaks, and
/// the chans get their messages back.
#[test]
fn a_port_set_dropped_with_a_forgotten_future_and_ports_in_every_place() {
    let counter = DropCounter::default();
    let mut set = PortSet::new();
    let chans: Vec<_> = (0..4).map(|_| set.chan()).collect();
    let (count, waker) = counting();
    {
        let mut future = set.recv_async();
        assert!(poll_once(&mut future, &waker).is_pending());
        forget(future);
    }
    // Port 0 served (one message taken of two), port 1 queued by a send, 2 and 3 watched.
    chans[0].send(counter.make(0)).unwrap();
    chans[0].send(counter.make(1)).unwrap();
    drop(set.try_recv().unwrap());
    chans[1].send(counter.make(2)).unwrap();
    assert_eq!(
        wakes(&count),
        1,
        "the forgotten future's entry is woken once"
    );
    drop(set);
    assert_eq!(counter.drops(), 3);
    for chan in &chans {
        drop(chan.send(counter.make(9)).unwrap_err());
    }
    assert_eq!(counter.drops(), 7);
}

/// A set that selects over itself and one of two ports whose chans become shared chans
/// while the select waits.
#[test]
fn a_select_over_a_set_and_a_port_both_upgraded_while_it_waits() {
    let set = PortSet::new();
    let (port, chan) = stream::<u32>();
    let member = set.chan();
    let waiting = thread::spawn(move || {
        let mut got = Vec::new();
        while got.len() < 2 {
            let i =
                pipes_runtime::selecti(&[&set as &dyn pipes_runtime::select::Selectable, &port]);
            let taken = if i == 0 {
                set.try_recv().ok()
            } else {
                port.try_recv().ok()
            };
            got.extend(taken);
        }
        got.sort();
        got
    });
    thread::sleep(common::SETTLE);
    let a = SharedChan::new(member);
    let b = SharedChan::new(chan);
    thread::sleep(common::SETTLE);
    a.send(1).unwrap();
    b.send(2).unwrap();
    assert_eq!(waiting.join().unwrap(), [1, 2]);
}

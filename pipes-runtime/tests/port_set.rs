//! Port sets: many ports received from as one. Order per chan, no starvation, the end of the
//! set, timeouts, and ports added while others wait; several waiters on one set at once (async
//! receives, a thread's receive, selects), each woken by the sender that queues a port.

mod common;

use std::future::Future;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::thread;
use std::time::Duration;

use common::{SETTLE, size};
use pipes_runtime::{
    PortSet, RecvTimeoutError, SharedChan, TryRecvError, oneshot,
    select::{Selectable, selecti_async, selecti_timeout},
    stream,
};

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

/// How many messages a port gives in one turn (`BATCH` in `port_set.rs`, documented on
/// `PortSet`).
const TURN: usize = 32;

/// Fairness: two ports that are always ready are both served, in turns of at most [`TURN`].
#[test]
fn two_always_ready_ports_are_both_served() {
    let set = PortSet::new();
    let a = set.chan();
    let b = set.chan();
    let rounds = size(1000, 100);
    for _ in 0..rounds {
        a.send('a').unwrap();
        b.send('b').unwrap();
    }
    let got: Vec<char> = (0..2 * rounds).map(|_| set.recv().unwrap()).collect();
    let runs: Vec<usize> = got.chunk_by(|x, y| x == y).map(<[char]>::len).collect();
    assert!(runs.iter().all(|&run| run <= TURN), "runs {runs:?}");
    // While both have messages, each turn is a full one.
    let both_ready = runs.len() - 2;
    assert!(
        runs[..both_ready].iter().all(|&run| run == TURN),
        "runs {runs:?}"
    );
}

/// A port that a sender wakes is served within one round, even while two others stay ready:
/// after the turn under way and one turn of the other ready port.
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
    let next: Vec<char> = (0..2 * TURN).map(|_| set.recv().unwrap()).collect();
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

/// A waker that counts its wakes, for polling by hand.
#[derive(Default)]
struct CountingWaker(AtomicUsize);

impl Wake for CountingWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

fn counting() -> (Arc<CountingWaker>, Waker) {
    let count = Arc::new(CountingWaker::default());
    (count.clone(), Waker::from(count))
}

fn wakes(count: &CountingWaker) -> usize {
    count.0.load(Ordering::SeqCst)
}

fn poll_once<F: Future + Unpin>(future: &mut F, waker: &Waker) -> Poll<F::Output> {
    std::pin::Pin::new(future).poll(&mut Context::from_waker(waker))
}

/// An async select over `&set` alone: the way several tasks (or several futures of one task)
/// wait on one set at once. A pending `recv_async` borrows the set exclusively, so beside it
/// nothing else can wait on the set but what was forgotten; these selects stand for every
/// other waiter in the tests below, as they register with the set as a receive does.
fn waiting_on(set: &PortSet<u32>) -> pipes_runtime::select::SelectiFuture<[&dyn Selectable; 1]> {
    selecti_async([set as &dyn Selectable])
}

/// Two tasks wait on one set; one of them gives up. The other must still be woken: giving up
/// takes back only its own registration.
#[test]
fn two_pending_waits_one_dropped_the_other_is_still_woken() {
    for drop_first in [true, false] {
        let set = PortSet::new();
        let chan = set.chan();
        let (first, first_waker) = counting();
        let (second, second_waker) = counting();
        let mut one = waiting_on(&set);
        let mut two = waiting_on(&set);
        assert!(poll_once(&mut one, &first_waker).is_pending());
        assert!(poll_once(&mut two, &second_waker).is_pending());
        let (mut kept, waker, count) = if drop_first {
            drop(one);
            (two, &second_waker, &second)
        } else {
            drop(two);
            (one, &first_waker, &first)
        };
        chan.send(1u32).unwrap();
        assert_eq!(wakes(count), 1, "the wait still pending is woken");
        assert_eq!(poll_once(&mut kept, waker), Poll::Ready(0));
        assert_eq!(
            wakes(&first) + wakes(&second),
            1,
            "the dropped one is let go"
        );
        drop(kept);
        assert_eq!(set.try_recv().unwrap(), 1);
    }
}

/// Every task waiting on the set is woken by the push that ends its sleep; the one that finds
/// no message (the other took it) waits again and is woken by the next one.
#[test]
fn two_pending_waits_are_both_woken_and_each_gets_a_message() {
    let set = PortSet::new();
    let chan = set.chan();
    let (first, first_waker) = counting();
    let (second, second_waker) = counting();
    let mut one = waiting_on(&set);
    let mut two = waiting_on(&set);
    assert!(poll_once(&mut one, &first_waker).is_pending());
    assert!(poll_once(&mut two, &second_waker).is_pending());
    chan.send(1u32).unwrap();
    assert_eq!((wakes(&first), wakes(&second)), (1, 1));
    assert_eq!(poll_once(&mut one, &first_waker), Poll::Ready(0));
    assert_eq!(set.try_recv().unwrap(), 1);
    assert!(poll_once(&mut two, &second_waker).is_pending());
    chan.send(2).unwrap();
    assert_eq!((wakes(&first), wakes(&second)), (1, 2));
    assert_eq!(poll_once(&mut two, &second_waker), Poll::Ready(0));
    drop((one, two));
    assert_eq!(set.try_recv().unwrap(), 2);
}

/// Two futures in one task, polled with the same waker (as `join` does): each is a waiter of
/// its own, so dropping one does not take the other's registration with it.
#[test]
fn two_waits_with_the_same_waker_are_two_waiters() {
    let set = PortSet::new();
    let chan = set.chan();
    let (count, waker) = counting();
    let mut one = waiting_on(&set);
    let mut two = waiting_on(&set);
    assert!(poll_once(&mut one, &waker).is_pending());
    assert!(poll_once(&mut two, &waker).is_pending());
    drop(one);
    chan.send(3u32).unwrap();
    assert_eq!(wakes(&count), 1);
    assert_eq!(poll_once(&mut two, &waker), Poll::Ready(0));
    drop(two);
    assert_eq!(set.try_recv().unwrap(), 3);
}

/// An async select over the set and another endpoint gives up; another wait on the same set
/// still waits and is woken by the next message.
#[test]
fn an_async_select_dropped_leaves_another_wait_on_the_same_set_waiting() {
    let set = PortSet::new();
    let chan = set.chan();
    let (quiet, _quiet_chan) = oneshot::<u32>();
    let (count, waker) = counting();
    let (select_count, select_waker) = counting();
    let mut waiting = waiting_on(&set);
    assert!(poll_once(&mut waiting, &waker).is_pending());
    let endpoints: [&dyn Selectable; 2] = [&quiet, &set];
    let mut select = selecti_async(&endpoints);
    assert!(poll_once(&mut select, &select_waker).is_pending());
    drop(select);
    chan.send(4u32).unwrap();
    assert_eq!((wakes(&count), wakes(&select_count)), (1, 0));
    assert_eq!(poll_once(&mut waiting, &waker), Poll::Ready(0));
    drop(waiting);
    assert_eq!(set.try_recv().unwrap(), 4);
}

/// A pending `recv_async` is woken by a send, and so is a select over the set left pending
/// and forgotten before it (its registration is woken once and dropped).
#[test]
fn a_receive_beside_a_forgotten_select_on_one_set_is_woken() {
    let mut set = PortSet::new();
    let chan = set.chan();
    let (count, waker) = counting();
    let (select_count, select_waker) = counting();
    let mut select = waiting_on(&set);
    assert!(poll_once(&mut select, &select_waker).is_pending());
    // Forgotten, so its borrow of the set ends and its registration stays.
    common::forget(select);
    let mut receive = set.recv_async();
    assert!(poll_once(&mut receive, &waker).is_pending());
    chan.send(5u32).unwrap();
    assert_eq!((wakes(&count), wakes(&select_count)), (1, 1));
    assert!(matches!(
        poll_once(&mut receive, &waker),
        Poll::Ready(Ok(5))
    ));
}

/// A thread's select over the set times out while a task waits on the same set: the task's
/// wait is untouched and the next message wakes it.
#[test]
fn a_thread_select_timing_out_leaves_a_pending_wait_waiting() {
    let set = PortSet::new();
    let chan = set.chan();
    let (count, waker) = counting();
    let mut waiting = waiting_on(&set);
    assert!(poll_once(&mut waiting, &waker).is_pending());
    assert_eq!(selecti_timeout(&[&set], Duration::from_millis(1)), None);
    chan.send(6u32).unwrap();
    assert_eq!(wakes(&count), 1);
    assert_eq!(poll_once(&mut waiting, &waker), Poll::Ready(0));
    drop(waiting);
    assert_eq!(set.try_recv().unwrap(), 6);
}

/// A thread's select over the set while a task waits on it: a sender wakes both.
#[test]
fn a_thread_select_and_a_pending_wait_on_one_set_are_both_woken() {
    let set = PortSet::new();
    let chan = set.chan();
    let (quiet, _quiet_chan) = oneshot::<u32>();
    let (count, waker) = counting();
    let mut waiting = waiting_on(&set);
    assert!(poll_once(&mut waiting, &waker).is_pending());
    let sender = thread::spawn(move || {
        thread::sleep(SETTLE);
        chan.send(7u32).unwrap();
        chan
    });
    assert_eq!(pipes_runtime::selecti(&[&quiet, &set]), 1);
    let chan = sender.join().unwrap();
    assert_eq!(wakes(&count), 1);
    assert_eq!(poll_once(&mut waiting, &waker), Poll::Ready(0));
    drop(waiting);
    assert_eq!(set.try_recv().unwrap(), 7);
    drop(chan);
    assert!(set.recv().is_err());
}

/// A port added with a message already in it while a task waits on the set: the task is
/// woken, as if a sender had just woken that port; a receive then takes the message.
#[test]
fn a_port_added_with_a_message_wakes_a_pending_wait() {
    let mut set = PortSet::new();
    let _quiet = set.chan();
    let (count, waker) = counting();
    let mut waiting = waiting_on(&set);
    assert!(poll_once(&mut waiting, &waker).is_pending());
    let (port, chan) = stream();
    chan.send(8u32).unwrap();
    set.add(port);
    assert_eq!(wakes(&count), 1);
    assert_eq!(poll_once(&mut waiting, &waker), Poll::Ready(0));
    drop(waiting);
    assert!(matches!(
        poll_once(&mut set.recv_async(), &waker),
        Poll::Ready(Ok(8))
    ));
}

/// `chan()` while a task waits, then a send on the new chan: the new port is looked at (and
/// watched) by the woken task, so the send wakes it again.
#[test]
fn a_chan_made_while_a_task_waits_reaches_it() {
    let set = PortSet::new();
    let _quiet = set.chan();
    let (count, waker) = counting();
    let mut waiting = waiting_on(&set);
    assert!(poll_once(&mut waiting, &waker).is_pending());
    let chan = set.chan();
    // Woken to look at the new port, which is empty: the task waits again, watching it.
    assert_eq!(wakes(&count), 1);
    assert!(poll_once(&mut waiting, &waker).is_pending());
    chan.send(9u32).unwrap();
    assert_eq!(wakes(&count), 2);
    assert_eq!(poll_once(&mut waiting, &waker), Poll::Ready(0));
    drop(waiting);
    assert_eq!(set.try_recv().unwrap(), 9);
}

/// The same as a port added to a set that an async select waits on.
#[test]
fn a_port_added_with_a_message_wakes_a_pending_async_select() {
    let set = PortSet::new();
    let _quiet_set_chan = set.chan();
    let (quiet, _quiet_chan) = oneshot::<u32>();
    let (count, waker) = counting();
    let endpoints: [&dyn Selectable; 2] = [&quiet, &set];
    let mut select = selecti_async(&endpoints);
    assert!(poll_once(&mut select, &waker).is_pending());
    let (port, chan) = stream();
    chan.send(10u32).unwrap();
    set.add(port);
    assert_eq!(wakes(&count), 1);
    assert!(matches!(poll_once(&mut select, &waker), Poll::Ready(1)));
    drop(select);
    assert_eq!(set.try_recv().unwrap(), 10);
}

/// A thread's timed receive while a task's wait on the same set is pending, and then
/// forgotten: the thread parks (it does not spin on the task's sleep mark) and times out.
#[test]
fn recv_timeout_times_out_while_a_forgotten_wait_waits() {
    let set = PortSet::new();
    let chan = set.chan();
    let (count, waker) = counting();
    // Forgotten: never dropped while it matters (`ManuallyDrop` rather than `mem::forget` only
    // so that it can be dropped at the end and Miri's leak check stays quiet).
    let mut waiting = std::mem::ManuallyDrop::new(waiting_on(&set));
    assert!(poll_once(&mut *waiting, &waker).is_pending());
    assert!(matches!(
        set.recv_timeout(Duration::from_millis(50)),
        Err(RecvTimeoutError::Timeout(()))
    ));
    // The forgotten future's registration is at worst woken once, spuriously, and dropped.
    chan.send(11u32).unwrap();
    assert_eq!(set.recv().unwrap(), 11);
    chan.send(12).unwrap();
    assert_eq!(set.recv().unwrap(), 12);
    assert!(wakes(&count) <= 1);
    // SAFETY: dropped once, and not used again.
    unsafe { std::mem::ManuallyDrop::drop(&mut waiting) };
}

/// A thread's blocking receive while a task's wait on the same set is pending: the thread
/// parks and the sender wakes both.
#[test]
fn a_blocked_recv_and_a_pending_wait_are_both_woken() {
    let mut set = PortSet::new();
    let chan = set.chan();
    let (count, waker) = counting();
    let mut waiting = waiting_on(&set);
    assert!(poll_once(&mut waiting, &waker).is_pending());
    let sender = thread::spawn(move || {
        thread::sleep(SETTLE);
        chan.send(13u32).unwrap();
        chan
    });
    assert_eq!(set.recv_timeout(Duration::from_secs(60)).unwrap(), 13);
    let chan = sender.join().unwrap();
    assert_eq!(wakes(&count), 1);
    // The task finds nothing and waits again; the next message is its.
    assert!(poll_once(&mut waiting, &waker).is_pending());
    chan.send(14).unwrap();
    assert_eq!(wakes(&count), 2);
    assert_eq!(poll_once(&mut waiting, &waker), Poll::Ready(0));
    drop(waiting);
    assert!(matches!(
        poll_once(&mut set.recv_async(), &waker),
        Poll::Ready(Ok(14))
    ));
}

/// An async select over the set stays pending while a receive through the set takes the
/// message that woke it: the port it came from is then being served, neither watched nor
/// queued, so no sender announces it. The select's next poll must look at the set (watching
/// that port) before it waits again, or the next message on that port never wakes it.
#[test]
fn an_async_select_re_polled_after_a_receive_through_the_set_is_woken_by_the_next_message() {
    let set = PortSet::new();
    let chan = set.chan();
    let (count, waker) = counting();
    let endpoints: [&dyn Selectable; 1] = [&set];
    let mut select = selecti_async(&endpoints);
    assert!(poll_once(&mut select, &waker).is_pending());
    chan.send(1u32).unwrap();
    assert_eq!(wakes(&count), 1);
    assert_eq!(set.try_recv().unwrap(), 1);
    assert!(poll_once(&mut select, &waker).is_pending());
    chan.send(2).unwrap();
    assert_eq!(wakes(&count), 2, "the next message wakes the select");
    assert_eq!(poll_once(&mut select, &waker), Poll::Ready(0));
    drop(select);
    assert_eq!(set.try_recv().unwrap(), 2);
}

/// Counts its drops; the marked ones panic in `Drop`.
struct Bomb(Arc<AtomicUsize>, bool);

impl Drop for Bomb {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
        if self.1 {
            panic!("bomb");
        }
    }
}

/// A set dropped over several ports holding payloads whose `Drop` panics (lanes, and a port
/// whose chan became a shared chan): each payload is dropped once, one panic comes out, and
/// every chan gets its next message back. (From an adversarial review; it held.)
#[test]
fn a_set_dropped_over_ports_of_panicking_payloads_drops_each_once() {
    common::bombs::quiet_bombs();
    // Fewer under Miri, where each panic costs seconds.
    let per_port = if cfg!(miri) { 15 } else { 100 };
    let drops = Arc::new(AtomicUsize::new(0));
    let set = PortSet::new();
    let mut chans = Vec::new();
    for _ in 0..4 {
        let chan = set.chan();
        for i in 0..per_port {
            chan.send(Bomb(Arc::clone(&drops), i % 7 == 3)).unwrap();
        }
        chans.push(chan);
    }
    let (port, chan) = stream();
    let shared = SharedChan::new(chan);
    for i in 0..per_port {
        shared.send(Bomb(Arc::clone(&drops), i % 7 == 3)).unwrap();
    }
    set.add(port);
    // Serve some, so the shared port moves on to its queue; a received bomb may panic here.
    for _ in 0..per_port * 3 / 2 {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let _ = set.try_recv();
        }));
    }
    let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(move || drop(set)));
    assert!(result.is_err(), "one panic comes out of the drop");
    assert_eq!(
        drops.load(Ordering::SeqCst),
        5 * per_port,
        "every payload dropped once"
    );
    for chan in &chans {
        let back = chan.send(Bomb(Arc::new(AtomicUsize::new(0)), false));
        assert!(back.is_err(), "the set is gone");
    }
    assert!(
        shared
            .send(Bomb(Arc::new(AtomicUsize::new(0)), false))
            .is_err()
    );
}

/// Zero-sized payloads through a set, with a backlog longer than a lane segment, half of it
/// dropped with the set. (From an adversarial review; it held.)
#[test]
fn zero_sized_payloads_through_a_set_and_a_dropped_backlog() {
    // Just over one segment (4,096 zero-sized slots) under Miri.
    let n = if cfg!(miri) { 4_200 } else { 10_000 };
    let set = PortSet::<()>::new();
    let chan = set.chan();
    for _ in 0..n {
        chan.send(()).unwrap();
    }
    for _ in 0..n / 2 {
        set.recv().unwrap();
    }
    drop(set);
    assert!(chan.send(()).is_err());
}

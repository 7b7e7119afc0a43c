//! Async waits on endpoints, as users meet them: futures moved between tasks, forgotten,
//! cancelled and remade, two waits of one task on one endpoint, selects given an endpoint
//! twice, waits for room, and what a panicking waker does to a receive. Most came from an
//! adversarial review (review 3) as probes that held; `two_waits_of_one_task...` found a lost
//! wake-up (fixed in `StateWord::watch`).

mod common;

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::thread;
use std::time::{Duration, Instant};

use common::bombs::{panicking_waker, quiet_bombs};
use common::task::{block_on, counting, poll_once, wakes};
use common::{SETTLE, forget};
use pipes_runtime::__private::{Backlog, RoomFuture, wait_room};
use pipes_runtime::select::{Selectable, select2_async, selecti_async};
use pipes_runtime::{oneshot, stream};

pipes_runtime::proto! {
    /// Bounded: a session buffer.
    pub ask {
        Ask: send { Question(Counted) -> Answer, Quit -> ! }
        Answer: recv { Reply(Counted) -> Ask }
    }
}

pipes_runtime::proto! {
    /// Unbounded: lanes.
    pub numbers {
        Stream: send { Number(Counted) -> Stream, End -> ! }
    }
}

/// A payload counting its drops.
#[derive(Debug)]
pub struct Counted(pub u64, Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

fn count() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

/// A receive future polled by one task, then another, then the first again: only the waker
/// of the last poll is woken by the send, once; re-polls with the same waker wake nothing.
#[test]
fn a_receive_future_moved_between_tasks_wakes_only_the_last_one_once() {
    let drops = count();
    let (server, client) = ask::init();
    let (c1, w1) = counting();
    let (c2, w2) = counting();
    let mut future = server.recv_async();
    for waker in [&w1, &w2, &w1, &w2, &w2] {
        assert!(poll_once(&mut future, waker).is_pending());
    }
    assert_eq!(
        (wakes(&c1), wakes(&c2)),
        (0, 0),
        "no poll woke anyone (no busy loop)"
    );
    let answer = client.question(Counted(1, drops.clone())).ok().unwrap();
    assert_eq!((wakes(&c1), wakes(&c2)), (0, 1));
    let Poll::Ready(Ok(ask::Ask::Question(q, server))) = poll_once(&mut future, &w2) else {
        panic!("the question arrived")
    };
    assert_eq!(q.0, 1);
    drop(q);
    let ask = server.reply(Counted(2, drops.clone())).ok().unwrap();
    drop(ask);
    drop(answer);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

/// One async select given the same endpoint twice: polls do not wake the task (no busy loop),
/// the send wakes it (once per entry at most: each keeps a registration of its own, see
/// `two_waits_of_one_task_on_one_endpoint_each_keep_a_registration`), and it resolves.
#[test]
fn an_async_select_over_one_endpoint_twice_is_woken_once_and_resolves() {
    let (port, chan) = oneshot::<u32>();
    let list: [&dyn Selectable; 2] = [&port, &port];
    let (count, waker) = counting();
    let mut future = selecti_async(&list[..]);
    for _ in 0..3 {
        assert!(poll_once(&mut future, &waker).is_pending());
    }
    assert_eq!(wakes(&count), 0);
    chan.send(3).unwrap();
    assert!((1..=2).contains(&wakes(&count)), "{} wakes", wakes(&count));
    assert!(matches!(poll_once(&mut future, &waker), Poll::Ready(0 | 1)));
    drop(future);
    assert_eq!(port.recv().unwrap(), 3);
}

/// A select future over a bounded session's endpoint, forgotten mid-wait (its borrow ends),
/// then the session runs several rounds: every message arrives once and is dropped once.
#[test]
fn a_forgotten_select_on_a_session_slot_costs_nothing_over_later_rounds() {
    let drops = count();
    let (server, client) = ask::init();
    {
        let list: [&dyn Selectable; 1] = [&server];
        let (_count, waker) = counting();
        let mut future = selecti_async(&list[..]);
        assert!(poll_once(&mut future, &waker).is_pending());
        forget(future);
    }
    let d = drops.clone();
    let echo = thread::spawn(move || {
        let mut server = server;
        loop {
            match server.recv().unwrap() {
                ask::Ask::Question(q, reply) => {
                    let n = q.0;
                    drop(q);
                    server = reply.reply(Counted(n + 1, d.clone())).ok().unwrap();
                }
                ask::Ask::Quit => return,
            }
        }
    });
    let mut client = client;
    for i in 0..50 {
        let ask::Answer::Reply(r, next) = client
            .question(Counted(i, drops.clone()))
            .ok()
            .unwrap()
            .recv()
            .unwrap();
        assert_eq!(r.0, i + 1);
        client = next;
    }
    client.quit().unwrap();
    echo.join().unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 100);
}

/// A sender blocked in `wait_room` on another thread returns (with room) when the receiver is
/// dropped; the next send hands its message back.
#[test]
fn a_blocked_wait_for_room_returns_when_the_receiver_is_dropped() {
    let drops = count();
    let (server, client) = numbers::init();
    server.report(1);
    let client = client.number(Counted(0, drops.clone())).unwrap();
    let waiter = thread::spawn(move || {
        assert!(wait_room(
            &client,
            Some(Instant::now() + Duration::from_secs(10))
        ));
        client
    });
    thread::sleep(SETTLE);
    drop(server);
    let client = waiter.join().unwrap();
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the unreceived number was dropped"
    );
    let Err(back) = client.number(Counted(1, drops.clone())) else {
        panic!("the receiver is gone")
    };
    assert_eq!(back.0.0, 1);
    drop(back);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

/// A `RoomFuture` forgotten mid-wait (the endpoint goes with it): the receiver's drop after it
/// wakes the stale waker once and drops the unreceived message.
#[test]
fn a_room_future_forgotten_then_the_receiver_dropped_wakes_the_stale_task_once() {
    let drops = count();
    let (server, client) = numbers::init();
    server.report(1);
    let client = client.number(Counted(0, drops.clone())).unwrap();
    let (count_, waker) = counting();
    let mut future = RoomFuture::new(client);
    assert!(poll_once(&mut future, &waker).is_pending());
    forget(future);
    drop(server);
    assert_eq!(wakes(&count_), 1);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

/// The futures the docs call `Send` (and `'static` with `'static` payloads) are: usable in a
/// multi-threaded executor's spawn.
#[test]
fn receive_select_and_room_futures_are_send_and_static() {
    fn send_static<T: Send + 'static>(_: &T) {}
    let (server, client) = ask::init();
    let f = server.recv_async();
    send_static(&f);
    drop(f);
    let (a, _ac) = numbers::init();
    let (b, _bc) = numbers::init();
    let f = select2_async(a, b);
    send_static(&f);
    drop(f);
    let (_s, c) = numbers::init();
    let f = RoomFuture::new(c);
    send_static(&f);
    drop(f);
    let (p, _c) = oneshot::<String>();
    let f = p.recv_async();
    send_static(&f);
    drop(f);
    drop(client);
}

/// Delegation: a bounded session's receiving endpoint sent inside a stream message, the port
/// dropped with it unreceived, while the session's peer waits on another thread: the peer's
/// receive fails (it does not hang), and every payload is dropped once.
#[test]
fn a_session_endpoint_dropped_unreceived_inside_a_stream_message_closes_the_session() {
    let drops = count();
    let (server, client) = ask::init();
    let answer = client.question(Counted(5, drops.clone())).ok().unwrap();
    let peer = thread::spawn(move || answer.recv().is_err());
    let (port, chan) = stream::<ask::server::Ask>();
    chan.send(server).unwrap();
    thread::sleep(SETTLE);
    drop(port);
    assert!(peer.join().unwrap(), "the peer's receive failed");
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    drop(chan);
}

/// A pending `select2_async` given up (dropped) drops both endpoints: both peers' sends hand
/// their messages back, and a task waiting on it is not woken afterwards.
#[test]
fn a_dropped_select2_future_closes_both_sessions() {
    let drops = count();
    let (a, ac) = numbers::init();
    let (b, bc) = numbers::init();
    let (c, waker) = counting();
    let mut future = select2_async(a, b);
    assert!(poll_once(&mut future, &waker).is_pending());
    drop(future);
    assert!(ac.number(Counted(1, drops.clone())).is_err());
    assert!(bc.number(Counted(2, drops.clone())).is_err());
    assert_eq!(wakes(&c), 0);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

/// A bounded session driven from a task whose receive future is cancelled and re-made many
/// times between rounds: nothing lost, nothing woken twice.
#[test]
fn a_bounded_receive_cancelled_and_remade_each_round_loses_nothing() {
    let drops = count();
    let (server, client) = ask::init();
    let d = drops.clone();
    let asker = thread::spawn(move || {
        let mut client = client;
        for i in 0..20 {
            thread::sleep(Duration::from_millis(1));
            let ask::Answer::Reply(r, next) = client
                .question(Counted(i, d.clone()))
                .ok()
                .unwrap()
                .recv()
                .unwrap();
            drop(r);
            client = next;
        }
        client.quit().unwrap();
    });
    let (_c, waker) = counting();
    let mut server = server;
    loop {
        let mut future = server.recv_async();
        // Usually pending (the asker sleeps first): cancel, and receive with a fresh future.
        let message = match poll_once(&mut future, &waker) {
            Poll::Ready(message) => message,
            Poll::Pending => {
                server = future.cancel().expect("still pending");
                block_on(server.recv_async())
            }
        };
        match message.unwrap() {
            ask::Ask::Question(q, reply) => {
                let n = q.0;
                drop(q);
                server = reply.reply(Counted(n, drops.clone())).ok().unwrap();
            }
            ask::Ask::Quit => break,
        }
    }
    asker.join().unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 40);
}

/// Two select futures of one task (one waker, say joined) watch the same endpoint, and the
/// first is given up (its timeout fired). The second must still be woken by the send: each
/// keeps a registration of its own. (It had none: it found the first's waiter, which wakes the
/// same task, and relied on it; the first's drop took it out of the word.)
#[test]
fn two_waits_of_one_task_on_one_endpoint_each_keep_a_registration() {
    let (port, chan) = oneshot::<u32>();
    let (other, _other_chan) = oneshot::<u32>();
    let (count, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    // Both futures in one task (e.g. joined), polled with the task's one waker.
    let only_port: [&dyn Selectable; 1] = [&port];
    let port_or_other: [&dyn Selectable; 2] = [&port, &other];
    let mut first = selecti_async(&only_port[..]);
    let mut second = selecti_async(&port_or_other[..]);
    assert!(Pin::new(&mut first).poll(&mut cx).is_pending());
    assert!(Pin::new(&mut second).poll(&mut cx).is_pending());
    // The first is given up (its timeout fired); the second goes on waiting.
    drop(first);
    chan.send(1).unwrap();
    assert!(
        wakes(&count) >= 1,
        "the send woke nobody: the second future's task is never polled again (a hang)"
    );
    assert_eq!(
        Pin::new(&mut second).poll(&mut cx),
        std::task::Poll::Ready(0)
    );
}

/// A waker's panic goes on to whoever woke it, as with tokio's channels: here a receive that
/// reports its take to a sender waiting for room (`pipes-net`'s pump) in a task whose waker
/// panics. The message that receive had in hand is dropped once in the unwind, never leaked
/// or dropped twice, and the session ends cleanly.
#[test]
fn a_receive_that_wakes_a_panicking_waker_panics_and_drops_its_message_once() {
    quiet_bombs();
    let drops = Arc::new(AtomicUsize::new(0));
    let (server, client) = numbers::init();
    server.report(1);
    let client = client.number(Counted(42, drops.clone())).unwrap();
    let mut room = RoomFuture::new(client);
    let bad = panicking_waker();
    assert!(poll_once(&mut room, &bad).is_pending());
    // The receiver's receive: the message is taken, then the report wakes the sender's task.
    let received = panic::catch_unwind(AssertUnwindSafe(|| server.recv()));
    assert!(
        received.is_err(),
        "the waker's panic reaches the receive's caller"
    );
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "dropped once, in the unwind"
    );
    drop(room);
    assert_eq!(drops.load(Ordering::SeqCst), 1);
}

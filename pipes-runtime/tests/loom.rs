//! Loom models of the packet's races: send, receive, receive with a timeout, and drop on either
//! side; select's registration, wake-up and unregistration; a port set's watch, wake and drop,
//! several waiters on one set (two tasks, a task beside a thread's receive or select) and a port
//! added while a task waits; a shared chan's senders; async receives registering, moving and
//! taking back a waker; an endpoint closed with a cause while its peer waits; a sender (a
//! thread or a task) waiting for room while its receiver takes or goes away; a shared chan's
//! port waiting across a segment's link, and joining a set after a timed-out wait. Every
//! interleaving loom can find, within the preemption bound a model states (loom also fails a
//! model that leaks a waiter's `Arc`). Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p pipes-runtime --test loom --release`.
#![cfg(loom)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use loom::thread;
use pipes_runtime::__private::{Backlog, CloseWith, RoomFuture, wait_room};
use pipes_runtime::{
    Cause, Chan, Either, PortSet, RecvTimeoutError, SharedChan, oneshot,
    select::{Selectable, select2_timeout, selecti_async},
    select2, selecti, stream,
};

/// A message that counts its drop in its [`Drops`].
struct Counted(Arc<AtomicUsize>);

/// Counts the drops of the messages it makes, so a model can check each is dropped exactly
/// once.
#[derive(Clone, Default)]
struct Drops(Arc<AtomicUsize>);

impl Drops {
    /// A message whose drop is counted here.
    fn counted(&self) -> Counted {
        Counted(self.0.clone())
    }

    /// How many of the messages were dropped.
    fn count(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }

    /// For the one message of a model whose send races the receiver going away: unless it is
    /// still held (`alive`: handed back to its sender, or received), it was dropped already,
    /// and once `alive` goes it was dropped exactly once.
    fn assert_dropped_once<T>(&self, alive: Option<T>) {
        assert_eq!(self.count(), usize::from(alive.is_none()));
        drop(alive);
        assert_eq!(self.count(), 1);
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Runs `f` under every interleaving with at most `preemptions` preemptions. The larger models
/// take minutes each unbounded, and loom finds most bugs within two or three preemptions: each
/// bound below keeps its model within the 2-core CI's budget. To explore one unbounded, run it
/// with `loom::model` instead.
fn bounded(preemptions: usize, f: impl Fn() + Send + Sync + 'static) {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(preemptions);
    model.check(f);
}

#[test]
fn send_races_recv() {
    loom::model(|| {
        let (port, chan) = oneshot();
        let sender = thread::spawn(move || chan.send(1u8).unwrap());
        assert_eq!(port.recv().unwrap(), 1);
        sender.join().unwrap();
    });
}

#[test]
fn sender_drop_races_recv() {
    loom::model(|| {
        let (port, chan) = oneshot::<u8>();
        let sender = thread::spawn(move || drop(chan));
        assert!(port.recv().is_err());
        sender.join().unwrap();
    });
}

#[test]
fn send_races_receiver_drop_and_the_message_is_dropped_once() {
    loom::model(|| {
        let drops = Drops::default();
        let (port, chan) = oneshot();
        let message = drops.counted();
        let sender = thread::spawn(move || chan.send(message).map_err(|e| e.into_inner()));
        drop(port);
        let handed_back = sender.join().unwrap().err();
        drops.assert_dropped_once(handed_back);
    });
}

#[test]
fn both_ends_drop_at_once() {
    loom::model(|| {
        let (port, chan) = oneshot::<u8>();
        let sender = thread::spawn(move || drop(chan));
        drop(port);
        sender.join().unwrap();
    });
}

#[test]
fn recv_timeout_races_send() {
    loom::model(|| {
        let (port, chan) = oneshot();
        let sender = thread::spawn(move || chan.send(5u8).unwrap());
        match port.recv_timeout(Duration::from_millis(1)) {
            Ok(value) => assert_eq!(value, 5),
            Err(RecvTimeoutError::Timeout(port)) => assert_eq!(port.recv().unwrap(), 5),
            Err(RecvTimeoutError::Disconnected(_)) => panic!("the sender sent"),
        }
        sender.join().unwrap();
    });
}

#[test]
fn recv_timeout_races_sender_drop() {
    loom::model(|| {
        let (port, chan) = oneshot::<u8>();
        let sender = thread::spawn(move || drop(chan));
        match port.recv_timeout(Duration::from_millis(1)) {
            Ok(_) => panic!("nothing was sent"),
            Err(RecvTimeoutError::Timeout(port)) => assert!(port.recv().is_err()),
            Err(RecvTimeoutError::Disconnected(_)) => {}
        }
        sender.join().unwrap();
    });
}

/// Bounded to five preemptions: 9 s, where unbounded took 71 s
/// (and passed; 2026-11-27, a loaded 2-core VM).
#[test]
fn stream_of_two_then_hang_up() {
    bounded(5, || {
        let (port, chan) = stream();
        let sender = thread::spawn(move || {
            chan.send(1u8).unwrap();
            chan.send(2).unwrap();
        });
        assert_eq!(port.recv().unwrap(), 1);
        assert_eq!(port.recv().unwrap(), 2);
        assert!(port.recv().is_err());
        sender.join().unwrap();
    });
}

#[test]
fn stream_port_drops_while_the_chan_sends() {
    loom::model(|| {
        let drops = Drops::default();
        let (port, chan) = stream();
        let sender = {
            let drops = drops.clone();
            thread::spawn(move || {
                let first = chan.send(drops.counted()).is_ok();
                let second = chan.send(drops.counted()).is_ok();
                // Once a send fails, every later one does.
                assert!(first || !second);
            })
        };
        drop(port);
        sender.join().unwrap();
        assert_eq!(drops.count(), 2);
    });
}

/// Loom builds lanes with two slots a segment: five messages link two more segments, and the
/// receiver hands used-up ones back while the sender looks for a spare. Bounded to two
/// preemptions, and still the slowest model here (2-4 minutes).
#[test]
fn lane_links_and_recycles_segments_while_both_ends_run() {
    bounded(2, || {
        let (port, chan) = stream();
        let sender = thread::spawn(move || {
            for i in 0..5u8 {
                chan.send(i).unwrap();
            }
        });
        for i in 0..5u8 {
            assert_eq!(port.recv().unwrap(), i);
        }
        assert!(port.recv().is_err());
        sender.join().unwrap();
    });
}

/// A port dropped while its chan sends across a segment boundary: each message is handed back
/// or dropped by the port's drop, exactly once, and the lane's segments are freed once (loom
/// fails a model that leaks).
#[test]
fn lane_receiver_drop_races_sends_across_a_segment() {
    loom::model(|| {
        let drops = Drops::default();
        let (port, chan) = stream();
        let sender = {
            let drops = drops.clone();
            thread::spawn(move || {
                let mut failed = false;
                for _ in 0..3 {
                    let sent = chan.send(drops.counted()).is_ok();
                    assert!(!(failed && sent), "once a send fails, every later one does");
                    failed |= !sent;
                }
            })
        };
        // The port takes one message if it is there already, then goes.
        drop(port.try_recv());
        drop(port);
        sender.join().unwrap();
        assert_eq!(drops.count(), 3);
    });
}

/// A chan that sent on its lane becomes a shared chan while the port receives: the lane's
/// message comes first, then the clone's, then the end.
#[test]
fn shared_chan_upgrade_keeps_the_lanes_messages_first() {
    loom::model(|| {
        let (port, chan) = stream();
        chan.send(1u8).unwrap();
        let shared = SharedChan::new(chan);
        let clone = shared.clone();
        drop(shared);
        let sender = thread::spawn(move || clone.send(2).unwrap());
        assert_eq!(port.recv().unwrap(), 1);
        assert_eq!(port.recv().unwrap(), 2);
        assert!(port.recv().is_err());
        sender.join().unwrap();
    });
}

/// The port drops while its chan upgrades to a shared chan and sends: whichever end takes the
/// upgrade closes the queue, so every message is dropped or handed back exactly once.
#[test]
fn shared_chan_upgrade_races_the_port_drop() {
    loom::model(|| {
        let drops = Drops::default();
        let (port, chan) = stream();
        let sender = {
            let drops = drops.clone();
            thread::spawn(move || {
                let _ = chan.send(drops.counted());
                let shared = SharedChan::new(chan);
                let _ = shared.send(drops.counted());
            })
        };
        drop(port);
        sender.join().unwrap();
        assert_eq!(drops.count(), 2);
    });
}

#[path = "common/pingpong.rs"]
mod pingpong;

#[test]
fn bounded_round_trip_then_bye_reuses_the_slots() {
    loom::model(|| {
        let (server, client) = pingpong::init::<u8>();
        let echo = thread::spawn(move || {
            let mut server = server;
            loop {
                match server.recv().ok().unwrap() {
                    pingpong::Ping::Ping(x, pong) => server = pong.pong(x + 1).ok().unwrap(),
                    pingpong::Ping::Bye => return,
                }
            }
        });
        // One round trip, then `Bye` goes into the slot the first ping used.
        let (x, client) = client.ping(1).ok().unwrap().recv().unwrap();
        assert_eq!(x, 2);
        client.bye().unwrap();
        echo.join().unwrap();
    });
}

#[test]
fn bounded_client_drop_races_the_server_recv() {
    loom::model(|| {
        let (server, client) = pingpong::init::<u8>();
        let dropper = thread::spawn(move || drop(client));
        assert!(server.recv().is_err());
        dropper.join().unwrap();
    });
}

#[test]
fn bounded_server_drop_races_the_client_waiting_for_pong() {
    loom::model(|| {
        let (server, client) = pingpong::init::<u8>();
        let pong = client.ping(1).ok().unwrap();
        let server = thread::spawn(move || drop(server.recv()));
        assert!(pong.recv().is_err());
        server.join().unwrap();
    });
}

#[test]
fn bounded_server_drop_races_the_client_send_and_the_message_is_dropped_once() {
    loom::model(|| {
        let drops = Drops::default();
        let (server, client) = pingpong::init();
        let message = drops.counted();
        let sender = thread::spawn(move || client.ping(message).err().map(|e| e.0));
        drop(server);
        drops.assert_dropped_once(sender.join().unwrap());
    });
}

#[test]
fn select2_registers_then_the_sender_wakes_it() {
    loom::model(|| {
        let (a, a_chan) = oneshot::<u8>();
        let (b, b_chan) = oneshot::<u8>();
        let sender = thread::spawn(move || b_chan.send(2).unwrap());
        match select2(a, b) {
            Either::Right((_a, message)) => assert_eq!(message.unwrap(), 2),
            Either::Left(_) => panic!("a's chan is alive and silent"),
        }
        sender.join().unwrap();
        drop(a_chan);
    });
}

#[test]
fn select2_races_two_senders_and_unregisters_from_the_loser() {
    loom::model(|| {
        let (a, a_chan) = oneshot::<u8>();
        let (b, b_chan) = oneshot::<u8>();
        let sender_a = thread::spawn(move || a_chan.send(1).unwrap());
        let sender_b = thread::spawn(move || b_chan.send(2).unwrap());
        // Whichever wins, the other endpoint comes back clean and receives normally.
        match select2(a, b) {
            Either::Left((message, b)) => {
                assert_eq!(message.unwrap(), 1);
                assert_eq!(b.recv().unwrap(), 2);
            }
            Either::Right((a, message)) => {
                assert_eq!(message.unwrap(), 2);
                assert_eq!(a.recv().unwrap(), 1);
            }
        }
        sender_a.join().unwrap();
        sender_b.join().unwrap();
    });
}

#[test]
fn select2_timeout_races_a_send() {
    loom::model(|| {
        let (a, a_chan) = oneshot::<u8>();
        let (b, b_chan) = oneshot::<u8>();
        let sender = thread::spawn(move || a_chan.send(1).unwrap());
        // Under loom a timed park times out at once, so both outcomes are explored.
        let b = match select2_timeout(a, b, Duration::from_millis(1)) {
            Ok(Either::Left((message, b))) => {
                assert_eq!(message.unwrap(), 1);
                b
            }
            Ok(Either::Right(_)) => panic!("b's chan is alive and silent"),
            Err((a, b)) => {
                assert_eq!(a.recv().unwrap(), 1);
                b
            }
        };
        sender.join().unwrap();
        drop(b_chan);
        assert!(b.recv().is_err());
    });
}

#[test]
fn selecti_over_stream_ports_races_a_hang_up() {
    loom::model(|| {
        let (a, a_chan) = stream::<u8>();
        let (b, b_chan) = stream::<u8>();
        let hang_up = thread::spawn(move || drop(b_chan));
        assert_eq!(selecti(&[&a, &b]), 1);
        assert!(b.recv().is_err());
        hang_up.join().unwrap();
        drop(a_chan);
    });
}

#[test]
fn port_set_watch_races_the_send_and_the_hang_up() {
    loom::model(|| {
        let set = PortSet::new();
        let chan = set.chan();
        let sender = thread::spawn(move || {
            chan.send(1u8).unwrap();
        });
        assert_eq!(set.recv().unwrap(), 1);
        assert!(set.recv().is_err());
        sender.join().unwrap();
    });
}

/// Three threads through the ready list's mutex: bounded to three preemptions (a minute or
/// two; unbounded it runs far longer).
#[test]
fn port_set_two_senders_wake_one_receiver() {
    bounded(3, || {
        let set = PortSet::new();
        let a = set.chan();
        let b = set.chan();
        let sender_a = thread::spawn(move || a.send(1u8).unwrap());
        let sender_b = thread::spawn(move || drop(b));
        assert_eq!(set.recv().unwrap(), 1);
        assert!(set.recv().is_err());
        sender_a.join().unwrap();
        sender_b.join().unwrap();
    });
}

#[test]
fn port_set_recv_timeout_races_a_send() {
    loom::model(|| {
        let set = PortSet::new();
        let chan = set.chan();
        let sender = thread::spawn(move || chan.send(3u8).unwrap());
        match set.recv_timeout(Duration::from_millis(1)) {
            Ok(value) => assert_eq!(value, 3),
            Err(RecvTimeoutError::Timeout(())) => assert_eq!(set.recv().unwrap(), 3),
            Err(RecvTimeoutError::Disconnected(_)) => panic!("the chan sent first"),
        }
        sender.join().unwrap();
    });
}

#[test]
fn port_set_drop_races_a_send_into_a_watched_port() {
    loom::model(|| {
        let drops = Drops::default();
        let set = PortSet::new();
        let chan = set.chan();
        // Watches the port: it is empty, and under loom the timed park times out at once.
        assert!(set.try_recv().is_err());
        let sender = {
            let drops = drops.clone();
            thread::spawn(move || chan.send(drops.counted()).map_err(|e| e.into_inner()))
        };
        drop(set);
        drop(sender.join().unwrap());
        assert_eq!(drops.count(), 1);
    });
}

/// Bounded to five preemptions: 15 s, where unbounded took 102 s
/// (and passed; 2026-11-27, a loaded 2-core VM).
#[test]
fn shared_chan_two_senders_one_port() {
    bounded(5, || {
        let (port, chan) = stream::<u8>();
        let chan = SharedChan::new(chan);
        let other = chan.clone();
        let sender = thread::spawn(move || other.send(1).unwrap());
        chan.send(2).unwrap();
        drop(chan);
        let mut got = [port.recv().unwrap(), port.recv().unwrap()];
        got.sort();
        assert_eq!(got, [1, 2]);
        assert!(port.recv().is_err());
        sender.join().unwrap();
    });
}

#[test]
fn select_over_a_port_set_races_its_chan_sending_and_hanging_up() {
    loom::model(|| {
        let set = PortSet::new();
        let chan = set.chan();
        let (quiet, _quiet_chan) = oneshot::<u8>();
        let (done, done_chan) = oneshot::<()>();
        // The chan sends, then hangs up: the set must be chosen for the message, not the hang-up.
        let sender = thread::spawn(move || {
            chan.send(5u8).unwrap();
            drop(chan);
            done_chan.send(()).unwrap();
        });
        assert_eq!(pipes_runtime::selecti(&[&quiet, &set]), 1);
        assert_eq!(set.recv().unwrap(), 5);
        // A sender's unpark can land after the wait it was for has ended; loom models an unpark
        // that reaches a thread blocked in `join` as a lost notification, so wait on a oneshot
        // (a park, which tolerates it) before joining.
        done.recv().unwrap();
        sender.join().unwrap();
        assert!(set.recv().is_err());
    });
}

/// Wakes a loom thread parked in [`block_on`].
struct ThreadWaker(thread::Thread);

impl std::task::Wake for ThreadWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

/// A thread-parking executor for one future, on loom's threads (loom's own `block_on` needs its
/// `futures` feature and crate; this is all a model needs).
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = thread_waker();
    match poll_once_with(&mut future, &waker) {
        std::task::Poll::Ready(output) => output,
        std::task::Poll::Pending => wait_woken(&mut future, &waker),
    }
}

/// Polls `future` once with a waker that does nothing: a task that registers, then moves on.
fn poll_once<F: std::future::Future + Unpin>(future: &mut F) -> std::task::Poll<F::Output> {
    poll_once_with(future, std::task::Waker::noop())
}

#[test]
fn async_recv_registers_a_waker_racing_the_send() {
    loom::model(|| {
        let (port, chan) = oneshot();
        let sender = thread::spawn(move || chan.send(1u8).unwrap());
        assert_eq!(block_on(port.recv_async()).unwrap(), 1);
        sender.join().unwrap();
    });
}

#[test]
fn async_recv_registers_a_waker_racing_the_sender_drop() {
    loom::model(|| {
        let (port, chan) = oneshot::<u8>();
        let sender = thread::spawn(move || drop(chan));
        assert!(block_on(port.recv_async()).is_err());
        sender.join().unwrap();
    });
}

#[test]
fn async_recv_re_polled_with_another_waker_while_the_send_races() {
    loom::model(|| {
        let (port, chan) = oneshot();
        let sender = thread::spawn(move || chan.send(3u8).unwrap());
        let mut future = Box::pin(port.recv_async());
        // Register with one waker, then let `block_on`'s own waker take its place: the take-back
        // races the sender's swap.
        if poll_once(&mut future).is_pending() {
            assert_eq!(block_on(future).unwrap(), 3);
        }
        sender.join().unwrap();
    });
}

#[test]
fn async_recv_dropped_mid_wait_races_the_send_and_the_message_is_dropped_once() {
    loom::model(|| {
        let drops = Drops::default();
        let (port, chan) = oneshot();
        let message = drops.counted();
        let sender = thread::spawn(move || chan.send(message).map_err(|e| e.into_inner()));
        let mut future = Box::pin(port.recv_async());
        let received = match poll_once(&mut future) {
            std::task::Poll::Ready(received) => Some(received.unwrap()),
            std::task::Poll::Pending => None,
        };
        // Cancel: the registration is taken back (or the sender took it) and the port dropped.
        drop(future);
        let handed_back = sender.join().unwrap().err();
        // Received, or handed back, or (sent into the port and) dropped with it.
        drops.assert_dropped_once(received.or(handed_back));
    });
}

pipes_runtime::proto! {
    echo {
        Ping: send { Ping(u8) -> Pong }
        Pong: recv { Pong(u8) -> Ping }
    }
}

#[test]
fn async_recv_of_a_bounded_protocol_round_trip() {
    loom::model(|| {
        let (server, client) = echo::init();
        let echo = thread::spawn(move || {
            let echo::Ping::Ping(x, pong) = server.recv().unwrap();
            drop(pong.pong(x + 1).unwrap());
        });
        let pong = client.ping(1).unwrap();
        let echo::Pong::Pong(x, client) = block_on(pong.recv_async()).unwrap();
        assert_eq!(x, 2);
        drop(client);
        echo.join().unwrap();
    });
}

pipes_runtime::proto! {
    // `Open` sends to itself: unbounded, so a session is two lanes (two slots a segment here).
    ticks {
        Open: send { Tick(Counted) -> Open, Stop -> ! }
    }
}

/// An unbounded session's client sends a tick and stops while the server receives: the tick
/// arrives and is dropped once, and the stop ends the session. (Segments linked and recycled
/// under a session are the lane's, modelled above; three messages here take minutes.)
///
/// Bounded to five preemptions: 11 s, where unbounded took 280 s
/// (and passed; 2026-11-27, a loaded 2-core VM).
#[test]
fn unbounded_session_sends_then_stops() {
    bounded(5, || {
        let drops = Drops::default();
        let (server, client) = ticks::init();
        let tick = drops.counted();
        let sender = thread::spawn(move || {
            client.tick(tick).unwrap().stop().unwrap();
        });
        let (mut server, mut ticks) = (server, 0);
        while let ticks::Open::Tick(tick, next) = server.recv().unwrap() {
            drop(tick);
            ticks += 1;
            server = next;
        }
        assert_eq!(ticks, 1);
        sender.join().unwrap();
        assert_eq!(drops.count(), 1);
    });
}

/// The server's endpoint is dropped while the client sends: each tick is either dropped with
/// the server's lane or handed back to the client, exactly once, and the client's next send
/// after the drop fails.
#[test]
fn unbounded_session_server_drops_while_the_client_sends() {
    loom::model(|| {
        let drops = Drops::default();
        let (server, client) = ticks::init();
        let counter = drops.clone();
        let sender = thread::spawn(move || match client.tick(counter.counted()) {
            Ok(next) => {
                drop(next.tick(counter.counted()));
                2
            }
            // The server was gone already: the tick comes back, and there is no next endpoint.
            Err(handed_back) => {
                drop(handed_back);
                1
            }
        });
        drop(server);
        let sent = sender.join().unwrap();
        assert_eq!(drops.count(), sent);
    });
}

#[test]
fn stream_async_recv_dropped_mid_wait_keeps_the_port_while_the_chan_sends() {
    loom::model(|| {
        let (mut port, chan) = stream();
        let sender = thread::spawn(move || chan.send(7u8).unwrap());
        let mut future = port.recv_async();
        let first = match poll_once(&mut future) {
            std::task::Poll::Ready(received) => Some(received.unwrap()),
            std::task::Poll::Pending => None,
        };
        drop(future);
        let message = match first {
            Some(message) => message,
            None => block_on(port.recv_async()).unwrap(),
        };
        assert_eq!(message, 7);
        sender.join().unwrap();
    });
}

#[test]
fn port_set_async_recv_sleeps_racing_a_send_and_the_hang_up() {
    loom::model(|| {
        let mut set = PortSet::new();
        let chan = set.chan();
        let sender = thread::spawn(move || {
            chan.send(4u8).unwrap();
            drop(chan);
        });
        assert_eq!(block_on(set.recv_async()).unwrap(), 4);
        assert!(block_on(set.recv_async()).is_err());
        sender.join().unwrap();
    });
}

#[test]
fn select2_async_registers_racing_a_send_and_a_hang_up() {
    loom::model(|| {
        let (a, a_chan) = oneshot::<u8>();
        let (b, b_chan) = oneshot::<u8>();
        let sender = thread::spawn(move || {
            drop(a_chan);
            b_chan.send(2).unwrap();
        });
        // Either may be chosen: a hung up, b holds a message, whichever the select saw first.
        match block_on(pipes_runtime::select::select2_async(a, b)) {
            Either::Left((closed, b)) => {
                assert!(closed.is_err());
                assert_eq!(block_on(b.recv_async()).unwrap(), 2);
            }
            Either::Right((_a, message)) => assert_eq!(message.unwrap(), 2),
        }
        sender.join().unwrap();
    });
}

/// A waker that unparks the loom thread that made it: an executor whose one task is the model's
/// main thread.
fn thread_waker() -> std::task::Waker {
    std::task::Waker::from(std::sync::Arc::new(ThreadWaker(thread::current())))
}

/// Parks until `future`, already polled once and pending, resolves: as an executor does, it
/// polls again only after the waker was woken, so a wake that never comes is a deadlock loom
/// reports.
fn wait_woken<F: std::future::Future + Unpin>(
    future: &mut F,
    waker: &std::task::Waker,
) -> F::Output {
    loop {
        thread::park();
        if let std::task::Poll::Ready(output) = poll_once_with(future, waker) {
            return output;
        }
    }
}

/// An async select over `&set` alone: how several tasks wait on one set at once (a pending
/// `recv_async` borrows the set exclusively, so nothing else can wait beside it but what was
/// forgotten). It registers with the set as a receive does.
fn waiting_on(set: &PortSet<u8>) -> pipes_runtime::select::SelectiFuture<[&dyn Selectable; 1]> {
    selecti_async([set as &dyn Selectable])
}

/// Two tasks wait on one set while its chan sends: one of them (polled with a do-nothing
/// waker) sees the message or gives up, and if it gave up, the other is still woken for it.
///
/// These models do not join their senders (loom runs every thread to its end anyway): a
/// sender wakes the set's sleepers after its exchange, so its unpark can reach the main thread
/// after that has moved on, and loom fails a thread unparked while it blocks in `join`.
///
/// Bounded to five preemptions: about a second, where unbounded took 45 s
/// (and passed; 2026-11-27, a loaded 2-core VM).
#[test]
fn port_set_two_async_waiters_one_gives_up_while_the_chan_sends() {
    bounded(5, || {
        let set = PortSet::new();
        let chan = set.chan();
        // The chan hangs up only once the model is done with the set.
        let _kept = send_and_keep(chan, &[1]);
        let waker = thread_waker();
        let mut kept = waiting_on(&set);
        if poll_once_with(&mut kept, &waker).is_pending() {
            // Sees the message, or leaves pending: either way it takes back its entry.
            let mut other = waiting_on(&set);
            let other_saw = poll_once(&mut other).is_ready();
            drop(other);
            if !other_saw {
                assert_eq!(wait_woken(&mut kept, &waker), 0);
            }
        }
        drop(kept);
        assert_eq!(set.try_recv().unwrap(), 1);
    });
}

/// A port that a thread sends on is added to a set while a task waits on the set: the task is
/// woken without being polled again first, whether the message is in before the add or after.
#[test]
fn port_set_add_of_a_port_races_its_send_while_a_task_waits() {
    loom::model(|| {
        let set = PortSet::new();
        let _quiet = set.chan();
        let (port, chan) = stream();
        let waker = thread_waker();
        let mut waiting = waiting_on(&set);
        assert!(poll_once_with(&mut waiting, &waker).is_pending());
        // The chan hangs up only once the model is done with the set.
        let _kept = send_and_keep(chan, &[2]);
        set.add(port);
        assert_eq!(wait_woken(&mut waiting, &waker), 0);
        drop(waiting);
        assert_eq!(set.try_recv().unwrap(), 2);
    });
}

/// A thread's timed receive, then a blocking one, while a task's wait on the same set stays
/// registered: the thread parks beside the task (it neither spins on the task's sleep nor takes
/// it over) and the send wakes it.
#[test]
fn port_set_recv_timeout_while_a_task_waits_races_a_send() {
    loom::model(|| {
        let set = PortSet::new();
        let chan = set.chan();
        let mut waiting = waiting_on(&set);
        assert!(poll_once(&mut waiting).is_pending());
        // The chan hangs up only once the model is done with the set.
        let _kept = send_and_keep(chan, &[3]);
        match set.recv_timeout(Duration::from_millis(1)) {
            Ok(value) => assert_eq!(value, 3),
            Err(RecvTimeoutError::Timeout(())) => assert_eq!(set.recv().unwrap(), 3),
            Err(RecvTimeoutError::Disconnected(_)) => panic!("the chan sent first"),
        }
        drop(waiting);
    });
}

/// A thread's select over a set while a task's wait on the same set stays registered: the
/// select registers beside the task, and the send wakes it; taking its entry back leaves the
/// task's.
#[test]
fn port_set_select_while_a_task_waits_races_a_send() {
    loom::model(|| {
        let set = PortSet::new();
        let chan = set.chan();
        let mut waiting = waiting_on(&set);
        assert!(poll_once(&mut waiting).is_pending());
        // The chan hangs up only once the model is done with the set.
        let _kept = send_and_keep(chan, &[5]);
        assert_eq!(selecti(&[&set]), 0);
        assert_eq!(set.try_recv().unwrap(), 5);
        drop(waiting);
    });
}

/// A task's async select waits on a set; a receive through the set takes the first message,
/// which leaves its port being served (neither watched nor queued); the select, polled again,
/// must look at the set and watch that port before it waits, or the second message, sent
/// racing all this, never wakes it.
///
/// Bounded to five preemptions: about a second, where unbounded took 92 s
/// (and passed; 2026-11-27, a loaded 2-core VM).
#[test]
fn port_set_async_select_re_polled_after_a_receive_through_the_set_races_the_next_send() {
    bounded(5, || {
        let set = PortSet::new();
        let chan = set.chan();
        let waker = thread_waker();
        let mut waiting = waiting_on(&set);
        assert!(poll_once_with(&mut waiting, &waker).is_pending());
        // The chan hangs up only once the model is done with the set.
        let _kept = send_and_keep(chan, &[1, 2]);
        assert_eq!(set.recv().unwrap(), 1);
        // Polled before waiting: the receive above may have taken the task's wake-up (one
        // thread is both the task's executor and the receiver here).
        if poll_once_with(&mut waiting, &waker).is_pending() {
            assert_eq!(wait_woken(&mut waiting, &waker), 0);
        }
        drop(waiting);
        assert_eq!(set.try_recv().unwrap(), 2);
    });
}

/// Sends `values` on `chan` from a new thread, which then leaves the chan in the returned slot
/// rather than dropping it: it hangs up only when the model drops the slot, so no hang-up
/// multiplies the interleavings. (Returned from the thread instead, it would be dropped in
/// loom's thread teardown, after nothing loom sees as ordered after the send.)
fn send_and_keep(
    chan: Chan<u8>,
    values: &'static [u8],
) -> loom::sync::Arc<loom::sync::Mutex<Option<Chan<u8>>>> {
    let kept = loom::sync::Arc::new(loom::sync::Mutex::new(None));
    let slot = kept.clone();
    thread::spawn(move || {
        for &value in values {
            chan.send(value).unwrap();
        }
        *slot.lock().unwrap() = Some(chan);
    });
    kept
}

/// Polls `future` once with `waker`.
fn poll_once_with<F: std::future::Future + Unpin>(
    future: &mut F,
    waker: &std::task::Waker,
) -> std::task::Poll<F::Output> {
    std::pin::Pin::new(future).poll(&mut std::task::Context::from_waker(waker))
}

#[test]
fn a_forgotten_select_watch_then_a_receive_racing_the_send() {
    loom::model(|| {
        let (port, chan) = stream::<u8>();
        let sender = thread::spawn(move || chan.send(1).unwrap());
        let endpoints: [&dyn Selectable; 1] = [&port];
        // Not dropped while the port receives, as if forgotten: its watch stays in the word.
        let mut select = std::mem::ManuallyDrop::new(selecti_async(&endpoints));
        let _ = poll_once(&mut *select);
        assert_eq!(port.recv().unwrap(), 1);
        sender.join().unwrap();
        drop(std::mem::ManuallyDrop::into_inner(select));
        assert!(port.recv().is_err());
    });
}

#[test]
fn a_thread_select_displaces_a_pending_task_watch_racing_the_send() {
    loom::model(|| {
        let (port, chan) = stream::<u8>();
        let sender = thread::spawn(move || chan.send(1).unwrap());
        let endpoints: [&dyn Selectable; 1] = [&port];
        let mut task = selecti_async(&endpoints);
        let _ = poll_once(&mut task);
        assert_eq!(selecti(&[&port]), 0);
        // The message is there: the task's next poll sees it, whoever took its watch.
        assert_eq!(poll_once(&mut task), std::task::Poll::Ready(0));
        drop(task);
        assert_eq!(port.recv().unwrap(), 1);
        sender.join().unwrap();
    });
}

/// A task watches a port; another task's watch goes on top and carries it. The send must wake
/// the one below, whether the one on top is still there (`drop_above_first` false: the send
/// wakes the whole chain) or dropped first, racing the send (its drop puts the carried watch
/// back, or wakes it if the send came first).
fn a_carried_watch_is_woken(drop_above_first: bool) {
    loom::model(move || {
        let (port, chan) = stream::<u8>();
        let (done, done_chan) = oneshot::<()>();
        let sender = thread::spawn(move || {
            chan.send(1).unwrap();
            done_chan.send(()).unwrap();
        });
        let endpoints: [&dyn Selectable; 1] = [&port];
        let waker = thread_waker();
        let mut below = selecti_async(&endpoints);
        if poll_once_with(&mut below, &waker).is_pending() {
            let mut above = selecti_async(&endpoints);
            let _ = poll_once(&mut above);
            let above = if drop_above_first {
                drop(above);
                None
            } else {
                Some(above)
            };
            assert_eq!(wait_woken(&mut below, &waker), 0);
            drop(above);
        }
        drop(below);
        assert_eq!(port.recv().unwrap(), 1);
        // The send may unpark us after we stopped polling; loom takes a stray unpark reaching
        // `join` for a lost notification, so wait in a park first.
        done.recv().unwrap();
        sender.join().unwrap();
    });
}

#[test]
fn two_tasks_watch_one_port_and_one_send_wakes_the_one_below() {
    a_carried_watch_is_woken(false);
}

#[test]
fn the_carrier_of_a_watch_drops_racing_the_send_and_the_carried_one_is_still_woken() {
    a_carried_watch_is_woken(true);
}

/// Two futures of one task (one waker: say two selects joined) watch a port, and the first is
/// given up racing the send: the second must still be woken, since each keeps a registration
/// of its own. (The second used to rely on the first's waiter, which wakes the same task, and
/// its drop took that out of the word: a hang.)
#[test]
fn two_watches_of_one_task_and_the_first_dropped_racing_the_send() {
    loom::model(|| {
        let (port, chan) = stream::<u8>();
        let (done, done_chan) = oneshot::<()>();
        let sender = thread::spawn(move || {
            chan.send(1).unwrap();
            done_chan.send(()).unwrap();
        });
        let endpoints: [&dyn Selectable; 1] = [&port];
        let waker = thread_waker();
        let mut first = selecti_async(&endpoints);
        let mut second = selecti_async(&endpoints);
        let pending = poll_once_with(&mut first, &waker).is_pending()
            && poll_once_with(&mut second, &waker).is_pending();
        drop(first);
        if pending {
            assert_eq!(wait_woken(&mut second, &waker), 0);
        }
        drop(second);
        assert_eq!(port.recv().unwrap(), 1);
        // As in `a_carried_watch_is_woken`: a stray unpark must not reach `join`.
        done.recv().unwrap();
        sender.join().unwrap();
    });
}

#[test]
fn a_select_future_moved_to_another_waker_while_the_send_races() {
    loom::model(|| {
        let (port, chan) = oneshot::<u8>();
        let sender = thread::spawn(move || chan.send(3).unwrap());
        let endpoints: [&dyn Selectable; 1] = [&port];
        let mut select = selecti_async(&endpoints);
        if poll_once(&mut select).is_pending() {
            // The task moved: the re-poll replaces the no-op waker with block_on's.
            assert_eq!(block_on(&mut select), 0);
        }
        drop(select);
        assert_eq!(port.recv().unwrap(), 3);
        sender.join().unwrap();
    });
}

pipes_runtime::proto! {
    // Bounded, two states with messages: a session buffer.
    ask {
        Ask: send { Question(u8) -> Answer }
        Answer: recv { Reply(u8) -> ! }
    }
}

pipes_runtime::proto! {
    // One state with messages, used once: a single-use packet.
    once {
        Start: recv { Done(u8) -> ! }
    }
}

/// A remote session's pump closes the endpoint it sends on with a cause (`CloseWith`) while
/// the peer waits in that state: the peer's receive fails with that cause, in each layout.
#[test]
fn close_with_a_cause_races_the_waiting_receive_in_a_buffer() {
    loom::model(|| {
        let (server, client) = ask::init();
        let answer = client.question(1).unwrap();
        let pump = thread::spawn(move || {
            let ask::Ask::Question(_, reply) = server.recv().unwrap();
            reply.close_with(Cause::ConnectionLost);
        });
        assert_eq!(answer.recv().unwrap_err().cause(), Cause::ConnectionLost);
        pump.join().unwrap();
    });
}

/// Bounded to five preemptions: 2 s, where unbounded took 38 s
/// (and passed; 2026-11-27, a loaded 2-core VM).
#[test]
fn close_with_a_cause_races_the_waiting_receive_in_lanes() {
    bounded(5, || {
        let drops = Drops::default();
        let (server, client) = ticks::init();
        let tick = drops.counted();
        let pump = thread::spawn(move || client.tick(tick).unwrap().close_with(Cause::Timeout));
        let ticks::Open::Tick(tick, server) = server.recv().unwrap() else {
            panic!("not the tick")
        };
        drop(tick);
        match server.recv() {
            Err(error) => assert_eq!(error.cause(), Cause::Timeout),
            Ok(_) => panic!("a second tick"),
        }
        pump.join().unwrap();
        assert_eq!(drops.count(), 1);
    });
}

#[test]
fn close_with_a_cause_races_the_waiting_receive_in_a_packet() {
    loom::model(|| {
        let (server, client) = once::init();
        let pump = thread::spawn(move || server.close_with(Cause::Violation));
        assert_eq!(client.recv().unwrap_err().cause(), Cause::Violation);
        pump.join().unwrap();
    });
}

#[test]
fn close_with_a_cause_races_the_receivers_drop_in_a_packet() {
    loom::model(|| {
        let (server, client) = once::init();
        let pump = thread::spawn(move || server.close_with(Cause::Aborted));
        drop(client);
        pump.join().unwrap();
    });
}

/// An unbounded session whose receiver reports with a room of 1 and whose sender sent a tick,
/// so it has no room; with the ticks' drop counts.
fn a_full_room() -> (ticks::server::Open, ticks::client::Open, Drops) {
    let (server, client) = ticks::init();
    server.report(1);
    let drops = Drops::default();
    let client = client.tick(drops.counted()).unwrap();
    (server, client, drops)
}

/// Receives and drops one tick: the take that makes room.
fn take_a_tick(server: ticks::server::Open) -> ticks::server::Open {
    let ticks::Open::Tick(tick, server) = server.recv().unwrap() else {
        panic!("not the tick")
    };
    drop(tick);
    server
}

#[test]
fn a_sender_waiting_for_room_races_the_receivers_take() {
    loom::model(|| {
        let (server, client, drops) = a_full_room();
        let taker = thread::spawn(move || take_a_tick(server));
        // No lost wake-up: the take that makes room wakes the wait, whenever it comes.
        assert!(wait_room(&client, None));
        drop(taker.join().unwrap());
        drop(client);
        assert_eq!(drops.count(), 1);
    });
}

#[test]
fn a_sender_waiting_for_room_races_the_receivers_drop() {
    loom::model(|| {
        let (server, client, drops) = a_full_room();
        let dropper = thread::spawn(move || drop(server));
        assert!(wait_room(&client, None));
        assert!(client.tick(drops.counted()).is_err());
        dropper.join().unwrap();
        assert_eq!(drops.count(), 2);
    });
}

#[test]
fn a_task_waiting_for_room_races_the_receivers_take() {
    loom::model(|| {
        let (server, client, drops) = a_full_room();
        let taker = thread::spawn(move || take_a_tick(server));
        // The task's waker is left in the word, or the take came first: either way it resolves.
        let client = block_on(RoomFuture::new(client));
        drop(taker.join().unwrap());
        drop(client);
        assert_eq!(drops.count(), 1);
    });
}

/// A task waiting for room moves to another waker while the take races: the take wakes the
/// second (or came first). (This and the three below: review 6.)
#[test]
fn a_task_waiting_for_room_moves_to_another_waker_racing_the_take() {
    loom::model(|| {
        let (server, client, drops) = a_full_room();
        let mut future = RoomFuture::new(client);
        let first = poll_once(&mut future);
        let taker = thread::spawn(move || take_a_tick(server));
        let client = match first {
            std::task::Poll::Ready(client) => client,
            // Moved: polled with the new waker, then woken through it.
            std::task::Poll::Pending => block_on(&mut future),
        };
        drop(taker.join().unwrap());
        drop(client);
        assert_eq!(drops.count(), 1);
    });
}

/// A pending wait for room cancelled while the take races; then a thread's wait finds room.
#[test]
fn a_cancelled_wait_for_room_races_the_take() {
    loom::model(|| {
        let (server, client, drops) = a_full_room();
        let mut future = RoomFuture::new(client);
        let _ = poll_once(&mut future);
        let taker = thread::spawn(move || take_a_tick(server));
        let client = future.cancel();
        assert!(wait_room(&client, None));
        drop(taker.join().unwrap());
        drop(client);
        assert_eq!(drops.count(), 1);
    });
}

/// A thread's wait for room that times out (every timed park does under loom) races the take,
/// or the receiver's drop; a wait without a deadline then still finds room.
#[test]
fn a_timed_out_wait_for_room_races_the_take_or_the_drop() {
    for take in [true, false] {
        loom::model(move || {
            let (server, client, drops) = a_full_room();
            let other = thread::spawn(move || {
                if take {
                    drop(take_a_tick(server));
                } else {
                    drop(server);
                }
            });
            let deadline = std::time::Instant::now() + Duration::from_millis(1);
            let _ = wait_room(&client, Some(deadline));
            assert!(wait_room(&client, None));
            other.join().unwrap();
            drop(client);
            assert_eq!(drops.count(), 1);
        });
    }
}

/// A task waits for room while the receiver takes, then drops: it resolves either way, and
/// nothing is left in the word (loom fails a model that leaks a waiter).
#[test]
fn a_task_waiting_for_room_races_a_take_then_the_receivers_drop() {
    loom::model(|| {
        let (server, client, drops) = a_full_room();
        let mut future = RoomFuture::new(client);
        let first = poll_once_with(&mut future, &thread_waker());
        let taker = thread::spawn(move || drop(take_a_tick(server)));
        let client = match first {
            std::task::Poll::Ready(client) => client,
            std::task::Poll::Pending => wait_woken(&mut future, &thread_waker()),
        };
        taker.join().unwrap();
        drop(client);
        assert_eq!(drops.count(), 1);
    });
}

/// An async receive on a shared chan's port while one producer sends across a segment's end
/// (the second message's segment is linked by the first's producer after its publish, and the
/// close marker is in a third; segments are 2 slots under loom). A re-poll after the link's
/// ring used to keep the spent link arm and miss the next wake: a deadlock here.
#[test]
fn async_recv_on_a_shared_port_across_links() {
    bounded(3, || {
        let (mut port, chan) = stream::<u8>();
        let shared = SharedChan::new(chan);
        assert!(port.try_recv().is_err());
        let sender = thread::spawn(move || {
            for i in 1..=3 {
                shared.send(i).unwrap();
            }
        });
        let mut got = Vec::new();
        while let Ok(i) = block_on(port.recv_async()) {
            got.push(i);
        }
        assert_eq!(got, [1, 2, 3]);
        sender.join().unwrap();
    });
}

/// A port whose timed-out wait armed a slot (its producer may ring late, a stale ring) joins a
/// port set, which then watches it on the queue. A stale ring that took the set's watch while
/// the registration was being taken back used to list the port twice (a panic here).
#[test]
fn port_set_member_on_a_queue_after_a_timed_out_wait() {
    bounded(3, || {
        let (port, chan) = stream::<u8>();
        let shared = SharedChan::new(chan);
        assert!(port.try_recv().is_err());
        let sender = thread::spawn(move || {
            shared.send(1).unwrap();
            shared.send(2).unwrap();
        });
        let mut got = Vec::new();
        if let Ok(i) = port.recv_timeout(Duration::from_millis(1)) {
            got.push(i);
        }
        let set = PortSet::new();
        set.add(port);
        while let Ok(i) = set.recv() {
            got.push(i);
        }
        assert_eq!(got, [1, 2]);
        sender.join().unwrap();
    });
}

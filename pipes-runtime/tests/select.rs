//! Select over endpoints of any protocol and state: the 2012 tests pipe-select, pipe-peek,
//! pipe-sleep and pipe-detect-term (src/test/run-pass, Rust 0.4-0.6) ported, then the scenarios
//! the new surface adds (timeouts, vectors, borrowed ports, mixed protocols, fairness).

mod common;

use std::thread;
use std::time::Duration;

use common::{SETTLE, pingpong, size};
use pipes_runtime::{
    Either, Port, PortOne, RecvTimeoutError, oneshot, select,
    select::{Selectable, select_timeout, select2_timeout, selecti_timeout},
    select2, selecti, stream,
};

/// pipe-select: a service receives pairs of oneshots over a stream and selects on each pair;
/// select returns the index of the one that was signalled.
#[test]
fn pipe_select_returns_the_signalled_oneshot() {
    let (pairs, pairs_chan) = stream::<(PortOne<()>, PortOne<()>)>();
    let service = thread::spawn(move || {
        let (left, right) = pairs.recv().unwrap();
        let (i, message, _rest) = select(vec![left, right]);
        assert_eq!(i, 0);
        assert!(message.is_ok());
        let (left, right) = pairs.recv().unwrap();
        let (i, message, _rest) = select(vec![left, right]);
        assert_eq!(i, 1);
        assert!(message.is_ok());
    });
    let (p1, c1) = oneshot();
    let (p2, c2) = oneshot();
    pairs_chan.send((p1, p2)).unwrap();
    thread::sleep(SETTLE);
    c1.send(()).unwrap();
    // c2 lives on, unsent, so only the signal can wake the select.
    let (p3, c3) = oneshot();
    let (p4, c4) = oneshot();
    pairs_chan.send((p3, p4)).unwrap();
    thread::sleep(SETTLE);
    c4.send(()).unwrap();
    service.join().unwrap();
    drop((c2, c3));
}

/// pipe-select's test_select2: Left when only `a` has data, Right when only `b` has.
#[test]
fn select2_left_when_only_a_has_data_right_when_only_b() {
    let (ap, ac) = stream::<u32>();
    let (bp, bc) = stream::<String>();
    ac.send(42).unwrap();
    match select2(&ap, &bp) {
        Either::Left((message, _b)) => assert_eq!(message.unwrap(), 42),
        Either::Right(_) => panic!("only a had data"),
    }
    bc.send("abc".into()).unwrap();

    let (ap, ac) = stream::<u32>();
    let (bp, bc) = stream::<String>();
    bc.send("abc".into()).unwrap();
    match select2(&ap, &bp) {
        Either::Left(_) => panic!("only b had data"),
        Either::Right((_a, message)) => assert_eq!(message.unwrap(), "abc"),
    }
    ac.send(42).unwrap();
}

/// pipe-peek: a peek is false before the signal and true after. `selecti` with a zero timeout
/// is the peek over any endpoint; a stream port has `peek` itself.
#[test]
fn pipe_peek_sees_the_signal() {
    let (port, chan) = oneshot::<()>();
    assert_eq!(selecti_timeout(&[&port], Duration::ZERO), None);
    chan.send(()).unwrap();
    assert_eq!(selecti_timeout(&[&port], Duration::ZERO), Some(0));
    port.recv().unwrap();

    let (port, chan) = stream::<u8>();
    assert!(!port.peek());
    chan.send(1).unwrap();
    assert!(port.peek());
    assert_eq!(port.recv().unwrap(), 1);
    assert!(!port.peek());
    // test_peek_terminated (Rust 0.6): a hang-up is not a message.
    drop(chan);
    assert!(!port.peek());
}

/// pipe-sleep: a blocked receive is woken 500 ms later, and so is a blocked select.
#[test]
fn pipe_sleep_a_blocked_receive_and_select_wake_500ms_later() {
    let delay = if cfg!(miri) {
        SETTLE
    } else {
        Duration::from_millis(500)
    };
    let (port, chan) = oneshot::<()>();
    let service = thread::spawn(move || port.recv());
    thread::sleep(delay);
    chan.send(()).unwrap();
    service.join().unwrap().unwrap();

    let (a, _ac) = oneshot::<()>();
    let (b, bc) = oneshot::<()>();
    let service = thread::spawn(move || matches!(select2(a, b), Either::Right((_, Ok(())))));
    thread::sleep(delay);
    bc.send(()).unwrap();
    assert!(service.join().unwrap());
}

/// pipe-detect-term: a service whose client was dropped sees it, and a thread that panics while
/// holding a chan does not leave its peer hanging.
#[test]
fn pipe_detect_term_a_dropped_or_failing_peer_is_seen() {
    let (port, chan) = oneshot::<()>();
    let service = thread::spawn(move || port.try_recv().is_err());
    drop(chan);
    assert!(service.join().unwrap());

    let (port, chan) = oneshot::<()>();
    let failing = thread::spawn(move || {
        let _chan = chan;
        panic!("the failing task of pipe-detect-term");
    });
    assert!(port.recv().is_err());
    assert!(failing.join().is_err());

    // The same seen through a select that is already blocked.
    let (a, _ac) = oneshot::<()>();
    let (b, bc) = oneshot::<()>();
    let failing = thread::spawn(move || {
        thread::sleep(SETTLE);
        let _chan = bc;
        panic!("failing while the peer selects");
    });
    match select2(a, b) {
        Either::Right((_a, message)) => assert!(message.is_err()),
        Either::Left(_) => panic!("a's chan is alive and silent"),
    }
    assert!(failing.join().is_err());
}

#[test]
fn selecti_waits_for_the_one_signalled_among_many() {
    let n = size(100, 8);
    let signalled = n * 4 / 7;
    let (ports, mut chans): (Vec<_>, Vec<_>) = (0..n).map(|_| oneshot::<usize>()).unzip();
    let chan = chans.remove(signalled);
    let sender = thread::spawn(move || {
        thread::sleep(SETTLE);
        chan.send(7).unwrap();
    });
    let endpoints: Vec<&dyn Selectable> = ports.iter().map(|p| p as &dyn Selectable).collect();
    assert_eq!(selecti(&endpoints), signalled);
    sender.join().unwrap();
    // Nothing is left registered: every other port still works and times out cleanly.
    let (i, message, rest) = select_timeout(ports, Duration::from_millis(1)).unwrap();
    assert_eq!((i, message.unwrap()), (signalled, 7));
    let rest = select_timeout(rest, Duration::from_millis(1)).unwrap_err();
    assert_eq!(rest.len(), n - 1);
    drop(chans);
    // Every chan is gone now: each remaining port is ready with a hang-up.
    let (_, message, rest) = select(rest);
    assert!(message.is_err());
    assert_eq!(rest.len(), n - 2);
}

#[test]
fn select_removes_the_ready_one_and_keeps_the_order_of_the_rest() {
    let (ports, chans): (Vec<_>, Vec<_>) = (0..5u32).map(|_| oneshot::<u32>()).unzip();
    let mut chans: Vec<_> = chans.into_iter().map(Some).collect();
    chans[2].take().unwrap().send(2).unwrap();
    let (i, message, rest) = select(ports);
    assert_eq!((i, message.unwrap()), (2, 2));
    // Former indices 0, 1, 3, 4, in that order: send on former 3 (now 2), then on former 0.
    chans[3].take().unwrap().send(3).unwrap();
    let (i, message, rest) = select(rest);
    assert_eq!((i, message.unwrap()), (2, 3));
    chans[0].take().unwrap().send(0).unwrap();
    let (i, message, rest) = select(rest);
    assert_eq!((i, message.unwrap()), (0, 0));
    assert_eq!(rest.len(), 2);
}

#[test]
fn timeouts_hand_every_endpoint_back_and_leave_nothing_registered() {
    let (a, ac) = oneshot::<u8>();
    let (b, bc) = oneshot::<u8>();
    let (a, b) = select2_timeout(a, b, Duration::from_millis(5)).unwrap_err();
    let ports = select_timeout(vec![a, b], Duration::from_millis(5)).unwrap_err();
    let endpoints: Vec<&dyn Selectable> = ports.iter().map(|p| p as &dyn Selectable).collect();
    assert_eq!(selecti_timeout(&endpoints, Duration::from_millis(5)), None);
    // A plain receive after all that still parks and wakes normally.
    let mut ports = ports.into_iter();
    let (a, b) = (ports.next().unwrap(), ports.next().unwrap());
    let sender = thread::spawn(move || {
        thread::sleep(SETTLE);
        bc.send(2).unwrap();
        ac.send(1).unwrap();
    });
    assert_eq!(b.recv().unwrap(), 2);
    assert_eq!(a.recv().unwrap(), 1);
    sender.join().unwrap();
}

#[test]
fn select_and_timeouts_accept_empty_input_only_where_it_can_end() {
    assert_eq!(selecti_timeout(&[], Duration::ZERO), None);
    assert!(select_timeout(Vec::<PortOne<()>>::new(), Duration::ZERO).is_err());
    // A timeout too long to represent is "no timeout" for a non-empty select, but an empty one
    // still cannot wait: it hands its input back as documented rather than panic.
    assert_eq!(selecti_timeout(&[], Duration::MAX), None);
    assert!(select_timeout(Vec::<PortOne<()>>::new(), Duration::MAX).is_err());
    assert!(std::panic::catch_unwind(|| selecti(&[])).is_err());
}

/// A oneshot, a stream port and a bounded protocol's endpoint in one select.
#[test]
fn selecti_mixes_protocols_and_states() {
    let (one, one_chan) = oneshot::<u8>();
    let (port, chan) = stream::<String>();
    let (server, client) = pingpong::init::<u64>();
    let endpoints: [&dyn Selectable; 3] = [&one, &port, &server];
    let pinger = thread::spawn(move || {
        thread::sleep(SETTLE);
        client.ping(9).ok().unwrap()
    });
    assert_eq!(selecti(&endpoints), 2);
    let pong = pinger.join().unwrap();
    match select2(&port, server) {
        Either::Right((_, Ok(pingpong::Ping::Ping(9, reply)))) => drop(reply.pong(10)),
        _ => panic!("the ping was sent, nothing else"),
    }
    assert_eq!(pong.recv().unwrap().0, 10);
    chan.send("x".into()).unwrap();
    assert_eq!(selecti(&[&one, &port]), 1);
    drop(one_chan);
    assert_eq!(selecti(&[&one]), 0);
    assert!(one.recv().is_err());
}

#[test]
fn a_port_selected_twice_is_waited_on_once() {
    let (port, chan) = stream::<u8>();
    let sender = thread::spawn(move || {
        thread::sleep(SETTLE);
        chan.send(1).unwrap();
        chan
    });
    assert!(selecti(&[&port, &port]) < 2);
    // Reported ready only once the message is there (a second registration of the same waiter
    // is not readiness).
    assert_eq!(port.try_recv().unwrap(), 1);
    let chan = sender.join().unwrap();
    // No stale waiter was left in the packet: a plain blocking receive still works.
    let sender = thread::spawn(move || {
        thread::sleep(SETTLE);
        chan.send(2).unwrap();
    });
    assert_eq!(port.recv().unwrap(), 2);
    sender.join().unwrap();
}

#[test]
fn a_closed_stream_port_is_always_ready_with_a_hang_up() {
    let (port, chan) = stream::<u8>();
    drop(chan);
    assert!(port.recv().is_err());
    // The port has no packet left; select still sees it closed, again and again.
    for _ in 0..3 {
        match select2(&port, oneshot::<()>().0) {
            Either::Left((message, _)) => assert!(message.is_err()),
            Either::Right(_) => panic!("the oneshot is silent"),
        }
    }
}

/// Two streams that always have messages: a loop of `select2` serves both.
/// Serves two always-ready streams `rounds` times with `selects_per_round` selects each round,
/// the first of which is counted (Go's select fairness test selects twice per round: a start
/// position that merely alternated per thread served one port every time).
fn served_by_select(rounds: usize, selects_per_round: usize) -> [usize; 2] {
    let (a, ac) = stream::<u8>();
    let (b, bc) = stream::<u8>();
    for _ in 0..rounds * selects_per_round {
        ac.send(0).unwrap();
        bc.send(1).unwrap();
    }
    let mut served = [0usize; 2];
    for _ in 0..rounds {
        for select in 0..selects_per_round {
            let side = match select2(&a, &b) {
                Either::Left((message, _)) => message.unwrap(),
                Either::Right((_, message)) => message.unwrap(),
            };
            if select == 0 {
                served[usize::from(side)] += 1;
            }
        }
    }
    served
}

#[test]
fn select2_on_two_always_ready_streams_serves_both_about_equally() {
    let rounds = size(10_000, 200);
    for selects_per_round in [1, 2] {
        let served = served_by_select(rounds, selects_per_round);
        // Uniform choice: each side's count is ~N(rounds/2, sqrt(rounds)/2); a third is more
        // than 30 deviations away at 10,000 rounds, and 4 at Miri's 200.
        assert!(
            served.iter().all(|&n| n > rounds / 3),
            "served {served:?} with {selects_per_round} selects a round"
        );
    }
}

#[test]
fn select_timeout_sees_a_message_sent_while_it_waits() {
    let (ports, chans): (Vec<Port<u32>>, Vec<_>) = (0..3).map(|_| stream()).unzip();
    let sender = thread::spawn(move || {
        thread::sleep(SETTLE);
        chans[1].send(11).unwrap();
        chans
    });
    let refs: Vec<&Port<u32>> = ports.iter().collect();
    let (i, message, _) = select_timeout(refs, Duration::from_secs(60)).unwrap();
    assert_eq!((i, message.unwrap()), (1, 11));
    drop(sender.join().unwrap());
    // A borrowed port's receive with a timeout reports the hang-up.
    match pipes_runtime::Recv::recv_timeout(&ports[0], Duration::ZERO) {
        Err(RecvTimeoutError::Disconnected(error)) => assert_eq!(error.protocol(), "stream"),
        _ => panic!("the chan is gone"),
    }
}

// Select over port sets: a set is ready when a receive from it would not block.

#[test]
fn select2_over_a_port_set_and_a_oneshot_takes_the_one_with_a_message() {
    let set = pipes_runtime::PortSet::new();
    let chan = set.chan();
    let (port, one) = pipes_runtime::oneshot::<&str>();
    chan.send(7u32).unwrap();
    match pipes_runtime::select2(&set, port) {
        pipes_runtime::Either::Left((message, _port)) => assert_eq!(message.unwrap(), 7),
        pipes_runtime::Either::Right(_) => panic!("only the set had a message"),
    }
    let (port, one2) = pipes_runtime::oneshot::<&str>();
    drop(one);
    one2.send("oneshot").unwrap();
    match pipes_runtime::select2(&set, port) {
        pipes_runtime::Either::Right((_set, message)) => assert_eq!(message.unwrap(), "oneshot"),
        pipes_runtime::Either::Left(_) => panic!("the set was empty"),
    }
}

#[test]
fn selecti_blocks_until_a_chan_of_the_set_sends_from_another_thread() {
    let set = pipes_runtime::PortSet::new();
    let chans: Vec<_> = (0..3).map(|_| set.chan()).collect();
    let (_quiet, _quiet_chan) = pipes_runtime::oneshot::<u8>();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(common::SETTLE);
        chans[2].send(42u64).unwrap();
        chans
    });
    assert_eq!(pipes_runtime::selecti(&[&_quiet, &set]), 1);
    assert_eq!(set.try_recv().unwrap(), 42);
    drop(sender.join().unwrap());
}

#[test]
fn a_hang_up_alone_does_not_make_a_set_ready_but_the_last_one_does() {
    let set = pipes_runtime::PortSet::<u8>::new();
    let (first, second) = (set.chan(), set.chan());
    drop(first);
    // One chan is gone and the other is quiet: a receive would block, so the set is not ready.
    assert_eq!(
        pipes_runtime::select::selecti_timeout(&[&set], std::time::Duration::from_millis(5)),
        None
    );
    assert_eq!(set.len(), 1);
    drop(second);
    // No chan left: a receive fails at once, so the set is ready.
    assert_eq!(pipes_runtime::selecti(&[&set]), 0);
    assert!(set.recv().is_err());
}

#[test]
fn the_same_set_twice_in_one_select() {
    let set = pipes_runtime::PortSet::new();
    let chan = set.chan();
    let sender = std::thread::spawn(move || {
        std::thread::sleep(common::SETTLE);
        chan.send(1u8).unwrap();
        chan
    });
    let ready = pipes_runtime::selecti(&[&set, &set]);
    assert!(ready < 2);
    assert_eq!(set.recv().unwrap(), 1);
    drop(sender.join().unwrap());
    assert!(set.recv().is_err());
}

#[test]
fn select_over_a_port_set_never_misses_its_sender() {
    for _ in 0..size(2_000, 20) {
        let set = pipes_runtime::PortSet::new();
        let chan = set.chan();
        let (quiet, _quiet_chan) = pipes_runtime::oneshot::<u8>();
        let sender = std::thread::spawn(move || chan.send(5u8).unwrap());
        assert_eq!(pipes_runtime::selecti(&[&quiet, &set]), 1);
        assert_eq!(set.recv().unwrap(), 5);
        sender.join().unwrap();
        assert!(set.recv().is_err());
    }
}

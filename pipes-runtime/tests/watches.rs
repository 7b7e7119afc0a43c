//! Watches left in an endpoint's state word by async selects over borrowed endpoints: a
//! future that is forgotten (`mem::forget` is safe), a receive through the endpoint while the
//! future is pending, two futures watching one endpoint. None of these may make a receive free
//! a packet its sender may still write (these tests run under Miri in CI), hang, or spin.

use std::task::Poll;
use std::thread;
use std::time::Duration;

mod common;

use common::task::{block_on, counting, poll_once, wakes};
use pipes_runtime::__private::{Receiving, RecvEndpoint, StateName};
use pipes_runtime::select::{Selectable, select2_async, selecti_async};
use pipes_runtime::{Either, PortOne, PortSet, oneshot, selecti, stream};

pipes_runtime::proto! {
    pub ticks {
        Open: send { Tick([u64; 128]) -> Open, Stop -> ! }
    }
}

/// A payload large enough that a write into freed memory would land far past a header.
fn tick(i: u64) -> [u64; 128] {
    [i; 128]
}

/// Sends `n` big messages on `chan` from another thread, after a pause so the receiver blocks.
fn send_later(chan: pipes_runtime::Chan<[u64; 128]>, n: u64) -> thread::JoinHandle<()> {
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        for i in 0..n {
            chan.send(tick(i)).unwrap();
        }
    })
}

#[test]
fn a_forgotten_select_future_leaves_a_watch_that_a_blocking_receive_takes_over() {
    let (port, chan) = stream::<[u64; 128]>();
    let (_count, waker) = counting();
    let endpoints: [&dyn Selectable; 1] = [&port];
    let mut select = selecti_async(&endpoints);
    assert!(poll_once(&mut select, &waker).is_pending());
    common::forget(select);
    // The receive finds the forgotten future's waiter in the word: it must wait for the message,
    // not take the waiter for a hang-up and free the packet the chan is about to write.
    let sender = send_later(chan, 3);
    for i in 0..3 {
        assert_eq!(port.recv().unwrap(), tick(i));
    }
    sender.join().unwrap();
    assert!(port.recv().is_err(), "the chan is gone");
}

/// A port's own receive future, polled and forgotten: its exclusive borrow of the port ends,
/// its watch stays in the lane's word, and the port's next receives (blocking, async, select)
/// must wait for the messages rather than take that watch for a hang-up.
#[test]
fn a_forgotten_port_receive_leaves_a_watch_that_the_next_receives_take_over() {
    let (mut port, chan) = stream::<[u64; 128]>();
    let (_count, waker) = counting();
    let mut receive = port.recv_async();
    assert!(poll_once(&mut receive, &waker).is_pending());
    common::forget(receive);
    let sender = send_later(chan, 3);
    assert_eq!(port.recv().unwrap(), tick(0));
    assert_eq!(block_on(port.recv_async()).unwrap(), tick(1));
    assert_eq!(selecti(&[&port]), 0);
    assert_eq!(port.try_recv().unwrap(), tick(2));
    sender.join().unwrap();
    assert!(port.recv().is_err(), "the chan is gone");
}

/// The same for a port set's receive future: its entry with the set stays until the next
/// message wakes it once and drops it, and the set's next receives get every message.
#[test]
fn a_forgotten_port_set_receive_leaves_an_entry_the_next_message_drops() {
    let mut set = PortSet::new();
    let chan = set.chan();
    let (count, waker) = counting();
    let mut receive = set.recv_async();
    assert!(poll_once(&mut receive, &waker).is_pending());
    common::forget(receive);
    let sender = send_later(chan, 2);
    assert_eq!(block_on(set.recv_async()).unwrap(), tick(0));
    assert_eq!(set.recv().unwrap(), tick(1));
    sender.join().unwrap();
    assert!(set.recv().is_err(), "the chan is gone");
    assert!(wakes(&count) <= 1, "woken at most once, spuriously");
}

#[test]
fn a_receive_while_a_select_future_is_pending_gets_the_message_and_the_future_still_works() {
    let (port, chan) = stream::<[u64; 128]>();
    let (count, waker) = counting();
    let endpoints: [&dyn Selectable; 1] = [&port];
    let mut select = selecti_async(&endpoints);
    assert!(poll_once(&mut select, &waker).is_pending());
    let sender = send_later(chan, 2);
    assert_eq!(port.recv().unwrap(), tick(0));
    // The receive displaced the future's watch and woke it, so its task polls again: the
    // future watches the port's next packet, which the second send fills.
    assert!(wakes(&count) >= 1, "a displaced watch is woken");
    sender.join().unwrap();
    assert_eq!(poll_once(&mut select, &waker), Poll::Ready(0));
    drop(select);
    assert_eq!(port.recv().unwrap(), tick(1));
    assert!(port.recv().is_err());
}

#[test]
fn a_receive_with_a_timeout_over_a_forgotten_watch_times_out_and_receives_later() {
    let (port, chan) = stream::<u32>();
    let (_count, waker) = counting();
    let endpoints: [&dyn Selectable; 1] = [&port];
    let mut select = selecti_async(&endpoints);
    assert!(poll_once(&mut select, &waker).is_pending());
    common::forget(select);
    assert!(
        port.recv_timeout(Duration::from_millis(10))
            .unwrap_err()
            .into_endpoint()
            .is_some(),
        "nothing was sent: a timeout, not a hang-up"
    );
    assert!(port.try_recv().unwrap_err().into_endpoint().is_some());
    chan.send(7).unwrap();
    assert_eq!(port.recv().unwrap(), 7);
}

#[test]
fn a_thread_select_over_a_forgotten_watch_waits_for_the_message() {
    let (port, chan) = stream::<[u64; 128]>();
    let (_count, waker) = counting();
    let endpoints: [&dyn Selectable; 1] = [&port];
    let mut select = selecti_async(&endpoints);
    assert!(poll_once(&mut select, &waker).is_pending());
    common::forget(select);
    let sender = send_later(chan, 1);
    assert_eq!(selecti(&[&port]), 0);
    assert_eq!(port.try_recv().unwrap(), tick(0));
    sender.join().unwrap();
}

#[test]
fn a_generated_endpoint_received_after_its_select_future_was_forgotten() {
    let (server, client) = ticks::init();
    let (_count, waker) = counting();
    {
        let endpoints: [&dyn Selectable; 1] = [&server];
        let mut select = selecti_async(&endpoints);
        assert!(poll_once(&mut select, &waker).is_pending());
        common::forget(select);
    }
    let sender = thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        client.tick(tick(5)).unwrap().stop().unwrap();
    });
    let ticks::Open::Tick(payload, server) = server.recv().unwrap() else {
        panic!("a tick was sent first");
    };
    assert_eq!(payload, tick(5));
    assert!(matches!(server.recv().unwrap(), ticks::Open::Stop));
    sender.join().unwrap();
}

#[test]
fn select2_async_over_borrowed_ports_forgotten_then_received() {
    let (a, a_chan) = stream::<[u64; 128]>();
    let (b, _b_chan) = stream::<[u64; 128]>();
    let (_count, waker) = counting();
    let mut select = select2_async(&a, &b);
    assert!(poll_once(&mut select, &waker).is_pending());
    common::forget(select);
    let sender = send_later(a_chan, 1);
    assert_eq!(a.recv().unwrap(), tick(0));
    sender.join().unwrap();
    assert!(a.recv().is_err());
}

#[test]
fn two_pending_selects_on_one_port_in_two_tasks_are_both_woken_by_one_send() {
    let (port, chan) = stream::<u32>();
    let (first_count, first_waker) = counting();
    let (second_count, second_waker) = counting();
    let endpoints: [&dyn Selectable; 1] = [&port];
    let mut first = selecti_async(&endpoints);
    let mut second = selecti_async(&endpoints);
    assert!(poll_once(&mut first, &first_waker).is_pending());
    assert!(poll_once(&mut second, &second_waker).is_pending());
    // Re-polls without a send must neither wake the other task nor resolve.
    for _ in 0..3 {
        assert!(poll_once(&mut first, &first_waker).is_pending());
        assert!(poll_once(&mut second, &second_waker).is_pending());
    }
    assert_eq!(wakes(&first_count), 0, "no wake ping-pong");
    assert_eq!(wakes(&second_count), 0, "no wake ping-pong");
    chan.send(1).unwrap();
    assert!(wakes(&first_count) >= 1);
    assert!(wakes(&second_count) >= 1);
    assert_eq!(poll_once(&mut first, &first_waker), Poll::Ready(0));
    assert_eq!(poll_once(&mut second, &second_waker), Poll::Ready(0));
    drop((first, second));
    assert_eq!(port.recv().unwrap(), 1);
}

#[test]
fn dropping_either_of_two_watches_keeps_the_other_registered() {
    for drop_the_first in [false, true] {
        let (port, chan) = stream::<u32>();
        let (first_count, first_waker) = counting();
        let (second_count, second_waker) = counting();
        let endpoints: [&dyn Selectable; 1] = [&port];
        let mut first = selecti_async(&endpoints);
        let mut second = selecti_async(&endpoints);
        assert!(poll_once(&mut first, &first_waker).is_pending());
        // The second carries the first's watch.
        assert!(poll_once(&mut second, &second_waker).is_pending());
        let (mut kept, kept_count, kept_waker) = if drop_the_first {
            drop(first);
            (second, second_count, second_waker)
        } else {
            drop(second);
            (first, first_count, first_waker)
        };
        chan.send(1).unwrap();
        assert!(wakes(&kept_count) >= 1, "the one kept is still woken");
        assert_eq!(poll_once(&mut kept, &kept_waker), Poll::Ready(0));
    }
}

#[test]
fn a_loop_of_dropped_selects_over_a_pending_one_neither_wakes_nor_unregisters_it() {
    let (port, chan) = stream::<u32>();
    let (first_count, first_waker) = counting();
    let (_loop_count, loop_waker) = counting();
    let endpoints: [&dyn Selectable; 1] = [&port];
    let mut first = selecti_async(&endpoints);
    assert!(poll_once(&mut first, &first_waker).is_pending());
    for _ in 0..1000 {
        let mut again = selecti_async(&endpoints);
        assert!(poll_once(&mut again, &loop_waker).is_pending());
    }
    assert_eq!(wakes(&first_count), 0);
    chan.send(1).unwrap();
    assert_eq!(poll_once(&mut first, &first_waker), Poll::Ready(0));
}

#[test]
fn a_select_future_repolled_with_another_waker_wakes_the_new_one() {
    let (port, chan) = stream::<u32>();
    let (old_count, old_waker) = counting();
    let (new_count, new_waker) = counting();
    let endpoints: [&dyn Selectable; 1] = [&port];
    let mut select = selecti_async(&endpoints);
    assert!(poll_once(&mut select, &old_waker).is_pending());
    assert!(poll_once(&mut select, &new_waker).is_pending());
    chan.send(1).unwrap();
    assert_eq!(wakes(&old_count), 0);
    assert_eq!(wakes(&new_count), 1);
    assert_eq!(poll_once(&mut select, &new_waker), Poll::Ready(0));
}

#[test]
fn either_side_of_select2_async_resolves_after_a_receive_displaced_it() {
    let (a, a_chan) = stream::<u32>();
    let (b, b_chan) = stream::<u32>();
    let (_count, waker) = counting();
    let mut select = select2_async(&a, &b);
    assert!(poll_once(&mut select, &waker).is_pending());
    a_chan.send(1).unwrap();
    assert_eq!(a.recv().unwrap(), 1);
    // The select now watches a's next packet and b; only b has a message.
    assert!(poll_once(&mut select, &waker).is_pending());
    b_chan.send(2).unwrap();
    match poll_once(&mut select, &waker) {
        Poll::Ready(Either::Right((_, message))) => assert_eq!(message.unwrap(), 2),
        _ => panic!("b was sent on"),
    }
}

/// `Recv` is sealed, and so is the end trait under it (`Receiving`: only the runtime's own ends
/// take messages), but the hidden trait generated code implements (`RecvEndpoint`) is
/// reachable: a hand-written endpoint can point select at another endpoint's state word (its
/// `end`) while it receives from its own (`into_end`). The hooks only say what to wait on, so
/// several endpoints waiting on one word, or on the word of another endpoint than the one
/// received from, cannot corrupt anything: each receive takes from its own end, and the
/// watched message stays in the oneshot.
struct Alias<'a, E: RecvEndpoint> {
    own: E::End,
    watched: Option<&'a E::End>,
}

impl<'a, E: RecvEndpoint> RecvEndpoint for Alias<'a, E> {
    type Message = <E::End as Receiving>::Output;
    type End = E::End;
    const STATE: StateName = StateName {
        protocol: "alias",
        state: "Alias",
    };

    fn into_end(self) -> Self::End {
        self.own
    }

    fn from_end(own: Self::End) -> Self {
        Alias { own, watched: None }
    }

    fn end(&self) -> &Self::End {
        self.watched.unwrap_or(&self.own)
    }

    fn arrive(arrived: Self::Message) -> Self::Message {
        arrived
    }
}

#[test]
fn hand_written_endpoints_sharing_one_state_word_select_and_receive_soundly() {
    let (port, chan) = oneshot::<[u64; 128]>();
    let (count, waker) = counting();
    let endpoints: [&dyn Selectable; 1] = [&port];
    let mut task = selecti_async(&endpoints);
    assert!(poll_once(&mut task, &waker).is_pending());
    let ((left, left_chan), (right, right_chan)) = (oneshot(), oneshot());
    let sender = thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        chan.send(tick(7)).unwrap();
        left_chan.send(tick(1)).unwrap();
        right_chan.send(tick(2)).unwrap();
    });
    let watched = RecvEndpoint::end(&port);
    let alias = |own: PortOne<[u64; 128]>| Alias::<PortOne<[u64; 128]>> {
        own: own.into_end(),
        watched: Some(watched),
    };
    // Both aliases wait on the oneshot's word; the send wakes the select, and the chosen
    // alias's receive takes its own message.
    match pipes_runtime::select2(alias(left), alias(right)) {
        Either::Left((received, _)) | Either::Right((_, received)) => drop(received.unwrap()),
    }
    // The task's watch was swapped out by the send, or displaced by the select: woken either
    // way.
    assert!(wakes(&count) >= 1, "the task's watch was woken");
    assert_eq!(block_on(&mut task), 0);
    drop(task);
    let (third, third_chan) = oneshot();
    assert!(selecti(&[&alias(third), &port]) < 2);
    drop(third_chan);
    sender.join().unwrap();
    assert_eq!(
        port.recv().unwrap(),
        tick(7),
        "the message is still the port's"
    );
}

//! Async receives (`recv_async`) polled by hand and by a tiny thread-parking executor written
//! here, so the runtime is tested against no executor in particular: ready and pending polls,
//! a thread on one side of a protocol and a task on the other, futures dropped mid-wait (the
//! peer's send hands the message back), re-polls with another waker, and drop counts.

mod common;

use std::task::Poll;
use std::thread::{self};

use common::DropCounter;
use common::task::{block_on, counting, poll_once, wakes};
use pipes_runtime::{
    Either, PortSet, oneshot,
    select::{Selectable, select2_async, selecti_async},
    stream,
};

pipes_runtime::proto! {
    pub pingpong {
        Ping: send { Ping(u32) -> Pong, Bye -> ! }
        Pong: recv { Pong(u32) -> Ping }
    }
}

pipes_runtime::proto! {
    // A state that sends to itself is unbounded: a fresh packet per message.
    pub numbers {
        Open: send { Number(u64) -> Open, Done -> ! }
    }
}

#[test]
fn a_message_already_sent_is_ready_on_the_first_poll() {
    let (port, chan) = oneshot();
    chan.send(7u32).unwrap();
    let (count, waker) = counting();
    let mut future = Box::pin(port.recv_async());
    assert!(matches!(poll_once(&mut future, &waker), Poll::Ready(Ok(7))));
    assert_eq!(wakes(&count), 0);
}

#[test]
fn a_pending_future_is_woken_by_the_send_then_ready() {
    let (port, chan) = oneshot();
    let (count, waker) = counting();
    let mut future = Box::pin(port.recv_async());
    assert!(poll_once(&mut future, &waker).is_pending());
    // A second poll with the same waker stays registered and is still pending.
    assert!(poll_once(&mut future, &waker).is_pending());
    assert_eq!(wakes(&count), 0);
    chan.send(5u32).unwrap();
    assert_eq!(wakes(&count), 1);
    assert!(matches!(poll_once(&mut future, &waker), Poll::Ready(Ok(5))));
}

#[test]
fn a_sender_dropped_while_a_task_waits_wakes_it_with_an_error() {
    let (port, chan) = oneshot::<u32>();
    let (count, waker) = counting();
    let mut future = Box::pin(port.recv_async());
    assert!(poll_once(&mut future, &waker).is_pending());
    drop(chan);
    assert_eq!(wakes(&count), 1);
    let Poll::Ready(Err(error)) = poll_once(&mut future, &waker) else {
        panic!("the future must resolve to an error");
    };
    assert!(error.to_string().contains("oneshot"), "{error}");
}

#[test]
fn a_re_poll_with_another_waker_moves_the_registration() {
    let (port, chan) = oneshot();
    let (first, first_waker) = counting();
    let (second, second_waker) = counting();
    let mut future = Box::pin(port.recv_async());
    assert!(poll_once(&mut future, &first_waker).is_pending());
    assert!(poll_once(&mut future, &second_waker).is_pending());
    chan.send(3u32).unwrap();
    assert_eq!((wakes(&first), wakes(&second)), (0, 1));
    assert!(matches!(
        poll_once(&mut future, &second_waker),
        Poll::Ready(Ok(3))
    ));
}

#[test]
fn a_future_dropped_mid_wait_closes_the_pipe_and_the_send_hands_the_message_back() {
    let counter = DropCounter::default();
    let (port, chan) = oneshot();
    let (count, waker) = counting();
    let mut future = Box::pin(port.recv_async());
    assert!(poll_once(&mut future, &waker).is_pending());
    drop(future);
    let error = chan.send(counter.make(9)).unwrap_err();
    assert_eq!(error.0.value, 9);
    assert_eq!(counter.drops(), 0);
    drop(error);
    assert_eq!(counter.drops(), 1);
    assert_eq!(wakes(&count), 0, "a cancelled future is not woken");
}

#[test]
fn a_future_dropped_after_the_send_drops_the_message_once() {
    let counter = DropCounter::default();
    let (port, chan) = oneshot();
    let (count, waker) = counting();
    let mut future = Box::pin(port.recv_async());
    assert!(poll_once(&mut future, &waker).is_pending());
    chan.send(counter.make(1)).unwrap();
    assert_eq!(wakes(&count), 1);
    assert_eq!(counter.drops(), 0);
    drop(future);
    assert_eq!(counter.drops(), 1);
}

#[test]
fn a_future_never_polled_drops_the_endpoint() {
    let (port, chan) = oneshot::<u32>();
    drop(port.recv_async());
    assert_eq!(chan.send(1).unwrap_err().0, 1);
}

#[test]
fn bounded_protocol_a_thread_serves_and_a_task_is_the_client() {
    let (server, client) = pingpong::init();
    let server = thread::spawn(move || {
        let mut server = server;
        let mut total = 0;
        loop {
            match server.recv().unwrap() {
                pingpong::Ping::Ping(n, next) => {
                    total += n;
                    server = next.pong(n * 2).unwrap();
                }
                pingpong::Ping::Bye => return total,
            }
        }
    });
    let sum = block_on(async move {
        let mut client = client;
        let mut sum = 0;
        for n in 1..=100 {
            let pong = client.ping(n).unwrap();
            let pingpong::Pong::Pong(doubled, next) = pong.recv_async().await.unwrap();
            sum += doubled;
            client = next;
        }
        client.bye().unwrap();
        sum
    });
    assert_eq!(sum, 2 * 5050);
    assert_eq!(server.join().unwrap(), 5050);
}

#[test]
fn bounded_protocol_a_task_serves_and_a_thread_is_the_client() {
    let (server, client) = pingpong::init();
    let task = thread::spawn(move || {
        block_on(async move {
            let mut server = server;
            let mut seen = 0;
            loop {
                match server.recv_async().await.unwrap() {
                    pingpong::Ping::Ping(n, next) => {
                        seen += 1;
                        server = next.pong(n + 1).unwrap();
                    }
                    pingpong::Ping::Bye => return seen,
                }
            }
        })
    });
    let mut client = client;
    for n in 0..100 {
        let pingpong::Pong::Pong(m, next) = client.ping(n).unwrap().recv().unwrap();
        assert_eq!(m, n + 1);
        client = next;
    }
    client.bye().unwrap();
    assert_eq!(task.join().unwrap(), 100);
}

#[test]
fn bounded_future_dropped_mid_wait_closes_the_session() {
    let (server, client) = pingpong::init();
    let (count, waker) = counting();
    let mut future = Box::pin(server.recv_async());
    assert!(poll_once(&mut future, &waker).is_pending());
    drop(future);
    assert!(client.ping(1).is_err());
    assert_eq!(wakes(&count), 0);
}

#[test]
fn unbounded_protocol_between_a_thread_and_a_task() {
    let (port, chan) = numbers::init();
    let sender = thread::spawn(move || {
        let mut chan = chan;
        for n in 0..1000 {
            chan = chan.number(n).unwrap();
        }
        chan.done().unwrap();
    });
    let total = block_on(async move {
        let mut port = port;
        let mut total = 0;
        loop {
            match port.recv_async().await.unwrap() {
                numbers::Open::Number(n, next) => {
                    total += n;
                    port = next;
                }
                numbers::Open::Done => return total,
            }
        }
    });
    sender.join().unwrap();
    assert_eq!(total, 999 * 1000 / 2);
}

#[test]
fn a_stream_port_received_from_a_task() {
    let (mut port, chan) = stream();
    let sender = thread::spawn(move || {
        for n in 0..500u64 {
            chan.send(n).unwrap();
        }
    });
    let received = block_on(async {
        let mut received = Vec::new();
        while let Ok(n) = port.recv_async().await {
            received.push(n);
        }
        received
    });
    sender.join().unwrap();
    assert_eq!(received, (0..500).collect::<Vec<_>>());
}

#[test]
fn a_stream_future_dropped_mid_wait_keeps_the_port_open() {
    let counter = DropCounter::default();
    let (mut port, chan) = stream();
    let (count, waker) = counting();
    let mut future = port.recv_async();
    assert!(poll_once(&mut future, &waker).is_pending());
    drop(future);
    chan.send(counter.make(4)).unwrap();
    assert_eq!(wakes(&count), 0);
    assert_eq!(port.recv().unwrap().value, 4);
    assert_eq!(counter.drops(), 1);
}

#[test]
fn a_stream_future_dropped_after_the_send_leaves_the_message_for_the_next_receive() {
    let (mut port, chan) = stream();
    let (count, waker) = counting();
    let mut future = port.recv_async();
    assert!(poll_once(&mut future, &waker).is_pending());
    chan.send(8u32).unwrap();
    assert_eq!(wakes(&count), 1);
    drop(future);
    assert_eq!(block_on(port.recv_async()).unwrap(), 8);
    drop(chan);
    assert!(block_on(port.recv_async()).is_err());
}

#[test]
fn a_cancelled_future_hands_the_endpoint_back_and_the_session_goes_on() {
    for bounded in [false, true] {
        let (count, waker) = counting();
        if bounded {
            let (server, client) = pingpong::init();
            let mut future = server.recv_async();
            assert!(poll_once(&mut future, &waker).is_pending());
            let server = future
                .cancel()
                .expect("still pending: the endpoint comes back");
            let pong = client.ping(4).unwrap();
            let pingpong::Ping::Ping(n, server) = server.recv().unwrap() else {
                panic!("ping was sent");
            };
            server.pong(n + 1).unwrap();
            assert!(matches!(pong.recv(), Ok(pingpong::Pong::Pong(5, _))));
        } else {
            let (port, chan) = numbers::init();
            let mut future = port.recv_async();
            assert!(poll_once(&mut future, &waker).is_pending());
            let port = future
                .cancel()
                .expect("still pending: the endpoint comes back");
            chan.number(1).unwrap().done().unwrap();
            let numbers::Open::Number(1, port) = port.recv().unwrap() else {
                panic!("1 was sent");
            };
            assert!(matches!(port.recv(), Ok(numbers::Open::Done)));
        }
        assert_eq!(wakes(&count), 0, "a cancelled future is not woken");
    }
}

#[test]
fn a_future_cancelled_after_the_send_leaves_the_message_in_the_endpoint() {
    let counter = DropCounter::default();
    let (port, chan) = oneshot();
    let (count, waker) = counting();
    let mut future = port.recv_async();
    assert!(poll_once(&mut future, &waker).is_pending());
    chan.send(counter.make(6)).unwrap();
    assert_eq!(wakes(&count), 1);
    let port = future
        .cancel()
        .expect("not polled since the send: still pending");
    assert_eq!(counter.drops(), 0);
    assert_eq!(port.try_recv().ok().unwrap().value, 6);
    assert_eq!(counter.drops(), 1);
}

#[test]
fn a_resolved_future_has_no_endpoint_to_hand_back() {
    let (port, chan) = oneshot();
    chan.send(2u32).unwrap();
    let (_count, waker) = counting();
    let mut future = port.recv_async();
    assert!(matches!(poll_once(&mut future, &waker), Poll::Ready(Ok(2))));
    assert!(future.cancel().is_none());
}

#[test]
fn an_endpoint_awaited_directly_receives() {
    let (server, client) = pingpong::init();
    let (port, chan) = numbers::init();
    let (one, one_chan) = oneshot();
    let pong = client.ping(1).unwrap();
    chan.number(2).unwrap();
    one_chan.send(3u32).unwrap();
    block_on(async move {
        let pingpong::Ping::Ping(1, server) = server.await.unwrap() else {
            panic!("ping was sent");
        };
        server.pong(10).unwrap();
        assert!(matches!(pong.await, Ok(pingpong::Pong::Pong(10, _))));
        assert!(matches!(port.await, Ok(numbers::Open::Number(2, _))));
        assert_eq!(one.await.unwrap(), 3);
    });
}

#[test]
fn futures_are_send_so_a_task_can_move_between_threads() {
    fn assert_send<T: Send>(_: &T) {}
    let (port, _chan) = oneshot::<u32>();
    assert_send(&port.recv_async());
    let (server, _client) = pingpong::init();
    assert_send(&server.recv_async());
    let (port, _chan) = numbers::init();
    assert_send(&port.recv_async());
}

#[test]
fn a_port_set_received_from_a_task_while_threads_send() {
    let mut set = PortSet::new();
    let senders: Vec<_> = (0..4u64)
        .map(|i| {
            let chan = set.chan();
            thread::spawn(move || {
                for n in 0..100 {
                    chan.send(i * 1000 + n).unwrap();
                }
            })
        })
        .collect();
    let mut received = block_on(async {
        let mut received = Vec::new();
        while let Ok(n) = set.recv_async().await {
            received.push(n);
        }
        received
    });
    for sender in senders {
        sender.join().unwrap();
    }
    received.sort();
    let expected: Vec<u64> = (0..4)
        .flat_map(|i| (0..100).map(move |n| i * 1000 + n))
        .collect();
    assert_eq!(received, expected);
}

#[test]
fn a_port_set_future_is_woken_by_a_send_and_moves_to_a_new_waker() {
    let mut set = PortSet::new();
    let chan = set.chan();
    let (first, first_waker) = counting();
    let (second, second_waker) = counting();
    let mut future = set.recv_async();
    assert!(poll_once(&mut future, &first_waker).is_pending());
    assert!(poll_once(&mut future, &second_waker).is_pending());
    chan.send(6u32).unwrap();
    assert_eq!((wakes(&first), wakes(&second)), (0, 1));
    assert!(matches!(
        poll_once(&mut future, &second_waker),
        Poll::Ready(Ok(6))
    ));
}

#[test]
fn a_port_set_future_dropped_mid_wait_loses_nothing() {
    let counter = DropCounter::default();
    let mut set = PortSet::new();
    let chan = set.chan();
    let (count, waker) = counting();
    let mut future = set.recv_async();
    assert!(poll_once(&mut future, &waker).is_pending());
    drop(future);
    chan.send(counter.make(2)).unwrap();
    assert_eq!(wakes(&count), 0, "a dropped future's waker is let go");
    assert_eq!(set.recv().unwrap().value, 2);
    drop(chan);
    assert!(set.recv().is_err());
    assert_eq!(counter.drops(), 1);
}

#[test]
fn select2_async_with_one_side_ready_resolves_on_the_first_poll() {
    let (a, _a_chan) = oneshot::<u32>();
    let (b, b_chan) = oneshot::<&str>();
    b_chan.send("b").unwrap();
    let (count, waker) = counting();
    let mut future = select2_async(a, b);
    let Poll::Ready(Either::Right((_a, message))) = poll_once(&mut future, &waker) else {
        panic!("b was ready");
    };
    assert_eq!(message.unwrap(), "b");
    assert_eq!(wakes(&count), 0);
}

#[test]
fn select2_async_is_woken_by_the_first_send_and_moves_to_a_new_waker() {
    let (a, a_chan) = oneshot::<u32>();
    let (b, _b_chan) = oneshot::<u32>();
    let (first, first_waker) = counting();
    let (second, second_waker) = counting();
    let mut future = select2_async(a, b);
    assert!(poll_once(&mut future, &first_waker).is_pending());
    assert!(poll_once(&mut future, &second_waker).is_pending());
    a_chan.send(1).unwrap();
    assert_eq!((wakes(&first), wakes(&second)), (0, 1));
    let Poll::Ready(Either::Left((message, _b))) = poll_once(&mut future, &second_waker) else {
        panic!("a was sent on");
    };
    assert_eq!(message.unwrap(), 1);
}

#[test]
fn select2_async_dropped_mid_wait_drops_both_endpoints() {
    let (a, a_chan) = oneshot::<u32>();
    let (b, b_chan) = oneshot::<u32>();
    let (count, waker) = counting();
    let mut future = select2_async(a, b);
    assert!(poll_once(&mut future, &waker).is_pending());
    drop(future);
    assert_eq!(a_chan.send(1).unwrap_err().0, 1);
    assert_eq!(b_chan.send(2).unwrap_err().0, 2);
    assert_eq!(wakes(&count), 0);
}

#[test]
fn select2_async_between_a_task_and_a_sending_thread() {
    let (a, _a_chan) = oneshot::<u32>();
    let (b, b_chan) = oneshot::<u32>();
    let sender = thread::spawn(move || b_chan.send(9).unwrap());
    let selected = block_on(select2_async(a, b));
    sender.join().unwrap();
    let Either::Right((_a, message)) = selected else {
        panic!("only b was sent on");
    };
    assert_eq!(message.unwrap(), 9);
}

#[test]
fn selecti_async_over_a_oneshot_and_a_port_set() {
    let (quiet, _quiet_chan) = oneshot::<u32>();
    let set = PortSet::new();
    let chan = set.chan();
    let sender = thread::spawn(move || chan.send(5u32).unwrap());
    let endpoints: [&dyn Selectable; 2] = [&quiet, &set];
    assert_eq!(block_on(selecti_async(&endpoints)), 1);
    sender.join().unwrap();
    assert_eq!(set.recv().unwrap(), 5);
}

/// Every form of list `selecti_async` takes reports the same ready endpoint: a `Vec` and a
/// slice of shared borrows, an array literal whose first element names the `dyn` type, and
/// exclusive borrows (as an array of one type, and as `select_async!`'s list of any types).
#[test]
fn selecti_async_takes_every_form_of_list() {
    let (mut quiet, _quiet_chan) = oneshot::<u32>();
    let (mut port, chan) = stream::<u32>();
    let (mut other, _other_chan) = stream::<u32>();
    chan.send(1).unwrap();
    let shared: Vec<&dyn Selectable> = vec![&quiet, &port];
    assert_eq!(block_on(selecti_async(&shared)), 1);
    assert_eq!(block_on(selecti_async(shared)), 1);
    assert_eq!(
        block_on(selecti_async(&[&quiet as &dyn Selectable, &port][..])),
        1
    );
    assert_eq!(block_on(selecti_async([&mut other, &mut port])), 1);
    assert_eq!(
        block_on(selecti_async((&mut quiet, (&mut other, (&mut port, ()))))),
        2
    );
    let exclusive: &mut [&mut (dyn Selectable + Send)] = &mut [&mut quiet, &mut port];
    assert_eq!(block_on(selecti_async(exclusive)), 1);
    assert_eq!(port.try_recv().unwrap(), 1);
}

#[test]
fn selecti_async_dropped_mid_wait_loses_nothing() {
    let (port, chan) = stream::<u32>();
    let set = PortSet::new();
    let set_chan = set.chan();
    let (count, waker) = counting();
    let endpoints: [&dyn Selectable; 2] = [&port, &set];
    let mut future = selecti_async(&endpoints);
    assert!(poll_once(&mut future, &waker).is_pending());
    drop(future);
    chan.send(1).unwrap();
    set_chan.send(2).unwrap();
    assert_eq!(wakes(&count), 0);
    assert_eq!(port.recv().unwrap(), 1);
    assert_eq!(set.recv().unwrap(), 2);
}

pipes_runtime::proto! {
    pub hello { Start: send { Hello(String) -> !, Bye -> ! } }
}

#[test]
fn select_async_matches_the_message_that_a_thread_sends() {
    use hello::Start::{Bye, Hello};
    let (mut quiet, quiet_client) = hello::init();
    let (mut loud, loud_client) = hello::init();
    let sender = thread::spawn(move || {
        drop(quiet_client);
        loud_client.hello("hi".to_string()).unwrap();
    });
    let heard = block_on(async {
        // The quiet side hangs up; the loud side speaks. Whichever is seen first is matched, so
        // loop on the closed arm until the message arrives.
        let quiet_result = pipes_runtime::select_async! {
            quiet => {
                Hello(text) -> ! { Ok(text) },
                Bye -> ! { Ok("bye".to_string()) },
                closed => { Err(()) },
            },
            loud => {
                Hello(text) -> ! { return text.to_uppercase() },
                Bye -> ! { return "BYE".to_string() },
            },
        };
        assert_eq!(quiet_result, Err(()), "the quiet client only hangs up");
        match loud.recv_async().await.unwrap() {
            Hello(text) => text.to_uppercase(),
            Bye => "BYE".to_string(),
        }
    });
    sender.join().unwrap();
    assert_eq!(heard, "HI");
}

//! Room: a sender that waits until its receiver has taken all but a few of its messages (what a
//! remote session's pump offers the user's sends, `pipes::net::writable`), over the lanes of an
//! unbounded session, with a blocked thread, a task, a forgotten future, and a receiver that
//! goes away. Endpoints whose receiver does not report always have room.

use std::pin::Pin;
use std::task::Context;
use std::thread;
use std::time::{Duration, Instant};

mod common;

use common::forget;
use common::task::{block_on, counting, poll_once, wakes};
use pipes_runtime::__private::{Backlog, RoomFuture, wait_room};

pipes_runtime::proto! {
    /// Unbounded: two lanes.
    pub numbers {
        Stream: send { Number(u64) -> Stream, End -> ! }
    }
}

pipes_runtime::proto! {
    /// Bounded: a session buffer, whose sends the protocol bounds.
    pub ask {
        Ask: send { Question(u32) -> Answer }
        Answer: recv { Reply(u32) -> Ask }
    }
}

/// No wait at all: whether there is room now.
fn has_room<E: Backlog>(endpoint: &E) -> bool {
    wait_room(endpoint, Some(Instant::now()))
}

#[test]
fn a_sender_has_room_until_the_room_is_full_of_messages_its_receiver_has_not_taken() {
    let (server, client) = numbers::init();
    server.report(2);
    let mut client = client;
    for n in 0..2 {
        assert!(has_room(&client), "{n} sent, 2 of room");
        client = client.number(n).unwrap();
    }
    assert!(
        !has_room(&client),
        "2 sent, 2 of room: one more would leave 3"
    );
    let numbers::Stream::Number(0, server) = server.recv().unwrap() else {
        panic!("not the first number")
    };
    assert!(has_room(&client), "one taken");
    drop(server);
    assert!(
        has_room(&client),
        "the receiver is gone: the next send says so"
    );
    assert!(client.number(3).is_err());
}

#[test]
fn without_a_report_every_endpoint_has_room() {
    let (_server, mut client) = numbers::init();
    for n in 0..1000 {
        client = client.number(n).unwrap();
    }
    assert!(has_room(&client));
    let (server, client) = ask::init();
    assert!(has_room(&client) && has_room(&server));
    server.report(1);
    let answer = client.question(1).unwrap();
    assert!(has_room(&answer), "a session buffer never reports");
}

#[test]
fn a_blocked_sender_wakes_when_the_receiver_takes() {
    let (server, client) = numbers::init();
    server.report(1);
    let client = client.number(0).unwrap();
    let taker = thread::spawn(move || {
        thread::sleep(Duration::from_millis(20));
        let numbers::Stream::Number(0, server) = server.recv().unwrap() else {
            panic!("not the first number")
        };
        server
    });
    assert!(wait_room(&client, None));
    let _server = taker.join().unwrap();
    let client = client.number(1).unwrap();
    assert!(!wait_room(
        &client,
        Some(Instant::now() + Duration::from_millis(10))
    ));
}

/// A session whose receiver reports with a room of 1 and whose sender sent one message, so it
/// has no room: the receiving end, and a task's pending wait for room (with its waker and its
/// count of wakes).
fn waiting_task() -> (
    numbers::server::Stream,
    RoomFuture<numbers::client::Stream>,
    std::sync::Arc<common::task::CountingWaker>,
    std::task::Waker,
) {
    let (server, client) = numbers::init();
    server.report(1);
    let client = client.number(0).unwrap();
    let (count, waker) = counting();
    let mut future = RoomFuture::new(client);
    assert!(poll_once(&mut future, &waker).is_pending());
    (server, future, count, waker)
}

#[test]
fn a_waiting_task_is_woken_by_a_take_and_resolves_to_its_endpoint() {
    let (server, mut future, count, waker) = waiting_task();
    assert!(
        poll_once(&mut future, &waker).is_pending(),
        "a re-poll stays registered"
    );
    assert_eq!(wakes(&count), 0);
    let numbers::Stream::Number(0, server) = server.recv().unwrap() else {
        panic!("not the first number")
    };
    assert_eq!(wakes(&count), 1, "the take woke the task");
    let std::task::Poll::Ready(client) = poll_once(&mut future, &waker) else {
        panic!("room after the take")
    };
    // One more send fills the room again; a future on it resolves once the receiver is gone.
    let client = client.number(1).unwrap();
    let mut future = RoomFuture::new(client);
    assert!(poll_once(&mut future, &waker).is_pending());
    drop(server);
    assert_eq!(wakes(&count), 2, "the receiver's drop woke the task");
    let client = block_on(future);
    assert!(client.number(2).is_err());
}

#[test]
fn a_cancelled_wait_hands_the_endpoint_back_and_leaves_no_waiter() {
    let (server, future, count, _waker) = waiting_task();
    let client = future.cancel();
    let numbers::Stream::Number(0, _server) = server.recv().unwrap() else {
        panic!("not the first number")
    };
    assert_eq!(
        wakes(&count),
        0,
        "the cancelled registration was taken back"
    );
    assert!(has_room(&client));
}

#[test]
fn a_forgotten_wait_leaves_a_waiter_that_the_next_take_wakes_harmlessly() {
    let (server, future, count, _waker) = waiting_task();
    // The future owns the endpoint: forgotten, its waiter stays in the word.
    forget(future);
    let numbers::Stream::Number(0, server) = server.recv().unwrap() else {
        panic!("not the first number")
    };
    assert_eq!(
        wakes(&count),
        1,
        "the take swapped the waiter out and woke it"
    );
    drop(server);
}

pipes_runtime::proto! {
    /// Unbounded, with a payload whose drop may panic.
    #[allow(dead_code)]
    bombs {
        Stream: send { Bomb(crate::Bomb) -> Stream }
    }
}

/// Panics when dropped, if told to.
pub struct Bomb(bool);

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.0 {
            panic!("bomb payload");
        }
    }
}

/// `report(0)` is a room of 1; a second report changes nothing.
#[test]
fn a_report_of_zero_is_a_room_of_one_and_a_second_report_changes_nothing() {
    let (server, client) = numbers::init();
    server.report(0);
    assert!(has_room(&client));
    let client = client.number(1).unwrap();
    assert!(!has_room(&client), "one sent, room of 1");
    server.report(5);
    assert!(!has_room(&client), "the second report changed the room");
    let Ok(numbers::Stream::Number(1, server)) = server.recv() else {
        panic!()
    };
    assert!(has_room(&client));
    server.report(0);
    let client = client.number(2).unwrap();
    assert!(!has_room(&client));
    drop(server);
    assert!(has_room(&client));
}

/// The receiver closes while a task waits for room and an unreceived payload panics in its
/// drop: the task is woken and resolves, every payload is dropped, the panic reaches the
/// receiver's drop.
#[test]
fn a_receiver_dropped_with_a_panicking_payload_still_wakes_the_task_waiting_for_room() {
    common::bombs::quiet_bombs();
    let (server, client) = bombs::init();
    server.report(1);
    let client = client.bomb(Bomb(true)).unwrap();
    let mut future = RoomFuture::new(client);
    let (count, waker) = counting();
    assert!(
        Pin::new(&mut future)
            .poll(&mut Context::from_waker(&waker))
            .is_pending()
    );
    let dropped = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| drop(server)));
    assert!(dropped.is_err());
    assert_eq!(wakes(&count), 1);
    let std::task::Poll::Ready(client) =
        Pin::new(&mut future).poll(&mut Context::from_waker(&waker))
    else {
        panic!("no room after the receiver's drop")
    };
    assert!(client.bomb(Bomb(false)).is_err());
}

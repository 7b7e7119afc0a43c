//! The cause in a `RecvError`: a dropped endpoint is `Cause::Closed`, and an endpoint a remote
//! session's pump closes for another cause (the hidden `CloseWith`, which only the pump calls)
//! hands that cause to the peer's receive, in the state the peer is in now or in a later one,
//! whichever way the protocol's sessions are laid out (a buffer, two lanes, or packets).

use std::thread;
use std::time::Duration;

mod common;

use common::task::{block_on, counting, poll_once, wakes};
use pipes_runtime::__private::CloseWith;
use pipes_runtime::{Cause, RecvTimeoutError, TryRecvError};

pipes_runtime::proto! {
    /// Bounded, several states with messages: a session buffer.
    pub ask {
        Ask: send { Question(u32) -> Answer }
        Answer: recv { Reply(u32) -> Ask, Bye -> ! }
    }
}

pipes_runtime::proto! {
    /// Unbounded: two lanes.
    pub numbers {
        Stream: send { Number(u64) -> Stream, End -> ! }
    }
}

pipes_runtime::proto! {
    /// One state with messages, used once: a packet.
    pub once {
        Start: recv { Done(u8) -> ! }
    }
}

#[test]
fn a_dropped_endpoint_is_closed_in_every_layout() {
    let (server, client) = ask::init();
    let answer = client.question(1).unwrap();
    drop(server);
    assert_eq!(answer.recv().unwrap_err().cause(), Cause::Closed);

    let (server, client) = numbers::init();
    drop(client);
    assert_eq!(server.recv().unwrap_err().cause(), Cause::Closed);

    let (server, client) = once::init();
    drop(server);
    assert_eq!(client.recv().unwrap_err().cause(), Cause::Closed);
}

#[test]
fn a_buffer_session_closed_by_its_sender_hands_the_cause_to_the_waiting_receiver() {
    let (server, client) = ask::init();
    let answer = client.question(7).unwrap();
    let ask::Ask::Question(7, reply) = server.recv().unwrap() else {
        panic!("not the question")
    };
    // The receiver is parked when the cause arrives.
    let waiting = thread::spawn(move || answer.recv());
    thread::sleep(Duration::from_millis(20));
    reply.close_with(Cause::ConnectionLost);
    let error = waiting.join().unwrap().unwrap_err();
    assert_eq!(error.cause(), Cause::ConnectionLost);
    assert!(error.to_string().contains("connection"), "{error}");
    assert_eq!((error.protocol(), error.state()), ("ask", "Answer"));
}

#[test]
fn a_buffer_session_closed_by_its_receiver_reaches_the_peers_next_receive() {
    let (server, client) = ask::init();
    // The question is sent, and the server's endpoint (which would receive it) is closed for a
    // violation before taking it: the client learns why in its next state.
    let answer = client.question(1).unwrap();
    server.close_with(Cause::Violation);
    match answer.try_recv() {
        Err(TryRecvError::Disconnected(error)) => assert_eq!(error.cause(), Cause::Violation),
        other => panic!("expected the violation, got {other:?}"),
    }
    // A send after the close hands its payload back, as after a drop.
    let (server, client) = ask::init();
    server.close_with(Cause::Violation);
    assert_eq!(client.question(2).unwrap_err().0, 2);
}

#[test]
fn lanes_closed_with_a_cause_deliver_what_was_sent_first() {
    let (server, client) = numbers::init();
    let client = client.number(1).unwrap().number(2).unwrap();
    client.close_with(Cause::Timeout);
    let numbers::Stream::Number(1, server) = server.recv().unwrap() else {
        panic!("not 1")
    };
    let numbers::Stream::Number(2, server) = server.recv().unwrap() else {
        panic!("not 2")
    };
    match server.recv_timeout(Duration::from_secs(5)) {
        Err(RecvTimeoutError::Disconnected(error)) => assert_eq!(error.cause(), Cause::Timeout),
        other => panic!("expected the timeout, got {other:?}"),
    }
}

#[test]
fn lanes_closed_with_a_cause_wake_a_parked_receiver() {
    let (server, client) = numbers::init();
    let waiting = thread::spawn(move || server.recv());
    thread::sleep(Duration::from_millis(20));
    client.close_with(Cause::Aborted);
    assert_eq!(waiting.join().unwrap().unwrap_err().cause(), Cause::Aborted);
}

#[test]
fn a_packet_closed_with_a_cause_hands_it_to_its_receiver_sync_and_async() {
    let (server, client) = once::init();
    server.close_with(Cause::ConnectionLost);
    assert_eq!(client.recv().unwrap_err().cause(), Cause::ConnectionLost);

    let (server, client) = once::init();
    let (woken, waker) = counting();
    let mut receive = client.recv_async();
    assert!(poll_once(&mut receive, &waker).is_pending());
    server.close_with(Cause::Violation);
    assert_eq!(wakes(&woken), 1, "the close wakes the task");
    let error = block_on(receive).unwrap_err();
    assert_eq!(error.cause(), Cause::Violation);
}

#[test]
fn a_packet_whose_receiver_went_first_is_freed_by_close_with() {
    // Miri checks the packet is freed once, by whichever end goes last.
    let (server, client) = once::init();
    drop(client);
    server.close_with(Cause::Timeout);
    let (server, client) = once::init();
    server.close_with(Cause::Timeout);
    drop(client);
}

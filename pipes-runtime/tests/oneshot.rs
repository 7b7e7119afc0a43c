//! Every ordering of send, recv, try_recv, recv_timeout and drop on the two ends of a oneshot,
//! which is one bare packet: these scenarios are the packet's state machine seen from outside.

mod common;

use std::thread;
use std::time::Duration;

use common::{DropCounter, SETTLE};
use pipes_runtime::{RecvTimeoutError, TryRecvError, oneshot};

const LONG: Duration = Duration::from_secs(60);

#[test]
fn send_then_recv() {
    let (port, chan) = oneshot();
    chan.send(7).unwrap();
    assert_eq!(port.recv().unwrap(), 7);
}

#[test]
fn send_then_try_recv() {
    let (port, chan) = oneshot();
    chan.send("hi").unwrap();
    assert_eq!(port.try_recv().unwrap(), "hi");
}

#[test]
fn send_then_recv_timeout() {
    let (port, chan) = oneshot();
    chan.send(1u8).unwrap();
    assert_eq!(port.recv_timeout(Duration::ZERO).unwrap(), 1);
}

#[test]
fn try_recv_empty_hands_back_the_port_then_send_then_recv() {
    let (port, chan) = oneshot();
    let port = match port.try_recv() {
        Err(TryRecvError::Empty(port)) => port,
        other => panic!("expected Empty, got {other:?}"),
    };
    chan.send(3).unwrap();
    assert_eq!(port.recv().unwrap(), 3);
}

#[test]
fn recv_timeout_expires_hands_back_the_port_then_send_then_recv() {
    let (port, chan) = oneshot();
    let port = match port.recv_timeout(Duration::from_millis(1)) {
        Err(RecvTimeoutError::Timeout(port)) => port,
        other => panic!("expected Timeout, got {other:?}"),
    };
    chan.send(4).unwrap();
    assert_eq!(port.recv().unwrap(), 4);
}

#[test]
fn recv_timeout_expires_then_sender_drops_then_recv_fails() {
    let (port, chan) = oneshot::<u8>();
    let port = port
        .recv_timeout(Duration::ZERO)
        .unwrap_err()
        .into_endpoint()
        .unwrap();
    drop(chan);
    assert!(port.recv().is_err());
}

#[test]
fn recv_timeout_twice_then_send() {
    let (port, chan) = oneshot();
    let port = port
        .recv_timeout(Duration::from_millis(1))
        .unwrap_err()
        .into_endpoint()
        .unwrap();
    let port = port
        .recv_timeout(Duration::from_millis(1))
        .unwrap_err()
        .into_endpoint()
        .unwrap();
    chan.send(5).unwrap();
    assert_eq!(port.recv_timeout(LONG).unwrap(), 5);
}

#[test]
fn sender_drops_then_recv_fails_naming_the_state() {
    let (port, chan) = oneshot::<u8>();
    drop(chan);
    let error = port.recv().unwrap_err();
    assert_eq!((error.protocol(), error.state()), ("oneshot", "Oneshot"));
}

#[test]
fn sender_drops_then_try_recv_is_disconnected() {
    let (port, chan) = oneshot::<u8>();
    drop(chan);
    assert!(matches!(
        port.try_recv(),
        Err(TryRecvError::Disconnected(_))
    ));
}

#[test]
fn sender_drops_then_recv_timeout_is_disconnected() {
    let (port, chan) = oneshot::<u8>();
    drop(chan);
    assert!(matches!(
        port.recv_timeout(LONG),
        Err(RecvTimeoutError::Disconnected(_))
    ));
}

#[test]
fn receiver_drops_then_send_hands_the_message_back() {
    let (port, chan) = oneshot();
    drop(port);
    assert_eq!(
        chan.send(String::from("back")).unwrap_err().into_inner(),
        "back"
    );
}

#[test]
fn both_drop_in_either_order() {
    let (port, chan) = oneshot::<Vec<u8>>();
    drop(port);
    drop(chan);
    let (port, chan) = oneshot::<Vec<u8>>();
    drop(chan);
    drop(port);
}

#[test]
fn send_then_receiver_drops_drops_the_message_once() {
    let counter = DropCounter::default();
    let (port, chan) = oneshot();
    chan.send(counter.make(1)).unwrap();
    assert_eq!(counter.drops(), 0);
    drop(port);
    assert_eq!(counter.drops(), 1);
}

#[test]
fn recv_blocks_then_sender_sends() {
    let (port, chan) = oneshot();
    let receiver = thread::spawn(move || port.recv());
    thread::sleep(SETTLE);
    chan.send(9).unwrap();
    assert_eq!(receiver.join().unwrap().unwrap(), 9);
}

#[test]
fn recv_blocks_then_sender_drops() {
    let (port, chan) = oneshot::<u8>();
    let receiver = thread::spawn(move || port.recv());
    thread::sleep(SETTLE);
    drop(chan);
    assert!(receiver.join().unwrap().is_err());
}

#[test]
fn recv_timeout_blocks_then_sender_sends() {
    let (port, chan) = oneshot();
    let receiver = thread::spawn(move || port.recv_timeout(LONG).map_err(|e| e.is_disconnected()));
    thread::sleep(SETTLE);
    chan.send(10).unwrap();
    assert_eq!(receiver.join().unwrap(), Ok(10));
}

#[test]
fn recv_timeout_blocks_then_sender_drops() {
    let (port, chan) = oneshot::<u8>();
    let receiver = thread::spawn(move || port.recv_timeout(LONG).map_err(|e| e.is_disconnected()));
    thread::sleep(SETTLE);
    drop(chan);
    assert_eq!(receiver.join().unwrap(), Err(true));
}

#[test]
fn sender_thread_panics_and_the_blocked_receiver_gets_an_error() {
    let (port, chan) = oneshot::<u8>();
    let receiver = thread::spawn(move || port.recv());
    let sender = thread::spawn(move || {
        let _chan = chan;
        thread::sleep(SETTLE);
        panic!("the sender fails while holding its endpoint");
    });
    assert!(sender.join().is_err());
    assert!(receiver.join().unwrap().is_err());
}

#[test]
fn receiver_thread_panics_and_the_sender_gets_its_message_back() {
    let (port, chan) = oneshot();
    let receiver = thread::spawn(move || {
        let _port = port;
        panic!("the receiver fails while holding its endpoint");
    });
    assert!(receiver.join().is_err());
    assert_eq!(chan.send(11).unwrap_err().0, 11);
}

#[test]
fn endpoints_move_between_threads_inside_messages() {
    // The reply chan travels inside the request, as protocol continuations do.
    let (request_port, request_chan) = oneshot::<(u32, pipes_runtime::ChanOne<u32>)>();
    let server = thread::spawn(move || {
        let (x, reply) = request_port.recv().unwrap();
        reply.send(x * 2).unwrap();
    });
    let (reply_port, reply_chan) = oneshot();
    request_chan.send((21, reply_chan)).unwrap();
    assert_eq!(reply_port.recv().unwrap(), 42);
    server.join().unwrap();
}

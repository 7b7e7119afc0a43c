//! Session buffers of bounded protocols, through a hand-laid-out `pingpong`: round trips,
//! a normal end, and every way a side can vanish mid-protocol.

mod common;

use std::thread;

use common::pingpong::{self, Ping};
use common::{DropCounter, SETTLE, size};

#[test]
fn round_trips_then_bye() {
    let (server, client) = pingpong::init::<u64>();
    let n = size(10_000, 50) as u64;
    let echo = thread::spawn(move || {
        let mut server = server;
        let mut served = 0;
        loop {
            match server.recv().unwrap() {
                Ping::Ping(x, pong) => {
                    server = pong.pong(x + 1).ok().unwrap();
                    served += 1;
                }
                Ping::Bye => return served,
            }
        }
    });
    let mut client = client;
    for i in 0..n {
        let (x, ping) = client.ping(i).ok().unwrap().recv().unwrap();
        assert_eq!(x, i + 1);
        client = ping;
    }
    client.bye().unwrap();
    assert_eq!(echo.join().unwrap(), n);
}

#[test]
fn client_drops_while_the_server_waits() {
    let (server, client) = pingpong::init::<u8>();
    let waiter = thread::spawn(move || server.recv().err());
    thread::sleep(SETTLE);
    drop(client);
    let error = waiter.join().unwrap().expect("the client is gone");
    assert_eq!((error.protocol(), error.state()), ("pingpong", "Ping"));
}

#[test]
fn client_drops_while_waiting_for_pong_and_the_server_send_fails() {
    let (server, client) = pingpong::init::<String>();
    let pong = client.ping("ping".into()).ok().unwrap();
    drop(pong);
    let Ping::Ping(text, pong) = server.recv().ok().unwrap() else {
        panic!("expected Ping")
    };
    assert_eq!(text, "ping");
    assert_eq!(pong.pong("pong".into()).err().unwrap().into_inner(), "pong");
}

#[test]
fn server_drops_and_the_client_send_hands_the_message_back() {
    let (server, client) = pingpong::init::<String>();
    drop(server);
    assert_eq!(client.ping("lost".into()).err().unwrap().0, "lost");
}

#[test]
fn server_drops_after_receiving_and_the_blocked_client_wakes() {
    let (server, client) = pingpong::init::<u8>();
    let dropper = thread::spawn(move || {
        let message = server.recv().ok().unwrap();
        thread::sleep(SETTLE);
        drop(message);
    });
    let error = client
        .ping(1)
        .ok()
        .unwrap()
        .recv()
        .err()
        .expect("the server is gone");
    assert_eq!(error.state(), "Pong");
    dropper.join().unwrap();
}

#[test]
fn server_thread_panics_mid_protocol_and_the_client_does_not_hang() {
    let (server, client) = pingpong::init::<u8>();
    let server = thread::spawn(move || {
        let _message = server.recv();
        panic!("the server fails holding its next endpoint");
    });
    assert!(client.ping(1).ok().unwrap().recv().is_err());
    assert!(server.join().is_err());
}

#[test]
fn try_recv_hands_the_endpoint_back_until_the_message_is_there() {
    let (server, client) = pingpong::init::<u8>();
    let server = server.try_recv().err().unwrap().into_endpoint().unwrap();
    client.bye().unwrap();
    assert!(matches!(server.try_recv().ok().unwrap(), Ping::Bye));
}

#[test]
fn unreceived_messages_are_dropped_once_with_the_buffer() {
    let counter = DropCounter::default();
    let (server, client) = pingpong::init();
    // Sent, then the receiving side goes away without receiving.
    let pong = client.ping(counter.make(1)).ok().unwrap();
    assert_eq!(counter.drops(), 0);
    drop(server);
    assert_eq!(counter.drops(), 1);
    drop(pong);
    // Sent, then the sending side goes too: the message waits in the buffer until both are gone.
    let (server, client) = pingpong::init();
    let pong = client.ping(counter.make(2)).ok().unwrap();
    drop(pong);
    assert_eq!(counter.drops(), 1);
    drop(server);
    assert_eq!(counter.drops(), 2);
    // Handed back from a closed peer.
    let (server, client) = pingpong::init();
    drop(server);
    let back = client.ping(counter.make(3)).err().unwrap();
    assert_eq!(counter.drops(), 2);
    drop(back);
    assert_eq!(counter.drops(), 3);
}

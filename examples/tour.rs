//! A tour of the runtime as it stands: a stream into a server thread, requests that carry their
//! own reply oneshot, a dropped peer seen as a typed error, and a pingpong timed on streams.
//!
//! Run: `cargo run --release --example tour [-- ROUND_TRIPS]` (default 100000).

use std::thread;
use std::time::{Duration, Instant};

use pipes::{ChanOne, RecvTimeoutError, oneshot, stream};

/// A request to the accumulator: add a number, or ask for the total on a oneshot.
enum Request {
    Add(u64),
    Total(ChanOne<u64>),
}

fn main() {
    let round_trips: u64 = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(100_000);

    // 1. A server owns its state; clients reach it over a stream, and each question carries
    //    the oneshot its answer comes back on.
    let (requests, client) = stream::<Request>();
    let server = thread::spawn(move || {
        let mut total = 0;
        for request in requests {
            match request {
                Request::Add(n) => total += n,
                Request::Total(reply) => reply.send(total).unwrap_or(()),
            }
        }
        total
    });
    for n in 1..=1000 {
        client.send(Request::Add(n)).ok().unwrap();
    }
    let (answer, reply) = oneshot();
    client.send(Request::Total(reply)).ok().unwrap();
    let total = answer.recv().unwrap();
    println!("accumulator: 1 + 2 + ... + 1000 = {total}");
    assert_eq!(total, 500_500);
    drop(client);
    assert_eq!(server.join().unwrap(), 500_500);

    // 2. A peer that vanishes is an error naming the protocol and state, never a hang.
    let (port, chan) = stream::<u64>();
    let quitter = thread::spawn(move || {
        chan.send(1).unwrap();
        // `chan` is dropped here, mid-protocol.
    });
    assert_eq!(port.recv().unwrap(), 1);
    match port.recv_timeout(Duration::from_secs(10)) {
        Err(RecvTimeoutError::Disconnected(error)) => println!("hang-up seen: {error}"),
        other => panic!("expected a disconnection, got {other:?}"),
    }
    quitter.join().unwrap();

    // 3. Pingpong: the latency of a hand-off to a waiting thread.
    let (ping_port, ping_chan) = stream::<u64>();
    let (pong_port, pong_chan) = stream::<u64>();
    let echo = thread::spawn(move || {
        for x in ping_port {
            pong_chan.send(x + 1).unwrap();
        }
    });
    let start = Instant::now();
    for i in 0..round_trips {
        ping_chan.send(i).unwrap();
        assert_eq!(pong_port.recv().unwrap(), i + 1);
    }
    let elapsed = start.elapsed();
    drop(ping_chan);
    echo.join().unwrap();
    println!(
        "pingpong: {round_trips} round trips in {:.3} s, {:.0} ns per round trip",
        elapsed.as_secs_f64(),
        elapsed.as_nanos() as f64 / round_trips as f64
    );
}

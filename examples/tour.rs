//! A tour of the runtime and of the examples. First the runtime itself: a stream into a server
//! thread, requests that carry their own reply oneshot, a dropped peer seen as a typed error,
//! and a pingpong timed on streams. Then each example, run small, with its headline result:
//! the bank (a `proto!` session per customer), FastFlow's task-farm and pipeline, the
//! producer-consumer credit protocol, futures and a parallel breadth-first search, and
//! k-nucleotide. Each example checks its own result; run it on its own for bigger sizes.
//!
//! Run: `cargo run --release --example tour [-- ROUND_TRIPS]` (default 100000).

use std::thread;
use std::time::{Duration, Instant};

use pipes::{ChanOne, RecvTimeoutError, oneshot, stream};

// The examples are included as modules so the tour runs their code, not a copy of it. Their
// `main`s and some helpers are unused here.
#[allow(dead_code)]
#[path = "bank.rs"]
mod bank;
#[allow(dead_code)]
#[path = "farm.rs"]
mod farm;
#[allow(dead_code)]
#[path = "futures.rs"]
mod futures;
#[allow(dead_code)]
#[path = "knucleotide.rs"]
mod knucleotide;
#[allow(dead_code)]
#[path = "pipeline.rs"]
mod pipeline;
#[allow(dead_code)]
#[path = "producer_consumer.rs"]
mod producer_consumer;
#[allow(dead_code)]
#[path = "tutorial.rs"]
mod tutorial;

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

    examples();
}

/// Each example, small.
fn examples() {
    println!(
        "\n== the 2012 tutorial (examples/tutorial.rs): simple_proto three ways, with select!"
    );
    let (hello, _, answer, goodbye) = tutorial::run();
    println!(
        "{} hellos; {answer}; {}",
        hello.len(),
        goodbye.last().unwrap()
    );

    println!("\n== bank (examples/bank.rs)");
    let (log, accounts) = bank::story();
    for line in log {
        println!("{line}");
    }
    let balances: Vec<String> = accounts
        .iter()
        .map(|(user, account)| format!("{user} {}", account.balance))
        .collect();
    println!("balances: {}", balances.join(", "));
    let start = Instant::now();
    let balance = bank::sessions(1_000);
    println!(
        "1000 sessions in {:.3} s; alice still has {balance}",
        start.elapsed().as_secs_f64()
    );

    println!("\n== task-farm (examples/farm.rs), 2 cores");
    let small = farm::calibrate(Duration::from_micros(5));
    let large = farm::calibrate(Duration::from_millis(5));
    farm::report("small (5 µs)", 10_000, small, 2);
    farm::report("large (5 ms)", 40, large, 2);

    println!("\n== pipeline with feedback (examples/pipeline.rs)");
    pipeline::report(100_000, 8);

    println!("\n== producer-consumer on a credit protocol (examples/producer_consumer.rs)");
    for mode in [
        producer_consumer::Mode::IoBound,
        producer_consumer::Mode::ComputeBound,
    ] {
        producer_consumer::report(producer_consumer::Config::paper(500, mode));
    }

    println!("\n== futures: breadth-first search (examples/futures.rs)");
    let runs = futures::report(14, 16, 2, 2);
    assert!(runs.iter().all(|run| run.parallel == run.sequential));

    println!("\n== k-nucleotide (examples/knucleotide.rs)");
    let run = knucleotide::run(100_000);
    // The query counts are the benchmark's last five lines.
    for line in run
        .report
        .lines()
        .rev()
        .take(5)
        .collect::<Vec<_>>()
        .into_iter()
        .rev()
    {
        println!("{line}");
    }
    let (_, parallel, sequential) = run.times;
    println!(
        "{} workers {:.3} s, one thread {:.3} s; tables match: {}",
        knucleotide::FRAMES.len(),
        parallel.as_secs_f64(),
        sequential.as_secs_f64(),
        run.matches_sequential
    );
    assert!(run.matches_sequential);
}

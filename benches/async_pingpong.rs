//! Async pingpong: two tokio tasks bouncing a counter back and forth, one round trip at a time,
//! on tokio's current-thread and multi-thread runtimes. pipes uses the bounded
//! `proto! pingpong` below (one session buffer, no allocation per message) with `recv_async`;
//! the peer is a pair of `tokio::sync::mpsc::unbounded_channel`s. tokio is a dev-dependency
//! only.
//!
//! Run: `cargo bench --bench async_pingpong [-- ROUND_TRIPS REPEATS]` (defaults 100000 3).
//! Prints µs per round trip (median of `REPEATS` runs), CPU µs beside it, and mpsc's time over
//! pipes'.

mod common;
use common::{cpu_time, median, numeric_args};

use std::future::Future;
use std::pin::Pin;
use std::time::Instant;

pipes::proto! {
    pingpong {
        Ping: send { Ping(u64) -> Pong, Bye -> ! }
        Pong: recv { Pong(u64) -> Ping }
    }
}

/// One run of `round_trips` round trips as a future; returns the last pong (checked).
type Run = fn(round_trips: u64) -> Pin<Box<dyn Future<Output = u64>>>;

/// Makes a fresh tokio runtime of one flavour.
type MakeRuntime = fn() -> tokio::runtime::Runtime;

fn pipes_pingpong(round_trips: u64) -> Pin<Box<dyn Future<Output = u64>>> {
    Box::pin(async move {
        let (server, client) = pingpong::init();
        let server = tokio::spawn(async move {
            let mut server = server;
            loop {
                match server.recv_async().await.unwrap() {
                    pingpong::Ping::Ping(n, pong) => server = pong.pong(n + 1).unwrap(),
                    pingpong::Ping::Bye => return,
                }
            }
        });
        let client = tokio::spawn(async move {
            let (mut client, mut last) = (client, 0);
            for n in 0..round_trips {
                let pong = client.ping(n).unwrap();
                let pingpong::Pong::Pong(m, next) = pong.recv_async().await.unwrap();
                (client, last) = (next, m);
            }
            client.bye().unwrap();
            last
        });
        server.await.unwrap();
        client.await.unwrap()
    })
}

fn mpsc_pingpong(round_trips: u64) -> Pin<Box<dyn Future<Output = u64>>> {
    Box::pin(async move {
        let (ping_tx, mut ping_rx) = tokio::sync::mpsc::unbounded_channel::<u64>();
        let (pong_tx, mut pong_rx) = tokio::sync::mpsc::unbounded_channel::<u64>();
        let server = tokio::spawn(async move {
            // Ends when the client drops its sender: the mpsc form of `Bye`.
            while let Some(n) = ping_rx.recv().await {
                pong_tx.send(n + 1).unwrap();
            }
        });
        let client = tokio::spawn(async move {
            let mut last = 0;
            for n in 0..round_trips {
                ping_tx.send(n).unwrap();
                last = pong_rx.recv().await.unwrap();
            }
            last
        });
        let last = client.await.unwrap();
        server.await.unwrap();
        last
    })
}

/// Median wall and CPU µs per round trip of `repeats` runs on a fresh runtime each.
fn measure(runtime: MakeRuntime, run: Run, round_trips: u64, repeats: u64) -> (f64, f64) {
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        let runtime = runtime();
        let (start, cpu_start) = (Instant::now(), cpu_time());
        let last = runtime.block_on(run(round_trips));
        let (wall, cpu) = (start.elapsed(), cpu_time() - cpu_start);
        assert_eq!(last, round_trips, "the last pong answers the last ping");
        walls.push(wall.as_secs_f64() * 1e6 / round_trips as f64);
        cpus.push(cpu.as_secs_f64() * 1e6 / round_trips as f64);
    }
    (median(walls), median(cpus))
}

fn current_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap()
}

fn multi_thread() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread().build().unwrap()
}

fn main() {
    let args = numeric_args();
    let round_trips = args.first().copied().unwrap_or(100_000).max(1);
    let repeats = args.get(1).copied().unwrap_or(3).max(1);
    let runtimes: [(&str, MakeRuntime); 2] = [
        ("current-thread", current_thread),
        ("multi-thread", multi_thread),
    ];
    println!(
        "async pingpong, {round_trips} round trips, median of {repeats}: µs per round trip \
         (CPU µs)"
    );
    println!("| runtime | pipes | tokio mpsc | mpsc / pipes |");
    println!("|---|---:|---:|---:|");
    for (name, runtime) in runtimes {
        let (pipes, pipes_cpu) = measure(runtime, pipes_pingpong, round_trips, repeats);
        let (mpsc, mpsc_cpu) = measure(runtime, mpsc_pingpong, round_trips, repeats);
        println!(
            "| {name} | {pipes:.3} ({pipes_cpu:.3}) | {mpsc:.3} ({mpsc_cpu:.3}) | {:.2}x |",
            mpsc / pipes
        );
    }
}

//! Async token ring (the benchmarks-game thread-ring, on tasks): `TASKS` tokio tasks in a ring,
//! one token passed round it hop by hop, each task receiving from its left link and sending to
//! its right. Every hop is a hand-off to a task that waits, so this measures async wake-up
//! latency, the case where OS threads pay a kernel wake per hop.
//!
//! pipes uses `proto! ring { num: send { num(u64) -> num } }` with `recv_async` (sends stay
//! synchronous); the peers are `tokio::sync::mpsc::unbounded_channel` and flume's unbounded
//! channel with its async API, whose sends also never wait. Both run on tokio's current-thread and multi-thread runtimes (tokio is a
//! dev-dependency only: it is the field's standard executor, and the runtime depends on none).
//!
//! Run: `cargo bench --bench async_ring [-- HOPS REPEATS]` (defaults 100000 3). Rings of 100,
//! 503 and 10,000 tasks, `HOPS / TASKS` laps each (at least one). Prints µs per hop (median of
//! `REPEATS` runs, spawning the ring included), CPU time per hop beside it, and mpsc's time over
//! pipes'.

mod common;
use common::{cpu_time, median, numeric_args};

use std::future::Future;
use std::time::Instant;

pipes::proto! {
    ring {
        num: send { num(u64) -> num }
    }
}

/// One ring: spawns `tasks` tasks on the current runtime and returns the value task 0
/// received last (checked by the caller).
type Ring = fn(tasks: usize, laps: u64) -> RingFuture;

/// A ring run as one future, for `block_on`.
type RingFuture = std::pin::Pin<Box<dyn Future<Output = u64>>>;

/// Makes a fresh tokio runtime of one flavour.
type MakeRuntime = fn() -> tokio::runtime::Runtime;

/// Whether task `i` passes on what it received on lap `lap`: everybody does, except task 0 on
/// the last lap, which ends the ring.
fn passes_on(i: usize, lap: u64, laps: u64) -> bool {
    !(i == 0 && lap + 1 == laps)
}

fn pipes_ring(tasks: usize, laps: u64) -> RingFuture {
    Box::pin(async move {
        // Link i goes from task i to task i + 1.
        let (ports, chans): (Vec<_>, Vec<_>) = (0..tasks).map(|_| ring::init()).unzip();
        let mut ports: Vec<_> = ports.into_iter().map(Some).collect();
        ports.rotate_right(1);
        let handles: Vec<_> = chans
            .into_iter()
            .zip(ports)
            .enumerate()
            .map(|(i, (mut right, left))| {
                let mut left = left.unwrap();
                tokio::spawn(async move {
                    let mut last = 0;
                    for lap in 0..laps {
                        if i == 0 && lap == 0 {
                            right = right.num(0).unwrap();
                        }
                        let ring::num::num(n, next) = left.recv_async().await.unwrap();
                        left = next;
                        last = n;
                        if passes_on(i, lap, laps) {
                            right = right.num(n + 1).unwrap();
                        }
                    }
                    last
                })
            })
            .collect();
        first_last(handles).await
    })
}

/// The same ring for a channel crate: one channel per link, `$recv` awaiting one message.
macro_rules! peer_ring {
    ($name:ident, $make:expr, |$left:ident| $recv:expr) => {
        fn $name(tasks: usize, laps: u64) -> RingFuture {
            Box::pin(async move {
                let (senders, receivers): (Vec<_>, Vec<_>) = (0..tasks).map(|_| $make).unzip();
                let mut receivers: Vec<_> = receivers.into_iter().map(Some).collect();
                receivers.rotate_right(1);
                let handles: Vec<_> = senders
                    .into_iter()
                    .zip(receivers)
                    .enumerate()
                    .map(|(i, (right, left))| {
                        #[allow(unused_mut)]
                        let mut $left = left.unwrap();
                        tokio::spawn(async move {
                            let mut last = 0;
                            for lap in 0..laps {
                                if i == 0 && lap == 0 {
                                    right.send(0).unwrap();
                                }
                                let n = $recv.await.unwrap();
                                last = n;
                                if passes_on(i, lap, laps) {
                                    right.send(n + 1).unwrap();
                                }
                            }
                            last
                        })
                    })
                    .collect();
                first_last(handles).await
            })
        }
    };
}

peer_ring!(
    mpsc_ring,
    tokio::sync::mpsc::unbounded_channel::<u64>(),
    |left| left.recv()
);
peer_ring!(flume_ring, flume::unbounded::<u64>(), |left| left
    .recv_async());

/// What task 0 received last: the first handle's result (every task is awaited).
async fn first_last(handles: Vec<tokio::task::JoinHandle<u64>>) -> u64 {
    let mut first = None;
    for handle in handles {
        let last = handle.await.unwrap();
        first.get_or_insert(last);
    }
    first.expect("a ring has tasks")
}

/// Median wall and CPU µs per hop of `repeats` runs of `ring` on a fresh runtime each.
fn measure(runtime: MakeRuntime, ring: Ring, tasks: usize, laps: u64, repeats: u64) -> (f64, f64) {
    let hops = (tasks as u64 * laps) as f64;
    let (mut walls, mut cpus) = (Vec::new(), Vec::new());
    for _ in 0..repeats {
        let runtime = runtime();
        let (start, cpu_start) = (Instant::now(), cpu_time());
        let last = runtime.block_on(ring(tasks, laps));
        let (wall, cpu) = (start.elapsed(), cpu_time() - cpu_start);
        // The token grows by one per hop, so task 0 last sees one less than the hop count.
        assert_eq!(last, tasks as u64 * laps - 1, "the token went astray");
        walls.push(wall.as_secs_f64() * 1e6 / hops);
        cpus.push(cpu.as_secs_f64() * 1e6 / hops);
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
    let hops = args.first().copied().unwrap_or(100_000);
    let repeats = args.get(1).copied().unwrap_or(3).max(1);
    let runtimes: [(&str, MakeRuntime); 2] = [
        ("current-thread", current_thread),
        ("multi-thread", multi_thread),
    ];
    println!("async token ring, {hops} hops, median of {repeats}: µs per hop (CPU µs per hop)");
    println!("| tasks | runtime | pipes | tokio mpsc | flume | mpsc / pipes |");
    println!("|---:|---|---:|---:|---:|---:|");
    for tasks in [100usize, 503, 10_000] {
        let laps = (hops / tasks as u64).max(1);
        for (name, runtime) in runtimes {
            let (pipes, pipes_cpu) = measure(runtime, pipes_ring, tasks, laps, repeats);
            let (mpsc, mpsc_cpu) = measure(runtime, mpsc_ring, tasks, laps, repeats);
            let (flume, flume_cpu) = measure(runtime, flume_ring, tasks, laps, repeats);
            println!(
                "| {tasks} | {name} | {pipes:.3} ({pipes_cpu:.3}) | {mpsc:.3} ({mpsc_cpu:.3}) | \
                 {flume:.3} ({flume_cpu:.3}) | {:.2}x |",
                mpsc / pipes
            );
        }
    }
}

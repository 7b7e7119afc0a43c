//! Ring (msgsend-ring-pipes, 2012): `num_tasks` threads in a ring, each sending to its right
//! neighbour and receiving from its left, `msg_per_task` times. Two modes:
//! - *throughput* (the 2012 benchmark): every thread sends, then receives, so one message per
//!   link is in flight and the ring is busy everywhere;
//! - *token* (the benchmarks-game thread-ring): one message circulates, so each hop is a hand-off
//!   to a thread that is waiting: it measures hand-off latency.
//!
//! pipes uses `proto! ring { num: send { num(u64) -> num } }`; the peers use one channel per link.
//!
//! Run: `cargo bench --bench ring [-- NUM_TASKS MSG_PER_TASK [REPEATS]]` (defaults 100 1000 3).
//! Prints the 2012 output for pipes, then a table of every implementation with the median of
//! `REPEATS` runs, CPU time beside wall time, and the ratio to crossbeam-channel.

mod common;
use common::{cpu_time, median, numeric_args, result_line};

use std::thread;
use std::time::Instant;

pipes::proto! {
    ring {
        num: send { num(u64) -> num }
    }
}

/// Throughput: everybody sends, then receives. Token: only thread 0 starts; a thread passes
/// on what it receives, except thread 0 on the last lap.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Throughput,
    Token,
}

/// One implementation: runs the ring and returns the sum of what thread 0 received (checked).
struct Implementation {
    name: &'static str,
    run: fn(tasks: usize, laps: u64, mode: Mode) -> u64,
}

fn pipes_ring(tasks: usize, laps: u64, mode: Mode) -> u64 {
    // Link i goes from thread i to thread i + 1.
    let (ports, chans): (Vec<_>, Vec<_>) = (0..tasks).map(|_| ring::init()).unzip();
    let mut ports: Vec<_> = ports.into_iter().map(Some).collect();
    ports.rotate_right(1);
    let threads: Vec<_> = chans
        .into_iter()
        .zip(ports)
        .enumerate()
        .map(|(i, (mut right, left))| {
            let mut left = left.unwrap();
            thread::spawn(move || {
                let mut received = 0;
                for lap in 0..laps {
                    if mode == Mode::Throughput || (i == 0 && lap == 0) {
                        right = right.num(i as u64 * lap).unwrap();
                    }
                    let ring::num::num(n, next) = left.recv().unwrap();
                    left = next;
                    received += n;
                    if mode == Mode::Token && !(i == 0 && lap + 1 == laps) {
                        right = right.num(n + 1).unwrap();
                    }
                }
                received
            })
        })
        .collect();
    let sums: Vec<u64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
    sums[0]
}

/// The same ring for any channel crate whose endpoints look alike.
macro_rules! peer {
    ($name:ident, $make:expr) => {
        fn $name(tasks: usize, laps: u64, mode: Mode) -> u64 {
            let (senders, receivers): (Vec<_>, Vec<_>) = (0..tasks).map(|_| $make).unzip();
            let mut receivers: Vec<_> = receivers.into_iter().map(Some).collect();
            receivers.rotate_right(1);
            let threads: Vec<_> = senders
                .into_iter()
                .zip(receivers)
                .enumerate()
                .map(|(i, (right, left))| {
                    let left = left.unwrap();
                    thread::spawn(move || {
                        let mut received = 0;
                        for lap in 0..laps {
                            if mode == Mode::Throughput || (i == 0 && lap == 0) {
                                right.send(i as u64 * lap).unwrap();
                            }
                            let n = left.recv().unwrap();
                            received += n;
                            if mode == Mode::Token && !(i == 0 && lap + 1 == laps) {
                                right.send(n + 1).unwrap();
                            }
                        }
                        received
                    })
                })
                .collect();
            let sums: Vec<u64> = threads.into_iter().map(|t| t.join().unwrap()).collect();
            sums[0]
        }
    };
}

peer!(crossbeam_ring, crossbeam_channel::unbounded::<u64>());
peer!(std_ring, std::sync::mpsc::channel::<u64>());
peer!(flume_ring, flume::unbounded::<u64>());
peer!(kanal_ring, kanal::unbounded::<u64>());

const BASELINE: &str = "crossbeam-channel";

const IMPLEMENTATIONS: &[Implementation] = &[
    Implementation {
        name: "pipes proto! ring",
        run: pipes_ring,
    },
    Implementation {
        name: BASELINE,
        run: crossbeam_ring,
    },
    Implementation {
        name: "std::sync::mpsc",
        run: std_ring,
    },
    Implementation {
        name: "flume",
        run: flume_ring,
    },
    Implementation {
        name: "kanal",
        run: kanal_ring,
    },
];

/// What thread 0 must have received, so every implementation is checked.
fn expected(tasks: usize, laps: u64, mode: Mode) -> u64 {
    match mode {
        // From its left neighbour, thread `tasks - 1`: (tasks - 1) * lap on each lap.
        Mode::Throughput => (tasks as u64 - 1) * (0..laps).sum::<u64>(),
        // The token gains one per hop: on lap `k` thread 0 receives it after k * tasks + tasks - 1
        // hops.
        Mode::Token => (0..laps).map(|k| k * tasks as u64 + tasks as u64 - 1).sum(),
    }
}

fn main() {
    let numbers = numeric_args();
    let tasks = numbers.first().copied().unwrap_or(100).max(2) as usize;
    let laps = numbers.get(1).copied().unwrap_or(1000).max(1);
    let repeats = numbers.get(2).copied().unwrap_or(3).max(1) as usize;
    let messages = tasks as u64 * laps;

    for (mode, title, mode_name) in [
        (
            Mode::Throughput,
            "throughput (a message per link in flight)",
            "throughput",
        ),
        (Mode::Token, "token (one message circulates)", "token"),
    ] {
        let mut rows = Vec::new();
        for implementation in IMPLEMENTATIONS {
            let mut walls = Vec::new();
            let mut cpus = Vec::new();
            for _ in 0..repeats {
                let (cpu, start) = (cpu_time(), Instant::now());
                let sum = (implementation.run)(tasks, laps, mode);
                let (wall, cpu) = (start.elapsed(), cpu_time() - cpu);
                assert_eq!(sum, expected(tasks, laps, mode), "{}", implementation.name);
                walls.push(wall.as_secs_f64());
                cpus.push(cpu.as_secs_f64());
            }
            rows.push((implementation.name, median(walls), median(cpus)));
        }
        let (_, pipes_wall, _) = rows[0];
        println!("\nring, {title}: {tasks} tasks x {laps} messages, median of {repeats}");
        println!("Sent {messages} messages in {pipes_wall:.6} seconds");
        println!("  {:.0} messages / second", messages as f64 / pipes_wall);
        println!("  {:.3} µs / message", pipes_wall * 1e6 / messages as f64);
        let baseline = rows.iter().find(|r| r.0 == BASELINE).map_or(1.0, |r| r.1);
        println!(
            "| {:<20} | {:>10} | {:>9} | {:>12} | {:>10} | {:>6} |",
            "implementation", "wall s", "cpu s", "msg/s", "µs/msg", "speed"
        );
        println!(
            "|{:-<22}|{:->12}|{:->11}|{:->14}|{:->12}|{:->8}|",
            "", "", "", "", "", ""
        );
        for &(name, wall, cpu) in &rows {
            println!(
                "| {name:<20} | {wall:>10.4} | {cpu:>9.4} | {:>12.0} | {:>10.3} | {:>5.2}x |",
                messages as f64 / wall,
                wall * 1e6 / messages as f64,
                baseline / wall
            );
        }
        for (name, wall, cpu) in rows {
            let line = result_line(&[
                ("bench", &"ring"),
                ("mode", &mode_name),
                ("tasks", &tasks),
                ("laps", &laps),
                ("impl", &name),
                ("wall_s", &wall),
                ("cpu_s", &cpu),
                ("per_s", &(messages as f64 / wall)),
                ("us_per_msg", &(wall * 1e6 / messages as f64)),
            ]);
            println!("{line}");
        }
    }
    println!(
        "\n'speed' is crossbeam-channel's wall time divided by this one's (above 1 is faster)."
    );
}

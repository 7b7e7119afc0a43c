//! Pingpong: two threads bounce a counter back and forth, so each round trip is two hand-offs
//! to a thread that is waiting for it. This measures the latency of a hand-off, the case where
//! the wait policy (spin, yield or park) decides everything. As 2012's pingpong.rs, it also
//! compares a bounded protocol (one session buffer) with the same protocol made unbounded (two
//! lanes), and both with raw packets driven by hand (a packet per message, as a protocol whose
//! states do not share one parameter list sends). `benches/handoff.rs` models what the two
//! protocols' layouts cost.
//!
//! Run: `cargo bench --bench pingpong [-- ROUND_TRIPS [REPEATS]]` (defaults 1000000 and 3).
//! Every implementation runs in the same process, interleaved, `REPEATS` times (those whose
//! hand-offs park after all the others'); the table shows the median. A measurement stops early
//! after two seconds, so slow implementations do fewer round trips and the whole run stays
//! short; the table prints the median count done.

mod common;
use common::protocols::{proto_bounded, proto_unbounded};
use common::{cpu_time, median, numeric_args, out_of_time, result_line};

use std::thread;
use std::time::{Duration, Instant};

use pipes::__private::{SendPacket, StateName, entangle};
use pipes::{ChanOne, oneshot, stream};

/// How long one measurement of one implementation may take.
const TIME_LIMIT: Duration = Duration::from_secs(2);

/// One implementation: runs up to `n` round trips between the calling thread and a spawned one,
/// stopping early once `limit` passes, and returns how many it did.
struct Implementation {
    name: &'static str,
    run: fn(n: u64, limit: Instant) -> u64,
    /// Whether its hand-offs park the threads (tens of µs each): such rows are measured after
    /// every other row's repeats, since a stretch of parked hand-offs leaves this VM's vCPUs slow
    /// for a while (the next repeat's first rows lost 1.5-4x when they followed one).
    parks: bool,
}

fn pipes_streams(n: u64, limit: Instant) -> u64 {
    let (ping_port, ping_chan) = stream::<u64>();
    let (pong_port, pong_chan) = stream::<u64>();
    let echo = thread::spawn(move || {
        for x in ping_port.iter() {
            pong_chan.send(x + 1).unwrap();
        }
    });
    let mut done = 0;
    while done < n && !out_of_time(done, limit) {
        ping_chan.send(done).unwrap();
        assert_eq!(pong_port.recv().unwrap(), done + 1);
        done += 1;
    }
    drop(ping_chan);
    echo.join().unwrap();
    done
}

/// The stream pair with receivers that park at once instead of spinning: what
/// `pipes::spin::set_spin_limit(Duration::ZERO)` trades, latency for CPU.
fn pipes_streams_spin_off(n: u64, limit: Instant) -> u64 {
    pipes::spin::set_spin_limit(Duration::ZERO);
    let done = pipes_streams(n, limit);
    pipes::spin::set_spin_limit(Duration::MAX);
    done
}

/// A counter and the oneshot to answer on: every message travels on a fresh oneshot.
struct Ball(u64, ChanOne<Ball>);

fn pipes_oneshots(n: u64, limit: Instant) -> u64 {
    let (first_port, first_chan) = oneshot::<Ball>();
    let echo = thread::spawn(move || {
        let mut port = first_port;
        while let Ok(Ball(x, back)) = port.recv() {
            let (next_port, next_chan) = oneshot();
            if back.send(Ball(x + 1, next_chan)).is_err() {
                break;
            }
            port = next_port;
        }
    });
    let mut chan = first_chan;
    let mut done = 0;
    while done < n && !out_of_time(done, limit) {
        let (port, back) = oneshot();
        assert!(chan.send(Ball(done, back)).is_ok());
        let Ball(x, next) = port.recv().unwrap();
        assert_eq!(x, done + 1);
        chan = next;
        done += 1;
    }
    drop(chan);
    echo.join().unwrap();
    done
}

/// The raw pingpong's messages: a number and the sending end for the answer.
struct RawPing(u64, SendPacket<RawPong>);
struct RawPong(u64, SendPacket<RawPing>);

/// The raw runtime path: packets made and sent by hand, as generated code does for a protocol
/// that sends a packet per message, to show what the generated layer costs.
fn raw_packets(n: u64, limit: Instant) -> u64 {
    const AT: StateName = StateName {
        protocol: "raw",
        state: "ping",
    };
    let (first_send, first_recv) = entangle::<RawPing>();
    let echo = thread::spawn(move || {
        let mut port = first_recv;
        while let Ok(RawPing(x, reply)) = port.recv(&AT) {
            let (next_send, next_recv) = entangle();
            if reply.send(RawPong(x + 1, next_send)).is_err() {
                break;
            }
            port = next_recv;
        }
    });
    let mut chan = first_send;
    let mut done = 0;
    while done < n && !out_of_time(done, limit) {
        let (reply_send, reply_recv) = entangle();
        assert!(chan.send(RawPing(done, reply_send)).is_ok());
        let RawPong(x, next) = reply_recv.recv(&AT).unwrap();
        assert_eq!(x, done + 1);
        chan = next;
        done += 1;
    }
    drop(chan);
    echo.join().unwrap();
    done
}

/// The same two-channel pingpong for any channel crate whose endpoints look alike.
macro_rules! peer {
    ($name:ident, $make:expr) => {
        fn $name(n: u64, limit: Instant) -> u64 {
            let (ping_tx, ping_rx) = $make;
            let (pong_tx, pong_rx) = $make;
            let echo = thread::spawn(move || {
                while let Ok(x) = ping_rx.recv() {
                    pong_tx.send(x + 1).unwrap();
                }
            });
            let mut done = 0;
            while done < n && !out_of_time(done, limit) {
                ping_tx.send(done).unwrap();
                assert_eq!(pong_rx.recv().unwrap(), done + 1);
                done += 1;
            }
            drop(ping_tx);
            echo.join().unwrap();
            done
        }
    };
}

peer!(crossbeam_unbounded, crossbeam_channel::unbounded::<u64>());
peer!(crossbeam_bounded1, crossbeam_channel::bounded::<u64>(1));
peer!(std_mpsc, std::sync::mpsc::channel::<u64>());
peer!(flume_unbounded, flume::unbounded::<u64>());
peer!(kanal_unbounded, kanal::unbounded::<u64>());

const BASELINE: &str = "crossbeam-channel unbounded";

const IMPLEMENTATIONS: &[Implementation] = &[
    Implementation {
        name: "pipes stream pair",
        run: pipes_streams,
        parks: false,
    },
    Implementation {
        name: "pipes oneshot per message",
        run: pipes_oneshots,
        parks: false,
    },
    Implementation {
        name: "pipes proto! bounded",
        run: proto_bounded,
        parks: false,
    },
    Implementation {
        name: "pipes proto! unbounded",
        run: proto_unbounded,
        parks: false,
    },
    Implementation {
        name: "pipes raw packets",
        run: raw_packets,
        parks: false,
    },
    Implementation {
        name: BASELINE,
        run: crossbeam_unbounded,
        parks: false,
    },
    Implementation {
        name: "crossbeam-channel bounded(1)",
        run: crossbeam_bounded1,
        parks: false,
    },
    Implementation {
        name: "std::sync::mpsc",
        run: std_mpsc,
        parks: true,
    },
    Implementation {
        name: "flume unbounded",
        run: flume_unbounded,
        parks: true,
    },
    Implementation {
        name: "kanal unbounded",
        run: kanal_unbounded,
        parks: false,
    },
    Implementation {
        name: "pipes stream pair, spin off",
        run: pipes_streams_spin_off,
        parks: true,
    },
];

/// One measurement: round trips done, and nanoseconds per round trip of wall clock and CPU.
#[derive(Clone, Copy)]
struct Sample {
    round_trips: u64,
    wall: f64,
    cpu: f64,
}

fn measure(implementation: &Implementation, n: u64) -> Sample {
    let (cpu, start) = (cpu_time(), Instant::now());
    let round_trips = (implementation.run)(n, start + TIME_LIMIT).max(1);
    let (wall, cpu) = (start.elapsed(), cpu_time() - cpu);
    Sample {
        round_trips,
        wall: wall.as_nanos() as f64 / round_trips as f64,
        cpu: cpu.as_nanos() as f64 / round_trips as f64,
    }
}

fn main() {
    let numbers = numeric_args();
    let round_trips = numbers.first().copied().unwrap_or(1_000_000);
    let repeats = numbers.get(1).copied().unwrap_or(3).max(1) as usize;

    // The rows that spin first, interleaved, then the rows that park (see `parks`).
    let order: Vec<usize> = (0..IMPLEMENTATIONS.len())
        .filter(|&i| !IMPLEMENTATIONS[i].parks)
        .chain((0..IMPLEMENTATIONS.len()).filter(|&i| IMPLEMENTATIONS[i].parks))
        .collect();

    // Warm up: the first run of each pays for cold caches and lazy initialisation.
    for &i in &order {
        measure(&IMPLEMENTATIONS[i], 2_000);
    }

    let mut samples = vec![Vec::new(); IMPLEMENTATIONS.len()];
    for parks in [false, true] {
        for _ in 0..repeats {
            for &i in order.iter().filter(|&&i| IMPLEMENTATIONS[i].parks == parks) {
                samples[i].push(measure(&IMPLEMENTATIONS[i], round_trips));
            }
        }
    }

    let rows: Vec<(&str, u64, f64, f64)> = IMPLEMENTATIONS
        .iter()
        .zip(&samples)
        .map(|(implementation, samples)| {
            let median_of = |f: fn(&Sample) -> f64| median(samples.iter().map(f).collect());
            let n = median_of(|s| s.round_trips as f64) as u64;
            (
                implementation.name,
                n,
                median_of(|s| s.wall),
                median_of(|s| s.cpu),
            )
        })
        .collect();
    let baseline = rows
        .iter()
        .find(|row| row.0 == BASELINE)
        .map_or(1.0, |row| row.2);

    println!(
        "pingpong: 2 threads, median of {repeats}; ns per round trip (two hand-offs); \
         'speed' is {BASELINE}'s wall time divided by this one's (above 1 is faster)"
    );
    println!(
        "| {:<28} | {:>11} | {:>12} | {:>11} | {:>6} |",
        "implementation", "round trips", "wall ns/rt", "cpu ns/rt", "speed"
    );
    println!(
        "|{:-<30}|{:->13}|{:->14}|{:->13}|{:->8}|",
        "", "", "", "", ""
    );
    for &(name, n, wall, cpu) in &rows {
        println!(
            "| {name:<28} | {n:>11} | {wall:>12.0} | {cpu:>11.0} | {:>5.2}x |",
            baseline / wall
        );
    }
    println!();
    for (name, n, wall, cpu) in rows {
        let line = result_line(&[
            ("bench", &"pingpong"),
            ("impl", &name),
            ("round_trips", &n),
            ("wall_ns", &wall),
            ("cpu_ns", &cpu),
            ("per_s", &(1e9 / wall)),
        ]);
        println!("{line}");
    }
}

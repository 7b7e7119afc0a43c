//! Sessions: one thread opens short sessions, a request and its reply each, and ends every one.
//! This measures what a session costs to make and to end, the price of the 2012 style where
//! a fresh protocol (or a fresh channel) carries each exchange: the buffer or packets it
//! allocates, the endpoints' closing, and two hand-offs that never wait (one thread, so
//! nothing crosses cores). The peers make the same exchange out of two channels each.
//!
//! Run: `cargo bench --bench sessions [-- SESSIONS [REPEATS] [NAME]]` (defaults 1000000 and
//! 3). Every implementation (or those whose name holds `NAME`, for a profile) runs in the same
//! process, interleaved, `REPEATS` times; the table shows the median.

mod common;
use common::{cpu_time, median, numeric_args, result_line};

use std::hint::black_box;
use std::time::Instant;

use pipes::oneshot;

pipes::proto! {
    /// A request and its reply: bounded, so one session buffer holds both.
    ask {
        Ask: send { Ask(u64) -> Answer }
        Answer: recv { Answer(u64) -> ! }
    }

    /// The same exchange, made unbounded (lanes) by an unreachable self-loop.
    #[allow(unreachable_states)]
    ask_unbounded {
        Ask: send { Ask(u64) -> Answer }
        Answer: recv { Answer(u64) -> ! }
        Never: send { Again -> Never }
    }
}

/// One implementation: `n` sessions, each a request of `i` and its reply `i + 1`.
struct Implementation {
    name: &'static str,
    run: fn(n: u64),
}

macro_rules! protocol {
    ($name:ident, $proto:ident) => {
        fn $name(n: u64) {
            for i in 0..n {
                let (server, client) = $proto::init();
                let answer = client.ask(black_box(i)).unwrap();
                let $proto::Ask::Ask(x, server) = server.recv().unwrap();
                server.answer(x + 1).unwrap();
                let $proto::Answer::Answer(y) = answer.recv().unwrap();
                assert_eq!(y, i + 1);
            }
        }
    };
}

protocol!(proto_bounded, ask);
protocol!(proto_unbounded, ask_unbounded);

fn pipes_oneshots(n: u64) {
    for i in 0..n {
        let (request_port, request_chan) = oneshot::<u64>();
        let (reply_port, reply_chan) = oneshot::<u64>();
        request_chan.send(black_box(i)).unwrap();
        reply_chan.send(request_port.recv().unwrap() + 1).unwrap();
        assert_eq!(reply_port.recv().unwrap(), i + 1);
    }
}

fn crossbeam_bounded1(n: u64) {
    for i in 0..n {
        let (request_tx, request_rx) = crossbeam_channel::bounded::<u64>(1);
        let (reply_tx, reply_rx) = crossbeam_channel::bounded::<u64>(1);
        request_tx.send(black_box(i)).unwrap();
        reply_tx.send(request_rx.recv().unwrap() + 1).unwrap();
        assert_eq!(reply_rx.recv().unwrap(), i + 1);
    }
}

fn kanal_bounded1(n: u64) {
    for i in 0..n {
        let (request_tx, request_rx) = kanal::bounded::<u64>(1);
        let (reply_tx, reply_rx) = kanal::bounded::<u64>(1);
        request_tx.send(black_box(i)).unwrap();
        reply_tx.send(request_rx.recv().unwrap() + 1).unwrap();
        assert_eq!(reply_rx.recv().unwrap(), i + 1);
    }
}

fn flume_bounded1(n: u64) {
    for i in 0..n {
        let (request_tx, request_rx) = flume::bounded::<u64>(1);
        let (reply_tx, reply_rx) = flume::bounded::<u64>(1);
        request_tx.send(black_box(i)).unwrap();
        reply_tx.send(request_rx.recv().unwrap() + 1).unwrap();
        assert_eq!(reply_rx.recv().unwrap(), i + 1);
    }
}

fn std_sync_channel1(n: u64) {
    for i in 0..n {
        let (request_tx, request_rx) = std::sync::mpsc::sync_channel::<u64>(1);
        let (reply_tx, reply_rx) = std::sync::mpsc::sync_channel::<u64>(1);
        request_tx.send(black_box(i)).unwrap();
        reply_tx.send(request_rx.recv().unwrap() + 1).unwrap();
        assert_eq!(reply_rx.recv().unwrap(), i + 1);
    }
}

fn tokio_oneshots(n: u64) {
    for i in 0..n {
        let (request_tx, mut request_rx) = tokio::sync::oneshot::channel::<u64>();
        let (reply_tx, mut reply_rx) = tokio::sync::oneshot::channel::<u64>();
        request_tx.send(black_box(i)).unwrap();
        reply_tx.send(request_rx.try_recv().unwrap() + 1).unwrap();
        assert_eq!(reply_rx.try_recv().unwrap(), i + 1);
    }
}

const BASELINE: &str = "crossbeam-channel bounded(1) pair";

const IMPLEMENTATIONS: &[Implementation] = &[
    Implementation {
        name: "pipes proto! bounded",
        run: proto_bounded,
    },
    Implementation {
        name: "pipes proto! unbounded",
        run: proto_unbounded,
    },
    Implementation {
        name: "pipes oneshot pair",
        run: pipes_oneshots,
    },
    Implementation {
        name: BASELINE,
        run: crossbeam_bounded1,
    },
    Implementation {
        name: "kanal bounded(1) pair",
        run: kanal_bounded1,
    },
    Implementation {
        name: "flume bounded(1) pair",
        run: flume_bounded1,
    },
    Implementation {
        name: "std sync_channel(1) pair",
        run: std_sync_channel1,
    },
    Implementation {
        name: "tokio oneshot pair",
        run: tokio_oneshots,
    },
];

/// One measurement: nanoseconds per session, of wall clock and CPU.
fn measure(implementation: &Implementation, n: u64) -> (f64, f64) {
    let (cpu, start) = (cpu_time(), Instant::now());
    (implementation.run)(n);
    let (wall, cpu) = (start.elapsed(), cpu_time() - cpu);
    (
        wall.as_nanos() as f64 / n as f64,
        cpu.as_nanos() as f64 / n as f64,
    )
}

fn main() {
    let numbers = numeric_args();
    let sessions = numbers.first().copied().unwrap_or(1_000_000).max(1);
    let repeats = numbers.get(1).copied().unwrap_or(3).max(1) as usize;
    let only = std::env::args()
        .skip(1)
        .find(|a| !a.starts_with("--") && a.parse::<u64>().is_err());
    let implementations: Vec<&Implementation> = IMPLEMENTATIONS
        .iter()
        .filter(|i| {
            only.as_ref()
                .is_none_or(|only| i.name.contains(only.as_str()))
        })
        .collect();

    // Warm up: the first run of each pays for cold caches and the allocator's first pages.
    for implementation in &implementations {
        measure(implementation, 10_000);
    }
    let mut samples = vec![Vec::new(); implementations.len()];
    for _ in 0..repeats {
        for (implementation, samples) in implementations.iter().zip(&mut samples) {
            samples.push(measure(implementation, sessions));
        }
    }
    let rows: Vec<(&str, f64, f64)> = implementations
        .iter()
        .zip(&samples)
        .map(|(implementation, samples)| {
            (
                implementation.name,
                median(samples.iter().map(|s| s.0).collect()),
                median(samples.iter().map(|s| s.1).collect()),
            )
        })
        .collect();
    let baseline = rows
        .iter()
        .find(|row| row.0 == BASELINE)
        .map_or(1.0, |row| row.1);

    println!(
        "sessions: 1 thread, {sessions} sessions of a request and its reply, median of \
         {repeats}; ns per session; 'speed' is {BASELINE}'s wall time divided by this one's \
         (above 1 is faster)"
    );
    println!(
        "| {:<34} | {:>10} | {:>10} | {:>6} |",
        "implementation", "wall ns", "cpu ns", "speed"
    );
    println!("|{:-<36}|{:->12}|{:->12}|{:->8}|", "", "", "", "");
    for &(name, wall, cpu) in &rows {
        println!(
            "| {name:<34} | {wall:>10.1} | {cpu:>10.1} | {:>5.2}x |",
            baseline / wall
        );
    }
    println!();
    for (name, wall, cpu) in rows {
        let line = result_line(&[
            ("bench", &"sessions"),
            ("impl", &name),
            ("sessions", &sessions),
            ("wall_ns", &wall),
            ("cpu_ns", &cpu),
            ("per_s", &(1e9 / wall)),
        ]);
        println!("{line}");
    }
}

//! What a hand-off costs by where its word and slot live: models of the layouts a two-way
//! session could have, beside pipes' own bounded and unbounded pingpong in the same run.
//! Issue 13 asks for an unbounded `proto!` protocol within 1.5x of the bounded one; this shows
//! how much of the gap the layout alone sets, before any of the runtime's code runs.
//!
//! Each model is a pingpong of `u64`s between two threads: a send writes a slot and publishes it
//! with an `AcqRel` swap (the runtime's publish; the word it takes out would say whether a
//! receiver waits, and here none ever does), a receive spins on the word, 32 looks per clock
//! read, as the runtime's `spin_until` does, then reads the slot. Slots are 16 bytes (a value
//! and a word), four to a cache line.
//!
//! - `one line`: both directions' slot and word in one cache line, used over and over: a
//!   bounded session's buffer.
//! - `lane per direction`: a tail word on its own line per direction, and a ring of slots: an
//!   unbounded session's two lanes.
//! - `lane per direction, word per slot`: the same, but each slot is published by a word beside
//!   it, so a hand-off touches one line a side.
//! - `one ring, word per slot` and `one ring, tail word`: a single ring for both directions,
//!   taking turns (in a session only one side sends at a time, so one queue could carry both
//!   directions): a reply goes into the slot after the request's, usually on the same line.
//!
//! Run: `cargo bench --bench handoff [-- ROUND_TRIPS [REPEATS]]` (defaults 200000 and 7). Every
//! row runs in turn, `REPEATS` times; the table shows medians of ns per round trip, wall and CPU,
//! and each row against `one line` and against pipes' bounded protocol.

mod common;
use common::protocols::{proto_bounded, proto_unbounded};
use common::{cpu_time, median, numeric_args, result_line};

use std::hint::spin_loop;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::{Duration, Instant};

/// A slot and the word that publishes it (when the layout publishes per slot).
#[derive(Default)]
#[repr(C)]
struct Slot {
    value: AtomicUsize,
    word: AtomicUsize,
}

/// Four slots, one cache line.
#[derive(Default)]
#[repr(C, align(64))]
struct Line([Slot; 4]);

/// How a ring publishes a position: the word of its slot, or one tail word for the ring.
#[derive(Clone, Copy, PartialEq)]
enum Publish {
    Slot,
    Tail,
}

/// A ring of slots with a tail word on a line of its own.
struct Ring {
    tail: Line,
    lines: Box<[Line]>,
    publish: Publish,
}

impl Ring {
    fn new(positions: usize, publish: Publish) -> Self {
        Ring {
            tail: Line::default(),
            lines: (0..positions.div_ceil(4))
                .map(|_| Line::default())
                .collect(),
            publish,
        }
    }

    fn slot(&self, position: usize) -> &Slot {
        // A power of two of lines, so no division on the hand-off's path.
        let position = position & (self.lines.len() * 4 - 1);
        &self.lines[position / 4].0[position % 4]
    }

    fn word(&self, position: usize) -> &AtomicUsize {
        match self.publish {
            Publish::Slot => &self.slot(position).word,
            Publish::Tail => &self.tail.0[0].word,
        }
    }

    fn send(&self, position: usize, value: usize) {
        self.slot(position).value.store(value, Ordering::Relaxed);
        let found = self.word(position).swap(position + 1, Ordering::AcqRel);
        // A lane would wake the waiter it took out; nobody waits in a model.
        assert_ne!(found, usize::MAX);
    }

    fn recv(&self, position: usize) -> usize {
        let word = self.word(position);
        'wait: loop {
            for _ in 0..32 {
                if word.load(Ordering::Acquire) > position {
                    break 'wait;
                }
                spin_loop();
            }
            let _ = Instant::now();
        }
        self.slot(position).value.load(Ordering::Relaxed)
    }
}

/// Positions in a ring: a lane's segments hold 128-4096 slots; this one is 64 KiB.
const POSITIONS: usize = 4096;

/// A model: its two rings (one and the same for a shared ring) and where round trip `i`'s
/// request and reply go.
#[derive(Clone, Copy)]
struct Model {
    shared: bool,
    positions: usize,
    publish: Publish,
}

impl Model {
    fn positions(self, i: usize) -> (usize, usize) {
        if self.shared {
            (2 * i, 2 * i + 1)
        } else {
            (i, i)
        }
    }
}

fn run_model(model: Model, n: usize) -> usize {
    let request = Arc::new(Ring::new(model.positions, model.publish));
    let reply = if model.shared {
        Arc::clone(&request)
    } else {
        Arc::new(Ring::new(model.positions, model.publish))
    };
    let echo = {
        let (request, reply) = (Arc::clone(&request), Arc::clone(&reply));
        thread::spawn(move || {
            for i in 0..n {
                let (asked, answered) = model.positions(i);
                let x = request.recv(asked);
                reply.send(answered, x + 1);
            }
        })
    };
    for i in 0..n {
        let (asked, answered) = model.positions(i);
        request.send(asked, i);
        assert_eq!(reply.recv(answered), i + 1);
    }
    echo.join().unwrap();
    n
}

/// What a row runs: a model, or pipes itself (round trips up to a count and a time limit).
enum Run {
    Model(Model),
    Pipes(fn(u64, Instant) -> u64),
}

/// One row of the table.
struct Row {
    name: &'static str,
    run: Run,
}

const ROWS: [Row; 7] = [
    Row {
        name: "one line",
        run: Run::Model(Model {
            shared: true,
            positions: 2,
            publish: Publish::Slot,
        }),
    },
    Row {
        name: "lane per direction",
        run: Run::Model(Model {
            shared: false,
            positions: POSITIONS,
            publish: Publish::Tail,
        }),
    },
    Row {
        name: "lane per direction, word per slot",
        run: Run::Model(Model {
            shared: false,
            positions: POSITIONS,
            publish: Publish::Slot,
        }),
    },
    Row {
        name: "one ring, word per slot",
        run: Run::Model(Model {
            shared: true,
            positions: POSITIONS,
            publish: Publish::Slot,
        }),
    },
    Row {
        name: "one ring, tail word",
        run: Run::Model(Model {
            shared: true,
            positions: POSITIONS,
            publish: Publish::Tail,
        }),
    },
    Row {
        name: "pipes proto! bounded",
        run: Run::Pipes(proto_bounded),
    },
    Row {
        name: "pipes proto! unbounded",
        run: Run::Pipes(proto_unbounded),
    },
];

/// Wall and CPU ns per round trip of `n` round trips of `row`.
fn measure(row: &Row, n: u64) -> (f64, f64) {
    let (cpu, start) = (cpu_time(), Instant::now());
    let done = match row.run {
        Run::Model(model) => run_model(model, n as usize) as u64,
        // No time limit: every row does all its round trips.
        Run::Pipes(pipes) => pipes(n, start + Duration::from_secs(3600)),
    };
    assert_eq!(done, n);
    let (wall, cpu) = (start.elapsed(), cpu_time() - cpu);
    (
        wall.as_nanos() as f64 / n as f64,
        cpu.as_nanos() as f64 / n as f64,
    )
}

fn main() {
    let args = numeric_args();
    let n = args.first().copied().unwrap_or(200_000).max(1);
    let repeats = args.get(1).copied().unwrap_or(7).max(1);
    for row in &ROWS {
        measure(row, 2_000);
    }
    let mut samples = vec![(Vec::new(), Vec::new()); ROWS.len()];
    for _ in 0..repeats {
        for (row, (walls, cpus)) in ROWS.iter().zip(&mut samples) {
            let (wall, cpu) = measure(row, n);
            walls.push(wall);
            cpus.push(cpu);
        }
    }
    let medians: Vec<(f64, f64)> = samples
        .into_iter()
        .map(|(walls, cpus)| (median(walls), median(cpus)))
        .collect();
    let (one_line, bounded) = (medians[0].0, medians[5].0);
    println!("handoff, {n} round trips, median of {repeats} (ns per round trip)");
    println!("| layout | wall | cpu | / one line | / pipes bounded |");
    println!("|---|---:|---:|---:|---:|");
    for (row, (wall, cpu)) in ROWS.iter().zip(&medians) {
        println!(
            "| {} | {wall:.1} | {cpu:.1} | {:.2}x | {:.2}x |",
            row.name,
            wall / one_line,
            wall / bounded
        );
        println!(
            "{}",
            result_line(&[
                ("bench", &"handoff"),
                ("round_trips", &n),
                ("impl", &row.name),
                ("wall_ns", &format!("{wall:.2}")),
                ("cpu_ns", &format!("{cpu:.2}")),
            ])
        );
    }
}

//! FastFlow's pipeline with a feedback channel (seed 000, Rinaldi, Torquati and Danelutto,
//! "Enforcing Reference Capability in FastFlow with Rust"): a master stage and k forwarding
//! stages in a ring, each a thread, each link single-producer single-consumer. The master emits
//! a first batch of 1,000 elements, then a batch of 256 each time 256 have come back around the
//! ring, until every element has made the trip: 1,000,000 elements in the paper, which plots
//! messages per second against the number of stages (a message is one element crossing one
//! link, so a trip is k + 1 messages).
//!
//! Every element is a `Box` (`fastflow::Element`) whose ownership moves around the ring; each
//! stage counts itself in the element's `hops`, and the master checks that every element comes
//! back once, in order, having passed every stage. Implementations: pipes streams, pipes over
//! the `proto!` protocol `elements` (ending with `Done`), crossbeam-channel and kanal
//! (unbounded), the same ring code over each (`fastflow::Link`).
//!
//! These machines have 2 cores: from 2 stages on there are more threads than cores, and the
//! rate shows how each implementation hands off to a thread that is not running.
//!
//! Run: `cargo bench --bench pipeline [-- ELEMENTS MAX_STAGES [REPEATS]]` (defaults 1000000 16
//! 3; stages 1, 2, 4, ... up to MAX_STAGES). Prints one table per stage count with the median
//! of `REPEATS` runs: wall and CPU time, messages per second, and the ratio to
//! crossbeam-channel.

mod common;
mod fastflow;

use common::{cpu_time, median, numeric_args, result_line};
use fastflow::{Crossbeam, Element, Kanal, Link, PipesProtocol, PipesStream};

use std::thread;
use std::time::Instant;

/// The master's first batch.
const FIRST_BATCH: u64 = 1_000;
/// Every later batch: sent each time this many elements have come back.
const BATCH: u64 = 256;

/// One implementation: runs the ring and returns the elements that came back (checked).
struct Implementation {
    name: &'static str,
    run: fn(elements: u64, stages: usize) -> u64,
}

/// A forwarding stage: every element it receives goes on to the next stage.
fn forward<L: Link>(mut input: L::Rx, mut output: L::Tx) {
    while let Some((mut element, next)) = L::recv(input) {
        element.hops += 1;
        output = L::send(output, element);
        input = next;
    }
    L::close(output);
}

/// Emits elements `*sent..limit` (at most `elements`) into the ring.
fn emit<L: Link>(mut tx: L::Tx, sent: &mut u64, limit: u64) -> L::Tx {
    while *sent < limit {
        tx = L::send(tx, Element::new(*sent));
        *sent += 1;
    }
    tx
}

/// The ring over links `L`: this thread is the master, `stages` threads forward.
fn pipeline<L: Link>(elements: u64, stages: usize) -> u64 {
    let (mut to_ring, mut port) = L::link();
    let handles: Vec<_> = (0..stages)
        .map(|_| {
            let (output, next) = L::link();
            let input = std::mem::replace(&mut port, next);
            thread::spawn(move || forward::<L>(input, output))
        })
        .collect();
    let mut feedback = port;

    let mut sent = 0;
    to_ring = emit::<L>(to_ring, &mut sent, FIRST_BATCH.min(elements));
    let mut returned = 0;
    while returned < elements {
        let (element, next) = L::recv(feedback).expect("every element comes back");
        feedback = next;
        assert_eq!(element.id, returned, "{}: once each, in order", L::NAME);
        assert_eq!(element.hops, stages as u64, "{}: every stage", L::NAME);
        returned += 1;
        // The feedback channel paces the master: a new batch for every batch returned.
        if returned.is_multiple_of(BATCH) {
            to_ring = emit::<L>(to_ring, &mut sent, (FIRST_BATCH + returned).min(elements));
        }
    }
    // Closing the master's link ends the first stage; each stage then ends the next.
    L::close(to_ring);
    assert!(L::recv(feedback).is_none(), "{}: an extra element", L::NAME);
    for handle in handles {
        handle.join().expect("a stage");
    }
    returned
}

const BASELINE: &str = "crossbeam-channel";

const IMPLEMENTATIONS: &[Implementation] = &[
    Implementation {
        name: PipesStream::NAME,
        run: pipeline::<PipesStream>,
    },
    Implementation {
        name: PipesProtocol::NAME,
        run: pipeline::<PipesProtocol>,
    },
    Implementation {
        name: Crossbeam::NAME,
        run: pipeline::<Crossbeam>,
    },
    Implementation {
        name: Kanal::NAME,
        run: pipeline::<Kanal>,
    },
];

fn main() {
    let numbers = numeric_args();
    let elements = numbers.first().copied().unwrap_or(1_000_000).max(1);
    let max_stages = numbers.get(1).copied().unwrap_or(16).max(1) as usize;
    let repeats = numbers.get(2).copied().unwrap_or(3).max(1) as usize;

    let stage_counts: Vec<usize> = std::iter::successors(Some(1), |&s| Some(s * 2))
        .take_while(|&s| s <= max_stages)
        .collect();
    // Samples of each (stages, implementation). The repeats go round every configuration in
    // turn, so a burst of load from another process on this shared machine lands on one sample
    // of many configurations, not on every sample of one.
    let mut samples = vec![(Vec::new(), Vec::new()); stage_counts.len() * IMPLEMENTATIONS.len()];
    for _ in 0..repeats {
        for (s, &stages) in stage_counts.iter().enumerate() {
            for (i, implementation) in IMPLEMENTATIONS.iter().enumerate() {
                let (cpu, start) = (cpu_time(), Instant::now());
                let returned = (implementation.run)(elements, stages);
                let (wall, cpu) = (start.elapsed(), cpu_time() - cpu);
                assert_eq!(returned, elements, "{}", implementation.name);
                let sample = &mut samples[s * IMPLEMENTATIONS.len() + i];
                sample.0.push(wall.as_secs_f64());
                sample.1.push(cpu.as_secs_f64());
            }
        }
    }
    let mut samples = samples
        .into_iter()
        .map(|(walls, cpus)| (median(walls), median(cpus)));
    let mut results = Vec::new();
    for stages in stage_counts {
        let messages = elements * (stages as u64 + 1);
        let rows: Vec<_> = IMPLEMENTATIONS
            .iter()
            .map(|i| {
                let (wall, cpu) = samples.next().expect("a sample per configuration");
                (i.name, wall, cpu)
            })
            .collect();
        let baseline = rows.iter().find(|r| r.0 == BASELINE).map_or(1.0, |r| r.1);
        println!(
            "\npipeline: master + {stages} stage(s), {elements} elements ({messages} messages), \
             median of {repeats}"
        );
        println!(
            "| {:<22} | {:>9} | {:>9} | {:>12} | {:>10} | {:>6} |",
            "implementation", "wall s", "cpu s", "msg/s", "ns/msg", "speed"
        );
        println!(
            "|{:-<24}|{:->11}|{:->11}|{:->14}|{:->12}|{:->8}|",
            "", "", "", "", "", ""
        );
        for &(name, wall, cpu) in &rows {
            println!(
                "| {name:<22} | {wall:>9.4} | {cpu:>9.4} | {:>12.0} | {:>10.1} | {:>5.2}x |",
                messages as f64 / wall,
                wall * 1e9 / messages as f64,
                baseline / wall
            );
            results.push(result_line(&[
                ("bench", &"pipeline"),
                ("stages", &stages),
                ("elements", &elements),
                ("messages", &messages),
                ("impl", &name),
                ("wall_s", &wall),
                ("cpu_s", &cpu),
                ("per_s", &(messages as f64 / wall)),
            ]));
        }
    }
    println!(
        "\n'speed' is {BASELINE}'s wall time divided by this one's (above 1 is faster); a message \
         is one element crossing one link."
    );
    for line in results {
        println!("{line}");
    }
}

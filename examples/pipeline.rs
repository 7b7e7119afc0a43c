//! FastFlow's pipeline with a feedback channel, after Rinaldi, Torquati and Danelutto,
//! "Enforcing Reference Capability in FastFlow with Rust" (seed 000): a master stage and k
//! forwarding stages in a ring, each a thread, each link a stream. The master sends a first
//! batch of 1,000 elements, then, each time 256 elements have come back around the ring, a
//! batch of 256 more, until every element has made the trip. The paper sends 1,000,000 elements
//! and plots messages per second against the number of stages; this prints the same.
//!
//! A message is one element crossing one link, so a trip around a ring of k stages is k + 1
//! messages. These machines have 2 cores: with more stages than cores the stages take turns,
//! and the rate shows what a hand-off to a thread that is not running costs.
//!
//! Run: `cargo run --release --example pipeline [-- ELEMENTS [MAX_STAGES]]` (defaults 1000000
//! and 8; the paper's run is the default).

use std::thread;
use std::time::{Duration, Instant};

use pipes::stream;

/// The master's first batch.
pub const FIRST_BATCH: u64 = 1_000;
/// Every later batch: sent each time this many elements have come back.
pub const BATCH: u64 = 256;

/// What one run of the ring gives back.
#[derive(Debug)]
pub struct RingRun {
    /// Elements that came back to the master.
    pub returned: u64,
    /// Whether they came back in the order they were sent.
    pub in_order: bool,
    /// Messages: elements times links crossed (stages + 1).
    pub messages: u64,
    /// Wall time from the first send to the last element's return.
    pub elapsed: Duration,
}

/// Runs `elements` elements around a ring of the master and `stages` forwarding stages.
pub fn ring(elements: u64, stages: usize) -> RingRun {
    assert!(stages > 0, "a ring needs a forwarding stage");
    // The master's chan into the first stage, and the port the last stage feeds back into.
    let (first_in, to_first) = stream::<u64>();
    let mut port = first_in;
    let mut handles = Vec::with_capacity(stages);
    for _ in 1..stages {
        let (next_port, next_chan) = stream::<u64>();
        let input = port;
        handles.push(thread::spawn(move || forward(input, next_chan)));
        port = next_port;
    }
    let (feedback, to_master) = stream::<u64>();
    let input = port;
    handles.push(thread::spawn(move || forward(input, to_master)));

    let start = Instant::now();
    // Elements are numbered in the order they are sent; `sent` is the next one.
    let mut sent = 0;
    let mut send_up_to = |limit: u64| {
        while sent < limit.min(elements) {
            to_first.send(sent).expect("the ring is running");
            sent += 1;
        }
    };
    send_up_to(FIRST_BATCH);
    let mut returned = 0;
    let mut in_order = true;
    while returned < elements {
        let element = feedback.recv().expect("every element comes back");
        in_order &= element == returned;
        returned += 1;
        // The feedback channel paces the master: a new batch for every batch returned.
        if returned % BATCH == 0 {
            send_up_to(FIRST_BATCH + returned);
        }
    }
    let elapsed = start.elapsed();
    // Dropping the master's chan ends the first stage's input; each stage then ends the next.
    drop(to_first);
    for handle in handles {
        handle.join().expect("a stage");
    }
    RingRun {
        returned,
        in_order,
        messages: returned * (stages as u64 + 1),
        elapsed,
    }
}

/// A forwarding stage: every element it receives goes on to the next stage.
fn forward(input: pipes::Port<u64>, output: pipes::Chan<u64>) {
    for element in input {
        // The next stage only goes away after this one, so a failed send is a bug.
        output.send(element).expect("the next stage is running");
    }
}

/// Runs rings of 1..=`max_stages` stages, printing the rate of each; returns the runs.
pub fn report(elements: u64, max_stages: usize) -> Vec<RingRun> {
    (1..=max_stages)
        .map(|stages| {
            let run = ring(elements, stages);
            assert!(run.in_order && run.returned == elements);
            println!(
                "pipeline: {stages} stage(s), {elements} elements, {:7.3} s, {:6.2} M messages/s",
                run.elapsed.as_secs_f64(),
                run.messages as f64 / run.elapsed.as_secs_f64() / 1e6
            );
            run
        })
        .collect()
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments are numbers"))
        .collect();
    let elements = args.first().copied().unwrap_or(1_000_000);
    let max_stages = args.get(1).copied().unwrap_or(8) as usize;
    report(elements, max_stages);
}

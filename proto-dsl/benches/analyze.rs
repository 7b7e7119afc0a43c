//! Benchmark: parse + check + liveness of generated protocols (1,000 states, and 10,000 to
//! show how it scales), each phase timed on its own. `harness = false`: plain timing with
//! `Instant`, median and best of several runs, since these machines are shared and noisy.
//!
//! Run: `cargo bench -p proto-dsl --bench analyze`

#[path = "../tests/common/mod.rs"]
mod common;

use std::hint::black_box;
use std::time::{Duration, Instant};

struct Phases {
    parse: Duration,
    check: Duration,
    liveness: Duration,
}

fn run_once(source: &str) -> Phases {
    let t0 = Instant::now();
    let file = proto_dsl::parse(black_box(source)).expect("the generated protocol parses");
    let t1 = Instant::now();
    let diagnostics = proto_dsl::check::check(&file, source);
    assert!(
        diagnostics.is_empty(),
        "{}",
        diagnostics.render("generated.pipes", source)
    );
    let t2 = Instant::now();
    let liveness: Vec<_> = file
        .protocols
        .iter()
        .map(proto_dsl::liveness::analyze)
        .collect();
    let t3 = Instant::now();
    assert!(liveness[0].is_bounded());
    black_box((file, liveness));
    Phases {
        parse: t1 - t0,
        check: t2 - t1,
        liveness: t3 - t2,
    }
}

fn stats(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (samples[samples.len() / 2], samples[0])
}

fn bench(states: usize, runs: usize) {
    let source = common::generated_protocol("generated", states);
    let messages = source.matches("->").count();
    run_once(&source); // warm-up
    let samples: Vec<Phases> = (0..runs).map(|_| run_once(&source)).collect();
    let report = |name: &str, pick: fn(&Phases) -> Duration| {
        let (median, best) = stats(samples.iter().map(pick).collect());
        println!(
            "  {name:<22} median {:>9.3} ms   best {:>9.3} ms",
            ms(median),
            ms(best)
        );
    };
    println!(
        "{states} states, {messages} messages, {} KiB of source, {runs} runs:",
        source.len() / 1024
    );
    report("parse (pest + syn)", |p| p.parse);
    report("check", |p| p.check);
    report("liveness", |p| p.liveness);
    report("total", |p| p.parse + p.check + p.liveness);
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    // `cargo test --benches` runs this with `--bench` absent: keep that quick.
    let quick = !std::env::args().any(|a| a == "--bench");
    if quick {
        bench(1_000, 1);
        return;
    }
    bench(1_000, 30);
    bench(10_000, 5);
}

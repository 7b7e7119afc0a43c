//! Benchmark: what `proto!` costs at compile time for the 200-state fixture: the front end
//! (parse, check, liveness) and code generation, timed apart, with the size of the output.
//! `harness = false`: median and best of 30 runs, since these machines are shared and noisy.
//!
//! Run: `cargo bench -p proto-dsl --bench expand`

use std::hint::black_box;
use std::time::{Duration, Instant};

fn main() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/generated_200.pipes"
    );
    let source = std::fs::read_to_string(path).expect("the fixture exists");
    let options = |source| proto_dsl::codegen::Options {
        runtime: quote::quote!(::pipes),
        source,
        span_at: &|_| proc_macro2::Span::call_site(),
    };
    let run = || {
        let t0 = Instant::now();
        let analysis = proto_dsl::analyze(black_box(&source)).expect("the fixture compiles");
        let t1 = Instant::now();
        let tokens = proto_dsl::codegen::generate(&analysis, &options(&source));
        let t2 = Instant::now();
        (t1 - t0, t2 - t1, tokens)
    };
    let (_, _, tokens) = run(); // warm-up, and the output's size
    let output = tokens.to_string();
    let mut front = Vec::new();
    let mut codegen = Vec::new();
    for _ in 0..30 {
        let (a, g, tokens) = run();
        black_box(tokens);
        front.push(a);
        codegen.push(g);
    }
    let stats = |mut samples: Vec<Duration>| {
        samples.sort();
        (ms(samples[samples.len() / 2]), ms(samples[0]))
    };
    let total: Vec<Duration> = front.iter().zip(&codegen).map(|(a, g)| *a + *g).collect();
    println!(
        "expand: generated_200.pipes ({} bytes in, {} tokens / {} bytes out), median and best of 30",
        source.len(),
        tokens_count(&tokens),
        output.len()
    );
    for (name, samples) in [("front end", front), ("codegen", codegen), ("total", total)] {
        let (median, best) = stats(samples);
        println!("  {name:<10} median {median:>8.3} ms   best {best:>8.3} ms");
    }
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn tokens_count(tokens: &proc_macro2::TokenStream) -> usize {
    tokens
        .clone()
        .into_iter()
        .map(|t| match t {
            proc_macro2::TokenTree::Group(g) => 2 + tokens_count(&g.stream()),
            _ => 1,
        })
        .sum()
}

//! Benchmark: what expanding a protocol costs, in time and memory.
//!
//! - The 200-state fixture through the macro's path (front end, then codegen to tokens),
//!   median and best of 30.
//! - Generated protocols of 1,000, 10,000 and 100,000 states (the generator of
//!   `tests/common/mod.rs`) through `Config::expand`, which is `pipes-proto expand`: front end,
//!   codegen, then formatting (syn + prettyplease), each timed, with the peak of heap memory a
//!   whole expansion holds (a counting global allocator).
//!
//! `harness = false`: median and best of several runs by the wall clock and, on Linux, by the
//! thread's CPU clock, since these machines are shared and noisy (other processes stretch the
//! first, not the second).
//!
//! Run: `cargo bench -p proto-dsl --bench expand` (all sizes), or name the sizes:
//! `cargo bench -p proto-dsl --bench expand -- 10000 100000`. Above 20,000 states only the
//! macro's path is measured (formatting would need ~25 GB) unless `--format` is given.
//! `-- --emit N` prints the N-state protocol instead, to time the binary itself:
//! `/usr/bin/time -v pipes-proto expand generated.pipes > /dev/null`.

#[path = "../tests/common/mod.rs"]
mod common;

use std::alloc::{GlobalAlloc, Layout, System};
use std::hint::black_box;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// The system allocator, counting the bytes live now and the most live since the last reset.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

impl Counting {
    fn grew(bytes: usize) {
        let live = LIVE.fetch_add(bytes, Ordering::Relaxed) + bytes;
        PEAK.fetch_max(live, Ordering::Relaxed);
    }

    fn shrank(bytes: usize) {
        LIVE.fetch_sub(bytes, Ordering::Relaxed);
    }

    /// Starts a measurement: returns the bytes live now, and makes that the peak.
    fn reset() -> usize {
        let live = LIVE.load(Ordering::Relaxed);
        PEAK.store(live, Ordering::Relaxed);
        live
    }

    /// The most bytes live since `reset` returned `base`, above `base`.
    fn peak_since(base: usize) -> usize {
        PEAK.load(Ordering::Relaxed).saturating_sub(base)
    }
}

// SAFETY: every call goes straight to `System` with the caller's arguments; the counters are
// only statistics and never affect what is returned.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract, which `System` shares.
        let ptr = unsafe { System.alloc(layout) };
        if !ptr.is_null() {
            Counting::grew(layout.size());
        }
        ptr
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        // SAFETY: as for `alloc`.
        let ptr = unsafe { System.alloc_zeroed(layout) };
        if !ptr.is_null() {
            Counting::grew(layout.size());
        }
        ptr
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from this allocator, that is from `System`, with `layout`.
        unsafe { System.dealloc(ptr, layout) };
        Counting::shrank(layout.size());
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        // SAFETY: `ptr` came from `System` with `layout`; the caller upholds the rest.
        let new = unsafe { System.realloc(ptr, layout, new_size) };
        if !new.is_null() {
            Counting::grew(new_size);
            Counting::shrank(layout.size());
        }
        new
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(at) = args.iter().position(|a| a == "--emit") {
        let states = args
            .get(at + 1)
            .and_then(|n| n.parse().ok())
            .expect("--emit takes a number of states");
        print!("{}", common::generated_protocol("generated", states));
        return;
    }
    // `cargo test --benches` runs this without `--bench`: keep that quick.
    if !args.iter().any(|a| a == "--bench") {
        fixture(1);
        generated(100, 1, true);
        return;
    }
    let always_format = args.iter().any(|a| a == "--format");
    let sizes: Vec<usize> = args.iter().filter_map(|a| a.parse().ok()).collect();
    if sizes.is_empty() {
        fixture(30);
    }
    for &states in if sizes.is_empty() {
        &[1_000, 10_000, 100_000][..]
    } else {
        &sizes[..]
    } {
        let runs = match states {
            ..=2_000 => 10,
            2_001..=20_000 => 3,
            _ => 1,
        };
        generated(states, runs, always_format || states <= FORMAT_LIMIT);
    }
}

/// The 200-state fixture as `proto!` expands it: to tokens, no formatting.
fn fixture(runs: usize) {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/generated_200.pipes"
    );
    let source = std::fs::read_to_string(path).expect("the fixture exists");
    let options = |source| proto_dsl::codegen::Options {
        runtime: quote::quote!(::pipes),
        source,
        span_at: &|_| proc_macro2::Span::call_site(),
        printed: &|_| None,
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
    for _ in 0..runs {
        let (a, g, tokens) = run();
        black_box(tokens);
        front.push(a);
        codegen.push(g);
    }
    let total: Vec<Duration> = front.iter().zip(&codegen).map(|(a, g)| *a + *g).collect();
    println!(
        "expand: generated_200.pipes ({} bytes in, {} tokens / {} bytes out), median and best of {runs}",
        source.len(),
        tokens_count(&tokens),
        output.len()
    );
    for (name, samples) in [("front end", front), ("codegen", codegen), ("total", total)] {
        let (median, best) = stats(samples);
        println!(
            "  {name:<10} median {:>8.3} ms   best {:>8.3} ms",
            ms(median),
            ms(best)
        );
    }
}

/// A point in time by the wall clock and by this thread's CPU clock (Linux's schedstat; none
/// elsewhere). On a shared machine other processes stretch the wall clock, not the CPU one.
#[derive(Clone, Copy)]
struct Mark {
    wall: Instant,
    cpu: Option<Duration>,
}

impl Mark {
    fn now() -> Mark {
        let cpu = std::fs::read_to_string("/proc/thread-self/schedstat")
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .map(Duration::from_nanos);
        Mark {
            wall: Instant::now(),
            cpu,
        }
    }

    /// The time from `earlier` to this mark.
    fn since(self, earlier: Mark) -> Spent {
        Spent {
            wall: self.wall - earlier.wall,
            cpu: self.cpu.zip(earlier.cpu).map(|(now, then)| now - then),
        }
    }
}

/// Time spent on a phase, by both clocks.
#[derive(Clone, Copy, Default)]
struct Spent {
    wall: Duration,
    cpu: Option<Duration>,
}

impl std::ops::Add for Spent {
    type Output = Spent;
    fn add(self, other: Spent) -> Spent {
        Spent {
            wall: self.wall + other.wall,
            cpu: self.cpu.zip(other.cpu).map(|(a, b)| a + b),
        }
    }
}

/// One expansion's phases and peak heap.
struct Sample {
    front: Spent,
    codegen: Spent,
    format: Spent,
    /// Peak heap through codegen: what `proto!` holds.
    peak_codegen: usize,
    /// Peak heap through formatting too: what `pipes-proto expand` holds.
    peak: usize,
    output: Option<String>,
}

/// `Config::expand` step by step, timing each step (`generated` checks that the output is the
/// same); `format: false` stops after codegen, as `proto!` does.
fn expand_once(source: &str, format: bool) -> Sample {
    let base = Counting::reset();
    let t0 = Mark::now();
    let analysis = proto_dsl::analyze(black_box(source)).expect("the generated protocol compiles");
    let t1 = Mark::now();
    let tokens = proto_dsl::codegen::generate_with_diagrams(
        &analysis,
        &proto_dsl::codegen::Options {
            runtime: quote::quote!(::pipes),
            source,
            span_at: &|_| proc_macro2::Span::call_site(),
            printed: &|_| None,
        },
        false,
    );
    let t2 = Mark::now();
    let peak_codegen = Counting::peak_since(base);
    if !format {
        // `proto!` hands its tokens to rustc; dropping a large stream here takes seconds
        // that no user waits for, so it stays out of the timings.
        let peak = Counting::peak_since(base);
        drop((tokens, analysis));
        return Sample {
            front: t1.since(t0),
            codegen: t2.since(t1),
            format: Spent::default(),
            peak_codegen,
            peak,
            output: None,
        };
    }
    let file: syn::File = syn::parse2(tokens).expect("codegen produces Rust that syn can parse");
    let output = prettyplease::unparse(&file);
    drop((file, analysis));
    let t3 = Mark::now();
    Sample {
        front: t1.since(t0),
        codegen: t2.since(t1),
        format: t3.since(t2),
        peak_codegen,
        peak: Counting::peak_since(base),
        output: Some(output),
    }
}

/// Above this many states, formatting is left out unless `--format` asks for it: syn's tree
/// and prettyplease's buffers of a 100,000-state expansion need ~25 GB (linear: 2.5 GB at
/// 10,000), more than the machines these numbers come from.
const FORMAT_LIMIT: usize = 20_000;

/// A generated protocol of `states` states through `Config::expand`'s steps, `runs` times.
fn generated(states: usize, runs: usize, format: bool) {
    let source = common::generated_protocol("generated", states);
    let messages = source.matches("->").count();
    let first = expand_once(&source, format);
    // Checked once per size where it is cheap: the steps above are what the CLI runs.
    if let Some(output) = first.output.as_ref().filter(|_| states <= 10_000) {
        let config = proto_dsl::Config::new()
            .diagrams(false)
            .expand("generated.pipes", &source)
            .expect("the generated protocol compiles");
        assert!(config == *output, "the bench drifted from Config::expand");
    }
    let out = match &first.output {
        Some(output) => format!("{} KiB out", output.len() / 1024),
        None => "not formatted (codegen only, as proto!)".to_string(),
    };
    // At the largest sizes the first run is the only one: it counts.
    let mut samples = if runs == 1 { vec![first] } else { Vec::new() };
    while samples.len() < runs {
        samples.push(expand_once(&source, format));
    }
    println!(
        "expand: {states} states, {messages} messages, {} KiB in, {out}, median and best of {runs}",
        source.len() / 1024,
    );
    let report = |name: &str, pick: fn(&Sample) -> Spent| {
        let spent: Vec<Spent> = samples.iter().map(pick).collect();
        let (median, best) = stats(spent.iter().map(|s| s.wall).collect());
        print!(
            "  {name:<28} wall median {:>9.1} ms  best {:>9.1} ms",
            ms(median),
            ms(best)
        );
        if let Some(cpu) = spent.iter().map(|s| s.cpu).collect::<Option<Vec<_>>>() {
            let (median, best) = stats(cpu);
            print!(
                "   cpu median {:>9.1} ms  best {:>9.1} ms",
                ms(median),
                ms(best)
            );
        }
        println!();
    };
    report("front end", |s| s.front);
    report("codegen", |s| s.codegen);
    if format {
        report("format (syn + prettyplease)", |s| s.format);
    }
    report("total", |s| s.front + s.codegen + s.format);
    let peak = |name: &str, pick: fn(&Sample) -> usize| {
        let mut peaks: Vec<usize> = samples.iter().map(pick).collect();
        peaks.sort_unstable();
        println!(
            "  {name:<28}      {:>9.1} MiB (median)",
            peaks[peaks.len() / 2] as f64 / (1024.0 * 1024.0)
        );
    };
    peak("peak heap through codegen", |s| s.peak_codegen);
    if format {
        peak("peak heap, whole expand", |s| s.peak);
    }
}

fn stats(mut samples: Vec<Duration>) -> (Duration, Duration) {
    samples.sort();
    (samples[samples.len() / 2], samples[0])
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

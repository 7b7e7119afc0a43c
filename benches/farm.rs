//! FastFlow's task-farm (seed 000, Rinaldi, Torquati and Danelutto, "Enforcing Reference
//! Capability in FastFlow with Rust"): an emitter deals a stream of elements round-robin to W
//! workers, each does a fixed amount of floating-point work per element, and a collector
//! gathers the results. Every element is a `Box` (`fastflow::Element`) whose ownership moves
//! emitter -> worker -> collector; nothing is copied.
//!
//! As in FastFlow, every link is single-producer single-consumer: each worker has an input and
//! an output link, and the collector reads the outputs round-robin, so the elements come back
//! in the order they were emitted, which it checks (each once), along with the sum of the
//! results against the same work done on one thread without a farm.
//!
//! The paper's granularities: 50,000 elements of ~5 µs ("small"), and of ~5 ms ("large"; 100
//! of them by default here, so a run stays short: 50,000 would take minutes). The work is
//! `examples/farm.rs`'s calibrated floating-point loop. Implementations: pipes streams, pipes
//! over the `proto!` protocol `elements` (a typed stream that ends with `Done`),
//! crossbeam-channel and kanal (unbounded, as FastFlow's queues), the same farm code over each
//! (`fastflow::Link`).
//!
//! These machines have 2 cores and the emitter and collector are threads too (W + 2 in all), so
//! expect a speed-up of at most about 2.
//!
//! Run: `cargo bench --bench farm [-- SMALL LARGE MAX_WORKERS [REPEATS]]` (defaults 50000 100
//! 4 3). Prints, for each granularity, one table of every implementation and worker count with
//! the median of `REPEATS` runs: wall and CPU time, elements per second, speed-up over the same
//! implementation with one worker, and the ratio to crossbeam-channel.

mod common;
mod fastflow;

#[allow(dead_code)]
#[path = "../examples/farm.rs"]
mod example;

use common::{cpu_time, median, numeric_args, result_line};
use fastflow::{Crossbeam, Element, Kanal, Link, PipesProtocol, PipesStream};

use std::collections::VecDeque;
use std::thread;
use std::time::{Duration, Instant};

/// One implementation: runs the farm and returns the collector's checksum.
struct Implementation {
    name: &'static str,
    run: fn(elements: u64, iterations: u32, workers: usize) -> f64,
}

/// A worker's job on one element: the calibrated work, plus the element's own data.
fn process(element: &mut Element, iterations: u32) {
    element.result = example::work(element.id, iterations) + element.data.iter().sum::<f64>();
}

/// The checksum the farm must produce: the same work on this thread, summed in stream order.
fn one_thread(elements: u64, iterations: u32) -> f64 {
    (0..elements)
        .map(|id| {
            let mut element = Element::new(id);
            process(&mut element, iterations);
            element.result
        })
        .sum()
}

/// The farm over links `L`: an emitter thread, `workers` worker threads, and this thread as the
/// collector. Returns the sum of the results in stream order.
fn farm<L: Link>(elements: u64, iterations: u32, workers: usize) -> f64 {
    let mut inputs = VecDeque::with_capacity(workers);
    let mut outputs = VecDeque::with_capacity(workers);
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            let (to_worker, mut input) = L::link();
            let (mut output, from_worker) = L::link();
            inputs.push_back(to_worker);
            outputs.push_back(from_worker);
            thread::spawn(move || {
                // The worker owns each element it receives until it sends it on.
                while let Some((mut element, next)) = L::recv(input) {
                    process(&mut element, iterations);
                    output = L::send(output, element);
                    input = next;
                }
                L::close(output);
            })
        })
        .collect();

    let emitter = thread::spawn(move || {
        // Round-robin: the front worker gets the element and goes to the back.
        for id in 0..elements {
            let to_worker = inputs.pop_front().expect("a farm has workers");
            inputs.push_back(L::send(to_worker, Element::new(id)));
        }
        for to_worker in inputs {
            L::close(to_worker);
        }
    });

    let mut checksum = 0.0;
    for id in 0..elements {
        let from_worker = outputs.pop_front().expect("a farm has workers");
        let (element, from_worker) = L::recv(from_worker).expect("every element comes back");
        assert_eq!(
            element.id,
            id,
            "{}: elements come back once, in order",
            L::NAME
        );
        checksum += element.result;
        outputs.push_back(from_worker);
    }
    for from_worker in outputs {
        assert!(
            L::recv(from_worker).is_none(),
            "{}: an extra element",
            L::NAME
        );
    }
    emitter.join().expect("the emitter");
    for handle in handles {
        handle.join().expect("a worker");
    }
    checksum
}

const BASELINE: &str = "crossbeam-channel";

const IMPLEMENTATIONS: &[Implementation] = &[
    Implementation {
        name: PipesStream::NAME,
        run: farm::<PipesStream>,
    },
    Implementation {
        name: PipesProtocol::NAME,
        run: farm::<PipesProtocol>,
    },
    Implementation {
        name: Crossbeam::NAME,
        run: farm::<Crossbeam>,
    },
    Implementation {
        name: Kanal::NAME,
        run: farm::<Kanal>,
    },
];

/// One run of `f`: its wall and CPU seconds, its result checked by `check`.
fn measure<R>(f: impl FnOnce() -> R, check: impl FnOnce(R)) -> (f64, f64) {
    let (cpu, start) = (cpu_time(), Instant::now());
    let result = f();
    let (wall, cpu) = (start.elapsed(), cpu_time() - cpu);
    check(result);
    (wall.as_secs_f64(), cpu.as_secs_f64())
}

fn main() {
    let numbers = numeric_args();
    let small = numbers.first().copied().unwrap_or(50_000).max(1);
    let large = numbers.get(1).copied().unwrap_or(100).max(1);
    let max_workers = numbers.get(2).copied().unwrap_or(4).max(1) as usize;
    let repeats = numbers.get(3).copied().unwrap_or(3).max(1) as usize;

    let grains = [
        (
            "small",
            5.0,
            small,
            example::calibrate(Duration::from_micros(5)),
        ),
        (
            "large",
            5000.0,
            large,
            example::calibrate(Duration::from_millis(5)),
        ),
    ];
    for (grain, task_us, elements, iterations) in grains {
        let expected = one_thread(elements, iterations);
        // Samples of one thread (index 0) and of each (workers, implementation) after it. The
        // repeats go round every configuration in turn, so a burst of load from another process
        // on this shared machine lands on one sample of many configurations, not on every
        // sample of one.
        let configs = 1 + max_workers * IMPLEMENTATIONS.len();
        let mut samples = vec![(Vec::new(), Vec::new()); configs];
        for _ in 0..repeats {
            let (wall, cpu) = measure(
                || one_thread(elements, iterations),
                |sum| assert_eq!(sum, expected),
            );
            samples[0].0.push(wall);
            samples[0].1.push(cpu);
            for workers in 1..=max_workers {
                for (i, implementation) in IMPLEMENTATIONS.iter().enumerate() {
                    let (wall, cpu) = measure(
                        || (implementation.run)(elements, iterations, workers),
                        |sum| assert_eq!(sum, expected, "{}: checksum", implementation.name),
                    );
                    let sample = &mut samples[1 + (workers - 1) * IMPLEMENTATIONS.len() + i];
                    sample.0.push(wall);
                    sample.1.push(cpu);
                }
            }
        }
        let mut samples = samples
            .into_iter()
            .map(|(walls, cpus)| (median(walls), median(cpus)));
        let (one_wall, one_cpu) = samples.next().expect("one thread's samples");
        // (workers, name, wall, cpu)
        let rows: Vec<_> = (1..=max_workers)
            .flat_map(|workers| IMPLEMENTATIONS.iter().map(move |i| (workers, i.name)))
            .zip(samples)
            .map(|((workers, name), (wall, cpu))| (workers, name, wall, cpu))
            .collect();

        println!(
            "\nfarm, {grain} grain: {elements} elements of ~{task_us} µs ({iterations} \
             iterations), 1..={max_workers} workers, median of {repeats}"
        );
        println!(
            "one thread, no farm: {one_wall:.4} s wall, {one_cpu:.4} s cpu, {:.0} elements/s",
            elements as f64 / one_wall
        );
        println!(
            "| {:<22} | {:>7} | {:>9} | {:>9} | {:>12} | {:>8} | {:>6} |",
            "implementation", "workers", "wall s", "cpu s", "elements/s", "speed-up", "speed"
        );
        println!(
            "|{:-<24}|{:->9}|{:->11}|{:->11}|{:->14}|{:->10}|{:->8}|",
            "", "", "", "", "", "", ""
        );
        let wall_of = |workers: usize, name: &str| {
            rows.iter()
                .find(|r| r.0 == workers && r.1 == name)
                .map_or(f64::NAN, |r| r.2)
        };
        let mut results = Vec::new();
        for &(workers, name, wall, cpu) in &rows {
            let speedup = wall_of(1, name) / wall;
            let speed = wall_of(workers, BASELINE) / wall;
            println!(
                "| {name:<22} | {workers:>7} | {wall:>9.4} | {cpu:>9.4} | {:>12.0} | {speedup:>7.2}x \
                 | {speed:>5.2}x |",
                elements as f64 / wall
            );
            results.push(result_line(&[
                ("bench", &"farm"),
                ("grain", &grain),
                ("task_us", &task_us),
                ("elements", &elements),
                ("workers", &workers),
                ("impl", &name),
                ("wall_s", &wall),
                ("cpu_s", &cpu),
                ("per_s", &(elements as f64 / wall)),
                ("speedup", &speedup),
                ("vs_one_thread", &(one_wall / wall)),
            ]));
        }
        results.push(result_line(&[
            ("bench", &"farm"),
            ("grain", &grain),
            ("task_us", &task_us),
            ("elements", &elements),
            ("workers", &0),
            ("impl", &"one thread, no farm"),
            ("wall_s", &one_wall),
            ("cpu_s", &one_cpu),
            ("per_s", &(elements as f64 / one_wall)),
            ("speedup", &1.0),
            ("vs_one_thread", &1.0),
        ]));
        for line in results {
            println!("{line}");
        }
    }
    println!(
        "\n'speed-up' is the same implementation's wall time with one worker divided by this \
         one's; 'speed' is {BASELINE}'s wall time at the same worker count divided by this one's \
         (above 1 is faster)."
    );
}

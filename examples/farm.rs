//! FastFlow's task-farm over pipes, after Rinaldi, Torquati and Danelutto, "Enforcing Reference
//! Capability in FastFlow with Rust" (seed 000): an emitter deals a stream of tasks round-robin
//! to N workers, and a collector gathers the results. The paper's point is reference passing:
//! a task is a heap object whose ownership moves with its message, so the emitter cannot touch
//! a task once it is sent, and a worker owns the one it is working on. Here a `Box<Task>` moves
//! through two streams per worker, and the compiler enforces what FastFlow leaves to discipline.
//!
//! Each worker has its own input and output stream (FastFlow's channels are single-producer
//! single-consumer too). Since tasks are dealt round-robin, the collector reads the workers'
//! output streams round-robin as well and gets the results back in the order they were sent.
//!
//! The paper's two granularities: 50,000 tasks of about 5 µs ("small") and tasks of about 5 ms
//! ("large"; 100 of them by default here, so a run takes seconds). The work is a calibrated
//! floating-point loop. Printed: the time of the same work on one thread without pipes, then
//! time and speed-up over one worker for 1..=MAX_WORKERS workers.
//! These machines have 2 cores, and emitter and collector are threads too, so expect at most
//! about 2x.
//!
//! Run: `cargo run --release --example farm [-- SMALL_TASKS [LARGE_TASKS [MAX_WORKERS]]]`
//! (defaults 50000, 100, 4).

use std::thread;
use std::time::{Duration, Instant};

use pipes::stream;

/// One task: its input, how much work it is, and, once a worker has done it, its result.
#[derive(Debug)]
pub struct Task {
    /// Position in the stream; the collector checks that tasks come back in order.
    pub id: u64,
    /// Iterations of the work loop.
    pub iterations: u32,
    /// Filled in by the worker that owns the task.
    pub result: f64,
}

/// The work: a chain of dependent floating-point operations, so it cannot be vectorised away
/// and its cost is proportional to `iterations`.
pub fn work(id: u64, iterations: u32) -> f64 {
    // `black_box` hides the start from the optimiser: 1.0 is the loop's fixed point, and with
    // a known start the compiler could fold the whole loop away.
    let mut x = std::hint::black_box(1.0 + (id % 1000) as f64 * 1e-3);
    for _ in 0..iterations {
        x = x * 0.999_999_9 + 1e-7;
    }
    x
}

/// How many iterations of [`work`] take about `target`, measured on this machine. The fastest
/// of several probes counts: on a shared machine a probe can only be slowed down, never sped
/// up, by other threads.
pub fn calibrate(target: Duration) -> u32 {
    let probe = 200_000;
    let mut sink = 0.0;
    let mut fastest = f64::INFINITY;
    for round in 0..10 {
        let start = Instant::now();
        sink += work(round, probe);
        fastest = fastest.min(start.elapsed().as_secs_f64());
    }
    // The results are kept so the loops are not optimised away.
    std::hint::black_box(sink);
    ((target.as_secs_f64() / (fastest / f64::from(probe))) as u32).max(1)
}

/// What a farm run gives back.
#[derive(Debug)]
pub struct FarmRun {
    /// Tasks the collector received.
    pub tasks: u64,
    /// The sum of their results, in stream order.
    pub checksum: f64,
    /// Whether every task came back in the order it was emitted.
    pub in_order: bool,
    /// Wall time from the first task emitted to the last one collected.
    pub elapsed: Duration,
}

/// Runs a farm: an emitter thread, `workers` worker threads, and the calling thread as the
/// collector.
pub fn farm(tasks: u64, iterations: u32, workers: usize) -> FarmRun {
    assert!(workers > 0, "a farm needs a worker");
    let mut inputs = Vec::with_capacity(workers);
    let mut outputs = Vec::with_capacity(workers);
    let mut handles = Vec::with_capacity(workers);
    for _ in 0..workers {
        let (tasks_in, to_worker) = stream::<Box<Task>>();
        let (from_worker, results_out) = stream::<Box<Task>>();
        handles.push(thread::spawn(move || {
            // The worker owns each task it receives, fills in the result, and passes the
            // task on; the loop ends when the emitter drops its chan.
            for mut task in tasks_in {
                task.result = work(task.id, task.iterations);
                results_out.send(task).expect("the collector is running");
            }
        }));
        inputs.push(to_worker);
        outputs.push(from_worker);
    }

    let start = Instant::now();
    let emitter = thread::spawn(move || {
        for id in 0..tasks {
            let task = Box::new(Task {
                id,
                iterations,
                result: 0.0,
            });
            // After this send, `task` is gone from the emitter: using it again would not compile.
            inputs[(id % workers as u64) as usize]
                .send(task)
                .expect("the worker is running");
        }
        // Dropping `inputs` ends every worker's input stream.
    });

    let mut run = FarmRun {
        tasks: 0,
        checksum: 0.0,
        in_order: true,
        elapsed: Duration::ZERO,
    };
    for id in 0..tasks {
        let task = outputs[(id % workers as u64) as usize]
            .recv()
            .expect("every task comes back");
        run.in_order &= task.id == id;
        run.checksum += task.result;
        run.tasks += 1;
    }
    run.elapsed = start.elapsed();
    emitter.join().expect("the emitter");
    for handle in handles {
        handle.join().expect("a worker");
    }
    run
}

/// The checksum a single thread computes without any pipes.
pub fn sequential_checksum(tasks: u64, iterations: u32) -> f64 {
    (0..tasks).map(|id| work(id, iterations)).sum()
}

/// Runs one granularity for 1..=`max_workers` workers, printing each time and speed-up, and
/// checks every run against the sequential checksum. Returns the speed-ups.
pub fn report(label: &str, tasks: u64, iterations: u32, max_workers: usize) -> Vec<f64> {
    // The same work on this thread, without pipes: the checksum every run must match, and a
    // time to compare the one-worker farm with.
    let start = Instant::now();
    let expected = sequential_checksum(tasks, iterations);
    println!(
        "farm {label}: {tasks} tasks, no farm (one thread): {:8.3} s",
        start.elapsed().as_secs_f64()
    );
    let mut one_worker = None;
    let mut speedups = Vec::new();
    for workers in 1..=max_workers {
        let run = farm(tasks, iterations, workers);
        assert!(run.in_order && run.tasks == tasks && run.checksum == expected);
        let base = *one_worker.get_or_insert(run.elapsed);
        let speedup = base.as_secs_f64() / run.elapsed.as_secs_f64();
        speedups.push(speedup);
        println!(
            "farm {label}: {tasks} tasks, {workers} worker(s): {:8.3} s, speed-up {speedup:.2}",
            run.elapsed.as_secs_f64()
        );
    }
    speedups
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("arguments are numbers"))
        .collect();
    let small_tasks = args.first().copied().unwrap_or(50_000);
    let large_tasks = args.get(1).copied().unwrap_or(100);
    let max_workers = args.get(2).copied().unwrap_or(4) as usize;

    let small = calibrate(Duration::from_micros(5));
    let large = calibrate(Duration::from_millis(5));
    println!("calibrated: {small} iterations ~ 5 µs, {large} iterations ~ 5 ms");
    report("small (5 µs)", small_tasks, small, max_workers);
    report("large (5 ms)", large_tasks, large, max_workers);
}

//! The multi-producer queue behind shared chans (`pipes_runtime::__queue`, hidden: the queue
//! is not public API) against the unbounded channels of crossbeam-channel and kanal: `W`
//! producer threads (1, 2, 4, 8, 16) push `MESSAGES / W` each into one queue while one
//! consumer spins on a non-blocking pop (`try_recv` for the peers), so the numbers are the data
//! structures', not their blocking. Then memory: heap bytes per message of a backlog of 10^6
//! `u64`, counted by this program's global allocator.
//!
//! Run: `cargo bench --bench queue [-- MESSAGES [REPEATS [W]]]` (defaults 1000000, 7, and every
//! `W`). Prints a table per `W` with the median of `REPEATS` runs (taken in turn, so load from
//! elsewhere falls on every implementation alike), CPU time beside wall time, and the speed
//! ratio to crossbeam-channel and to kanal.

mod common;
use common::counting::{COUNTING, Counting, LIVE_BYTES};
use common::{cpu_time, median, numeric_args, result_line};

use std::hint::spin_loop;
use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread;
use std::time::Instant;

use pipes_runtime::__queue::{Pop, Queue};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// What a consumer does when it finds nothing: spin, and now and then let a producer run
/// (17 threads share 2 cores here).
struct Idle(u32);

impl Idle {
    fn wait(&mut self) {
        self.0 += 1;
        if self.0.is_multiple_of(64) {
            thread::yield_now();
        } else {
            spin_loop();
        }
    }
}

/// One implementation: `producers` threads send `each` ones; returns the consumer's sum.
struct Implementation {
    name: &'static str,
    run: fn(producers: u64, each: u64) -> u64,
}

/// What one non-blocking receive found.
enum Got {
    Message(u64),
    Empty,
    Closed,
}

/// Runs `producers` threads, each with its own clone of `sender` sending `each` ones (and
/// dropping it at the end), and one consumer spinning on `try_recv` until `Closed`.
fn run<S: Clone + Send + 'static>(
    producers: u64,
    each: u64,
    sender: S,
    send: fn(&S),
    mut try_recv: impl FnMut() -> Got,
) -> u64 {
    let threads: Vec<_> = (0..producers)
        .map(|_| {
            let sender = sender.clone();
            thread::spawn(move || {
                for _ in 0..each {
                    send(&sender);
                }
            })
        })
        .collect();
    drop(sender);
    let (mut total, mut idle) = (0, Idle(0));
    loop {
        match try_recv() {
            Got::Message(n) => total += n,
            Got::Empty => idle.wait(),
            Got::Closed => break,
        }
    }
    for thread in threads {
        thread.join().unwrap();
    }
    total
}

/// A producer's registration with the queue: a clone registers, a drop unregisters.
struct Producer(Arc<Queue<u64>>);

impl Clone for Producer {
    fn clone(&self) -> Self {
        self.0.add_sender();
        Producer(self.0.clone())
    }
}

impl Drop for Producer {
    fn drop(&mut self) {
        // The consumer spins and never arms: no signal to send.
        let _ = self.0.remove_sender();
    }
}

fn pipes_queue(producers: u64, each: u64) -> u64 {
    let queue = Arc::new(Queue::<u64>::new());
    let producer = Producer(queue.clone());
    let send = |p: &Producer| {
        let _ = p.0.push(1).unwrap();
    };
    // SAFETY: this thread is the queue's only consumer and never closes it.
    let try_recv = || match unsafe { queue.pop() } {
        Pop::Message(n) => Got::Message(n),
        Pop::Empty => Got::Empty,
        Pop::Closed => Got::Closed,
    };
    run(producers, each, producer, send, try_recv)
}

fn crossbeam(producers: u64, each: u64) -> u64 {
    let (sender, receiver) = crossbeam_channel::unbounded::<u64>();
    let try_recv = || match receiver.try_recv() {
        Ok(n) => Got::Message(n),
        Err(crossbeam_channel::TryRecvError::Empty) => Got::Empty,
        Err(crossbeam_channel::TryRecvError::Disconnected) => Got::Closed,
    };
    run(producers, each, sender, |s| s.send(1).unwrap(), try_recv)
}

fn kanal(producers: u64, each: u64) -> u64 {
    let (sender, receiver) = kanal::unbounded::<u64>();
    // kanal's `try_recv` says `Ok(None)` for empty, `Err` once closed and drained.
    let try_recv = || match receiver.try_recv() {
        Ok(Some(n)) => Got::Message(n),
        Ok(None) => Got::Empty,
        Err(_) => Got::Closed,
    };
    run(producers, each, sender, |s| s.send(1).unwrap(), try_recv)
}

const CROSSBEAM: &str = "crossbeam-channel unbounded";
const KANAL: &str = "kanal unbounded";

const IMPLEMENTATIONS: &[Implementation] = &[
    Implementation {
        name: "pipes queue",
        run: pipes_queue,
    },
    Implementation {
        name: CROSSBEAM,
        run: crossbeam,
    },
    Implementation {
        name: KANAL,
        run: kanal,
    },
];

/// Heap bytes per message of a backlog of `n` `u64`: fills, measures, drains.
fn bytes_per_message(name: &str, n: u64) -> f64 {
    COUNTING.store(true, Ordering::SeqCst);
    let before = LIVE_BYTES.load(Ordering::SeqCst);
    let live = match name {
        "pipes queue" => {
            let queue = Queue::<u64>::new();
            for i in 0..n {
                queue.push(i).unwrap();
            }
            LIVE_BYTES.load(Ordering::SeqCst) - before
        }
        CROSSBEAM => {
            let (sender, _receiver) = crossbeam_channel::unbounded::<u64>();
            for i in 0..n {
                sender.send(i).unwrap();
            }
            LIVE_BYTES.load(Ordering::SeqCst) - before
        }
        _ => {
            let (sender, _receiver) = kanal::unbounded::<u64>();
            for i in 0..n {
                sender.send(i).unwrap();
            }
            LIVE_BYTES.load(Ordering::SeqCst) - before
        }
    };
    COUNTING.store(false, Ordering::SeqCst);
    live as f64 / n as f64
}

fn main() {
    let numbers = numeric_args();
    let messages = numbers.first().copied().unwrap_or(1_000_000).max(16);
    let repeats = numbers.get(1).copied().unwrap_or(7).max(1) as usize;

    let counts: Vec<u64> = match numbers.get(2) {
        Some(&w) => vec![w.max(1)],
        None => vec![1, 2, 4, 8, 16],
    };
    for producers in counts {
        let each = messages / producers;
        let size = each * producers;
        // Repeats go round the implementations, so a burst of load on this shared machine
        // falls on all of them rather than on one implementation's five runs.
        let mut times = vec![(Vec::new(), Vec::new()); IMPLEMENTATIONS.len()];
        for _ in 0..repeats {
            for (implementation, (walls, cpus)) in IMPLEMENTATIONS.iter().zip(&mut times) {
                let (cpu, start) = (cpu_time(), Instant::now());
                let total = (implementation.run)(producers, each);
                let (wall, cpu) = (start.elapsed(), cpu_time() - cpu);
                assert_eq!(total, size, "{}", implementation.name);
                walls.push(wall.as_secs_f64());
                cpus.push(cpu.as_secs_f64());
            }
        }
        let rows: Vec<_> = IMPLEMENTATIONS
            .iter()
            .zip(times)
            .map(|(implementation, (walls, cpus))| {
                (implementation.name, median(walls), median(cpus))
            })
            .collect();
        let wall_of = |name| rows.iter().find(|r| r.0 == name).map_or(1.0, |r| r.1);
        let (crossbeam_wall, kanal_wall) = (wall_of(CROSSBEAM), wall_of(KANAL));
        println!(
            "\nqueue: {producers} producers x {each} messages, one spinning consumer, median of \
             {repeats}"
        );
        println!(
            "| {:<28} | {:>9} | {:>9} | {:>12} | {:>7} | {:>7} |",
            "implementation", "wall s", "cpu s", "msg/s", "vs cb", "vs kanal"
        );
        println!(
            "|{:-<30}|{:->11}|{:->11}|{:->14}|{:->9}|{:->10}|",
            "", "", "", "", "", ""
        );
        for &(name, wall, cpu) in &rows {
            println!(
                "| {name:<28} | {wall:>9.4} | {cpu:>9.4} | {:>12.0} | {:>6.2}x | {:>7.2}x |",
                size as f64 / wall,
                crossbeam_wall / wall,
                kanal_wall / wall
            );
        }
        for &(name, wall, cpu) in &rows {
            let line = result_line(&[
                ("bench", &"queue"),
                ("size", &size),
                ("workers", &producers),
                ("impl", &name),
                ("wall_s", &wall),
                ("cpu_s", &cpu),
                ("per_s", &(size as f64 / wall)),
            ]);
            println!("{line}");
        }
    }
    println!("\n'vs cb' and 'vs kanal' are that peer's wall time divided by this one's.");

    let backlog = 1_000_000;
    println!("\nheap bytes per message, a backlog of {backlog} u64 (allocated, not yet freed)");
    for implementation in IMPLEMENTATIONS {
        let bytes = bytes_per_message(implementation.name, backlog);
        println!("| {:<28} | {bytes:>6.2} |", implementation.name);
        let line = result_line(&[
            ("bench", &"queue_memory"),
            ("size", &backlog),
            ("impl", &implementation.name),
            ("bytes_per_message", &bytes),
        ]);
        println!("{line}");
    }
}

//! msgsend (Paul Keeble's benchmark, as Rust's 2012 msgsend-pipes and msgsend-pipes-shared):
//! `workers` threads each send `size / workers` requests to one server thread, which sums them
//! and, once every worker is done (every sender gone), replies with the total, which is checked.
//!
//! pipes runs it twice: over a `PortSet` (a stream per worker, as msgsend-pipes) and over a
//! `SharedChan` (one stream, its chan shared, as msgsend-pipes-shared). The peers: one shared
//! unbounded channel of crossbeam-channel, std::sync::mpsc, flume and kanal, and
//! crossbeam-channel's `Select` over one channel per worker (the port set's analog).
//!
//! Run: `cargo bench --bench msgsend [-- SIZE WORKERS [REPEATS]]` (defaults 10000 4 3; the 2012
//! parameters are 1000000 8 and 1000000 10000). Prints the 2012 output for each implementation,
//! then a table with the median of `REPEATS` runs, CPU time beside wall time, and the ratio to
//! crossbeam-channel.

mod common;
use common::{cpu_time, median, numeric_args, result_line};

use std::thread;
use std::time::Instant;

use pipes::{PortSet, SharedChan, stream};

/// What each request adds (2012 sent `bytes(100)`).
const REQUEST: u64 = 100;

/// One implementation: runs the benchmark and returns the server's total.
struct Implementation {
    name: &'static str,
    run: fn(size: u64, workers: u64) -> u64,
}

/// Spawns the workers with small stacks (10,000 of them must fit), each sending its share.
fn spawn_workers<S: Send + 'static>(
    senders: Vec<S>,
    size: u64,
    send: fn(&S, u64),
) -> Vec<thread::JoinHandle<()>> {
    let workers = senders.len() as u64;
    senders
        .into_iter()
        .map(|sender| {
            thread::Builder::new()
                .stack_size(64 * 1024)
                .spawn(move || {
                    for _ in 0..size / workers {
                        send(&sender, REQUEST);
                    }
                })
                .expect("spawn a worker")
        })
        .collect()
}

fn join(workers: Vec<thread::JoinHandle<()>>) {
    for worker in workers {
        worker.join().unwrap();
    }
}

fn pipes_port_set(size: u64, workers: u64) -> u64 {
    let set = PortSet::new();
    let chans: Vec<_> = (0..workers).map(|_| set.chan()).collect();
    let workers = spawn_workers(chans, size, |chan, n| chan.send(n).unwrap());
    let total = set.iter().sum();
    join(workers);
    total
}

fn pipes_shared_chan(size: u64, workers: u64) -> u64 {
    let (port, chan) = stream();
    let chan = SharedChan::new(chan);
    let chans: Vec<_> = (0..workers).map(|_| chan.clone()).collect();
    drop(chan);
    let workers = spawn_workers(chans, size, |chan, n| chan.send(n).unwrap());
    let total = port.iter().sum();
    join(workers);
    total
}

/// The floor: the same threads running the same loop with no channel at all (each adds its
/// share through `black_box`; the server adds up what the joined workers return). What is left
/// of any other row's time is the channel's.
fn floor(size: u64, workers: u64) -> u64 {
    let handles: Vec<_> = (0..workers)
        .map(|_| {
            thread::Builder::new()
                .stack_size(64 * 1024)
                .spawn(move || {
                    (0..size / workers).fold(0, |sum, _| sum + std::hint::black_box(REQUEST))
                })
                .expect("spawn a worker")
        })
        .collect();
    handles
        .into_iter()
        .map(|worker| worker.join().unwrap())
        .sum()
}

/// One channel shared by every worker, for crates whose senders clone.
macro_rules! shared_peer {
    ($name:ident, $make:expr) => {
        fn $name(size: u64, workers: u64) -> u64 {
            let (sender, receiver) = $make;
            let senders: Vec<_> = (0..workers).map(|_| sender.clone()).collect();
            drop(sender);
            let workers = spawn_workers(senders, size, |s, n| s.send(n).unwrap());
            let mut total = 0;
            while let Ok(n) = receiver.recv() {
                total += n;
            }
            join(workers);
            total
        }
    };
}

shared_peer!(crossbeam_shared, crossbeam_channel::unbounded::<u64>());
shared_peer!(std_shared, std::sync::mpsc::channel::<u64>());
shared_peer!(flume_shared, flume::unbounded::<u64>());
shared_peer!(kanal_shared, kanal::unbounded::<u64>());

fn crossbeam_select(size: u64, workers: u64) -> u64 {
    let (senders, mut receivers): (Vec<_>, Vec<_>) = (0..workers)
        .map(|_| crossbeam_channel::unbounded::<u64>())
        .unzip();
    let workers = spawn_workers(senders, size, |s, n| s.send(n).unwrap());
    let mut total = 0;
    while !receivers.is_empty() {
        let mut select = crossbeam_channel::Select::new();
        for receiver in &receivers {
            select.recv(receiver);
        }
        let operation = select.select();
        let index = operation.index();
        match operation.recv(&receivers[index]) {
            Ok(n) => total += n,
            Err(_) => {
                receivers.swap_remove(index);
            }
        }
    }
    join(workers);
    total
}

const BASELINE: &str = "crossbeam-channel unbounded";

const IMPLEMENTATIONS: &[Implementation] = &[
    Implementation {
        name: "pipes port_set",
        run: pipes_port_set,
    },
    Implementation {
        name: "pipes shared_chan",
        run: pipes_shared_chan,
    },
    Implementation {
        name: BASELINE,
        run: crossbeam_shared,
    },
    Implementation {
        name: "crossbeam-channel Select",
        run: crossbeam_select,
    },
    Implementation {
        name: "std::sync::mpsc",
        run: std_shared,
    },
    Implementation {
        name: "flume",
        run: flume_shared,
    },
    Implementation {
        name: "kanal",
        run: kanal_shared,
    },
    Implementation {
        name: "floor (no channel)",
        run: floor,
    },
];

fn main() {
    let numbers = numeric_args();
    let workers = numbers.get(1).copied().unwrap_or(4).max(1);
    // Every worker sends the same share, so round the size to a multiple of the workers.
    let size = (numbers.first().copied().unwrap_or(10_000) / workers).max(1) * workers;
    let repeats = numbers.get(2).copied().unwrap_or(3).max(1) as usize;

    let mut rows = Vec::new();
    for implementation in IMPLEMENTATIONS {
        let mut walls = Vec::new();
        let mut cpus = Vec::new();
        for _ in 0..repeats {
            let (cpu, start) = (cpu_time(), Instant::now());
            let total = (implementation.run)(size, workers);
            let (wall, cpu) = (start.elapsed(), cpu_time() - cpu);
            assert_eq!(total, size * REQUEST, "{}", implementation.name);
            walls.push(wall.as_secs_f64());
            cpus.push(cpu.as_secs_f64());
        }
        let (wall, cpu) = (median(walls), median(cpus));
        println!("{}:", implementation.name);
        println!("Count is {}", size * REQUEST);
        println!("Test took {wall:.6} seconds");
        println!("Throughput={:.0} per sec", size as f64 / wall);
        rows.push((implementation.name, wall, cpu));
    }

    let baseline = rows.iter().find(|r| r.0 == BASELINE).map_or(1.0, |r| r.1);
    println!("\nmsgsend: {size} messages from {workers} workers, median of {repeats}");
    println!(
        "| {:<28} | {:>10} | {:>9} | {:>14} | {:>6} |",
        "implementation", "wall s", "cpu s", "msg/s", "speed"
    );
    println!(
        "|{:-<30}|{:->12}|{:->11}|{:->16}|{:->8}|",
        "", "", "", "", ""
    );
    for &(name, wall, cpu) in &rows {
        println!(
            "| {name:<28} | {wall:>10.4} | {cpu:>9.4} | {:>14.0} | {:>5.2}x |",
            size as f64 / wall,
            baseline / wall
        );
    }
    println!("\n'speed' is {BASELINE}'s wall time divided by this one's (above 1 is faster).");
    for (name, wall, cpu) in rows {
        let line = result_line(&[
            ("bench", &"msgsend"),
            ("size", &size),
            ("workers", &workers),
            ("impl", &name),
            ("wall_s", &wall),
            ("cpu_s", &cpu),
            ("per_s", &(size as f64 / wall)),
        ]);
        println!("{line}");
    }
}

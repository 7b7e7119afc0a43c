//! Memory: what a live packet costs. Each case holds `LIVE` oneshots (or streams) alive at once
//! and reports the heap bytes still allocated per live one (a counting global allocator: bytes
//! asked of the allocator, not its overhead) and the growth of resident memory per live one
//! (`/proc/self/statm`: what the machine pays, malloc's headers and fragmentation included).
//!
//! The cases that matter for pipes are the *sparse* ones: between two oneshots kept alive, the
//! same thread makes and consumes `CHURN` short-lived packets of the same size (other requests
//! answered at once). A packet allocator that carves packets from shared chunks keeps a whole
//! chunk alive for one live packet there; *dense* (the kept oneshots made back to back) is its
//! best case. *forgotten* is a port that was `mem::forget`-ed amid the same churn: what one
//! leaked endpoint costs.
//!
//! Each case runs in a fresh child process (this program re-runs itself with `--case NAME`), so
//! one case's freed memory kept by malloc does not hide the next one's growth. The peers hold
//! the same number of tokio oneshots and crossbeam-channel `bounded(1)` channels.
//!
//! Then, for the speed side of the same allocator, a few loops on one thread where every
//! iteration allocates and frees (a oneshot made, sent on and received; a stream's burst of
//! 1,000), beside tokio's oneshot and crossbeam-channel's unbounded channel.
//!
//! Last, a *drop chase*: four pairs of threads at once, 200 rounds each, where a receiver takes
//! one message and drops its stream's port while the sender sends as fast as it can until a
//! send fails. The drop must reach the packet being filled before the sender learns the port is
//! gone; how far behind it falls shows whether the allocator makes sending cheaper than dropping.
//!
//! Run: `cargo bench --bench memory [-- LIVE [CHURN]]` (defaults 50000 and 31); `-- --speeds`
//! runs only the loops, `-- --chase` only the chase.

mod common;
use common::counting::{COUNTING, Counting, LIVE_BYTES};
use common::{numeric_args, result_line};

use std::hint::black_box;
use std::process::Command;
use std::sync::atomic::Ordering;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Resident memory of this process in bytes (`/proc/self/statm`, second field, in pages).
fn resident() -> isize {
    let statm = std::fs::read_to_string("/proc/self/statm").expect("Linux /proc");
    let pages: isize = statm.split_whitespace().nth(1).unwrap().parse().unwrap();
    pages * 4096
}

/// One case: makes `live` things and returns them, boxed, to be held while memory is read.
struct Case {
    name: &'static str,
    hold: fn(live: usize, churn: usize) -> Box<dyn std::any::Any>,
}

/// Consumes `churn` oneshots of the kept ones' size: made, sent on and received at once.
fn churn_oneshots(churn: usize) {
    for i in 0..churn {
        let (port, chan) = pipes::oneshot::<u64>();
        chan.send(i as u64).unwrap();
        black_box(port.recv().unwrap());
    }
}

const CASES: &[Case] = &[
    Case {
        name: "pipes oneshot, dense (kept ones made back to back)",
        hold: |live, _| {
            let kept: Vec<_> = (0..live).map(|_| pipes::oneshot::<u64>()).collect();
            Box::new(kept)
        },
    },
    Case {
        name: "pipes oneshot, sparse (CHURN others made between kept ones)",
        hold: |live, churn| {
            let kept: Vec<_> = (0..live)
                .map(|_| {
                    churn_oneshots(churn);
                    pipes::oneshot::<u64>()
                })
                .collect();
            Box::new(kept)
        },
    },
    Case {
        name: "pipes oneshot, sparse, message sent and not received",
        hold: |live, churn| {
            let kept: Vec<_> = (0..live)
                .map(|i| {
                    churn_oneshots(churn);
                    let (port, chan) = pipes::oneshot::<u64>();
                    chan.send(i as u64).unwrap();
                    port
                })
                .collect();
            Box::new(kept)
        },
    },
    Case {
        name: "pipes stream, sparse (CHURN messages on another stream between kept ones), idle",
        hold: |live, churn| {
            let (port, chan) = pipes::stream::<u64>();
            let kept: Vec<_> = (0..live)
                .map(|_| {
                    for i in 0..churn {
                        chan.send(i as u64).unwrap();
                        black_box(port.recv().unwrap());
                    }
                    pipes::stream::<u64>()
                })
                .collect();
            Box::new(kept)
        },
    },
    Case {
        name: "pipes oneshot, sparse, port forgotten (leaked)",
        hold: |live, churn| {
            let chans: Vec<_> = (0..live)
                .map(|_| {
                    churn_oneshots(churn);
                    let (port, chan) = pipes::oneshot::<u64>();
                    std::mem::forget(port);
                    chan
                })
                .collect();
            // The chans go; what stays is what the forgotten ports leak.
            drop(chans);
            Box::new(())
        },
    },
    Case {
        name: "tokio::sync::oneshot, sparse",
        hold: |live, churn| {
            let kept: Vec<_> = (0..live)
                .map(|_| {
                    for i in 0..churn {
                        let (tx, rx) = tokio::sync::oneshot::channel::<u64>();
                        tx.send(i as u64).unwrap();
                        black_box(rx.blocking_recv().unwrap());
                    }
                    tokio::sync::oneshot::channel::<u64>()
                })
                .collect();
            Box::new(kept)
        },
    },
    Case {
        name: "crossbeam-channel bounded(1), sparse",
        hold: |live, churn| {
            let kept: Vec<_> = (0..live)
                .map(|_| {
                    for i in 0..churn {
                        let (tx, rx) = crossbeam_channel::bounded::<u64>(1);
                        tx.send(i as u64).unwrap();
                        black_box(rx.recv().unwrap());
                    }
                    crossbeam_channel::bounded::<u64>(1)
                })
                .collect();
            Box::new(kept)
        },
    },
];

/// One allocation-bound loop on one thread: each iteration makes a packet (or channel) and
/// frees it, so the allocator's cost shows without a second thread's scheduling noise.
struct Speed {
    name: &'static str,
    run: fn(n: u64) -> u64,
}

const SPEEDS: &[Speed] = &[
    Speed {
        name: "pipes oneshot: make, send, receive",
        run: |n| {
            (0..n)
                .map(|i| {
                    let (port, chan) = pipes::oneshot::<u64>();
                    chan.send(i).unwrap();
                    port.recv().unwrap()
                })
                .sum()
        },
    },
    Speed {
        name: "pipes stream: 1000 sent, then received",
        run: |n| {
            let (port, chan) = pipes::stream::<u64>();
            let mut sum = 0;
            for _ in 0..n / 1000 {
                for i in 0..1000 {
                    chan.send(i).unwrap();
                }
                sum += port.try_iter().sum::<u64>();
            }
            sum
        },
    },
    Speed {
        name: "tokio::sync::oneshot: make, send, receive",
        run: |n| {
            (0..n)
                .map(|i| {
                    let (tx, rx) = tokio::sync::oneshot::channel::<u64>();
                    tx.send(i).unwrap();
                    rx.blocking_recv().unwrap()
                })
                .sum()
        },
    },
    Speed {
        name: "crossbeam-channel unbounded: 1000 sent, then received",
        run: |n| {
            let (tx, rx) = crossbeam_channel::unbounded::<u64>();
            let mut sum = 0;
            for _ in 0..n / 1000 {
                for i in 0..1000 {
                    tx.send(i).unwrap();
                }
                sum += rx.try_iter().sum::<u64>();
            }
            sum
        },
    },
];

/// Runs every speed loop `repeats` times, interleaved, and prints the median ns per iteration.
fn speeds(n: u64, repeats: usize) {
    let mut samples = vec![Vec::new(); SPEEDS.len()];
    for _ in 0..repeats {
        for (speed, samples) in SPEEDS.iter().zip(&mut samples) {
            let start = std::time::Instant::now();
            black_box((speed.run)(black_box(n)));
            samples.push(start.elapsed().as_nanos() as f64 / n as f64);
        }
    }
    println!();
    println!("one thread, {n} iterations, median of {repeats}: ns per iteration");
    println!("| loop | ns |");
    println!("|---|---:|");
    for (speed, samples) in SPEEDS.iter().zip(samples) {
        let ns = common::median(samples);
        println!("| {} | {ns:.1} |", speed.name);
        eprintln!(
            "{}",
            result_line(&[
                ("bench", &"memory-speed"),
                ("impl", &speed.name),
                ("n", &n),
                ("ns", &format!("{ns:.2}")),
            ])
        );
    }
}

/// Messages a chase's sender gives up after: past this the drop is not catching up.
const CHASE_CAP: u64 = 50_000_000;

/// One round of a drop chase: a thread receives one message and drops its port while this
/// thread sends as fast as it can until a send fails. Returns how many sends succeeded, or
/// `None` if the drop had not caught up after [`CHASE_CAP`].
fn chase_once() -> Option<u64> {
    let (port, chan) = pipes::stream::<i32>();
    let receiver = std::thread::spawn(move || {
        port.recv().unwrap();
    });
    let mut sent = 0;
    while chan.send(1).is_ok() {
        sent += 1;
        if sent == CHASE_CAP {
            // Let the drop finish by ending the chase from this side.
            drop(chan);
            receiver.join().unwrap();
            return None;
        }
    }
    receiver.join().unwrap();
    Some(sent)
}

/// The drop chase: `pairs` sender/receiver pairs at once (more threads than cores, so a
/// dropping receiver is often preempted), `rounds` each. A dropped port must reach the packet
/// its chan is filling before the chan learns the port is gone, so how far behind it falls
/// depends on what a send and a drop cost per message, the packet allocator's part included.
fn chase(pairs: usize, rounds: usize) {
    let start = std::time::Instant::now();
    let threads: Vec<_> = (0..pairs)
        .map(|_| std::thread::spawn(move || (0..rounds).map(|_| chase_once()).collect::<Vec<_>>()))
        .collect();
    let results: Vec<Option<u64>> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let caught: Vec<u64> = results.iter().flatten().copied().collect();
    let lost = results.len() - caught.len();
    let mean = caught.iter().sum::<u64>() / caught.len().max(1) as u64;
    let worst = caught.iter().copied().max().unwrap_or(0);
    println!();
    println!(
        "drop chase: {pairs} pairs x {rounds} rounds in {:.2?}: messages sent before the drop \
         caught up: mean {mean}, worst {worst}; not caught up after {CHASE_CAP}: {lost}",
        start.elapsed()
    );
    eprintln!(
        "{}",
        result_line(&[
            ("bench", &"memory-chase"),
            ("pairs", &pairs),
            ("rounds", &rounds),
            ("mean", &mean),
            ("worst", &worst),
            ("lost", &lost),
        ])
    );
}

/// The child: runs one case and prints its RESULT line.
fn run_case(case: &Case, live: usize, churn: usize) {
    // Only the difference between the two reads below is reported.
    COUNTING.store(true, Ordering::Relaxed);
    // Warm up the allocator and the runtime's per-thread state, then measure from here.
    drop((case.hold)(100, churn));
    let (bytes_before, rss_before) = (LIVE_BYTES.load(Ordering::Relaxed), resident());
    let held = (case.hold)(live, churn);
    let (bytes_after, rss_after) = (LIVE_BYTES.load(Ordering::Relaxed), resident());
    drop(black_box(held));
    let per = |delta: isize| delta as f64 / live as f64;
    println!(
        "{}",
        result_line(&[
            ("bench", &"memory"),
            ("impl", &case.name),
            ("live", &live),
            ("churn", &churn),
            (
                "heap_bytes_per_live",
                &format!("{:.1}", per(bytes_after - bytes_before))
            ),
            (
                "rss_bytes_per_live",
                &format!("{:.1}", per(rss_after - rss_before))
            ),
        ])
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let numbers = numeric_args();
    let live = numbers.first().copied().unwrap_or(50_000) as usize;
    let churn = numbers.get(1).copied().unwrap_or(31) as usize;
    if let Some(at) = args.iter().position(|a| a == "--case") {
        let name = &args[at + 1];
        let case = CASES.iter().find(|c| c.name == name).expect("a known case");
        run_case(case, live, churn);
        return;
    }
    if args.iter().any(|a| a == "--speeds") {
        speeds(1_000_000, 7);
        return;
    }
    if args.iter().any(|a| a == "--chase") {
        chase(4, 200);
        return;
    }

    println!(
        "memory: {live} live at once, {churn} short-lived oneshots made between two kept ones \
         (sparse); bytes per live one: heap still allocated, and resident growth"
    );
    println!("| case | heap B/live | RSS B/live |");
    println!("|---|---:|---:|");
    let me = std::env::current_exe().expect("this program");
    for case in CASES {
        let output = Command::new(&me)
            .args(["--case", case.name, &live.to_string(), &churn.to_string()])
            .output()
            .expect("run a case");
        let stdout = String::from_utf8_lossy(&output.stdout);
        let line = stdout
            .lines()
            .find(|l| l.starts_with("RESULT"))
            .unwrap_or_else(|| panic!("case {:?} failed: {output:?}", case.name));
        let field = |key: &str| {
            line.split_whitespace()
                .find_map(|f| f.strip_prefix(&format!("{key}=")))
                .unwrap_or("?")
                .to_string()
        };
        let name = case.name.replace("CHURN", &churn.to_string());
        println!(
            "| {name} | {} | {} |",
            field("heap_bytes_per_live"),
            field("rss_bytes_per_live")
        );
        eprintln!("{line}");
    }
    speeds(1_000_000, 7);
    chase(4, 200);
}

//! The lane's publish, modelled: what issue 13's "asymmetric publish" could buy. One sender
//! writes a slot and publishes the new tail; one receiver reads the tail once per batch, takes
//! the slots up to it and, finding nothing, backs off as the runtime's `linger` does (pauses
//! doubling up to 64). Two ways to publish:
//!
//! - `swap`: an `AcqRel` swap of the tail word, as a lane sends today: the word it takes out
//!   says whether a receiver waits there (one atomic read-modify-write per message).
//! - `store`: a `Release` store of the tail, then a load of a separate waiter word that only a
//!   receiver about to park writes. Not a correct channel by itself: the receiver would need a
//!   process-wide barrier (Linux `membarrier`) between leaving its waiter and its last look, so
//!   that the sender's store and load cannot both miss it. The model leaves the waiter word
//!   alone, so it measures the send side's ceiling.
//!
//! Nothing of pipes runs here: the runtime's lanes publish with the swap, and this program shows
//! the gap a store could close, to decide whether the barrier's cost (a syscall and an IPI to
//! every core running the process, before each park and each port-set watch) is worth it.
//!
//! Run: `cargo bench --bench publish [-- MESSAGES [REPEATS]]` (defaults 1000000, 7). Prints ns
//! per message (wall and CPU) per way, medians, taken in turn, and the swap/store ratio.

mod common;
use common::{cpu_time, median, numeric_args, result_line};

use std::hint::spin_loop;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Instant;

use crossbeam_utils::CachePadded;

/// The shared words and the slots (one per message: the model never recycles).
struct Model {
    tail: CachePadded<AtomicUsize>,
    waiter: CachePadded<AtomicUsize>,
    slots: Box<[AtomicUsize]>,
}

#[derive(Clone, Copy, PartialEq)]
enum Publish {
    Swap,
    Store,
}

/// Moves `n` messages; returns wall and CPU ns per message.
fn run(publish: Publish, n: usize) -> (f64, f64) {
    let model = Arc::new(Model {
        tail: CachePadded::new(AtomicUsize::new(0)),
        waiter: CachePadded::new(AtomicUsize::new(0)),
        slots: (0..n).map(|_| AtomicUsize::new(0)).collect(),
    });
    let cpu = cpu_time();
    let start = Instant::now();
    let sender = {
        let model = Arc::clone(&model);
        thread::spawn(move || {
            let mut woken = 0;
            for i in 0..n {
                model.slots[i].store(100, Ordering::Relaxed);
                let found = match publish {
                    Publish::Swap => model.tail.swap(i + 1, Ordering::AcqRel),
                    Publish::Store => {
                        model.tail.store(i + 1, Ordering::Release);
                        model.waiter.load(Ordering::Relaxed)
                    }
                };
                // A lane would wake a waiter here; in the model none ever waits.
                woken += usize::from(found == usize::MAX);
            }
            woken
        })
    };
    let (mut head, mut limit, mut sum, mut pauses) = (0, 0, 0, 1);
    while head < n {
        if head == limit {
            limit = model.tail.load(Ordering::Acquire);
            if head == limit {
                for _ in 0..pauses {
                    spin_loop();
                }
                pauses = (pauses * 2).min(64);
                continue;
            }
            pauses = 1;
        }
        sum += model.slots[head].load(Ordering::Relaxed);
        head += 1;
    }
    assert_eq!(sender.join().unwrap(), 0);
    assert_eq!(sum, 100 * n);
    let wall = start.elapsed().as_secs_f64() * 1e9 / n as f64;
    let cpu = (cpu_time() - cpu).as_secs_f64() * 1e9 / n as f64;
    (wall, cpu)
}

fn main() {
    let args = numeric_args();
    let n = args.first().copied().unwrap_or(1_000_000) as usize;
    let repeats = args.get(1).copied().unwrap_or(7).max(1);
    let ways = [(Publish::Swap, "swap"), (Publish::Store, "store")];
    let mut walls = [Vec::new(), Vec::new()];
    let mut cpus = [Vec::new(), Vec::new()];
    for _ in 0..repeats {
        for (i, (publish, _)) in ways.iter().enumerate() {
            let (wall, cpu) = run(*publish, n);
            walls[i].push(wall);
            cpus[i].push(cpu);
        }
    }
    println!("publish, {n} messages, median of {repeats} (ns per message)");
    println!("| publish | wall | cpu |");
    println!("|---|---:|---:|");
    let mut medians = Vec::new();
    for (i, (_, name)) in ways.iter().enumerate() {
        let wall = median(walls[i].clone());
        let cpu = median(cpus[i].clone());
        medians.push(wall);
        println!("| {name} | {wall:.1} | {cpu:.1} |");
        println!(
            "{}",
            result_line(&[
                ("bench", &"publish"),
                ("messages", &n),
                ("impl", name),
                ("wall_ns", &format!("{wall:.2}")),
                ("cpu_ns", &format!("{cpu:.2}")),
            ])
        );
    }
    println!("swap / store: {:.2}x", medians[0] / medians[1]);
}

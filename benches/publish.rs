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
//! `benches/RESULTS.md` ("The asymmetric publish, measured in the runtime") has the answer: in
//! the runtime the store bought a fifth on one stream and nothing on a port set.
//!
//! The second table prices the barrier that would make the store correct, against what it
//! would save: Linux's `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)` with no other thread of
//! the process running (no core to interrupt) and with one busy (one IPI to its core, the case
//! of a receiver about to wait while its sender runs), and a thread park and unpark handed
//! back and forth (what a receiver that parks pays anyway). A receiver that waits once every
//! `barrier / (swap - store)` messages breaks even.
//!
//! Run: `cargo bench --bench publish [-- MESSAGES [REPEATS]]` (defaults 1000000, 7). Prints ns
//! per message (wall and CPU) per way, medians, taken in turn, and the swap/store ratio; then ns
//! per barrier and per park, medians of the same repeats.

mod common;
use common::{cpu_time, median, numeric_args, result_line};

use std::hint::spin_loop;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
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
    barriers(repeats, medians[0] - medians[1]);
}

/// `membarrier(2)` commands, from `linux/membarrier.h` (the `libc` crate has the syscall's
/// number but not these).
#[cfg(target_os = "linux")]
const MEMBARRIER_CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
#[cfg(target_os = "linux")]
const MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

/// Issues one `membarrier` command; whether the kernel took it.
#[cfg(target_os = "linux")]
fn membarrier(command: libc::c_long) -> bool {
    // SAFETY: membarrier takes a command, flags and a CPU id, and touches no memory of ours.
    unsafe {
        libc::syscall(
            libc::SYS_membarrier,
            command,
            0 as libc::c_long,
            0 as libc::c_long,
        ) == 0
    }
}

/// Ns per process-wide barrier, while `busy` other threads of the process compute.
#[cfg(target_os = "linux")]
fn barrier(busy: usize, n: usize) -> f64 {
    let stop = Arc::new(AtomicBool::new(false));
    let spinning = Arc::new(AtomicUsize::new(0));
    let spinners: Vec<_> = (0..busy)
        .map(|_| {
            let (stop, spinning) = (Arc::clone(&stop), Arc::clone(&spinning));
            thread::spawn(move || {
                spinning.fetch_add(1, Ordering::Relaxed);
                // Busy as a sender is: plain work, not `spin_loop` (a vCPU that pauses in a
                // loop may be descheduled by the hypervisor, which makes the IPI cheap).
                let mut work = 0_u64;
                while !stop.load(Ordering::Relaxed) {
                    for _ in 0..1024 {
                        work = std::hint::black_box(work.wrapping_add(1));
                    }
                }
            })
        })
        .collect();
    while spinning.load(Ordering::Relaxed) < busy {
        thread::yield_now();
    }
    // Time for the scheduler to move the busy threads to cores of their own.
    thread::sleep(std::time::Duration::from_millis(20));
    let start = Instant::now();
    for _ in 0..n {
        assert!(membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED));
    }
    let ns = start.elapsed().as_secs_f64() * 1e9 / n as f64;
    stop.store(true, Ordering::Relaxed);
    for spinner in spinners {
        spinner.join().unwrap();
    }
    ns
}

/// Ns per one-way hand-off between two threads that park and unpark each other in turn.
fn park_hand_off(n: usize) -> f64 {
    let turn = Arc::new(AtomicUsize::new(0));
    let main = thread::current();
    let start = Instant::now();
    let other = {
        let turn = Arc::clone(&turn);
        thread::spawn(move || {
            for i in 0..n {
                while turn.load(Ordering::Acquire) != 2 * i + 1 {
                    thread::park();
                }
                turn.store(2 * i + 2, Ordering::Release);
                main.unpark();
            }
        })
    };
    for i in 0..n {
        turn.store(2 * i + 1, Ordering::Release);
        other.thread().unpark();
        while turn.load(Ordering::Acquire) != 2 * i + 2 {
            thread::park();
        }
    }
    let ns = start.elapsed().as_secs_f64() * 1e9 / (2 * n) as f64;
    other.join().unwrap();
    ns
}

/// A row of the second table: its name and one measurement, in ns.
type Row = (&'static str, fn() -> f64);

/// The second table: what the store's barrier costs, against `saved` ns a message.
fn barriers(repeats: u64, saved: f64) {
    const BARRIERS: usize = 2_000;
    const HAND_OFFS: usize = 2_000;
    let mut rows: Vec<Row> = Vec::new();
    #[cfg(target_os = "linux")]
    if membarrier(MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED) {
        rows.push(("membarrier, no other thread running", || {
            barrier(0, BARRIERS)
        }));
        rows.push(("membarrier, one other thread busy", || barrier(1, BARRIERS)));
    } else {
        println!("membarrier: not available on this kernel");
    }
    rows.push(("park and unpark, one way", || park_hand_off(HAND_OFFS)));
    let mut times = vec![Vec::new(); rows.len()];
    for _ in 0..repeats {
        for (i, (_, row)) in rows.iter().enumerate() {
            times[i].push(row());
        }
    }
    println!();
    println!("the receiver's barrier, median of {repeats} (ns each)");
    println!("| what | ns | messages a wait to break even, at the saving above |");
    println!("|---|---:|---:|");
    for (i, (name, _)) in rows.iter().enumerate() {
        let ns = median(times[i].clone());
        let even = if !name.starts_with("membarrier") {
            "-".to_string()
        } else if saved > 0.0 {
            format!("{:.0}", ns / saved)
        } else {
            "never".to_string()
        };
        println!("| {name} | {ns:.0} | {even} |");
        println!(
            "{}",
            result_line(&[
                ("bench", &"publish_barrier"),
                ("impl", name),
                ("ns", &format!("{ns:.1}")),
            ])
        );
    }
}

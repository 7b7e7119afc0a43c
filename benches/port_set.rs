//! Port set: one sender thread sends round-robin over N chans, one receiver takes every message
//! from a `PortSet` of their N ports; beside it, crossbeam-channel's `Select` over N unbounded
//! channels, fed the same way. A second table does the same with 16 sender threads, each
//! owning every 16th chan, to load the set's ready list with contending senders. A third
//! measures round trips through the set (send on one of N chans, the set's thread echoes), where
//! the receiver is always waiting: the latency of the watch-and-wake path. Then `SharedChan`
//! (S senders, one port) beside crossbeam's cloned `Sender`, and the single-thread cost of the
//! wake path. This measures whether the cost of a receive grows with the
//! number of ports (the goal is flat; a select that scans its endpoints grows linearly).
//!
//! Run: `cargo bench --bench port_set [-- MESSAGES [REPEATS]]` (defaults 1000000 and 3).
//! Both implementations run in the same process, interleaved, `REPEATS` times for each size;
//! the table shows the median. A measurement stops early after two seconds, so a slow one does
//! fewer messages and the whole run stays short; the table prints the median count done.

mod common;
use common::{cpu_time, median, numeric_args, out_of_time, result_line};

use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::Select;
use pipes::PortSet;

/// How long one measurement may take.
const TIME_LIMIT: Duration = Duration::from_secs(2);

/// The port counts measured.
const SIZES: &[usize] = &[1, 10, 100, 1_000, 10_000];

/// One measurement: messages received, and nanoseconds per message of wall clock and CPU.
#[derive(Clone, Copy)]
struct Sample {
    messages: u64,
    wall: f64,
    cpu: f64,
}

/// The clock of one measurement, started once setup is done and both threads are at the line.
struct Clock {
    start: Instant,
    cpu: Duration,
}

impl Clock {
    fn start(barrier: &Barrier) -> Self {
        let clock = Clock {
            start: Instant::now(),
            cpu: cpu_time(),
        };
        barrier.wait();
        clock
    }

    fn stop(self, messages: u64) -> Sample {
        let (wall, cpu) = (self.start.elapsed(), cpu_time() - self.cpu);
        let messages = messages.max(1);
        Sample {
            messages,
            wall: wall.as_nanos() as f64 / messages as f64,
            cpu: cpu.as_nanos() as f64 / messages as f64,
        }
    }
}

/// The chans of sender `s` of `senders`: every `senders`-th one, starting at `s`.
fn deal<T>(all: Vec<T>, senders: usize) -> Vec<Vec<T>> {
    let mut hands: Vec<Vec<T>> = (0..senders).map(|_| Vec::new()).collect();
    for (i, item) in all.into_iter().enumerate() {
        hands[i % senders].push(item);
    }
    hands
}

fn pipes_port_set(ports: usize, senders: usize, n: u64) -> Sample {
    let set = PortSet::new();
    let chans: Vec<_> = (0..ports).map(|_| set.chan()).collect();
    let barrier = Barrier::new(senders + 1);
    thread::scope(|scope| {
        for chans in deal(chans, senders) {
            let barrier = &barrier;
            scope.spawn(move || {
                barrier.wait();
                for i in 0..n / senders as u64 {
                    // Fails once the receiver stopped early and dropped the set.
                    if chans[i as usize % chans.len()].send(i).is_err() {
                        break;
                    }
                }
            });
        }
        let clock = Clock::start(&barrier);
        let limit = clock.start + TIME_LIMIT;
        let mut done = 0;
        let n = n / senders as u64 * senders as u64;
        while done < n && !out_of_time(done, limit) {
            set.recv().unwrap();
            done += 1;
        }
        let sample = clock.stop(done);
        drop(set);
        sample
    })
}

fn crossbeam_select(ports: usize, senders: usize, n: u64) -> Sample {
    let (txs, receivers): (Vec<_>, Vec<_>) = (0..ports)
        .map(|_| crossbeam_channel::unbounded::<u64>())
        .unzip();
    let barrier = Barrier::new(senders + 1);
    thread::scope(|scope| {
        for txs in deal(txs, senders) {
            let barrier = &barrier;
            scope.spawn(move || {
                barrier.wait();
                for i in 0..n / senders as u64 {
                    if txs[i as usize % txs.len()].send(i).is_err() {
                        break;
                    }
                }
            });
        }
        let mut select = Select::new();
        for receiver in &receivers {
            select.recv(receiver);
        }
        let clock = Clock::start(&barrier);
        let limit = clock.start + TIME_LIMIT;
        let mut done = 0;
        let n = n / senders as u64 * senders as u64;
        while done < n && !out_of_time(done, limit) {
            let operation = select.select();
            let index = operation.index();
            // Once the sender is done its channels hang up; an empty one is ready for ever
            // after, so it leaves the select (the port set drops such ports itself).
            match operation.recv(&receivers[index]) {
                Ok(_) => done += 1,
                Err(_) => select.remove(index),
            }
        }
        let sample = clock.stop(done);
        drop(select);
        drop(receivers);
        sample
    })
}

/// Round trips through a set: the main thread sends on chan `i % ports` and waits for the echo,
/// so the set's receiver is always waiting when a message comes (every message takes the
/// watch-and-wake path).
fn pipes_round_trips(ports: usize, n: u64) -> Sample {
    let set = PortSet::new();
    let chans: Vec<_> = (0..ports).map(|_| set.chan()).collect();
    let (pong_port, pong_chan) = pipes::stream::<u64>();
    let echo = thread::spawn(move || {
        for x in set.iter() {
            if pong_chan.send(x + 1).is_err() {
                break;
            }
        }
    });
    let clock = Clock::start(&Barrier::new(1));
    let limit = clock.start + TIME_LIMIT;
    let mut done = 0;
    while done < n && !out_of_time(done, limit) {
        chans[done as usize % ports].send(done).unwrap();
        assert_eq!(pong_port.recv().unwrap(), done + 1);
        done += 1;
    }
    let sample = clock.stop(done);
    drop(chans);
    echo.join().unwrap();
    sample
}

fn crossbeam_round_trips(ports: usize, n: u64) -> Sample {
    let (txs, receivers): (Vec<_>, Vec<_>) = (0..ports)
        .map(|_| crossbeam_channel::unbounded::<u64>())
        .unzip();
    let (pong_tx, pong_rx) = crossbeam_channel::unbounded::<u64>();
    let echo = thread::spawn(move || {
        let mut select = Select::new();
        for receiver in &receivers {
            select.recv(receiver);
        }
        loop {
            let operation = select.select();
            let index = operation.index();
            match operation.recv(&receivers[index]) {
                Ok(x) => pong_tx.send(x + 1).unwrap(),
                // The main thread is done: every channel hangs up at once.
                Err(_) => break,
            }
        }
    });
    let clock = Clock::start(&Barrier::new(1));
    let limit = clock.start + TIME_LIMIT;
    let mut done = 0;
    while done < n && !out_of_time(done, limit) {
        txs[done as usize % ports].send(done).unwrap();
        assert_eq!(pong_rx.recv().unwrap(), done + 1);
        done += 1;
    }
    let sample = clock.stop(done);
    drop(txs);
    echo.join().unwrap();
    sample
}

/// One thread, no contention: ns per send + receive through a set whose port is watched each
/// time (receive, the port empties and is watched; the send swaps the waiter out and queues the
/// port; the next receive drains the ready list). The instructions of the wake path alone,
/// beside the same send + receive on a plain stream port.
fn single_thread_wake_path(n: u64) -> (f64, f64) {
    let set = PortSet::new();
    let chan = set.chan();
    chan.send(0).unwrap();
    set.recv().unwrap();
    let start = Instant::now();
    for i in 0..n {
        chan.send(i).unwrap();
        assert_eq!(set.try_recv(), Ok(i));
    }
    let through_set = start.elapsed().as_nanos() as f64 / n as f64;
    let (port, chan) = pipes::stream();
    let start = Instant::now();
    for i in 0..n {
        chan.send(i).unwrap();
        assert_eq!(port.try_recv(), Ok(i));
    }
    let through_port = start.elapsed().as_nanos() as f64 / n as f64;
    (through_set, through_port)
}

/// `senders` threads send `n` messages in all through clones of one `SharedChan`; the calling
/// thread receives them from the port.
fn pipes_shared_chan(senders: usize, n: u64) -> Sample {
    let (port, chan) = pipes::stream::<u64>();
    let chan = pipes::SharedChan::new(chan);
    let barrier = Barrier::new(senders + 1);
    thread::scope(|scope| {
        for _ in 0..senders {
            let (chan, barrier) = (chan.clone(), &barrier);
            scope.spawn(move || {
                barrier.wait();
                for i in 0..n / senders as u64 {
                    if chan.send(i).is_err() {
                        break;
                    }
                }
            });
        }
        drop(chan);
        let clock = Clock::start(&barrier);
        let limit = clock.start + TIME_LIMIT;
        let mut done = 0;
        while !out_of_time(done, limit) && port.recv().is_ok() {
            done += 1;
        }
        let sample = clock.stop(done);
        drop(port);
        sample
    })
}

/// The same with clones of one crossbeam-channel unbounded `Sender`.
fn crossbeam_shared(senders: usize, n: u64) -> Sample {
    let (tx, rx) = crossbeam_channel::unbounded::<u64>();
    let barrier = Barrier::new(senders + 1);
    thread::scope(|scope| {
        for _ in 0..senders {
            let (tx, barrier) = (tx.clone(), &barrier);
            scope.spawn(move || {
                barrier.wait();
                for i in 0..n / senders as u64 {
                    if tx.send(i).is_err() {
                        break;
                    }
                }
            });
        }
        drop(tx);
        let clock = Clock::start(&barrier);
        let limit = clock.start + TIME_LIMIT;
        let mut done = 0;
        while !out_of_time(done, limit) && rx.recv().is_ok() {
            done += 1;
        }
        let sample = clock.stop(done);
        drop(rx);
        sample
    })
}

/// The RESULT lines of one table row: the median sample of pipes and of crossbeam-channel at
/// `x` (ports, or senders for the shared chan table), printed after the table so it stays whole.
fn row_results(
    table: &str,
    x: usize,
    names: [&str; 2],
    medians: [(u64, f64, f64); 2],
) -> [String; 2] {
    [0, 1].map(|i| {
        let (messages, wall, cpu) = medians[i];
        result_line(&[
            ("bench", &"port_set"),
            ("table", &table),
            ("x", &x),
            ("impl", &names[i]),
            ("messages", &messages),
            ("wall_ns", &wall),
            ("cpu_ns", &cpu),
            ("per_s", &(1e9 / wall)),
        ])
    })
}

/// The medians of some samples: messages, wall ns/message, CPU ns/message.
fn medians(samples: &[Sample]) -> (u64, f64, f64) {
    let median_of = |f: fn(&Sample) -> f64| median(samples.iter().map(f).collect());
    (
        median_of(|s| s.messages as f64) as u64,
        median_of(|s| s.wall),
        median_of(|s| s.cpu),
    )
}

fn main() {
    let numbers = numeric_args();
    let messages = numbers.first().copied().unwrap_or(1_000_000);
    let repeats = numbers.get(1).copied().unwrap_or(3).max(1) as usize;

    // Warm up: the first run of each pays for cold caches and lazy initialisation.
    pipes_port_set(10, 1, 20_000);
    crossbeam_select(10, 1, 20_000);

    table(1, SIZES, messages, repeats);
    // Many senders: contention on the set's ready list (and on crossbeam's wakers).
    table(16, &[16, 1_000, 10_000], messages, repeats);
    round_trip_table(&[1, 100, 10_000], messages, repeats);
    shared_chan_table(&[1, 4, 16], messages, repeats);
    let runs: Vec<(f64, f64)> = (0..repeats)
        .map(|_| single_thread_wake_path(messages))
        .collect();
    println!(
        "single thread, median of {repeats}: send + receive through a watched port of a set \
         {:.0} ns, through a plain stream port {:.0} ns",
        median(runs.iter().map(|r| r.0).collect()),
        median(runs.iter().map(|r| r.1).collect()),
    );
}

/// Measures round trips through a set of each size and prints one table.
fn round_trip_table(sizes: &[usize], round_trips: u64, repeats: usize) {
    println!(
        "port_set round trips: send on one of N chans, the set's thread echoes on a stream; \
         median of {repeats}; ns per round trip; 'speed' as above"
    );
    println!(
        "| {:>6} | {:>9} | {:>10} | {:>9} | {:>9} | {:>10} | {:>9} | {:>7} |",
        "ports", "set rts", "set wall", "set cpu", "cb rts", "cb wall", "cb cpu", "speed"
    );
    println!(
        "|{:->8}|{:->11}|{:->12}|{:->11}|{:->11}|{:->12}|{:->11}|{:->9}|",
        "", "", "", "", "", "", "", ""
    );
    let mut results = Vec::new();
    for &ports in sizes {
        let mut set = Vec::new();
        let mut crossbeam = Vec::new();
        for _ in 0..repeats {
            set.push(pipes_round_trips(ports, round_trips));
            crossbeam.push(crossbeam_round_trips(ports, round_trips));
        }
        let (set_n, set_wall, set_cpu) = medians(&set);
        let (cb_n, cb_wall, cb_cpu) = medians(&crossbeam);
        println!(
            "| {ports:>6} | {set_n:>9} | {set_wall:>10.0} | {set_cpu:>9.0} | {cb_n:>9} | \
             {cb_wall:>10.0} | {cb_cpu:>9.0} | {:>6.2}x |",
            cb_wall / set_wall
        );
        results.extend(row_results(
            "round-trips",
            ports,
            ["pipes PortSet", "crossbeam-channel Select"],
            [(set_n, set_wall, set_cpu), (cb_n, cb_wall, cb_cpu)],
        ));
    }
    for line in results {
        println!("{line}");
    }
}

/// Measures every size with `senders` sender threads and prints one table.
fn table(senders: usize, sizes: &[usize], messages: u64, repeats: usize) {
    println!(
        "port_set: {senders} sender(s) round-robin over N chans, 1 receiver; median of \
         {repeats}; ns per message received; 'speed' is crossbeam Select's wall time divided \
         by the port set's (above 1: the port set is faster)"
    );
    println!(
        "| {:>6} | {:>9} | {:>10} | {:>9} | {:>9} | {:>10} | {:>9} | {:>7} |",
        "ports", "set msgs", "set wall", "set cpu", "cb msgs", "cb wall", "cb cpu", "speed"
    );
    println!(
        "|{:->8}|{:->11}|{:->12}|{:->11}|{:->11}|{:->12}|{:->11}|{:->9}|",
        "", "", "", "", "", "", "", ""
    );
    let mut results = Vec::new();
    for &ports in sizes {
        let mut set = Vec::new();
        let mut crossbeam = Vec::new();
        for _ in 0..repeats {
            set.push(pipes_port_set(ports, senders, messages));
            crossbeam.push(crossbeam_select(ports, senders, messages));
        }
        let (set_n, set_wall, set_cpu) = medians(&set);
        let (cb_n, cb_wall, cb_cpu) = medians(&crossbeam);
        println!(
            "| {ports:>6} | {set_n:>9} | {set_wall:>10.0} | {set_cpu:>9.0} | {cb_n:>9} | \
             {cb_wall:>10.0} | {cb_cpu:>9.0} | {:>6.2}x |",
            cb_wall / set_wall
        );
        results.extend(row_results(
            &format!("senders-{senders}"),
            ports,
            ["pipes PortSet", "crossbeam-channel Select"],
            [(set_n, set_wall, set_cpu), (cb_n, cb_wall, cb_cpu)],
        ));
    }
    for line in results {
        println!("{line}");
    }
}

/// Measures a `SharedChan` against crossbeam's cloned `Sender` and prints one table.
fn shared_chan_table(senders: &[usize], messages: u64, repeats: usize) {
    println!(
        "shared chan: S senders through clones of one SharedChan (its lock-free queue) into \
         one port, beside crossbeam unbounded Sender clones; median of {repeats}; ns per \
         message received; 'speed' as above"
    );
    println!(
        "| {:>6} | {:>9} | {:>10} | {:>9} | {:>9} | {:>10} | {:>9} | {:>7} |",
        "sndrs", "msgs", "wall", "cpu", "cb msgs", "cb wall", "cb cpu", "speed"
    );
    println!(
        "|{:->8}|{:->11}|{:->12}|{:->11}|{:->11}|{:->12}|{:->11}|{:->9}|",
        "", "", "", "", "", "", "", ""
    );
    let mut results = Vec::new();
    for &count in senders {
        let mut shared = Vec::new();
        let mut crossbeam = Vec::new();
        for _ in 0..repeats {
            shared.push(pipes_shared_chan(count, messages));
            crossbeam.push(crossbeam_shared(count, messages));
        }
        let (n, wall, cpu) = medians(&shared);
        let (cb_n, cb_wall, cb_cpu) = medians(&crossbeam);
        println!(
            "| {count:>6} | {n:>9} | {wall:>10.0} | {cpu:>9.0} | {cb_n:>9} | {cb_wall:>10.0} | \
             {cb_cpu:>9.0} | {:>6.2}x |",
            cb_wall / wall
        );
        results.extend(row_results(
            "shared-chan",
            count,
            ["pipes SharedChan", "crossbeam-channel unbounded"],
            [(n, wall, cpu), (cb_n, cb_wall, cb_cpu)],
        ));
    }
    for line in results {
        println!("{line}");
    }
}

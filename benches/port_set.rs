//! Port set: one sender thread sends round-robin over N chans, one receiver takes every message
//! from a `PortSet` of their N ports; beside it, crossbeam-channel's `Select` over N unbounded
//! channels, fed the same way. This measures whether the cost of a receive grows with the
//! number of ports (the goal is flat; a select that scans its endpoints grows linearly).
//!
//! Run: `cargo bench --bench port_set [-- MESSAGES [REPEATS]]` (defaults 1000000 and 3).
//! Both implementations run in the same process, interleaved, `REPEATS` times for each size;
//! the table shows the median. A measurement stops early after two seconds, so a slow one does
//! fewer messages and the whole run stays short; the table prints the median count done.

use std::sync::Barrier;
use std::thread;
use std::time::{Duration, Instant};

use crossbeam_channel::Select;
use pipes::PortSet;

/// How long one measurement may take.
const TIME_LIMIT: Duration = Duration::from_secs(2);

/// The port counts measured.
const SIZES: &[usize] = &[1, 10, 100, 1_000, 10_000];

/// Whether a measurement should stop before message `i` (the clock is read every 1024).
fn out_of_time(i: u64, limit: Instant) -> bool {
    i.is_multiple_of(1024) && Instant::now() >= limit
}

/// CPU time of the whole process (both threads), user plus system.
fn cpu_time() -> Duration {
    let mut usage = std::mem::MaybeUninit::<libc::rusage>::uninit();
    // SAFETY: getrusage writes a full `rusage` on success, which the assert checks.
    let usage = unsafe {
        assert_eq!(libc::getrusage(libc::RUSAGE_SELF, usage.as_mut_ptr()), 0);
        usage.assume_init()
    };
    let micros = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
    Duration::from_micros(micros(usage.ru_utime) + micros(usage.ru_stime))
}

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

fn pipes_port_set(ports: usize, n: u64) -> Sample {
    let set = PortSet::new();
    let chans: Vec<_> = (0..ports).map(|_| set.chan()).collect();
    let barrier = Barrier::new(2);
    thread::scope(|scope| {
        let barrier_ref = &barrier;
        scope.spawn(move || {
            barrier_ref.wait();
            for i in 0..n {
                // Fails once the receiver stopped early and dropped the set.
                if chans[i as usize % ports].send(i).is_err() {
                    break;
                }
            }
        });
        let clock = Clock::start(&barrier);
        let limit = clock.start + TIME_LIMIT;
        let mut done = 0;
        while done < n && !out_of_time(done, limit) {
            set.recv().unwrap();
            done += 1;
        }
        let sample = clock.stop(done);
        drop(set);
        sample
    })
}

fn crossbeam_select(ports: usize, n: u64) -> Sample {
    let (senders, receivers): (Vec<_>, Vec<_>) = (0..ports)
        .map(|_| crossbeam_channel::unbounded::<u64>())
        .unzip();
    let barrier = Barrier::new(2);
    thread::scope(|scope| {
        let barrier_ref = &barrier;
        scope.spawn(move || {
            barrier_ref.wait();
            for i in 0..n {
                if senders[i as usize % ports].send(i).is_err() {
                    break;
                }
            }
        });
        let mut select = Select::new();
        for receiver in &receivers {
            select.recv(receiver);
        }
        let clock = Clock::start(&barrier);
        let limit = clock.start + TIME_LIMIT;
        let mut done = 0;
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

fn median(mut values: Vec<f64>) -> f64 {
    values.sort_by(f64::total_cmp);
    values[values.len() / 2]
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
    // `cargo bench` passes `--bench`; the numbers are ours.
    let numbers: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let messages = numbers.first().copied().unwrap_or(1_000_000);
    let repeats = numbers.get(1).copied().unwrap_or(3).max(1) as usize;

    // Warm up: the first run of each pays for cold caches and lazy initialisation.
    pipes_port_set(10, 20_000);
    crossbeam_select(10, 20_000);

    println!(
        "port_set: 1 sender round-robin over N chans, 1 receiver; median of {repeats}; \
         ns per message received; 'speed' is crossbeam Select's wall time divided by the \
         port set's (above 1: the port set is faster)"
    );
    println!(
        "| {:>6} | {:>9} | {:>10} | {:>9} | {:>9} | {:>10} | {:>9} | {:>7} |",
        "ports", "set msgs", "set wall", "set cpu", "cb msgs", "cb wall", "cb cpu", "speed"
    );
    println!(
        "|{:->8}|{:->11}|{:->12}|{:->11}|{:->11}|{:->12}|{:->11}|{:->9}|",
        "", "", "", "", "", "", "", ""
    );
    for &ports in SIZES {
        let mut set = Vec::new();
        let mut crossbeam = Vec::new();
        for _ in 0..repeats {
            set.push(pipes_port_set(ports, messages));
            crossbeam.push(crossbeam_select(ports, messages));
        }
        let (set_n, set_wall, set_cpu) = medians(&set);
        let (cb_n, cb_wall, cb_cpu) = medians(&crossbeam);
        println!(
            "| {ports:>6} | {set_n:>9} | {set_wall:>10.0} | {set_cpu:>9.0} | {cb_n:>9} | \
             {cb_wall:>10.0} | {cb_cpu:>9.0} | {:>6.2}x |",
            cb_wall / set_wall
        );
    }
}

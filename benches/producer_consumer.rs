//! Producer-consumer (seed 003, Fisher and Yeh, "Comparing Producer-Consumer Implementations in
//! Go, Rust, and C"), the seed's experiment exactly: 5 producers and 5 consumers share one
//! buffer of 100 items; the buffer is closed when the producers are done, and the consumers
//! drain it until it is empty and closed. Two modes: *I/O-bound* (a 1 ms sleep before each
//! produce: consumers wait on an empty buffer) and *compute-bound* (a 1 ms sleep after each
//! consume: producers wait on a full buffer). 500, 5,000 or 50,000 items in all, producer `p`
//! making items `p, p + 5, ...`. Reported as the seed's figures do: total (wall), user and
//! system time, here measured with getrusage around each run rather than `time` around a
//! process. Every run checks that each item was consumed exactly once.
//!
//! # How pipes expresses a buffer shared by five consumers
//!
//! A pipes endpoint has exactly one owner: a port cannot be shared by five consumers (a
//! `SharedChan` shares the sending end, a `PortSet` merges many ports into one receiver, and
//! neither bounds anything). So the shared buffer is what it is in CSP: a process. The
//! `bounded_buffer` module below is a thread that owns the queue (a `VecDeque` of at most 100
//! items) and has one bounded session with each producer and each consumer:
//!
//! - `put`: the producer waits for `Room`, then sends `Put(item)` (and waits for room again) or
//!   `Close`. The buffer grants room only while the items it holds plus the rooms it has
//!   granted stay within 100, so a producer blocks exactly when the buffer is full, as a Go
//!   sender does. Room is granted ahead, so a producer that is not blocked waits for nothing.
//! - `take`: the consumer sends `Take` and is answered `Item(item)`, or `Closed` once every
//!   producer has closed and the queue is empty: Go's `for item := range ch` in types. A
//!   consumer asks for its next item before it works on the one it has, so the answer arrives
//!   while it works rather than costing a wake of the buffer thread on its path.
//!
//! Both protocols are bounded (one message in flight per session), so each session is one
//! buffer allocated at `init()` and no message allocates; the buffer thread waits on all its
//! sessions at once with `selecti`. It is the right protocol because it is the seed's semantics
//! with nothing lost: one queue, any idle consumer takes the next item, the bound is global
//! (not split per pair), closing is a message each side must send or receive, and the items
//! move by ownership into the queue and out to a consumer. What differs from a Go channel is
//! in the types: a consumer may hold one item ahead, and a producer closes from the state where
//! it could put, so its `Close` waits for room like a put. The cost is a thread and a hand-off
//! more per item than a locked queue, which 1 ms of latency per item hides.
//!
//! The second pipes row is `examples/producer_consumer.rs`, a credit protocol with no middle
//! thread: 25 producer-consumer sessions of 4 credits each, items dealt round-robin. Its bound
//! is split, so it is not the seed's shared buffer (a slow consumer stalls its producers while
//! another idles); it is measured to show what the middle thread costs.
//!
//! Peers: crossbeam-channel `bounded(100)` with cloned senders and receivers, and Go's buffered
//! channel (`benches/go/producer_consumer`, run by `benches/run.sh`).
//!
//! Run: `cargo bench --bench producer_consumer [-- ITEMS [REPEATS]]` (defaults 5000 3; the
//! seed's sizes are 500, 5000 and 50000, the last about 11 s a run). Prints one table per mode
//! with the median of `REPEATS` runs, and the sleep-bound ideal (items / 5 producers or
//! consumers x 1 ms).

mod common;
use common::{median, numeric_args, result_line, user_system_time};

#[allow(dead_code)]
#[path = "../examples/producer_consumer.rs"]
mod credit;

use std::thread;
use std::time::{Duration, Instant};

/// Producer threads.
const PRODUCERS: usize = 5;
/// Consumer threads.
const CONSUMERS: usize = 5;
/// The buffer's capacity.
const CAPACITY: usize = 100;
/// The simulated latency.
const LATENCY: Duration = Duration::from_millis(1);

/// Where the latency goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// A sleep before each produce.
    Io,
    /// A sleep after each consume.
    Compute,
}

/// Producer `index`'s share of `items`.
fn share(index: usize, items: u64) -> impl Iterator<Item = u64> {
    (index as u64..items).step_by(PRODUCERS)
}

/// Seed 003's program over pipes (the lines counted beside the seed's Go 55, Rust 88, C 175).
mod bounded_buffer {
    use super::{CAPACITY, CONSUMERS, LATENCY, Mode, PRODUCERS, share};
    use pipes::{select::Selectable, selecti};
    use std::collections::VecDeque;
    use std::thread;

    pipes::proto! {
        /// A producer's session with the buffer, from the producer's side.
        pub put {
            /// The producer waits until the buffer has room for one more item.
            Full: recv { Room -> Open }
            /// The producer puts an item, and waits for room again, or closes.
            Open: send { Put(u64) -> Full, Close -> ! }
        }
    }

    pipes::proto! {
        /// A consumer's session with the buffer, from the consumer's side.
        pub take {
            /// The consumer asks for an item.
            Idle: send { Take -> Waiting }
            /// An item, or: the producers are done and the buffer is empty.
            Waiting: recv { Item(u64) -> Idle, Closed -> ! }
        }
    }

    /// The buffer: owns the queue, grants room to producers and items to consumers, and tells
    /// every consumer `Closed` once all producers have closed and the queue is empty.
    fn buffer(mut full: VecDeque<put::server::Full>, mut idle: Vec<take::server::Idle>) {
        let mut queue = VecDeque::with_capacity(CAPACITY);
        // Producers granted room (the buffer waits for their item), consumers waiting for one.
        let mut open = Vec::with_capacity(PRODUCERS);
        let mut waiting = VecDeque::with_capacity(CONSUMERS);
        loop {
            while !queue.is_empty()
                && let Some(consumer) = waiting.pop_front()
            {
                let item = queue.pop_front().expect("not empty");
                idle.push(take::server::Waiting::item(consumer, item).expect("it waits"));
            }
            while queue.len() + open.len() < CAPACITY
                && let Some(producer) = full.pop_front()
            {
                open.push(put::server::Full::room(producer).expect("it waits"));
            }
            if open.is_empty() && full.is_empty() && queue.is_empty() {
                break;
            }
            let mut ready: Vec<&dyn Selectable> = Vec::with_capacity(idle.len() + open.len());
            ready.extend(idle.iter().map(|consumer| consumer as &dyn Selectable));
            ready.extend(open.iter().map(|producer| producer as &dyn Selectable));
            let index = selecti(&ready);
            if index < idle.len() {
                let take::Idle::Take(consumer) = idle.swap_remove(index).recv().expect("asks");
                waiting.push_back(consumer);
            } else {
                let producer = open.swap_remove(index - idle.len());
                if let put::Open::Put(item, producer) = producer.recv().expect("puts or closes") {
                    queue.push_back(item);
                    full.push_back(producer);
                }
            }
        }
        for consumer in waiting {
            consumer.closed().expect("it waits");
        }
        for consumer in idle {
            let take::Idle::Take(consumer) = consumer.recv().expect("asks");
            consumer.closed().expect("it waits");
        }
    }

    fn producer(index: usize, items: u64, mode: Mode, mut full: put::client::Full) {
        for item in share(index, items) {
            if mode == Mode::Io {
                thread::sleep(LATENCY);
            }
            let put::Full::Room(open) = full.recv().expect("the buffer grants room");
            full = open.put(item).expect("the buffer runs");
        }
        let put::Full::Room(open) = full.recv().expect("the buffer grants room");
        open.close().expect("the buffer runs");
    }

    fn consumer(mode: Mode, idle: take::client::Idle) -> Vec<u64> {
        let mut taken = Vec::new();
        let mut waiting = idle.take().expect("the buffer runs");
        while let take::Waiting::Item(item, idle) = waiting.recv().expect("it answers") {
            waiting = idle.take().expect("the buffer runs");
            taken.push(item);
            if mode == Mode::Compute {
                thread::sleep(LATENCY);
            }
        }
        taken
    }

    /// Runs the program; returns the items each consumer took.
    pub fn run(items: u64, mode: Mode) -> Vec<Vec<u64>> {
        let (full, producers): (VecDeque<_>, Vec<_>) = (0..PRODUCERS).map(|_| put::init()).unzip();
        let (idle, consumers): (Vec<_>, Vec<_>) = (0..CONSUMERS).map(|_| take::init()).unzip();
        let buffer = thread::spawn(move || buffer(full, idle));
        let producers: Vec<_> = (producers.into_iter().enumerate())
            .map(|(index, end)| thread::spawn(move || producer(index, items, mode, end)))
            .collect();
        let consumers: Vec<_> = (consumers.into_iter())
            .map(|end| thread::spawn(move || consumer(mode, end)))
            .collect();
        for producer in producers {
            producer.join().expect("a producer");
        }
        buffer.join().expect("the buffer");
        (consumers.into_iter())
            .map(|consumer| consumer.join().expect("a consumer"))
            .collect()
    }
}

/// crossbeam-channel `bounded(100)`: the seed's Rust program with today's channel (the seed's
/// `chan` crate is unmaintained); senders and receivers are cloned, the last sender's drop
/// closes the channel.
fn crossbeam_bounded(items: u64, mode: Mode) -> Vec<Vec<u64>> {
    let (sender, receiver) = crossbeam_channel::bounded(CAPACITY);
    let producers: Vec<_> = (0..PRODUCERS)
        .map(|index| {
            let sender = sender.clone();
            thread::spawn(move || {
                for item in share(index, items) {
                    if mode == Mode::Io {
                        thread::sleep(LATENCY);
                    }
                    sender.send(item).expect("the consumers run");
                }
            })
        })
        .collect();
    drop(sender);
    let consumers: Vec<_> = (0..CONSUMERS)
        .map(|_| {
            let receiver = receiver.clone();
            thread::spawn(move || {
                let mut taken = Vec::new();
                for item in receiver {
                    taken.push(item);
                    if mode == Mode::Compute {
                        thread::sleep(LATENCY);
                    }
                }
                taken
            })
        })
        .collect();
    for producer in producers {
        producer.join().expect("a producer");
    }
    (consumers.into_iter())
        .map(|consumer| consumer.join().expect("a consumer"))
        .collect()
}

/// What the consumers took: how many, their sum, and whether every item was taken exactly once
/// (`None` where the program reports only count and sum).
struct Taken {
    count: u64,
    sum: u64,
    each_once: Option<bool>,
}

impl Taken {
    fn from_lists(items: u64, lists: Vec<Vec<u64>>) -> Taken {
        let mut seen = vec![false; items as usize];
        let mut each_once = true;
        for &item in lists.iter().flatten() {
            each_once &= (item < items) && !std::mem::replace(&mut seen[item as usize], true);
        }
        let all: Vec<u64> = lists.into_iter().flatten().collect();
        Taken {
            count: all.len() as u64,
            sum: all.iter().sum(),
            each_once: Some(each_once && seen.iter().all(|&s| s)),
        }
    }
}

/// One implementation: runs the program and reports what the consumers took.
struct Implementation {
    name: &'static str,
    run: fn(items: u64, mode: Mode) -> Taken,
}

const BASELINE: &str = "crossbeam-channel bounded(100)";

const IMPLEMENTATIONS: &[Implementation] = &[
    Implementation {
        name: "pipes buffer thread (put/take protocols)",
        run: |items, mode| Taken::from_lists(items, bounded_buffer::run(items, mode)),
    },
    Implementation {
        name: "pipes credit sessions (examples/producer_consumer)",
        run: |items, mode| {
            let mode = match mode {
                Mode::Io => credit::Mode::IoBound,
                Mode::Compute => credit::Mode::ComputeBound,
            };
            let consumed = credit::run(credit::Config::paper(items, mode));
            Taken {
                count: consumed.count,
                sum: consumed.sum,
                each_once: None,
            }
        },
    },
    Implementation {
        name: BASELINE,
        run: |items, mode| Taken::from_lists(items, crossbeam_bounded(items, mode)),
    },
];

fn main() {
    let numbers = numeric_args();
    let items = numbers.first().copied().unwrap_or(5_000).max(1);
    let repeats = numbers.get(1).copied().unwrap_or(3).max(1) as usize;
    // Each producer (I/O-bound) or consumer (compute-bound) sleeps for its share of the items.
    let ideal = items.div_ceil(PRODUCERS as u64) as f64 * LATENCY.as_secs_f64();

    let mut results = Vec::new();
    for (mode, mode_name, what) in [
        (Mode::Io, "io", "I/O-bound (1 ms sleep before each produce)"),
        (
            Mode::Compute,
            "compute",
            "compute-bound (1 ms sleep after each consume)",
        ),
    ] {
        let mut rows = Vec::new();
        for implementation in IMPLEMENTATIONS {
            let (mut walls, mut users, mut systems) = (Vec::new(), Vec::new(), Vec::new());
            for _ in 0..repeats {
                let ((user, system), start) = (user_system_time(), Instant::now());
                let taken = (implementation.run)(items, mode);
                let wall = start.elapsed();
                let (user_after, system_after) = user_system_time();
                let name = implementation.name;
                assert_eq!(taken.count, items, "{name}: every item consumed");
                assert_eq!(taken.sum, items * (items - 1) / 2, "{name}: the sum");
                assert_ne!(taken.each_once, Some(false), "{name}: each item once");
                walls.push(wall.as_secs_f64());
                users.push((user_after - user).as_secs_f64());
                systems.push((system_after - system).as_secs_f64());
            }
            rows.push((
                implementation.name,
                median(walls),
                median(users),
                median(systems),
            ));
        }
        let baseline = rows.iter().find(|r| r.0 == BASELINE).map_or(1.0, |r| r.1);
        println!(
            "\nproducer-consumer, {what}: {items} items, {PRODUCERS} producers, {CONSUMERS} \
             consumers, buffer {CAPACITY}, median of {repeats}; sleep-bound ideal {ideal:.3} s"
        );
        println!(
            "| {:<50} | {:>8} | {:>8} | {:>8} | {:>6} |",
            "implementation", "total s", "user s", "system s", "speed"
        );
        println!(
            "|{:-<52}|{:->10}|{:->10}|{:->10}|{:->8}|",
            "", "", "", "", ""
        );
        for &(name, wall, user, system) in &rows {
            println!(
                "| {name:<50} | {wall:>8.3} | {user:>8.3} | {system:>8.3} | {:>5.2}x |",
                baseline / wall
            );
            results.push(result_line(&[
                ("bench", &"producer_consumer"),
                ("mode", &mode_name),
                ("items", &items),
                ("impl", &name),
                ("wall_s", &wall),
                ("user_s", &user),
                ("sys_s", &system),
                ("cpu_s", &(user + system)),
                ("ideal_s", &ideal),
            ]));
        }
    }
    println!(
        "\n'speed' is {BASELINE}'s total time divided by this one's (above 1 is faster); user and \
         system are the CPU time of the whole process during the run."
    );
    for line in results {
        println!("{line}");
    }
}

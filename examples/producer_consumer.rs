//! Producer-consumer, after Fisher and Yeh, "Comparing Producer-Consumer Implementations in Go,
//! Rust, and C" (seed 003): 5 producers, 5 consumers, a buffer of 100, an I/O-bound mode (a 1 ms
//! sleep before each produce) and a compute-bound mode (a 1 ms sleep after each consume), 500,
//! 5,000 or 50,000 items. Printed, as in the paper's figures: total (wall), user and system time.
//!
//! The paper's buffer is a shared bounded queue. Here the bound is a credit protocol written
//! in `proto!`: every producer has one session with every consumer; a consumer opens each
//! session by granting credits, a producer spends one credit per item, and a producer out of
//! credit says so and waits until the consumer, having taken everything sent so far, grants
//! more. The buffer of 100 is split evenly over the 25 sessions (4 items each), so no more
//! than 100 items are ever in flight. Closing is the paper's: a producer that is done closes
//! (the `Close` message ends each of its sessions), and a consumer keeps taking items until
//! every session it has is closed.
//!
//! A consumer takes from its producers round-robin (`select!` over its sessions would serve
//! whichever producer is ready instead), and a producer deals its
//! items to the consumers round-robin, so every consumer gets items from every producer and the
//! waits form no cycle.
//!
//! Run: `cargo run --release --example producer_consumer [-- ITEMS...]` (default 500 5000;
//! the paper's largest run is 50000, about 10 s per mode).

use std::collections::VecDeque;
use std::thread;
use std::time::{Duration, Instant};

pipes::proto! {
    /// One producer's session with one consumer, written from the producer's side.
    pub credit {
        /// The producer waits for credits before it may send.
        Waiting: recv<T: Send> {
            Credit(u32) -> Open<T>,
        }
        /// The producer sends items while it has credit, says when it has none left, or
        /// closes.
        Open: send<T: Send> {
            Item(T) -> Open<T>,
            OutOfCredit -> Waiting<T>,
            Close -> !,
        }
    }
}

/// Where the simulated latency goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// A sleep before each produce: consumers wait on an empty buffer.
    IoBound,
    /// A sleep after each consume: producers wait on a full buffer.
    ComputeBound,
}

/// The shape of a run.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// Producer threads.
    pub producers: usize,
    /// Consumer threads.
    pub consumers: usize,
    /// Items in flight at most, over all sessions.
    pub buffer: usize,
    /// Items produced in all.
    pub items: u64,
    /// Where the latency goes.
    pub mode: Mode,
    /// The simulated latency (the paper's 1 ms).
    pub latency: Duration,
}

impl Config {
    /// The paper's setup: 5 producers, 5 consumers, a buffer of 100, a 1 ms latency.
    pub fn paper(items: u64, mode: Mode) -> Self {
        Config {
            producers: 5,
            consumers: 5,
            buffer: 100,
            items,
            mode,
            latency: Duration::from_millis(1),
        }
    }

    /// The credits of one session: the buffer split evenly, at least one.
    pub fn credits(&self) -> u32 {
        (self.buffer / (self.producers * self.consumers)).max(1) as u32
    }
}

/// What the consumers took, in all and one by one.
#[derive(Debug)]
pub struct Consumed {
    /// Items taken.
    pub count: u64,
    /// The sum of the items taken.
    pub sum: u64,
    /// Items taken by each consumer.
    pub per_consumer: Vec<u64>,
    /// Wall time of the run.
    pub elapsed: Duration,
}

/// A producer: items `index`, `index + producers`, ... below `items`, dealt round-robin to its
/// sessions (one per consumer).
fn produce(index: usize, config: Config, sessions: Vec<credit::client::Waiting<u64>>) {
    // Each session starts with the consumer's grant.
    // Each endpoint is consumed by every send, so a slot is empty while its next state is
    // being made.
    let mut links: Vec<Option<(credit::client::Open<u64>, u32)>> = sessions
        .into_iter()
        .map(|waiting| {
            let credit::Waiting::Credit(credits, open) = waiting.recv().expect("a consumer grants");
            Some((open, credits))
        })
        .collect();
    let mine = (index as u64..config.items).step_by(config.producers);
    for (k, item) in mine.enumerate() {
        if config.mode == Mode::IoBound {
            thread::sleep(config.latency);
        }
        let slot = &mut links[k % config.consumers];
        let (mut open, mut credits) = slot.take().expect("every slot is refilled");
        if credits == 0 {
            // Out of credit: say so and wait for the consumer to grant more.
            let waiting = open.out_of_credit().expect("the consumer is running");
            let credit::Waiting::Credit(granted, next) =
                waiting.recv().expect("the consumer grants");
            (open, credits) = (next, granted);
        }
        *slot = Some((
            open.item(item).expect("the consumer is running"),
            credits - 1,
        ));
    }
    // Done: close every session, as the paper's producers close the buffer.
    for (open, _) in links.into_iter().flatten() {
        open.close().expect("the consumer is running");
    }
}

/// A consumer: grants every session its credits, then takes items round-robin until every
/// producer has closed. Returns (items, their sum).
fn consume(config: Config, sessions: Vec<credit::server::Waiting<u64>>) -> (u64, u64) {
    let credits = config.credits();
    let mut links: VecDeque<credit::server::Open<u64>> = sessions
        .into_iter()
        .map(|waiting| waiting.credit(credits).expect("the producer is running"))
        .collect();
    let (mut count, mut sum) = (0, 0);
    while let Some(mut link) = links.pop_front() {
        loop {
            match link.recv().expect("a producer closes before it goes") {
                credit::Open::Item(item, next) => {
                    count += 1;
                    sum += item;
                    if config.mode == Mode::ComputeBound {
                        thread::sleep(config.latency);
                    }
                    links.push_back(next);
                    break;
                }
                // Everything this producer sent has been taken: its buffer is empty again.
                credit::Open::OutOfCredit(waiting) => {
                    link = waiting.credit(credits).expect("the producer is waiting");
                }
                // Closed: this session is over and leaves the rotation.
                credit::Open::Close => break,
            }
        }
    }
    (count, sum)
}

/// Runs producers and consumers to completion.
pub fn run(config: Config) -> Consumed {
    // sessions[p][c]: the session of producer p with consumer c.
    let mut producer_ends: Vec<Vec<_>> = (0..config.producers).map(|_| Vec::new()).collect();
    let mut consumer_ends: Vec<Vec<_>> = (0..config.consumers).map(|_| Vec::new()).collect();
    for ends in &mut producer_ends {
        for consumer in &mut consumer_ends {
            let (server, client) = credit::init::<u64>();
            ends.push(client);
            consumer.push(server);
        }
    }
    let start = Instant::now();
    let consumers: Vec<_> = consumer_ends
        .into_iter()
        .map(|sessions| thread::spawn(move || consume(config, sessions)))
        .collect();
    let producers: Vec<_> = producer_ends
        .into_iter()
        .enumerate()
        .map(|(index, sessions)| thread::spawn(move || produce(index, config, sessions)))
        .collect();
    for producer in producers {
        producer.join().expect("a producer");
    }
    let mut consumed = Consumed {
        count: 0,
        sum: 0,
        per_consumer: Vec::new(),
        elapsed: Duration::ZERO,
    };
    for consumer in consumers {
        let (count, sum) = consumer.join().expect("a consumer");
        consumed.count += count;
        consumed.sum += sum;
        consumed.per_consumer.push(count);
    }
    consumed.elapsed = start.elapsed();
    consumed
}

/// User and system CPU time of this process so far, as the paper's `time` reports them.
fn cpu_times() -> (Duration, Duration) {
    // SAFETY: `getrusage` only writes the `rusage` struct it is given, which is plain data
    // for which all-zero bytes are a valid value.
    let usage = unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        libc::getrusage(libc::RUSAGE_SELF, &mut usage);
        usage
    };
    let time = |t: libc::timeval| {
        Duration::from_secs(t.tv_sec as u64) + Duration::from_micros(t.tv_usec as u64)
    };
    (time(usage.ru_utime), time(usage.ru_stime))
}

/// Runs one configuration, checks that every item was consumed exactly once, prints the times.
pub fn report(config: Config) -> Consumed {
    let (user_before, system_before) = cpu_times();
    let consumed = run(config);
    let (user_after, system_after) = cpu_times();
    assert_eq!(consumed.count, config.items);
    assert_eq!(
        consumed.sum,
        config.items * config.items.saturating_sub(1) / 2
    );
    println!(
        "producer-consumer {:<13} {:>6} items: total {:7.3} s, user {:6.3} s, system {:6.3} s",
        format!("{:?}:", config.mode),
        config.items,
        consumed.elapsed.as_secs_f64(),
        (user_after - user_before).as_secs_f64(),
        (system_after - system_before).as_secs_f64(),
    );
    consumed
}

fn main() {
    let mut sizes: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("item counts are numbers"))
        .collect();
    if sizes.is_empty() {
        sizes = vec![500, 5_000];
    }
    for mode in [Mode::IoBound, Mode::ComputeBound] {
        for &items in &sizes {
            report(Config::paper(items, mode));
        }
    }
}

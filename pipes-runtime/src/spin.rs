//! Waiting: a receiver that finds nothing spins for a while, then parks its thread; how long it
//! spins can be turned down for the whole process with [`set_spin_limit`].
//!
//! On the machines pipes is measured on, a park and wake of a thread costs tens of
//! microseconds, while a spin that catches the message costs a cache-line round trip (about
//! 150 ns). So every blocking receive (and select, and port set receive) first spins, bounded
//! by *time*, at most 200 µs, and adapted per thread: longer while spins pay off, shorter while
//! they do not. After the first half microsecond the spin also yields the CPU, so with more
//! ready threads than cores the sender it waits for can run.
//!
//! That makes a hand-off between two threads fast, and costs CPU: a receiver that waits 20-150
//! µs at a time burns most of a core meanwhile. Programs that would rather give those cycles to
//! other work turn the spin down, or off:
//!
//! ```
//! # use pipes_runtime as pipes;
//! use std::time::Duration;
//!
//! // Park as soon as nothing is there: slower hand-offs, no spinning.
//! pipes::spin::set_spin_limit(Duration::ZERO);
//! # pipes::spin::set_spin_limit(Duration::MAX);
//! ```
//!
//! The `spin off` row of `benches/pingpong.rs` measures the difference on your machine. Async
//! receives never spin: a pending future returns `Pending` at once.
//!
//! One more pause, for throughput: a blocking receive (of a port, or a port set serving one
//! busy port) that keeps finding its stream empty and the next message there a look later is
//! chasing a sender that sends flat out. Its looks would make every send take the cache line
//! back; so it stops looking for a microsecond and takes what came as one batch (one sender
//! into a port: ~25 ns a message before, ~8 after). Round trips never pause, and
//! [`set_spin_limit`]`(Duration::ZERO)` turns this off too.
//!
//! And one for senders: a [`SharedChan`](crate::SharedChan) sender whose sends keep landing
//! right after other senders' yields its core once every 32 such sends. Senders that send at
//! the same moment take the chan's tail from each other on every send; with more senders than
//! cores, taking turns is faster (four senders on two cores: 25 ms for 10^6 messages before,
//! 14 after). One sender alone never yields.

// Implementation: a spin bounded by a count (as crossbeam's `Backoff`) gives up after ~2 µs and
// then pays the park on a good share of round trips; a spin bounded by time on the order of the
// wake cost almost never does. Spinning that long on a receiver that is idle for seconds would
// burn a core, so the budget adapts: each thread doubles it when a spin paid off and cuts it by
// an eighth when it did not, between `MIN_BUDGET` and `MAX_BUDGET`. The cut is gentle on
// purpose: a few slow hand-offs (thread start-up, a busy machine) must not tip a ring of threads
// into parking on every hop, where each hop then costs a kernel wake and every later spin fails
// too. After the first `PAUSE_PHASE` the spin yields the CPU between checks.

use std::cell::Cell;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

/// The process-wide cap on every thread's budget, in nanoseconds: [`MAX_BUDGET`] unless
/// [`set_spin_limit`] turned it down. Plain configuration, not part of any wait's protocol.
static LIMIT_NANOS: AtomicU32 = AtomicU32::new(MAX_BUDGET.as_nanos() as u32);

/// Caps how long a receiver that finds nothing spins before it parks, for the whole process
/// (at most 200 µs, the default; `Duration::ZERO` parks at once).
///
/// Spinning is what makes a hand-off between threads fast: on a machine where a park and wake
/// costs tens of microseconds, a receiver that spins through the wait takes the message within
/// a cache-line round trip instead. The price is CPU: a receiver that waits 20-150 µs at a
/// time burns most of a core while it does. Each thread adapts its own spin (longer when spins
/// pay off, shorter when they do not); this caps it, for programs that would rather give the
/// cores to other work than win latency. Measured in `benches/pingpong.rs` (`spin off` rows).
pub fn set_spin_limit(limit: Duration) {
    let nanos = limit.min(MAX_BUDGET).as_nanos() as u32;
    LIMIT_NANOS.store(nanos, Ordering::Relaxed);
}

/// The longest a receiver spins. Longer than one park and wake (tens of µs) on purpose: a
/// thread in a ring waits for the message to go round every other thread, and a budget shorter
/// than that wait once hops have slowed to a park each can never succeed again, so the ring stays
/// parking on every hop (8 threads on 2 cores: 13.7 µs a hop with 50 µs here, 3.5 µs with 200).
#[cfg_attr(loom, allow(dead_code))]
pub(crate) const MAX_BUDGET: Duration = Duration::from_micros(200);
/// The shortest spin, kept for receivers whose spins have not been paying off.
#[cfg_attr(loom, allow(dead_code))]
pub(crate) const MIN_BUDGET: Duration = Duration::from_micros(1);
/// How long to spin on `pause` alone before also yielding to other threads. Short: with more
/// threads than cores, the thread a spinner waits for may be queued behind it (an 8-thread ring
/// moved a message in 1.42 µs with 4 µs here, 0.58 µs with 0.5 µs).
#[cfg_attr(loom, allow(dead_code))]
const PAUSE_PHASE: Duration = Duration::from_nanos(500);
/// Checks between two reads of the clock (`Instant::now` costs ~20 ns; a check a few).
#[cfg_attr(loom, allow(dead_code))]
const CHECKS_PER_CLOCK_READ: u32 = 32;

#[cfg(not(loom))]
thread_local! {
    /// This thread's current budget in nanoseconds.
    static BUDGET_NANOS: std::cell::Cell<u32> = const { std::cell::Cell::new(MAX_BUDGET.as_nanos() as u32) };
}

/// Spins until `ready()` returns true, the thread's budget is spent, or `deadline` passes.
/// Returns whether `ready()` became true, and adapts the budget to the outcome.
#[cfg(not(loom))]
pub(crate) fn spin_until(deadline: Option<Instant>, mut ready: impl FnMut() -> bool) -> bool {
    // A wait inside a thread-local's destructor spins for the longest budget and adapts nothing.
    let limit = LIMIT_NANOS.load(Ordering::Relaxed);
    if limit == 0 {
        return ready();
    }
    let budget = Duration::from_nanos(u64::from(
        BUDGET_NANOS
            .try_with(std::cell::Cell::get)
            .unwrap_or(MAX_BUDGET.as_nanos() as u32)
            .min(limit),
    ));
    let start = Instant::now();
    let mut end = start + budget;
    if let Some(deadline) = deadline {
        end = end.min(deadline);
    }
    let pause_end = start + PAUSE_PHASE;
    let ready = 'spin: loop {
        for _ in 0..CHECKS_PER_CLOCK_READ {
            if ready() {
                break 'spin true;
            }
            std::hint::spin_loop();
        }
        let now = Instant::now();
        if now >= end {
            break false;
        }
        if now >= pause_end {
            std::thread::yield_now();
        }
    };
    let budget = if ready { budget * 2 } else { budget * 7 / 8 };
    let _ = BUDGET_NANOS.try_with(|nanos| {
        nanos.set(budget.clamp(MIN_BUDGET, MAX_BUDGET).as_nanos() as u32);
    });
    ready
}

/// Spins for at most `duration` (and no longer than [`set_spin_limit`] allows) until `ready()`
/// returns true; returns whether it did. A short, fixed spin that leaves the thread's adaptive
/// budget alone: for a wait that is likely to end within it. Reads the clock once per 8 checks.
#[cfg(not(loom))]
pub(crate) fn linger(duration: Duration, mut ready: impl FnMut() -> bool) -> bool {
    let limit = Duration::from_nanos(u64::from(LIMIT_NANOS.load(Ordering::Relaxed)));
    let end = Instant::now() + duration.min(limit);
    // Pauses between checks double up to 64: each check reads the sender's cache line, and a
    // sender that must take the line back for every message it sends goes slower for it.
    let mut pauses = 1;
    loop {
        for _ in 0..8 {
            if ready() {
                return true;
            }
            for _ in 0..pauses {
                std::hint::spin_loop();
            }
            pauses = (pauses * 2).min(64);
        }
        if Instant::now() >= end {
            return false;
        }
    }
}

/// Catch-ups in a row after which a receiver lets its sender run ahead (see [`Chase`]).
const CHASING: u8 = 4;

/// How long a receiver that keeps catching up with its sender lets it run ahead: a sender
/// sending flat out queues dozens of messages meanwhile, taken then as one batch.
const RUN_AHEAD: Duration = Duration::from_micros(1);

/// A receiver's record of catching up with a sender that sends flat out.
///
/// A receiver faster than its sender finds the stream empty after nearly every message, and
/// the next one there a look later. Each of those looks reads the line the sender publishes
/// on, so every send has to take the line back first: one sender into one port ran at a third
/// of its own speed (~25 ns a message against ~8 with the receiver out of its way). After
/// [`CHASING`] such catch-ups in a row the receiver stops looking for [`RUN_AHEAD`] before the
/// next look, and takes what came meanwhile as one batch. A round trip never has its reply a
/// look after finding nothing (the reply is a cache-line round trip away), so it never pauses.
#[derive(Debug, Default)]
pub(crate) struct Chase(Cell<u8>);

impl Chase {
    /// After a receive found nothing: whether `ready` finds a message a moment later (after
    /// the pause, when chasing). `false` ends the chase: the caller waits as usual.
    pub(crate) fn caught_up(&self, mut ready: impl FnMut() -> bool) -> bool {
        let caught_up = self.0.get();
        if caught_up == CHASING {
            pause_for(RUN_AHEAD);
        }
        if !ready() {
            self.0.set(0);
            return false;
        }
        self.0.set((caught_up + 1).min(CHASING));
        true
    }

    /// Whether the next catch-up pauses first.
    #[cfg(all(test, not(loom)))]
    fn chasing(&self) -> bool {
        self.0.get() == CHASING
    }
}

/// Claims, each right after another producer's, after which a producer gives way (see
/// [`give_way`]). 8 and 32 measured alike; resetting the count at an uncrowded claim measured
/// slower (W = 16: 15-25 ms against 14).
const CROWDED_CLAIMS: u32 = 32;

/// How many claims of other producers may come between two of a producer's and still count as
/// crowding it: a thread that sends now and then, among others that do too, is rarely within it.
const CROWD: usize = 64;

/// A producer's record of its claims in the queue it pushed to last.
#[derive(Clone, Copy, Debug, Default)]
struct Claims {
    /// The queue (its address), its last claim there, and its crowded claims since it last
    /// gave way.
    queue: usize,
    last: usize,
    crowded: u32,
}

#[cfg(not(loom))]
thread_local! {
    /// This thread's claims.
    static CLAIMS: Cell<Claims> = const { Cell::new(Claims { queue: 0, last: 0, crowded: 0 }) };
}

/// After a producer claimed `claim` in the shared queue at address `queue` (claims count up by
/// one across all its producers) and published it: yields the thread's core once every
/// [`CROWDED_CLAIMS`] claims that came right after other producers' (within [`CROWD`] of its
/// own last in that queue).
///
/// Producers that push at the same moment each take the queue's tail line from the other on
/// every claim: with more producers than cores, four senders into one shared chan spent half
/// their CPU there (25 ms for 10^6 messages, 14 ms with this). A producer that gives way lets
/// another, or the receiver, run on its core from its own cache. One producer alone never
/// gives way: each of its claims follows its last.
// Inlined: as a call, the bookkeeping cost one producer alone ~10% (10^6 messages, medians of
// six runs: 12.4 ms against 11.3 without it, 11.4 inlined).
#[cfg(not(loom))]
#[inline(always)]
pub(crate) fn give_way(queue: usize, claim: usize) {
    // A send from a thread-local's destructor: nothing to remember, so never yield.
    if CLAIMS
        .try_with(|claims| crowded(claims, queue, claim))
        .unwrap_or(false)
    {
        std::thread::yield_now();
    }
}

/// Records `claim` in `queue` in a producer's `claims`; whether it should give way now.
#[cfg_attr(loom, allow(dead_code))]
#[inline(always)]
fn crowded(claims: &Cell<Claims>, queue: usize, claim: usize) -> bool {
    let record = claims.get();
    // Claims in another queue than the last say nothing about this one's crowd.
    let others = if record.queue == queue {
        claim.wrapping_sub(record.last).wrapping_sub(1)
    } else {
        0
    };
    let mut crowded = record.crowded + u32::from(others != 0 && others < CROWD);
    let give_way = crowded == CROWDED_CLAIMS;
    if give_way {
        crowded = 0;
    }
    claims.set(Claims {
        queue,
        last: claim,
        crowded,
    });
    give_way
}

/// Under loom a producer never gives way: a yield changes no interleaving loom explores.
#[cfg(loom)]
pub(crate) fn give_way(_queue: usize, _claim: usize) {}

/// Spins, checking nothing, for `duration` (no longer than [`set_spin_limit`] allows).
#[cfg(not(loom))]
fn pause_for(duration: Duration) {
    let limit = Duration::from_nanos(u64::from(LIMIT_NANOS.load(Ordering::Relaxed)));
    let duration = duration.min(limit);
    if duration.is_zero() {
        return;
    }
    let end = Instant::now() + duration;
    while Instant::now() < end {
        for _ in 0..8 {
            std::hint::spin_loop();
        }
    }
}

/// Under loom a pause is nothing: it changes no interleaving loom explores.
#[cfg(loom)]
fn pause_for(_duration: Duration) {}

/// Under loom a linger is one check, as a spin is.
#[cfg(loom)]
pub(crate) fn linger(_duration: Duration, mut ready: impl FnMut() -> bool) -> bool {
    ready()
}

/// Under loom a spin is one check: spinning only multiplies the interleavings to explore, and
/// parking covers every outcome a spin could have.
#[cfg(loom)]
pub(crate) fn spin_until(_deadline: Option<Instant>, mut ready: impl FnMut() -> bool) -> bool {
    ready()
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn budget_shrinks_when_spins_fail_and_grows_when_they_pay() {
        std::thread::spawn(|| {
            for _ in 0..40 {
                assert!(!spin_until(None, || false));
            }
            assert_eq!(BUDGET_NANOS.get(), MIN_BUDGET.as_nanos() as u32);
            for _ in 0..10 {
                assert!(spin_until(None, || true));
            }
            assert_eq!(BUDGET_NANOS.get(), MAX_BUDGET.as_nanos() as u32);
        })
        .join()
        .unwrap();
    }

    #[test]
    fn a_receiver_chases_only_after_catching_up_in_a_row() {
        let chase = Chase::default();
        for _ in 0..CHASING {
            assert!(!chase.chasing());
            assert!(chase.caught_up(|| true));
        }
        assert!(chase.chasing(), "caught up {CHASING} times in a row");
        assert!(chase.caught_up(|| true));
        assert!(
            chase.chasing(),
            "a chase lasts while the sender keeps sending"
        );
        // A look that finds nothing (a round trip's reply, a sender that stopped) ends it.
        assert!(!chase.caught_up(|| false));
        assert!(!chase.chasing());
        for _ in 0..CHASING - 1 {
            assert!(chase.caught_up(|| true));
        }
        assert!(!chase.caught_up(|| false));
        assert!(!chase.chasing(), "catch-ups must come in a row");
    }

    #[test]
    fn a_producer_gives_way_when_other_producers_keep_claiming_between_its_claims() {
        const QUEUE: usize = 0x1000;
        let gave_way = |claims: &Cell<Claims>, from: usize, every: usize| {
            (0..1000)
                .filter(|i| crowded(claims, QUEUE, from.wrapping_add(i * every)))
                .count()
        };
        let claims = Cell::default();
        assert_eq!(
            gave_way(&claims, 1, 1),
            0,
            "alone: each claim follows the last"
        );
        assert_eq!(
            gave_way(&claims, 2000, CROWD + 1),
            0,
            "claims far apart: a thread that sends now and then"
        );
        // Another producer's claim between each two (all but the first of the run, which comes
        // long after the last): once every 32.
        let every = CROWDED_CLAIMS as usize;
        assert_eq!(gave_way(&claims, 100_000, 2), 999 / every);
        // The count survives claims in a row: a crowded producer's claims come in short runs.
        let claims = Cell::default();
        assert_eq!(gave_way(&claims, 1, 2), 999 / every);
        let left = claims.get().crowded;
        assert_eq!(gave_way(&claims, 2001, 1), 0);
        assert_eq!(
            claims.get().crowded,
            left + 1,
            "the first of the run came after others'"
        );
        // Claims wrap.
        let claims = Cell::new(Claims {
            queue: QUEUE,
            last: usize::MAX - 100,
            crowded: 0,
        });
        assert_eq!(gave_way(&claims, usize::MAX - 98, 2), 1000 / every);
        // A thread that sends into two queues in turn: their claims are unrelated numbers, close
        // or not, and count for nothing.
        let claims = Cell::default();
        for claim in 0..1000 {
            assert!(!crowded(&claims, QUEUE, claim * 2));
            assert!(!crowded(&claims, QUEUE + 64, claim * 2 + 1));
        }
        assert_eq!(claims.get().crowded, 0);
    }

    #[test]
    fn spin_gives_up_at_a_passed_deadline_and_reports_readiness() {
        assert!(!spin_until(Some(Instant::now()), || false));
        // Ready within the first round of checks, before the clock is read at all.
        let mut checks = 0;
        assert!(spin_until(None, || {
            checks += 1;
            checks == 3
        }));
    }
}

//! The multi-producer queue behind shared chans, through its API (`__queue`): order (per
//! producer, and across producers whose pushes are ordered by a happens-before), both closes,
//! every value dropped exactly once (zero-sized ones too, and around a payload whose `Drop`
//! panics), a blocking consumer woken through the wake hook, and a stress run of 16 producers
//! (smaller under Miri). `Tx`/`Rx` below are a minimal channel over the queue that follows the
//! hook's contract: what an integration does, in forty lines.

mod common;
use common::bombs::quiet_bombs;
use common::{Counted, DropCounter, size};

use std::marker::PhantomData;
use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, mpsc};
use std::thread::{self, Thread};

use pipes_runtime::__queue::{Pop, Queue};

/// What both ends share: the queue and where the consumer registers its thread.
struct Shared<T> {
    queue: Queue<T>,
    waiter: Mutex<Option<Thread>>,
}

impl<T> Shared<T> {
    /// Signals the consumer: a push or the last `remove_sender` returned `true`.
    fn signal(&self) {
        if let Some(consumer) = self.waiter.lock().unwrap().as_ref() {
            consumer.unpark();
        }
    }
}

/// A producer: a clone registers, a drop unregisters.
struct Tx<T>(Arc<Shared<T>>);

/// The consumer: `!Sync`, and the only one per queue, so the queue's consumer contract holds.
struct Rx<T>(Arc<Shared<T>>, PhantomData<std::cell::Cell<()>>);

fn channel<T>() -> (Tx<T>, Rx<T>) {
    let shared = Arc::new(Shared {
        queue: Queue::new(),
        waiter: Mutex::new(None),
    });
    (Tx(shared.clone()), Rx(shared, PhantomData))
}

impl<T> Tx<T> {
    fn send(&self, value: T) -> Result<(), T> {
        if self.0.queue.push(value)? {
            self.0.signal();
        }
        Ok(())
    }
}

impl<T> Clone for Tx<T> {
    fn clone(&self) -> Self {
        self.0.queue.add_sender();
        Tx(self.0.clone())
    }
}

impl<T> Drop for Tx<T> {
    fn drop(&mut self) {
        if self.0.queue.remove_sender() {
            self.0.signal();
        }
    }
}

impl<T> Rx<T> {
    fn try_recv(&self) -> Pop<T> {
        // SAFETY: `Rx` is the queue's only consumer, `!Sync`, and closes only in its drop.
        unsafe { self.0.queue.pop() }
    }

    /// Blocks for the next message; `None` once every `Tx` is gone and the queue is drained.
    fn recv(&self) -> Option<T> {
        loop {
            match self.try_recv() {
                Pop::Message(value) => return Some(value),
                Pop::Closed => return None,
                Pop::Empty => {}
            }
            *self.0.waiter.lock().unwrap() = Some(thread::current());
            // SAFETY: as in `try_recv`.
            if unsafe { self.0.queue.arm() } {
                // Unpark tokens make a signal sent before this park count; wakes may be
                // spurious: the loop pops again either way.
                thread::park();
            }
        }
    }
}

impl<T> Drop for Rx<T> {
    fn drop(&mut self) {
        // SAFETY: as in `try_recv`; nothing of the consumer's runs after this.
        unsafe { self.0.queue.close() };
    }
}

fn drain<T>(rx: &Rx<T>) -> Vec<T> {
    let mut got = Vec::new();
    while let Pop::Message(value) = rx.try_recv() {
        got.push(value);
    }
    got
}

#[test]
fn one_producer_is_popped_in_push_order_across_segments() {
    let (tx, rx) = channel();
    for i in 0..1000 {
        tx.send(i.to_string()).unwrap();
    }
    let got = drain(&rx);
    assert_eq!(got, (0..1000).map(|i| i.to_string()).collect::<Vec<_>>());
    assert!(matches!(rx.try_recv(), Pop::Empty));
}

/// Producer A pushes `k`, then hands a token to producer B, which pushes `k` only after it
/// took the token: A's push happens before B's, so the consumer must pop A's first.
#[test]
fn a_push_that_happens_before_another_is_popped_first() {
    let rounds = size(20_000, 200);
    let (tx, rx) = channel::<(char, usize)>();
    let (token_tx, token_rx) = mpsc::channel();
    let a = {
        let tx = tx.clone();
        thread::spawn(move || {
            for k in 0..rounds {
                tx.send(('a', k)).unwrap();
                token_tx.send(()).unwrap();
            }
        })
    };
    let b = {
        let tx = tx.clone();
        thread::spawn(move || {
            for k in 0..rounds {
                token_rx.recv().unwrap();
                tx.send(('b', k)).unwrap();
            }
        })
    };
    // A third producer, unordered, keeps segments busy between them.
    let noise = {
        let tx = tx.clone();
        thread::spawn(move || {
            for k in 0..rounds {
                tx.send(('n', k)).unwrap();
            }
        })
    };
    drop(tx);
    let (mut a_popped, mut b_popped) = (0, 0);
    while let Some((who, k)) = rx.recv() {
        match who {
            'a' => {
                assert_eq!(k, a_popped);
                a_popped += 1;
            }
            'b' => {
                assert_eq!(k, b_popped);
                assert!(k < a_popped, "b's {k} popped before a's");
                b_popped += 1;
            }
            _ => {}
        }
    }
    assert_eq!((a_popped, b_popped), (rounds, rounds));
    for producer in [a, b, noise] {
        producer.join().unwrap();
    }
}

#[test]
fn the_last_producer_closes_after_every_message() {
    let (tx, rx) = channel();
    let producers: Vec<_> = (0..4)
        .map(|p| {
            let tx = tx.clone();
            thread::spawn(move || {
                for i in 0..100 {
                    tx.send(p * 1000 + i).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let mut got = Vec::new();
    while let Some(value) = rx.recv() {
        got.push(value);
    }
    got.sort();
    let mut want: Vec<_> = (0..4)
        .flat_map(|p| (0..100).map(move |i| p * 1000 + i))
        .collect();
    want.sort();
    assert_eq!(got, want);
    assert!(matches!(rx.try_recv(), Pop::Closed), "stays closed");
    for producer in producers {
        producer.join().unwrap();
    }
}

#[test]
fn a_blocked_consumer_is_woken_by_a_push_and_by_the_last_producer() {
    let (tx, rx) = channel();
    let consumer = thread::spawn(move || (rx.recv(), rx.recv()));
    thread::sleep(common::SETTLE);
    tx.send(7u8).unwrap();
    thread::sleep(common::SETTLE);
    drop(tx);
    assert_eq!(consumer.join().unwrap(), (Some(7), None));
}

#[test]
fn a_consumer_close_drops_the_backlog_once_and_hands_later_pushes_back() {
    let drops = DropCounter::default();
    let (tx, rx) = channel();
    for i in 0..100 {
        tx.send(drops.make(i)).unwrap();
    }
    assert_eq!(rx.recv().map(|c| c.value), Some(0));
    assert_eq!(drops.drops(), 1);
    drop(rx);
    assert_eq!(drops.drops(), 100, "the backlog is dropped by the close");
    let back = tx.send(drops.make(100)).unwrap_err();
    assert_eq!(back.value, 100);
    assert_eq!(drops.drops(), 100, "handed back, not dropped");
    drop(back);
    drop(tx);
    assert_eq!(drops.drops(), 101);
}

#[test]
fn dropping_the_queue_drops_the_backlog_once() {
    let drops = DropCounter::default();
    let queue = Queue::new();
    for i in 0..100 {
        queue.push(drops.make(i)).unwrap();
    }
    // SAFETY: this test is the only consumer.
    let Pop::Message(first) = (unsafe { queue.pop() }) else {
        panic!("a message was pushed");
    };
    assert_eq!(first.value, 0);
    drop(first);
    assert!(!queue.remove_sender(), "nobody waits");
    drop(queue);
    assert_eq!(drops.drops(), 100);
}

#[test]
fn a_close_racing_producers_drops_or_hands_back_each_value_exactly_once() {
    for _ in 0..size(50, 3) {
        let drops = DropCounter::default();
        let handed_back = Arc::new(AtomicUsize::new(0));
        let (tx, rx) = channel();
        let producers: Vec<_> = (0..4)
            .map(|_| {
                let (tx, drops, handed_back) = (tx.clone(), drops.clone(), handed_back.clone());
                thread::spawn(move || {
                    for i in 0..size(2_000, 50) as u64 {
                        if tx.send(drops.make(i)).is_err() {
                            handed_back.fetch_add(1, Ordering::SeqCst);
                        }
                    }
                })
            })
            .collect();
        drop(tx);
        let received = drain(&rx).len();
        drop(rx);
        for producer in producers {
            producer.join().unwrap();
        }
        // Each value: received (dropped above), dropped by the close, or handed back (and
        // dropped by its producer): all `4 * n` dropped, none twice.
        assert_eq!(drops.drops(), 4 * size(2_000, 50));
        assert!(received + handed_back.load(Ordering::SeqCst) <= 4 * size(2_000, 50));
    }
}

#[test]
fn zero_sized_payloads() {
    static DROPS: AtomicUsize = AtomicUsize::new(0);
    #[derive(Debug)]
    struct Unit;
    impl Drop for Unit {
        fn drop(&mut self) {
            DROPS.fetch_add(1, Ordering::SeqCst);
        }
    }
    let (tx, rx) = channel();
    for _ in 0..300 {
        tx.send(Unit).unwrap();
    }
    assert_eq!(drain(&rx).len(), 300);
    assert_eq!(DROPS.load(Ordering::SeqCst), 300);
    for _ in 0..300 {
        tx.send(Unit).unwrap();
    }
    drop(rx);
    assert_eq!(DROPS.load(Ordering::SeqCst), 600);
    let (tx, rx) = channel::<()>();
    tx.send(()).unwrap();
    drop(tx);
    assert_eq!(rx.recv(), Some(()));
    assert_eq!(rx.recv(), None);
}

/// A payload whose `Drop` panics (after its counted field is dropped by the unwinding glue).
struct Bomb {
    _counted: Counted,
    panics: bool,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.panics {
            panic!("bomb in the queue");
        }
    }
}

fn backlog_with_a_bomb(drops: &DropCounter, push: impl Fn(Bomb)) {
    for i in 0..100 {
        push(Bomb {
            _counted: drops.make(i),
            panics: i == 40,
        });
    }
}

#[test]
fn a_payload_whose_drop_panics_in_a_consumer_close_leaks_nothing_else() {
    quiet_bombs();
    let drops = DropCounter::default();
    let (tx, rx) = channel();
    backlog_with_a_bomb(&drops, |bomb| tx.send(bomb).map_err(drop).unwrap());
    let caught = panic::catch_unwind(AssertUnwindSafe(|| drop(rx)));
    assert!(caught.is_err(), "the bomb's panic is resumed");
    assert_eq!(drops.drops(), 100);
    assert!(
        tx.send(Bomb {
            _counted: drops.make(100),
            panics: false
        })
        .is_err()
    );
}

#[test]
fn a_payload_whose_drop_panics_in_the_queues_drop_leaks_nothing_else() {
    quiet_bombs();
    let drops = DropCounter::default();
    let queue = Queue::new();
    backlog_with_a_bomb(&drops, |bomb| {
        queue.push(bomb).map_err(drop).unwrap();
    });
    let caught = panic::catch_unwind(AssertUnwindSafe(|| drop(queue)));
    assert!(caught.is_err(), "the bomb's panic is resumed");
    assert_eq!(drops.drops(), 100);
}

/// 16 producers, each value counted and each producer's order checked; the consumer blocks
/// through the wake hook. Then the same with a consumer that only spins on `pop`.
#[test]
fn stress_sixteen_producers() {
    for blocking in [true, false] {
        // Miri: 100 each, still 50 segments' worth; the consumer that only spins is what
        // costs there (625 each took a seventh of the Miri step).
        stress(16, size(100_000, 100), blocking);
    }
}

fn stress(producers: usize, each: usize, blocking: bool) {
    let (tx, rx) = channel::<(usize, usize)>();
    let threads: Vec<_> = (0..producers)
        .map(|p| {
            let tx = tx.clone();
            thread::spawn(move || {
                for i in 0..each {
                    tx.send((p, i)).unwrap();
                }
            })
        })
        .collect();
    drop(tx);
    let mut next = vec![0; producers];
    let mut total = 0;
    loop {
        let message = if blocking {
            rx.recv()
        } else {
            match rx.try_recv() {
                Pop::Message(message) => Some(message),
                Pop::Closed => None,
                Pop::Empty => {
                    thread::yield_now();
                    continue;
                }
            }
        };
        let Some((p, i)) = message else { break };
        assert_eq!(i, next[p], "producer {p} out of order");
        next[p] += 1;
        total += 1;
    }
    assert_eq!(total, producers * each);
    assert!(next.iter().all(|&n| n == each));
    for thread in threads {
        thread.join().unwrap();
    }
}

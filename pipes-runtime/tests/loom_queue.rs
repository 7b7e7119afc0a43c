//! Loom models of the multi-producer queue (`queue.rs`), with two-slot segments so a few
//! messages already link, retire and recycle segments: two producers racing across links with
//! a consumer that blocks through the wake hook (arm, park, the producer's signal); a producer
//! walking from a retired segment while the consumer recycles it; a push that happens before
//! another is popped first; a consumer close racing pushes, a link made by a helper, and the
//! last producer's close marker (each value dropped or handed back exactly once). Under loom
//! the queue also checks that every producer's visit to a segment happens before its
//! recycling (`Segment::touch`), and producers help with a link after one snooze, so both the
//! linker's and the helper's paths are explored. Models are bounded to three preemptions, the
//! two largest to two (three take minutes each; two already catch every mutation of the
//! orderings and conditions we tried); the file runs in under a minute. Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p pipes-runtime --test loom_queue --release`.
#![cfg(loom)]

use std::sync::atomic::{AtomicUsize, Ordering};

use loom::sync::Arc;
use loom::sync::atomic::AtomicBool;
use loom::thread::{self, Thread};
use pipes_runtime::__queue::{Pop, Queue};

/// A model bounded to `preemptions` preemptions (unbounded, the larger ones run for hours).
fn model(preemptions: usize, f: impl Fn() + Send + Sync + 'static) {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(preemptions);
    model.check(f);
}

/// Pushes and signals the consumer if the push says so (the wake hook's producer side).
fn send<T>(queue: &Queue<T>, consumer: &Thread, value: T) -> Result<(), T> {
    if queue.push(value)? {
        consumer.unpark();
    }
    Ok(())
}

/// Unregisters and signals the consumer if the close marker's slot was armed.
fn leave<T>(queue: &Queue<T>, consumer: &Thread) {
    if queue.remove_sender() {
        consumer.unpark();
    }
}

/// Blocks for the next message (the wake hook's consumer side): its waiter, the thread handle,
/// is known to producers before they start. A lost wake is a deadlock, which loom reports.
///
/// # Safety
///
/// The caller is the queue's only consumer and has not closed it.
unsafe fn recv<T>(queue: &Queue<T>) -> Option<T> {
    loop {
        // SAFETY: the caller's contract.
        match unsafe { queue.pop() } {
            Pop::Message(value) => return Some(value),
            Pop::Closed => return None,
            Pop::Empty => {}
        }
        // SAFETY: the caller's contract.
        if unsafe { queue.arm() } {
            thread::park();
        }
    }
}

/// Counts drops, so a model can check each value is dropped exactly once.
#[derive(Debug)]
struct Counted(std::sync::Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// Two producers push two messages each and leave: five positions over three segments, so
/// both cross links, one may walk from a stale tail segment, and the consumer recycles the
/// first segment while the last claimer may be taking the spare. Each producer's messages
/// arrive in order, then `Closed`.
#[test]
fn two_producers_cross_links_and_close_while_the_consumer_blocks() {
    model(2, || {
        let queue = Arc::new(Queue::new());
        queue.add_sender();
        let consumer = thread::current();
        let producers: Vec<_> = [10, 20]
            .into_iter()
            .map(|base| {
                let (queue, consumer) = (queue.clone(), consumer.clone());
                thread::spawn(move || {
                    send(&queue, &consumer, base).unwrap();
                    send(&queue, &consumer, base + 1).unwrap();
                    leave(&queue, &consumer);
                })
            })
            .collect();
        let mut got = Vec::new();
        // SAFETY: the only consumer.
        while let Some(value) = unsafe { recv(&queue) } {
            got.push(value);
        }
        let from = |base| got.iter().filter(move |&&v| v / 10 == base / 10).copied();
        assert_eq!(from(10).collect::<Vec<_>>(), [10, 11]);
        assert_eq!(from(20).collect::<Vec<_>>(), [20, 21]);
        for producer in producers {
            producer.join().unwrap();
        }
    });
}

/// Reclamation: A pushes positions 0, 2 and (later) 8; B pushes 4 and 6, and on its push of 4
/// moves `tail_segment` to the second segment and retires the first. A's third push is not
/// synchronized with B's except through `tail` itself, so it may walk from the first segment
/// while the consumer, having popped four messages, recycles it: the retiring RMW is what rules
/// that out (with a plain load there, loom reports the recycle racing A's visit).
#[test]
fn a_producer_walking_from_a_retired_segment_keeps_it_from_being_recycled() {
    model(2, || {
        let queue = Arc::new(Queue::new());
        queue.add_sender();
        let consumer = thread::current();
        let pushes = |values: &'static [u32]| {
            let (queue, consumer) = (queue.clone(), consumer.clone());
            thread::spawn(move || {
                for &value in values {
                    send(&queue, &consumer, value).unwrap();
                }
            })
        };
        let a = pushes(&[10, 11, 12]);
        let b = pushes(&[20, 21]);
        let mut got = Vec::new();
        for _ in 0..5 {
            // SAFETY: the only consumer.
            got.push(unsafe { recv(&queue) }.unwrap());
        }
        let from = |tens| got.iter().filter(move |&&v| v / 10 == tens).count();
        assert_eq!((from(1), from(2)), (3, 2));
        for tens in [1, 2] {
            let mine: Vec<_> = got.iter().filter(|&&v| v / 10 == tens).collect();
            assert!(mine.is_sorted(), "{got:?}");
        }
        a.join().unwrap();
        b.join().unwrap();
    });
}

/// Producer A pushes 1 and then raises a flag; B pushes 2 if it saw the flag (its push then
/// happens after A's), else 3. Whenever 2 is popped, 1 was popped before it.
#[test]
fn a_push_that_happens_before_another_is_popped_first() {
    model(3, || {
        let queue = Arc::new(Queue::new());
        queue.add_sender();
        let flag = Arc::new(AtomicBool::new(false));
        let consumer = thread::current();
        let a = {
            let (queue, flag, consumer) = (queue.clone(), flag.clone(), consumer.clone());
            thread::spawn(move || {
                send(&queue, &consumer, 1).unwrap();
                flag.store(true, Ordering::Release);
                leave(&queue, &consumer);
            })
        };
        let b = {
            let (queue, consumer) = (queue.clone(), consumer.clone());
            thread::spawn(move || {
                let value = if flag.load(Ordering::Acquire) { 2 } else { 3 };
                send(&queue, &consumer, value).unwrap();
                leave(&queue, &consumer);
            })
        };
        let mut got = Vec::new();
        // SAFETY: the only consumer.
        while let Some(value) = unsafe { recv(&queue) } {
            got.push(value);
        }
        assert_eq!(got.len(), 2);
        if got.contains(&2) {
            assert_eq!(got, [1, 2]);
        }
        a.join().unwrap();
        b.join().unwrap();
    });
}

/// A producer pushes three values (crossing a link) while the consumer pops at most one and
/// closes: each value is popped, dropped by the close, or handed back, exactly once; later
/// pushes are handed back.
#[test]
fn a_consumer_close_races_pushes() {
    model(3, || {
        let drops = std::sync::Arc::new(AtomicUsize::new(0));
        let queue = Arc::new(Queue::new());
        let producer = {
            let (queue, drops) = (queue.clone(), drops.clone());
            thread::spawn(move || {
                let mut handed_back = 0;
                for _ in 0..3 {
                    if let Err(value) = queue.push(Counted(drops.clone())) {
                        handed_back += 1;
                        drop(value);
                    }
                }
                assert!(!queue.remove_sender(), "the consumer closed or never armed");
                handed_back
            })
        };
        // SAFETY: the only consumer; no consumer call after `close`.
        unsafe {
            drop(queue.pop());
            queue.close();
        }
        let handed_back = producer.join().unwrap();
        assert_eq!(drops.load(Ordering::SeqCst), 3, "{handed_back} handed back");
        assert!(queue.push(Counted(drops.clone())).is_err());
        assert_eq!(drops.load(Ordering::SeqCst), 4);
    });
}

/// A consumer close racing a link made by a helper: A's push takes the first slot (so A links
/// the second segment after its publish) while B's second push needs that link and, if A is
/// slow, links it itself. The close must still wait for A's link duty before freeing the
/// segment A links from; every value is dropped or handed back exactly once.
#[test]
fn a_consumer_close_races_a_helped_link() {
    model(2, || {
        let drops = std::sync::Arc::new(AtomicUsize::new(0));
        let queue = Arc::new(Queue::new());
        queue.add_sender();
        let pushes = |count: usize| {
            let (queue, drops) = (queue.clone(), drops.clone());
            thread::spawn(move || {
                for _ in 0..count {
                    queue.push(Counted(drops.clone())).map_err(drop).ok();
                }
                assert!(!queue.remove_sender(), "the consumer never arms");
            })
        };
        let a = pushes(1);
        let b = pushes(2);
        // SAFETY: the only consumer; no consumer call after `close`.
        unsafe { queue.close() };
        a.join().unwrap();
        b.join().unwrap();
        drop(queue);
        assert_eq!(drops.load(Ordering::SeqCst), 3);
    });
}

/// The consumer closes while the last producer leaves: the marker is pushed or not, and the
/// value pushed before it is dropped once either way (by the close, or with the queue).
#[test]
fn a_consumer_close_races_the_last_producer_leaving() {
    model(3, || {
        let drops = std::sync::Arc::new(AtomicUsize::new(0));
        let queue = Arc::new(Queue::new());
        queue.push(Counted(drops.clone())).unwrap();
        let producer = {
            let queue = queue.clone();
            thread::spawn(move || {
                queue.push(Counted(drops.clone())).map_err(drop).ok();
                assert!(!queue.remove_sender(), "nobody armed");
            })
        };
        // SAFETY: the only consumer; closes once.
        unsafe { queue.close() };
        producer.join().unwrap();
        drop(queue);
    });
}

/// One producer leaves without pushing while another pushes: the consumer, blocked, gets the
/// message and then `Closed`, woken by whoever publishes the slot it armed.
#[test]
fn the_last_producer_wakes_the_blocked_consumer_with_the_close_marker() {
    model(3, || {
        let queue = Arc::new(Queue::new());
        queue.add_sender();
        let consumer = thread::current();
        let pusher = {
            let (queue, consumer) = (queue.clone(), consumer.clone());
            thread::spawn(move || {
                send(&queue, &consumer, 5u8).unwrap();
                leave(&queue, &consumer);
            })
        };
        let leaver = {
            let (queue, consumer) = (queue.clone(), consumer.clone());
            thread::spawn(move || leave(&queue, &consumer))
        };
        // SAFETY: the only consumer.
        unsafe {
            assert_eq!(recv(&queue), Some(5));
            assert_eq!(recv(&queue), None);
        }
        pusher.join().unwrap();
        leaver.join().unwrap();
    });
}

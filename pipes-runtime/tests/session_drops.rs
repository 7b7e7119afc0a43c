//! A bounded protocol's session buffer with unreceived messages whose `Drop` panics: every
//! message is dropped exactly once, the buffer is freed (Miri checks for the leak), and the
//! panic reaches the caller of the drop; never a panic while panicking.

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

mod common;

use common::bombs::{panic_message, quiet_bombs};
use pipes_runtime::__private::{Closer, SentByClient, Slot, Slots, session};

pipes_runtime::proto! {
    /// The client sends twice before the server has received anything: two slots full at once.
    #[allow(dead_code)]
    twice {
        First: send { First(Bomb) -> Second }
        Second: send { Second(Bomb) -> Reply }
        Reply: recv { Done -> ! }
    }
}

/// A payload that counts its drops and, if told to, panics in `Drop`.
struct Bomb {
    name: &'static str,
    panics: bool,
    drops: Arc<AtomicUsize>,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        if self.panics {
            panic!("bomb {}", self.name);
        }
    }
}

fn bomb(name: &'static str, panics: bool, drops: &Arc<AtomicUsize>) -> Bomb {
    Bomb {
        name,
        panics,
        drops: drops.clone(),
    }
}

/// Runs `f`, returning the message of the panic it propagated, if any.
fn panic_of(f: impl FnOnce()) -> Option<String> {
    panic::catch_unwind(AssertUnwindSafe(f))
        .err()
        .map(|payload| panic_message(&*payload))
}

#[test]
fn a_receiver_dropped_over_a_panicking_message_still_lets_go_of_the_buffer() {
    quiet_bombs();
    let drops = Arc::new(AtomicUsize::new(0));
    let (server, client) = twice::init();
    let second = client.first(bomb("first", true, &drops)).ok().unwrap();
    let reply = second.second(bomb("second", true, &drops)).ok().unwrap();
    // The server's drop drops the first message; its share must still go.
    assert_eq!(panic_of(|| drop(server)).as_deref(), Some("bomb first"));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // The client's drop is the last share: it frees the buffer and the second message with it.
    assert_eq!(panic_of(|| drop(reply)).as_deref(), Some("bomb second"));
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

#[test]
fn a_receiver_dropped_over_a_quiet_message_frees_the_buffer_and_a_panicking_one() {
    quiet_bombs();
    let drops = Arc::new(AtomicUsize::new(0));
    let (server, client) = twice::init();
    let second = client.first(bomb("first", false, &drops)).ok().unwrap();
    let reply = second.second(bomb("second", true, &drops)).ok().unwrap();
    drop(reply);
    // The last share goes with the server's endpoint: both messages are dropped by this drop,
    // its own and the buffer's, and the one panic comes out.
    assert_eq!(panic_of(|| drop(server)).as_deref(), Some("bomb second"));
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

#[test]
fn a_receiver_dropped_over_a_panicking_message_while_the_buffer_panics_too() {
    quiet_bombs();
    let drops = Arc::new(AtomicUsize::new(0));
    let (server, client) = twice::init();
    let second = client.first(bomb("first", true, &drops)).ok().unwrap();
    let reply = second.second(bomb("second", true, &drops)).ok().unwrap();
    drop(reply);
    // Two panics in one drop: one comes out, neither aborts.
    let panicked = panic_of(|| drop(server)).unwrap();
    assert!(panicked == "bomb first" || panicked == "bomb second");
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

/// Two slots, filled through the runtime's hidden session API so both messages are still in
/// the buffer when the last share goes.
struct Two {
    a: Slot<Bomb, SentByClient>,
    b: Slot<Bomb, SentByClient>,
}

impl Slots for Two {
    fn close(&self, closer: &Closer<'_>) {
        closer.close(&self.a);
        closer.close(&self.b);
    }
}

#[test]
fn a_buffer_freed_with_two_panicking_messages_drops_both_and_propagates_one() {
    quiet_bombs();
    let drops = Arc::new(AtomicUsize::new(0));
    // Each slot is sent into once, by `mine` (the client's share), and never received from.
    let (theirs, mine) = session(Two {
        a: Slot::new(),
        b: Slot::new(),
    });
    let mine = mine
        .sender(|two| &two.a)
        .send(bomb("a", true, &drops))
        .ok()
        .unwrap();
    let mine = mine
        .sender(|two| &two.b)
        .send(bomb("b", true, &drops))
        .ok()
        .unwrap();
    drop(mine);
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    // The last share frees the buffer: slot `a` panics, slot `b` is still dropped while
    // unwinding (its panic is dropped, not raised while panicking), and the buffer is freed.
    assert_eq!(panic_of(|| drop(theirs)).as_deref(), Some("bomb a"));
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

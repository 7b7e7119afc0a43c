//! A bounded protocol in which the client sends twice in a row, through a branch and a state
//! reachable two ways, runs many rounds with both sides on their own threads: every message
//! arrives once, in order, and every payload is dropped once, also when one side drops
//! mid-run. The one-slot-per-state buffer relies on the liveness rule here. From an
//! adversarial review of the protocol compiler (review 4), a probe that held; it passes under
//! Miri too (`cargo +nightly miri test --test bounded_sends_in_a_row`).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Counts drops of the payloads it is cloned into.
pub struct Counted(u32, Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

pipes::proto! {
    pub twice {
        First: send { One(Counted) -> Second, Skip(Counted) -> Answer, Bye(Counted) -> ! }
        Second: send { Two(Counted) -> Answer }
        Answer: recv { Ack(Counted) -> First }
    }
}

#[test]
fn sends_in_a_row_through_branches_lose_nothing() {
    const ROUNDS: u32 = if cfg!(miri) { 30 } else { 2000 };
    let drops = Arc::new(AtomicUsize::new(0));
    let (server, client) = twice::init();
    let d = drops.clone();
    let server = std::thread::spawn(move || {
        let mut server = server;
        let mut seen = Vec::new();
        loop {
            match server.recv().unwrap() {
                twice::First::One(c, second) => {
                    seen.push(c.0);
                    let twice::Second::Two(c, answer) = second.recv().unwrap();
                    seen.push(c.0);
                    server = answer.ack(Counted(c.0, d.clone())).unwrap();
                }
                twice::First::Skip(c, answer) => {
                    seen.push(c.0);
                    server = answer.ack(Counted(c.0, d.clone())).unwrap();
                }
                twice::First::Bye(c) => {
                    seen.push(c.0);
                    return seen;
                }
            }
        }
    });
    let mut client = client;
    let mut sent = Vec::new();
    let mut n = 0;
    for round in 0..ROUNDS {
        let answer = if round % 3 == 0 {
            sent.push(n);
            let skip = client.skip(Counted(n, drops.clone())).unwrap();
            n += 1;
            skip
        } else {
            sent.push(n);
            sent.push(n + 1);
            let second = client.one(Counted(n, drops.clone())).unwrap();
            let answer = second.two(Counted(n + 1, drops.clone())).unwrap();
            n += 2;
            answer
        };
        let twice::Answer::Ack(_, next) = answer.recv().unwrap();
        client = next;
    }
    sent.push(n);
    client.bye(Counted(n, drops.clone())).unwrap();
    assert_eq!(server.join().unwrap(), sent);
    // Every payload sent (client) and every ack (server) dropped exactly once.
    assert_eq!(drops.load(Ordering::SeqCst), sent.len() + ROUNDS as usize);
}

#[test]
fn a_side_dropped_mid_run_drops_the_message_left_in_its_slot_once() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (server, client) = twice::init();
    let second = client.one(Counted(1, drops.clone())).unwrap();
    let answer = second.two(Counted(2, drops.clone())).unwrap();
    // Both slots full; the server never receives.
    drop(server);
    assert!(answer.recv().is_err());
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

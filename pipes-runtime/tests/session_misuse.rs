//! The runtime's session-buffer API (`__private::session` and its shares) reached from safe
//! code that breaks the rules generated code keeps: each misuse panics naming the rule, and
//! loses nothing (every message is dropped once, Miri checks for leaks and races). Generated
//! code is plain text a user could write too, so these rules are checked, not trusted.

use std::panic::{self, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, LazyLock};
use std::thread;

mod common;

use common::bombs::panic_message;
use pipes_runtime::__private::{
    Closer, SentByClient, SentByServer, Session, Slot, Slots, StateName, session,
};

const AT: StateName = StateName {
    protocol: "misuse",
    state: "A",
};

/// Counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// One slot each way.
struct Two {
    to_server: Slot<Counted, SentByClient>,
    to_client: Slot<Counted, SentByServer>,
}

impl Slots for Two {
    fn close(&self, closer: &Closer<'_>) {
        closer.close(&self.to_server);
        closer.close(&self.to_client);
    }
}

fn two() -> (Session<Two>, Session<Two>) {
    session(Two {
        to_server: Slot::new(),
        to_client: Slot::new(),
    })
}

/// A session whose client has sent one message, not yet received: the server's share and the
/// client's.
fn first_sent(drops: &Arc<AtomicUsize>) -> (Session<Two>, Session<Two>) {
    let (server, client) = two();
    let client = client
        .sender(|two| &two.to_server)
        .send(Counted(drops.clone()))
        .ok()
        .unwrap();
    (server, client)
}

fn panic_of(f: impl FnOnce()) -> String {
    let payload = panic::catch_unwind(AssertUnwindSafe(f)).expect_err("the misuse panics");
    panic_message(&*payload)
}

#[test]
fn a_second_send_into_a_full_slot_panics_and_the_first_message_is_still_received() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (server, client) = first_sent(&drops);
    let second = Counted(drops.clone());
    let message = panic_of(|| drop(client.sender(|two| &two.to_server).send(second)));
    assert!(
        message.contains("sent into again before its message was received"),
        "{message}"
    );
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the second message, unsent"
    );
    let (first, server) = server.receiver(|two| &two.to_server).recv(&AT).unwrap();
    assert_eq!(
        drops.load(Ordering::SeqCst),
        1,
        "the first message is intact"
    );
    drop((first, server));
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

/// A sending endpoint built over a full slot and dropped (or closed) without sending leaves
/// the message there for the peer: its drop does not write its hang-up over it.
#[test]
fn a_sender_over_a_full_slot_dropped_unsent_leaves_the_message() {
    let drops = Arc::new(AtomicUsize::new(0));
    let (server, client) = first_sent(&drops);
    drop(client.sender(|two| &two.to_server));
    let (first, server) = server.receiver(|two| &two.to_server).recv(&AT).unwrap();
    assert_eq!(drops.load(Ordering::SeqCst), 0);
    drop(first);
    // The client's share is gone: the server's reply is handed back.
    let reply = server
        .sender(|two| &two.to_client)
        .send(Counted(drops.clone()));
    assert!(reply.is_err());
    drop(reply);
    assert_eq!(drops.load(Ordering::SeqCst), 2);
}

#[test]
fn a_share_cannot_send_into_the_slot_the_other_side_sends_into() {
    let (server, _client) = two();
    let message = panic_of(|| drop(server.sender(|two| &two.to_server)));
    assert!(message.contains("sending endpoint"), "{message}");
}

#[test]
fn a_share_cannot_receive_from_the_slot_it_sends_into() {
    let (_server, client) = two();
    let message = panic_of(|| drop(client.receiver(|two| &two.to_server)));
    assert!(message.contains("receiving endpoint"), "{message}");
}

/// A slot of no buffer: the only kind a share's pick can return besides its own, since the
/// pick must return a borrow that lives as long as any borrow of the buffer.
static STRAY: LazyLock<Slot<Counted, SentByClient>> = LazyLock::new(Slot::new);

#[test]
fn a_slot_outside_the_buffer_is_refused() {
    let (server, client) = two();
    let message = panic_of(|| drop(client.sender(|_| &STRAY)));
    assert!(message.contains("another buffer"), "{message}");
    let message = panic_of(|| drop(server.receiver(|_| &STRAY)));
    assert!(message.contains("another buffer"), "{message}");
}

/// Closes a slot that is not its own, then its own.
struct Closes(Slot<Counted, SentByClient>);

impl Slots for Closes {
    fn close(&self, closer: &Closer<'_>) {
        closer.close(&STRAY);
        closer.close(&self.0);
    }
}

#[test]
fn a_drop_closes_only_its_own_buffers_slots() {
    let (server, client) = session(Closes(Slot::new()));
    let receiver = server.receiver(|closes| &closes.0);
    // The client's drop closes its buffer's slot, and leaves the stray one alone.
    drop(client);
    assert!(receiver.recv(&AT).is_err());
    let (stray_server, stray_client) = two();
    drop(stray_server);
    drop(stray_client);
}

/// A side that sends twice in a row races the receive of the first message: the second send
/// either finds the first received (and the receive happens-before its write: Miri checks) or
/// panics. In odd rounds the second send waits until the receiving thread says (with
/// no ordering of its own) that it took the first, so both outcomes occur, under Miri's
/// scheduler too. Counted: every message is dropped exactly once.
#[test]
fn a_second_send_racing_the_receive_of_the_first_is_ordered_or_refused() {
    let rounds = if cfg!(miri) { 20 } else { 2000 };
    let mut through = 0;
    for round in 0..rounds {
        let drops = Arc::new(AtomicUsize::new(0));
        let taken = Arc::new(AtomicBool::new(false));
        let (server, client) = first_sent(&drops);
        let receiving = thread::spawn({
            let taken = taken.clone();
            move || {
                let (first, server) = server.receiver(|two| &two.to_server).recv(&AT).unwrap();
                taken.store(true, Ordering::Relaxed);
                drop(first);
                server
            }
        });
        if round % 2 == 1 {
            while !taken.load(Ordering::Relaxed) {
                thread::yield_now();
            }
        }
        let sent = panic::catch_unwind(AssertUnwindSafe(|| {
            let second = client.sender(|two| &two.to_server);
            drop(second.send(Counted(drops.clone())));
        }));
        let server = receiving.join().unwrap();
        // The second message, if the second send got through, is there to take; if not, the
        // refused send dropped it.
        let second = server.receiver(|two| &two.to_server).try_recv(&AT);
        assert_eq!(second.is_ok(), sent.is_ok());
        drop(second);
        assert_eq!(drops.load(Ordering::SeqCst), 2);
        through += usize::from(sent.is_ok());
    }
    assert!(through > 0, "no second send got through");
}

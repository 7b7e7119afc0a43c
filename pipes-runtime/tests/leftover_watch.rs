//! A select future that is `mem::forget`-ed while pending leaves its task waiter in the state
//! words it watched. Dropping a watched receiving endpoint then finds a waiter word, not a
//! settled one: the sender has not made its final transition, so the endpoint must not free the
//! packet (the send that follows would write into freed memory: Miri reports it). The sender
//! hands its message back instead, and frees the packet.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::Mutex;
use std::task::{Context, Waker};

use common::{DropCounter, size};
use pipes_runtime::{
    oneshot,
    select::{Selectable, selecti_async},
    stream,
};

pipes_runtime::proto! {
    ticks {
        Tick: send { Tick(u64) -> Tick }
    }
}

pipes_runtime::proto! {
    /// A bounded protocol: its endpoints are slots of a session buffer.
    #[allow(dead_code)]
    ask {
        Ask: send { Question(u64) -> Answer }
        Answer: recv { Reply(u64) -> ! }
    }
}

/// A pointer kept where Miri's leak check sees it: the forgotten futures are leaked on purpose.
struct Forgotten(#[allow(dead_code)] *mut ());

// SAFETY: never dereferenced; only kept reachable.
unsafe impl Send for Forgotten {}

static FORGOTTEN: Mutex<Vec<Forgotten>> = Mutex::new(Vec::new());

/// Polls an async select over `endpoint` once with a no-op waker, so it leaves its waiter in the
/// endpoint's state word, then forgets it.
fn watch_and_forget(endpoint: &dyn Selectable) {
    let endpoints = [endpoint];
    let mut future = Box::new(selecti_async(&endpoints));
    let mut cx = Context::from_waker(Waker::noop());
    assert!(Pin::new(&mut *future).poll(&mut cx).is_pending());
    FORGOTTEN
        .lock()
        .unwrap()
        .push(Forgotten(Box::into_raw(future).cast()));
}

#[test]
fn a_generated_endpoint_dropped_under_a_leftover_watch_leaves_the_packet_to_the_sender() {
    let (server, client) = ticks::init();
    watch_and_forget(&server);
    drop(server);
    assert_eq!(client.tick(7).unwrap_err().0, 7);
}

#[test]
fn a_oneshot_dropped_under_a_leftover_watch_hands_the_message_back() {
    let counter = DropCounter::default();
    let (port, chan) = oneshot();
    watch_and_forget(&port);
    drop(port);
    let back = chan.send(counter.make(1)).unwrap_err();
    assert_eq!(back.0.value, 1);
    assert_eq!(counter.drops(), 0);
    drop(back);
    assert_eq!(counter.drops(), 1);
}

#[test]
fn a_stream_port_dropped_under_a_leftover_watch_hands_the_message_back() {
    let counter = DropCounter::default();
    let (port, chan) = stream();
    for i in 0..size(10, 3) as u64 {
        chan.send(counter.make(i)).unwrap();
    }
    let received = port.recv().unwrap();
    // Drain to the empty packet at the end, which is the one watched.
    while port.try_recv().is_ok() {}
    watch_and_forget(&port);
    drop(port);
    assert!(chan.send(counter.make(99)).is_err());
    drop(received);
    assert_eq!(counter.drops(), size(10, 3) + 1);
}

#[test]
fn a_session_endpoint_dropped_under_a_leftover_watch_hands_the_message_back() {
    let (server, client) = ask::init();
    let answer = client.question(1).unwrap();
    watch_and_forget(&answer);
    drop(answer);
    let ask::Ask::Question(q, reply) = server.recv().unwrap();
    assert_eq!(reply.reply(q + 1).unwrap_err().0, 2);
}

/// The watch and the send the other way round: the send swaps the leftover waiter out and wakes
/// it, so the endpoint's drop then finds the message and frees the packet.
#[test]
fn a_send_under_a_leftover_watch_then_a_drop_frees_the_packet() {
    let counter = DropCounter::default();
    let (port, chan) = oneshot();
    watch_and_forget(&port);
    chan.send(counter.make(1)).unwrap();
    drop(port);
    assert_eq!(counter.drops(), 1);
}

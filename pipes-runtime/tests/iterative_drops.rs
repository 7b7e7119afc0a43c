//! Dropping the receiving end of a protocol whose state loops on itself, with a backlog of
//! unreceived messages: each message holds the receiving endpoint of the next packet, so drop
//! glue alone would recurse once per message. The runtime must drop any protocol's backlog
//! iteratively, drop every payload exactly once even when some payloads panic in `Drop`, and
//! hand the first panic to the caller of the drop afterwards.

mod common;

use std::panic::{self, AssertUnwindSafe};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;

use common::bombs::{panic_message, quiet_bombs};
use common::{DropCounter, on_a_small_stack, size};

pipes_runtime::proto! {
    /// A non-generic stream: every message leads back to the same state.
    tick {
        Tick: send { Tick(u64) -> Tick }
    }
}

pipes_runtime::proto! {
    /// A generic stream, as the runtime's own `stream` is declared.
    open {
        Open: send<T> { Data(T) -> Open<T> }
    }
}

pipes_runtime::proto! {
    /// A stream whose loop goes through two states.
    seesaw {
        Up: send<T> { Up(T) -> Down<T> }
        Down: send<T> { Down(T) -> Up<T> }
    }
}

#[test]
fn a_million_message_backlog_of_a_non_generic_protocol_drops_on_a_small_stack() {
    let n = size(1_000_000, 500) as u64;
    let (server, client) = tick::init();
    let mut client = client;
    for i in 0..n {
        client = client.tick(i).unwrap();
    }
    on_a_small_stack(move || drop(server));
    // The server is gone, so the next send hands its payload back.
    assert_eq!(client.tick(n).unwrap_err().0, n);
}

#[test]
fn a_million_message_backlog_of_a_generic_protocol_drops_each_payload_once() {
    let counter = DropCounter::default();
    let n = size(1_000_000, 500);
    let (server, client) = open::init();
    let mut client = client;
    for i in 0..n {
        client = client.data(counter.make(i as u64)).unwrap();
    }
    assert_eq!(counter.drops(), 0);
    on_a_small_stack(move || drop(server));
    assert_eq!(counter.drops(), n);
    drop(client);
}

#[test]
fn a_backlog_that_loops_through_two_states_drops_iteratively() {
    let counter = DropCounter::default();
    let n = size(500_000, 250);
    let (server, client) = seesaw::init();
    let mut client = client;
    for i in 0..n {
        let down = client.up(counter.make(2 * i as u64)).unwrap();
        client = down.down(counter.make(2 * i as u64 + 1)).unwrap();
    }
    on_a_small_stack(move || drop(server));
    assert_eq!(counter.drops(), 2 * n);
}

#[test]
fn a_backlog_dropped_after_some_messages_were_received_drops_the_rest() {
    let counter = DropCounter::default();
    let n = size(100_000, 100);
    let (server, client) = open::init();
    let mut client = client;
    for i in 0..n {
        client = client.data(counter.make(i as u64)).unwrap();
    }
    let mut server = server;
    for i in 0..10 {
        let open::Open::Data(message, next) = server.recv().unwrap();
        assert_eq!(message.value, i);
        server = next;
    }
    assert_eq!(counter.drops(), 10);
    on_a_small_stack(move || drop(server));
    assert_eq!(counter.drops(), n);
}

/// A stream of streams: each message carries the receiving end of another stream that has a
/// backlog of its own. Both levels must be iterative.
#[test]
fn a_backlog_of_backlogs_drops_every_payload_once() {
    let counter = DropCounter::default();
    let (outer, outer_client) = open::init();
    let mut outer_client = outer_client;
    let (streams, each) = (size(200, 4), size(2_000, 20));
    for _ in 0..streams {
        let (inner, inner_client) = open::init();
        let mut inner_client = inner_client;
        for i in 0..each {
            inner_client = inner_client.data(counter.make(i as u64)).unwrap();
        }
        outer_client = outer_client.data(inner).unwrap();
    }
    on_a_small_stack(move || drop(outer));
    assert_eq!(counter.drops(), streams * each);
}

/// A payload that records its drop and, if told to, panics in `Drop`.
struct Bomb {
    id: usize,
    panics: bool,
    drops: Arc<Vec<AtomicUsize>>,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        self.drops[self.id].fetch_add(1, Ordering::SeqCst);
        if self.panics {
            panic!("bomb {}", self.id);
        }
    }
}

/// Sends `n` bombs, those at `panicking` panicking when dropped, leaves them unreceived, drops
/// the receiving end on a small stack, and returns the panic the drop propagated (if any) and
/// how often each bomb was dropped.
fn drop_a_backlog_of_bombs(n: usize, panicking: &[usize]) -> (Option<String>, Vec<usize>) {
    quiet_bombs();
    let drops = Arc::new((0..n).map(|_| AtomicUsize::new(0)).collect::<Vec<_>>());
    let (server, client) = open::init();
    let mut client = client;
    for id in 0..n {
        let bomb = Bomb {
            id,
            panics: panicking.contains(&id),
            drops: drops.clone(),
        };
        client = client.data(bomb).ok().unwrap();
    }
    let panicked = on_a_small_stack(move || {
        panic::catch_unwind(AssertUnwindSafe(move || drop(server)))
            .err()
            .map(|payload| panic_message(&*payload))
    });
    // The server is gone: the next send fails.
    assert!(client.data(Bomb::harmless()).is_err());
    let counts = drops.iter().map(|d| d.load(Ordering::SeqCst)).collect();
    (panicked, counts)
}

impl Bomb {
    /// A bomb that does not panic, counted apart from the others.
    fn harmless() -> Bomb {
        Bomb {
            id: 0,
            panics: false,
            drops: Arc::new(vec![AtomicUsize::new(0)]),
        }
    }
}

#[test]
fn a_panicking_payload_at_the_head_of_a_backlog_propagates_after_the_rest_is_dropped() {
    let n = size(100_000, 200);
    let (panicked, counts) = drop_a_backlog_of_bombs(n, &[0]);
    assert_eq!(panicked.as_deref(), Some("bomb 0"));
    assert!(counts.iter().all(|&c| c == 1), "each payload dropped once");
}

#[test]
fn several_panicking_payloads_each_drop_once_and_the_first_panic_propagates() {
    let n = size(100_000, 200);
    let (panicked, counts) = drop_a_backlog_of_bombs(n, &[3, 4, 5, n / 2, n - 1]);
    assert_eq!(panicked.as_deref(), Some("bomb 3"));
    assert!(counts.iter().all(|&c| c == 1), "each payload dropped once");
}

#[test]
fn a_panicking_payload_alone_frees_its_packet_and_propagates() {
    let (panicked, counts) = drop_a_backlog_of_bombs(1, &[0]);
    assert_eq!(panicked.as_deref(), Some("bomb 0"));
    assert_eq!(counts, [1]);
}

/// Reads the string it borrows when dropped: a payload whose drop would be a use-after-free if
/// the runtime dropped it after the borrowed string is gone.
struct Reads<'a>(&'a String, &'a AtomicUsize);

impl Drop for Reads<'_> {
    fn drop(&mut self) {
        self.1.fetch_add(self.0.len(), Ordering::SeqCst);
    }
}

/// Makes a stream of its own while it is dropped, sends it a few payloads that borrow a local,
/// and drops the receiving end: those payloads must be dropped before that drop returns (the
/// local dies right after), even though this happens inside the runtime's drop of a backlog.
struct MakesAStreamWhenDropped(Arc<AtomicUsize>);

impl Drop for MakesAStreamWhenDropped {
    fn drop(&mut self) {
        let local = String::from("local");
        let read = AtomicUsize::new(0);
        let (server, client) = open::init();
        let mut client = client;
        for _ in 0..3 {
            client = client.data(Reads(&local, &read)).ok().unwrap();
        }
        drop(server);
        assert_eq!(read.load(Ordering::SeqCst), 3 * local.len());
        drop(client);
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn an_endpoint_dropped_by_a_payloads_drop_is_not_deferred_past_it() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let n = size(1_000, 20);
    let (server, client) = open::init();
    let mut client = client;
    for _ in 0..n {
        client = client
            .data(MakesAStreamWhenDropped(dropped.clone()))
            .ok()
            .unwrap();
    }
    on_a_small_stack(move || drop(server));
    assert_eq!(dropped.load(Ordering::SeqCst), n);
}

/// Holds a backlog's receiving end in a box: a chain the user built through the heap, not one a
/// protocol built. Each link recurses (see the runtime's `drop_queue` notes), so it stays short.
struct Boxed(
    #[allow(dead_code)] Option<Box<open::server::Open<Boxed>>>,
    Arc<AtomicUsize>,
);

impl Drop for Boxed {
    fn drop(&mut self) {
        self.1.fetch_add(1, Ordering::SeqCst);
    }
}

#[test]
fn a_chain_through_boxes_drops_every_payload_once() {
    let dropped = Arc::new(AtomicUsize::new(0));
    let links = size(50, 5);
    let mut held = None;
    for _ in 0..links {
        let (server, client) = open::init();
        let mut client = client;
        for _ in 0..10 {
            client = client.data(Boxed(None, dropped.clone())).ok().unwrap();
        }
        drop(client.data(Boxed(held.take(), dropped.clone())));
        held = Some(Box::new(server));
    }
    drop(held);
    assert_eq!(dropped.load(Ordering::SeqCst), links * 11);
}

thread_local! {
    /// A backlog a thread leaves behind in a thread-local, dropped when the thread ends.
    static LEFT_BEHIND: std::cell::Cell<Option<open::server::Open<common::Counted>>> =
        const { std::cell::Cell::new(None) };
}

/// The backlog is dropped by a thread-local destructor that runs after the runtime's own
/// per-thread queue is gone (destructors run in reverse order of first use): it must still
/// be dropped, directly, without a panic or an abort.
#[test]
fn a_backlog_left_in_a_thread_local_is_dropped_when_the_thread_ends() {
    let counter = DropCounter::default();
    let n = size(100, 10);
    let sent = counter.clone();
    thread::spawn(move || {
        let (server, client) = open::init();
        let mut client = client;
        for i in 0..n {
            client = client.data(sent.make(i as u64)).unwrap();
        }
        LEFT_BEHIND.set(Some(server));
        // First use of the runtime's queue after `LEFT_BEHIND`'s: a one-message backlog.
        let (one, one_client) = open::init();
        drop(one_client.data(sent.make(u64::MAX)).unwrap());
        drop(one);
    })
    .join()
    .unwrap();
    assert_eq!(counter.drops(), n + 1);
}

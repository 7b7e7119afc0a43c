//! Chains of ports dropped on a small stack. The stream docs promise: "Dropping a
//! port with messages still queued drops them in a loop, not by recursion, also when they hold
//! ports." Each test here runs in its own process-killing way if that fails (a stack overflow
//! aborts the test binary), so the file holds only these.

mod common;

use common::{on_a_small_stack, size};
use pipes_runtime::{Port, SharedChan, stream};

struct Node(#[allow(dead_code)] Port<Node>);

/// A chain of plain streams, each port's one message holding the next port.
#[test]
fn a_chain_of_plain_stream_ports_drops_on_a_small_stack() {
    let n = size(100_000, 100);
    let (first, mut chan) = stream::<Node>();
    for _ in 0..n {
        let (port, next) = stream::<Node>();
        chan.send(Node(port)).unwrap();
        chan = next;
    }
    on_a_small_stack(move || drop(first));
    drop(chan);
}

/// The same chain, but each chan became a shared chan before it sent, so each message sits in
/// a shared chan's queue. Its drain dropped them with a plain `drop`, outside the drop queue:
/// one nested close per link, a stack overflow (found by an adversarial review). A port's
/// queue is now closed through the drop queue, as its lane is.
#[test]
fn a_chain_of_ports_through_shared_chans_drops_on_a_small_stack() {
    let n = size(100_000, 100);
    let (first, mut chan) = stream::<Node>();
    for _ in 0..n {
        let (port, next) = stream::<Node>();
        let shared = SharedChan::new(chan);
        shared.send(Node(port)).unwrap();
        chan = next;
    }
    on_a_small_stack(move || drop(first));
    drop(chan);
}

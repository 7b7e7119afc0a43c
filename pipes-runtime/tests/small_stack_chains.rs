//! Chains of ports dropped on a small stack. The stream docs promise: "Dropping a
//! port with messages still queued drops them in a loop, not by recursion, also when they hold
//! ports." Port sets and receive futures, which own ports, keep that promise too. Each test
//! here runs in its own process-killing way if that fails (a stack overflow aborts the test
//! binary), so the file holds only these.

mod common;

use common::{on_a_small_stack, size};
use pipes_runtime::{Port, PortOne, PortSet, RecvFuture, SharedChan, oneshot, stream};

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

/// A message holding the next port set. (A set's message cannot hold the set itself, whose
/// type would be infinite: the set's ports carry ports whose messages hold the next set.)
struct SetNode(#[allow(dead_code)] PortSet<Port<SetNode>>);

/// Each set has one port (from `set.chan()`), whose one message is a port whose one message
/// holds the next set. A set owns its ports on the heap, outside the message's bytes, so the
/// drop queue did not queue them: one nested close per link, a stack overflow (found by
/// review 6). A set now drops its ports as if they lay where it lies.
#[test]
fn a_chain_of_port_sets_in_messages_drops_on_a_small_stack() {
    let n = size(100_000, 100);
    let first = PortSet::<Port<SetNode>>::new();
    let mut chan = first.chan();
    let mut chans = Vec::new();
    for _ in 0..n {
        let (port, inner) = stream::<SetNode>();
        chan.send(port).ok().unwrap();
        let set = PortSet::new();
        let next = set.chan();
        inner.send(SetNode(set)).ok().unwrap();
        chans.push((chan, inner));
        chan = next;
    }
    on_a_small_stack(move || drop(first));
    drop(chans);
}

/// A message holding a pending receive of the next oneshot (a receive future owns its
/// endpoint and is `Send`: it may travel in a message as the endpoint would).
struct FutureNode(#[allow(dead_code)] RecvFuture<PortOne<FutureNode>>);

/// Each oneshot's message holds the receive future of the next. The future's drop moved its
/// endpoint out onto the stack before dropping it, outside the message's bytes: one nested
/// disposal per link, a stack overflow (found by review 6). It now drops the endpoint in place.
#[test]
fn a_chain_of_receive_futures_in_messages_drops_on_a_small_stack() {
    let n = size(100_000, 100);
    let (first, mut chan) = oneshot::<FutureNode>();
    let first = first.recv_async();
    for _ in 0..n {
        let (port, next) = oneshot::<FutureNode>();
        chan.send(FutureNode(port.recv_async())).ok().unwrap();
        chan = next;
    }
    on_a_small_stack(move || drop(first));
    drop(chan);
}

pipes_runtime::proto! {
    /// Bounded (a send, then a receive): a session runs over a buffer of slots, not lanes.
    #[allow(dead_code)]
    hop {
        Ask: send { Pass(hop::server::Ask) -> Answer }
        Answer: recv { Done -> ! }
    }
}

/// A chain of bounded sessions, each one's unreceived message holding the next session's
/// receiving endpoint (delegation). A session's receiving endpoint dropped its unreceived
/// message with a plain `drop`: one nested drop per link, a stack overflow (found by review 6).
/// It now drops it through the drop queue.
#[test]
fn a_chain_of_bounded_sessions_in_messages_drops_on_a_small_stack() {
    let n = size(100_000, 100);
    let (first, mut client) = hop::init();
    let mut waiting = Vec::new();
    for _ in 0..n {
        let (server, next) = hop::init();
        waiting.push(client.pass(server).ok().unwrap());
        client = next;
    }
    on_a_small_stack(move || drop(first));
    drop((client, waiting));
}

pipes_runtime::proto! {
    /// Each message carries the receiving endpoint of the next session (a delegation chain).
    #[allow(dead_code)]
    relay {
        Open: send { Pass(relay::server::Open) -> Open, Ping -> Open }
    }
}

/// A chain of unbounded sessions, each holding the next session's receiving endpoint in an
/// unreceived message (the `Duplex`'s lane end lies in the message's bytes): iterative.
#[test]
fn a_chain_of_sessions_in_messages_drops_on_a_small_stack() {
    let n = size(100_000, 50);
    let (first, mut client) = relay::init();
    let mut clients = Vec::new();
    for _ in 0..n {
        let (server, next) = relay::init();
        clients.push(client.pass(server).unwrap());
        client = next;
    }
    on_a_small_stack(move || drop(first));
    drop((client, clients));
}

/// A chain of waits for room: each future's endpoint (a receiving one, whose sends wait for
/// room all the same) has an unreceived message holding the next future. `RoomFuture::drop`
/// leaves its endpoint in place, so drop glue drops it inside the message's bytes: iterative.
struct RoomNode(#[allow(dead_code)] pipes_runtime::__private::RoomFuture<rooms::server::Open>);

pipes_runtime::proto! {
    #[allow(dead_code)]
    rooms {
        Open: send { Pass(crate::RoomNode) -> Open }
    }
}

#[test]
fn a_chain_of_room_futures_in_messages_drops_on_a_small_stack() {
    use pipes_runtime::__private::RoomFuture;
    let n = size(100_000, 50);
    let (server, mut client) = rooms::init();
    let first = RoomFuture::new(server);
    let mut clients = Vec::new();
    for _ in 0..n {
        let (next_server, next_client) = rooms::init();
        clients.push(client.pass(RoomNode(RoomFuture::new(next_server))).unwrap());
        client = next_client;
    }
    on_a_small_stack(move || drop(first));
    drop((client, clients));
}

pipes_runtime::proto! {
    /// Two sends before a receive: two slots full at once.
    #[allow(dead_code)]
    twice {
        First: send { First -> Second }
        Second: send { Pass(twice::server::First) -> Reply }
        Reply: recv { Done -> ! }
    }
}

/// A chain of bounded sessions whose clients are gone, each buffer holding, in a slot its
/// server's endpoint does not receive from, the next session's server endpoint. Dropping a
/// server frees its buffer, whose slot drops the next server, which frees the next buffer:
/// one nested free per link, a stack overflow. A buffer freed by a share that lies in a
/// message being dropped now has its slots' messages queued.
#[test]
fn a_chain_of_session_buffers_freed_with_messages_in_their_slots_drops_on_a_small_stack() {
    let n = size(100_000, 100);
    let (first, mut client) = twice::init();
    for _ in 0..n {
        let (server, next) = twice::init();
        drop(client.first().unwrap().pass(server).unwrap());
        client = next;
    }
    on_a_small_stack(move || drop(first));
    drop(client);
}

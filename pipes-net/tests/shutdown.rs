//! A node's shutdown always ends: with no deadline to count down (`shutdown_timeout` as long
//! as `Duration::MAX`), and for a node on a runtime that is gone (its connections are cut
//! without delivering, and their sessions fail).

mod common;

use std::sync::mpsc;
use std::time::Duration;

use common::{opened_from_a_runtime_of_its_own, quick, recv_within};
use pipes_net::{Config, Node};

/// Runs `body` on a thread of its own; whether it ended within `secs`.
fn ends_within(secs: u64, body: impl FnOnce() + Send + 'static) -> bool {
    let (done, ended) = mpsc::channel();
    std::thread::spawn(move || {
        body();
        let _ = done.send(());
    });
    ended.recv_timeout(Duration::from_secs(secs)).is_ok()
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

#[test]
fn dropping_a_node_with_no_shutdown_deadline_ends() {
    // `Instant::now() + Duration::MAX` overflowed and panicked the shutdown task, which never
    // said it was done: the drop waited for it forever.
    let config = Config {
        shutdown_timeout: Duration::MAX,
        ..quick()
    };
    let node = Node::builder().config(config).start().unwrap();
    // No connections, nothing to deliver: the shutdown has nothing to wait for.
    assert!(
        ends_within(5, move || drop(node)),
        "dropping an idle node whose shutdown_timeout is Duration::MAX still blocks after 5 s"
    );
}

#[test]
fn shutting_down_a_node_whose_runtime_is_gone_ends_and_fails_its_sessions() {
    let (_server, first, node, session) = opened_from_a_runtime_of_its_own();
    // The runtime ends first, with the node's tasks: the shutdown's task, spawned there, is
    // dropped at once. Awaited on another runtime, the shutdown waited for it forever.
    drop(first);
    let ended = runtime().block_on(async {
        tokio::time::timeout(Duration::from_secs(10), node.shutdown())
            .await
            .is_ok()
    });
    assert!(
        ended,
        "Node::shutdown of a node whose runtime is gone still waits after 10 s"
    );
    // The connection was cut: a session on it fails instead of waiting.
    match recv_within(session, 5) {
        Some(received) => assert!(received.is_err(), "{received:?}"),
        None => panic!("a session of a node shut down without its runtime still waits"),
    }
}

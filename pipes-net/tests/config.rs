//! A node's settings at their edges: values no node can work with are refused when it starts,
//! naming the field, instead of panicking its tasks or failing every connection; durations as
//! long as `Duration::MAX` mean "no deadline" instead of overflowing.

mod common;

use std::io;
use std::time::Duration;

use common::{STREAM, quick};
use pipes_net::frame::MIN_FRAME;
use pipes_net::{Cluster, Config, Node, Role};

#[test]
fn a_config_no_node_can_work_with_is_refused_naming_the_field() {
    let refused = [
        // tokio's `interval` panicked on it, in every connection's writer task.
        (
            Config {
                heartbeat_interval: Duration::ZERO,
                ..quick()
            },
            "heartbeat_interval",
        ),
        (
            Config {
                heartbeat_timeout: Duration::ZERO,
                ..quick()
            },
            "heartbeat_timeout",
        ),
        (
            Config {
                connect_timeout: Duration::ZERO,
                ..quick()
            },
            "connect_timeout",
        ),
        (
            Config {
                open_timeout: Duration::ZERO,
                ..quick()
            },
            "open_timeout",
        ),
        (
            Config {
                max_frame: MIN_FRAME - 1,
                ..quick()
            },
            "max_frame",
        ),
    ];
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    for (config, field) in refused {
        let blocking = Node::builder().config(config).start();
        let on_runtime = runtime.block_on(Node::builder().config(config).start_async());
        for started in [blocking, on_runtime] {
            let error = started.expect_err(field);
            assert_eq!(error.kind(), io::ErrorKind::InvalidInput, "{field}");
            assert!(error.to_string().contains(field), "{field}: {error}");
        }
    }
    // The edges that work: the smallest frame, and zeros that mean something.
    let edges = Config {
        max_frame: MIN_FRAME,
        chunk: 0,
        window: 0,
        shutdown_timeout: Duration::ZERO,
        ..quick()
    };
    drop(Node::builder().config(edges).start().unwrap());
}

#[test]
fn durations_as_long_as_duration_max_mean_no_deadline() {
    // Each was added to an `Instant`, which overflowed and panicked: a cluster's join (its
    // rendezvous deadlines), a cluster's open (the open timeout), a node's shutdown.
    let forever = Config {
        connect_timeout: Duration::MAX,
        open_timeout: Duration::MAX,
        heartbeat_interval: Duration::MAX,
        heartbeat_timeout: Duration::MAX,
        shutdown_timeout: Duration::MAX,
        ..quick()
    };
    let rendezvous = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap();
    let ranks: Vec<_> = (0..2)
        .map(|rank| {
            let builder = Cluster::builder()
                .rank(rank)
                .size(2)
                .rendezvous(rendezvous)
                .timeout(Duration::MAX)
                .config(forever);
            std::thread::spawn(move || builder.join())
        })
        .collect();
    let mut ranks = ranks.into_iter().map(|rank| rank.join().unwrap().unwrap());
    let (zero, one) = (ranks.next().unwrap(), ranks.next().unwrap());
    let mut acceptor = zero.serve(1, STREAM, Role::Server);
    let mut session = one.open(0, STREAM, Role::Client).unwrap();
    let mut served = acceptor.accept().unwrap();
    session.send(0, 0, &7u32).unwrap();
    assert_eq!(served.recv().unwrap().decode::<u32>().unwrap(), 7);
    served.send(1, 0, &8u32).unwrap();
    assert_eq!(session.recv().unwrap().decode::<u32>().unwrap(), 8);
    drop((session, served));
    // Both drops deliver and end at once: the peers answer, no deadline is needed.
    let dropped = std::thread::spawn(move || drop(one));
    drop(zero);
    dropped.join().unwrap();
}

//! A node's futures given up on (a timeout, an abort, a `select!`'s other branch), forgotten,
//! or left pending while the node's runtime ends: each must leave the node as if the call had
//! not been made, or finish what it started, and never hang whoever comes next.

mod common;

use std::time::Duration;

use common::{BANK, RawPeer, node, quick, within};
use pipes_net::frame::{DEFAULT_MAX_FRAME, DEFAULT_MAX_MESSAGE, hello, read_hello};
use pipes_net::{Node, Origin, Role, SessionError};

#[tokio::test]
async fn an_attach_given_up_during_the_hello_attaches_nothing() {
    within(10, async {
        let node = node(quick()).await;
        let (ours, theirs) = tokio::io::duplex(64 << 10);
        let mut peer = RawPeer { io: theirs };
        // The peer is slow to say hello: the caller gives up first.
        let attach = tokio::time::timeout(
            Duration::from_millis(100),
            node.attach_async(ours, Origin::Accepted),
        )
        .await;
        assert!(attach.is_err(), "{attach:?}");
        // The node said its hello; the peer's comes after the caller gave up.
        let theirs = peer.read_body().await.unwrap();
        assert!(read_hello(&theirs).is_some());
        peer.write_body(&hello(DEFAULT_MAX_FRAME, DEFAULT_MAX_MESSAGE))
            .await;
        // The stream the caller gave up on is closed, not run as a connection nobody holds.
        let after = tokio::time::timeout(Duration::from_secs(1), peer.read_body()).await;
        assert!(
            matches!(after, Ok(None)),
            "the given-up stream carried a frame: {after:?}"
        );
        assert_eq!(node.connections(), 0);
        node.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_forgotten_open_leaks_its_session_and_nothing_else() {
    within(10, async {
        let (client, conn, server, _) = common::pair(quick()).await;
        let mut acceptor = server.serve(BANK, Role::Server);
        let mut open = Box::pin(conn.open_async(BANK, Role::Client));
        assert!(common::poll_once(open.as_mut()).await.is_none());
        // Forgotten, the open's session is leaked as a forgotten `RawSession` would be: the
        // peer's end stays open.
        std::mem::forget(open);
        let mut leaked = acceptor.accept_async().await.unwrap();
        // The connection carries other sessions as before.
        let (session, served) =
            tokio::join!(conn.open_async(BANK, Role::Client), acceptor.accept_async());
        let (session, mut served) = (session.unwrap(), served.unwrap());
        session.send_async(0, 0, &5u8).await.unwrap();
        assert_eq!(
            served.recv_async().await.unwrap().decode::<u8>().unwrap(),
            5
        );
        // And the shutdown ends it all, the leaked session's peer too.
        client.shutdown().await;
        let error = leaked.recv_async().await.unwrap_err();
        assert!(matches!(error, SessionError::ConnectionLost(_)), "{error}");
        server.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_shutdown_given_up_on_still_ends_the_node() {
    within(10, async {
        let config = pipes_net::Config {
            shutdown_timeout: Duration::from_millis(300),
            ..quick()
        };
        // A peer that says hello and then reads nothing, writes nothing: the shutdown waits
        // for its answer until the timeout.
        let (node, conn, _peer, mut session) = common::raw_opened(config, common::WINDOW).await;
        let given_up = tokio::time::timeout(Duration::from_millis(10), node.shutdown()).await;
        assert!(given_up.is_err());
        // The shutdown goes on as a task, and ends the connection at its deadline.
        let error = session.recv_async().await.unwrap_err();
        assert!(matches!(error, SessionError::ConnectionLost(_)), "{error}");
        assert!(conn.failure().is_some());
    })
    .await;
}

#[test]
fn an_open_pending_when_the_nodes_runtime_ends_fails_instead_of_hanging() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (node, conn, peer) = runtime.block_on(RawPeer::attached(quick()));
    // The raw peer never answers the Open.
    let opening = std::thread::spawn(move || conn.open(BANK, Role::Client));
    runtime.block_on(async { tokio::time::sleep(Duration::from_millis(100)).await });
    drop(runtime);
    let (done, ended) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(opening.join().unwrap());
    });
    let opened = ended
        .recv_timeout(Duration::from_secs(5))
        .expect("an open whose node's runtime ended still waits after 5 s");
    assert!(opened.is_err(), "{opened:?}");
    drop((node, peer));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accept_racing_the_shutdown_gets_a_session_or_none_and_never_hangs() {
    within(10, async {
        for _ in 0..20 {
            let (client, conn, server, _) = common::pair(quick()).await;
            let mut acceptor = server.serve(BANK, Role::Server);
            let accepting = tokio::spawn(async move { acceptor.accept_async().await });
            let opening = tokio::spawn(async move { conn.open_async(BANK, Role::Client).await });
            tokio::task::yield_now().await;
            server.shutdown().await;
            let accepted = accepting.await.unwrap();
            let opened = opening.await.unwrap();
            // A session the acceptor took was opened; an open refused or cut was not taken.
            if let Some(mut served) = accepted {
                assert!(served.recv_async().await.is_err());
            }
            drop(opened);
            client.shutdown().await;
        }
    })
    .await;
}

#[tokio::test]
async fn two_dials_of_one_peer_at_once_make_one_connection() {
    within(10, async {
        let server = Node::builder()
            .listen("127.0.0.1:0".parse().unwrap())
            .config(quick())
            .start_async()
            .await
            .unwrap();
        let addr = server.local_addr().unwrap();
        let client = Node::builder().config(quick()).start_async().await.unwrap();
        let (a, b) = tokio::join!(client.connect_async(addr), client.connect_async(addr));
        let (_a, _b) = (a.unwrap(), b.unwrap());
        assert_eq!(client.connections(), 1);
        client.shutdown().await;
        server.shutdown().await;
    })
    .await;
}

#[test]
fn a_dial_pending_when_the_nodes_runtime_ends_fails_at_once() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    // A listener that accepts and never says hello: the dial waits in its hello.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let config = pipes_net::Config {
        connect_timeout: Duration::from_secs(30),
        ..quick()
    };
    let node = std::sync::Arc::new(
        runtime.block_on(async { Node::builder().config(config).start_async().await.unwrap() }),
    );
    let (done, dialed) = std::sync::mpsc::channel();
    std::thread::spawn({
        let node = node.clone();
        move || {
            let _ = done.send(node.connect(addr).map(drop));
        }
    });
    runtime.block_on(async { tokio::time::sleep(Duration::from_millis(100)).await });
    drop(runtime);
    let dialed = dialed
        .recv_timeout(Duration::from_secs(5))
        .expect("a dial whose node's runtime ended still waits after 5 s");
    assert!(dialed.is_err(), "{dialed:?}");
    drop(listener);
}

//! Faults injected into the transport (`common::Faulty`): a stream cut short, a flipped byte,
//! slow reads, a reset; and faults of the peer or the node itself: a peer that freezes with
//! bytes owed to it, a node's runtime that ends under its sessions. Each ends in a typed error
//! on every session of the connection, on both ends, never a panic or a hang (every test runs
//! under a timeout).

mod common;

use std::io;
use std::sync::atomic::Ordering;
use std::time::Duration;

use common::{
    Fault, Faulty, STREAM, WINDOW, node, opened_from_a_runtime_of_its_own, quick, raw_opened,
    recv_within, unserved_open, within,
};
use pipes_net::{Config, Connection, Node, Origin, RawSession, Role, SessionError};
use tokio::io::AsyncWriteExt;

/// A session from a client whose transport reads through `fault`, to a server that echoes.
struct Setup {
    _client: Node,
    conn: Option<Connection>,
    _server: Node,
    session: Result<RawSession, pipes_net::ConnectError>,
    armed: std::sync::Arc<std::sync::atomic::AtomicBool>,
    echo: tokio::task::JoinHandle<Option<SessionError>>,
    /// Set once the echo has accepted the session.
    accepted: std::sync::Arc<std::sync::atomic::AtomicBool>,
}

async fn setup(config: Config, fault: Fault) -> Setup {
    let (a, b) = tokio::io::duplex(64 << 10);
    let (a, armed) = Faulty::new(a, fault);
    let client = node(config).await;
    let server = node(config).await;
    let mut acceptor = server.serve(STREAM, Role::Server);
    // A flipped byte in the hello fails the dial (typed); the server's end then dies too.
    let (conn, _) = tokio::join!(
        client.attach_async(a, Origin::Dialed),
        server.attach_async(b, Origin::Accepted)
    );
    // The echo's end: the error that ended its session, if one did.
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let echo = tokio::spawn({
        let accepted = accepted.clone();
        async move {
            let mut session = acceptor.accept_async().await?;
            accepted.store(true, Ordering::SeqCst);
            loop {
                match session.recv_async().await {
                    Ok(message) => {
                        let value: u32 = message.decode().unwrap();
                        if let Err(error) = session.send_async(1, 0, &value).await {
                            return Some(error);
                        }
                    }
                    Err(error) => return Some(error),
                }
            }
        }
    });
    let (conn, session) = match conn {
        Ok(conn) => {
            let session = conn.open_async(STREAM, Role::Client).await;
            (Some(conn), session)
        }
        Err(error) => (None, Err(error)),
    };
    Setup {
        _client: client,
        conn,
        _server: server,
        session,
        armed,
        echo,
        accepted,
    }
}

/// Sends `n` numbers and reads the echoes, until the first error; how many echoes differed
/// from what was sent.
async fn exchange(session: &mut RawSession, n: u32) -> Result<usize, SessionError> {
    for i in 0..n {
        session.send_async(0, 0, &i).await?;
    }
    let mut changed = 0;
    for i in 0..n {
        let echoed: u32 = session.recv_async().await?.decode()?;
        changed += usize::from(echoed != i);
    }
    Ok(changed)
}

fn lost(error: &SessionError, kind: io::ErrorKind) -> bool {
    matches!(error, SessionError::ConnectionLost(e) if e.kind() == kind)
}

#[tokio::test]
async fn a_truncated_stream_loses_the_connection_on_both_ends() {
    within(10, async {
        let setup = setup(quick(), Fault::Truncate(100)).await;
        let mut session = setup.session.unwrap();
        assert_eq!(exchange(&mut session, 10).await.unwrap(), 0);
        setup.armed.store(true, Ordering::Release);
        let error = exchange(&mut session, 1000).await.unwrap_err();
        assert!(lost(&error, io::ErrorKind::UnexpectedEof), "{error}");
        let echo = setup.echo.await.unwrap().unwrap();
        assert!(matches!(echo, SessionError::ConnectionLost(_)), "{echo}");
        assert!(setup.conn.unwrap().failure().is_some());
    })
    .await;
}

#[tokio::test]
async fn a_reset_loses_the_connection_on_both_ends() {
    within(10, async {
        let setup = setup(quick(), Fault::Close(30)).await;
        let mut session = setup.session.unwrap();
        assert_eq!(exchange(&mut session, 10).await.unwrap(), 0);
        setup.armed.store(true, Ordering::Release);
        let error = exchange(&mut session, 1000).await.unwrap_err();
        assert!(lost(&error, io::ErrorKind::ConnectionReset), "{error}");
        let echo = setup.echo.await.unwrap().unwrap();
        assert!(matches!(echo, SessionError::ConnectionLost(_)), "{echo}");
    })
    .await;
}

/// Waits for the connection to die, and says why.
async fn failure(conn: &Connection) -> SessionError {
    loop {
        if let Some(error) = conn.failure() {
            return error;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

// The bytes a client reads: the server's hello (4 + 11 + 16 bytes: its length, the version
// and two limits), then frames. The first frame (a heartbeat or the answer to the Open) has
// its length at 31..35, a one-byte session id at 35 and its kind at 36.

#[tokio::test]
async fn a_corrupted_length_is_an_oversized_frame() {
    within(10, async {
        let setup = setup(quick(), Fault::Corrupt(31)).await;
        assert!(setup.session.is_err());
        let error = failure(setup.conn.as_ref().unwrap()).await;
        assert!(
            matches!(error, SessionError::FrameTooLarge { .. }),
            "{error}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_corrupted_kind_is_a_violation() {
    within(10, async {
        let setup = setup(quick(), Fault::Corrupt(36)).await;
        assert!(setup.session.is_err());
        let error = failure(setup.conn.as_ref().unwrap()).await;
        assert!(
            matches!(error, SessionError::Violation(ref what) if what.contains("kind")),
            "{error}"
        );
        // The server's side of the session fails too, if the Open reached it. The corrupted
        // frame may be a heartbeat that comes before the Open is written: then no session
        // reaches the acceptor, and the echo waits for one until its node ends (this wait was
        // unbounded, and hung the test about once in twelve runs under load).
        match tokio::time::timeout(Duration::from_secs(3), setup.echo).await {
            Ok(echo) => {
                let echo = echo.unwrap().expect("the server's node is alive");
                assert!(matches!(echo, SessionError::ConnectionLost(_)), "{echo}");
            }
            Err(_) => assert!(
                !setup.accepted.load(Ordering::SeqCst),
                "the server accepted the session, which then did not fail"
            ),
        }
    })
    .await;
}

#[tokio::test]
async fn a_flipped_byte_anywhere_never_panics_or_hangs() {
    within(60, async {
        // Short timeouts: a flip that leaves a reader waiting ends sooner (nothing here
        // expects a success that a timeout could spoil). A flipped length under the maximum
        // waits for that many bytes, which the heartbeats bring: make them frequent.
        let config = Config {
            max_frame: 4096,
            heartbeat_interval: Duration::from_millis(10),
            heartbeat_timeout: Duration::from_millis(300),
            connect_timeout: Duration::from_millis(500),
            open_timeout: Duration::from_millis(500),
            ..quick()
        };
        // Exchanges intact, changed, failed with a session error, failed to open.
        let mut outcomes = [0; 4];
        for at in 0..90 {
            let mut setup = setup(config, Fault::Corrupt(at)).await;
            // A typed error, or the exchange completes: a flipped payload byte may pass
            // unseen (TCP's checksum is the guard there), so echoes may differ.
            match setup.session.as_mut() {
                Ok(session) => match within(5, exchange(session, 5)).await {
                    Ok(changed) => outcomes[usize::from(changed > 0)] += 1,
                    Err(_) => outcomes[2] += 1,
                },
                Err(_) => outcomes[3] += 1,
            }
        }
        // Each flip ended one way or another: no panic, no hang (a message redirected to a
        // session that was never opened is a violation, not a silent loss).
        assert_eq!(outcomes.iter().sum::<usize>(), 90);
        assert!(outcomes[2] + outcomes[3] > 0, "{outcomes:?}");
    })
    .await;
}

#[tokio::test]
async fn slow_reads_keep_order_and_content() {
    within(10, async {
        let setup = setup(quick(), Fault::Delay(Duration::from_millis(5))).await;
        setup.armed.store(true, Ordering::Release);
        let mut session = setup.session.unwrap();
        assert_eq!(exchange(&mut session, 50).await.unwrap(), 0);
    })
    .await;
}

#[tokio::test]
async fn reads_slower_than_the_heartbeat_timeout_are_a_heartbeat_timeout() {
    within(10, async {
        let setup = setup(quick(), Fault::Delay(Duration::from_secs(2))).await;
        let mut session = setup.session.unwrap();
        setup.armed.store(true, Ordering::Release);
        let error = exchange(&mut session, 5).await.unwrap_err();
        assert!(matches!(error, SessionError::HeartbeatTimeout), "{error}");
        let echo = setup.echo.await.unwrap().unwrap();
        assert!(matches!(echo, SessionError::ConnectionLost(_)), "{echo}");
    })
    .await;
}

/// A peer that floods `Open`s, reads none of the answers, then freezes (a stopped process, a
/// vanished host whose socket stays open): the node's reader stops reading it while the
/// answers wait, and its writer cannot write them. Found by an adversarial review: nothing
/// watched the heartbeat there, and every session on the connection waited forever. Now a
/// writer whose socket takes no byte for the heartbeat timeout fails the connection.
#[tokio::test]
async fn a_peer_that_floods_opens_then_freezes_is_a_heartbeat_timeout() {
    within(30, async {
        let config = Config {
            heartbeat_timeout: Duration::from_secs(1),
            ..quick()
        };
        let (_node, conn, peer, mut session) = raw_opened(config, WINDOW).await;
        // The user waits for the peer's next message.
        let waiting = tokio::spawn(async move { session.recv_async().await });
        // The peer floods Opens and reads nothing; its writes stall once the node stops
        // reading it; from then on it is frozen: it neither reads nor writes.
        let (_reading, mut writing) = tokio::io::split(peer.io);
        let _frozen = tokio::spawn(async move {
            for i in 1..1_000_000u64 {
                writing.write_all(&unserved_open(2 * i + 1)).await.unwrap();
            }
        });
        // Ten heartbeat timeouts later the connection must be dead, and the receive failed.
        let result = tokio::time::timeout(Duration::from_secs(10), waiting).await;
        let failure = conn.failure();
        match result {
            Ok(received) => {
                let error = received.unwrap().unwrap_err();
                assert!(matches!(error, SessionError::HeartbeatTimeout), "{error}");
            }
            Err(_) => panic!(
                "a peer silent for 10 heartbeat timeouts still holds its connection \
                 (failure: {failure:?}); the session's receive still waits"
            ),
        }
    })
    .await;
}

/// A node on the caller's runtime (`start_async`) whose runtime ends (a `#[tokio::main]`
/// returning, a test's runtime dropped) before the node shut down: its connection's tasks are
/// dropped with the runtime. Found by an adversarial review: nothing failed the connection, so
/// a `RawSession` still held elsewhere waited forever in `recv` (its inbox's sender lives in
/// the connection, which the session keeps). Now each task's drop fails the connection.
#[test]
fn a_raw_session_outliving_its_nodes_runtime_fails_instead_of_hanging() {
    let (_server, runtime, node, session) = opened_from_a_runtime_of_its_own();
    // The runtime ends first: the node's tasks go with it.
    drop(runtime);
    match recv_within(session, 5) {
        Some(received) => {
            let error = received.unwrap_err();
            assert!(matches!(error, SessionError::ConnectionLost(_)), "{error}");
        }
        None => panic!(
            "a RawSession whose node's runtime is gone still waits in recv after 5 s (a hang)"
        ),
    }
    drop(node);
}

//! Sessions between two nodes over an in-memory `tokio::io::duplex`: opening (and every way
//! it is refused), messages in order both ways, close and abort, credit flow control, many
//! sessions on one connection, and a peer that breaks the rules by hand.

mod common;

use std::io;

use bytes::Bytes;
use common::{BANK, RawPeer, STREAM, WINDOW, node, open_frame, pair, quick, raw_opened, within};
use pipes_net::frame::{AbortCode, Frame, Kind};
use pipes_net::{
    Acceptor, Config, ConnectError, Connection, Node, Origin, Protocol, RawSession, Role,
    SessionError,
};

/// Two nodes joined by a connection, with an acceptor of one protocol on the server. The
/// client node and the connection are only kept alive.
struct Nodes {
    _client: Node,
    _conn: Connection,
    server: Node,
    acceptor: Acceptor,
}

/// Two nodes serving `protocol` and one session of it opened between them: the nodes, the
/// client's session and the server's.
async fn opened(config: Config, protocol: Protocol) -> (Nodes, RawSession, RawSession) {
    let (client, conn, server, _) = pair(config).await;
    let mut acceptor = server.serve(protocol, Role::Server);
    let (session, served) = open_on(&conn, &mut acceptor, protocol).await;
    let nodes = Nodes {
        _client: client,
        _conn: conn,
        server,
        acceptor,
    };
    (nodes, session, served)
}

/// Opens a session of `protocol` on `conn` as the client and accepts it with `acceptor`.
async fn open_on(
    conn: &Connection,
    acceptor: &mut Acceptor,
    protocol: Protocol,
) -> (RawSession, RawSession) {
    let (session, served) = tokio::join!(
        conn.open_async(protocol, Role::Client),
        acceptor.accept_async()
    );
    (session.unwrap(), served.unwrap())
}

#[tokio::test]
async fn a_session_carries_messages_both_ways_in_order() {
    within(10, async {
        let (_nodes, mut client, mut served) = opened(quick(), BANK).await;
        assert_eq!(served.protocol(), "bank");
        client
            .send_async(0, 0, &("alice".to_string(), "pw".to_string()))
            .await
            .unwrap();
        client.send_async(2, 0, &100u64).await.unwrap();
        let login = served.recv_async().await.unwrap();
        assert_eq!((login.state, login.msg), (0, 0));
        assert_eq!(
            login.decode::<(String, String)>().unwrap(),
            ("alice".into(), "pw".into())
        );
        let deposit = served.recv_async().await.unwrap();
        assert_eq!((deposit.state, deposit.msg), (2, 0));
        assert_eq!(deposit.decode::<u64>().unwrap(), 100);
        served.send_async(1, 0, &()).await.unwrap();
        let logged_in = client.recv_async().await.unwrap();
        assert_eq!((logged_in.state, logged_in.msg), (1, 0));
        logged_in.decode::<()>().unwrap();
    })
    .await;
}

#[tokio::test]
async fn an_open_given_up_before_its_answer_ends_the_session_at_the_peer() {
    within(10, async {
        let (_client, conn, server, _) = pair(quick()).await;
        let mut acceptor = server.serve(BANK, Role::Server);
        // The opener gives up (a timeout around the open, a select's other branch) after its
        // Open went out and before the answer came back.
        let mut open = Box::pin(conn.open_async(BANK, Role::Client));
        assert!(common::poll_once(open.as_mut()).await.is_none());
        drop(open);
        // The peer accepted a session nobody holds: it ends, instead of waiting forever.
        let mut served = acceptor.accept_async().await.unwrap();
        assert!(served.recv_async().await.is_err());
    })
    .await;
}

#[tokio::test]
async fn a_fingerprint_mismatch_is_incompatible_at_open_time() {
    within(10, async {
        let (_client, conn, server, _) = pair(quick()).await;
        let _acceptor = server.serve(BANK, Role::Server);
        let other = Protocol::bounded("bank", b"bank fingerprint v2");
        let error = conn.open_async(other, Role::Client).await.unwrap_err();
        assert!(matches!(error, ConnectError::Incompatible(_)), "{error}");
        assert!(error.to_string().contains("`bank` differs"), "{error}");
    })
    .await;
}

/// Protocols are served by name and fingerprint: two sharing a name are served side by side,
/// each open reaching the acceptor of its own fingerprint; an open whose fingerprint is served
/// by neither is incompatible, and the refusal names every fingerprint at both ends.
#[tokio::test]
async fn protocols_sharing_a_name_are_served_side_by_side_by_fingerprint() {
    within(10, async {
        const V2: Protocol = Protocol::bounded("bank", b"v2");
        let (_client, conn, server, _) = pair(quick()).await;
        let mut v1 = server.serve(BANK, Role::Server);
        let mut v2 = server.serve(V2, Role::Server);
        for (protocol, acceptor, n) in [(V2, &mut v2, 2u64), (BANK, &mut v1, 1)] {
            let session = conn.open_async(protocol, Role::Client).await.unwrap();
            session.send_async(0, 0, &n).await.unwrap();
            let mut served = acceptor.accept_async().await.unwrap();
            assert_eq!(
                served.recv_async().await.unwrap().decode::<u64>().unwrap(),
                n
            );
        }
        let v3 = Protocol::bounded("bank", b"v3");
        let error = conn.open_async(v3, Role::Client).await.unwrap_err();
        assert!(matches!(error, ConnectError::Incompatible(_)), "{error}");
        // "bank fingerprint v1" (its first 16 bytes, in hex), "v2" and "v3".
        let named = "fingerprints 62616e6b2066696e6765727072696e74.., 7632 here, 7633 there";
        assert!(error.to_string().contains(named), "{error}");
    })
    .await;
}

/// An unbounded protocol's sessions have credit flow control: a peer whose `Open` grants no
/// window (as a bounded protocol's does) would leave every send of ours unlimited, so it is
/// refused. (Found by an adversarial review: the node took the 0 as "no limit".)
#[tokio::test]
async fn an_open_of_an_unbounded_protocol_with_no_window_is_refused_as_incompatible() {
    within(10, async {
        let (node, conn, mut peer) = RawPeer::attached(quick()).await;
        let mut acceptor = node.serve(STREAM, Role::Server);
        peer.write(open_frame(0)).await;
        match peer.read().await.unwrap().kind {
            Kind::Abort { code, reason } => {
                assert_eq!(code, AbortCode::Incompatible);
                assert!(reason.contains("no credit window"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        assert!(conn.failure().is_none(), "the connection stays up");
        // A well-formed open afterwards is accepted.
        peer.write(Frame {
            session: 3,
            ..open_frame(WINDOW)
        })
        .await;
        assert!(acceptor.accept_async().await.is_some());
    })
    .await;
}

/// An acceptor may have only `Config::backlog` sessions waiting: more `Open`s are refused
/// until it takes some, so a peer that opens sessions nobody accepts cannot grow the node's
/// memory without bound (`hostile_peers.rs` checks that a peer that connects again gets no
/// new room). (Found by an adversarial review: the wait was
/// unbounded.)
#[tokio::test]
async fn opens_past_the_backlog_are_refused_until_sessions_are_accepted() {
    within(10, async {
        let config = Config {
            backlog: 2,
            ..quick()
        };
        let (node, conn, mut peer) = RawPeer::attached(config).await;
        let mut acceptor = node.serve(STREAM, Role::Server);
        let open = |session| Frame {
            session,
            ..open_frame(WINDOW)
        };
        for session in [1, 3, 5] {
            peer.write(open(session)).await;
        }
        for session in [1, 3] {
            let answer = peer.read().await.unwrap();
            assert_eq!(answer.session, session);
            assert!(
                matches!(answer.kind, Kind::Open { .. }),
                "{:?}",
                answer.kind
            );
        }
        let refusal = peer.read().await.unwrap();
        assert_eq!(refusal.session, 5);
        match refusal.kind {
            Kind::Abort { code, reason } => {
                assert_eq!(code, AbortCode::Refused);
                assert!(reason.contains("backlog"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
        assert!(conn.failure().is_none(), "the connection stays up");

        // Accepting one frees its place: the next open is answered, and the one after is not.
        let first = acceptor.accept_async().await.unwrap();
        peer.write(open(7)).await;
        peer.write(open(9)).await;
        let answer = peer.read().await.unwrap();
        assert_eq!(answer.session, 7);
        assert!(
            matches!(answer.kind, Kind::Open { .. }),
            "{:?}",
            answer.kind
        );
        let refusal = peer.read().await.unwrap();
        assert_eq!(refusal.session, 9);
        assert!(matches!(
            refusal.kind,
            Kind::Abort {
                code: AbortCode::Refused,
                ..
            }
        ));

        // Sessions the acceptor never took free their places when it is dropped: a new
        // acceptor gets a full backlog.
        drop(acceptor);
        let mut ended = Vec::new();
        for _ in 0..2 {
            let end = peer.read().await.unwrap();
            assert!(!matches!(end.kind, Kind::Open { .. }), "{:?}", end.kind);
            ended.push(end.session);
        }
        ended.sort();
        assert_eq!(ended, [3, 7], "the sessions never accepted end");
        let mut acceptor = node.serve(STREAM, Role::Server);
        for session in [11, 13] {
            peer.write(open(session)).await;
            let answer = peer.read().await.unwrap();
            assert_eq!(answer.session, session);
            assert!(
                matches!(answer.kind, Kind::Open { .. }),
                "{:?}",
                answer.kind
            );
        }
        assert!(acceptor.accept_async().await.is_some());
        drop(first);
    })
    .await;
}

/// The same from the side that opens: a peer that answers the open of an unbounded protocol
/// with no window is incompatible.
#[tokio::test]
async fn an_answer_with_no_window_for_an_unbounded_protocol_is_incompatible() {
    within(10, async {
        let (_node, conn, mut peer) = RawPeer::attached(quick()).await;
        let opening = tokio::spawn({
            let conn = conn.clone();
            async move { conn.open_async(STREAM, Role::Client).await.map(|_| ()) }
        });
        let open = peer.read().await.unwrap();
        assert!(matches!(open.kind, Kind::Open { .. }), "{:?}", open.kind);
        peer.write(Frame::new(
            open.session,
            Kind::Open {
                role: Role::Server,
                window: 0,
                name: STREAM.name.into(),
                fingerprint: Bytes::from_static(STREAM.fingerprint),
            },
        ))
        .await;
        let error = opening.await.unwrap().unwrap_err();
        assert!(matches!(error, ConnectError::Incompatible(_)), "{error}");
        assert!(error.to_string().contains("no credit window"), "{error}");
    })
    .await;
}

#[tokio::test]
async fn both_ends_in_the_same_role_is_incompatible() {
    within(10, async {
        let (_client, conn, server, _) = pair(quick()).await;
        let _acceptor = server.serve(BANK, Role::Server);
        let error = conn.open_async(BANK, Role::Server).await.unwrap_err();
        assert!(matches!(error, ConnectError::Incompatible(_)), "{error}");
    })
    .await;
}

#[tokio::test]
async fn a_protocol_nobody_serves_is_refused() {
    within(10, async {
        let (_client, conn, server, _) = pair(quick()).await;
        let error = conn.open_async(BANK, Role::Client).await.unwrap_err();
        assert!(matches!(error, ConnectError::Refused(_)), "{error}");
        // A dropped acceptor refuses too.
        drop(server.serve(BANK, Role::Server));
        let error = conn.open_async(BANK, Role::Client).await.unwrap_err();
        assert!(matches!(error, ConnectError::Refused(_)), "{error}");
    })
    .await;
}

/// A protocol whose name or fingerprint no `Open` can carry is refused before anything is
/// sent or kept for it (the session used to stay in the connection's table, one per attempt),
/// and the connection goes on.
#[tokio::test]
async fn an_open_of_a_protocol_whose_name_no_open_can_carry_is_invalid_input() {
    within(10, async {
        let (_client, conn, server, _) = pair(quick()).await;
        let long: &'static str = "n".repeat(pipes_net::frame::MAX_NAME + 1).leak();
        let fingerprint: &'static [u8] = vec![0; pipes_net::frame::MAX_NAME + 1].leak();
        for protocol in [
            Protocol::bounded(long, BANK.fingerprint),
            Protocol::bounded(BANK.name, fingerprint),
        ] {
            let error = conn.open_async(protocol, Role::Client).await.unwrap_err();
            match &error {
                ConnectError::Io(io) => assert_eq!(io.kind(), io::ErrorKind::InvalidInput),
                other => panic!("not invalid input: {other}"),
            }
            assert!(error.to_string().contains("at most"), "{error}");
        }
        let _acceptor = server.serve(BANK, Role::Server);
        assert!(conn.open_async(BANK, Role::Client).await.is_ok());
    })
    .await;
}

#[tokio::test]
async fn a_peer_that_never_answers_the_open_times_out() {
    within(10, async {
        let config = Config {
            open_timeout: std::time::Duration::from_millis(200),
            ..quick()
        };
        let (node, conn, mut peer) = RawPeer::attached(config).await;
        let opening = conn.open_async(BANK, Role::Client);
        let (opened, open) = tokio::join!(opening, peer.read());
        assert!(matches!(opened, Err(ConnectError::Timeout)), "{opened:?}");
        assert!(matches!(open.unwrap().kind, Kind::Open { .. }));
        drop(node);
    })
    .await;
}

#[tokio::test]
async fn close_reaches_the_peer_after_the_messages_before_it() {
    within(10, async {
        let (_nodes, client, mut served) = opened(quick(), STREAM).await;
        for i in 0..10u32 {
            client.send_async(0, 0, &i).await.unwrap();
        }
        client.close();
        for i in 0..10u32 {
            assert_eq!(
                served.recv_async().await.unwrap().decode::<u32>().unwrap(),
                i
            );
        }
        let error = served.recv_async().await.unwrap_err();
        assert!(matches!(error, SessionError::PeerClosed), "{error}");
        // Its sends fail too, and keep failing.
        let error = served.send_async(0, 0, &1u32).await.unwrap_err();
        assert!(matches!(error, SessionError::PeerClosed), "{error}");
        assert!(served.recv_async().await.is_err());
    })
    .await;
}

#[tokio::test]
async fn abort_gives_the_peer_the_reason() {
    within(10, async {
        let (_nodes, mut client, served) = opened(quick(), BANK).await;
        served.abort("the bank is closed");
        match client.recv_async().await {
            Err(SessionError::Aborted(reason)) => assert_eq!(reason, "the bank is closed"),
            other => panic!("{other:?}"),
        }
    })
    .await;
}

#[tokio::test]
async fn a_payload_that_does_not_decode_is_a_violation_the_peer_hears_of() {
    within(10, async {
        let (_nodes, mut client, mut served) = opened(quick(), BANK).await;
        client.send_async(0, 0, "not a number").await.unwrap();
        let message = served.recv_async().await.unwrap();
        let error = message.decode::<(u64, u64)>().unwrap_err();
        assert!(matches!(error, SessionError::Violation(_)), "{error}");
        served.violation(&error.to_string());
        match client.recv_async().await {
            Err(SessionError::Violation(what)) => assert!(what.contains("payload"), "{what}"),
            other => panic!("{other:?}"),
        }
    })
    .await;
}

#[tokio::test]
async fn an_oversized_send_fails_alone_and_the_session_goes_on() {
    within(10, async {
        let config = Config {
            max_message: 1024,
            ..quick()
        };
        let (_nodes, client, mut served) = opened(config, BANK).await;
        let error = client.send_async(0, 0, &vec![7u8; 2000]).await.unwrap_err();
        assert!(
            matches!(
                error,
                SessionError::MessageTooLarge {
                    len: 2002,
                    max: 1024
                }
            ),
            "{error}"
        );
        assert!(!error.is_fatal());
        client.send_async(0, 0, &vec![7u8; 100]).await.unwrap();
        assert_eq!(
            served
                .recv_async()
                .await
                .unwrap()
                .decode::<Vec<u8>>()
                .unwrap(),
            vec![7u8; 100]
        );
    })
    .await;
}

#[tokio::test]
async fn credit_holds_a_fast_sender_to_the_window() {
    within(10, async {
        let config = Config {
            window: 8,
            ..quick()
        };
        let (_nodes, client, mut served) = opened(config, STREAM).await;
        let mut sent = 0u32;
        while client.try_send(0, 0, &sent).unwrap() {
            sent += 1;
        }
        // The window, and not one more, until the receiver takes some.
        assert_eq!(sent, 8);
        for i in 0..4 {
            assert_eq!(
                served.recv_async().await.unwrap().decode::<u32>().unwrap(),
                i
            );
        }
        // Half a window taken: credit for 4 comes back.
        within(5, async {
            while !client.try_send(0, 0, &sent).unwrap() {
                tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            }
        })
        .await;
        sent += 1;
        while client.try_send(0, 0, &sent).unwrap() {
            sent += 1;
        }
        assert_eq!(sent, 12);
        // A blocked send_async goes on when credit comes.
        let sender = async {
            client.send_async(0, 0, &sent).await.unwrap();
        };
        let receiver = async {
            for i in 4..13 {
                assert_eq!(
                    served.recv_async().await.unwrap().decode::<u32>().unwrap(),
                    i
                );
            }
        };
        tokio::join!(sender, receiver);
    })
    .await;
}

#[tokio::test]
async fn two_nodes_that_open_many_sessions_with_each_other_at_once_get_them_all() {
    // Each answer to an Open of this protocol is some 2 KB, so 1,500 Opens each way pass the
    // 1 MiB of answers at which a reader stops reading its peer. Both readers stopped, each
    // writer waited for the other's reader: the connection died of a heartbeat timeout.
    const NAME: &str = concat!(
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
        "a-protocol-whose-name-is-long-enough-that-its-open-and-answer-take-some-room-",
    );
    const LONG: Protocol = Protocol::bounded(NAME, NAME.as_bytes());
    const SESSIONS: usize = 1500;
    within(30, async {
        let (a, a_conn, b, b_conn) = pair(Config {
            backlog: 2 * SESSIONS,
            ..quick()
        })
        .await;
        let mut opens = tokio::task::JoinSet::new();
        for (node, conn) in [(&a, &a_conn), (&b, &b_conn)] {
            let mut acceptor = node.serve(LONG, Role::Server);
            opens.spawn(async move {
                let mut served = Vec::new();
                for _ in 0..SESSIONS {
                    served.push(acceptor.accept_async().await.unwrap());
                }
                served.len()
            });
            for _ in 0..SESSIONS {
                let conn = conn.clone();
                opens.spawn(async move {
                    conn.open_async(LONG, Role::Client).await.unwrap();
                    1
                });
            }
        }
        let mut done = 0;
        while let Some(count) = opens.join_next().await {
            done += count.unwrap();
        }
        assert_eq!(done, 4 * SESSIONS);
    })
    .await;
}

#[tokio::test]
async fn many_sessions_share_one_connection() {
    within(30, async {
        let (client, conn, server, _) = pair(quick()).await;
        let mut acceptor = server.serve(STREAM, Role::Server);
        const SESSIONS: u32 = 50;
        const MESSAGES: u32 = 200;
        let echo = tokio::spawn(async move {
            let mut tasks = Vec::new();
            for _ in 0..SESSIONS {
                let mut session = acceptor.accept_async().await.unwrap();
                tasks.push(tokio::spawn(async move {
                    while let Ok(message) = session.recv_async().await {
                        let (id, i): (u32, u32) = message.decode().unwrap();
                        session.send_async(1, 0, &(id, i)).await.unwrap();
                    }
                }));
            }
            for task in tasks {
                task.await.unwrap();
            }
        });
        let mut tasks = Vec::new();
        for id in 0..SESSIONS {
            let conn = conn.clone();
            tasks.push(tokio::spawn(async move {
                let mut session = conn.open_async(STREAM, Role::Client).await.unwrap();
                for i in 0..MESSAGES {
                    session.send_async(0, 0, &(id, i)).await.unwrap();
                }
                for i in 0..MESSAGES {
                    let reply = session.recv_async().await.unwrap();
                    assert_eq!(reply.decode::<(u32, u32)>().unwrap(), (id, i));
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        echo.await.unwrap();
        assert_eq!(client.connections(), 1);
        assert_eq!(server.connections(), 1);
    })
    .await;
}

#[tokio::test]
async fn dropping_a_node_fails_every_session_on_its_connections() {
    within(10, async {
        let (client, conn, server, _) = pair(quick()).await;
        let mut acceptor = server.serve(STREAM, Role::Server);
        let mut sessions = Vec::new();
        for _ in 0..3 {
            sessions.push(open_on(&conn, &mut acceptor, STREAM).await);
        }
        drop(server);
        for (mut client, mut served) in sessions {
            let error = served.recv_async().await.unwrap_err();
            assert!(matches!(error, SessionError::ConnectionLost(_)), "{error}");
            // This end's own shutdown, not the peer hanging up.
            assert!(error.to_string().contains("the node shut down"), "{error}");
            let error = client.recv_async().await.unwrap_err();
            assert!(matches!(error, SessionError::ConnectionLost(_)), "{error}");
            assert!(client.send_async(0, 0, &1u8).await.is_err());
        }
        assert!(conn.failure().is_some());
        let error = conn.open_async(STREAM, Role::Client).await.unwrap_err();
        assert!(matches!(error, ConnectError::Io(_)), "{error}");
        drop(client);
    })
    .await;
}

#[tokio::test]
async fn messages_past_the_credit_window_are_a_violation() {
    within(10, async {
        let config = Config {
            window: 4,
            ..quick()
        };
        let (_node, _conn, mut peer, mut session) = raw_opened(config, 4).await;
        for i in 0..5u8 {
            let mut frame = Frame::new(1, Kind::Msg { state: 0, msg: 0 });
            frame.payload = Bytes::from(vec![i]);
            peer.write(frame).await;
        }
        for i in 0..4u8 {
            assert_eq!(
                session.recv_async().await.unwrap().decode::<u8>().unwrap(),
                i
            );
        }
        let error = session.recv_async().await.unwrap_err();
        assert!(matches!(error, SessionError::Violation(_)), "{error}");
        // The peer is told, with the code.
        loop {
            match peer.read().await.unwrap().kind {
                Kind::Abort { code, .. } => {
                    assert_eq!(code, AbortCode::Violation);
                    break;
                }
                Kind::Credit { .. } => continue,
                other => panic!("{other:?}"),
            }
        }
    })
    .await;
}

/// A bounded protocol has no credit flow control (its states bound what is in flight), so a
/// peer that ignores the protocol and sends on and on must not fill this end's memory: past
/// the config's window of messages waiting, the session is a violation. Receiving makes room.
/// (The inbox of a bounded protocol's session was unbounded.)
#[tokio::test]
async fn a_bounded_protocols_peer_may_not_send_more_than_the_window_ahead() {
    within(10, async {
        let config = Config {
            window: 4,
            ..quick()
        };
        let (node, _conn, mut peer) = RawPeer::attached(config).await;
        let mut acceptor = node.serve(BANK, Role::Server);
        peer.write(Frame::new(
            1,
            Kind::Open {
                role: Role::Client,
                window: 0,
                name: BANK.name.into(),
                fingerprint: Bytes::from_static(BANK.fingerprint),
            },
        ))
        .await;
        let mut session = acceptor.accept_async().await.unwrap();
        assert!(matches!(peer.read().await.unwrap().kind, Kind::Open { .. }));
        let message = |i: u8| Frame {
            payload: Bytes::from(vec![i]),
            ..Frame::new(1, Kind::Msg { state: 0, msg: 0 })
        };
        // Four waiting, then taken: room for four more.
        for i in 0..4 {
            peer.write(message(i)).await;
        }
        for i in 0..4 {
            assert_eq!(
                session.recv_async().await.unwrap().decode::<u8>().unwrap(),
                i
            );
        }
        for i in 4..9 {
            peer.write(message(i)).await;
        }
        for i in 4..8 {
            assert_eq!(
                session.recv_async().await.unwrap().decode::<u8>().unwrap(),
                i
            );
        }
        let error = session.recv_async().await.unwrap_err();
        assert!(matches!(error, SessionError::Violation(_)), "{error}");
        match peer.read().await.unwrap().kind {
            Kind::Abort { code, reason } => {
                assert_eq!(code, AbortCode::Violation);
                assert!(reason.contains("more than 4 messages"), "{reason}");
            }
            other => panic!("{other:?}"),
        }
    })
    .await;
}

#[tokio::test]
async fn a_malformed_frame_fails_the_connection_with_a_violation() {
    within(10, async {
        let (_node, conn, mut peer, mut session) = raw_opened(quick(), WINDOW).await;
        peer.write_body(b"\x01\x09").await; // kind 9 does not exist
        let error = session.recv_async().await.unwrap_err();
        assert!(
            matches!(error, SessionError::Violation(ref what) if what.contains("kind 9")),
            "{error}"
        );
        assert!(matches!(conn.failure(), Some(SessionError::Violation(_))));
        // The node hangs up.
        while peer.read().await.is_some() {}
    })
    .await;
}

#[tokio::test]
async fn an_oversized_frame_from_the_peer_fails_the_connection() {
    within(10, async {
        let config = Config {
            max_frame: 1000,
            ..quick()
        };
        let (_node, _conn, mut peer, mut session) = raw_opened(config, WINDOW).await;
        peer.write_body(&[0; 1001]).await;
        let error = session.recv_async().await.unwrap_err();
        assert!(
            matches!(
                error,
                SessionError::FrameTooLarge {
                    len: 1001,
                    max: 1000
                }
            ),
            "{error}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_silent_peer_is_a_heartbeat_timeout() {
    within(10, async {
        let (_node, _conn, _peer, mut session) = raw_opened(quick(), WINDOW).await;
        // The raw peer sends no heartbeats.
        let error = session.recv_async().await.unwrap_err();
        assert!(matches!(error, SessionError::HeartbeatTimeout), "{error}");
    })
    .await;
}

#[tokio::test]
async fn a_peer_that_is_not_pipes_net_is_incompatible() {
    within(10, async {
        let node = node(quick()).await;
        let (a, mut b) = tokio::io::duplex(1024);
        let junk = async {
            use tokio::io::AsyncWriteExt;
            b.write_all(b"\x00\x00\x00\x05HTTP/").await.unwrap();
            b
        };
        let (attached, _b) = tokio::join!(node.attach_async(a, Origin::Dialed), junk);
        assert!(
            matches!(attached, Err(ConnectError::Incompatible(_))),
            "{attached:?}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_peer_that_hangs_up_during_the_hello_is_an_io_error() {
    within(10, async {
        let node = node(quick()).await;
        let (a, b) = tokio::io::duplex(1024);
        drop(b);
        match node.attach_async(a, Origin::Dialed).await {
            Err(ConnectError::Io(error)) => assert!(
                matches!(
                    error.kind(),
                    io::ErrorKind::UnexpectedEof | io::ErrorKind::BrokenPipe
                ),
                "{error}"
            ),
            other => panic!("{other:?}"),
        }
    })
    .await;
}

#[tokio::test]
async fn a_frame_for_a_session_never_opened_is_a_violation() {
    within(10, async {
        let (_node, conn, mut peer, mut session) = raw_opened(quick(), WINDOW).await;
        // Session 9 would be the peer's fifth; it opened only session 1.
        peer.write(Frame::new(9, Kind::Msg { state: 0, msg: 0 }))
            .await;
        let error = session.recv_async().await.unwrap_err();
        assert!(
            matches!(error, SessionError::Violation(ref what) if what.contains("never opened")),
            "{error}"
        );
        assert!(conn.failure().is_some());
    })
    .await;
}

#[tokio::test]
async fn a_second_open_of_a_session_is_a_violation() {
    within(10, async {
        let (_node, conn, mut peer, session) = raw_opened(quick(), WINDOW).await;
        session.close();
        assert_eq!(peer.read().await.unwrap().kind, Kind::Close);
        peer.write(open_frame(WINDOW)).await;
        // The node hangs up.
        while peer.read().await.is_some() {}
        assert!(
            matches!(conn.failure(), Some(SessionError::Violation(ref what)) if what.contains("second Open")),
            "{:?}",
            conn.failure()
        );
    })
    .await;
}

#[tokio::test]
async fn an_acceptor_ends_when_its_node_is_dropped() {
    within(10, async {
        let (mut nodes, _client, _served) = opened(quick(), STREAM).await;
        // Sessions still alive keep the connection's state alive, not the acceptor.
        drop(nodes.server);
        assert!(nodes.acceptor.accept_async().await.is_none());
    })
    .await;
}

#[test]
fn public_types_cross_threads() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    send_sync::<pipes_net::Node>();
    send_sync::<pipes_net::Connection>();
    send_sync::<pipes_net::RawSession>();
    send_sync::<pipes_net::RawMessage>();
    send::<pipes_net::Acceptor>();
    send_sync::<ConnectError>();
    send_sync::<SessionError>();
    send_sync::<pipes_net::frame::Frame>();
}

#[tokio::test]
async fn a_large_frame_arriving_slowly_is_not_a_heartbeat_timeout() {
    within(10, async {
        use tokio::io::AsyncWriteExt;
        let (_node, conn, mut peer, mut session) = raw_opened(quick(), WINDOW).await;
        let mut frame = Frame::new(1, Kind::Msg { state: 0, msg: 0 });
        frame.payload = postcard::to_allocvec(&vec![7u8; 64 << 10]).unwrap().into();
        let mut out = bytes::BytesMut::new();
        frame.encode(usize::MAX, &mut out).unwrap();
        // 64 KiB in 1 KiB pieces every 20 ms: longer than the heartbeat timeout (1 s) in
        // all, with no heartbeat between, but never silent for long.
        let writer = async {
            for chunk in out.chunks(1024) {
                peer.io.write_all(chunk).await.unwrap();
                tokio::time::sleep(std::time::Duration::from_millis(20)).await;
            }
        };
        let (message, ()) = tokio::join!(session.recv_async(), writer);
        assert_eq!(
            message.unwrap().decode::<Vec<u8>>().unwrap(),
            vec![7u8; 64 << 10]
        );
        assert!(conn.failure().is_none());
    })
    .await;
}

/// A payload whose serialization fails.
struct Unserializable;

impl serde::Serialize for Unserializable {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("this payload refuses"))
    }
}

#[tokio::test]
async fn a_payload_that_does_not_serialize_fails_that_send_alone() {
    within(10, async {
        let (_nodes, client, mut served) = opened(quick(), STREAM).await;
        let error = client.send_async(0, 0, &Unserializable).await.unwrap_err();
        // postcard keeps no custom message, only that serialization failed.
        assert!(matches!(error, SessionError::Payload(_)), "{error}");
        assert!(!error.is_fatal());
        client.send_async(0, 0, &5u8).await.unwrap();
        assert_eq!(
            served.recv_async().await.unwrap().decode::<u8>().unwrap(),
            5
        );
    })
    .await;
}

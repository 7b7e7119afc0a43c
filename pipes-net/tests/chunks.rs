//! Chunked messages (`frame` module docs, "Chunks"): a 10 MB payload crosses whole, a small
//! message on another session is not held behind a large one (counted in frames on the wire,
//! not timed), a chunked message sent by hand is put together, and every way a peer can break
//! the rules of chunks is a violation of its session, within the per-message limit.

mod common;

use bytes::Bytes;
use common::{RawPeer, STREAM, WINDOW, open_frame, pair, quick, raw_opened, within};
use pipes_net::frame::{AbortCode, DEFAULT_CHUNK, Frame, Kind};
use pipes_net::{Config, Role, SessionError};

/// A payload whose every byte depends on its position, so a piece out of place shows.
fn payload(len: usize) -> Vec<u8> {
    (0..len).map(|i| (i % 251) as u8).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_10_mb_payload_round_trips_in_chunks() {
    within(60, async {
        let (_client, conn, server, _) = pair(quick()).await;
        let mut acceptor = server.serve(STREAM, Role::Server);
        let (session, served) = tokio::join!(
            conn.open_async(STREAM, Role::Client),
            acceptor.accept_async()
        );
        let (mut session, mut served) = (session.unwrap(), served.unwrap());
        let echo = tokio::spawn(async move {
            let message = served.recv_async().await.unwrap();
            let bytes: Vec<u8> = message.decode().unwrap();
            served.send_async(1, 0, &bytes).await.unwrap();
            served
        });
        let big = payload(10 << 20);
        session.send_async(0, 0, &big).await.unwrap();
        let answer = session.recv_async().await.unwrap();
        assert_eq!((answer.state, answer.msg), (1, 0));
        assert!(
            answer.decode::<Vec<u8>>().unwrap() == big,
            "the payload changed"
        );
        drop(echo.await.unwrap());
    })
    .await;
}

/// The raw peer's `Open` of session `id` of `STREAM`, without flow control.
fn open(id: u64) -> Frame {
    Frame {
        session: id,
        ..open_frame(WINDOW)
    }
}

/// A frame of `session` with a payload.
fn with_payload(session: u64, kind: Kind, payload: &[u8]) -> Frame {
    Frame {
        session,
        kind,
        payload: Bytes::copy_from_slice(payload),
    }
}

/// What the raw peer reads of one large message of session 1: its pieces so far, in order.
#[derive(Default)]
struct Large {
    announced: Option<u64>,
    payload: Vec<u8>,
    pieces: usize,
}

impl Large {
    /// Takes a chunk of session 1; whether the message is whole.
    fn take(&mut self, frame: Frame) -> bool {
        match frame.kind {
            Kind::Begin { state, msg, len } => {
                assert_eq!((state, msg), (0, 0));
                assert!(self.announced.replace(len).is_none(), "a second Begin");
            }
            Kind::More => assert!(self.announced.is_some(), "a More before the Begin"),
            other => panic!("{other:?} inside the chunked message"),
        }
        assert!(
            frame.payload.len() <= DEFAULT_CHUNK,
            "a piece over the chunk size"
        );
        self.payload.extend_from_slice(&frame.payload);
        self.pieces += 1;
        self.payload.len() as u64 == self.announced.unwrap()
    }
}

#[tokio::test]
async fn a_small_message_is_not_held_behind_a_large_one() {
    within(30, async {
        // The raw peer sends no heartbeats, and encoding 10 MB in a debug build is slow.
        let config = Config {
            heartbeat_timeout: std::time::Duration::from_secs(60),
            ..quick()
        };
        let (node, _conn, mut peer) = RawPeer::attached(config).await;
        let mut acceptor = node.serve(STREAM, Role::Server);
        peer.write(open(1)).await;
        peer.write(open(3)).await;
        let large_session = acceptor.accept_async().await.unwrap();
        let small_session = acceptor.accept_async().await.unwrap();
        for _ in 0..2 {
            assert!(matches!(peer.read().await.unwrap().kind, Kind::Open { .. }));
        }
        let big = payload(10 << 20);
        // Queued one after the other, before the writer has run (this runtime has one thread
        // and neither send waits): the small message goes out first, the large one cut.
        large_session.send_async(0, 0, &big).await.unwrap();
        small_session.send_async(0, 0, &1u32).await.unwrap();
        let mut large = Large::default();
        let frame = peer.read().await.unwrap();
        assert_eq!(
            (frame.session, &frame.kind),
            (3, &Kind::Msg { state: 0, msg: 0 })
        );
        // Then, with the large message under way, another small one: the writer is held
        // by the pipe (64 KiB) and its own buffer (64 KiB), so at most a few pieces already
        // written can come before it, out of 160.
        for _ in 0..10 {
            let frame = peer.read().await.unwrap();
            assert_eq!(frame.session, 1);
            assert!(!large.take(frame));
        }
        small_session.send_async(0, 0, &2u32).await.unwrap();
        let before = large.pieces;
        loop {
            let frame = peer.read().await.unwrap();
            if frame.session == 3 {
                assert_eq!(frame.kind, Kind::Msg { state: 0, msg: 0 });
                assert_eq!(&frame.payload[..], [2]);
                break;
            }
            assert!(
                !large.take(frame),
                "the small message waited for the large one"
            );
        }
        assert!(
            large.pieces - before <= 4,
            "{} pieces before the small message",
            large.pieces - before
        );
        // The large message goes on, whole and in order.
        while !large.take(peer.read().await.unwrap()) {}
        assert_eq!(large.payload, postcard::to_allocvec(&big).unwrap());
        assert_eq!(large.pieces, large.payload.len().div_ceil(DEFAULT_CHUNK));
    })
    .await;
}

#[tokio::test]
async fn a_chunked_message_sent_by_hand_is_put_together() {
    within(10, async {
        let (_node, _conn, mut peer, mut session) = raw_opened(quick(), WINDOW).await;
        let text = "chunk ".repeat(100);
        let bytes = postcard::to_allocvec(&text).unwrap();
        let (first, rest) = bytes.split_at(10);
        let (second, third) = rest.split_at(300);
        let len = bytes.len() as u64;
        let begin = Kind::Begin {
            state: 2,
            msg: 1,
            len,
        };
        peer.write(with_payload(1, begin, first)).await;
        peer.write(with_payload(1, Kind::More, second)).await;
        peer.write(with_payload(1, Kind::More, third)).await;
        let message = session.recv_async().await.unwrap();
        assert_eq!((message.state, message.msg), (2, 1));
        assert_eq!(message.decode::<String>().unwrap(), text);
        // The session goes on with whole messages.
        peer.write(with_payload(1, Kind::Msg { state: 0, msg: 0 }, &[7]))
            .await;
        assert_eq!(session.recv_async().await.unwrap().payload[..], [7]);
    })
    .await;
}

/// Sends `frames` on session 1 from a raw peer to a node whose messages may be 1000 bytes:
/// the violation the node's session fails with, after checking the peer is told.
async fn violation(frames: Vec<Frame>) -> String {
    let config = Config {
        max_message: 1000,
        ..quick()
    };
    let (_node, conn, mut peer, mut session) = raw_opened(config, WINDOW).await;
    for frame in frames {
        peer.write(frame).await;
    }
    // Messages that were whole before it come first.
    let what = loop {
        match session.recv_async().await {
            Ok(_) => continue,
            Err(SessionError::Violation(what)) => break what,
            Err(other) => panic!("{other:?}"),
        }
    };
    match peer.read().await.unwrap().kind {
        Kind::Abort { code, reason } => {
            assert_eq!(code, AbortCode::Violation);
            assert_eq!(reason, what);
        }
        other => panic!("{other:?}"),
    }
    // A session's violation, not the connection's.
    assert!(conn.failure().is_none());
    what
}

fn begin(len: u64, piece: &[u8]) -> Frame {
    with_payload(
        1,
        Kind::Begin {
            state: 0,
            msg: 0,
            len,
        },
        piece,
    )
}

#[tokio::test]
async fn a_message_announced_over_the_limit_is_a_violation() {
    within(10, async {
        // Nothing like that length is ever sent, or held.
        let what = violation(vec![begin(u64::MAX, &[0; 10])]).await;
        assert!(what.contains("over the maximum of 1000"), "{what}");
        let what = violation(vec![begin(1001, &[0; 10])]).await;
        assert!(what.contains("over the maximum of 1000"), "{what}");
    })
    .await;
}

#[tokio::test]
async fn a_whole_message_over_the_limit_is_a_violation() {
    within(10, async {
        let what = violation(vec![with_payload(
            1,
            Kind::Msg { state: 0, msg: 0 },
            &[0; 1001],
        )])
        .await;
        assert!(what.contains("over the maximum of 1000"), "{what}");
    })
    .await;
}

#[tokio::test]
async fn chunks_past_the_announced_length_are_a_violation() {
    within(10, async {
        let what = violation(vec![
            begin(100, &[0; 60]),
            with_payload(1, Kind::More, &[0; 41]),
        ])
        .await;
        assert!(what.contains("more than the 100 bytes announced"), "{what}");
        let what = violation(vec![begin(10, &[0; 11])]).await;
        assert!(what.contains("longer than its message of 10"), "{what}");
    })
    .await;
}

#[tokio::test]
async fn a_chunk_with_no_message_in_progress_is_a_violation() {
    within(10, async {
        let what = violation(vec![with_payload(1, Kind::More, &[0; 5])]).await;
        assert!(what.contains("no chunked message in progress"), "{what}");
        // Also once a chunked message is done.
        let what = violation(vec![
            begin(4, &[1, 2]),
            with_payload(1, Kind::More, &[3, 4]),
            with_payload(1, Kind::More, &[5]),
        ])
        .await;
        assert!(what.contains("no chunked message in progress"), "{what}");
    })
    .await;
}

#[tokio::test]
async fn another_message_or_a_close_inside_a_chunked_one_is_a_violation() {
    within(10, async {
        for inside in [
            with_payload(1, Kind::Msg { state: 0, msg: 0 }, &[1]),
            begin(10, &[1]),
            Frame::new(1, Kind::Close),
        ] {
            let name = inside.kind.name();
            let what = violation(vec![begin(100, &[0; 10]), inside]).await;
            assert!(what.contains("inside a chunked message"), "{name}: {what}");
        }
    })
    .await;
}

/// Two nodes over a pipe with `client` and `server` settings; the server serves `STREAM`.
/// Returns the nodes, a session opened from the client and the server's end of it.
async fn sessions_between(
    client: Config,
    server: Config,
) -> (
    (pipes_net::Node, pipes_net::Node),
    pipes_net::RawSession,
    pipes_net::RawSession,
) {
    let (a, b) = tokio::io::duplex(64 << 10);
    let (client, server) = (common::node(client).await, common::node(server).await);
    let mut acceptor = server.serve(STREAM, Role::Server);
    let (dialed, accepted) = tokio::join!(
        client.attach_async(a, pipes_net::Origin::Dialed),
        server.attach_async(b, pipes_net::Origin::Accepted)
    );
    let (dialed, _accepted) = (dialed.unwrap(), accepted.unwrap());
    let (session, served) = tokio::join!(
        dialed.open_async(STREAM, Role::Client),
        acceptor.accept_async()
    );
    ((client, server), session.unwrap(), served.unwrap())
}

/// Nodes with different limits: each end cuts its frames to the smaller `max_frame` (the
/// hello carries both ends' limits). A sender used to cut by its own: a 2000-byte message,
/// legal on its side, reached a peer whose `max_frame` is 1024 as one frame, and the peer
/// failed the whole connection with `FrameTooLarge` (found by the review of pipes-net).
#[tokio::test]
async fn a_peer_with_a_smaller_max_frame_gets_chunks_it_can_read() {
    within(20, async {
        let small = Config {
            max_frame: 1024,
            ..quick()
        };
        for (client, server) in [(quick(), small), (small, quick())] {
            let (_nodes, mut session, mut served) = sessions_between(client, server).await;
            session.send_async(0, 0, &payload(2000)).await.unwrap();
            let message = served.recv_async().await.unwrap();
            assert_eq!(message.decode::<Vec<u8>>().unwrap(), payload(2000));
            served.send_async(0, 0, &payload(3000)).await.unwrap();
            let message = session.recv_async().await.unwrap();
            assert_eq!(message.decode::<Vec<u8>>().unwrap(), payload(3000));
        }
    })
    .await;
}

/// A message longer than the peer's `max_message` fails its own send, typed, and nothing
/// else: the session and the connection go on.
#[tokio::test]
async fn a_message_over_the_peers_max_message_fails_its_send_alone() {
    within(20, async {
        let small = Config {
            max_message: 1000,
            ..quick()
        };
        let (_nodes, session, mut served) = sessions_between(quick(), small).await;
        let error = session.send_async(0, 0, &payload(2000)).await.unwrap_err();
        assert!(
            matches!(error, SessionError::MessageTooLarge { max: 1000, .. }),
            "{error}"
        );
        session.send_async(0, 0, &payload(100)).await.unwrap();
        let message = served.recv_async().await.unwrap();
        assert_eq!(message.decode::<Vec<u8>>().unwrap(), payload(100));
    })
    .await;
}

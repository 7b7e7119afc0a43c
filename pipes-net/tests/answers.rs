//! A peer that writes and never reads: what the node answers it (here the refusals of `Open`s
//! for a protocol nobody serves) must not pile up without bound. Found by an adversarial
//! review: 100,000 small `Open`s made the node hold 6.7 times the bytes the peer sent. Now the
//! node stops reading such a peer once a bounded backlog of answers waits, and goes on once the
//! peer reads them.
//!
//!
//! The credit a session hands back for the peer's messages is an answer too. The same review
//! found that each was a frame of its own in the outbound queue: a peer sending in lockstep
//! and never reading made the node hold 7.8 times the bytes it sent. Now a session's pending
//! credit is one number, added to its `Credit` frame still in the queue.
//!
//! Its own test program: a counting global allocator measures the bytes the node keeps live
//! (and its tests take turns, so that one's bytes do not blur the other's count).

mod common;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use common::counting::{Counting, live};
use common::{RawPeer, WINDOW, quick, raw_opened, unserved_open, within};
use pipes_net::Config;
use pipes_net::frame::{AbortCode, Frame, Kind};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWriteExt};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Held by each test: they measure the bytes of the whole process.
static TURNS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

/// The next frame body from the node.
async fn read_body(from: &mut (impl AsyncRead + Unpin)) -> Bytes {
    let mut len = [0; 4];
    from.read_exact(&mut len).await.unwrap();
    let mut body = vec![0; u32::from_be_bytes(len) as usize];
    from.read_exact(&mut body).await.unwrap();
    body.into()
}

#[tokio::test]
async fn a_peer_that_never_reads_its_answers_stops_being_read_and_the_backlog_stays_bounded() {
    let _turn = TURNS.lock().await;
    within(60, async {
        let config = Config {
            heartbeat_timeout: Duration::from_secs(60),
            ..quick()
        };
        let (_node, conn, peer) = RawPeer::attached(config).await;
        let (mut reading, mut writing) = tokio::io::split(peer.io);
        let before = live();
        let n = 100_000u64;
        let written = Arc::new(AtomicU64::new(0));
        let writer = tokio::spawn({
            let written = Arc::clone(&written);
            async move {
                for i in 0..n {
                    writing.write_all(&unserved_open(2 * i + 1)).await.unwrap();
                    written.fetch_add(1, Ordering::Relaxed);
                }
                writing
            }
        });
        // The peer reads nothing for a while: the node stops reading it.
        tokio::time::sleep(Duration::from_millis(500)).await;
        let grown = live() - before;
        let sent = written.load(Ordering::Relaxed);
        assert!(
            sent < n,
            "every Open went through a node whose answers nobody read"
        );
        assert!(
            grown < 4 << 20,
            "the peer wrote {sent} Opens and read nothing; the node holds {grown} more bytes"
        );
        assert!(conn.failure().is_none(), "{:?}", conn.failure());
        // Now the peer reads: every Open gets its refusal, in order, and the writes finish.
        let mut refused = 0;
        while refused < n {
            let body = read_body(&mut reading).await;
            let frame = Frame::decode(body).unwrap();
            match frame.kind {
                Kind::Ping => continue,
                Kind::Abort { code, .. } => {
                    assert_eq!(code, AbortCode::Refused);
                    assert_eq!(frame.session, 2 * refused + 1);
                    refused += 1;
                }
                other => panic!("{other:?}"),
            }
        }
        writer.await.unwrap();
        assert!(conn.failure().is_none(), "{:?}", conn.failure());
    })
    .await;
}

#[tokio::test]
async fn credit_for_a_peer_that_never_reads_stays_one_frame_per_session() {
    let _turn = TURNS.lock().await;
    within(120, async {
        let config = Config {
            // A credit every message (half of a window of 2): the smallest peer input per
            // credit. The default window (1024) piled up the same way, 512 times slower.
            window: 2,
            heartbeat_timeout: Duration::from_secs(60),
            ..quick()
        };
        let (_node, conn, peer, mut session) = raw_opened(config, WINDOW).await;
        // From here on the peer never reads a byte.
        let (_reading, mut writing) = tokio::io::split(peer.io);
        let mut msg = BytesMut::new();
        Frame {
            payload: Bytes::from_static(&[0]),
            ..Frame::new(1, Kind::Msg { state: 0, msg: 0 })
        }
        .encode(usize::MAX, &mut msg)
        .unwrap();
        let before = live();
        let n = 200_000usize;
        // In lockstep (one message in flight at most), so the peer never exceeds its window.
        for _ in 0..n {
            writing.write_all(&msg).await.unwrap();
            session.recv_async().await.unwrap();
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let grown = live() - before;
        let sent = n * msg.len();
        assert!(conn.failure().is_none(), "{:?}", conn.failure());
        assert!(
            grown < 4 << 20,
            "the peer wrote {n} messages ({sent} bytes) and read nothing; the node now holds \
             {grown} more bytes (unwritten Credit frames)"
        );
    })
    .await;
}

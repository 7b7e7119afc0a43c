//! A message waiting to be received holds its own bytes, not the read buffer it arrived in.
//! A peer can interleave large messages on a session the application reads with tiny ones on
//! a session it does not read yet (up to the credit window of them): if each tiny payload kept
//! the block it was read into alive, the node would hold the large messages' bytes too.
//!
//! Its own test program: a counting global allocator measures the bytes the node keeps live.

mod common;

use bytes::Bytes;
use common::counting::{Counting, live};
use common::{RawPeer, STREAM, WINDOW, open_frame, quick, within};
use pipes_net::frame::{Frame, Kind};
use pipes_net::{Config, Role};

#[global_allocator]
static GLOBAL: Counting = Counting;

/// A whole message of `len` bytes on `session`.
fn message(session: u64, len: usize) -> Frame {
    Frame {
        payload: Bytes::from(vec![7; len]),
        ..Frame::new(session, Kind::Msg { state: 0, msg: 0 })
    }
}

#[tokio::test]
async fn unreceived_small_messages_do_not_keep_the_large_ones_read_beside_them() {
    within(60, async {
        let config = Config {
            max_frame: 4 << 20,
            ..quick()
        };
        let (node, _conn, mut peer) = RawPeer::attached(config).await;
        let mut acceptor = node.serve(STREAM, Role::Server);
        peer.write(open_frame(WINDOW)).await;
        peer.write(Frame {
            session: 3,
            ..open_frame(WINDOW)
        })
        .await;
        let _idle = acceptor.accept_async().await.unwrap();
        let mut busy = acceptor.accept_async().await.unwrap();
        for _ in 0..2 {
            assert!(matches!(peer.read().await.unwrap().kind, Kind::Open { .. }));
        }
        let before = live();
        let rounds = 128;
        let large = 1 << 20;
        for _ in 0..rounds {
            // The small one both before and after the large one in the stream.
            peer.write(message(1, 8)).await;
            peer.write(message(3, large)).await;
            peer.write(message(1, 8)).await;
            let received = busy.recv_async().await.unwrap();
            assert_eq!(received.payload.len(), large);
        }
        // Let the last small message reach its session.
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        let held = live() - before;
        // Without the copies, each kept a block of 8 KiB or more: 2 MiB here.
        assert!(
            held < 256 << 10,
            "{} unreceived 8-byte messages (read beside 1 MiB ones, all received and dropped) \
             keep {held} bytes alive",
            2 * rounds
        );
    })
    .await;
}

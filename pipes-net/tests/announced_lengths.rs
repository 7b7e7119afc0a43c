//! A frame's length prefix is only a claim: the reader's buffer grows as the frame's bytes
//! arrive, not to the announced length at once. Found by an adversarial review: tokio-util's
//! length-delimited codec reserved the whole announced length as soon as the 4-byte prefix
//! came, so any TCP client could make a listening node allocate `max_frame` (16 MiB) per
//! connection with 4 bytes, before the hello said who it was, and keep it by trickling bytes.
//! Now the hello is read with a maximum of its own (64 bytes), and a frame's buffer grows by
//! 64 KiB or by what came.
//!
//! Its own test program: a counting global allocator measures the bytes the node keeps live
//! (and its tests take turns, so that one's bytes do not blur the other's count).

mod common;

use std::time::Duration;

use common::counting::{Counting, live};
use common::{RawPeer, quick, within};
use pipes_net::{Node, SessionError};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

#[global_allocator]
static GLOBAL: Counting = Counting;

/// Held by each test: they measure the bytes of the whole process.
static TURNS: tokio::sync::Mutex<()> = tokio::sync::Mutex::const_new(());

#[tokio::test]
async fn a_hellos_length_prefix_alone_allocates_nothing_like_the_announced_length() {
    let _turn = TURNS.lock().await;
    within(30, async {
        let node = Node::builder()
            .listen("127.0.0.1:0".parse().unwrap())
            .config(quick())
            .start_async()
            .await
            .unwrap();
        let addr = node.local_addr().unwrap();
        let max = node.config().max_frame as u32;
        let connections = 4;
        let mut peers = Vec::new();
        // Let the node settle before measuring.
        tokio::time::sleep(Duration::from_millis(100)).await;
        let before = live();
        for _ in 0..connections {
            let mut peer = TcpStream::connect(addr).await.unwrap();
            // The length of the hello frame: the maximum. Then nothing.
            peer.write_all(&max.to_be_bytes()).await.unwrap();
            peers.push(peer);
        }
        tokio::time::sleep(Duration::from_millis(300)).await;
        let grown = live() - before;
        assert!(
            grown < 2 << 20,
            "{connections} connections that sent 4 bytes each (a hello's length prefix, no \
             body) make the node hold {grown} more bytes"
        );
        drop(peers);
        node.shutdown().await;
    })
    .await;
}

#[tokio::test]
async fn a_frames_length_prefix_alone_allocates_at_most_a_block() {
    let _turn = TURNS.lock().await;
    within(30, async {
        let (node, conn, mut peer) = RawPeer::attached(quick()).await;
        let max = node.config().max_frame as u32;
        tokio::time::sleep(Duration::from_millis(100)).await;
        let before = live();
        // A frame of the maximum length, announced, and 1 KiB of it: then nothing.
        peer.io.write_all(&max.to_be_bytes()).await.unwrap();
        peer.io.write_all(&[0; 1 << 10]).await.unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let grown = live() - before;
        assert!(
            grown < 1 << 20,
            "a peer that announced a frame of {max} bytes and sent 1 KiB of it makes the node \
             hold {grown} more bytes"
        );
        // The peer, silent inside its frame, times out.
        let failure = loop {
            if let Some(failure) = conn.failure() {
                break failure;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert!(
            matches!(failure, SessionError::HeartbeatTimeout),
            "{failure}"
        );
    })
    .await;
}

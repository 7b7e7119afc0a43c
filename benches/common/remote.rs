//! What the remote benchmarks share: the hand-written floor's framing (plain tokio TCP,
//! tokio-util's length-delimited codec and postcard, no pipes-net), the protocols pipes-net
//! runs, and a tokio runtime per side, as two processes would each have.
#![allow(dead_code)]

use std::io;
use std::net::SocketAddr;

use bytes::{Bytes, BytesMut};
use pipes::net::Protocol;
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_util::codec::{Decoder, Encoder, LengthDelimitedCodec};

/// Pingpong from the client's side: it sends `Ping(u64)`, the server answers `Pong(u64)`.
pub const PINGPONG: Protocol = Protocol::bounded(
    "pingpong",
    b"pingpong: 0 send Ping(u64) -> 1; 1 recv Pong(u64) -> 0",
);

/// msgsend from a worker's side: `Request(u64)` again and again, then the end.
pub const MSGSEND: Protocol = Protocol::unbounded("msgsend", b"msgsend: 0 send Request(u64) -> 0");

/// A current-thread tokio runtime: each side of a remote benchmark has its own, on its own
/// thread, as two processes would.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a tokio runtime")
}

pub fn localhost() -> SocketAddr {
    SocketAddr::from(([127, 0, 0, 1], 0))
}

/// The floor's end of a TCP stream, written by hand: each message is a postcard body behind
/// the length-delimited codec's `u32` length, as pipes-net's frames are (less their session
/// and message header).
pub struct Wire {
    stream: TcpStream,
    codec: LengthDelimitedCodec,
    read: BytesMut,
    write: BytesMut,
}

impl Wire {
    pub fn new(stream: TcpStream) -> Self {
        stream.set_nodelay(true).expect("TCP_NODELAY");
        Wire {
            stream,
            codec: LengthDelimitedCodec::new(),
            read: BytesMut::with_capacity(8192),
            write: BytesMut::with_capacity(8192),
        }
    }

    /// Encodes `value` into the write buffer.
    pub fn feed<T: Serialize>(&mut self, value: &T) -> io::Result<()> {
        let body = postcard::to_stdvec(value).map_err(io::Error::other)?;
        self.codec.encode(Bytes::from(body), &mut self.write)
    }

    /// How many encoded bytes wait in the write buffer.
    pub fn buffered(&self) -> usize {
        self.write.len()
    }

    /// Writes the write buffer out.
    pub async fn flush(&mut self) -> io::Result<()> {
        self.stream.write_all(&self.write).await?;
        self.write.clear();
        Ok(())
    }

    /// Encodes and writes one message.
    pub async fn send<T: Serialize>(&mut self, value: &T) -> io::Result<()> {
        self.feed(value)?;
        self.flush().await
    }

    /// The next message, or `None` at the end of the stream.
    pub async fn recv<T: DeserializeOwned>(&mut self) -> io::Result<Option<T>> {
        loop {
            if let Some(body) = self.codec.decode(&mut self.read)? {
                return postcard::from_bytes(&body)
                    .map(Some)
                    .map_err(io::Error::other);
            }
            if self.stream.read_buf(&mut self.read).await? == 0 {
                return Ok(None);
            }
        }
    }

    /// Ends the stream (the peer's `recv` returns `None`).
    pub async fn shutdown(&mut self) -> io::Result<()> {
        self.stream.shutdown().await
    }
}

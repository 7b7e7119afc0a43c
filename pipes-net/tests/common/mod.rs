//! What the tests share: nodes joined by an in-memory `tokio::io::duplex`, a hand-driven peer
//! that speaks raw frames, a fault-injecting transport, and a timeout so that a hang fails a
//! test instead of blocking it.

#![allow(dead_code)]

pub mod counting;

use std::io;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, ready};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use pipes_net::frame::{DEFAULT_MAX_FRAME, DEFAULT_MAX_MESSAGE, Frame, Kind, hello, read_hello};
use pipes_net::{Config, Connection, Node, Origin, Protocol, RawSession, Role};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, DuplexStream, ReadBuf};

/// An unbounded protocol (credit flow control).
pub const STREAM: Protocol = Protocol::unbounded("stream", b"stream fingerprint v1");
/// A bounded protocol (no flow control).
pub const BANK: Protocol = Protocol::bounded("bank", b"bank fingerprint v1");

/// Fails the test if `future` takes longer than `secs`.
pub async fn within<F: Future>(secs: u64, future: F) -> F::Output {
    tokio::time::timeout(Duration::from_secs(secs), future)
        .await
        .expect("timed out: a hang")
}

/// Polls `future` once: its output, if it was ready.
pub async fn poll_once<F: Future + Unpin>(mut future: F) -> Option<F::Output> {
    std::future::poll_fn(|cx| {
        std::task::Poll::Ready(match std::pin::Pin::new(&mut future).poll(cx) {
            std::task::Poll::Ready(output) => Some(output),
            std::task::Poll::Pending => None,
        })
    })
    .await
}

/// Settings for tests: fast heartbeats, short timeouts.
pub fn quick() -> Config {
    Config {
        heartbeat_interval: Duration::from_millis(50),
        heartbeat_timeout: Duration::from_secs(1),
        open_timeout: Duration::from_secs(2),
        connect_timeout: Duration::from_secs(2),
        ..Config::default()
    }
}

/// A node on the current runtime.
pub async fn node(config: Config) -> Node {
    Node::builder().config(config).start_async().await.unwrap()
}

/// Two nodes joined by a duplex pipe: (dialer, its connection, acceptor, its connection).
pub async fn pair(config: Config) -> (Node, Connection, Node, Connection) {
    let (a, b) = tokio::io::duplex(64 << 10);
    pair_over(config, a, b).await
}

/// Two nodes joined over the given ends.
pub async fn pair_over<A, B>(config: Config, a: A, b: B) -> (Node, Connection, Node, Connection)
where
    A: AsyncRead + AsyncWrite + Send + 'static,
    B: AsyncRead + AsyncWrite + Send + 'static,
{
    let client = node(config).await;
    let server = node(config).await;
    let (dialed, accepted) = tokio::join!(
        client.attach_async(a, Origin::Dialed),
        server.attach_async(b, Origin::Accepted)
    );
    (client, dialed.unwrap(), server, accepted.unwrap())
}

/// A node serving `STREAM` attached to a raw peer, which has opened session 1 with credit
/// `window`: the node, its connection, the peer and the node's session.
pub async fn raw_opened(config: Config, window: u32) -> (Node, Connection, RawPeer, RawSession) {
    let (node, conn, mut peer) = RawPeer::attached(config).await;
    let mut acceptor = node.serve(STREAM, Role::Server);
    peer.write(open_frame(window)).await;
    let session = acceptor.accept_async().await.unwrap();
    assert!(matches!(peer.read().await.unwrap().kind, Kind::Open { .. }));
    (node, conn, peer, session)
}

/// A credit window for the raw peer's `Open`s of `STREAM` (unbounded, so it must grant one),
/// large enough that no test here runs out of it.
pub const WINDOW: u32 = 1 << 16;

/// The raw peer's `Open` of session 1 of `STREAM` as a client.
pub fn open_frame(window: u32) -> Frame {
    Frame::new(
        1,
        Kind::Open {
            role: Role::Client,
            window,
            name: STREAM.name.into(),
            fingerprint: Bytes::from_static(STREAM.fingerprint),
        },
    )
}

/// A session of `STREAM` opened by a node on a current-thread runtime of its own
/// (`start_async`) with a blocking node serving it. Returns, in drop order for a test that
/// drops the runtime first: the server and its end of the session, the runtime, the client
/// node and its end.
pub fn opened_from_a_runtime_of_its_own() -> (
    (Node, RawSession),
    tokio::runtime::Runtime,
    Node,
    RawSession,
) {
    let server = Node::builder()
        .listen("127.0.0.1:0".parse().unwrap())
        .config(quick())
        .start()
        .unwrap();
    let mut acceptor = server.serve(STREAM, Role::Server);
    let addr = server.local_addr().unwrap();
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let (node, session) = runtime.block_on(async {
        let node = Node::builder().config(quick()).start_async().await.unwrap();
        let session = node.open_async(addr, STREAM, Role::Client).await.unwrap();
        (node, session)
    });
    let accepted = acceptor.accept().unwrap();
    ((server, accepted), runtime, node, session)
}

/// What a blocking `recv` on `session`, on a thread of its own, returns within `secs`
/// seconds; `None` if it still waits (a hang).
pub fn recv_within(
    mut session: RawSession,
    secs: u64,
) -> Option<Result<(), pipes_net::SessionError>> {
    let (done, received) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(session.recv().map(drop));
    });
    received.recv_timeout(Duration::from_secs(secs)).ok()
}

/// An `Open` of session `id` for a protocol nobody serves, encoded with its length prefix.
pub fn unserved_open(id: u64) -> Bytes {
    let mut out = BytesMut::new();
    Frame::new(
        id,
        Kind::Open {
            role: Role::Client,
            window: 0,
            name: "x".into(),
            fingerprint: Bytes::new(),
        },
    )
    .encode(usize::MAX, &mut out)
    .unwrap();
    out.freeze()
}

/// A peer driven by hand over a duplex pipe: it says hello, then writes and reads raw frames.
pub struct RawPeer {
    pub io: DuplexStream,
}

impl RawPeer {
    /// A node that accepted a connection from a raw peer, and the peer.
    pub async fn attached(config: Config) -> (Node, Connection, RawPeer) {
        let (a, b) = tokio::io::duplex(64 << 10);
        let node = node(config).await;
        let mut peer = RawPeer { io: a };
        let hello = async {
            peer.write_body(&hello(DEFAULT_MAX_FRAME, DEFAULT_MAX_MESSAGE))
                .await;
            let theirs = peer.read_body().await.unwrap();
            assert!(read_hello(&theirs).is_some(), "{theirs:?}");
        };
        let (conn, ()) = tokio::join!(node.attach_async(b, Origin::Accepted), hello);
        (node, conn.unwrap(), peer)
    }

    pub async fn write_body(&mut self, body: &[u8]) {
        self.io
            .write_all(&(body.len() as u32).to_be_bytes())
            .await
            .unwrap();
        self.io.write_all(body).await.unwrap();
    }

    pub async fn write(&mut self, frame: Frame) {
        let mut out = BytesMut::new();
        frame.encode(usize::MAX, &mut out).unwrap();
        self.io.write_all(&out).await.unwrap();
    }

    /// The next body, or `None` at the end of the stream.
    pub async fn read_body(&mut self) -> Option<Bytes> {
        let mut len = [0; 4];
        self.io.read_exact(&mut len).await.ok()?;
        let mut body = vec![0; u32::from_be_bytes(len) as usize];
        self.io.read_exact(&mut body).await.ok()?;
        Some(body.into())
    }

    /// The next frame that is not a heartbeat.
    pub async fn read(&mut self) -> Option<Frame> {
        loop {
            let frame = Frame::decode(self.read_body().await?).unwrap();
            if frame.kind != Kind::Ping {
                return Some(frame);
            }
        }
    }
}

/// What a [`Faulty`] transport does to the bytes it reads, once armed.
#[derive(Clone, Copy, Debug)]
pub enum Fault {
    /// The stream ends after this many more bytes.
    Truncate(usize),
    /// The byte at this offset (counted from the first byte ever read) is flipped.
    Corrupt(usize),
    /// Every read waits this long first.
    Delay(Duration),
    /// After this many more bytes, reads fail with a reset and writes with a broken pipe.
    Close(usize),
}

/// A transport that injects a [`Fault`] into what it reads, from the moment it is armed
/// (`Corrupt` is armed from the start).
pub struct Faulty<T> {
    inner: T,
    fault: Fault,
    armed: Arc<AtomicBool>,
    /// Bytes read in all.
    read: usize,
    /// Bytes read since the fault was armed.
    since: Option<usize>,
    sleep: Option<Pin<Box<tokio::time::Sleep>>>,
}

impl<T> Faulty<T> {
    /// The transport and the switch that arms its fault.
    pub fn new(inner: T, fault: Fault) -> (Self, Arc<AtomicBool>) {
        let armed = Arc::new(AtomicBool::new(matches!(fault, Fault::Corrupt(_))));
        let faulty = Faulty {
            inner,
            fault,
            armed: armed.clone(),
            read: 0,
            since: None,
            sleep: None,
        };
        (faulty, armed)
    }

    fn since(&mut self) -> Option<usize> {
        if self.since.is_none() && self.armed.load(Ordering::Acquire) {
            self.since = Some(0);
        }
        self.since
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Faulty<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        let since = this.since();
        // How many bytes this read may still take before the fault.
        let mut limit = buf.remaining();
        match (this.fault, since) {
            (Fault::Truncate(n), Some(since)) => {
                if since >= n {
                    return Poll::Ready(Ok(()));
                }
                limit = limit.min(n - since);
            }
            (Fault::Close(n), Some(since)) => {
                if since >= n {
                    return Poll::Ready(Err(io::ErrorKind::ConnectionReset.into()));
                }
                limit = limit.min(n - since);
            }
            (Fault::Delay(delay), Some(_)) => {
                let sleep = this
                    .sleep
                    .get_or_insert_with(|| Box::pin(tokio::time::sleep(delay)));
                ready!(sleep.as_mut().poll(cx));
                this.sleep = None;
            }
            _ => {}
        }
        let mut scratch = vec![0; limit];
        let mut limited = ReadBuf::new(&mut scratch);
        ready!(Pin::new(&mut this.inner).poll_read(cx, &mut limited))?;
        let filled = limited.filled().len();
        if let Fault::Corrupt(at) = this.fault
            && (this.read..this.read + filled).contains(&at)
        {
            scratch[at - this.read] ^= 0xff;
        }
        buf.put_slice(&scratch[..filled]);
        this.read += filled;
        if let Some(since) = this.since.as_mut() {
            *since += filled;
        }
        Poll::Ready(Ok(()))
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Faulty<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        data: &[u8],
    ) -> Poll<io::Result<usize>> {
        if let (Fault::Close(n), Some(since)) = (self.fault, self.since())
            && since >= n
        {
            return Poll::Ready(Err(io::ErrorKind::BrokenPipe.into()));
        }
        Pin::new(&mut self.inner).poll_write(cx, data)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

//! Remote sessions for pipes: the transport layer (DESIGN section 6), reached as `pipes::net`
//! with the root crate's `net` feature.
//!
//! A protocol's sessions cross processes and machines through a *pump*: it holds the
//! dual local endpoint of the one the user gets and moves each message between it and the
//! wire, so users keep the endpoint types, `select!`, port sets and timeouts of one process.
//! This crate is what the pump sits on, and knows nothing of any protocol's types (generated
//! code brings them):
//!
//! - [`Node`]: listens and accepts, dials, keeps one [`Connection`] per peer carrying many
//!   sessions, and runs its driver on its own thread ([`Builder::start`]) or on the caller's
//!   tokio runtime ([`Builder::start_async`]). Dropping it (or [`Node::shutdown`] on the
//!   caller's runtime) delivers every frame already handed to it before its connections end,
//!   within [`Config::shutdown_timeout`].
//! - [`RawSession`]: one session, sending and receiving `(state index, message index,
//!   payload)` with postcard payloads, credit flow control for unbounded protocols, `close`
//!   and `abort`; blocking and async forms. Its docs say how a pump uses it.
//! - [`Protocol`]: a protocol's name and fingerprint; [`Node::serve`] accepts its sessions,
//!   and opening one with a different fingerprint fails with [`ConnectError::Incompatible`].
//! - [`Cluster`] ([`cluster`]): processes started by `mpirun`, `mpiexec` or `srun` (or by
//!   hand) meet through rank 0 and keep one [`Connection`] per pair of ranks;
//!   [`Cluster::from_env`] reads rank and size from the launcher.
//! - [`frame`]: the frames one connection carries, encoded and decoded without panics. A
//!   message longer than a chunk ([`Config::chunk`], 64 KiB) crosses as chunks that the
//!   writer interleaves with other sessions' frames, so one large message does not stall the
//!   others; the receiver puts it together within [`Config::max_message`].
//! - Errors: [`ConnectError`] when opening, [`SessionError`] when an open session fails. A
//!   connection that dies (reset, end of stream, a malformed or oversized frame, a heartbeat
//!   timeout, a peer that reads nothing for as long, the node shut down or its runtime gone)
//!   fails every session on it: nothing waits forever.
//!
//! ```
//! use pipes_net::{Node, Protocol, Role};
//!
//! const ECHO: Protocol = Protocol::unbounded("echo", b"echo v1");
//!
//! let server = Node::builder().listen("127.0.0.1:0".parse()?).start()?;
//! let mut acceptor = server.serve(ECHO, Role::Server);
//! let addr = server.local_addr().unwrap();
//! let echo = std::thread::spawn(move || {
//!     let mut session = acceptor.accept().unwrap();
//!     while let Ok(message) = session.recv() {
//!         let text: String = message.decode().unwrap();
//!         session.send(1, 0, &text).unwrap();
//!     }
//! });
//!
//! let client = Node::builder().start()?;
//! let mut session = client.open(addr, ECHO, Role::Client)?;
//! session.send(0, 0, "hello")?;
//! let answer = session.recv()?;
//! assert_eq!((answer.state, answer.msg), (1, 0));
//! assert_eq!(answer.decode::<String>()?, "hello");
//! session.close();
//! echo.join().unwrap();
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! ## Typed sessions
//!
//! A protocol marked `#[wire]` in `pipes::proto!` implements [`WireProtocol`] through its
//! generated `Wire` type, and [`Node::client`], [`Connection::client`] and [`Node::incoming`]
//! hand out its endpoints (the very types `init()` does) with a pump on the node's runtime
//! behind them, over a `RawSession` as its module docs describe. `examples/remote_bank.rs` in
//! the `pipes` crate runs one across two processes.
//!
//! A send's `Ok` means what it means in one process, and in TCP: the message was handed on
//! (to the pump, then to the connection), not that the peer received it. A message still on
//! its way when the connection dies is lost with it, and the sender learns so at its next
//! send or receive. Where the sender must know, the protocol says so with a state that
//! acknowledges, which also makes it bounded:
//!
//! ```text
//! #[wire]
//! pub ledger {
//!     Open: send { Entry(u64) -> Recorded, Close -> ! }
//!     Recorded: recv { Ok -> Open }
//! }
//! ```
//!
//! Once `Ok` arrives, the peer has received the entry: it can only answer after that.
//!
//! Flow control, for an unbounded protocol's sessions:
//!
//! - The wire carries at most the credit window ([`Config::window`]) of messages the peer's
//!   pump has not received.
//! - A pump receives for its user only while the user has less than a window left to take, so
//!   a user who stops reading stops its peer's sends: its node holds at most a window in the
//!   lane to the user and a window in the session.
//! - A typed send still never blocks, as in one process: while the window is spent, what the
//!   user sends waits in the local lane to the pump, in the sender's memory. To bound that too,
//!   wait for room before sending: [`writable()`] (async) or [`wait_writable`] return once
//!   fewer than a window of messages wait for the pump, so the sender stops `2 * window + 1`
//!   messages ahead of a reader that stopped. Or bound the protocol (an acknowledgement every
//!   N messages makes it bounded, and its sender waits for the acknowledgement), or send
//!   through a `RawSession`, whose `send_async` waits for credit.
//!
//! When a session fails, the user's endpoint learns why: a receive fails with a `RecvError`
//! whose `cause()` is `Cause::ConnectionLost`, `Violation`, `Timeout` (no heartbeat) or
//! `Aborted` (the peer aborted, or this side could not send a message, or a payload's
//! `Serialize` or `Deserialize` panicked here: the session is aborted on both ends, then the
//! panic goes on, ending the pump's task as tokio ends any task that panics), or `Closed`
//! when the remote peer's endpoint was dropped, as in one process. A failure comes after
//! every whole message the peer sent before it: a connection whose write fails (the peer hung
//! up) is still read to the end of its stream, and a receive fails only after the messages
//! that were there.

mod block;
pub mod cluster;
mod codec;
mod connection;
mod deadline;
mod depth;
mod error;
pub mod frame;
mod node;
mod pump;
mod session;
mod shutdown;
mod wire;
mod writable;

pub use cluster::{Cluster, ClusterBuilder, ClusterError};
pub use connection::Origin;
pub use error::{ConnectError, SessionError};
pub use frame::{AbortCode, Role};
pub use node::{Builder, Config, Connection, Node, Protocol};
pub use session::{Acceptor, RawMessage, RawSession};
pub use wire::{Incoming, WireProtocol};
pub use writable::{Writable, wait_writable, wait_writable_timeout, writable};

/// What the code `proto!` generates for `#[wire]` protocols uses. Not a public API: it changes
/// with the code generator.
#[doc(hidden)]
pub mod __private {
    pub use crate::node::Protocol;
    pub use crate::pump::{
        Field, Held, Payload, Pump, PumpState, PumpTask, Put, WirePayload, idle, payload, pump,
        report,
    };
    pub use crate::session::RawSession;
    pub use crate::wire::WireProtocol;
    pub use core::option::Option::{self, None, Some};
    pub use pipes_runtime::__private::CloseWith;
    pub use pipes_runtime::Cause;
}

//! Typed remote sessions: the [`WireProtocol`] that a `#[wire]` protocol's generated `Wire`
//! type implements, and the calls that hand out the very endpoint types `init()` does, with a
//! pump moving each message between the local dual endpoint and the wire
//! ([`Node::client`], [`Connection::client`], [`Node::incoming`]).

use std::marker::PhantomData;
use std::net::SocketAddr;

use crate::block::block_on;
use crate::error::ConnectError;
use crate::frame::Role;
use crate::node::{Connection, Node, Protocol};
use crate::pump::PumpTask;
use crate::session::{Acceptor, RawSession};

/// A protocol whose sessions can cross the wire: what `pipes::proto!` generates, as the
/// protocol module's `Wire` type, for a protocol marked `#[wire]`. It is named in the calls
/// that open sessions (`node.client::<bank::Wire>(addr)`, `node.incoming::<bank::Wire>()`),
/// which hand out the same endpoint types as the protocol's `init()`.
///
/// Not meant to be implemented by hand: its hidden methods are the generated pump's entry.
pub trait WireProtocol: 'static {
    /// The protocol as the wire knows it: name, fingerprint, and whether it needs flow
    /// control.
    const PROTOCOL: Protocol;
    /// The client's endpoint for the start state (`bank::client::Login`).
    type Client;
    /// The server's endpoint for the start state (`bank::server::Login`).
    type Server;

    /// A new session of the protocol in which this end plays the client, over `session`: the
    /// client's endpoint, and the pump (holding the server's) to spawn.
    #[doc(hidden)]
    fn client(session: RawSession) -> (Self::Client, PumpTask);

    /// A new session of the protocol in which this end plays the server, over `session`: the
    /// server's endpoint, and the pump (holding the client's) to spawn.
    #[doc(hidden)]
    fn server(session: RawSession) -> (Self::Server, PumpTask);
}

impl Connection {
    /// Opens a session of `P` with the peer, playing the client: the client's endpoint for the
    /// start state, exactly as `init()` would give it, whose messages a pump on the node's
    /// runtime moves to and from the peer. The peer must serve `P` ([`Node::incoming`]).
    ///
    /// Fails with [`ConnectError::Incompatible`] if the peer's `P` has another fingerprint
    /// (another version of the protocol), [`ConnectError::Refused`] if it does not serve `P`.
    /// Once open, every failure of the session (the peer gone, the connection lost, a message
    /// the protocol does not allow) reaches the endpoint as its peer closing: a receive fails
    /// with a `RecvError` whose `cause()` says which, a send hands its payload back.
    pub async fn client_async<P: WireProtocol>(&self) -> Result<P::Client, ConnectError> {
        let session = self.open_async(P::PROTOCOL, Role::Client).await?;
        let (client, pump) = P::client(session);
        self.handle().spawn(pump);
        Ok(client)
    }

    /// [`client_async`](Self::client_async), blocking the thread. Not for async code.
    pub fn client<P: WireProtocol>(&self) -> Result<P::Client, ConnectError> {
        block_on(self.client_async::<P>())
    }
}

impl Node {
    /// Opens a session of `P` with the node at `addr`, playing the client (over the
    /// connection to it, made if need be): see [`Connection::client_async`].
    ///
    /// ```
    /// # use pipes_net::Node;
    /// # async fn login<P: pipes_net::WireProtocol>(node: &Node, addr: std::net::SocketAddr)
    /// #     -> Result<P::Client, pipes_net::ConnectError> {
    /// // With `#[wire] pub bank { Login: send { .. } .. }`, `P` is `bank::Wire` and this
    /// // is a `bank::client::Login`.
    /// let login = node.client_async::<P>(addr).await?;
    /// # Ok(login) }
    /// ```
    pub async fn client_async<P: WireProtocol>(
        &self,
        addr: SocketAddr,
    ) -> Result<P::Client, ConnectError> {
        self.connect_async(addr).await?.client_async::<P>().await
    }

    /// [`client_async`](Self::client_async), blocking the thread. Not for async code.
    pub fn client<P: WireProtocol>(&self, addr: SocketAddr) -> Result<P::Client, ConnectError> {
        block_on(self.client_async::<P>(addr))
    }

    /// Serves `P`: the sessions peers open with [`Node::client`] arrive at the returned
    /// [`Incoming`] as the server's endpoint for the start state, exactly as `init()` would
    /// give it. Served by name and fingerprint ([`Node::serve`]): protocols that share `P`'s
    /// name but not its fingerprint (another module's, or another version) can be served
    /// beside it, each peer reaching the one its own `P` matches; a peer whose protocol has
    /// `P`'s name and a fingerprint served by none gets [`ConnectError::Incompatible`].
    /// Serving `P` again replaces the previous `Incoming` (of `P` only).
    pub fn incoming<P: WireProtocol>(&self) -> Incoming<P> {
        Incoming::new(self.serve(P::PROTOCOL, Role::Server), self.handle().clone())
    }
}

/// The sessions of `P` that peers open with a node, each handed out as the server's endpoint
/// for the start state: from [`Node::incoming`]. Also an [`Iterator`] (blocking) that ends when
/// the node shuts down, or its runtime is gone.
pub struct Incoming<P: WireProtocol> {
    acceptor: Acceptor,
    handle: tokio::runtime::Handle,
    protocol: PhantomData<fn() -> P>,
}

impl<P: WireProtocol> std::fmt::Debug for Incoming<P> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Incoming")
            .field("protocol", &P::PROTOCOL.name)
            .finish_non_exhaustive()
    }
}

impl<P: WireProtocol> Incoming<P> {
    /// The sessions `acceptor` hands out, their pumps spawned on `handle`'s runtime.
    pub(crate) fn new(acceptor: Acceptor, handle: tokio::runtime::Handle) -> Self {
        Incoming {
            acceptor,
            handle,
            protocol: PhantomData,
        }
    }

    /// The next session a peer opens, as the server's endpoint for the start state; `None`
    /// once the node has shut down, or its runtime is gone.
    pub async fn accept_async(&mut self) -> Option<P::Server> {
        let session = self.acceptor.accept_async().await?;
        let (server, pump) = P::server(session);
        self.handle.spawn(pump);
        Some(server)
    }

    /// [`accept_async`](Self::accept_async), blocking the thread. Not for async code.
    pub fn accept(&mut self) -> Option<P::Server> {
        block_on(self.accept_async())
    }
}

impl<P: WireProtocol> Iterator for Incoming<P> {
    type Item = P::Server;

    /// [`accept`](Incoming::accept): blocks the thread.
    fn next(&mut self) -> Option<P::Server> {
        self.accept()
    }
}

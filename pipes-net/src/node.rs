//! The node ([`Node`]), how to start one ([`Builder`], [`Config`]), the protocols it serves
//! ([`Protocol`]) and its connections ([`Connection`]).

use std::collections::HashMap;
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use tokio::io::{AsyncRead, AsyncWrite};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{mpsc, watch};

use crate::block::block_on;
use crate::connection::{self, Conn, Origin, closed_by_node, lock};
use crate::deadline::Later;
use crate::error::ConnectError;
use crate::frame::{DEFAULT_CHUNK, DEFAULT_MAX_FRAME, DEFAULT_MAX_MESSAGE, MIN_FRAME, Role};
use crate::session::{Acceptor, RawSession, Unaccepted};
use crate::shutdown::Pumps;

/// A protocol as the wire knows it: its name (what an acceptor serves), its fingerprint
/// (both ends must have the same, or the open fails with [`ConnectError::Incompatible`]), and
/// whether it is unbounded (then its sessions get credit flow control). Generated code will
/// emit one per `#[wire]` protocol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Protocol {
    /// The protocol's name.
    pub name: &'static str,
    /// Its fingerprint: a digest of its names, states, messages, payload types and
    /// transitions.
    pub fingerprint: &'static [u8],
    /// Whether messages in flight are unbounded (the liveness rule says), so the session
    /// needs credit flow control.
    pub unbounded: bool,
    /// For a bounded protocol, the most messages one end can have sent that the other has not
    /// received: one per state with messages (each holds one at most). A node lets a peer's
    /// messages wait up to this, or up to its [`Config::window`] if that is more; 0 if unknown.
    pub in_flight: u32,
}

impl Protocol {
    /// A bounded protocol: no flow control.
    pub const fn bounded(name: &'static str, fingerprint: &'static [u8]) -> Self {
        Protocol {
            name,
            fingerprint,
            unbounded: false,
            in_flight: 0,
        }
    }

    /// An unbounded protocol: each end grants the other a credit window.
    pub const fn unbounded(name: &'static str, fingerprint: &'static [u8]) -> Self {
        Protocol {
            name,
            fingerprint,
            unbounded: true,
            in_flight: 0,
        }
    }

    /// The window this end grants the peer.
    pub(crate) fn window(&self, config: &Config) -> u32 {
        if self.unbounded {
            config.window.max(1)
        } else {
            0
        }
    }
}

/// A node's settings; [`Config::default`] suits loopback and LANs.
#[derive(Clone, Copy, Debug)]
pub struct Config {
    /// The largest frame body, sent or received (default 16 MiB). Messages longer than a
    /// frame cross as chunks, so this bounds the frames, not the messages. A connection's
    /// frames fit both ends' `max_frame` (the hello carries it). At least
    /// [`MIN_FRAME`](crate::frame::MIN_FRAME) (32 bytes: a chunk's longest header and one
    /// byte), or the node does not start.
    pub max_frame: usize,
    /// The payload bytes of one chunk (default 64 KiB, [`DEFAULT_CHUNK`]): a message with a
    /// longer payload is sent as chunks, which the writer interleaves with other sessions'
    /// frames, so one large message delays the others by a chunk at a time, not by its whole
    /// length (see [`frame`](crate::frame#chunks)). Smaller chunks share the connection more
    /// finely at a little more overhead per byte. 0 counts as 1; a chunk is cut shorter if its
    /// frame would not fit in `max_frame`.
    pub chunk: usize,
    /// The longest message payload, sent or received (default 64 MiB,
    /// [`DEFAULT_MAX_MESSAGE`]): a longer send fails with
    /// [`SessionError::MessageTooLarge`](crate::SessionError::MessageTooLarge), as does one
    /// longer than the peer's `max_message` (the hello carries it), and a peer that announces
    /// or sends a longer one violates the session. It bounds the memory a peer can make this
    /// end hold for one message in progress.
    pub max_message: usize,
    /// The credit window of unbounded protocols' sessions, in messages (default 1024). A
    /// bounded protocol's peer needs no credit (its states hold a message each at most), but
    /// may not have more than this many messages waiting here either: past it, the session is
    /// aborted as a violation. 0 counts as 1.
    pub window: u32,
    /// How many sessions peers may have opened that an [`Acceptor`] has not taken yet
    /// (default 1024), like a listening socket's backlog. Past it, more `Open`s of its
    /// protocol are refused ([`ConnectError::Refused`](crate::ConnectError::Refused) on the
    /// peer's side) until the acceptor takes some, so peers that open sessions faster than
    /// they are accepted cannot grow this node's memory without bound. The count is the
    /// acceptor's, over all connections: the sessions of a connection that ended stay queued
    /// (they still hold what the peer sent) and keep their places, so a peer that connects
    /// again gets no new room. As with a listening socket, one peer that fills the backlog
    /// keeps the others' sessions out until the acceptor catches up.
    pub backlog: usize,
    /// How long a dial and its hello may take (default 10 s). Not zero (no dial could
    /// succeed), or the node does not start.
    pub connect_timeout: Duration,
    /// How long the peer may take to answer an `Open` (default 10 s). Not zero (no open could
    /// succeed), or the node does not start.
    pub open_timeout: Duration,
    /// How often each end sends a heartbeat (default 1 s). Not zero (a heartbeat needs a
    /// period), or the node does not start. Keep it well below the peer's
    /// `heartbeat_timeout`.
    pub heartbeat_interval: Duration,
    /// How long a connection may stay silent before it is declared dead (default 10 s). Not
    /// zero (every connection would die at once), or the node does not start.
    pub heartbeat_timeout: Duration,
    /// How long a node's shutdown may take to deliver what was handed to it (default 5 s):
    /// the typed sessions' pumps forwarding their last messages, every connection writing
    /// what is queued, and each peer answering the end of the stream. A peer that is dead or
    /// does not read holds a shutdown this long at most; then its connection is cut.
    ///
    /// Any length works, up to `Duration::MAX` for "as long as it takes": this and the other
    /// timeouts here are counted with an add that cannot overflow (a deadline past the clock's
    /// end is some 30 years away, as tokio's timers have it).
    pub shutdown_timeout: Duration,
}

impl Config {
    /// Refuses settings no node can work with, naming the field, before the node starts:
    /// each would otherwise fail every connection, dial or open (typed, but far from its
    /// cause), or panic a connection's writer task (a zero heartbeat interval: tokio's
    /// `interval` panics on a zero period). An error rather than a silent clamp, as std's
    /// `TcpStream::set_read_timeout` refuses a zero timeout: a zero here is a mistake, and
    /// no clamped value would be what was meant.
    fn check(&self) -> io::Result<()> {
        let invalid = |field: &str, why: &str| {
            Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("pipes-net Config::{field} {why}"),
            ))
        };
        if self.max_frame < MIN_FRAME {
            return invalid(
                "max_frame",
                &format!(
                    "is {}: it must be at least {MIN_FRAME} bytes",
                    self.max_frame
                ),
            );
        }
        let zero = [
            ("heartbeat_interval", self.heartbeat_interval),
            ("heartbeat_timeout", self.heartbeat_timeout),
            ("connect_timeout", self.connect_timeout),
            ("open_timeout", self.open_timeout),
        ];
        for (field, duration) in zero {
            if duration.is_zero() {
                return invalid(field, "is zero: it must be longer");
            }
        }
        Ok(())
    }
}

impl Default for Config {
    fn default() -> Self {
        Config {
            max_frame: DEFAULT_MAX_FRAME,
            chunk: DEFAULT_CHUNK,
            max_message: DEFAULT_MAX_MESSAGE,
            window: 1024,
            backlog: 1024,
            connect_timeout: Duration::from_secs(10),
            open_timeout: Duration::from_secs(10),
            heartbeat_interval: Duration::from_secs(1),
            heartbeat_timeout: Duration::from_secs(10),
            shutdown_timeout: Duration::from_secs(5),
        }
    }
}

/// The protocols a node serves, by name and then fingerprint: two protocols may share a name
/// (two modules' `events`, or two versions of one protocol served side by side), and an `Open`
/// carries both, so each reaches its own acceptor. A name's list holds one entry per
/// fingerprint, in the order they were first served.
#[derive(Default)]
pub(crate) struct Registry {
    served: Mutex<HashMap<&'static str, Vec<Serve>>>,
    /// Set (under `served`'s lock) once no session can arrive any more: the node's shutdown
    /// began, or its runtime is gone. Nothing is served after that.
    closed: AtomicBool,
}

/// What a node serves under a name and fingerprint: [`Registry::get`].
pub(crate) enum Lookup {
    /// The protocol with that name and fingerprint.
    Served(Serve),
    /// Protocols with that name, but only these other fingerprints.
    Differs(Vec<&'static [u8]>),
    /// No protocol with that name.
    Unknown,
}

/// One served protocol.
#[derive(Clone)]
pub(crate) struct Serve {
    pub(crate) protocol: Protocol,
    pub(crate) role: Role,
    pub(crate) acceptor: mpsc::UnboundedSender<Unaccepted>,
    /// How many sessions wait in `acceptor` (see [`Config::backlog`]).
    pub(crate) unaccepted: Arc<AtomicUsize>,
}

impl Registry {
    /// The protocol served as `name` with `fingerprint`.
    pub(crate) fn get(&self, name: &str, fingerprint: &[u8]) -> Lookup {
        let served = lock(&self.served);
        let Some(same_name) = served.get(name) else {
            return Lookup::Unknown;
        };
        match same_name
            .iter()
            .find(|serve| serve.protocol.fingerprint == fingerprint)
        {
            Some(serve) => Lookup::Served(serve.clone()),
            None => Lookup::Differs(
                same_name
                    .iter()
                    .map(|serve| serve.protocol.fingerprint)
                    .collect(),
            ),
        }
    }

    /// Serves `serve`, replacing what was served with its name and fingerprint; once closed,
    /// drops it instead, so its acceptor ends at once rather than waiting for what cannot
    /// arrive.
    fn insert(&self, serve: Serve) {
        let mut served = lock(&self.served);
        if self.closed.load(Ordering::Relaxed) {
            return;
        }
        let same_name = served.entry(serve.protocol.name).or_default();
        match same_name
            .iter_mut()
            .find(|old| old.protocol.fingerprint == serve.protocol.fingerprint)
        {
            Some(old) => *old = serve,
            None => same_name.push(serve),
        }
    }

    /// Serves nothing any more: every acceptor's sender is dropped, so an acceptor waiting for
    /// a session gets `None`, and one not accepted yet is closed.
    fn close(&self) {
        let mut served = lock(&self.served);
        self.closed.store(true, Ordering::Relaxed);
        let served = std::mem::take(&mut *served);
        // Dropped outside the lock: dropping a sender wakes its acceptor.
        drop(served);
    }
}

/// The accept loop's hold on its node's registry, which closes it however the loop ends: the
/// node shut down or is gone, or the loop's task was dropped with its runtime (a `start_async`
/// node's runtime that ended before its node), which took the listener and every connection
/// with it. Without it an acceptor's sender would stay in the registry of a node whose
/// runtime is gone, and its `accept` would wait forever.
struct Serving(Arc<Registry>);

impl Drop for Serving {
    fn drop(&mut self) {
        self.0.close();
    }
}

/// How to start a [`Node`]: `Node::builder().listen(addr).config(config).start()`.
#[derive(Debug, Default)]
pub struct Builder {
    listen: Option<SocketAddr>,
    config: Config,
}

impl Builder {
    /// Listen for connections on `addr` (port 0 picks a free port: see
    /// [`Node::local_addr`]). Without it the node only dials.
    pub fn listen(mut self, addr: SocketAddr) -> Self {
        self.listen = Some(addr);
        self
    }

    /// The node's settings.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Starts the node's driver on a thread of its own (a current-thread tokio runtime), for
    /// programs that block. Dropping the node shuts it down gracefully (see [`Node`]) and
    /// joins the thread.
    ///
    /// # Errors
    ///
    /// [`io::ErrorKind::InvalidInput`] for a [`Config`] no node can work with (a zero
    /// heartbeat interval, say: each field's docs say), naming the field; any error of
    /// binding the listener or starting the thread.
    pub fn start(self) -> io::Result<Node> {
        self.config.check()?;
        let (started, result) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("pipes-net".into())
            .spawn(move || {
                let runtime = match tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
                {
                    Ok(runtime) => runtime,
                    Err(error) => {
                        let _ = started.send(Err(error));
                        return;
                    }
                };
                runtime.block_on(async move {
                    match self.setup().await {
                        Ok(inner) => {
                            let mut finished = inner.finished.subscribe();
                            let _ = started.send(Ok(inner));
                            // The shutdown runs as a task here; the runtime (and every task
                            // left on it) ends once it is done.
                            crate::connection::stopped(&mut finished).await;
                        }
                        Err(error) => {
                            let _ = started.send(Err(error));
                        }
                    }
                });
            })?;
        let inner = result
            .recv()
            .map_err(|_| io::Error::other("the pipes-net thread died while starting"))??;
        Ok(Node {
            inner,
            thread: Some(thread),
        })
    }

    /// Starts the node's driver on the caller's tokio runtime (which must have its IO and
    /// time drivers enabled). Call [`Node::shutdown`] before that runtime ends: dropping the
    /// node only starts the shutdown, as a task on the runtime (see [`Node`]).
    ///
    /// # Errors
    ///
    /// As [`start`](Self::start)'s.
    pub async fn start_async(self) -> io::Result<Node> {
        self.config.check()?;
        Ok(Node {
            inner: self.setup().await?,
            thread: None,
        })
    }

    /// Binds, and spawns the accept loop on the current runtime.
    async fn setup(self) -> io::Result<Arc<Inner>> {
        let handle = tokio::runtime::Handle::current();
        let listener = match self.listen {
            Some(addr) => Some(TcpListener::bind(addr).await?),
            None => None,
        };
        let (shutdown, _) = watch::channel(false);
        let (finished, _) = watch::channel(false);
        let inner = Arc::new(Inner {
            handle,
            config: self.config,
            registry: Arc::new(Registry::default()),
            dialed: Mutex::new(HashMap::new()),
            conns: Mutex::new(Vec::new()),
            local_addr: listener.as_ref().map(|l| l.local_addr()).transpose()?,
            shutdown,
            finished,
            pumps: Arc::new(Pumps::default()),
        });
        // Spawned for a node that does not listen too: its task is how the registry learns
        // that the runtime is gone (see `Serving`).
        let serving = Serving(inner.registry.clone());
        inner
            .handle
            .spawn(accept_loop(Arc::downgrade(&inner), listener, serving));
        Ok(inner)
    }
}

/// Accepts connections while the node runs (if it listens), holding `serving` until the node
/// shuts down or is gone.
async fn accept_loop(node: Weak<Inner>, listener: Option<TcpListener>, serving: Serving) {
    let _serving = serving;
    let Some(mut stop) = node.upgrade().map(|node| node.shutdown.subscribe()) else {
        return;
    };
    let Some(listener) = listener else {
        // Ends with the shutdown, or when the node is gone (its sender dropped).
        crate::connection::stopped(&mut stop).await;
        return;
    };
    loop {
        let accepted = tokio::select! {
            () = crate::connection::stopped(&mut stop) => return,
            accepted = listener.accept() => accepted,
        };
        let Some(node) = node.upgrade() else {
            return;
        };
        match accepted {
            Ok((stream, _)) => {
                let _ = stream.set_nodelay(true);
                // The hello runs in its own task, so a slow peer cannot hold up the others.
                node.handle.clone().spawn(async move {
                    let _ = node.attach_inner(stream, Origin::Accepted).await;
                });
            }
            // A failed accept (out of file descriptors, say): wait a little and go on.
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    }
}

/// One process's end of the network. It listens and accepts, dials, keeps one connection per
/// peer address, serves protocols (an [`Acceptor`] per protocol name and fingerprint), and runs its driver
/// (the accept loop and every connection's reader and writer tasks) either on a thread of its
/// own with a current-thread tokio runtime, for blocking programs ([`Builder::start`]), or on
/// the caller's tokio runtime ([`Builder::start_async`]).
///
/// # Shutdown
///
/// A node shuts down gracefully, so that a program may send its last messages, drop its
/// endpoints and its node, and exit, and its peers still get every message and then the
/// sessions' ends. The shutdown stops accepting connections and sessions (acceptors end),
/// lets typed sessions' pumps forward what their endpoints sent and queue the `Close` of
/// those dropped, writes everything queued on each connection, shuts its write half down,
/// and waits for the peer to close its side; then every session still open on its
/// connections fails with [`SessionError::ConnectionLost`](crate::SessionError::ConnectionLost)
/// (on both ends). All of it within [`Config::shutdown_timeout`]: a dead or stuck peer holds
/// it that long at most.
///
/// - A node on its own thread ([`Builder::start`]) shuts down when dropped: the drop blocks
///   until the shutdown is done (at most the timeout, a few milliseconds when peers answer)
///   and joins the driver thread. Do not drop it on a thread whose blocking would hold up
///   the peers it waits for (an async task on the runtime of a peer node, say).
/// - A node on the caller's runtime ([`Builder::start_async`]) never blocks: call
///   [`shutdown`](Node::shutdown) and await it before the runtime ends (a `#[tokio::main]`
///   that returns drops its runtime with every task on it). Dropping it instead starts the
///   same shutdown as a task on that runtime, which delivers only if the runtime runs on.
///   Once that runtime is gone, `shutdown` (awaited elsewhere) and the drop end at once: the
///   node's connections are cut without delivering, their sessions fail, and its acceptors
///   end, since no session can arrive any more.
pub struct Node {
    inner: Arc<Inner>,
    thread: Option<std::thread::JoinHandle<()>>,
}

/// One dialed address: its connection, once there is one.
type Dialed = tokio::sync::Mutex<Option<Arc<Conn>>>;

struct Inner {
    handle: tokio::runtime::Handle,
    config: Config,
    registry: Arc<Registry>,
    /// The connections this node dialed, by address: one per peer. Each address has a lock of
    /// its own, held while it is dialed, so two dials of one peer make one connection, and a
    /// peer that stalls in its hello holds up the dials of that peer only.
    dialed: Mutex<HashMap<SocketAddr, Arc<Dialed>>>,
    /// Every connection, to fail them all at shutdown.
    conns: Mutex<Vec<Weak<Conn>>>,
    local_addr: Option<SocketAddr>,
    /// Set when the shutdown starts: the accept loop stops.
    shutdown: watch::Sender<bool>,
    /// Set when the shutdown is done.
    finished: watch::Sender<bool>,
    /// The typed sessions' pumps, which the shutdown waits for.
    pumps: Arc<Pumps>,
}

impl Inner {
    async fn attach_inner<T>(&self, io: T, origin: Origin) -> Result<Arc<Conn>, ConnectError>
    where
        T: AsyncRead + AsyncWrite + Send + 'static,
    {
        let conn = connection::start(
            io,
            origin,
            self.config,
            self.registry.clone(),
            self.pumps.clone(),
            self.handle.clone(),
        )
        .await?;
        let mut conns = lock(&self.conns);
        conns.retain(|conn| conn.upgrade().is_some_and(|conn| !conn.is_dead()));
        conns.push(Arc::downgrade(&conn));
        drop(conns);
        // A node that shut down while this connection started: fail it too.
        if *self.shutdown.borrow() {
            conn.fail(closed_by_node());
        }
        Ok(conn)
    }

    /// The graceful shutdown (see [`Node`]), bounded by the shutdown timeout. Runs on the
    /// node's runtime.
    async fn shut(&self) {
        let deadline = tokio::time::Instant::now().later(self.config.shutdown_timeout);
        let conns: Vec<Arc<Conn>> = lock(&self.conns).iter().filter_map(Weak::upgrade).collect();
        // First the pumps, so their last frames are queued before the connections end.
        let round = self.pumps.begin_round();
        for conn in &conns {
            conn.settle_sessions();
        }
        let _ = tokio::time::timeout_at(deadline, self.pumps.settled(round)).await;
        let mut finishing = tokio::task::JoinSet::new();
        for conn in &conns {
            let conn = conn.clone();
            finishing.spawn_on(
                async move {
                    let _ = tokio::time::timeout_at(deadline, conn.finish()).await;
                },
                &self.handle,
            );
        }
        while finishing.join_next().await.is_some() {}
        drop(conns);
        self.cut();
    }

    /// Cuts whatever connection is still open: its sessions fail (on both ends, if the
    /// writer still runs), and its tasks stop. Needs no runtime.
    fn cut(&self) {
        let conns = std::mem::take(&mut *lock(&self.conns));
        for conn in conns.iter().filter_map(Weak::upgrade) {
            conn.fail(closed_by_node());
        }
    }

    async fn connect_inner(&self, addr: SocketAddr) -> Result<Arc<Conn>, ConnectError> {
        let peer = lock(&self.dialed).entry(addr).or_default().clone();
        let mut dialed = peer.lock().await;
        if let Some(conn) = dialed.as_ref().filter(|conn| !conn.is_dead()) {
            return Ok(conn.clone());
        }
        let stream =
            match tokio::time::timeout(self.config.connect_timeout, TcpStream::connect(addr)).await
            {
                Ok(stream) => stream?,
                Err(_) => return Err(ConnectError::Timeout),
            };
        let _ = stream.set_nodelay(true);
        let conn = self.attach_inner(stream, Origin::Dialed).await?;
        *dialed = Some(conn.clone());
        Ok(conn)
    }
}

impl std::fmt::Debug for Node {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Node")
            .field("local_addr", &self.inner.local_addr)
            .finish_non_exhaustive()
    }
}

impl Node {
    /// How to start a node.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The address the node listens on, if it listens.
    pub fn local_addr(&self) -> Option<SocketAddr> {
        self.inner.local_addr
    }

    /// How many connections the node has open (dialed and accepted): one per peer node, however
    /// many sessions they carry.
    pub fn connections(&self) -> usize {
        lock(&self.inner.conns)
            .iter()
            .filter(|conn| conn.upgrade().is_some_and(|conn| !conn.is_dead()))
            .count()
    }

    /// The node's settings.
    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// Serves `protocol` in `role`: sessions peers open with it arrive at the returned
    /// [`Acceptor`]. The acceptor ends (`None`) when the node shuts down, or when its runtime
    /// is gone (a [`Builder::start_async`] node's runtime that ended first).
    ///
    /// A protocol is served by its name *and* fingerprint, as a peer's open names it: protocols
    /// that share a name but differ (two modules' `events`, or two versions of one protocol)
    /// are served side by side, each session reaching the acceptor whose fingerprint matches
    /// the peer's. Serving the same name and fingerprint again replaces that acceptor only.
    ///
    /// A peer opening a served name with a fingerprint served under none of its acceptors, or
    /// in the same role, gets [`ConnectError::Incompatible`] (naming the fingerprints at both
    /// ends); one opening a protocol nobody serves, or after the acceptor was dropped,
    /// [`ConnectError::Refused`].
    pub fn serve(&self, protocol: Protocol, role: Role) -> Acceptor {
        let (acceptor, sessions) = mpsc::unbounded_channel();
        self.inner.registry.insert(Serve {
            protocol,
            role,
            acceptor,
            unaccepted: Arc::default(),
        });
        Acceptor {
            sessions,
            protocol: protocol.name,
        }
    }

    /// The connection to the node at `addr`: the one already open, or a new one (dialed,
    /// then a hello each way). One connection carries every session with that peer. Dropping
    /// the future before it resolves gives the dial up.
    pub async fn connect_async(&self, addr: SocketAddr) -> Result<Connection, ConnectError> {
        let inner = self.inner.clone();
        self.run(async move { inner.connect_inner(addr).await })
            .await
            .map(Connection)
    }

    /// [`connect_async`](Self::connect_async), blocking the thread. Not for async code.
    pub fn connect(&self, addr: SocketAddr) -> Result<Connection, ConnectError> {
        block_on(self.connect_async(addr))
    }

    /// Opens a session of `protocol`, playing `role`, with the node at `addr` (over the
    /// connection to it, made if need be).
    pub async fn open_async(
        &self,
        addr: SocketAddr,
        protocol: Protocol,
        role: Role,
    ) -> Result<RawSession, ConnectError> {
        self.connect_async(addr)
            .await?
            .open_async(protocol, role)
            .await
    }

    /// [`open_async`](Self::open_async), blocking the thread. Not for async code.
    pub fn open(
        &self,
        addr: SocketAddr,
        protocol: Protocol,
        role: Role,
    ) -> Result<RawSession, ConnectError> {
        block_on(self.open_async(addr, protocol, role))
    }

    /// Runs a connection over any byte stream (a Unix socket, an in-memory
    /// `tokio::io::duplex`, a test's faulty wrapper), as the end that dialed it or the one
    /// that accepted it; the two ends must say different [`Origin`]s. Dropping the future
    /// before it resolves gives the connection up (and drops `io`).
    pub async fn attach_async<T>(&self, io: T, origin: Origin) -> Result<Connection, ConnectError>
    where
        T: AsyncRead + AsyncWrite + Send + 'static,
    {
        let inner = self.inner.clone();
        self.run(async move { inner.attach_inner(io, origin).await })
            .await
            .map(Connection)
    }

    /// Shuts the node down gracefully and waits until it is done: every frame handed to it is
    /// written and the peers have closed their side, or the shutdown timeout has passed (see
    /// [`Node`]). The way to end a node on the caller's runtime; for a node on its own thread,
    /// dropping it does the same, blocking.
    pub async fn shutdown(mut self) {
        self.begin_shutdown();
        let mut finished = self.inner.finished.subscribe();
        crate::connection::stopped(&mut finished).await;
        // The driver thread, if any, is ending: the drop joins it.
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }

    /// Starts the graceful shutdown, as a task on the node's runtime (once).
    fn begin_shutdown(&self) {
        if self.inner.shutdown.send_replace(true) {
            return;
        }
        // Acceptors waiting for sessions get `None`; sessions not accepted yet are closed.
        self.inner.registry.close();
        let done = Finished(self.inner.clone());
        // The task's future owns `done`: however it ends, its drop ends the shutdown. On a
        // runtime that is gone (a `start_async` node's, ended before its node), `spawn` drops
        // the future unpolled; a runtime that ends meanwhile drops it half way; a panic drops
        // it unwinding. Without that, `finished` would never be set, and `shutdown().await`,
        // the drop of a node on its own thread and that thread would wait forever.
        self.inner.handle.spawn(async move {
            done.0.shut().await;
            drop(done);
        });
    }

    /// The runtime the node's driver runs on, where typed sessions' pumps run too.
    pub(crate) fn handle(&self) -> &tokio::runtime::Handle {
        &self.inner.handle
    }

    /// Runs `future` on the node's runtime (it needs its IO driver and timer), as part of the
    /// caller's future: dropping that (a timeout, an abort) aborts it, so a dial or hello given
    /// up on does not go on to run a connection nobody asked for any more.
    async fn run<T: Send + 'static>(
        &self,
        future: impl Future<Output = Result<T, ConnectError>> + Send + 'static,
    ) -> Result<T, ConnectError> {
        let mut task = AbortOnDrop(self.inner.handle.spawn(future));
        match (&mut task.0).await {
            Ok(result) => result,
            Err(_) => Err(ConnectError::Io(Arc::new(io::Error::new(
                io::ErrorKind::ConnectionAborted,
                "the node shut down",
            )))),
        }
    }
}

impl Drop for Node {
    /// Shuts the node down gracefully (see [`Node`]): for a node on its own thread, blocking
    /// until it is done and joining the thread; for one on the caller's runtime, as a task
    /// there.
    fn drop(&mut self) {
        self.begin_shutdown();
        if let Some(thread) = self.thread.take() {
            // Never on the driver thread itself (a task there dropping its node): it would
            // wait for itself.
            if thread.thread().id() != std::thread::current().id() {
                let _ = thread.join();
            }
        }
    }
}

/// A task that is aborted when this is dropped (a no-op once it finished).
struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// Ends a node's shutdown when dropped, whether the shutdown ran to its end or not: cuts the
/// connections still open (the graceful part is over, or will never run) and sets `finished`.
struct Finished(Arc<Inner>);

impl Drop for Finished {
    fn drop(&mut self) {
        self.0.cut();
        self.0.finished.send_replace(true);
    }
}

/// A connection to a peer node, carrying any number of sessions.
#[derive(Clone)]
pub struct Connection(Arc<Conn>);

impl std::fmt::Debug for Connection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connection")
            .field("dead", &self.0.is_dead())
            .finish_non_exhaustive()
    }
}

impl Connection {
    /// Opens a session of `protocol` on this connection, playing `role`. Fails with
    /// [`ConnectError::Incompatible`] if the peer serves the protocol under another
    /// fingerprint (or in the same role), [`ConnectError::Refused`] if it does not serve it,
    /// [`ConnectError::Timeout`] if it does not answer within the open timeout.
    pub async fn open_async(
        &self,
        protocol: Protocol,
        role: Role,
    ) -> Result<RawSession, ConnectError> {
        let conn = self.0.clone();
        match self.0.handle.spawn(conn.open(protocol, role)).await {
            Ok(result) => result,
            Err(_) => Err(closed_by_node().into()),
        }
    }

    /// [`open_async`](Self::open_async), blocking the thread. Not for async code.
    pub fn open(&self, protocol: Protocol, role: Role) -> Result<RawSession, ConnectError> {
        block_on(self.open_async(protocol, role))
    }

    /// The runtime the connection's tasks run on, where typed sessions' pumps run too.
    pub(crate) fn handle(&self) -> &tokio::runtime::Handle {
        &self.0.handle
    }

    /// Why the connection died, if it has: every session on it ended with this error.
    pub fn failure(&self) -> Option<crate::SessionError> {
        self.0.failure()
    }
}

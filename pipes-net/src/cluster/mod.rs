//! Clusters: processes started together by an MPI launcher (or by hand) find each other
//! through rank 0 and keep one [`Connection`] per pair of ranks, so HPC users keep
//! `mpirun -n 8 ./app` while pipes speaks TCP (DESIGN section 6).
//!
//! # Where rank and size come from
//!
//! [`Cluster::from_env`] reads them from the variables the launcher exports, the first that
//! is present winning ([`Launch::from_vars`] holds the rules):
//!
//! | launcher | rank | size | job (checked at the rendezvous) |
//! |---|---|---|---|
//! | by hand ([`Launcher::Pipes`]) | `PIPES_CLUSTER_RANK` | `PIPES_CLUSTER_SIZE` | `PIPES_CLUSTER_JOB` |
//! | Open MPI `mpirun` | `OMPI_COMM_WORLD_RANK` | `OMPI_COMM_WORLD_SIZE` | `PMIX_NAMESPACE`, else `OMPI_MCA_ess_base_jobid` |
//! | MPICH Hydra, Intel MPI (PMI) | `PMI_RANK` | `PMI_SIZE` | none |
//! | PMIx (PRRTE's `prterun`, `srun --mpi=pmix`) | `PMIX_RANK` | `PIPES_CLUSTER_SIZE`, else `SLURM_NTASKS` | `PMIX_NAMESPACE` |
//! | Slurm `srun` | `SLURM_PROCID` | `SLURM_NTASKS`, else `SLURM_NPROCS` | `SLURM_JOB_ID.SLURM_STEP_ID` |
//!
//! PMIx exports no size variable: a PMIx client asks its server (`PMIx_Get` of
//! `PMIX_JOB_SIZE`), which needs libpmix. Its clients get `PMIX_RANK`, `PMIX_NAMESPACE` and
//! `PMIX_ID` (seen under Open MPI 4.1 with PMIx 4.2, which exports `OMPI_COMM_WORLD_SIZE` too,
//! and is read as Open MPI). So under a PMIx-only launcher the size comes from
//! `PIPES_CLUSTER_SIZE`, or from `SLURM_NTASKS` under `srun --mpi=pmix`.
//!
//! # The rendezvous
//!
//! Rank 0 listens on the rendezvous address: `PIPES_CLUSTER_ADDR` (`host:port`), by default
//! `127.0.0.1:7710` ([`DEFAULT_PORT`]), which suits one job on one machine. Across
//! machines, set it to an address of rank 0's host that the others reach, on every rank
//! (`mpirun -x PIPES_CLUSTER_ADDR=node0:7710 ...`); a launcher that says the job spans hosts
//! (see [`Launch::one_host`]) without it fails at once with [`ClusterError::NoAddress`]
//! instead of timing out. Two jobs at once on one machine need two
//! addresses: the second rank 0 fails with [`ClusterError::Bind`].
//!
//! 1. Every other rank dials rank 0 (retrying while it is not listening yet), binds a listener
//!    of its own on the local address of that connection (the interface that reaches rank 0,
//!    port chosen by the system), and registers: its rank, the size and job it was given, and
//!    its listener's address.
//! 2. Once all `size - 1` ranks have registered, rank 0 sends each the table of addresses. A
//!    rank registered twice, another size or another job fails every rank with the same
//!    typed error, sent by rank 0. Rank 0's join fails at once, and until the registration
//!    deadline it answers the ranks that register after the failure with the same error
//!    (keeping the rendezvous address bound until then), so a rank the launcher started
//!    late learns of it too.
//! 3. Each pair of ranks gets exactly one connection: the lower rank dials the higher one,
//!    says who it is, and both run a pipes-net connection over the stream.
//!
//! Each of the two steps has a deadline (`PIPES_CLUSTER_TIMEOUT` in seconds, default 30 s, or
//! [`ClusterBuilder::timeout`]): the registrations, counted from the start, and the pairwise
//! connections, counted from the table. A rank that never arrives fails the others with
//! [`ClusterError::RendezvousTimeout`] naming it, never a hang. (A registered rank waits for
//! rank 0's verdict a little past its own deadline, up to 5 s more, so that every rank names
//! the same missing ranks.)
//!
//! # Sessions between ranks
//!
//! [`Cluster::open`] opens a session with a rank; the rank accepts it from
//! [`Cluster::serve`]'s acceptor, which hands out only the sessions that rank opens. Since the
//! ranks start together, an open that reaches a rank before it serves the protocol is retried
//! until the node's open timeout. For a `#[wire]` protocol `P`, [`Cluster::client`] and
//! [`Cluster::incoming`] are the typed forms: they hand out `P`'s own endpoints (as its
//! `init()` does), with a pump on the cluster's runtime behind each. [`Cluster::connection`] is
//! the connection itself, for anything a [`Connection`] does.
//! Behind this, each other rank has a [`Node`] of its own on the cluster's runtime, holding
//! that one connection, which is how an acceptor knows which rank a session came from.
//! [`Cluster::finish`] leaves the cluster once every rank
//! has called it (`MPI_Finalize`), so no rank exits while another still means to talk to it.
//! Dropping a cluster (after `finish` or without it) delivers what this rank sent before its
//! connections end, as a [`Node`]'s drop does.
//!
//! ```
//! use pipes_net::{Cluster, Protocol, Role};
//!
//! const HELLO: Protocol = Protocol::bounded("hello", b"hello: send Rank(u64)");
//!
//! // Three ranks on threads of one process; under `mpirun` each is a process calling
//! // `Cluster::from_env()`.
//! let rendezvous = std::net::TcpListener::bind("127.0.0.1:0")?.local_addr()?;
//! let ranks: Vec<_> = (0..3)
//!     .map(|rank| {
//!         std::thread::spawn(move || {
//!             let cluster = Cluster::builder()
//!                 .rank(rank)
//!                 .size(3)
//!                 .rendezvous(rendezvous)
//!                 .join()
//!                 .unwrap();
//!             if rank == 0 {
//!                 // Rank 0 gathers one message from every other rank.
//!                 let mut sum = 0;
//!                 for from in 1..cluster.size() {
//!                     let mut session = cluster.serve(from, HELLO, Role::Server).accept().unwrap();
//!                     sum += session.recv().unwrap().decode::<u64>().unwrap();
//!                 }
//!                 assert_eq!(sum, 1 + 2);
//!             } else {
//!                 let session = cluster.open(0, HELLO, Role::Client).unwrap();
//!                 session.send(0, 0, &(rank as u64)).unwrap();
//!                 session.close();
//!             }
//!             // Leave together (the drop would deliver the last frames anyway).
//!             cluster.finish().unwrap();
//!         })
//!     })
//!     .collect();
//! for rank in ranks {
//!     rank.join().unwrap();
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

mod error;
mod launch;
mod rendezvous;

pub use error::ClusterError;
pub use launch::{
    ADDR_VAR, DEFAULT_PORT, DEFAULT_TIMEOUT, Launch, Launcher, TIMEOUT_VAR, rendezvous_from_vars,
    timeout_from_vars,
};

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::time::Instant;

use crate::block::block_on;
use crate::connection::lock;
use crate::deadline::Later;
use crate::error::ConnectError;
use crate::frame::Role;
use crate::node::{Config, Connection, Node, Protocol};
use crate::session::{Acceptor, RawSession};
use crate::wire::{Incoming, WireProtocol};
use launch::check_rank;
use rendezvous::{Lingering, Me, VERDICT_GRACE, gather, link, register};

/// How to start a [`Cluster`] by hand (tests, programs without a launcher):
/// `Cluster::builder().rank(r).size(n).rendezvous(addr).join()`; or from a launcher's
/// variables with [`from_env`](Self::from_env), then adjusted.
#[derive(Clone, Debug)]
pub struct ClusterBuilder {
    rank: Option<usize>,
    size: Option<usize>,
    rendezvous: SocketAddr,
    timeout: Duration,
    job: Option<String>,
    config: Config,
}

impl Default for ClusterBuilder {
    fn default() -> Self {
        ClusterBuilder {
            rank: None,
            size: None,
            rendezvous: SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)),
            timeout: DEFAULT_TIMEOUT,
            job: None,
            config: Config::default(),
        }
    }
}

impl ClusterBuilder {
    /// Rank, size and job from the launcher's variables, rendezvous address and deadline
    /// from `PIPES_CLUSTER_ADDR` and `PIPES_CLUSTER_TIMEOUT` (see the [module docs](self)).
    pub fn from_env() -> Result<Self, ClusterError> {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// [`from_env`](Self::from_env), reading the variables through `var`.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Self, ClusterError> {
        let launch = Launch::from_vars(&var)?;
        if launch.one_host == Some(false) && var(ADDR_VAR).is_none() {
            return Err(ClusterError::NoAddress {
                launcher: launch.launcher,
            });
        }
        Ok(ClusterBuilder {
            rank: Some(launch.rank),
            size: Some(launch.size),
            rendezvous: rendezvous_from_vars(&var)?,
            timeout: timeout_from_vars(&var)?,
            job: launch.job,
            config: Config::default(),
        })
    }

    /// This process's rank, below the size (required).
    pub fn rank(mut self, rank: usize) -> Self {
        self.rank = Some(rank);
        self
    }

    /// How many ranks the cluster has (required).
    pub fn size(mut self, size: usize) -> Self {
        self.size = Some(size);
        self
    }

    /// Rank 0's address: rank 0 listens there, the others dial it (default
    /// `127.0.0.1:7710`).
    pub fn rendezvous(mut self, addr: SocketAddr) -> Self {
        self.rendezvous = addr;
        self
    }

    /// How long each step of the rendezvous may take: the registrations, then the pairwise
    /// connections (default 30 s).
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout;
        self
    }

    /// The job's id: a rank registering with another job's rank 0 fails the rendezvous with
    /// [`ClusterError::JobMismatch`] (default none, which matches only none).
    pub fn job(mut self, job: impl Into<String>) -> Self {
        self.job = Some(job.into());
        self
    }

    /// The settings of the connections between ranks.
    pub fn config(mut self, config: Config) -> Self {
        self.config = config;
        self
    }

    /// Meets the other ranks and connects to each, with the driver on a thread of its own (a
    /// current-thread tokio runtime), for programs that block. Fails within the timeout.
    pub fn join(self) -> Result<Cluster, ClusterError> {
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let (lingering, mut lingered) = Lingering::new();
        let (started, handle) = std::sync::mpsc::channel();
        let thread = std::thread::Builder::new()
            .name("pipes-cluster".into())
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
                let _ = started.send(Ok(runtime.handle().clone()));
                runtime.block_on(async move {
                    let _ = stopped.await;
                    // What the rendezvous left running (rank 0 telling late ranks of a
                    // failure) runs on until it is done, at the registration deadline.
                    let _ = lingered.recv().await;
                });
            })?;
        let handle = handle
            .recv()
            .map_err(|_| io::Error::other("the pipes-cluster thread died while starting"))??;
        let driver = Driver {
            stop: Some(stop),
            thread: Some(thread),
        };
        match block_on(handle.spawn(self.join_on(lingering))) {
            Ok(Ok(mut cluster)) => {
                cluster.driver = Some(driver);
                Ok(cluster)
            }
            Ok(Err(error)) => {
                // Not joined: the thread may go on telling late ranks of the failure.
                driver.detach();
                Err(error)
            }
            Err(_) => Err(io::Error::other("the pipes-cluster thread died").into()),
        }
    }

    /// [`join`](Self::join) on the caller's tokio runtime (which must have its IO and time
    /// drivers enabled): the connections' tasks run there, and so, if the rendezvous fails at
    /// rank 0 before its deadline, does the task that tells ranks registering late.
    pub async fn join_async(self) -> Result<Cluster, ClusterError> {
        // Nobody waits on the hold: the caller's runtime runs the task as long as it runs.
        let (lingering, _) = Lingering::new();
        self.join_on(lingering).await
    }

    /// [`join_async`](Self::join_async), with what rank 0 leaves running after a failure
    /// holding `lingering`.
    async fn join_on(self, lingering: Lingering) -> Result<Cluster, ClusterError> {
        let (Some(rank), Some(size)) = (self.rank, self.size) else {
            return Err(ClusterError::Rendezvous(
                "the builder needs a rank and a size".into(),
            ));
        };
        check_rank(rank, size)?;
        let deadline = Instant::now().later(self.timeout);
        let me = Me {
            rank,
            size,
            job: self.job,
        };
        let mut nodes = Vec::with_capacity(size);
        let mut finishes = Vec::with_capacity(size);
        for peer in 0..size {
            if peer == rank {
                nodes.push(None);
                finishes.push(None);
                continue;
            }
            let node = Node::builder().config(self.config).start_async().await?;
            // Served before any rank can reach this one, so no finish is refused.
            finishes.push((rank == 0).then(|| node.serve(FINISH, Role::Server)));
            nodes.push(Some(node));
        }
        let (table, listener) = if rank == 0 {
            (
                gather(&me, self.rendezvous, deadline, lingering).await?,
                None,
            )
        } else {
            // Rank 0's deadline may come a little after this one's: wait for its verdict.
            let verdict = deadline.later(self.timeout.min(VERDICT_GRACE));
            let (table, listener) = register(&me, self.rendezvous, deadline, verdict).await?;
            (table, Some(listener))
        };
        let deadline = Instant::now().later(self.timeout);
        let connections = link(&me, &table, listener, &nodes, deadline).await?;
        let mut watched = Vec::new();
        let peers = nodes
            .into_iter()
            .zip(connections)
            .zip(finishes)
            .map(|((node, connection), finish)| match (node, connection) {
                (Some(node), Some(connection)) => {
                    let node = Arc::new(Mutex::new(Some(node)));
                    watched.push((Arc::downgrade(&node), connection.clone()));
                    Some(Peer {
                        node,
                        connection,
                        finish,
                    })
                }
                _ => None,
            })
            .collect();
        tokio::spawn(watch(watched));
        Ok(Cluster {
            rank,
            size,
            open_timeout: self.config.open_timeout,
            runtime: tokio::runtime::Handle::current(),
            peers,
            driver: None,
        })
    }
}

/// The processes of one job, connected pairwise: one [`Connection`] to each other rank,
/// carrying any number of sessions. See the [module docs](self) for how ranks meet.
/// Dropping it shuts every connection down gracefully, as a [`Node`]'s drop does: what was
/// handed to it is delivered (within [`Config::shutdown_timeout`]), then every session still
/// open ends with [`SessionError::ConnectionLost`](crate::SessionError::ConnectionLost). A
/// cluster joined with [`ClusterBuilder::join`] blocks in its drop until that is done; one
/// joined on the caller's runtime ([`ClusterBuilder::join_async`]) shuts down as a task
/// there, so await [`Cluster::finish_async`] before that runtime ends.
pub struct Cluster {
    rank: usize,
    size: usize,
    open_timeout: Duration,
    /// The runtime the connections run on.
    runtime: tokio::runtime::Handle,
    /// One per rank, `None` at this rank's index. Dropped before the driver.
    peers: Vec<Option<Peer>>,
    driver: Option<Driver>,
}

/// Another rank: a node of its own (so sessions it opens reach only acceptors served for it)
/// and the connection.
struct Peer {
    /// Taken and dropped when the connection dies, so the rank's acceptors end.
    node: Arc<Mutex<Option<Node>>>,
    connection: Connection,
    /// At rank 0: where the rank's [`Cluster::finish`] session arrives.
    finish: Option<Acceptor>,
}

/// The blocking form's runtime thread: stopped and joined when the cluster is dropped (after
/// its nodes' shutdown).
struct Driver {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Driver {
    /// Stops the runtime without waiting for its thread, which ends once what the rendezvous
    /// left running is done (see [`Lingering`]).
    fn detach(mut self) {
        self.thread = None;
    }

    /// Whether this is the driver thread itself.
    fn is_current(&self) -> bool {
        self.thread
            .as_ref()
            .is_some_and(|thread| thread.thread().id() == std::thread::current().id())
    }
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
        }
        let current = self.is_current();
        if let Some(thread) = self.thread.take().filter(|_| !current) {
            let _ = thread.join();
        }
    }
}

impl Drop for Cluster {
    /// Shuts the nodes down gracefully, blocking for the blocking form (see [`Cluster`]);
    /// the driver, dropped after, stops the runtime.
    fn drop(&mut self) {
        let shutdown = self.shutdown_nodes();
        match &self.driver {
            Some(driver) if !driver.is_current() => block_on(shutdown),
            // On the caller's runtime (or on the driver thread): the task goes on alone.
            _ => drop(shutdown),
        }
    }
}

impl fmt::Debug for Cluster {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Cluster")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl Cluster {
    /// Joins the cluster the launcher started this process in: rank and size from its
    /// variables, the rendezvous from `PIPES_CLUSTER_ADDR` (see the [module docs](self)).
    /// Blocks until every rank is connected, or fails within `PIPES_CLUSTER_TIMEOUT`.
    pub fn from_env() -> Result<Cluster, ClusterError> {
        ClusterBuilder::from_env()?.join()
    }

    /// [`from_env`](Self::from_env) on the caller's tokio runtime.
    pub async fn from_env_async() -> Result<Cluster, ClusterError> {
        ClusterBuilder::from_env()?.join_async().await
    }

    /// How to start a cluster by hand.
    pub fn builder() -> ClusterBuilder {
        ClusterBuilder::default()
    }

    /// This process's rank.
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// How many ranks the cluster has.
    pub fn size(&self) -> usize {
        self.size
    }

    fn peer(&self, rank: usize) -> &Peer {
        match self.peers.get(rank) {
            Some(Some(peer)) => peer,
            Some(None) => panic!("rank {rank} is this process: it has no connection to itself"),
            None => panic!("rank {rank} is not below the cluster's size {}", self.size),
        }
    }

    /// The connection to `rank`.
    ///
    /// # Panics
    ///
    /// If `rank` is this process's rank, or not below the size.
    pub fn connection(&self, rank: usize) -> &Connection {
        &self.peer(rank).connection
    }

    /// Opens a session of `protocol` with `rank`, playing `role`; that rank accepts it from
    /// [`serve`](Self::serve). A rank that does not serve the protocol yet is asked again
    /// until the open timeout ([`Config::open_timeout`]), since ranks start together; the
    /// other errors are [`Connection::open`]'s.
    ///
    /// # Panics
    ///
    /// If `rank` is this process's rank, or not below the size.
    pub async fn open_async(
        &self,
        rank: usize,
        protocol: Protocol,
        role: Role,
    ) -> Result<RawSession, ConnectError> {
        let connection = self.connection(rank).clone();
        let deadline = std::time::Instant::now().later(self.open_timeout);
        let mut pause = Duration::from_millis(1);
        loop {
            match connection.open_async(protocol, role).await {
                Err(ConnectError::Refused(_)) if std::time::Instant::now() + pause < deadline => {
                    // The timer is the runtime's: sleep there (a blocking caller has none).
                    let _ = self
                        .runtime
                        .spawn(async move { tokio::time::sleep(pause).await })
                        .await;
                    pause = (pause * 2).min(Duration::from_millis(50));
                }
                other => return other,
            }
        }
    }

    /// Opens a session of the `#[wire]` protocol `P` with `rank`, playing the client: the
    /// client's endpoint for the start state, as `init()` would give it, with a pump on the
    /// cluster's runtime behind it (see [`Connection::client_async`]). That rank accepts it
    /// from [`incoming`](Self::incoming); one that does not serve `P` yet is asked again until
    /// the open timeout, as [`open_async`](Self::open_async) does.
    ///
    /// # Panics
    ///
    /// If `rank` is this process's rank, or not below the size.
    pub async fn client_async<P: WireProtocol>(
        &self,
        rank: usize,
    ) -> Result<P::Client, ConnectError> {
        let session = self.open_async(rank, P::PROTOCOL, Role::Client).await?;
        let (client, pump) = P::client(session);
        self.runtime.spawn(pump);
        Ok(client)
    }

    /// [`client_async`](Self::client_async), blocking the thread. Not for async code.
    ///
    /// # Panics
    ///
    /// If `rank` is this process's rank, or not below the size.
    pub fn client<P: WireProtocol>(&self, rank: usize) -> Result<P::Client, ConnectError> {
        block_on(self.client_async::<P>(rank))
    }

    /// Serves the `#[wire]` protocol `P` to `rank`: the sessions that rank opens with
    /// [`client`](Self::client) arrive as the server's endpoint for the start state. Ends (no
    /// more sessions) once the connection to that rank is lost, as [`serve`](Self::serve)'s
    /// acceptor does.
    ///
    /// # Panics
    ///
    /// If `rank` is this process's rank, or not below the size.
    pub fn incoming<P: WireProtocol>(&self, rank: usize) -> Incoming<P> {
        Incoming::new(
            self.serve(rank, P::PROTOCOL, Role::Server),
            self.runtime.clone(),
        )
    }

    /// [`open_async`](Self::open_async), blocking the thread. Not for async code.
    ///
    /// # Panics
    ///
    /// If `rank` is this process's rank, or not below the size.
    pub fn open(
        &self,
        rank: usize,
        protocol: Protocol,
        role: Role,
    ) -> Result<RawSession, ConnectError> {
        block_on(self.open_async(rank, protocol, role))
    }

    /// Leaves the cluster once every rank has called `finish` (MPI's `MPI_Finalize`): so no
    /// rank exits, closing its connections, while another rank still means to talk to it.
    /// Then shuts this rank's connections down gracefully, as dropping the cluster does.
    /// Fails if a rank's connection is lost before that rank finishes.
    pub async fn finish_async(mut self) -> Result<(), ClusterError> {
        let lost = |rank: usize| move |error| ClusterError::Lost { rank, error };
        if self.rank != 0 {
            let session = self
                .open_async(0, FINISH, Role::Client)
                .await
                .map_err(|error| ClusterError::Connect { rank: 0, error })?;
            let mut session = session;
            session.send_async(0, 0, &()).await.map_err(lost(0))?;
            session.recv_async().await.map_err(lost(0))?;
            session.close();
            self.shutdown_nodes().await;
            return Ok(());
        }
        let mut sessions = Vec::with_capacity(self.size);
        for rank in 1..self.size {
            let peer = self.peers[rank].as_mut().expect("a peer per other rank");
            let acceptor = peer.finish.as_mut().expect("rank 0 serves finish");
            let Some(mut session) = acceptor.accept_async().await else {
                return Err(ClusterError::Lost {
                    rank,
                    error: crate::connection::closed_by_node(),
                });
            };
            session.recv_async().await.map_err(lost(rank))?;
            sessions.push(session);
        }
        for (rank, session) in (1..).zip(&sessions) {
            session.send_async(1, 0, &()).await.map_err(lost(rank))?;
        }
        // The shutdown delivers the releases before the connections end.
        drop(sessions);
        self.shutdown_nodes().await;
        Ok(())
    }

    /// Shuts every rank's node down gracefully (see [`Node`]'s shutdown): what this rank
    /// queued is delivered before its connections end. Runs on the cluster's runtime; awaits
    /// nothing but the task, so a blocking caller may wait on it.
    fn shutdown_nodes(&mut self) -> impl Future<Output = ()> + Send + 'static {
        let nodes: Vec<Node> = self
            .peers
            .iter()
            .flatten()
            .filter_map(|peer| lock(&peer.node).take())
            .collect();
        let shutdown = self.runtime.spawn(async move {
            let mut nodes_left = tokio::task::JoinSet::new();
            for node in nodes {
                nodes_left.spawn(node.shutdown());
            }
            while nodes_left.join_next().await.is_some() {}
        });
        async move {
            let _ = shutdown.await;
        }
    }

    /// [`finish_async`](Self::finish_async), blocking the thread. Not for async code.
    pub fn finish(self) -> Result<(), ClusterError> {
        block_on(self.finish_async())
    }

    /// Serves `protocol` in `role` to `rank`: the sessions that rank opens with it arrive at
    /// the returned [`Acceptor`] (each rank's apart). As with [`Node::serve`], protocols are
    /// served by name and fingerprint: serving the same protocol again for the same rank
    /// replaces the acceptor. Once the connection to that rank is lost, its acceptors end
    /// (`accept` returns `None`) within a few tens of milliseconds.
    ///
    /// # Panics
    ///
    /// If `rank` is this process's rank, or not below the size.
    pub fn serve(&self, rank: usize, protocol: Protocol, role: Role) -> Acceptor {
        match lock(&self.peer(rank).node).as_ref() {
            Some(node) => node.serve(protocol, role),
            // The connection died: an acceptor that has ended.
            None => Acceptor {
                sessions: tokio::sync::mpsc::unbounded_channel().1,
                protocol: protocol.name,
            },
        }
    }
}

/// The protocol of [`Cluster::finish`], from a rank's side: in state 0 it sends `Done`, in
/// state 1 rank 0 answers `Release`, and the rank ends the session.
const FINISH: Protocol = Protocol::bounded(
    "pipes-cluster-finish",
    b"pipes-cluster-finish: 0 send Done -> 1; 1 recv Release -> end",
);

/// How often a peer's watcher looks at its connection.
const WATCH_EVERY: Duration = Duration::from_millis(50);

/// A rank's node, as the watcher holds it (the cluster owns it), and its connection.
type Watched = (std::sync::Weak<Mutex<Option<Node>>>, Connection);

/// Watches the connections to the other ranks: once one dies, drops that rank's node, so its
/// acceptors end (`accept` returns `None`) instead of waiting for a rank that is gone. One task
/// for all of them; ends with the cluster.
async fn watch(mut watched: Vec<Watched>) {
    while !watched.is_empty() {
        tokio::time::sleep(WATCH_EVERY).await;
        watched.retain(|(node, connection)| {
            let Some(node) = node.upgrade() else {
                return false;
            };
            if connection.failure().is_some() {
                drop(lock(&node).take());
                return false;
            }
            true
        });
    }
}

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
//!    typed error, sent by rank 0.
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
//! until the node's open timeout. [`Cluster::connection`] is the connection itself, for
//! anything a [`Connection`] does (a typed open on it will work on a cluster unchanged).
//! Behind this, each other rank has a [`Node`] of its own on the cluster's runtime, holding
//! that one connection, which is how an acceptor knows which rank a session came from.
//! [`Cluster::finish`] leaves the cluster once every rank
//! has called it (`MPI_Finalize`): call it before exiting, or the frames a rank sent last may
//! be lost with its connections.
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
//!             // Leave together, so no rank's last frames are lost.
//!             cluster.finish().unwrap();
//!         })
//!     })
//!     .collect();
//! for rank in ranks {
//!     rank.join().unwrap();
//! }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use std::fmt;
use std::io;
use std::net::{IpAddr, SocketAddr, ToSocketAddrs};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinSet;
use tokio::time::Instant;

use crate::block::block_on;
use crate::connection::{Origin, lock};
use crate::error::ConnectError;
use crate::frame::Role;
use crate::node::{Config, Connection, Node, Protocol};
use crate::session::{Acceptor, RawSession};

/// The rendezvous address's variable: `host:port` of rank 0, the same on every rank.
pub const ADDR_VAR: &str = "PIPES_CLUSTER_ADDR";
/// The rendezvous deadline's variable, in seconds.
pub const TIMEOUT_VAR: &str = "PIPES_CLUSTER_TIMEOUT";
/// Rank 0's port when `PIPES_CLUSTER_ADDR` is not set (on 127.0.0.1).
pub const DEFAULT_PORT: u16 = 7710;
/// How long the rendezvous may take when neither `PIPES_CLUSTER_TIMEOUT` nor
/// [`ClusterBuilder::timeout`] says.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

/// The launcher whose variables gave a process its rank and size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Launcher {
    /// Set by hand: `PIPES_CLUSTER_RANK` and `PIPES_CLUSTER_SIZE`.
    Pipes,
    /// Open MPI's `mpirun`: `OMPI_COMM_WORLD_RANK` and `OMPI_COMM_WORLD_SIZE`.
    OpenMpi,
    /// MPICH's Hydra (`mpiexec`), and launchers speaking PMI like it: `PMI_RANK` and
    /// `PMI_SIZE`.
    Hydra,
    /// A PMIx server (PRRTE, Slurm's `--mpi=pmix`): `PMIX_RANK`; the size from
    /// `PIPES_CLUSTER_SIZE` or `SLURM_NTASKS`, since PMIx exports none.
    Pmix,
    /// Slurm's `srun`: `SLURM_PROCID` and `SLURM_NTASKS`.
    Slurm,
}

impl fmt::Display for Launcher {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Launcher::Pipes => "PIPES_CLUSTER_* variables",
            Launcher::OpenMpi => "Open MPI",
            Launcher::Hydra => "MPICH Hydra (PMI)",
            Launcher::Pmix => "PMIx",
            Launcher::Slurm => "Slurm",
        })
    }
}

/// What a launcher told this process: who started it, its rank, the number of ranks, and the
/// job's id if the launcher exports one.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Launch {
    /// The launcher.
    pub launcher: Launcher,
    /// This process's rank, below `size`.
    pub rank: usize,
    /// How many ranks the job has.
    pub size: usize,
    /// The job's id (ranks of another job are refused at the rendezvous), if known.
    pub job: Option<String>,
    /// Whether every rank runs on this host, if the launcher says (Open MPI's
    /// `OMPI_COMM_WORLD_LOCAL_SIZE`, MPICH's `MPI_LOCALNRANKS`, Slurm's
    /// `SLURM_STEP_NUM_NODES` or `SLURM_NNODES`). A job across hosts needs
    /// `PIPES_CLUSTER_ADDR`: the default, 127.0.0.1, is rank 0's only on rank 0's host.
    pub one_host: Option<bool>,
}

impl Launch {
    /// Reads the launcher's variables from this process's environment.
    pub fn from_env() -> Result<Launch, ClusterError> {
        Launch::from_vars(|name| std::env::var(name).ok())
    }

    /// Reads the launcher's variables through `var` (a variable's value, or `None`): the
    /// rules of [`from_env`](Self::from_env), on any map. The first launcher whose rank
    /// variable is set is the one (in the order of [`Launcher`]'s variants); its size must
    /// then be set too.
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Launch, ClusterError> {
        let job = |names: &[&str]| names.iter().find_map(|name| var(name));
        let (launcher, rank_var, size_vars, job): (_, _, &[&'static str], _) =
            if var("PIPES_CLUSTER_RANK").is_some() {
                (
                    Launcher::Pipes,
                    "PIPES_CLUSTER_RANK",
                    &["PIPES_CLUSTER_SIZE"],
                    job(&["PIPES_CLUSTER_JOB"]),
                )
            } else if var("OMPI_COMM_WORLD_RANK").is_some() {
                (
                    Launcher::OpenMpi,
                    "OMPI_COMM_WORLD_RANK",
                    &["OMPI_COMM_WORLD_SIZE"],
                    job(&["PMIX_NAMESPACE", "OMPI_MCA_ess_base_jobid"]),
                )
            } else if var("PMI_RANK").is_some() {
                (Launcher::Hydra, "PMI_RANK", &["PMI_SIZE"], None)
            } else if var("PMIX_RANK").is_some() {
                (
                    Launcher::Pmix,
                    "PMIX_RANK",
                    &["PIPES_CLUSTER_SIZE", "SLURM_NTASKS"],
                    job(&["PMIX_NAMESPACE"]),
                )
            } else if var("SLURM_PROCID").is_some() {
                let step = match (var("SLURM_JOB_ID"), var("SLURM_STEP_ID")) {
                    (Some(job), Some(step)) => Some(format!("{job}.{step}")),
                    (job, _) => job,
                };
                (
                    Launcher::Slurm,
                    "SLURM_PROCID",
                    &["SLURM_NTASKS", "SLURM_NPROCS"],
                    step,
                )
            } else {
                return Err(ClusterError::NoLauncher);
            };
        let number = |name: &'static str| -> Result<Option<usize>, ClusterError> {
            match var(name) {
                None => Ok(None),
                Some(value) => match value.trim().parse() {
                    Ok(n) => Ok(Some(n)),
                    Err(_) => Err(ClusterError::InvalidVar { var: name, value }),
                },
            }
        };
        let rank = number(rank_var)?.expect("the rank variable is set");
        let mut size = None;
        for &name in size_vars {
            if let Some(n) = number(name)? {
                size = Some(n);
                break;
            }
        }
        let Some(size) = size else {
            return Err(ClusterError::MissingVar {
                launcher,
                var: size_vars[0],
            });
        };
        check_rank(rank, size)?;
        let one_host = match launcher {
            Launcher::OpenMpi => number("OMPI_COMM_WORLD_LOCAL_SIZE")?.map(|local| local == size),
            Launcher::Hydra => number("MPI_LOCALNRANKS")?.map(|local| local == size),
            Launcher::Pmix | Launcher::Slurm => match number("SLURM_STEP_NUM_NODES")? {
                Some(nodes) => Some(nodes == 1),
                None => number("SLURM_NNODES")?.map(|nodes| nodes == 1),
            },
            Launcher::Pipes => None,
        };
        Ok(Launch {
            launcher,
            rank,
            size,
            job,
            one_host,
        })
    }
}

fn check_rank(rank: usize, size: usize) -> Result<(), ClusterError> {
    if rank < size {
        Ok(())
    } else {
        Err(ClusterError::InvalidRank { rank, size })
    }
}

/// The rendezvous address from `PIPES_CLUSTER_ADDR` read through `var` (an IP address and
/// port, or a host name and port, resolved to its first address), or `127.0.0.1:7710`.
pub fn rendezvous_from_vars(
    var: impl Fn(&str) -> Option<String>,
) -> Result<SocketAddr, ClusterError> {
    let Some(value) = var(ADDR_VAR) else {
        return Ok(SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT)));
    };
    let invalid = || ClusterError::InvalidVar {
        var: ADDR_VAR,
        value: value.clone(),
    };
    if let Ok(addr) = value.trim().parse() {
        return Ok(addr);
    }
    value
        .trim()
        .to_socket_addrs()
        .map_err(|_| invalid())?
        .next()
        .ok_or_else(invalid)
}

/// The rendezvous deadline from `PIPES_CLUSTER_TIMEOUT` (seconds, fractions allowed) read
/// through `var`, or [`DEFAULT_TIMEOUT`].
pub fn timeout_from_vars(var: impl Fn(&str) -> Option<String>) -> Result<Duration, ClusterError> {
    let Some(value) = var(TIMEOUT_VAR) else {
        return Ok(DEFAULT_TIMEOUT);
    };
    match value.trim().parse::<f64>() {
        Ok(secs) if secs.is_finite() && secs > 0.0 && secs < 1e9 => {
            Ok(Duration::from_secs_f64(secs))
        }
        _ => Err(ClusterError::InvalidVar {
            var: TIMEOUT_VAR,
            value,
        }),
    }
}

/// Starting a cluster failed. Rank 0 sends the rendezvous's failures to every rank registered
/// so far, so they all fail with the same error.
#[derive(Clone, Debug)]
pub enum ClusterError {
    /// No launcher's variables are set: the process was not started by `mpirun`, `mpiexec`
    /// or `srun` (set `PIPES_CLUSTER_RANK` and `PIPES_CLUSTER_SIZE`, or use
    /// [`Cluster::builder`]).
    NoLauncher,
    /// The launcher's rank variable is set, its size variable is not.
    MissingVar {
        /// The launcher whose rank variable is set.
        launcher: Launcher,
        /// The size variable that is missing.
        var: &'static str,
    },
    /// A variable does not hold what it should (a number, an address, seconds).
    InvalidVar {
        /// The variable.
        var: &'static str,
        /// Its value.
        value: String,
    },
    /// The launcher says the job spans several hosts, and `PIPES_CLUSTER_ADDR` is not set:
    /// the default (127.0.0.1) would reach rank 0 only from its own host.
    NoAddress {
        /// The launcher.
        launcher: Launcher,
    },
    /// A rank that is not below the size (or a size of zero).
    InvalidRank {
        /// The rank.
        rank: usize,
        /// The size.
        size: usize,
    },
    /// Rank 0 could not listen on the rendezvous address (another job's rank 0 may hold it:
    /// give each job its own `PIPES_CLUSTER_ADDR`).
    Bind {
        /// The rendezvous address.
        addr: SocketAddr,
        /// Why.
        error: Arc<io::Error>,
    },
    /// A socket failed during the rendezvous.
    Io(Arc<io::Error>),
    /// The rendezvous did not complete in time: these ranks never arrived (never registered
    /// with rank 0, or never connected to this rank). `[0]` from a rank other than 0: rank 0
    /// did not answer.
    RendezvousTimeout {
        /// The ranks that were missing.
        missing: Vec<usize>,
    },
    /// Two processes claimed the same rank (two jobs sharing one rendezvous address, or a
    /// launcher's variables set by hand twice alike).
    RankCollision {
        /// The rank claimed twice.
        rank: usize,
    },
    /// A rank was started with another size than rank 0.
    SizeMismatch {
        /// The rank that differs.
        rank: usize,
        /// Its size.
        size: usize,
        /// Rank 0's.
        expected: usize,
    },
    /// A rank belongs to another job than rank 0 (two jobs sharing one rendezvous address).
    JobMismatch {
        /// The rank from the other job.
        rank: usize,
    },
    /// A peer broke the rendezvous: it is not a pipes cluster, it closed the connection, or
    /// it sent what it should not have.
    Rendezvous(String),
    /// The connection to a rank was lost while finishing.
    Lost {
        /// The rank.
        rank: usize,
        /// Why.
        error: crate::SessionError,
    },
    /// Connecting to a rank failed.
    Connect {
        /// The rank.
        rank: usize,
        /// Why.
        error: ConnectError,
    },
}

impl fmt::Display for ClusterError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClusterError::NoLauncher => f.write_str(
                "no launcher's variables (OMPI_COMM_WORLD_RANK, PMI_RANK, PMIX_RANK, \
                 SLURM_PROCID): start the program with mpirun, mpiexec or srun, or set \
                 PIPES_CLUSTER_RANK and PIPES_CLUSTER_SIZE",
            ),
            ClusterError::MissingVar { launcher, var } => {
                write!(f, "{launcher} gave a rank but {var} is not set")
            }
            ClusterError::InvalidVar { var, value } => write!(f, "{var}={value:?} is not valid"),
            ClusterError::NoAddress { launcher } => write!(
                f,
                "{launcher} started the job on several hosts: set {ADDR_VAR} to rank 0's \
                 host:port on every rank (mpirun -x {ADDR_VAR}=host:7710)"
            ),
            ClusterError::InvalidRank { rank, size } => {
                write!(f, "rank {rank} is not below the cluster's size {size}")
            }
            ClusterError::Bind { addr, error } => write!(
                f,
                "rank 0 cannot listen on the rendezvous address {addr}: {error} (another \
                 job may hold it: set {ADDR_VAR} to another address)"
            ),
            ClusterError::Io(error) => write!(f, "rendezvous failed: {error}"),
            ClusterError::RendezvousTimeout { missing } => {
                write!(f, "rendezvous timed out: rank")?;
                if missing.len() > 1 {
                    f.write_str("s")?;
                }
                for (i, rank) in missing.iter().enumerate() {
                    f.write_str(if i == 0 { " " } else { ", " })?;
                    write!(f, "{rank}")?;
                }
                f.write_str(" never arrived")
            }
            ClusterError::RankCollision { rank } => {
                write!(f, "two processes claim rank {rank}")
            }
            ClusterError::SizeMismatch {
                rank,
                size,
                expected,
            } => write!(
                f,
                "rank {rank} was started with size {size}, rank 0 with size {expected}"
            ),
            ClusterError::JobMismatch { rank } => write!(
                f,
                "rank {rank} belongs to another job than rank 0 (two jobs on one {ADDR_VAR}?)"
            ),
            ClusterError::Rendezvous(why) => write!(f, "rendezvous failed: {why}"),
            ClusterError::Connect { rank, error } => {
                write!(f, "connecting to rank {rank} failed: {error}")
            }
            ClusterError::Lost { rank, error } => {
                write!(f, "rank {rank} was lost before it finished: {error}")
            }
        }
    }
}

impl std::error::Error for ClusterError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ClusterError::Bind { error, .. } | ClusterError::Io(error) => Some(&**error),
            ClusterError::Connect { error, .. } => Some(error),
            ClusterError::Lost { error, .. } => Some(error),
            _ => None,
        }
    }
}

impl From<io::Error> for ClusterError {
    fn from(error: io::Error) -> Self {
        ClusterError::Io(Arc::new(error))
    }
}

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
                });
            })?;
        let handle = handle
            .recv()
            .map_err(|_| io::Error::other("the pipes-cluster thread died while starting"))??;
        let driver = Driver {
            stop: Some(stop),
            _thread: thread,
        };
        match block_on(handle.spawn(self.join_async())) {
            Ok(Ok(mut cluster)) => {
                cluster.driver = Some(driver);
                Ok(cluster)
            }
            Ok(Err(error)) => Err(error),
            Err(_) => Err(io::Error::other("the pipes-cluster thread died").into()),
        }
    }

    /// [`join`](Self::join) on the caller's tokio runtime (which must have its IO and time
    /// drivers enabled): the connections' tasks run there.
    pub async fn join_async(self) -> Result<Cluster, ClusterError> {
        let (Some(rank), Some(size)) = (self.rank, self.size) else {
            return Err(ClusterError::Rendezvous(
                "the builder needs a rank and a size".into(),
            ));
        };
        check_rank(rank, size)?;
        let deadline = Instant::now() + self.timeout;
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
            (gather(&me, self.rendezvous, deadline).await?, None)
        } else {
            // Rank 0's deadline may come a little after this one's: wait for its verdict.
            let verdict = deadline + self.timeout.min(VERDICT_GRACE);
            let (table, listener) = register(&me, self.rendezvous, deadline, verdict).await?;
            (table, Some(listener))
        };
        let deadline = Instant::now() + self.timeout;
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
/// Dropping it closes every connection: every session on them ends with
/// [`SessionError::ConnectionLost`](crate::SessionError::ConnectionLost).
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

/// The blocking form's runtime thread: stopped (not joined) when the cluster is dropped.
struct Driver {
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    _thread: std::thread::JoinHandle<()>,
}

impl Drop for Driver {
    fn drop(&mut self) {
        if let Some(stop) = self.stop.take() {
            let _ = stop.send(());
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
        let deadline = std::time::Instant::now() + self.open_timeout;
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
    /// rank exits, dropping its connections, while a frame another rank sent it is still on
    /// its way, or while its own last frames still wait to leave. Call it when this rank has
    /// received everything it expects; dropping a cluster without it may lose the frames
    /// queued last. Fails if a rank's connection is lost before that rank finishes.
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
        // Each rank ends its session once it has the release (or exits, which loses the
        // connection): then nothing more is owed to it.
        for mut session in sessions {
            let _ = session.recv_async().await;
        }
        Ok(())
    }

    /// [`finish_async`](Self::finish_async), blocking the thread. Not for async code.
    pub fn finish(self) -> Result<(), ClusterError> {
        block_on(self.finish_async())
    }

    /// Serves `protocol` in `role` to `rank`: the sessions that rank opens with it arrive at
    /// the returned [`Acceptor`] (each rank's apart). Serving it again for the same rank
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

/// How long past its own deadline a registered rank waits for rank 0's verdict, at most.
const VERDICT_GRACE: Duration = Duration::from_secs(5);

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

/// Who this process is, as the rendezvous says it.
struct Me {
    rank: usize,
    size: usize,
    job: Option<String>,
}

/// What every rendezvous stream starts with.
const MAGIC: &[u8; 16] = b"pipes-cluster/1\n";
/// The largest rendezvous message (a table of a million addresses fits).
const MAX_MESSAGE: u32 = 64 << 20;

/// The rendezvous's messages: each a big-endian `u32` length and a postcard body.
#[derive(Debug, Serialize, Deserialize)]
enum Message {
    /// A rank to rank 0: here I am, and where I listen.
    Register {
        rank: u64,
        size: u64,
        job: Option<String>,
        addr: SocketAddr,
    },
    /// Rank 0 to the others: where every rank listens (rank 0's own entry unused).
    Table(Vec<SocketAddr>),
    /// Rank 0 to the others: the rendezvous failed.
    Fail(Failure),
    /// The lower rank of a pair to the higher, on the stream that becomes their connection.
    Peer {
        rank: u64,
        size: u64,
        job: Option<String>,
    },
}

/// A rendezvous failure as rank 0 sends it.
#[derive(Debug, Serialize, Deserialize)]
enum Failure {
    Timeout(Vec<u64>),
    Collision(u64),
    Size { rank: u64, size: u64, expected: u64 },
    Job(u64),
}

impl From<Failure> for ClusterError {
    fn from(failure: Failure) -> Self {
        let n = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
        match failure {
            Failure::Timeout(missing) => ClusterError::RendezvousTimeout {
                missing: missing.into_iter().map(n).collect(),
            },
            Failure::Collision(rank) => ClusterError::RankCollision { rank: n(rank) },
            Failure::Size {
                rank,
                size,
                expected,
            } => ClusterError::SizeMismatch {
                rank: n(rank),
                size: n(size),
                expected: n(expected),
            },
            Failure::Job(rank) => ClusterError::JobMismatch { rank: n(rank) },
        }
    }
}

async fn write_message(stream: &mut TcpStream, magic: bool, message: &Message) -> io::Result<()> {
    let body = postcard::to_stdvec(message).map_err(io::Error::other)?;
    let len = u32::try_from(body.len())
        .ok()
        .filter(|&len| len <= MAX_MESSAGE)
        .ok_or_else(|| io::Error::other("rendezvous message too large"))?;
    let mut out = Vec::with_capacity(MAGIC.len() + 4 + body.len());
    if magic {
        out.extend_from_slice(MAGIC);
    }
    out.extend_from_slice(&len.to_be_bytes());
    out.extend_from_slice(&body);
    stream.write_all(&out).await
}

/// Reads one message, the stream's magic first if `magic`. Reads exactly its bytes, so the
/// stream can go on as a pipes-net connection.
async fn read_message(stream: &mut TcpStream, magic: bool) -> Result<Message, ClusterError> {
    let broken = |what: &str| ClusterError::Rendezvous(what.to_owned());
    if magic {
        let mut start = [0; MAGIC.len()];
        stream
            .read_exact(&mut start)
            .await
            .map_err(|_| broken("a peer closed its stream before saying who it is"))?;
        if &start != MAGIC {
            return Err(broken("a peer that is not a pipes cluster"));
        }
    }
    let mut len = [0; 4];
    stream.read_exact(&mut len).await.map_err(|error| {
        ClusterError::Rendezvous(format!("the peer closed its stream: {error}"))
    })?;
    let len = u32::from_be_bytes(len);
    if len > MAX_MESSAGE {
        return Err(broken("a rendezvous message over its maximum"));
    }
    let mut body = vec![0; len as usize];
    stream.read_exact(&mut body).await.map_err(|error| {
        ClusterError::Rendezvous(format!("the peer closed its stream: {error}"))
    })?;
    postcard::from_bytes(&body)
        .map_err(|error| ClusterError::Rendezvous(format!("a malformed message: {error}")))
}

fn missing(present: impl Iterator<Item = bool>) -> Vec<usize> {
    present
        .enumerate()
        .filter(|&(_, present)| !present)
        .map(|(rank, _)| rank)
        .collect()
}

/// Rank 0: accepts a registration from every other rank, then sends each the table; or, on a
/// failure, sends it to every rank registered so far.
async fn gather(
    me: &Me,
    addr: SocketAddr,
    deadline: Instant,
) -> Result<Vec<SocketAddr>, ClusterError> {
    let listener = TcpListener::bind(addr)
        .await
        .map_err(|error| ClusterError::Bind {
            addr,
            error: Arc::new(error),
        })?;
    let mut table: Vec<Option<SocketAddr>> = vec![None; me.size];
    table[0] = Some(addr);
    let mut registered: Vec<TcpStream> = Vec::new();
    // Registrations are read in tasks of their own, so a slow or stray peer holds up no one.
    let mut arriving = JoinSet::new();
    let outcome = loop {
        if table.iter().all(Option::is_some) {
            break Ok(());
        }
        tokio::select! {
            accepted = listener.accept() => {
                if let Ok((mut stream, _)) = accepted {
                    let _ = stream.set_nodelay(true);
                    arriving.spawn(async move {
                        let message = read_message(&mut stream, true).await;
                        (stream, message)
                    });
                }
            }
            Some(Ok((stream, message))) = arriving.join_next() => {
                // A stream that is not a rank registering (a port scanner, a stray client)
                // is dropped; the rendezvous goes on.
                let Ok(Message::Register { rank, size, job, addr }) = message else {
                    continue;
                };
                registered.push(stream);
                if size != me.size as u64 {
                    break Err(Failure::Size { rank, size, expected: me.size as u64 });
                }
                if job != me.job {
                    break Err(Failure::Job(rank));
                }
                match table.get_mut(usize::try_from(rank).unwrap_or(usize::MAX)) {
                    Some(entry @ None) => *entry = Some(addr),
                    // Rank 0 itself, or a rank already registered.
                    Some(Some(_)) => break Err(Failure::Collision(rank)),
                    // Beyond the size, with the right size: the peer checked its own rank.
                    None => break Err(Failure::Size { rank, size, expected: me.size as u64 }),
                }
            }
            () = tokio::time::sleep_until(deadline) => {
                let missing = missing(table.iter().map(Option::is_some));
                break Err(Failure::Timeout(missing.into_iter().map(|r| r as u64).collect()));
            }
        }
    };
    arriving.abort_all();
    let table: Vec<SocketAddr> = table.into_iter().flatten().collect();
    let message = match outcome {
        Ok(()) => Message::Table(table.clone()),
        Err(failure) => Message::Fail(failure),
    };
    // Every rank is told, at once; one that does not read within a second is left to its
    // own deadline.
    let mut telling = JoinSet::new();
    let body = Arc::new(message);
    for mut stream in registered {
        let body = body.clone();
        telling.spawn(async move {
            let told = tokio::time::timeout(
                Duration::from_secs(1),
                write_message(&mut stream, false, &body),
            )
            .await;
            matches!(told, Ok(Ok(())))
        });
    }
    while telling.join_next().await.is_some() {}
    match Arc::try_unwrap(body) {
        Ok(Message::Fail(failure)) => Err(failure.into()),
        _ => Ok(table),
    }
}

/// A rank other than 0: dials rank 0 (again and again while it is not listening yet), binds
/// its own listener, registers, and waits for the table.
async fn register(
    me: &Me,
    rendezvous: SocketAddr,
    deadline: Instant,
    verdict: Instant,
) -> Result<(Vec<SocketAddr>, TcpListener), ClusterError> {
    let rank_zero_missing = || ClusterError::RendezvousTimeout { missing: vec![0] };
    let mut pause = Duration::from_millis(5);
    let mut stream = loop {
        match tokio::time::timeout_at(deadline, TcpStream::connect(rendezvous)).await {
            Err(_) => return Err(rank_zero_missing()),
            Ok(Ok(stream)) => break stream,
            Ok(Err(_)) if Instant::now() + pause < deadline => {
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            Ok(Err(_)) => return Err(rank_zero_missing()),
        }
    };
    let _ = stream.set_nodelay(true);
    let ip: IpAddr = stream.local_addr()?.ip();
    let listener = TcpListener::bind(SocketAddr::new(ip, 0)).await?;
    let register = Message::Register {
        rank: me.rank as u64,
        size: me.size as u64,
        job: me.job.clone(),
        addr: listener.local_addr()?,
    };
    write_message(&mut stream, true, &register).await?;
    match tokio::time::timeout_at(verdict, read_message(&mut stream, false)).await {
        Err(_) => Err(rank_zero_missing()),
        Ok(Err(error)) => Err(error),
        Ok(Ok(Message::Table(table))) if table.len() == me.size => Ok((table, listener)),
        Ok(Ok(Message::Fail(failure))) => Err(failure.into()),
        Ok(Ok(other)) => Err(ClusterError::Rendezvous(format!(
            "rank 0 answered with {other:?}"
        ))),
    }
}

/// Every rank: dials each higher rank and accepts each lower one, running a pipes-net
/// connection over each stream on that rank's node.
async fn link(
    me: &Me,
    table: &[SocketAddr],
    listener: Option<TcpListener>,
    nodes: &[Option<Node>],
    deadline: Instant,
) -> Result<Vec<Option<Connection>>, ClusterError> {
    let connections: Mutex<Vec<Option<Connection>>> = Mutex::new(vec![None; me.size]);
    let node = |rank: usize| nodes[rank].as_ref().expect("a node per other rank");
    let dial = async {
        for (rank, &addr) in table.iter().enumerate().skip(me.rank + 1) {
            let stream = TcpStream::connect(addr).await;
            let mut stream = stream.map_err(|error| ClusterError::Connect {
                rank,
                error: error.into(),
            })?;
            let _ = stream.set_nodelay(true);
            let hello = Message::Peer {
                rank: me.rank as u64,
                size: me.size as u64,
                job: me.job.clone(),
            };
            write_message(&mut stream, true, &hello).await?;
            let connection = node(rank)
                .attach_async(stream, Origin::Dialed)
                .await
                .map_err(|error| ClusterError::Connect { rank, error })?;
            lock(&connections)[rank] = Some(connection);
        }
        Ok::<(), ClusterError>(())
    };
    let accept = async {
        let Some(listener) = listener else {
            return Ok(());
        };
        let mut waiting = me.rank;
        while waiting > 0 {
            let (mut stream, _) = listener.accept().await?;
            let _ = stream.set_nodelay(true);
            // A stream that does not say it is a lower rank of this job is dropped.
            let Ok(Message::Peer { rank, size, job }) = read_message(&mut stream, true).await
            else {
                continue;
            };
            let Ok(rank) = usize::try_from(rank) else {
                continue;
            };
            if size != me.size as u64 || job != me.job || rank >= me.rank {
                continue;
            }
            if lock(&connections)[rank].is_some() {
                return Err(ClusterError::RankCollision { rank });
            }
            let connection = node(rank)
                .attach_async(stream, Origin::Accepted)
                .await
                .map_err(|error| ClusterError::Connect { rank, error })?;
            lock(&connections)[rank] = Some(connection);
            waiting -= 1;
        }
        Ok(())
    };
    let both = async { tokio::try_join!(dial, accept) };
    match tokio::time::timeout_at(deadline, both).await {
        Ok(Ok(_)) => Ok(std::mem::take(&mut *lock(&connections))),
        Ok(Err(error)) => Err(error),
        Err(_) => {
            let connections = lock(&connections);
            let present = connections
                .iter()
                .enumerate()
                .map(|(rank, c)| rank == me.rank || c.is_some());
            Err(ClusterError::RendezvousTimeout {
                missing: missing(present),
            })
        }
    }
}

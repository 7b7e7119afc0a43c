//! [`ClusterError`]: why a cluster could not start or finish.

use std::fmt;
use std::io;
use std::net::SocketAddr;
use std::sync::Arc;

use super::{ADDR_VAR, Launcher};
use crate::error::ConnectError;

/// Starting a cluster failed. Rank 0 sends the rendezvous's failures to every rank registered
/// so far, so they all fail with the same error.
#[derive(Clone, Debug)]
pub enum ClusterError {
    /// No launcher's variables are set: the process was not started by `mpirun`, `mpiexec`
    /// or `srun` (set `PIPES_CLUSTER_RANK` and `PIPES_CLUSTER_SIZE`, or use
    /// [`Cluster::builder`](super::Cluster::builder)).
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

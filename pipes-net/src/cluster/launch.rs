//! Where a process's rank and size come from: the launcher's variables ([`Launch`]), and the
//! rendezvous address and deadline (`PIPES_CLUSTER_ADDR`, `PIPES_CLUSTER_TIMEOUT`), read from
//! any map so tests need no process environment.

use std::fmt;
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use super::ClusterError;

/// The rendezvous address's variable: `host:port` of rank 0, the same on every rank.
pub const ADDR_VAR: &str = "PIPES_CLUSTER_ADDR";
/// The rendezvous deadline's variable, in seconds.
pub const TIMEOUT_VAR: &str = "PIPES_CLUSTER_TIMEOUT";
/// Rank 0's port when `PIPES_CLUSTER_ADDR` is not set (on 127.0.0.1).
pub const DEFAULT_PORT: u16 = 7710;
/// How long the rendezvous may take when neither `PIPES_CLUSTER_TIMEOUT` nor
/// [`ClusterBuilder::timeout`](super::ClusterBuilder::timeout) says.
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

pub(crate) fn check_rank(rank: usize, size: usize) -> Result<(), ClusterError> {
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

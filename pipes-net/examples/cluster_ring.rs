//! A token around a ring of every rank of a cluster: rank 0 starts it, each rank appends its
//! rank and hands it to the next over a session, and rank 0 checks that every lap visited
//! every rank in order. Rank and size come from the launcher (`Cluster::from_env`).
//!
//! ```sh
//! cargo build -p pipes-net --example cluster_ring
//! mpirun -n 4 target/debug/examples/cluster_ring            # Open MPI
//! # as root: OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1, and --oversubscribe
//! # on fewer cores than ranks
//! # without a launcher, by hand, one shell per rank:
//! PIPES_CLUSTER_RANK=0 PIPES_CLUSTER_SIZE=2 target/debug/examples/cluster_ring
//! PIPES_CLUSTER_RANK=1 PIPES_CLUSTER_SIZE=2 target/debug/examples/cluster_ring
//! ```
//!
//! The argument is the number of laps (default 100). Rank 0 prints the checked result; every
//! rank exits 0 only if its part went right.

use std::error::Error;
use std::time::Instant;

use pipes_net::{Cluster, Protocol, Role, SessionError};

/// Written from the sender's side: in state 0 it sends `Token(Vec<u32>)` (message 0), the
/// ranks visited so far, and stays in state 0; the sender ends the session after the last lap.
const RING: Protocol = Protocol::unbounded("ring", b"ring: 0 send Token(Vec<u32>) -> 0");

fn main() {
    if let Err(error) = run() {
        eprintln!("cluster_ring: {error}");
        std::process::exit(1);
    }
}

fn run() -> Result<(), Box<dyn Error>> {
    let laps: u32 = match std::env::args().nth(1) {
        Some(laps) => laps.parse()?,
        None => 100,
    };
    let cluster = Cluster::from_env()?;
    let (rank, size) = (cluster.rank(), cluster.size());
    if size == 1 {
        println!("ring of 1 rank: nothing to send");
        return Ok(());
    }
    let (left, right) = ((rank + size - 1) % size, (rank + 1) % size);
    let mut from_left = cluster.serve(left, RING, Role::Server);
    let to_right = cluster.open(right, RING, Role::Client)?;
    let mut from_left = from_left.accept().ok_or("the cluster shut down")?;
    let whole: Vec<u32> = (0..size as u32).collect();
    let started = Instant::now();
    for lap in 0..laps {
        if rank == 0 {
            to_right.send(0, 0, &vec![0u32])?;
            let token: Vec<u32> = from_left.recv()?.decode()?;
            if token != whole {
                return Err(format!("lap {lap}: the token visited {token:?}").into());
            }
        } else {
            let mut token: Vec<u32> = from_left.recv()?.decode()?;
            if token.last() != Some(&(left as u32)) {
                return Err(format!("lap {lap}: a token from rank {token:?}").into());
            }
            token.push(rank as u32);
            to_right.send(0, 0, &token)?;
        }
    }
    let elapsed = started.elapsed();
    // The ring ends as it ran: each rank closes its session to the right, and waits for the
    // one from the left to end, so no rank leaves while a token is still on its way.
    to_right.close();
    match from_left.recv() {
        Err(SessionError::PeerClosed) => {}
        Err(error) => return Err(error.into()),
        Ok(message) => return Err(format!("a token after the last lap: {message:?}").into()),
    }
    // Every rank has all it expects: leave together, so no rank's last frames are lost.
    cluster.finish()?;
    if rank == 0 {
        let hops = u64::from(laps) * size as u64;
        println!(
            "ring of {size} ranks: {laps} laps checked, {:.1} us per hop",
            elapsed.as_secs_f64() * 1e6 / hops.max(1) as f64
        );
    }
    Ok(())
}

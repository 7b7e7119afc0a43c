//! The rendezvous: every rank registers with rank 0, rank 0 sends the table of addresses (or
//! the failure, to everyone: those registered, then those that register later, until the
//! deadline), then the lower rank of each pair dials the higher one. Its own
//! small protocol on plain TCP: a magic, then `u32`-length postcard messages, read exactly so a
//! stream can go on as a pipes-net connection.

use std::io;
use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio::time::Instant;

use super::ClusterError;
use crate::connection::{Origin, lock};
use crate::node::{Connection, Node};

/// How long past its own deadline a registered rank waits for rank 0's verdict, at most.
pub(super) const VERDICT_GRACE: Duration = Duration::from_secs(5);

/// Who this process is, as the rendezvous says it.
pub(super) struct Me {
    pub(super) rank: usize,
    pub(super) size: usize,
    pub(super) job: Option<String>,
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
#[derive(Clone, Debug, Serialize, Deserialize)]
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
    // Through the depth limit as every decode is, though a `Message` nests only a few levels:
    // one rule for all of pipes-net. Bytes after the message are ignored, as before.
    crate::depth::take(&body)
        .map(|(message, _)| message)
        .map_err(|error| ClusterError::Rendezvous(format!("a malformed message: {error}")))
}

/// A hold on the runtime of a blocking [`join`](super::ClusterBuilder::join) by what rank 0
/// leaves running when the join returns (its answers to late ranks after a failure): that
/// runtime's thread runs until the hold is dropped. A channel's sender on which nothing is
/// sent; the thread waits for its receiver to end.
pub(super) struct Lingering {
    _hold: mpsc::Sender<()>,
}

impl Lingering {
    /// A hold, and what ends once it is dropped.
    pub(super) fn new() -> (Self, mpsc::Receiver<()>) {
        let (hold, held) = mpsc::channel(1);
        (Lingering { _hold: hold }, held)
    }
}

/// A registration as it arrives: the stream, and what it said.
type Arriving = JoinSet<(TcpStream, Result<Message, ClusterError>)>;

/// Reads the registration on `stream` in a task of `arriving`, so a slow or stray peer holds
/// up no one.
fn arrive(arriving: &mut Arriving, accepted: io::Result<(TcpStream, SocketAddr)>) {
    if let Ok((mut stream, _)) = accepted {
        let _ = stream.set_nodelay(true);
        arriving.spawn(async move {
            let message = read_message(&mut stream, true).await;
            (stream, message)
        });
    }
}

/// Sends `message` on `stream`, giving up after a second: a rank that does not read is left to
/// its own deadline.
async fn tell(mut stream: TcpStream, message: Arc<Message>) {
    let _ = tokio::time::timeout(
        Duration::from_secs(1),
        write_message(&mut stream, false, &message),
    )
    .await;
}

/// Rank 0, after a failure found before the deadline: answers every rank that registers until
/// then (a rank the launcher started late, or one whose registration was still being read)
/// with the same failure, instead of leaving it to time out blaming rank 0. A task of its own,
/// so rank 0's join fails at once; `_lingering` keeps a blocking join's runtime running.
async fn tell_late(
    listener: TcpListener,
    mut arriving: Arriving,
    failure: Arc<Message>,
    deadline: Instant,
    _lingering: Lingering,
) {
    let mut telling = JoinSet::new();
    loop {
        tokio::select! {
            accepted = listener.accept() => arrive(&mut arriving, accepted),
            Some(Ok((stream, message))) = arriving.join_next() => {
                if let Ok(Message::Register { .. }) = message {
                    telling.spawn(tell(stream, failure.clone()));
                }
            }
            Some(_) = telling.join_next() => {}
            () = tokio::time::sleep_until(deadline) => break,
        }
    }
    // Whatever is left (a registration still being read, an answer still being written) is
    // dropped with its set: those ranks fail on their own deadlines.
}

fn missing(present: impl Iterator<Item = bool>) -> Vec<usize> {
    present
        .enumerate()
        .filter(|&(_, present)| !present)
        .map(|(rank, _)| rank)
        .collect()
}

/// Rank 0: accepts a registration from every other rank, then sends each the table; or, on a
/// failure, sends it to every rank registered so far, and leaves a task ([`tell_late`], held
/// by `lingering`) sending it to those that register until the deadline.
pub(super) async fn gather(
    me: &Me,
    addr: SocketAddr,
    deadline: Instant,
    lingering: Lingering,
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
    let mut arriving = Arriving::new();
    let outcome = loop {
        if table.iter().all(Option::is_some) {
            break Ok(());
        }
        tokio::select! {
            accepted = listener.accept() => arrive(&mut arriving, accepted),
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
    let table: Vec<SocketAddr> = table.into_iter().flatten().collect();
    let (result, message) = match outcome {
        Ok(()) => (Ok(table.clone()), Message::Table(table)),
        Err(failure) => (Err(failure.clone().into()), Message::Fail(failure)),
    };
    let message = Arc::new(message);
    match &result {
        // Failed before the deadline: a rank may still register, and is told too. The
        // listener stays bound until the deadline meanwhile.
        Err(_) if Instant::now() < deadline => {
            tokio::spawn(tell_late(
                listener,
                arriving,
                message.clone(),
                deadline,
                lingering,
            ));
        }
        _ => drop((listener, arriving, lingering)),
    }
    // Every rank registered is told, at once; one that does not read within a second is left
    // to its own deadline.
    let mut telling = JoinSet::new();
    for stream in registered {
        telling.spawn(tell(stream, message.clone()));
    }
    while telling.join_next().await.is_some() {}
    result
}

/// A rank other than 0: dials rank 0 (again and again while it is not listening yet), binds
/// its own listener, registers, and waits for the table.
pub(super) async fn register(
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
pub(super) async fn link(
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
        // Each stream's hello is read in a task of its own, as `gather` reads registrations:
        // a stream that connects and stays silent (a port scanner) holds up no lower rank.
        let mut hellos = JoinSet::new();
        while waiting > 0 {
            let (stream, hello) = tokio::select! {
                accepted = listener.accept() => {
                    let (mut stream, _) = accepted?;
                    let _ = stream.set_nodelay(true);
                    hellos.spawn(async move {
                        let hello =
                            tokio::time::timeout_at(deadline, read_message(&mut stream, true))
                                .await;
                        (stream, hello)
                    });
                    continue;
                }
                Some(Ok(said)) = hellos.join_next() => said,
            };
            // A stream that does not say it is a lower rank of this job is dropped.
            let Ok(Ok(Message::Peer { rank, size, job })) = hello else {
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

//! Remote msgsend (benches/msgsend.rs across loopback TCP): `workers` senders each send
//! `size / workers` requests to one server, which sums them; the total is checked. This
//! measures throughput: how many messages a second one process can push to another.
//!
//! pipes-net gives each worker a session, all on the one connection between the two nodes
//! (with credit flow control, as the protocol is unbounded). The floor is the program written
//! by hand with plain tokio TCP, tokio-util's length-delimited codec and postcard
//! (`benches/common/remote.rs`): a connection per worker, each worker encoding into its own
//! buffer and writing it out 8 KiB at a time (and, for scale, the naive form that writes each
//! message out at once, as `Framed::send` does). Each side runs on a current-thread runtime of its
//! own, as two processes would; pipes-net also runs blocking (each node's driver on its own
//! thread, a thread per worker and per session). Both sides live in this process, so CPU is
//! both ends'. The local pipes port set is there for scale.
//!
//! Run: `cargo bench --features net --bench remote_msgsend [-- SIZE WORKERS [REPEATS]]`
//! (defaults 1000000 4 3). The table shows the median of `REPEATS` runs, interleaved.
//!
//! The typed rows run a `#[wire]` protocol: each worker holds the endpoint `init()` would give
//! and sends on it without waiting (the session is two lanes), and a generated pump on each
//! node moves the messages to and from a `RawSession` like the raw rows'.

mod common;
#[path = "common/remote.rs"]
mod remote;

use common::{cpu_time, median, numeric_args, result_line};
use remote::{MSGSEND, Wire, localhost, runtime};

use std::thread;
use std::time::Instant;

use pipes::PortSet;
use pipes::net::{Node, Role, SessionError};

pipes::proto! {
    /// `MSGSEND`, typed: requests until the worker is done.
    #[wire]
    msgsend_wire {
        Open: send { Request(u64) -> Open, Done -> ! }
    }
}

/// How many typed sends an async worker makes before it yields: a typed send never waits, so
/// without a yield the pumps on the worker's runtime would start only once it is done.
const YIELD_EVERY: u64 = 1024;

/// What each request adds.
const REQUEST: u64 = 100;

/// The floor's workers write their buffer out once it holds this much.
const FLUSH_AT: usize = 8192;

/// One implementation: runs the benchmark and returns the server's total.
struct Implementation {
    name: &'static str,
    run: fn(size: u64, workers: u64) -> u64,
}

/// For scale: benches/msgsend.rs's port set, in one process.
fn pipes_port_set(size: u64, workers: u64) -> u64 {
    let set = PortSet::new();
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let chan = set.chan();
            thread::spawn(move || {
                for _ in 0..size / workers {
                    chan.send(REQUEST).unwrap();
                }
            })
        })
        .collect();
    let total = set.iter().sum();
    for thread in threads {
        thread.join().unwrap();
    }
    total
}

/// The floor: a connection per worker, by hand, writing 8 KiB at a time.
fn floor(size: u64, workers: u64) -> u64 {
    floor_with(size, workers, FLUSH_AT)
}

/// The floor, each worker writing its buffer out once it holds `flush_at` bytes.
fn floor_with(size: u64, workers: u64, flush_at: usize) -> u64 {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let server = thread::spawn(move || {
        runtime().block_on(async move {
            let listener = tokio::net::TcpListener::bind(localhost()).await.unwrap();
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            let mut sums = tokio::task::JoinSet::new();
            for _ in 0..workers {
                let mut wire = Wire::new(listener.accept().await.unwrap().0);
                sums.spawn(async move {
                    let mut sum = 0;
                    while let Some(n) = wire.recv::<u64>().await.unwrap() {
                        sum += n;
                    }
                    sum
                });
            }
            sums.join_all().await.into_iter().sum::<u64>()
        })
    });
    let addr = addr_rx.recv().unwrap();
    runtime().block_on(async move {
        let mut senders = tokio::task::JoinSet::new();
        for _ in 0..workers {
            senders.spawn(async move {
                let mut wire = Wire::new(tokio::net::TcpStream::connect(addr).await.unwrap());
                for _ in 0..size / workers {
                    wire.feed(&REQUEST).unwrap();
                    if wire.buffered() >= flush_at {
                        wire.flush().await.unwrap();
                    }
                }
                wire.flush().await.unwrap();
                wire.shutdown().await.unwrap();
            });
        }
        senders.join_all().await;
    });
    server.join().unwrap()
}

/// The floor's naive form: one write (one syscall) per message, as `Framed::send` would do
/// it, flushing each.
fn floor_unbatched(size: u64, workers: u64) -> u64 {
    floor_with(size, workers, 0)
}

/// Sums one session's requests until the worker closes it.
async fn sum_session(mut session: pipes::net::RawSession) -> u64 {
    let mut sum = 0;
    loop {
        match session.recv_async().await {
            Ok(message) => sum += message.decode::<u64>().unwrap(),
            Err(SessionError::PeerClosed) => return sum,
            Err(error) => panic!("{error}"),
        }
    }
}

/// pipes-net, each side's node on that side's current-thread runtime: a session per worker,
/// one connection.
fn net_async(size: u64, workers: u64) -> u64 {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let server = thread::spawn(move || {
        runtime().block_on(async move {
            let node = Node::builder()
                .listen(localhost())
                .start_async()
                .await
                .unwrap();
            let mut acceptor = node.serve(MSGSEND, Role::Server);
            addr_tx.send(node.local_addr().unwrap()).unwrap();
            let mut sums = tokio::task::JoinSet::new();
            for _ in 0..workers {
                sums.spawn(sum_session(acceptor.accept_async().await.unwrap()));
            }
            let total = sums.join_all().await.into_iter().sum::<u64>();
            let _ = done_tx.send(());
            total
        })
    });
    let addr = addr_rx.recv().unwrap();
    runtime().block_on(async move {
        let node = Node::builder().start_async().await.unwrap();
        let connection = node.connect_async(addr).await.unwrap();
        let mut senders = tokio::task::JoinSet::new();
        for _ in 0..workers {
            let connection = connection.clone();
            senders.spawn(async move {
                let session = connection.open_async(MSGSEND, Role::Client).await.unwrap();
                for _ in 0..size / workers {
                    session.send_async(0, 0, &REQUEST).await.unwrap();
                }
                session.close();
            });
        }
        senders.join_all().await;
        // This node's writer must send the closes before it goes.
        let _ = done_rx.await;
        drop(node);
    });
    server.join().unwrap()
}

/// pipes-net, blocking: node drivers on their own threads, a thread per worker and per
/// session.
fn net_blocking(size: u64, workers: u64) -> u64 {
    let server = Node::builder().listen(localhost()).start().unwrap();
    let mut acceptor = server.serve(MSGSEND, Role::Server);
    let addr = server.local_addr().unwrap();
    let summing = thread::spawn(move || {
        let sums: Vec<_> = (0..workers)
            .map(|_| {
                let session = acceptor.accept().unwrap();
                thread::spawn(move || pipes_net_block_on_sum(session))
            })
            .collect();
        sums.into_iter().map(|s| s.join().unwrap()).sum::<u64>()
    });
    let client = Node::builder().start().unwrap();
    let connection = client.connect(addr).unwrap();
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let connection = connection.clone();
            thread::spawn(move || {
                let session = connection.open(MSGSEND, Role::Client).unwrap();
                for _ in 0..size / workers {
                    session.send(0, 0, &REQUEST).unwrap();
                }
                session.close();
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let total = summing.join().unwrap();
    drop(client);
    total
}

fn pipes_net_block_on_sum(mut session: pipes::net::RawSession) -> u64 {
    let mut sum = 0;
    loop {
        match session.recv() {
            Ok(message) => sum += message.decode::<u64>().unwrap(),
            Err(SessionError::PeerClosed) => return sum,
            Err(error) => panic!("{error}"),
        }
    }
}

/// Sums one typed session's requests until the worker is done.
fn sum_typed(mut server: msgsend_wire::server::Open) -> u64 {
    let mut sum = 0;
    loop {
        match server.recv().unwrap() {
            msgsend_wire::Open::Request(n, next) => {
                sum += n;
                server = next;
            }
            msgsend_wire::Open::Done => return sum,
        }
    }
}

/// The typed pump, each side's node (and its pumps) on that side's current-thread runtime: a
/// session per worker, one connection.
fn typed_async(size: u64, workers: u64) -> u64 {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let (done_tx, done_rx) = tokio::sync::oneshot::channel::<()>();
    let server = thread::spawn(move || {
        runtime().block_on(async move {
            let node = Node::builder()
                .listen(localhost())
                .start_async()
                .await
                .unwrap();
            let mut incoming = node.incoming::<msgsend_wire::Wire>();
            addr_tx.send(node.local_addr().unwrap()).unwrap();
            let mut sums = tokio::task::JoinSet::new();
            for _ in 0..workers {
                let mut server = incoming.accept_async().await.unwrap();
                sums.spawn(async move {
                    let mut sum = 0;
                    loop {
                        match server.await.unwrap() {
                            msgsend_wire::Open::Request(n, next) => {
                                sum += n;
                                server = next;
                            }
                            msgsend_wire::Open::Done => return sum,
                        }
                    }
                });
            }
            let total = sums.join_all().await.into_iter().sum::<u64>();
            let _ = done_tx.send(());
            total
        })
    });
    let addr = addr_rx.recv().unwrap();
    runtime().block_on(async move {
        let node = Node::builder().start_async().await.unwrap();
        let connection = node.connect_async(addr).await.unwrap();
        let mut senders = tokio::task::JoinSet::new();
        for _ in 0..workers {
            let connection = connection.clone();
            senders.spawn(async move {
                let mut client = connection
                    .client_async::<msgsend_wire::Wire>()
                    .await
                    .unwrap();
                for i in 0..size / workers {
                    client = client.request(REQUEST).unwrap();
                    if i % YIELD_EVERY == YIELD_EVERY - 1 {
                        tokio::task::yield_now().await;
                    }
                }
                client.done().unwrap();
            });
        }
        senders.join_all().await;
        // This node's pumps and writer must send everything before it goes.
        let _ = done_rx.await;
        drop(node);
    });
    server.join().unwrap()
}

/// The typed pump, blocking: node drivers (and their pumps) on their own threads, a thread per
/// worker and per session.
fn typed_blocking(size: u64, workers: u64) -> u64 {
    let server = Node::builder().listen(localhost()).start().unwrap();
    let mut incoming = server.incoming::<msgsend_wire::Wire>();
    let summing = thread::spawn(move || {
        let sums: Vec<_> = (0..workers)
            .map(|_| {
                let session = incoming.accept().unwrap();
                thread::spawn(move || sum_typed(session))
            })
            .collect();
        sums.into_iter().map(|s| s.join().unwrap()).sum::<u64>()
    });
    let client = Node::builder().start().unwrap();
    let connection = client.connect(server.local_addr().unwrap()).unwrap();
    let threads: Vec<_> = (0..workers)
        .map(|_| {
            let connection = connection.clone();
            thread::spawn(move || {
                let mut client = connection.client::<msgsend_wire::Wire>().unwrap();
                for _ in 0..size / workers {
                    client = client.request(REQUEST).unwrap();
                }
                client.done().unwrap();
            })
        })
        .collect();
    for thread in threads {
        thread.join().unwrap();
    }
    let total = summing.join().unwrap();
    drop(client);
    total
}

const FLOOR: &str = "hand-written tokio TCP + codec + postcard (floor)";

const IMPLEMENTATIONS: &[Implementation] = &[
    Implementation {
        name: FLOOR,
        run: floor,
    },
    Implementation {
        name: "hand-written, one write per message",
        run: floor_unbatched,
    },
    Implementation {
        name: "pipes-net RawSession, async (runtime per side)",
        run: net_async,
    },
    Implementation {
        name: "pipes-net RawSession, blocking (node threads)",
        run: net_blocking,
    },
    Implementation {
        name: "pipes-net typed pump (#[wire]), async",
        run: typed_async,
    },
    Implementation {
        name: "pipes-net typed pump (#[wire]), blocking",
        run: typed_blocking,
    },
    Implementation {
        name: "pipes port_set (local, for scale)",
        run: pipes_port_set,
    },
];

fn main() {
    let numbers = numeric_args();
    let workers = numbers.get(1).copied().unwrap_or(4).max(1);
    let size = (numbers.first().copied().unwrap_or(1_000_000) / workers).max(1) * workers;
    let repeats = numbers.get(2).copied().unwrap_or(3).max(1) as usize;
    // A word among the arguments keeps only the rows whose name holds it (and the floor), to
    // profile one of them: `cargo bench --bench remote_msgsend -- 1000000 4 3 RawSession`.
    let only = std::env::args()
        .skip(1)
        .find(|arg| !arg.starts_with('-') && arg.parse::<u64>().is_err());
    let implementations: Vec<&Implementation> = IMPLEMENTATIONS
        .iter()
        .filter(|i| i.name == FLOOR || only.as_ref().is_none_or(|word| i.name.contains(word)))
        .collect();

    // Warm up.
    for implementation in &implementations {
        (implementation.run)(size.min(10_000 * workers), workers);
    }
    let mut samples = vec![(Vec::new(), Vec::new()); implementations.len()];
    for _ in 0..repeats {
        for (i, implementation) in implementations.iter().enumerate() {
            let (cpu, start) = (cpu_time(), Instant::now());
            let total = (implementation.run)(size, workers);
            let (wall, cpu) = (start.elapsed(), cpu_time() - cpu);
            assert_eq!(total, size * REQUEST, "{}", implementation.name);
            samples[i].0.push(wall.as_secs_f64());
            samples[i].1.push(cpu.as_secs_f64());
        }
    }
    let rows: Vec<(&str, f64, f64)> = implementations
        .iter()
        .zip(samples)
        .map(|(implementation, (walls, cpus))| (implementation.name, median(walls), median(cpus)))
        .collect();
    let floor = rows.iter().find(|row| row.0 == FLOOR).map_or(1.0, |r| r.1);

    println!(
        "remote msgsend over loopback TCP: {size} messages from {workers} workers, median of \
         {repeats}; CPU of both ends; 'x floor' is this wall time over the hand-written \
         floor's (below 1 is faster)"
    );
    println!(
        "| {:<50} | {:>8} | {:>12} | {:>11} | {:>7} |",
        "implementation", "wall s", "msg/s", "cpu ns/msg", "x floor"
    );
    println!(
        "|{:-<52}|{:->10}|{:->14}|{:->13}|{:->9}|",
        "", "", "", "", ""
    );
    for &(name, wall, cpu) in &rows {
        println!(
            "| {name:<50} | {wall:>8.4} | {:>12.0} | {:>11.0} | {:>6.2}x |",
            size as f64 / wall,
            cpu * 1e9 / size as f64,
            wall / floor
        );
    }
    println!();
    for (name, wall, cpu) in rows {
        let line = result_line(&[
            ("bench", &"remote_msgsend"),
            ("size", &size),
            ("workers", &workers),
            ("impl", &name),
            ("wall_s", &wall),
            ("cpu_s", &cpu),
            ("per_s", &(size as f64 / wall)),
            ("cpu_ns_per_msg", &(cpu * 1e9 / size as f64)),
            ("x_floor", &(wall / floor)),
        ]);
        println!("{line}");
    }
}

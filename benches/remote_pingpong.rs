//! Remote pingpong: a client and a server bounce a counter over loopback TCP, so each round
//! trip is two messages through the kernel's TCP stack and two wake-ups of a waiting side. This
//! measures what pipes-net adds to a loopback round trip: its frames, its connection's reader
//! and writer tasks, and (in the blocking form) the hop between the user's thread and the
//! node's.
//!
//! The floor is the same program written by hand with plain tokio TCP, tokio-util's
//! length-delimited codec and postcard (`benches/common/remote.rs`), each side on a
//! current-thread runtime of its own, as two processes would be; pipes-net runs the same way
//! (its nodes on each side's runtime), and in its blocking form (each node's driver on its own
//! thread, the user's threads blocking). Both sides live in this process, so CPU is both ends'.
//! The local pipes stream pair is there for scale.
//!
//! Run: `cargo bench --features net --bench remote_pingpong [-- ROUND_TRIPS [REPEATS]]`
//! (defaults 100000 and 3). Every implementation runs in the same process, interleaved,
//! `REPEATS` times; the table shows the median. A measurement stops after two seconds.
//!
//! The typed rows run a `#[wire]` protocol: the user holds the endpoints `init()` would give,
//! and a generated pump on each node bridges them to a `RawSession` like the raw rows' (issue
//! 15's target: the bridge costs under 5% of a loopback round trip).

mod common;
#[path = "common/remote.rs"]
mod remote;

use common::{cpu_time, median, numeric_args, out_of_time, result_line};
use remote::{PINGPONG, Wire, localhost, runtime};

use std::thread;
use std::time::{Duration, Instant};

use pipes::net::{Node, Role};
use pipes::stream;

pipes::proto! {
    /// `PINGPONG`, typed: each side's pump moves its messages to and from a `RawSession`.
    #[wire]
    pingpong_wire {
        ping: send { ping(u64) -> pong }
        pong: recv { pong(u64) -> ping }
    }
}

/// How long one measurement of one implementation may take.
const TIME_LIMIT: Duration = Duration::from_secs(2);

/// One implementation: runs up to `n` round trips, stopping early once `limit` passes, and
/// returns how many it did.
struct Implementation {
    name: &'static str,
    run: fn(n: u64, limit: Instant) -> u64,
}

/// For scale: the local stream pair of benches/pingpong.rs.
fn pipes_streams(n: u64, limit: Instant) -> u64 {
    let (ping_port, ping_chan) = stream::<u64>();
    let (pong_port, pong_chan) = stream::<u64>();
    let echo = thread::spawn(move || {
        for x in ping_port.iter() {
            pong_chan.send(x + 1).unwrap();
        }
    });
    let mut done = 0;
    while done < n && !out_of_time(done, limit) {
        ping_chan.send(done).unwrap();
        assert_eq!(pong_port.recv().unwrap(), done + 1);
        done += 1;
    }
    drop(ping_chan);
    echo.join().unwrap();
    done
}

/// The floor: tokio TCP, the length-delimited codec and postcard, by hand.
fn floor(n: u64, limit: Instant) -> u64 {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let server = thread::spawn(move || {
        runtime().block_on(async move {
            let listener = tokio::net::TcpListener::bind(localhost()).await.unwrap();
            addr_tx.send(listener.local_addr().unwrap()).unwrap();
            let mut wire = Wire::new(listener.accept().await.unwrap().0);
            while let Some(x) = wire.recv::<u64>().await.unwrap() {
                wire.send(&(x + 1)).await.unwrap();
            }
        })
    });
    let addr = addr_rx.recv().unwrap();
    let done = runtime().block_on(async move {
        let mut wire = Wire::new(tokio::net::TcpStream::connect(addr).await.unwrap());
        let mut done = 0;
        while done < n && !out_of_time(done, limit) {
            wire.send(&done).await.unwrap();
            assert_eq!(wire.recv::<u64>().await.unwrap(), Some(done + 1));
            done += 1;
        }
        wire.shutdown().await.unwrap();
        done
    });
    server.join().unwrap();
    done
}

/// pipes-net, each side's node on that side's current-thread runtime, the async API.
fn net_async(n: u64, limit: Instant) -> u64 {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let server = thread::spawn(move || {
        runtime().block_on(async move {
            let node = Node::builder()
                .listen(localhost())
                .start_async()
                .await
                .unwrap();
            let mut acceptor = node.serve(PINGPONG, Role::Server);
            addr_tx.send(node.local_addr().unwrap()).unwrap();
            let mut session = acceptor.accept_async().await.unwrap();
            while let Ok(message) = session.recv_async().await {
                let x: u64 = message.decode().unwrap();
                session.send_async(1, 0, &(x + 1)).await.unwrap();
            }
        })
    });
    let addr = addr_rx.recv().unwrap();
    let done = runtime().block_on(async move {
        let node = Node::builder().start_async().await.unwrap();
        let mut session = node.open_async(addr, PINGPONG, Role::Client).await.unwrap();
        let mut done = 0;
        while done < n && !out_of_time(done, limit) {
            session.send_async(0, 0, &done).await.unwrap();
            let x: u64 = session.recv_async().await.unwrap().decode().unwrap();
            assert_eq!(x, done + 1);
            done += 1;
        }
        session.close();
        // The server ends on the close, or on the connection lost when this node goes.
        done
    });
    server.join().unwrap();
    done
}

/// pipes-net, blocking: each node's driver on a thread of its own, the users' threads block.
fn net_blocking(n: u64, limit: Instant) -> u64 {
    let server = Node::builder().listen(localhost()).start().unwrap();
    let mut acceptor = server.serve(PINGPONG, Role::Server);
    let addr = server.local_addr().unwrap();
    let echo = thread::spawn(move || {
        let mut session = acceptor.accept().unwrap();
        while let Ok(message) = session.recv() {
            let x: u64 = message.decode().unwrap();
            session.send(1, 0, &(x + 1)).unwrap();
        }
    });
    let client = Node::builder().start().unwrap();
    let mut session = client.open(addr, PINGPONG, Role::Client).unwrap();
    let mut done = 0;
    while done < n && !out_of_time(done, limit) {
        session.send(0, 0, &done).unwrap();
        let x: u64 = session.recv().unwrap().decode().unwrap();
        assert_eq!(x, done + 1);
        done += 1;
    }
    session.close();
    echo.join().unwrap();
    done
}

/// The typed pump, each side's node (and so its pump) on that side's current-thread runtime.
fn typed_async(n: u64, limit: Instant) -> u64 {
    let (addr_tx, addr_rx) = std::sync::mpsc::channel();
    let server = thread::spawn(move || {
        runtime().block_on(async move {
            let node = Node::builder()
                .listen(localhost())
                .start_async()
                .await
                .unwrap();
            let mut incoming = node.incoming::<pingpong_wire::Wire>();
            addr_tx.send(node.local_addr().unwrap()).unwrap();
            let mut server = incoming.accept_async().await.unwrap();
            while let Ok(pingpong_wire::ping::ping(x, reply)) = server.await {
                match reply.pong(x + 1) {
                    Ok(next) => server = next,
                    Err(_) => break,
                }
            }
        })
    });
    let addr = addr_rx.recv().unwrap();
    let done = runtime().block_on(async move {
        let node = Node::builder().start_async().await.unwrap();
        let mut client = node
            .client_async::<pingpong_wire::Wire>(addr)
            .await
            .unwrap();
        let mut done = 0;
        while done < n && !out_of_time(done, limit) {
            let pingpong_wire::pong::pong(x, next) = client.ping(done).unwrap().await.unwrap();
            assert_eq!(x, done + 1);
            client = next;
            done += 1;
        }
        // The server's receive fails on the close, or on the connection lost when this node goes.
        drop(client);
        done
    });
    server.join().unwrap();
    done
}

/// The typed pump, blocking: each node's driver (and its pumps) on a thread of its own.
fn typed_blocking(n: u64, limit: Instant) -> u64 {
    let server = Node::builder().listen(localhost()).start().unwrap();
    let mut incoming = server.incoming::<pingpong_wire::Wire>();
    let addr = server.local_addr().unwrap();
    let echo = thread::spawn(move || {
        let mut server = incoming.accept().unwrap();
        while let Ok(pingpong_wire::ping::ping(x, reply)) = server.recv() {
            match reply.pong(x + 1) {
                Ok(next) => server = next,
                Err(_) => break,
            }
        }
    });
    let client_node = Node::builder().start().unwrap();
    let mut client = client_node.client::<pingpong_wire::Wire>(addr).unwrap();
    let mut done = 0;
    while done < n && !out_of_time(done, limit) {
        let pingpong_wire::pong::pong(x, next) = client.ping(done).unwrap().recv().unwrap();
        assert_eq!(x, done + 1);
        client = next;
        done += 1;
    }
    drop(client);
    echo.join().unwrap();
    done
}

const FLOOR: &str = "hand-written tokio TCP + codec + postcard (floor)";

const IMPLEMENTATIONS: &[Implementation] = &[
    Implementation {
        name: FLOOR,
        run: floor,
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
        name: "pipes stream pair (local, for scale)",
        run: pipes_streams,
    },
];

/// One measurement: round trips done, and nanoseconds per round trip of wall clock and CPU.
#[derive(Clone, Copy)]
struct Sample {
    round_trips: u64,
    wall: f64,
    cpu: f64,
}

fn measure(implementation: &Implementation, n: u64) -> Sample {
    let (cpu, start) = (cpu_time(), Instant::now());
    let round_trips = (implementation.run)(n, start + TIME_LIMIT).max(1);
    let (wall, cpu) = (start.elapsed(), cpu_time() - cpu);
    Sample {
        round_trips,
        wall: wall.as_nanos() as f64 / round_trips as f64,
        cpu: cpu.as_nanos() as f64 / round_trips as f64,
    }
}

fn main() {
    let numbers = numeric_args();
    let round_trips = numbers.first().copied().unwrap_or(100_000);
    let repeats = numbers.get(1).copied().unwrap_or(3).max(1) as usize;

    // Warm up: the first run of each pays for cold caches and lazy initialisation.
    for implementation in IMPLEMENTATIONS {
        measure(implementation, 2_000);
    }

    let mut samples = vec![Vec::new(); IMPLEMENTATIONS.len()];
    for _ in 0..repeats {
        for (i, implementation) in IMPLEMENTATIONS.iter().enumerate() {
            samples[i].push(measure(implementation, round_trips));
        }
    }

    let rows: Vec<(&str, u64, f64, f64)> = IMPLEMENTATIONS
        .iter()
        .zip(&samples)
        .map(|(implementation, samples)| {
            let median_of = |f: fn(&Sample) -> f64| median(samples.iter().map(f).collect());
            (
                implementation.name,
                median_of(|s| s.round_trips as f64) as u64,
                median_of(|s| s.wall),
                median_of(|s| s.cpu),
            )
        })
        .collect();
    let floor = rows.iter().find(|row| row.0 == FLOOR).map_or(1.0, |r| r.2);

    println!(
        "remote pingpong over loopback TCP, median of {repeats}; ns per round trip (two \
         messages), CPU of both ends; 'x floor' is this wall time over the hand-written floor's \
         (below 1 is faster)"
    );
    println!(
        "| {:<50} | {:>11} | {:>12} | {:>11} | {:>7} |",
        "implementation", "round trips", "wall ns/rt", "cpu ns/rt", "x floor"
    );
    println!(
        "|{:-<52}|{:->13}|{:->14}|{:->13}|{:->9}|",
        "", "", "", "", ""
    );
    for &(name, n, wall, cpu) in &rows {
        println!(
            "| {name:<50} | {n:>11} | {wall:>12.0} | {cpu:>11.0} | {:>6.2}x |",
            wall / floor
        );
    }
    println!();
    for (name, n, wall, cpu) in rows {
        let line = result_line(&[
            ("bench", &"remote_pingpong"),
            ("impl", &name),
            ("round_trips", &n),
            ("wall_ns", &wall),
            ("cpu_ns", &cpu),
            ("x_floor", &(wall / floor)),
        ]);
        println!("{line}");
    }
}

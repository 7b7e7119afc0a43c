//! Clusters: each launcher's variables parsed from a map (no process environment touched), a
//! cluster of 4 ranks on threads over loopback passing a token around a ring, the typed
//! failures of the rendezvous (a rank that never arrives, a rank claimed twice, another size,
//! another job), the async form, and 4 real processes of `examples/cluster_ring` started with
//! Open MPI's variables set by hand (so no `mpirun` is needed).

mod common;

use std::collections::HashMap;
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::quick;
use pipes_net::cluster::{DEFAULT_PORT, Launch, Launcher, rendezvous_from_vars, timeout_from_vars};
use pipes_net::{Cluster, ClusterBuilder, ClusterError, Protocol, Role, SessionError};

const RING: Protocol = Protocol::unbounded("ring", b"ring: 0 send Token(Vec<u32>) -> 0");

/// Reads variables from `vars` as the environment would.
fn vars<'a>(vars: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
    let map: HashMap<&str, &str> = vars.iter().copied().collect();
    move |name| map.get(name).map(|value| value.to_string())
}

fn launch(list: &[(&str, &str)]) -> Result<Launch, ClusterError> {
    Launch::from_vars(vars(list))
}

/// Runs `body` on a thread and fails the test if it takes longer than `secs`.
fn watchdog<T: Send + 'static>(secs: u64, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, finished) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        let _ = done.send(body());
    });
    match finished.recv_timeout(Duration::from_secs(secs)) {
        Ok(value) => {
            thread.join().unwrap();
            value
        }
        Err(mpsc::RecvTimeoutError::Disconnected) => {
            thread.join().unwrap();
            unreachable!("the body panicked")
        }
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("timed out: a hang"),
    }
}

/// A free port on loopback for a rendezvous (bound, then released).
fn free_addr() -> SocketAddr {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
}

fn builder(rank: usize, size: usize, rendezvous: SocketAddr) -> ClusterBuilder {
    Cluster::builder()
        .rank(rank)
        .size(size)
        .rendezvous(rendezvous)
        .timeout(Duration::from_secs(20))
        .config(quick())
}

/// Starts one thread per builder, each joining the cluster; their results in rank order.
fn join_all(builders: Vec<ClusterBuilder>) -> Vec<Result<Cluster, ClusterError>> {
    let threads: Vec<_> = builders
        .into_iter()
        .map(|builder| std::thread::spawn(move || builder.join()))
        .collect();
    threads.into_iter().map(|t| t.join().unwrap()).collect()
}

// ---- the launchers' variables ----

#[test]
fn open_mpi_variables_give_rank_size_and_job() {
    let got = launch(&[
        ("OMPI_COMM_WORLD_RANK", "3"),
        ("OMPI_COMM_WORLD_SIZE", "4"),
        ("PMIX_RANK", "3"),
        ("PMIX_NAMESPACE", "1322778625"),
        ("OMPI_MCA_ess_base_jobid", "99"),
    ])
    .unwrap();
    assert_eq!(
        got,
        Launch {
            launcher: Launcher::OpenMpi,
            rank: 3,
            size: 4,
            job: Some("1322778625".into()),
            one_host: None,
        }
    );
    let older = launch(&[
        ("OMPI_COMM_WORLD_RANK", "0"),
        ("OMPI_COMM_WORLD_SIZE", "2"),
        ("OMPI_MCA_ess_base_jobid", "99"),
    ])
    .unwrap();
    assert_eq!(older.job.as_deref(), Some("99"));
}

#[test]
fn hydra_pmi_variables_give_rank_and_size() {
    let got = launch(&[("PMI_RANK", "1"), ("PMI_SIZE", "8"), ("PMI_FD", "5")]).unwrap();
    assert_eq!(
        (got.launcher, got.rank, got.size, got.job),
        (Launcher::Hydra, 1, 8, None)
    );
}

#[test]
fn pmix_takes_its_size_from_pipes_or_slurm_since_it_exports_none() {
    let alone = launch(&[("PMIX_RANK", "2"), ("PMIX_NAMESPACE", "prterun-x-1@1")]);
    assert!(
        matches!(
            alone,
            Err(ClusterError::MissingVar {
                launcher: Launcher::Pmix,
                var: "PIPES_CLUSTER_SIZE"
            })
        ),
        "{alone:?}"
    );
    let given = launch(&[
        ("PMIX_RANK", "2"),
        ("PMIX_NAMESPACE", "prterun-x-1@1"),
        ("PIPES_CLUSTER_SIZE", "3"),
    ])
    .unwrap();
    assert_eq!(
        (given.launcher, given.rank, given.size, given.job.as_deref()),
        (Launcher::Pmix, 2, 3, Some("prterun-x-1@1"))
    );
    let srun = launch(&[
        ("PMIX_RANK", "5"),
        ("SLURM_PROCID", "5"),
        ("SLURM_NTASKS", "6"),
    ])
    .unwrap();
    assert_eq!(
        (srun.launcher, srun.rank, srun.size),
        (Launcher::Pmix, 5, 6)
    );
}

#[test]
fn slurm_variables_give_rank_size_and_job_step() {
    let got = launch(&[
        ("SLURM_PROCID", "7"),
        ("SLURM_NTASKS", "16"),
        ("SLURM_JOB_ID", "4242"),
        ("SLURM_STEP_ID", "0"),
    ])
    .unwrap();
    assert_eq!(
        got,
        Launch {
            launcher: Launcher::Slurm,
            rank: 7,
            size: 16,
            job: Some("4242.0".into()),
            one_host: None,
        }
    );
    let legacy = launch(&[("SLURM_PROCID", "0"), ("SLURM_NPROCS", "2")]).unwrap();
    assert_eq!((legacy.rank, legacy.size), (0, 2));
}

#[test]
fn variables_set_by_hand_win_over_a_launcher() {
    let got = launch(&[
        ("PIPES_CLUSTER_RANK", "1"),
        ("PIPES_CLUSTER_SIZE", "2"),
        ("PIPES_CLUSTER_JOB", "mine"),
        ("SLURM_PROCID", "0"),
        ("SLURM_NTASKS", "1"),
    ])
    .unwrap();
    assert_eq!(
        (got.launcher, got.rank, got.size, got.job.as_deref()),
        (Launcher::Pipes, 1, 2, Some("mine"))
    );
}

#[test]
fn open_mpi_wins_over_slurm_inside_an_allocation() {
    let got = launch(&[
        ("OMPI_COMM_WORLD_RANK", "2"),
        ("OMPI_COMM_WORLD_SIZE", "4"),
        ("SLURM_PROCID", "0"),
        ("SLURM_NTASKS", "1"),
    ])
    .unwrap();
    assert_eq!(
        (got.launcher, got.rank, got.size),
        (Launcher::OpenMpi, 2, 4)
    );
}

#[test]
fn missing_or_invalid_variables_are_typed() {
    assert!(matches!(launch(&[]), Err(ClusterError::NoLauncher)));
    assert!(matches!(
        launch(&[("OMPI_COMM_WORLD_RANK", "0")]),
        Err(ClusterError::MissingVar {
            launcher: Launcher::OpenMpi,
            var: "OMPI_COMM_WORLD_SIZE"
        })
    ));
    let bad = launch(&[("PMI_RANK", "one"), ("PMI_SIZE", "2")]);
    assert!(
        matches!(&bad, Err(ClusterError::InvalidVar { var: "PMI_RANK", value }) if value == "one"),
        "{bad:?}"
    );
    assert!(matches!(
        launch(&[("SLURM_PROCID", "4"), ("SLURM_NTASKS", "4")]),
        Err(ClusterError::InvalidRank { rank: 4, size: 4 })
    ));
    assert!(matches!(
        launch(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "0")]),
        Err(ClusterError::InvalidRank { rank: 0, size: 0 })
    ));
    let message = launch(&[]).unwrap_err().to_string();
    assert!(message.contains("mpirun"), "{message}");
}

#[test]
fn a_job_across_hosts_without_a_rendezvous_address_is_refused_at_once() {
    let one_host = |list: &[(&str, &str)]| launch(list).unwrap().one_host;
    assert_eq!(
        one_host(&[
            ("OMPI_COMM_WORLD_RANK", "0"),
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_LOCAL_SIZE", "4"),
        ]),
        Some(true)
    );
    assert_eq!(
        one_host(&[
            ("PMI_RANK", "0"),
            ("PMI_SIZE", "4"),
            ("MPI_LOCALNRANKS", "2"),
        ]),
        Some(false)
    );
    assert_eq!(
        one_host(&[
            ("SLURM_PROCID", "0"),
            ("SLURM_NTASKS", "4"),
            ("SLURM_NNODES", "2"),
            ("SLURM_STEP_NUM_NODES", "1"),
        ]),
        Some(true)
    );
    assert_eq!(
        one_host(&[("SLURM_PROCID", "0"), ("SLURM_NTASKS", "4")]),
        None
    );
    let across = [
        ("OMPI_COMM_WORLD_RANK", "1"),
        ("OMPI_COMM_WORLD_SIZE", "4"),
        ("OMPI_COMM_WORLD_LOCAL_SIZE", "2"),
    ];
    let error = ClusterBuilder::from_vars(vars(&across)).unwrap_err();
    assert!(
        matches!(
            error,
            ClusterError::NoAddress {
                launcher: Launcher::OpenMpi
            }
        ),
        "{error:?}"
    );
    assert!(error.to_string().contains("PIPES_CLUSTER_ADDR"), "{error}");
    let mut with_addr = across.to_vec();
    with_addr.push(("PIPES_CLUSTER_ADDR", "10.0.0.1:7710"));
    assert!(ClusterBuilder::from_vars(vars(&with_addr)).is_ok());
}

#[test]
fn the_rendezvous_address_and_deadline_come_from_pipes_variables() {
    assert_eq!(
        rendezvous_from_vars(vars(&[])).unwrap(),
        SocketAddr::from(([127, 0, 0, 1], DEFAULT_PORT))
    );
    assert_eq!(
        rendezvous_from_vars(vars(&[("PIPES_CLUSTER_ADDR", "10.1.2.3:9000")])).unwrap(),
        "10.1.2.3:9000".parse().unwrap()
    );
    assert_eq!(
        rendezvous_from_vars(vars(&[("PIPES_CLUSTER_ADDR", "localhost:9001")]))
            .unwrap()
            .port(),
        9001
    );
    assert!(matches!(
        rendezvous_from_vars(vars(&[("PIPES_CLUSTER_ADDR", "no port")])),
        Err(ClusterError::InvalidVar {
            var: "PIPES_CLUSTER_ADDR",
            ..
        })
    ));
    assert_eq!(
        timeout_from_vars(vars(&[])).unwrap(),
        Duration::from_secs(30)
    );
    assert_eq!(
        timeout_from_vars(vars(&[("PIPES_CLUSTER_TIMEOUT", "2.5")])).unwrap(),
        Duration::from_millis(2500)
    );
    for bad in ["0", "-1", "soon", "inf"] {
        assert!(
            timeout_from_vars(vars(&[("PIPES_CLUSTER_TIMEOUT", bad)])).is_err(),
            "{bad}"
        );
    }
    let builder = ClusterBuilder::from_vars(vars(&[
        ("OMPI_COMM_WORLD_RANK", "1"),
        ("OMPI_COMM_WORLD_SIZE", "2"),
        ("PIPES_CLUSTER_ADDR", "127.0.0.1:1"),
    ]));
    assert!(builder.is_ok());
}

// ---- clusters on threads ----

/// Every rank sends a token to the next; rank 0 checks that each lap visited every rank.
fn ring(cluster: &Cluster, laps: u32) {
    let (rank, size) = (cluster.rank(), cluster.size());
    let (left, right) = ((rank + size - 1) % size, (rank + 1) % size);
    let mut from_left = cluster.serve(left, RING, Role::Server);
    let to_right = cluster.open(right, RING, Role::Client).unwrap();
    let mut from_left = from_left.accept().unwrap();
    for _ in 0..laps {
        if rank == 0 {
            to_right.send(0, 0, &vec![0u32]).unwrap();
            let token: Vec<u32> = from_left.recv().unwrap().decode().unwrap();
            assert_eq!(token, (0..size as u32).collect::<Vec<_>>());
        } else {
            let mut token: Vec<u32> = from_left.recv().unwrap().decode().unwrap();
            assert_eq!(token.last(), Some(&(left as u32)));
            token.push(rank as u32);
            to_right.send(0, 0, &token).unwrap();
        }
    }
    to_right.close();
    assert!(matches!(from_left.recv(), Err(SessionError::PeerClosed)));
}

#[test]
fn four_ranks_on_threads_pass_a_token_around_a_ring() {
    watchdog(60, || {
        let rendezvous = free_addr();
        let threads: Vec<_> = (0..4)
            .map(|rank| {
                std::thread::spawn(move || {
                    let cluster = builder(rank, 4, rendezvous).join().unwrap();
                    assert_eq!((cluster.rank(), cluster.size()), (rank, 4));
                    // One connection to each other rank, however many sessions.
                    for peer in (0..4).filter(|&peer| peer != rank) {
                        assert!(cluster.connection(peer).failure().is_none());
                    }
                    ring(&cluster, 50);
                    cluster.finish().unwrap();
                })
            })
            .collect();
        for thread in threads {
            thread.join().unwrap();
        }
    });
}

#[test]
fn a_cluster_of_one_rank_needs_no_peer() {
    watchdog(20, || {
        let cluster = builder(0, 1, free_addr()).join().unwrap();
        assert_eq!((cluster.rank(), cluster.size()), (0, 1));
        cluster.finish().unwrap();
    });
}

#[test]
fn sessions_from_a_rank_reach_only_the_acceptor_served_for_it() {
    watchdog(60, || {
        let rendezvous = free_addr();
        let clusters = join_all((0..3).map(|rank| builder(rank, 3, rendezvous)).collect());
        let clusters: Vec<Cluster> = clusters.into_iter().map(Result::unwrap).collect();
        let mut from_one = clusters[0].serve(1, RING, Role::Server);
        let mut from_two = clusters[0].serve(2, RING, Role::Server);
        let two = clusters[2].open(0, RING, Role::Client).unwrap();
        two.send(0, 0, &vec![2u32]).unwrap();
        let one = clusters[1].open(0, RING, Role::Client).unwrap();
        one.send(0, 0, &vec![1u32]).unwrap();
        let got = |session: &mut pipes_net::RawSession| -> Vec<u32> {
            session.recv().unwrap().decode().unwrap()
        };
        assert_eq!(got(&mut from_one.accept().unwrap()), [1]);
        assert_eq!(got(&mut from_two.accept().unwrap()), [2]);
        drop((one, two));
        let finishing: Vec<_> = clusters
            .into_iter()
            .map(|cluster| std::thread::spawn(move || cluster.finish()))
            .collect();
        for finishing in finishing {
            finishing.join().unwrap().unwrap();
        }
    });
}

#[test]
fn a_rank_dropped_without_finish_delivers_what_it_sent() {
    watchdog(60, || {
        const N: u32 = 2_000;
        let rendezvous = free_addr();
        let clusters = join_all((0..2).map(|rank| builder(rank, 2, rendezvous)).collect());
        let mut clusters: Vec<Cluster> = clusters.into_iter().map(Result::unwrap).collect();
        let one = clusters.pop().unwrap();
        let zero = clusters.pop().unwrap();
        let mut from_one = zero.serve(1, RING, Role::Server);
        // More than the credit window: the receiver runs meanwhile.
        let sender = std::thread::spawn(move || {
            let session = one.open(0, RING, Role::Client).unwrap();
            for i in 0..N {
                session.send(0, 0, &vec![i; 4096]).unwrap();
            }
            drop(session);
            // No finish: the drop alone delivers the messages and the close.
            drop(one);
        });
        let mut served = from_one.accept().unwrap();
        for i in 0..N {
            let token: Vec<u32> = served.recv().unwrap().decode().unwrap();
            assert_eq!(token[0], i);
        }
        let end = served.recv().unwrap_err();
        assert!(matches!(end, SessionError::PeerClosed), "{end}");
        sender.join().unwrap();
    });
}

#[test]
fn a_rank_that_never_arrives_fails_the_others_with_a_timeout_naming_it() {
    let results = watchdog(30, || {
        let rendezvous = free_addr();
        let started = Instant::now();
        // Rank 2 of 3 never starts.
        let results = join_all(
            (0..2)
                .map(|rank| builder(rank, 3, rendezvous).timeout(Duration::from_secs(1)))
                .collect(),
        );
        assert!(started.elapsed() < Duration::from_secs(10));
        results
    });
    for result in results {
        match result {
            Err(ClusterError::RendezvousTimeout { missing }) => assert_eq!(missing, [2]),
            other => panic!("{other:?}"),
        }
    }
}

#[test]
fn a_missing_rank_zero_is_a_timeout_too() {
    let result = watchdog(30, || {
        builder(1, 2, free_addr())
            .timeout(Duration::from_millis(500))
            .join()
    });
    match result {
        Err(error @ ClusterError::RendezvousTimeout { .. }) => {
            assert_eq!(
                error.to_string(),
                "rendezvous timed out: rank 0 never arrived"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn a_rank_claimed_twice_fails_every_rank_with_a_collision() {
    let results = watchdog(30, || {
        let rendezvous = free_addr();
        join_all(vec![
            builder(0, 3, rendezvous),
            builder(1, 3, rendezvous),
            builder(1, 3, rendezvous),
        ])
    });
    for result in results {
        assert!(
            matches!(result, Err(ClusterError::RankCollision { rank: 1 })),
            "{result:?}"
        );
    }
}

#[test]
fn another_size_or_another_job_fails_the_rendezvous() {
    let results = watchdog(30, || {
        let rendezvous = free_addr();
        join_all(vec![builder(0, 2, rendezvous), builder(1, 3, rendezvous)])
    });
    for result in results {
        assert!(
            matches!(
                result,
                Err(ClusterError::SizeMismatch {
                    rank: 1,
                    size: 3,
                    expected: 2
                })
            ),
            "{result:?}"
        );
    }
    let results = watchdog(30, || {
        let rendezvous = free_addr();
        join_all(vec![
            builder(0, 2, rendezvous).job("a"),
            builder(1, 2, rendezvous).job("b"),
        ])
    });
    for result in results {
        assert!(
            matches!(result, Err(ClusterError::JobMismatch { rank: 1 })),
            "{result:?}"
        );
    }
}

#[test]
fn a_second_rank_zero_cannot_bind_the_rendezvous() {
    let taken = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = taken.local_addr().unwrap();
    let result = watchdog(30, move || builder(0, 2, addr).join());
    assert!(
        matches!(&result, Err(ClusterError::Bind { addr: a, .. }) if *a == addr),
        "{result:?}"
    );
}

#[test]
fn a_stray_connection_to_rank_zero_does_not_stop_the_rendezvous() {
    watchdog(30, || {
        let rendezvous = free_addr();
        let rank_zero = std::thread::spawn(move || builder(0, 2, rendezvous).join());
        // Something that is not a rank connects first and says nonsense.
        let stray = loop {
            match std::net::TcpStream::connect(rendezvous) {
                Ok(stream) => break stream,
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        };
        std::io::Write::write_all(&mut &stray, b"GET / HTTP/1.0\r\n\r\n").unwrap();
        let one = builder(1, 2, rendezvous).join().unwrap();
        let zero = rank_zero.join().unwrap().unwrap();
        drop(stray);
        let finishing = std::thread::spawn(move || one.finish());
        zero.finish().unwrap();
        finishing.join().unwrap().unwrap();
    });
}

#[test]
fn ranks_on_the_callers_runtime_join_and_finish() {
    watchdog(60, || {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let rendezvous = free_addr();
            let tasks: Vec<_> = (0..3)
                .map(|rank| {
                    tokio::spawn(async move {
                        let cluster = builder(rank, 3, rendezvous).join_async().await.unwrap();
                        if rank == 0 {
                            let mut sum = 0;
                            for from in 1..3 {
                                let mut acceptor = cluster.serve(from, RING, Role::Server);
                                let mut session = acceptor.accept_async().await.unwrap();
                                let token: Vec<u32> =
                                    session.recv_async().await.unwrap().decode().unwrap();
                                sum += token[0];
                            }
                            assert_eq!(sum, 3);
                        } else {
                            let session = cluster.open_async(0, RING, Role::Client).await.unwrap();
                            session.send_async(0, 0, &vec![rank as u32]).await.unwrap();
                            session.close();
                        }
                        cluster.finish_async().await.unwrap();
                    })
                })
                .collect();
            for task in tasks {
                task.await.unwrap();
            }
        });
    });
}

#[test]
fn a_rank_lost_before_it_finishes_fails_rank_zeros_finish() {
    watchdog(60, || {
        let rendezvous = free_addr();
        let clusters = join_all((0..2).map(|rank| builder(rank, 2, rendezvous)).collect());
        let mut clusters = clusters.into_iter().map(Result::unwrap);
        let (zero, one) = (clusters.next().unwrap(), clusters.next().unwrap());
        drop(one);
        let error = zero.finish().unwrap_err();
        assert!(
            matches!(error, ClusterError::Lost { rank: 1, .. }),
            "{error:?}"
        );
    });
}

#[test]
fn an_open_no_rank_serves_is_refused_after_the_open_timeout() {
    watchdog(60, || {
        let rendezvous = free_addr();
        let clusters = join_all((0..2).map(|rank| builder(rank, 2, rendezvous)).collect());
        let mut clusters = clusters.into_iter().map(Result::unwrap);
        let (zero, one) = (clusters.next().unwrap(), clusters.next().unwrap());
        let started = Instant::now();
        let error = one.open(0, RING, Role::Client).unwrap_err();
        assert!(
            matches!(error, pipes_net::ConnectError::Refused(_)),
            "{error}"
        );
        // Asked again until the open timeout (2 s in the quick settings), then refused.
        let waited = started.elapsed();
        assert!(
            waited >= Duration::from_millis(1500) && waited < Duration::from_secs(10),
            "{waited:?}"
        );
        let finishing = std::thread::spawn(move || one.finish());
        zero.finish().unwrap();
        finishing.join().unwrap().unwrap();
    });
}

#[test]
fn the_cluster_types_are_send_and_sync() {
    fn send_sync<T: Send + Sync>() {}
    send_sync::<Cluster>();
    send_sync::<ClusterBuilder>();
    send_sync::<ClusterError>();
    send_sync::<Launch>();
}

// ---- real processes ----

/// The example's binary, built by `cargo test` beside this test's (target/*/examples).
fn example_binary() -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?.parent()?.join("examples");
    let path = dir.join(format!("cluster_ring{}", std::env::consts::EXE_SUFFIX));
    path.exists().then_some(path)
}

#[test]
fn four_processes_started_with_open_mpi_variables_by_hand_run_the_ring() {
    let Some(binary) = example_binary() else {
        eprintln!(
            "skipped: examples/cluster_ring is not built (`cargo test -p pipes-net` builds it)"
        );
        return;
    };
    watchdog(60, move || {
        let rendezvous = free_addr();
        let children: Vec<_> = (0..4)
            .map(|rank| {
                Command::new(&binary)
                    .arg("20")
                    .env("OMPI_COMM_WORLD_RANK", rank.to_string())
                    .env("OMPI_COMM_WORLD_SIZE", "4")
                    .env("PIPES_CLUSTER_ADDR", rendezvous.to_string())
                    .env("PIPES_CLUSTER_TIMEOUT", "20")
                    .env_remove("PIPES_CLUSTER_RANK")
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let outputs: Vec<_> = children
            .into_iter()
            .map(|child| child.wait_with_output().unwrap())
            .collect();
        for (rank, output) in outputs.iter().enumerate() {
            assert!(
                output.status.success(),
                "rank {rank}: {}",
                String::from_utf8_lossy(&output.stderr)
            );
        }
        let zero = String::from_utf8_lossy(&outputs[0].stdout);
        assert!(
            zero.starts_with("ring of 4 ranks: 20 laps checked"),
            "{zero}"
        );
    });
}

// ---- a rank's peer listener, as a stray sees it ----

/// The rendezvous's messages as the crate writes them (postcard, variants in this order): what a
/// test that plays rank 0 by hand reads and writes.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
enum RendezvousMessage {
    Register {
        rank: u64,
        size: u64,
        job: Option<String>,
        addr: SocketAddr,
    },
    Table(Vec<SocketAddr>),
    Fail(()),
    Peer {
        rank: u64,
        size: u64,
        job: Option<String>,
    },
}

const RENDEZVOUS_MAGIC: &[u8; 16] = b"pipes-cluster/1\n";

fn write_rendezvous(stream: &mut std::net::TcpStream, magic: bool, message: &RendezvousMessage) {
    use std::io::Write;
    let body = postcard::to_stdvec(message).unwrap();
    if magic {
        stream.write_all(RENDEZVOUS_MAGIC).unwrap();
    }
    stream
        .write_all(&(body.len() as u32).to_be_bytes())
        .unwrap();
    stream.write_all(&body).unwrap();
}

fn read_rendezvous(stream: &mut std::net::TcpStream, magic: bool) -> RendezvousMessage {
    use std::io::Read;
    if magic {
        let mut start = [0; 16];
        stream.read_exact(&mut start).unwrap();
        assert_eq!(&start, RENDEZVOUS_MAGIC);
    }
    let mut len = [0; 4];
    stream.read_exact(&mut len).unwrap();
    let mut body = vec![0; u32::from_be_bytes(len) as usize];
    stream.read_exact(&mut body).unwrap();
    postcard::from_bytes(&body).unwrap()
}

/// A connection to a rank's own listener (where lower ranks dial it after the table) that says
/// nothing, as a port scanner's or a health check's, holds up no one: the ranks' pairwise step
/// reads each stream at its listener in a task of its own, as rank 0's rendezvous does. (It
/// read them one at a time, so the silent one kept rank 0's real dial waiting until the
/// deadline, and rank 1 failed with a timeout naming rank 0, which did dial it.) Here the
/// test plays rank 0 by hand, so it knows rank 1's listener.
#[test]
fn a_silent_connection_to_a_ranks_listener_does_not_stop_the_rendezvous() {
    let result = watchdog(60, || {
        let rendezvous = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = rendezvous.local_addr().unwrap();
        let one =
            std::thread::spawn(move || builder(1, 2, addr).timeout(Duration::from_secs(3)).join());
        let (mut registration, _) = rendezvous.accept().unwrap();
        let RendezvousMessage::Register {
            rank: 1,
            size: 2,
            job: None,
            addr: listener,
        } = read_rendezvous(&mut registration, true)
        else {
            panic!("not rank 1's registration")
        };
        // The stray reaches rank 1's listener first, and stays silent.
        let stray = std::net::TcpStream::connect(listener).unwrap();
        write_rendezvous(
            &mut registration,
            false,
            &RendezvousMessage::Table(vec![addr, listener]),
        );
        // Rank 0 dials rank 1, as the lower rank of the pair, and runs a connection over it.
        let mut dialed = std::net::TcpStream::connect(listener).unwrap();
        write_rendezvous(
            &mut dialed,
            true,
            &RendezvousMessage::Peer {
                rank: 0,
                size: 2,
                job: None,
            },
        );
        dialed.set_nonblocking(true).unwrap();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let attached = runtime.block_on(async {
            let node = pipes_net::Node::builder()
                .config(quick())
                .start_async()
                .await
                .unwrap();
            let stream = tokio::net::TcpStream::from_std(dialed).unwrap();
            let attached = tokio::time::timeout(
                Duration::from_secs(10),
                node.attach_async(stream, pipes_net::Origin::Dialed),
            )
            .await;
            (node, attached)
        });
        let result = one.join().unwrap();
        drop((stray, attached, runtime));
        result
    });
    let one = result.unwrap_or_else(|error| {
        panic!("rank 1 failed the rendezvous because of a silent stray connection: {error:?}")
    });
    drop(one);
}

/// The module docs: "A rank registered twice, another size or another job fails every rank
/// with the same typed error, sent by rank 0." That holds for a rank that registers a moment
/// after rank 0 found the collision (the launcher started it last): rank 0 answers late
/// registrations until its deadline. It used to tell only the ranks registered by then, and
/// the late one timed out blaming rank 0, which was there.
#[test]
fn a_rank_arriving_after_a_collision_learns_of_the_collision() {
    let results = watchdog(30, || {
        let rendezvous = free_addr();
        let early: Vec<_> = [0, 1, 1]
            .into_iter()
            .map(|rank| {
                let builder = builder(rank, 3, rendezvous).timeout(Duration::from_secs(3));
                std::thread::spawn(move || builder.join())
            })
            .collect();
        std::thread::sleep(Duration::from_millis(500));
        let late = builder(2, 3, rendezvous)
            .timeout(Duration::from_secs(3))
            .join();
        let mut results: Vec<_> = early.into_iter().map(|t| t.join().unwrap()).collect();
        results.push(late);
        results
    });
    for (i, result) in results.iter().enumerate() {
        assert!(
            matches!(result, Err(ClusterError::RankCollision { rank: 1 })),
            "rank {} (started {}): {result:?}",
            [0, 1, 1, 2][i],
            if i == 3 { "late" } else { "early" }
        );
    }
}

/// A registration that lies (a rank beyond the size it states) fails rank 0 at once with a
/// typed error naming it, and the liar is told the same, instead of rank 0 waiting for the
/// ranks it expects.
#[test]
fn a_registration_claiming_a_rank_beyond_the_size_fails_rank_zero_at_once() {
    let (result, told, waited) = watchdog(30, || {
        let rendezvous = free_addr();
        let started = Instant::now();
        let zero = std::thread::spawn(move || builder(0, 2, rendezvous).join());
        let mut liar = loop {
            match std::net::TcpStream::connect(rendezvous) {
                Ok(stream) => break stream,
                Err(_) => std::thread::sleep(Duration::from_millis(5)),
            }
        };
        write_rendezvous(
            &mut liar,
            true,
            &RendezvousMessage::Register {
                rank: 5,
                size: 2,
                job: None,
                addr: "127.0.0.1:9".parse().unwrap(),
            },
        );
        let told = read_rendezvous(&mut liar, false);
        let result = zero.join().unwrap();
        (result, told, started.elapsed())
    });
    assert!(
        matches!(
            result,
            Err(ClusterError::SizeMismatch {
                rank: 5,
                size: 2,
                expected: 2
            })
        ),
        "{result:?}"
    );
    assert!(matches!(told, RendezvousMessage::Fail(_)), "{told:?}");
    assert!(waited < Duration::from_secs(10), "{waited:?}");
}

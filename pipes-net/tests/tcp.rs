//! End to end over loopback TCP: nodes on their own threads (the blocking API) and on the
//! caller's runtime, a stream of 10^5 messages checked in order, many sessions on one
//! connection, and two real processes (this test binary runs itself as the server).

mod common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{STREAM, within};
use pipes_net::{ConnectError, Node, Role};

/// Runs `body` on a thread and fails the test if it takes longer than `secs`: blocking code
/// cannot be cancelled, but a hang must not block the test run.
fn watchdog(secs: u64, body: impl FnOnce() + Send + 'static) {
    let (done, finished) = mpsc::channel();
    let thread = std::thread::spawn(move || {
        body();
        let _ = done.send(());
    });
    match finished.recv_timeout(Duration::from_secs(secs)) {
        Ok(()) => thread.join().unwrap(),
        // The body panicked: join to pass its panic on.
        Err(mpsc::RecvTimeoutError::Disconnected) => thread.join().unwrap(),
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("timed out: a hang"),
    }
}

fn localhost() -> SocketAddr {
    "127.0.0.1:0".parse().unwrap()
}

#[test]
fn a_stream_of_100_000_messages_arrives_in_order() {
    watchdog(120, || {
        const N: u64 = 100_000;
        let server = Node::builder().listen(localhost()).start().unwrap();
        let mut acceptor = server.serve(STREAM, Role::Server);
        let addr = server.local_addr().unwrap();
        let receiver = std::thread::spawn(move || {
            let mut session = acceptor.accept().unwrap();
            for i in 0..N {
                let message = session.recv().unwrap();
                assert_eq!((message.state, message.msg), (0, 0));
                assert_eq!(message.decode::<u64>().unwrap(), i);
            }
            session.send(1, 0, &N).unwrap();
            let error = session.recv().unwrap_err();
            assert!(
                matches!(error, pipes_net::SessionError::PeerClosed),
                "{error}"
            );
        });
        let client = Node::builder().start().unwrap();
        let mut session = client.open(addr, STREAM, Role::Client).unwrap();
        for i in 0..N {
            session.send(0, 0, &i).unwrap();
        }
        assert_eq!(session.recv().unwrap().decode::<u64>().unwrap(), N);
        session.close();
        receiver.join().unwrap();
    });
}

#[test]
fn sessions_to_one_peer_share_one_connection() {
    watchdog(60, || {
        let server = Node::builder().listen(localhost()).start().unwrap();
        let mut acceptor = server.serve(STREAM, Role::Server);
        let addr = server.local_addr().unwrap();
        let client = Node::builder().start().unwrap();
        let mut pairs = Vec::new();
        for i in 0..20u32 {
            let session = client.open(addr, STREAM, Role::Client).unwrap();
            session.send(0, 0, &i).unwrap();
            pairs.push((session, acceptor.accept().unwrap()));
        }
        for (i, (_, served)) in pairs.iter_mut().enumerate() {
            assert_eq!(served.recv().unwrap().decode::<u32>().unwrap(), i as u32);
        }
        assert_eq!(client.connections(), 1);
        assert_eq!(server.connections(), 1);
    });
}

#[test]
fn a_peer_that_is_not_listening_is_refused_by_the_os() {
    watchdog(30, || {
        let listener = std::net::TcpListener::bind(localhost()).unwrap();
        let addr = listener.local_addr().unwrap();
        drop(listener);
        let client = Node::builder().start().unwrap();
        match client.open(addr, STREAM, Role::Client) {
            Err(ConnectError::Io(error)) => {
                assert_eq!(
                    error.kind(),
                    std::io::ErrorKind::ConnectionRefused,
                    "{error}"
                )
            }
            other => panic!("{other:?}"),
        }
    });
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nodes_run_on_the_callers_runtime() {
    within(30, async {
        let server = Node::builder()
            .listen(localhost())
            .start_async()
            .await
            .unwrap();
        let mut acceptor = server.serve(STREAM, Role::Server);
        let client = Node::builder().start_async().await.unwrap();
        let addr = server.local_addr().unwrap();
        let (session, served) = tokio::join!(
            client.open_async(addr, STREAM, Role::Client),
            acceptor.accept_async()
        );
        let (mut session, mut served) = (session.unwrap(), served.unwrap());
        for i in 0..1000u32 {
            session.send_async(0, 0, &i).await.unwrap();
        }
        for i in 0..1000u32 {
            let message = served.recv_async().await.unwrap();
            served
                .send_async(1, 0, &message.decode::<u32>().unwrap())
                .await
                .unwrap();
            assert_eq!(
                session.recv_async().await.unwrap().decode::<u32>().unwrap(),
                i
            );
        }
    })
    .await;
}

/// The server half of `two_processes`, run by that test in a child process.
#[test]
#[ignore = "run by two_processes in a child process"]
fn child_echo_server() {
    let server = Node::builder().listen(localhost()).start().unwrap();
    let mut acceptor = server.serve(STREAM, Role::Server);
    println!("ADDR {}", server.local_addr().unwrap());
    let mut session = acceptor.accept().unwrap();
    while let Ok(message) = session.recv() {
        session
            .send(1, 0, &message.decode::<String>().unwrap())
            .unwrap();
    }
}

#[test]
fn two_processes() {
    let mut child = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", "child_echo_server", "--ignored", "--nocapture"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    // Read the child's output to its end (a closed pipe would fail its test harness), and
    // pass its address on.
    let stdout = child.stdout.take().unwrap();
    let (address, addr_rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines().map_while(Result::ok) {
            if let Some(addr) = line.strip_prefix("ADDR ") {
                let _ = address.send(addr.parse::<SocketAddr>().unwrap());
            }
        }
    });
    let result = std::panic::catch_unwind(move || {
        watchdog(60, move || {
            let addr = addr_rx
                .recv_timeout(Duration::from_secs(30))
                .expect("the child printed its address");
            let client = Node::builder().start().unwrap();
            let mut session = client.open(addr, STREAM, Role::Client).unwrap();
            for i in 0..10_000 {
                let text = format!("message {i}");
                session.send(0, 0, &text).unwrap();
                assert_eq!(session.recv().unwrap().decode::<String>().unwrap(), text);
            }
            session.close();
        })
    });
    if result.is_err() {
        let _ = child.kill();
    }
    let status = child.wait().unwrap();
    reader.join().unwrap();
    if let Err(panic) = result {
        std::panic::resume_unwind(panic);
    }
    assert!(status.success(), "the child server failed: {status}");
}

//! End to end over loopback TCP: nodes on their own threads (the blocking API) and on the
//! caller's runtime, a stream of 10^5 messages checked in order, many sessions on one
//! connection, two real processes (this test binary runs itself as the server, or as a sender
//! that exits right after its last send), and the shutdown's bound with a peer that does not
//! read.

mod common;

use std::io::{BufRead, BufReader};
use std::net::SocketAddr;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use common::{STREAM, within};
use pipes_net::frame::{self, Frame, Kind};
use pipes_net::{Config, ConnectError, Node, Role, SessionError};

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

/// Where `child_sender` sends, from its parent.
const SENDER_ADDR: &str = "PIPES_NET_TEST_SENDER_ADDR";
/// How many messages `child_sender` sends.
const SENDER_MESSAGES: u64 = 3_000;

/// The sender half of `a_process_that_exits_after_its_last_send_delivers_it`, run by that
/// test in a child process: it sends, drops its session and node, and returns, so the process
/// exits at once.
#[test]
#[ignore = "run by a_process_that_exits_after_its_last_send_delivers_it in a child process"]
fn child_sender() {
    let addr: SocketAddr = std::env::var(SENDER_ADDR).unwrap().parse().unwrap();
    let node = Node::builder().start().unwrap();
    let session = node.open(addr, STREAM, Role::Client).unwrap();
    for i in 0..SENDER_MESSAGES {
        // Large enough that the last ones are still queued when the sends return.
        session.send(0, 0, &(i, vec![7u8; 512])).unwrap();
    }
    drop(session);
    drop(node);
}

#[test]
fn a_process_that_exits_after_its_last_send_delivers_it() {
    watchdog(120, || {
        let server = Node::builder().listen(localhost()).start().unwrap();
        let mut acceptor = server.serve(STREAM, Role::Server);
        let addr = server.local_addr().unwrap();
        // Each round is a new process: the race between its exit and its writer is run
        // several times.
        for round in 0..5 {
            let mut child = Command::new(std::env::current_exe().unwrap())
                .args(["--exact", "child_sender", "--ignored"])
                .env(SENDER_ADDR, addr.to_string())
                .stdout(Stdio::null())
                .spawn()
                .unwrap();
            let mut session = acceptor.accept().unwrap();
            for i in 0..SENDER_MESSAGES {
                match session.recv() {
                    Ok(message) => {
                        let (n, _): (u64, Vec<u8>) = message.decode().unwrap();
                        assert_eq!(n, i);
                    }
                    Err(error) => panic!("round {round}: message {i} lost: {error}"),
                }
            }
            let end = session.recv().unwrap_err();
            assert!(
                matches!(end, SessionError::PeerClosed),
                "round {round}: {end}"
            );
            assert!(child.wait().unwrap().success());
        }
    });
}

/// Writes one length-prefixed body.
fn write_body(stream: &mut std::net::TcpStream, body: &[u8]) {
    use std::io::Write;
    stream
        .write_all(&(body.len() as u32).to_be_bytes())
        .unwrap();
    stream.write_all(body).unwrap();
}

/// Reads one length-prefixed body.
fn read_body(stream: &mut std::net::TcpStream) -> Vec<u8> {
    use std::io::Read;
    let mut len = [0; 4];
    stream.read_exact(&mut len).unwrap();
    let mut body = vec![0; u32::from_be_bytes(len) as usize];
    stream.read_exact(&mut body).unwrap();
    body
}

#[test]
fn dropping_a_node_whose_peer_stopped_reading_returns_within_the_shutdown_timeout() {
    watchdog(60, || {
        let listener = std::net::TcpListener::bind(localhost()).unwrap();
        let addr = listener.local_addr().unwrap();
        let (hang_up, hung_up) = mpsc::channel::<()>();
        // A peer that says hello, answers one Open, then reads nothing more, and holds the
        // socket open until the test ends.
        let peer = std::thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            write_body(
                &mut stream,
                &frame::hello(frame::DEFAULT_MAX_FRAME, frame::DEFAULT_MAX_MESSAGE),
            );
            assert!(frame::read_hello(&read_body(&mut stream)).is_some());
            // A heartbeat may come first (on a busy machine the node's writer can tick before
            // the session is opened).
            let open = loop {
                let frame = Frame::decode(read_body(&mut stream).into()).unwrap();
                if !matches!(frame.kind, Kind::Ping) {
                    break frame;
                }
            };
            let Kind::Open { name, .. } = open.kind else {
                panic!("{open:?}")
            };
            let mut answer = bytes::BytesMut::new();
            Frame::new(
                open.session,
                Kind::Open {
                    role: Role::Server,
                    window: 0,
                    name,
                    fingerprint: bytes::Bytes::from_static(common::BANK.fingerprint),
                },
            )
            .encode(usize::MAX, &mut answer)
            .unwrap();
            std::io::Write::write_all(&mut stream, &answer).unwrap();
            let _ = hung_up.recv();
        });
        let timeout = Duration::from_millis(500);
        let node = Node::builder()
            .config(Config {
                shutdown_timeout: timeout,
                // The peer never sends a heartbeat: its silence must not end the connection
                // while this end, a debug build on a busy machine, encodes 32 MiB.
                heartbeat_timeout: Duration::from_secs(120),
                ..Config::default()
            })
            .start()
            .unwrap();
        let session = node.open(addr, common::BANK, Role::Client).unwrap();
        // More than the socket buffers hold: the writer blocks on the peer.
        for _ in 0..32 {
            session.send(0, 0, &vec![1u8; 1 << 20]).unwrap();
        }
        drop(session);
        let start = std::time::Instant::now();
        drop(node);
        let took = start.elapsed();
        assert!(took >= timeout, "the shutdown did not wait: {took:?}");
        assert!(took < timeout * 4, "the shutdown took {took:?}");
        hang_up.send(()).unwrap();
        peer.join().unwrap();
    });
}

#[test]
fn a_node_dropped_right_after_its_last_send_delivers_it_in_one_process() {
    watchdog(120, || {
        let server = Node::builder().listen(localhost()).start().unwrap();
        let mut acceptor = server.serve(STREAM, Role::Server);
        let addr = server.local_addr().unwrap();
        for round in 0..20 {
            let sender = std::thread::spawn(move || {
                let node = Node::builder().start().unwrap();
                let session = node.open(addr, STREAM, Role::Client).unwrap();
                for i in 0..500u64 {
                    session.send(0, 0, &(i, vec![7u8; 512])).unwrap();
                }
                drop(session);
                drop(node);
            });
            let mut session = acceptor.accept().unwrap();
            for i in 0..500u64 {
                let message = session
                    .recv()
                    .unwrap_or_else(|error| panic!("round {round}: message {i} lost: {error}"));
                assert_eq!(message.decode::<(u64, Vec<u8>)>().unwrap().0, i);
            }
            let end = session.recv().unwrap_err();
            assert!(
                matches!(end, SessionError::PeerClosed),
                "round {round}: {end}"
            );
            sender.join().unwrap();
        }
    });
}

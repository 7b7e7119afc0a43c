//! Remote sessions of `#[wire]` protocols (the `net` feature): the endpoints `init()` hands out,
//! with their peer in another node, over `tokio::io::duplex` and loopback TCP.

#![cfg(feature = "net")]

#[path = "../pipes-net/tests/common/mod.rs"]
mod common;

use common::{pair, quick, within};

// The bank of `examples/remote_bank.rs`, which two tests also run as processes: one
// declaration, so both ends always have the same fingerprint.
#[allow(dead_code)]
#[path = "../examples/remote_bank.rs"]
mod remote_bank;

use remote_bank::bank;

// A stream of numbers: unbounded, so its sessions get credit flow control. The protocol of
// `examples/remote_stream.rs`, which a test also runs as two processes.
#[allow(dead_code)]
#[path = "../examples/remote_stream.rs"]
mod remote_stream;

use remote_stream::numbers;

/// The bank's side of one session: a password of "pw", and a balance.
fn serve_bank(mut login: bank::server::Login) {
    let mut balance = 0u64;
    let mut connected = loop {
        let bank::Login::Login(_user, password, response) = login.recv().unwrap();
        if password == "pw" {
            break response.logged_in().unwrap();
        }
        login = response.invalid().unwrap();
    };
    loop {
        match connected.recv().unwrap() {
            bank::Connected::Deposit(amount, next) => {
                balance += amount;
                connected = next;
            }
            bank::Connected::Withdrawal(amount, response) if amount <= balance => {
                balance -= amount;
                connected = response.money(amount).unwrap();
            }
            bank::Connected::Withdrawal(_, response) => {
                connected = response.insufficient_funds().unwrap();
            }
            bank::Connected::Logout => return,
        }
    }
}

/// The customer's side: a wrong password, then deposits and withdrawals.
fn use_bank(login: bank::client::Login) -> Vec<Option<u64>> {
    let response = login.login("ann".into(), "wrong".into()).unwrap();
    let bank::LoginResponse::Invalid(login) = response.recv().unwrap() else {
        panic!("a wrong password logged in")
    };
    let response = login.login("ann".into(), "pw".into()).unwrap();
    let bank::LoginResponse::LoggedIn(mut connected) = response.recv().unwrap() else {
        panic!("the right password was refused")
    };
    let mut got = Vec::new();
    connected = connected.deposit(100).unwrap();
    for amount in [30, 80, 70] {
        let response = connected.withdrawal(amount).unwrap();
        connected = match response.recv().unwrap() {
            bank::WithdrawalResponse::Money(money, next) => {
                got.push(Some(money));
                next
            }
            bank::WithdrawalResponse::InsufficientFunds(next) => {
                got.push(None);
                next
            }
        };
    }
    connected.logout().unwrap();
    got
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bank_round_trip_over_duplex() {
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<bank::Wire>();
    let server = tokio::task::spawn_blocking(move || {
        let login = incoming.accept().unwrap();
        serve_bank(login)
    });
    let login = within(5, conn.client_async::<bank::Wire>()).await.unwrap();
    let got = within(10, tokio::task::spawn_blocking(move || use_bank(login)))
        .await
        .unwrap();
    assert_eq!(got, [Some(30), None, Some(70)]);
    within(5, server).await.unwrap();
}

mod v2 {
    pipes::proto! {
        /// `bank` as another version of the program has it: `Deposit` carries a note.
        #[wire]
        pub bank {
            Login: send {
                Login(String, String) -> LoginResponse,
            }
            LoginResponse: recv {
                LoggedIn -> Connected,
                Invalid -> Login,
            }
            Connected: send {
                Deposit(u64, String) -> Connected,
                Withdrawal(u64) -> WithdrawalResponse,
                Logout -> !,
            }
            WithdrawalResponse: recv {
                Money(u64) -> Connected,
                InsufficientFunds -> Connected,
            }
        }
    }
}

use std::net::SocketAddr;
use std::time::Duration;

use pipes::Cause;
use pipes::net::{ConnectError, Connection, Node, RawSession, Role, SessionError, WireProtocol};

/// Runs `body` on a thread, failing the test if it takes longer than `secs` (a hang).
fn watchdog<T: Send + 'static>(secs: u64, body: impl FnOnce() -> T + Send + 'static) -> T {
    let (done, result) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(body());
    });
    result
        .recv_timeout(Duration::from_secs(secs))
        .expect("timed out: a hang")
}

fn listening() -> (Node, SocketAddr) {
    let node = Node::builder()
        .listen("127.0.0.1:0".parse().unwrap())
        .config(quick())
        .start()
        .unwrap();
    let addr = node.local_addr().unwrap();
    (node, addr)
}

#[test]
fn bank_round_trip_over_loopback_tcp_blocking() {
    watchdog(20, || {
        let (server_node, addr) = listening();
        let incoming = server_node.incoming::<bank::Wire>();
        let server = std::thread::spawn(move || {
            // Two customers, one after the other, through the Iterator form.
            for login in incoming.take(2) {
                serve_bank(login);
            }
        });
        let client_node = Node::builder().config(quick()).start().unwrap();
        for _ in 0..2 {
            let login = client_node.client::<bank::Wire>(addr).unwrap();
            assert_eq!(use_bank(login), [Some(30), None, Some(70)]);
        }
        server.join().unwrap();
        // Both sessions ran over one connection.
        assert_eq!(client_node.connections(), 1);
    });
}

#[test]
fn an_endpoint_dropped_just_before_its_node_delivers_every_message_then_the_close() {
    // More than the credit window (1024): the pump still waits for credit when the node is
    // dropped.
    const N: u64 = 3_000;
    watchdog(120, || {
        let (server_node, addr) = listening();
        // The raw session tells the session's close from a lost connection.
        let mut acceptor =
            server_node.serve(<numbers::Wire as WireProtocol>::PROTOCOL, Role::Server);
        for round in 0..20 {
            let sender = std::thread::spawn(move || {
                let node = Node::builder().config(quick()).start().unwrap();
                let mut stream = node.client::<numbers::Wire>(addr).unwrap();
                for n in 0..N {
                    stream = stream.number(n).unwrap();
                }
                // The pump has yet to forward most of it, and then to close.
                drop(stream);
                drop(node);
            });
            let mut session = acceptor.accept().unwrap();
            for n in 0..N {
                let message = session
                    .recv()
                    .unwrap_or_else(|error| panic!("round {round}: number {n} lost: {error}"));
                assert_eq!(message.decode::<u64>().unwrap(), n);
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_async_node_shut_down_after_its_endpoint_is_dropped_delivers_every_message() {
    const N: u64 = 3_000;
    within(60, async {
        let (server_node, addr) = listening();
        let mut acceptor =
            server_node.serve(<numbers::Wire as WireProtocol>::PROTOCOL, Role::Server);
        let receiver = tokio::task::spawn_blocking(move || {
            let mut session = acceptor.accept().unwrap();
            for n in 0..N {
                assert_eq!(session.recv().unwrap().decode::<u64>().unwrap(), n);
            }
            let end = session.recv().unwrap_err();
            assert!(matches!(end, SessionError::PeerClosed), "{end}");
            drop(server_node);
        });
        let node = Node::builder().config(quick()).start_async().await.unwrap();
        let mut stream = node.client_async::<numbers::Wire>(addr).await.unwrap();
        for n in 0..N {
            stream = stream.number(n).unwrap();
        }
        drop(stream);
        node.shutdown().await;
        receiver.await.unwrap();
    })
    .await;
}

#[test]
fn a_node_dropped_while_the_user_holds_endpoints_does_not_wait_for_them() {
    watchdog(60, || {
        let (server_node, addr) = listening();
        let mut incoming = server_node.incoming::<numbers::Wire>();
        let node = Node::builder().config(quick()).start().unwrap();
        // One pump waiting on the user's sends, one on the peer's answer.
        let sending = node.client::<numbers::Wire>(addr).unwrap();
        let _served = incoming.accept().unwrap();
        let waiting = node
            .client::<numbers::Wire>(addr)
            .unwrap()
            .number(1)
            .unwrap()
            .end()
            .unwrap();
        let _served_too = incoming.accept().unwrap();
        let start = std::time::Instant::now();
        drop(node);
        let took = start.elapsed();
        // Both pumps report idle at once: nowhere near the shutdown timeout (5 s).
        assert!(took < Duration::from_secs(2), "the shutdown took {took:?}");
        // Their sessions were cut with the connection.
        assert!(sending.number(2).is_err());
        assert!(waiting.recv().is_err());
    });
}

#[test]
fn a_million_numbers_arrive_in_order_over_loopback_tcp() {
    const N: u64 = 1_000_000;
    watchdog(120, || {
        let (server_node, addr) = listening();
        let mut incoming = server_node.incoming::<numbers::Wire>();
        const { assert!(<numbers::Wire as WireProtocol>::PROTOCOL.unbounded) };
        let server = std::thread::spawn(move || {
            let mut stream = incoming.accept().unwrap();
            let (mut count, mut sum) = (0u64, 0u64);
            loop {
                match stream.recv().unwrap() {
                    numbers::Stream::Number(n, next) => {
                        assert_eq!(n, count, "out of order");
                        count += 1;
                        sum += n;
                        stream = next;
                    }
                    numbers::Stream::End(tally) => {
                        tally.count(count, sum).unwrap();
                        return;
                    }
                }
            }
        });
        let client_node = Node::builder().config(quick()).start().unwrap();
        let mut stream = client_node.client::<numbers::Wire>(addr).unwrap();
        for n in 0..N {
            stream = stream.number(n).unwrap();
        }
        let tally = stream.end().unwrap();
        let numbers::Tally::Count(count, sum) = tally.recv().unwrap();
        assert_eq!((count, sum), (N, N * (N - 1) / 2));
        server.join().unwrap();
    });
}

#[tokio::test]
async fn another_version_of_the_protocol_is_incompatible() {
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let _incoming = server_node.incoming::<bank::Wire>();
    let (old, new) = (
        <bank::Wire as WireProtocol>::PROTOCOL,
        <v2::bank::Wire as WireProtocol>::PROTOCOL,
    );
    assert_eq!(old.name, new.name);
    assert_ne!(old.fingerprint, new.fingerprint);
    match within(5, conn.client_async::<v2::bank::Wire>()).await {
        Err(ConnectError::Incompatible(why)) => assert!(why.contains("bank"), "{why}"),
        other => panic!("expected Incompatible, got {other:?}"),
    }
}

#[tokio::test]
async fn a_protocol_nobody_serves_is_refused() {
    let (_client_node, conn, _server_node, _) = pair(quick()).await;
    match within(5, conn.client_async::<bank::Wire>()).await {
        Err(ConnectError::Refused(_)) => {}
        other => panic!("expected Refused, got {other:?}"),
    }
}

/// Logs `login` in against a bank that accepts every password.
async fn logged_in(login: bank::client::Login) -> bank::client::Connected {
    let response = login.login("ann".into(), "pw".into()).unwrap();
    match within(5, response.recv_async()).await.unwrap() {
        bank::LoginResponse::LoggedIn(connected) => connected,
        bank::LoginResponse::Invalid(_) => panic!("refused"),
    }
}

/// A bank that logs everyone in, then hands its `Connected` endpoint back.
async fn lenient(incoming: &mut pipes::net::Incoming<bank::Wire>) -> bank::server::Connected {
    let login = within(5, incoming.accept_async()).await.unwrap();
    let bank::Login::Login(_, _, response) = within(5, login.recv_async()).await.unwrap();
    response.logged_in().unwrap()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_dropped_while_the_user_receives_fails_the_receive() {
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<bank::Wire>();
    let (connected, server) = tokio::join!(
        async { logged_in(conn.client_async::<bank::Wire>().await.unwrap()).await },
        lenient(&mut incoming)
    );
    let response = connected.withdrawal(10).unwrap();
    let bank::Connected::Withdrawal(10, _pending) = within(5, server.recv_async()).await.unwrap()
    else {
        panic!("not the withdrawal")
    };
    // The bank's node goes away before it answers: the customer's receive fails, no hang.
    drop(server_node);
    let error = within(5, response.recv_async()).await.unwrap_err();
    assert!(error.to_string().contains("WithdrawalResponse"), "{error}");
    // The node shut down without closing the session: the connection is what ended it.
    assert_eq!(error.cause(), Cause::ConnectionLost, "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_lost_while_the_user_may_send_fails_the_next_send() {
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<bank::Wire>();
    let (connected, _server) = tokio::join!(
        async { logged_in(conn.client_async::<bank::Wire>().await.unwrap()).await },
        lenient(&mut incoming)
    );
    // The customer holds `Connected` (its turn to send) when the bank's node goes away: the
    // pump, waiting on the local endpoint, notices the session failing and lets go of it.
    drop(server_node);
    within(5, async {
        while conn.failure().is_none() {
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    // A moment for the pump to see it (it reacts at once; this is slack for a busy machine).
    tokio::time::sleep(Duration::from_millis(200)).await;
    match connected.deposit(1) {
        Err(pipes::SendError(amount)) => assert_eq!(amount, 1),
        Ok(_) => panic!("the pump kept its endpoint after the session failed"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_user_dropping_an_endpoint_closes_the_remote_peer() {
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<bank::Wire>();
    let (connected, server) = tokio::join!(
        async { logged_in(conn.client_async::<bank::Wire>().await.unwrap()).await },
        lenient(&mut incoming)
    );
    drop(connected);
    let error = within(5, server.recv_async()).await.unwrap_err();
    assert!(error.to_string().contains("Connected"), "{error}");
    assert_eq!(error.cause(), Cause::Closed, "{error}");
}

/// A typed client of `W`, and the raw session its server's node accepted (a peer that reads and
/// writes frames by hand), over a fresh pair of nodes, which the first element keeps alive.
async fn typed_client_raw_server<W: WireProtocol>()
-> ((Node, Connection, Node), W::Client, RawSession) {
    let (client_node, conn, server_node, _) = pair(quick()).await;
    let mut acceptor = server_node.serve(W::PROTOCOL, Role::Server);
    let (client, raw) = tokio::join!(async { conn.client_async::<W>().await.unwrap() }, async {
        acceptor.accept_async().await.unwrap()
    });
    ((client_node, conn, server_node), client, raw)
}

/// A typed customer and a hand-driven bank: the bank answers the login with `reply`
/// (state, message, payload bytes); the customer's receive must fail, and the bank must be
/// told it broke the protocol.
async fn raw_bank_answers(reply: (u32, u32, Vec<u8>)) {
    let (_nodes, login, mut raw) = typed_client_raw_server::<bank::Wire>().await;
    let response = login.login("ann".into(), "pw".into()).unwrap();
    let message = within(5, raw.recv_async()).await.unwrap();
    assert_eq!((message.state, message.msg), (0, 0));
    assert_eq!(
        message.decode::<(String, String)>().unwrap(),
        ("ann".to_string(), "pw".to_string())
    );
    raw.send_async(reply.0, reply.1, &BytesPayload(reply.2))
        .await
        .unwrap();
    let error = within(5, response.recv_async()).await.unwrap_err();
    assert_eq!(error.cause(), Cause::Violation, "{error}");
    match within(5, raw.recv_async()).await {
        Err(SessionError::Violation(what)) => assert!(!what.is_empty()),
        other => panic!("expected a violation, got {other:?}"),
    }
}

/// Bytes written as they are (no length prefix): a payload built by hand.
struct BytesPayload(Vec<u8>);

impl serde::Serialize for BytesPayload {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeTuple;
        let mut tuple = serializer.serialize_tuple(self.0.len())?;
        for byte in &self.0 {
            tuple.serialize_element(byte)?;
        }
        tuple.end()
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_index_the_state_does_not_have_is_a_violation() {
    // `LoginResponse` (state 1) has two messages.
    raw_bank_answers((1, 2, vec![])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_of_another_state_is_a_violation() {
    // `Money` is message 0 of state 3, not of state 1 where the customer is.
    raw_bank_answers((3, 0, vec![7])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_where_none_belongs_is_a_violation() {
    // `LoggedIn` has no payload: a byte left over.
    raw_bank_answers((1, 0, vec![1])).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_that_does_not_decode_is_a_violation() {
    let (_nodes, login, mut raw) = typed_client_raw_server::<bank::Wire>().await;
    let response = login.login("ann".into(), "pw".into()).unwrap();
    within(5, raw.recv_async()).await.unwrap();
    raw.send_async(1, 0, &()).await.unwrap();
    let bank::LoginResponse::LoggedIn(connected) = within(5, response.recv_async()).await.unwrap()
    else {
        panic!("not logged in")
    };
    let response = connected.withdrawal(5).unwrap();
    within(5, raw.recv_async()).await.unwrap();
    // `Money(u64)`, its varint cut short (a continuation bit, then nothing).
    raw.send_async(3, 0, &BytesPayload(vec![0x80]))
        .await
        .unwrap();
    let error = within(5, response.recv_async()).await.unwrap_err();
    assert_eq!(error.cause(), Cause::Violation, "{error}");
    match within(5, raw.recv_async()).await {
        Err(SessionError::Violation(what)) => assert!(what.contains("decode"), "{what}"),
        other => panic!("expected a violation, got {other:?}"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_out_of_turn_is_a_violation() {
    let (_nodes, login, mut raw) = typed_client_raw_server::<bank::Wire>().await;
    // The customer is to send `Login`; the bank speaks first.
    raw.send_async(1, 0, &()).await.unwrap();
    match within(5, raw.recv_async()).await {
        Err(SessionError::Violation(what)) => assert!(what.contains("turn"), "{what}"),
        other => panic!("expected a violation, got {other:?}"),
    }
    // The pump let go of its endpoint: the customer's send hands the payload back, or, sent
    // before the pump let go, is never answered.
    match login.login("ann".into(), "pw".into()) {
        Err(pipes::SendError((user, _))) => assert_eq!(user, "ann"),
        Ok(response) => {
            let error = within(5, response.recv_async()).await.unwrap_err();
            assert_eq!(error.cause(), Cause::Violation, "{error}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_select_waits_on_a_local_and_a_remote_session() {
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<bank::Wire>();
    let (remote, remote_server) = tokio::join!(
        async { conn.client_async::<bank::Wire>().await.unwrap() },
        async { within(5, incoming.accept_async()).await.unwrap() }
    );
    let (_local_server, local) = bank::init();
    let remote_response = remote.login("remote".into(), "pw".into()).unwrap();
    let local_response = local.login("local".into(), "pw".into()).unwrap();
    let bank::Login::Login(user, _, answer) = within(5, remote_server.recv_async()).await.unwrap();
    assert_eq!(user, "remote");
    answer.invalid().unwrap();
    let which = tokio::task::spawn_blocking(move || {
        use bank::LoginResponse::{Invalid, LoggedIn};
        pipes::select! {
            local_response => {
                LoggedIn -> _c { "local" },
                Invalid -> _l { "local" },
            },
            remote_response => {
                LoggedIn -> _c { "remote logged in" },
                Invalid -> _l { "remote refused" },
            },
        }
    });
    assert_eq!(within(5, which).await.unwrap(), "remote refused");
}

/// The example `name`, as `cargo test` builds it beside the tests (it builds every example);
/// `None` when only some targets were built (`cargo test --test wire`).
fn example_binary(name: &str) -> Option<std::path::PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let path = exe
        .parent()?
        .parent()?
        .join("examples")
        .join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
    path.exists().then_some(path)
}

/// A child process, killed when dropped.
struct Child(std::process::Child);

impl Drop for Child {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Starts `remote_bank serve` (or another example's) on a free port: the process and its
/// address.
fn listening_process(binary: &std::path::Path) -> (Child, SocketAddr) {
    use std::io::BufRead;
    let mut child = Child(
        std::process::Command::new(binary)
            .args(["serve", "127.0.0.1:0"])
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap(),
    );
    let stdout = child.0.stdout.take().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(stdout)
        .read_line(&mut line)
        .unwrap();
    let addr = line
        .trim()
        .strip_prefix("listening on ")
        .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
        .parse()
        .unwrap();
    (child, addr)
}

#[test]
fn the_example_bank_and_customer_as_two_processes() {
    let Some(binary) = example_binary("remote_bank") else {
        eprintln!(
            "skipped: examples/remote_bank is not built (`cargo test --features net` builds it)"
        );
        return;
    };
    watchdog(60, move || {
        let (_bank, addr) = listening_process(&binary);
        for _ in 0..2 {
            let output = std::process::Command::new(&binary)
                .args(["client", &addr.to_string(), "bob"])
                .output()
                .unwrap();
            assert!(output.status.success(), "{output:?}");
            let stdout = String::from_utf8(output.stdout).unwrap();
            assert_eq!(
                stdout.lines().collect::<Vec<_>>(),
                [
                    "bob: wrong password refused",
                    "bob: logged in",
                    "bob: deposited 100",
                    "bob: withdrew 30",
                    "bob: 80 refused, insufficient funds",
                    "bob: withdrew 70",
                    "bob: logged out",
                ]
            );
        }
    });
}

/// `examples/remote_stream`: a million numbers from one process to another, the sender
/// waiting for room before each, arrive in order.
#[test]
fn a_million_numbers_cross_from_process_to_process_in_order() {
    let Some(binary) = example_binary("remote_stream") else {
        eprintln!(
            "skipped: examples/remote_stream is not built (`cargo test --features net` builds it)"
        );
        return;
    };
    watchdog(120, move || {
        let (_receiver, addr) = listening_process(&binary);
        let output = std::process::Command::new(&binary)
            .args(["send", &addr.to_string(), "1000000"])
            .output()
            .unwrap();
        assert!(output.status.success(), "{output:?}");
        assert_eq!(
            String::from_utf8(output.stdout).unwrap().trim(),
            "sent 1000000 numbers; the receiver took 1000000 in order, sum 499999500000"
        );
    });
}

#[test]
fn a_bank_process_killed_mid_session_fails_the_customers_receive() {
    let Some(binary) = example_binary("remote_bank") else {
        eprintln!(
            "skipped: examples/remote_bank is not built (`cargo test --features net` builds it)"
        );
        return;
    };
    watchdog(60, move || {
        let (bank_process, addr) = listening_process(&binary);
        let node = Node::builder().config(quick()).start().unwrap();
        let login = node.client::<bank::Wire>(addr).unwrap();
        let response = login.login("cy".into(), "secret".into()).unwrap();
        let bank::LoginResponse::LoggedIn(connected) = response.recv().unwrap() else {
            panic!("refused")
        };
        let connected = connected.deposit(10).unwrap();
        drop(bank_process);
        // Sent before or after the pump saw the bank go: either way no answer comes, and the
        // receive fails instead of waiting.
        if let Ok(response) = connected.withdrawal(5) {
            match response.recv_timeout(Duration::from_secs(20)) {
                // The connection's reset, or, on a machine loaded enough to keep the bank's
                // process off the CPU for the heartbeat timeout (1 s) before the kill, that.
                Err(pipes::RecvTimeoutError::Disconnected(error)) => assert!(
                    matches!(error.cause(), Cause::ConnectionLost | Cause::Timeout),
                    "{error}"
                ),
                Err(pipes::RecvTimeoutError::Timeout(_)) => panic!("no error: a hang"),
                Ok(message) => panic!("an answer from a dead bank: {message:?}"),
            }
        }
    });
}

#[test]
fn build_rs_generation_computes_the_macros_fingerprint() {
    // `bank` as a `*.pipes` file would have it, spaced and commented otherwise: build.rs
    // generation (proc_macro2's own tokens) and `proto!` (the compiler's) must agree, or a
    // program built one way could not talk to one built the other.
    let file = "/// Online banking.\n#[wire]\npub bank {\n  Login: send { Login( String,String ) -> LoginResponse }\n  \
                LoginResponse: recv { LoggedIn -> Connected, Invalid -> Login }\n  \
                // the account\n  Connected: send { Deposit(u64) -> Connected, Withdrawal(u64) -> WithdrawalResponse, Logout -> ! }\n  \
                WithdrawalResponse: recv { Money(u64) -> Connected, InsufficientFunds -> Connected }\n}\n";
    let parsed = proto_dsl::parse(file).unwrap();
    let fingerprint = proto_dsl::fingerprint::fingerprint(&parsed.protocols[0]);
    assert_eq!(
        <bank::Wire as WireProtocol>::PROTOCOL.fingerprint,
        &fingerprint[..]
    );
    // And what build.rs writes opens sessions through `pipes::net`.
    let expanded = proto_dsl::Config::new().expand("bank.pipes", file).unwrap();
    assert!(
        expanded.contains("use ::pipes::net::__private as __net;"),
        "{expanded}"
    );
    assert!(
        expanded.contains("impl __net::WireProtocol for Wire"),
        "{expanded}"
    );
}

#[test]
fn remote_endpoints_and_incoming_cross_threads() {
    fn send<T: Send>() {}
    fn send_sync<T: Send + Sync>() {}
    // What a remote session hands out is what `init()` does: `Send` when the payloads are.
    send::<<bank::Wire as WireProtocol>::Client>();
    send::<<bank::Wire as WireProtocol>::Server>();
    send_sync::<pipes::net::Incoming<bank::Wire>>();
}

#[tokio::test]
async fn both_ends_async_on_one_current_thread_runtime() {
    // Users, pumps and both nodes' drivers all on one thread: nothing may block it.
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<numbers::Wire>();
    let server = async {
        let mut stream = within(5, incoming.accept_async()).await.unwrap();
        let mut count = 0;
        loop {
            match within(5, stream.recv_async()).await.unwrap() {
                numbers::Stream::Number(n, next) => {
                    assert_eq!(n, count);
                    count += 1;
                    stream = next;
                }
                numbers::Stream::End(tally) => {
                    tally.count(count, 0).unwrap();
                    return count;
                }
            }
        }
    };
    let client = async {
        let mut stream = conn.client_async::<numbers::Wire>().await.unwrap();
        for n in 0..10_000 {
            stream = stream.number(n).unwrap();
            if n % 1000 == 0 {
                // Let the pumps run now and then (sends never wait).
                tokio::task::yield_now().await;
            }
        }
        let numbers::Tally::Count(count, _) =
            within(5, stream.end().unwrap().recv_async()).await.unwrap();
        count
    };
    let (served, counted) = tokio::join!(server, client);
    assert_eq!((served, counted), (10_000, 10_000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_connection_cut_mid_stream_fails_both_users_without_a_hang() {
    use common::{Fault, Faulty, pair_over};
    let (a, b) = tokio::io::duplex(64 << 10);
    let (b, armed) = Faulty::new(b, Fault::Close(5_000));
    let (_client_node, conn, server_node, _) = pair_over(quick(), a, b).await;
    let mut incoming = server_node.incoming::<numbers::Wire>();
    let client = tokio::task::spawn_blocking(move || {
        let mut stream = conn.client::<numbers::Wire>().unwrap();
        // Until a send fails: the pump let go of its endpoint after the connection died.
        for n in 0.. {
            match stream.number(n) {
                Ok(next) => stream = next,
                Err(pipes::SendError(_)) => return n,
            }
            if n % 1000 == 999 {
                std::thread::sleep(Duration::from_millis(1));
            }
        }
        unreachable!()
    });
    let mut stream = within(5, incoming.accept_async()).await.unwrap();
    armed.store(true, std::sync::atomic::Ordering::Release);
    let received = within(10, async {
        let mut received = 0u64;
        loop {
            match stream.recv_async().await {
                Ok(numbers::Stream::Number(n, next)) => {
                    assert_eq!(n, received, "out of order");
                    received += 1;
                    stream = next;
                }
                Ok(numbers::Stream::End(_)) => panic!("the client never ends"),
                // The bank's side sees its peer gone, and why.
                Err(error) => {
                    assert_eq!(error.cause(), Cause::ConnectionLost, "{error}");
                    return received;
                }
            }
        }
    })
    .await;
    let sent = within(10, client).await.unwrap();
    assert!(received <= sent, "{received} received of {sent} sent");
}

/// A payload whose serialization fails (serde allows it).
#[derive(Debug)]
pub struct Unwritable;

impl serde::Serialize for Unwritable {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        Err(serde::ser::Error::custom("this value cannot be written"))
    }
}

impl<'de> serde::Deserialize<'de> for Unwritable {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <()>::deserialize(deserializer).map(|()| Unwritable)
    }
}

pipes::proto! {
    /// A message whose payload cannot be written.
    #[wire]
    pub letters {
        Start: send { Post(Unwritable) -> Start, Done -> ! }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_that_does_not_serialize_aborts_the_session() {
    let (_nodes, start, mut raw) = typed_client_raw_server::<letters::Wire>().await;
    let _ = start.post(Unwritable).unwrap();
    match within(5, raw.recv_async()).await {
        Err(SessionError::Aborted(why)) => assert!(why.contains("could not be sent"), "{why}"),
        other => panic!("expected an abort, got {other:?}"),
    }
}

pipes::proto! {
    /// A question whose payload cannot be written, and its answer.
    #[wire]
    pub asking {
        Ask: send { Question(Unwritable) -> Answer }
        Answer: recv { Reply -> ! }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_that_does_not_serialize_fails_the_next_receive_as_aborted() {
    let (_nodes, ask, _raw) = typed_client_raw_server::<asking::Wire>().await;
    // The send is local and succeeds; the pump cannot write it, aborts the session, and closes
    // the endpoint the answer would come from.
    let answer = ask.question(Unwritable).unwrap();
    let error = within(5, answer.recv_async()).await.unwrap_err();
    assert_eq!(error.cause(), Cause::Aborted, "{error}");
}

/// A payload whose `Serialize` panics: user code, which the pump runs.
#[derive(Debug)]
pub struct PanicsWritten;

impl serde::Serialize for PanicsWritten {
    fn serialize<S: serde::Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
        panic!("PanicsWritten::serialize (a test's panic, meant)")
    }
}

impl<'de> serde::Deserialize<'de> for PanicsWritten {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        <()>::deserialize(deserializer).map(|()| PanicsWritten)
    }
}

/// A payload whose `Deserialize` panics.
#[derive(Debug)]
pub struct PanicsRead;

impl serde::Serialize for PanicsRead {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_unit()
    }
}

impl<'de> serde::Deserialize<'de> for PanicsRead {
    fn deserialize<D: serde::Deserializer<'de>>(_: D) -> Result<Self, D::Error> {
        panic!("PanicsRead::deserialize (a test's panic, meant)")
    }
}

pipes::proto! {
    /// Questions whose payloads panic when written or read.
    #[wire]
    pub panicking {
        Ask: send { Question(PanicsWritten) -> Answer, Hello -> Answer }
        Answer: recv { Reply(PanicsRead) -> ! }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_whose_serialize_panics_aborts_the_session_on_both_ends() {
    let ((_client_node, conn, _server_node), ask, mut raw) =
        typed_client_raw_server::<panicking::Wire>().await;
    // The send is local and succeeds; the pump's serialization panics.
    let answer = ask.question(PanicsWritten).unwrap();
    let local = within(5, answer.recv_async()).await.unwrap_err();
    assert_eq!(local.cause(), Cause::Aborted, "{local}");
    match within(5, raw.recv_async()).await {
        Err(SessionError::Aborted(why)) => assert!(why.contains("Serialize panicked"), "{why}"),
        other => panic!("expected an abort, got {other:?}"),
    }
    // Only the session ends.
    assert!(conn.failure().is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_whose_deserialize_panics_aborts_the_session_on_both_ends() {
    let ((_client_node, conn, _server_node), ask, mut raw) =
        typed_client_raw_server::<panicking::Wire>().await;
    let answer = ask.hello().unwrap();
    let hello = within(5, raw.recv_async()).await.unwrap();
    assert_eq!((hello.state, hello.msg), (0, 1));
    // A Reply with an empty payload, which the client's pump decodes as a `PanicsRead`: it panics.
    raw.send_async(1, 0, &()).await.unwrap();
    let local = within(5, answer.recv_async()).await.unwrap_err();
    assert_eq!(local.cause(), Cause::Aborted, "{local}");
    match within(5, raw.recv_async()).await {
        Err(SessionError::Aborted(why)) => {
            assert!(why.contains("Deserialize panicked"), "{why}");
        }
        other => panic!("expected an abort, got {other:?}"),
    }
    assert!(conn.failure().is_none());
}

pipes::proto! {
    /// One message, once: its sessions are a single packet.
    #[wire]
    pub wake_up {
        Sleeping: recv { Ring(u8) -> ! }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_peer_that_goes_silent_fails_the_receive_as_a_timeout() {
    use common::{Fault, Faulty, pair_over};
    let (a, b) = tokio::io::duplex(64 << 10);
    // Once armed, the client's node reads nothing for longer than the heartbeat timeout (1 s).
    let (a, armed) = Faulty::new(a, Fault::Delay(Duration::from_secs(3)));
    let (_client_node, conn, server_node, _) = pair_over(quick(), a, b).await;
    let mut incoming = server_node.incoming::<wake_up::Wire>();
    let (sleeping, _ringer) = tokio::join!(
        async { conn.client_async::<wake_up::Wire>().await.unwrap() },
        async { within(5, incoming.accept_async()).await.unwrap() }
    );
    armed.store(true, std::sync::atomic::Ordering::Release);
    let error = within(10, sleeping.recv_async()).await.unwrap_err();
    assert_eq!(error.cause(), Cause::Timeout, "{error}");
    assert!(error.to_string().contains("heartbeat"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn twenty_sessions_at_once_on_one_connection_each_keep_their_own_state() {
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<bank::Wire>();
    let bank = tokio::spawn(async move {
        let mut served = Vec::new();
        for _ in 0..20 {
            let login = within(5, incoming.accept_async()).await.unwrap();
            served.push(tokio::task::spawn_blocking(move || serve_bank(login)));
        }
        for session in served {
            within(10, session).await.unwrap();
        }
    });
    let customers: Vec<_> = (0..20)
        .map(|_| {
            let conn = conn.clone();
            tokio::spawn(async move {
                let login = conn.client_async::<bank::Wire>().await.unwrap();
                tokio::task::spawn_blocking(move || use_bank(login))
                    .await
                    .unwrap()
            })
        })
        .collect();
    for customer in customers {
        assert_eq!(
            within(10, customer).await.unwrap(),
            [Some(30), None, Some(70)]
        );
    }
    within(10, bank).await.unwrap();
}

#[tokio::test]
async fn incoming_ends_when_its_node_shuts_down() {
    let (_client_node, _conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<bank::Wire>();
    drop(server_node);
    assert!(within(5, incoming.accept_async()).await.is_none());
}

#[test]
fn ranks_of_a_cluster_open_typed_sessions_with_each_other() {
    watchdog(30, || {
        // A free port on loopback for the rendezvous (bound, then released).
        let rendezvous = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        let ranks: Vec<_> = (0..3)
            .map(|rank| {
                std::thread::spawn(move || {
                    let cluster = pipes::net::Cluster::builder()
                        .rank(rank)
                        .size(3)
                        .rendezvous(rendezvous)
                        .timeout(Duration::from_secs(20))
                        .config(quick())
                        .join()
                        .unwrap();
                    let got = if rank == 0 {
                        // The bank, for each other rank apart: a session from rank 1 reaches
                        // only the first `incoming`.
                        let banks: Vec<_> = (1..3)
                            .map(|customer| {
                                let mut incoming = cluster.incoming::<bank::Wire>(customer);
                                std::thread::spawn(move || serve_bank(incoming.accept().unwrap()))
                            })
                            .collect();
                        for bank in banks {
                            bank.join().unwrap();
                        }
                        Vec::new()
                    } else {
                        use_bank(cluster.client::<bank::Wire>(0).unwrap())
                    };
                    cluster.finish().unwrap();
                    got
                })
            })
            .collect();
        let got: Vec<_> = ranks.into_iter().map(|rank| rank.join().unwrap()).collect();
        assert_eq!(
            got,
            [
                vec![],
                vec![Some(30), None, Some(70)],
                vec![Some(30), None, Some(70)]
            ]
        );
    });
}

/// A payload whose drop panics on the side that sent it (`armed` does not cross the wire).
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub struct Bomb {
    n: u64,
    #[serde(skip)]
    armed: bool,
}

impl Drop for Bomb {
    fn drop(&mut self) {
        if self.armed && !std::thread::panicking() {
            panic!("a payload's drop panicked (on purpose)");
        }
    }
}

pipes::proto! {
    /// Payloads that blow up when the sending side drops them.
    #[wire]
    pub bombs {
        Start: send { Bomb(Bomb) -> Start, Done -> ! }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_payload_whose_drop_panics_in_the_pump_ends_only_its_session() {
    let (client_node, conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<bombs::Wire>();
    let (start, remote) = tokio::join!(
        async { conn.client_async::<bombs::Wire>().await.unwrap() },
        async { within(5, incoming.accept_async()).await.unwrap() }
    );
    // The pump forwards the bomb, then drops it and panics: its task ends, and with it the
    // session, whose two users see it closed instead of waiting forever.
    let mut start = Some(start.bomb(Bomb { n: 1, armed: true }).unwrap());
    let bombs::Start::Bomb(bomb, remote) = within(5, remote.recv_async()).await.unwrap() else {
        panic!("not the bomb")
    };
    assert_eq!(bomb.n, 1);
    let error = within(5, remote.recv_async()).await.unwrap_err();
    assert_eq!(error.cause(), Cause::Closed, "{error}");
    // The sender's next sends fail once the pump's endpoint is gone (one may still be taken
    // by the lane before that).
    within(5, async {
        while let Some(endpoint) = start.take() {
            match endpoint.bomb(Bomb { n: 2, armed: false }) {
                Ok(next) => start = Some(next),
                Err(pipes::SendError(bomb)) => assert_eq!(bomb.n, 2),
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    })
    .await;
    // The nodes go on: another session on the same connection works, and both shut down.
    let (start, remote) = tokio::join!(
        async { conn.client_async::<bombs::Wire>().await.unwrap() },
        async { within(5, incoming.accept_async()).await.unwrap() }
    );
    start.done().unwrap();
    assert!(matches!(
        within(5, remote.recv_async()).await.unwrap(),
        bombs::Start::Done
    ));
    within(10, async {
        client_node.shutdown().await;
        server_node.shutdown().await;
    })
    .await;
}

/// Test settings with a credit window of `window` messages.
fn window_of(window: u64) -> pipes::net::Config {
    pipes::net::Config {
        window: window as u32,
        ..quick()
    }
}

/// A listening node and another, each on its own thread, with a credit window of `window`.
fn nodes_with_window(window: u64) -> (Node, SocketAddr, Node) {
    nodes(window_of(window))
}

/// A listening node, its address, and another node, each on its own thread, both with `config`.
fn nodes(config: pipes::net::Config) -> (Node, SocketAddr, Node) {
    let server = Node::builder()
        .listen("127.0.0.1:0".parse().unwrap())
        .config(config)
        .start()
        .unwrap();
    let addr = server.local_addr().unwrap();
    let client = Node::builder().config(config).start().unwrap();
    (server, addr, client)
}

/// A reader that stops reading: with `wait_writable` before each send, the typed sender stops
/// `2 * WINDOW + 1` messages ahead (the window on the wire, one in the pump waiting for credit,
/// and the window in the lane to the pump), however long it tries; once the reader catches
/// up, every message arrives in order and there is room again.
#[test]
fn a_sender_that_waits_for_room_stops_two_windows_ahead_of_a_reader_that_stopped() {
    const WINDOW: u64 = 16;
    watchdog(60, || {
        let (server_node, addr, client_node) = nodes_with_window(WINDOW);
        // A raw session grants credit only as it receives, so not receiving stops the sender.
        let mut acceptor =
            server_node.serve(<numbers::Wire as WireProtocol>::PROTOCOL, Role::Server);
        let mut stream = client_node.client::<numbers::Wire>(addr).unwrap();
        let mut session = acceptor.accept().unwrap();
        let mut sent = 0;
        while pipes::net::wait_writable_timeout(&stream, Duration::from_secs(1)) {
            assert!(
                sent < 2 * WINDOW + 1,
                "room for more than {sent} with no reader"
            );
            stream = stream.number(sent).unwrap();
            sent += 1;
        }
        assert_eq!(sent, 2 * WINDOW + 1);
        for n in 0..sent {
            assert_eq!(session.recv().unwrap().decode::<u64>().unwrap(), n);
        }
        assert!(pipes::net::wait_writable_timeout(
            &stream,
            Duration::from_secs(5)
        ));
        let _tally = stream.end().unwrap();
    });
}

/// The same with a spawned task: `writable` resolves to the endpoint, and `cancel` hands it
/// back from a wait that timed out.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_task_waits_for_room_with_writable_and_gets_its_endpoint_back_on_a_timeout() {
    const WINDOW: u64 = 8;
    within(60, async {
        let config = window_of(WINDOW);
        let server_node = Node::builder()
            .listen("127.0.0.1:0".parse().unwrap())
            .config(config)
            .start_async()
            .await
            .unwrap();
        let addr = server_node.local_addr().unwrap();
        let mut acceptor =
            server_node.serve(<numbers::Wire as WireProtocol>::PROTOCOL, Role::Server);
        let client_node = Node::builder().config(config).start_async().await.unwrap();
        let mut stream = client_node
            .client_async::<numbers::Wire>(addr)
            .await
            .unwrap();
        let mut session = acceptor.accept_async().await.unwrap();
        // In a spawned task, so the wait is `Send` (it holds the endpoint and a task waiter).
        let (stream, sent) = tokio::spawn(async move {
            let mut sent = 0;
            loop {
                let mut writable = pipes::net::writable(stream);
                match tokio::time::timeout(Duration::from_secs(1), &mut writable).await {
                    Ok(ready) => stream = ready.number(sent).unwrap(),
                    Err(_) => return (writable.cancel(), sent),
                }
                sent += 1;
                assert!(sent <= 2 * WINDOW + 1, "room for {sent} with no reader");
            }
        })
        .await
        .unwrap();
        assert_eq!(sent, 2 * WINDOW + 1);
        for n in 0..sent {
            let message = session.recv_async().await.unwrap();
            assert_eq!(message.decode::<u64>().unwrap(), n);
        }
        let stream = pipes::net::writable(stream).await;
        let _tally = stream.end().unwrap();
    })
    .await;
}

/// The other side of the bound: a typed reader that stops reading stops its peer's sends. Its
/// pump receives (and so hands the peer credit) only while the user has less than a window
/// left to take, so the reader's node holds at most a window in the lane and a window in the
/// session, and the writer's `send` waits for credit meanwhile.
#[test]
fn a_reader_that_stops_reading_stops_the_writer_two_windows_on() {
    const WINDOW: u64 = 16;
    const N: u64 = 200;
    watchdog(60, || {
        let (server_node, addr, client_node) = nodes_with_window(WINDOW);
        let mut incoming = server_node.incoming::<numbers::Wire>();
        let mut session = client_node
            .open(
                addr,
                <numbers::Wire as WireProtocol>::PROTOCOL,
                Role::Client,
            )
            .unwrap();
        let sent = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
        let writer = std::thread::spawn({
            let sent = sent.clone();
            move || {
                for n in 0..N {
                    session.send(0, 0, &n).unwrap();
                    sent.store(n + 1, std::sync::atomic::Ordering::SeqCst);
                }
                session.send(0, 1, &()).unwrap();
                let count = session.recv().unwrap();
                assert_eq!((count.state, count.msg), (1, 0));
                count.decode::<(u64, u64)>().unwrap()
            }
        });
        let mut stream = incoming.accept().unwrap();
        // Until the writer has been stuck for a while.
        let mut seen = u64::MAX;
        while seen != sent.load(std::sync::atomic::Ordering::SeqCst) {
            seen = sent.load(std::sync::atomic::Ordering::SeqCst);
            std::thread::sleep(Duration::from_millis(300));
        }
        assert!(
            (WINDOW..=2 * WINDOW).contains(&seen),
            "the writer sent {seen} to a reader that read nothing"
        );
        let mut count = 0;
        let tally = loop {
            match stream.recv().unwrap() {
                numbers::Stream::Number(n, next) => {
                    assert_eq!(n, count, "out of order");
                    count += 1;
                    stream = next;
                }
                numbers::Stream::End(tally) => break tally,
            }
        };
        assert_eq!(count, N);
        tally.count(N, N * (N - 1) / 2).unwrap();
        assert_eq!(writer.join().unwrap(), (N, N * (N - 1) / 2));
    });
}

/// A reader's node dropped while its pump waits for the user to read: the drop does not wait
/// for that pump (it has nothing to put on the wire), and the user still takes what was
/// delivered, then learns the connection is gone.
#[test]
fn a_node_dropped_while_its_pump_waits_for_the_user_to_read_fails_the_receive_after_the_rest() {
    const WINDOW: u64 = 8;
    watchdog(60, || {
        let (server_node, addr, client_node) = nodes_with_window(WINDOW);
        let mut incoming = server_node.incoming::<numbers::Wire>();
        let session = client_node
            .open(
                addr,
                <numbers::Wire as WireProtocol>::PROTOCOL,
                Role::Client,
            )
            .unwrap();
        let mut stream = incoming.accept().unwrap();
        for n in 0..2 * WINDOW {
            session.send(0, 0, &n).unwrap();
        }
        // The pump has delivered a window and waits for the user to take some.
        std::thread::sleep(Duration::from_millis(200));
        let dropped = std::time::Instant::now();
        drop(server_node);
        assert!(
            dropped.elapsed() < Duration::from_secs(3),
            "the drop waited {:?} for a pump waiting on its user",
            dropped.elapsed()
        );
        let mut taken = 0;
        let error = loop {
            match stream.recv() {
                Ok(numbers::Stream::Number(n, next)) => {
                    assert_eq!(n, taken);
                    taken += 1;
                    stream = next;
                }
                Ok(numbers::Stream::End(_)) => panic!("an end nobody sent"),
                Err(error) => break error,
            }
        };
        assert!(taken >= WINDOW, "took only {taken}");
        assert_eq!(error.cause(), Cause::ConnectionLost, "{error}");
    });
}

pipes::proto! {
    /// A message this build compiles out. The fingerprint leaves attributes out and the
    /// message keeps its index, so a build with it compiled in has the same fingerprint and
    /// may send it.
    #[wire]
    pub gated {
        Start: send {
            A(u8) -> !,
            #[cfg(any())]
            B(u16) -> !,
        }
    }
}

/// A peer sends the message this end compiled out (index 1 of a state of two messages, so
/// `Pump::remote` lets it through): the generated pump's arm for it is compiled out, and its
/// fallback arm (`_ => None` in `codegen/wire.rs`, `off_the_wire`) ends the pump with no
/// violation. Its drop then closes the session cleanly, so the peer sees `PeerClosed`, and the
/// held endpoint closes with no cause set, so the user sees `ConnectionLost`: neither hears
/// that the peer sent a message this end cannot take.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_message_this_build_compiled_out_is_a_violation() {
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<gated::Wire>();
    let protocol = <gated::Wire as WireProtocol>::PROTOCOL;
    let (mut raw, start) = tokio::join!(
        async { conn.open_async(protocol, Role::Client).await.unwrap() },
        async { within(5, incoming.accept_async()).await.unwrap() }
    );
    // `B(u16)`, as a build with it compiled in sends it.
    raw.send_async(0, 1, &7u16).await.unwrap();
    let peer = within(5, raw.recv_async()).await;
    let user = within(5, start.recv_async()).await;
    assert!(
        matches!(peer, Err(SessionError::Violation(_))),
        "the peer that sent a message this end compiled out got {peer:?}, not a violation"
    );
    let Err(error) = user else {
        panic!("a message this end compiled out was delivered");
    };
    assert_eq!(error.cause(), Cause::Violation, "{error}");
}

/// The user sent, and its node's runtime ended before the pump took the message (a
/// `start_async` node whose runtime was dropped): the user's receive must fail, and say the
/// connection is gone, as it does for a pump dropped while it waits on the peer (`Held`'s
/// drop closes with `ConnectionLost`). The pump was waiting on the local endpoint
/// (`Pump::local`): a plain `RecvFuture` there dropped the endpoint, and the message in its
/// lane, with no cause, which the user read as `Closed`.
#[test]
fn a_typed_session_outliving_its_nodes_runtime_fails_the_receive_as_connection_lost() {
    let error = login_after_the_nodes_runtime_ended(true);
    assert_eq!(error.cause(), Cause::ConnectionLost, "{error}");
}

/// As above, but the node's runtime ends before the pump's task is ever polled (it was
/// spawned as `client_async` returned, and nothing ran the runtime after): the pump's future
/// still holds its start state's endpoint, whose drop must say the connection is gone too.
#[test]
fn a_typed_session_whose_pump_never_ran_fails_the_receive_as_connection_lost() {
    let error = login_after_the_nodes_runtime_ended(false);
    assert_eq!(error.cause(), Cause::ConnectionLost, "{error}");
}

/// A `bank` client of a node on a runtime of its own, which ends (once the pump ran and waits
/// on the local endpoint, if `pump_ran`) before the pump takes the user's `Login`: the error of
/// the user's receive of the answer.
fn login_after_the_nodes_runtime_ended(pump_ran: bool) -> pipes::RecvError {
    watchdog(30, move || {
        let (server_node, addr) = listening();
        let mut incoming = server_node.incoming::<bank::Wire>();
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        let (node, login) = runtime.block_on(async {
            let node = Node::builder().config(quick()).start_async().await.unwrap();
            let login = node.client_async::<bank::Wire>(addr).await.unwrap();
            if pump_ran {
                // The pump runs, and waits on the local endpoint for the user's `Login`.
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
            (node, login)
        });
        let _server = incoming.accept().unwrap();
        // The runtime is not running: the message waits in the lane to the pump.
        let response = login.login("ann".into(), "pw".into()).unwrap();
        drop(runtime);
        let error = response.recv().unwrap_err();
        drop(node);
        error
    })
}

/// A recursive payload type, as a tree or a list is: each level is one byte in postcard.
#[derive(Debug, serde::Serialize, serde::Deserialize)]
pub enum Nest {
    /// The innermost level.
    End,
    /// One level more.
    More(Box<Nest>),
}

pipes::proto! {
    /// A protocol whose payload nests.
    #[wire]
    pub nests {
        Start: send { Tree(Nest) -> ! }
    }
}

/// A hostile peer sends a payload of a recursive type nested a million deep (1 MB, far under
/// the 64 MiB `max_message`). The pump decodes it on the node's runtime with postcard, which
/// has no recursion limit (serde_json stops at 128): the decode recurses once per level and
/// overflows the worker thread's stack, which aborts the whole process (`catch_unwind` in
/// `Pump::take` cannot catch that). Expected: the session is refused as a violation, the
/// process lives. Run in a child process of this test binary, so that the abort fails this
/// test alone.
#[test]
fn a_deeply_nested_payload_from_a_peer_is_a_violation_not_a_stack_overflow() {
    const VICTIM: &str = "PIPES_TEST_NESTED_PAYLOAD_VICTIM";
    const NAME: &str = "a_deeply_nested_payload_from_a_peer_is_a_violation_not_a_stack_overflow";
    if std::env::var_os(VICTIM).is_some() {
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (_client_node, conn, server_node, _) = pair(quick()).await;
            let mut incoming = server_node.incoming::<nests::Wire>();
            let protocol = <nests::Wire as WireProtocol>::PROTOCOL;
            let (mut raw, _start) = tokio::join!(
                async { conn.open_async(protocol, Role::Client).await.unwrap() },
                async { within(5, incoming.accept_async()).await.unwrap() }
            );
            // `More(More(...(End)))`: variant 1 a million times, then variant 0.
            let mut bytes = vec![1u8; 1 << 20];
            bytes.push(0);
            raw.send_async(0, 0, &BytesPayload(bytes)).await.unwrap();
            let answer = within(20, raw.recv_async()).await;
            assert!(
                matches!(answer, Err(SessionError::Violation(_))),
                "{answer:?}"
            );
        });
        return;
    }
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([NAME, "--exact", "--nocapture", "--test-threads=1"])
        .env(VICTIM, "1")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let started = std::time::Instant::now();
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if started.elapsed() > Duration::from_secs(60) {
            let _ = child.kill();
            panic!("the victim process still runs after 60 s (a hang)");
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    let mut stderr = String::new();
    std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr).unwrap();
    let tail: String = stderr.lines().rev().take(4).collect::<Vec<_>>().join(" | ");
    assert!(
        status.success(),
        "a peer's nested payload killed the node's process: {status}; stderr ends: {tail}"
    );
}

/// An accept given up on (a timeout) loses no session: the next accept takes the one opened
/// after, and it works.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_accept_given_up_on_loses_no_session() {
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let mut incoming = server_node.incoming::<bank::Wire>();
    let nothing = tokio::time::timeout(Duration::from_millis(50), incoming.accept_async()).await;
    assert!(nothing.is_err());
    let login = within(5, conn.client_async::<bank::Wire>()).await.unwrap();
    let response = login.login("ann".into(), "pw".into()).unwrap();
    let server = within(5, incoming.accept_async()).await.unwrap();
    let bank::Login::Login(user, _, reply) = within(5, server.recv_async()).await.unwrap();
    assert_eq!(user, "ann");
    let _connected = reply.logged_in().unwrap();
    assert!(matches!(
        within(5, response.recv_async()).await.unwrap(),
        bank::LoginResponse::LoggedIn(_)
    ));
}

/// A typed reader that drops its endpoint while its pump waits for it to read (an unbounded
/// protocol's `Pump::room`): the pump wakes, and the writer's session ends as closed, no hang.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_reader_dropping_its_endpoint_while_its_pump_waits_for_room_closes_the_writer() {
    const WINDOW: u64 = 8;
    let config = window_of(WINDOW);
    let (_client_node, conn, server_node, _) = pair(config).await;
    let mut incoming = server_node.incoming::<numbers::Wire>();
    let protocol = <numbers::Wire as WireProtocol>::PROTOCOL;
    let (raw, stream) = tokio::join!(
        async { conn.open_async(protocol, Role::Client).await.unwrap() },
        async { within(5, incoming.accept_async()).await.unwrap() }
    );
    let writer = tokio::spawn(async move {
        for n in 0..10 * WINDOW {
            if let Err(error) = raw.send_async(0, 0, &n).await {
                return (raw, Some(error));
            }
        }
        (raw, None)
    });
    // The pump has delivered a window to the reader and waits for it.
    tokio::time::sleep(Duration::from_millis(300)).await;
    drop(stream);
    let (mut raw, failed) = within(5, writer).await.unwrap();
    if let Some(error) = failed {
        assert!(matches!(error, SessionError::PeerClosed), "{error}");
    }
    let end = within(5, raw.recv_async()).await.unwrap_err();
    assert!(matches!(end, SessionError::PeerClosed), "{end}");
}

pipes::proto! {
    /// A bounded protocol whose client sends twice in a row: two messages may be in flight.
    #[wire]
    pub twice {
        First: send { One(u8) -> Second }
        Second: send { Two(u8) -> Answer }
        Answer: recv { Sum(u16) -> ! }
    }
}

/// `Config::window` also caps the messages a bounded protocol's peer may have waiting (past it
/// the session is aborted as a violation), on the ground that "its states hold a message each
/// at most". But a bounded protocol may send several times in a row (here twice: two states of
/// one direction, no cycle), so a node whose window is smaller than that run aborts a peer
/// that follows the protocol, as soon as the messages wait (here, for the accept).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bounded_protocol_sending_twice_in_a_row_is_no_violation_under_a_window_of_one() {
    let config = window_of(1);
    let (_client_node, conn, server_node, _) = pair(config).await;
    let mut incoming = server_node.incoming::<twice::Wire>();
    let first = within(5, conn.client_async::<twice::Wire>()).await.unwrap();
    let answer = first.one(1).unwrap().two(2).unwrap();
    // Both wait at the server's node until the server accepts.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let first = within(5, incoming.accept_async()).await.unwrap();
    let received = within(5, async {
        let twice::First::One(one, second) = first.recv_async().await?;
        let twice::Second::Two(two, answer) = second.recv_async().await?;
        Ok::<_, pipes::RecvError>((one, two, answer))
    })
    .await;
    let (one, two, reply) = received.unwrap_or_else(|error| {
        panic!("a peer that followed the bounded protocol was cut off: {error}")
    });
    reply.sum(u16::from(one) + u16::from(two)).unwrap();
    let twice::Answer::Sum(sum) = within(5, answer.recv_async()).await.unwrap();
    assert_eq!(sum, 3);
}

/// A careless user's node opens a session with its own listening address: it dials itself,
/// and the session runs over that loopback connection like any other.
#[test]
fn a_node_that_opens_a_session_with_itself_serves_it() {
    watchdog(20, || {
        let (node, addr) = listening();
        let incoming = node.incoming::<bank::Wire>();
        let server = std::thread::spawn(move || {
            for login in incoming.take(1) {
                serve_bank(login);
            }
        });
        let login = node.client::<bank::Wire>(addr).unwrap();
        assert_eq!(use_bank(login), [Some(30), None, Some(70)]);
        server.join().unwrap();
    });
}

/// A node started on a runtime of its own (`start_async`) whose runtime ends while a thread
/// waits in `Incoming::accept`: no session can arrive any more (the listener and every
/// connection went with the runtime), so the accept must end (`None`, as for a node that shut
/// down), as a `RawSession` outliving its node's runtime fails instead of waiting. (The
/// acceptor's sender lives in the node's registry, which only the node's shutdown cleared.)
#[test]
fn incoming_ends_when_its_nodes_runtime_is_gone() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let node = runtime.block_on(async {
        Node::builder()
            .listen("127.0.0.1:0".parse().unwrap())
            .config(quick())
            .start_async()
            .await
            .unwrap()
    });
    let mut incoming = node.incoming::<bank::Wire>();
    drop(runtime);
    let (done, accepted) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = done.send(incoming.accept().is_none());
    });
    let ended = accepted.recv_timeout(Duration::from_secs(5));
    drop(node);
    assert_eq!(
        ended,
        Ok(true),
        "an accept on a node whose runtime is gone still waits after 5 s (a hang)"
    );
}

mod orders {
    pipes::proto! {
        /// A protocol named like another of the program's (`events`), in a module of its own.
        #[wire]
        pub events {
            Start: send { Order(u64) -> ! }
        }
    }
}

mod alerts {
    pipes::proto! {
        /// Another protocol named `events`, with other messages.
        #[wire]
        pub events {
            Start: send { Alert(String) -> ! }
        }
    }
}

/// Two different `#[wire]` protocols that happen to share a name (in two modules, or two
/// crates): a node serving both keys them by name alone (`Node::serve`'s registry), so serving
/// the second silently replaces the first. The first `Incoming` ends (`None`, as if the node
/// had shut down), and peers opening the first are refused as incompatible. `Node::incoming`'s
/// docs say only that serving `P` again replaces its `Incoming`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_protocols_sharing_a_name_can_be_served_by_one_node() {
    let (_client_node, conn, server_node, _) = pair(quick()).await;
    let mut orders = server_node.incoming::<orders::events::Wire>();
    let _alerts = server_node.incoming::<alerts::events::Wire>();
    let opened = within(5, conn.client_async::<orders::events::Wire>()).await;
    let start = opened.unwrap_or_else(|error| {
        panic!("opening the first protocol after the second was served: {error}")
    });
    start.order(7).unwrap();
    let served = within(5, orders.accept_async()).await;
    assert!(served.is_some(), "the first protocol's Incoming ended");
}

/// How many [`Counted`] payloads exist: every one made (by the user or by a decode) and not
/// yet dropped.
static COUNTED: std::sync::atomic::AtomicIsize = std::sync::atomic::AtomicIsize::new(0);

/// A payload that counts itself in [`COUNTED`].
#[derive(Debug, serde::Serialize)]
pub struct Counted(u64);

impl Counted {
    fn new(n: u64) -> Self {
        COUNTED.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        Counted(n)
    }
}

impl<'de> serde::Deserialize<'de> for Counted {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        u64::deserialize(deserializer).map(Counted::new)
    }
}

impl Drop for Counted {
    fn drop(&mut self) {
        COUNTED.fetch_sub(1, std::sync::atomic::Ordering::SeqCst);
    }
}

pipes::proto! {
    /// An unbounded stream of counted payloads.
    #[wire]
    pub tally {
        Stream: send { Item(Counted) -> Stream, End -> ! }
    }
}

/// Payloads sent past a credit window of 2, to a user who never reads, are in every place a
/// payload can wait when both nodes are dropped: the sender's lane to its pump, the pump
/// waiting for credit, the receiver's pump and its lane to the user. Once the endpoints are
/// dropped too, every payload made (100 by the user, and each decode on the other side) must
/// have been dropped: none leaks with a pump, a lane or a connection.
#[test]
fn payloads_held_when_both_nodes_drop_are_all_dropped_with_the_endpoints() {
    watchdog(20, || {
        let config = pipes::net::Config {
            window: 2,
            shutdown_timeout: Duration::from_millis(200),
            ..quick()
        };
        let (server_node, addr, client_node) = nodes(config);
        let mut incoming = server_node.incoming::<tally::Wire>();
        let mut stream = client_node.client::<tally::Wire>(addr).unwrap();
        let served = incoming.accept().unwrap();
        for n in 0..100 {
            stream = stream.item(Counted::new(n)).unwrap();
        }
        // Time for the pumps to move what the windows let through.
        std::thread::sleep(Duration::from_millis(100));
        assert!(COUNTED.load(std::sync::atomic::Ordering::SeqCst) > 0);
        drop(client_node);
        drop(server_node);
        drop(incoming);
        // The sender learns of the loss; its payload comes back.
        let mut stream = Some(stream);
        let deadline = std::time::Instant::now() + Duration::from_secs(5);
        while let Some(endpoint) = stream.take() {
            match endpoint.item(Counted::new(1000)) {
                Ok(next) => stream = Some(next),
                Err(pipes::SendError(returned)) => assert_eq!(returned.0, 1000),
            }
            assert!(std::time::Instant::now() < deadline, "sends never failed");
            std::thread::sleep(Duration::from_millis(5));
        }
        drop(served);
        assert_eq!(COUNTED.load(std::sync::atomic::Ordering::SeqCst), 0);
    });
}

thread_local! {
    /// Where the thread-local test keeps its endpoint, dropped as its thread exits.
    static KEPT: std::cell::RefCell<Option<bank::client::Login>> =
        const { std::cell::RefCell::new(None) };
}

/// An endpoint of a remote session dropped by a thread-local destructor, as a thread that
/// keeps one there exits: with its node running (the pump closes the session), and after its
/// node and the node's runtime are gone. Neither may panic or hang, and the peer learns of
/// the end.
#[test]
fn an_endpoint_dropped_in_a_thread_local_destructor_closes_its_session() {
    watchdog(20, || {
        let (server_node, addr) = listening();
        let mut incoming = server_node.incoming::<bank::Wire>();
        let client_node = std::sync::Arc::new(Node::builder().config(quick()).start().unwrap());
        for node_first in [false, true] {
            let kept_by = std::thread::spawn({
                let client_node = client_node.clone();
                move || {
                    if node_first {
                        // A node of its own, on a runtime on this thread, both gone first.
                        let runtime = tokio::runtime::Builder::new_current_thread()
                            .enable_all()
                            .build()
                            .unwrap();
                        runtime.block_on(async {
                            let node = Node::builder().config(quick()).start_async().await.unwrap();
                            let login = node.client_async::<bank::Wire>(addr).await.unwrap();
                            KEPT.with(|kept| *kept.borrow_mut() = Some(login));
                            node.shutdown().await;
                        });
                        drop(runtime);
                    } else {
                        let login = client_node.client::<bank::Wire>(addr).unwrap();
                        KEPT.with(|kept| *kept.borrow_mut() = Some(login));
                    }
                }
            });
            let login = incoming.accept().unwrap();
            kept_by.join().unwrap();
            let error = login.recv().unwrap_err();
            let expected = if node_first {
                Cause::ConnectionLost
            } else {
                Cause::Closed
            };
            assert_eq!(error.cause(), expected, "node first: {node_first}: {error}");
        }
    });
}

/// Armed bombs wait in the lane to the client's pump (its credit window of 1 is spent) when
/// the client's node is dropped: the pump's end of the lane drops them, each drop panicking,
/// on the node's runtime. The drop of the node must still end, and both users learn the
/// session is over; the server's node goes on.
#[test]
fn payloads_whose_drop_panics_held_when_the_node_drops_end_only_their_session() {
    watchdog(20, || {
        let config = window_of(1);
        let config = pipes::net::Config {
            shutdown_timeout: Duration::from_millis(200),
            ..config
        };
        let (server_node, addr, client_node) = nodes(config);
        let mut incoming = server_node.incoming::<bombs::Wire>();
        let mut start = client_node.client::<bombs::Wire>(addr).unwrap();
        let mut served = incoming.accept().unwrap();
        // Disarmed ones first, to spend the window; the armed ones wait in the lane.
        for n in 0..3 {
            start = start.bomb(Bomb { n, armed: false }).unwrap();
        }
        for n in 3..6 {
            start = start.bomb(Bomb { n, armed: true }).unwrap();
        }
        std::thread::sleep(Duration::from_millis(100));
        let started = std::time::Instant::now();
        drop(client_node);
        assert!(started.elapsed() < Duration::from_secs(2));
        // The server's user gets what crossed, then the end.
        let error = loop {
            match served.recv() {
                Ok(bombs::Start::Bomb(bomb, next)) => {
                    assert!(bomb.n < 3, "bomb {} crossed", bomb.n);
                    served = next;
                }
                Ok(bombs::Start::Done) => panic!("done was never sent"),
                Err(error) => break error,
            }
        };
        assert_eq!(error.cause(), Cause::ConnectionLost, "{error}");
        // The client's user learns it at its next send, and gets the payload back.
        let Err(pipes::SendError(bomb)) = start.bomb(Bomb { n: 9, armed: false }) else {
            panic!("a send on a session whose node is gone went through")
        };
        assert_eq!(bomb.n, 9);
        // The server's node goes on.
        let other = Node::builder().config(config).start().unwrap();
        let start = other.client::<bombs::Wire>(addr).unwrap();
        let served = incoming.accept().unwrap();
        start.done().unwrap();
        assert!(matches!(served.recv().unwrap(), bombs::Start::Done));
    });
}

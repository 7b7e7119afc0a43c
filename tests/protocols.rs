//! End-to-end tests of generated protocols: the two sides on two threads, following the
//! tutorial and the 2012 test suite, and every way a peer can vanish mid-protocol.

use std::thread;
use std::time::Duration;

use pipes::{RecvTimeoutError, TryRecvError};

mod hello {
    pipes::proto! {
        pub simple_proto {
            StartState:send {
                SayHello -> StartState
            }
        }
    }
}

#[test]
fn tutorial_hello_says_hello_three_times() {
    use hello::simple_proto::{self, StartState};
    let (server, client) = simple_proto::init();
    let counter = thread::spawn(move || {
        let mut server = server;
        let mut hellos = 0;
        while let Ok(StartState::SayHello(next)) = server.recv() {
            hellos += 1;
            server = next;
        }
        hellos
    });
    let client = client
        .say_hello()
        .unwrap()
        .say_hello()
        .unwrap()
        .say_hello()
        .unwrap();
    drop(client);
    assert_eq!(counter.join().unwrap(), 3);
}

mod name {
    pipes::proto! {
        pub simple_proto {
            StartState:send {
                SayHello -> StartState,
                WhatsYourName -> GettingName
            }

            GettingName:recv {
                MyNameIs(String) -> StartState
            }
        }
    }
}

#[test]
fn tutorial_whats_your_name_is_answered() {
    use name::simple_proto::{self, GettingName, StartState};
    let (server, client) = simple_proto::init();
    let server = thread::spawn(move || {
        let mut server = server;
        let mut hellos = 0;
        loop {
            match server.recv() {
                Ok(StartState::SayHello(next)) => {
                    hellos += 1;
                    server = next;
                }
                Ok(StartState::WhatsYourName(asked)) => {
                    server = asked.my_name_is("Bob".to_string()).unwrap();
                }
                Err(_) => return hellos,
            }
        }
    });
    let client = client.say_hello().unwrap();
    let GettingName::MyNameIs(name, client) = client.whats_your_name().unwrap().recv().unwrap();
    assert_eq!(name, "Bob");
    client.say_hello().unwrap();
    assert_eq!(server.join().unwrap(), 2);
}

mod goodbye {
    pipes::proto! {
        pub simple_proto {
            StartState:send {
                GoodBye -> Done,
            }

            Done { }
        }
    }
}

mod the_end {
    pipes::proto! {
        pub simple_proto {
            StartState:send {
                GoodBye -> !
            }
        }
    }
}

#[test]
fn tutorial_goodbye_ends_the_protocol_both_ways() {
    // Stepping to a state with no messages.
    let (server, client) = goodbye::simple_proto::init();
    let _done: goodbye::simple_proto::client::Done = client.good_bye().unwrap();
    let goodbye::simple_proto::StartState::GoodBye(_done) = server.recv().unwrap();
    // Stepping to `!`: no endpoint comes back.
    let (server, client) = the_end::simple_proto::init();
    let () = client.good_bye().unwrap();
    assert!(matches!(
        server.recv().unwrap(),
        the_end::simple_proto::StartState::GoodBye
    ));
}

mod bank_proto {
    pipes::proto! {
        /// Online banking.
        pub bank {
            Login: send {
                Login(String, String) -> LoginResponse,
            }
            LoginResponse: recv {
                LoggedIn -> Connected,
                Invalid -> Login,
            }
            Connected: send {
                Deposit(u64) -> Connected,
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

use bank_proto::bank;

/// The bank: checks the password, then keeps a balance until the client logs out.
fn bank_server(login: bank::server::Login) -> u64 {
    let mut login = login;
    let mut connected = loop {
        let bank::Login::Login(user, password, response) = login.recv().unwrap();
        if user == "alice" && password == "secret" {
            break response.logged_in().unwrap();
        }
        login = response.invalid().unwrap();
    };
    let mut balance = 0;
    loop {
        connected = match connected.recv().unwrap() {
            bank::Connected::Deposit(amount, next) => {
                balance += amount;
                next
            }
            bank::Connected::Withdrawal(amount, response) if amount <= balance => {
                balance -= amount;
                response.money(amount).unwrap()
            }
            bank::Connected::Withdrawal(_, response) => response.insufficient_funds().unwrap(),
            bank::Connected::Logout => return balance,
        }
    }
}

#[test]
fn bank_failed_login_then_deposits_and_withdrawals_one_refused() {
    let (server, client) = bank::init();
    let server = thread::spawn(move || bank_server(server));

    let client = match client
        .login("alice".into(), "wrong".into())
        .unwrap()
        .recv()
        .unwrap()
    {
        bank::LoginResponse::Invalid(client) => client,
        bank::LoginResponse::LoggedIn(_) => panic!("a wrong password was accepted"),
    };
    let client = match client
        .login("alice".into(), "secret".into())
        .unwrap()
        .recv()
        .unwrap()
    {
        bank::LoginResponse::LoggedIn(client) => client,
        bank::LoginResponse::Invalid(_) => panic!("the right password was refused"),
    };
    let client = client.deposit(100).unwrap().deposit(50).unwrap();
    let client = match client.withdrawal(120).unwrap().recv().unwrap() {
        bank::WithdrawalResponse::Money(amount, client) => {
            assert_eq!(amount, 120);
            client
        }
        bank::WithdrawalResponse::InsufficientFunds(_) => panic!("120 of 150 was refused"),
    };
    let client = match client.withdrawal(31).unwrap().recv().unwrap() {
        bank::WithdrawalResponse::InsufficientFunds(client) => client,
        bank::WithdrawalResponse::Money(..) => panic!("31 of 30 was paid"),
    };
    client.logout().unwrap();
    assert_eq!(server.join().unwrap(), 30);
}

#[test]
fn bank_errors_name_the_protocol_and_state_and_hand_payloads_back() {
    let (server, client) = bank::init();
    drop(server);
    let error = client.login("bob".into(), "pw".into()).unwrap_err();
    assert_eq!(error.0, ("bob".to_string(), "pw".to_string()));

    let (server, client) = bank::init();
    drop(client);
    let error = server.recv().expect_err("the client is gone");
    assert_eq!((error.protocol(), error.state()), ("bank", "Login"));
}

mod pingpongs {
    pipes::proto! {
        pub pingpong {
            ping: send { ping(u64) -> pong }
            pong: recv { pong(u64) -> ping }
        }

        // As 2012's benchmark: an unreachable self-loop makes the same protocol unbounded.
        #[allow(unreachable_states)]
        pub pingpong_unbounded {
            ping: send { ping(u64) -> pong }
            pong: recv { pong(u64) -> ping }
            you_will_never_catch_me: send { never_ever_ever -> you_will_never_catch_me }
        }
    }
}

macro_rules! pingpong_test {
    ($name:ident, $proto:ident) => {
        #[test]
        fn $name() {
            use pingpongs::$proto::{self, ping, pong};
            let (server, client) = $proto::init();
            let echo = thread::spawn(move || {
                let mut server = server;
                while let Ok(ping::ping(n, reply)) = server.recv() {
                    server = reply.pong(n + 1).unwrap();
                }
            });
            let mut client = client;
            for i in 0..1000 {
                let pong::pong(n, next) = client.ping(i).unwrap().recv().unwrap();
                assert_eq!(n, i + 1);
                client = next;
            }
            drop(client);
            echo.join().unwrap();
        }
    };
}

pingpong_test!(pingpong_bounded_round_trips, pingpong);
pingpong_test!(pingpong_unbounded_round_trips, pingpong_unbounded);

mod future {
    pipes::proto! {
        /// A future: the start state is `recv`, so the client waits for the value.
        pub future_pipe {
            waiting: recv<T: Send> {
                completed(T) -> !
            }
        }
    }
}

#[test]
fn future_pipe_delivers_one_value_to_the_waiting_client() {
    let (server, client) = future::future_pipe::init::<String>();
    thread::spawn(move || {
        thread::sleep(Duration::from_millis(10));
        server.completed("forty-two".to_string()).unwrap();
    });
    let future::future_pipe::waiting::completed(value) = client.recv().unwrap();
    assert_eq!(value, "forty-two");
}

mod kv_proto {
    pipes::proto! {
        pub kv {
            Idle: send<K: Ord + Send, V: Clone + Send> {
                Put(K, V) -> Idle<K, V>,
                Get(K) -> Lookup<K, V>,
                Quit -> !,
            }
            Lookup: recv<K: Ord + Send, V: Clone + Send> {
                Found(V) -> Idle<K, V>,
                Missing -> Idle<K, V>,
            }
        }
    }
}

#[test]
fn a_generic_protocol_serves_a_map() {
    use kv_proto::kv::{self, Idle, Lookup};
    let (server, client) = kv::init::<String, u32>();
    let server = thread::spawn(move || {
        let mut map = std::collections::BTreeMap::new();
        let mut idle = server;
        loop {
            idle = match idle.recv().unwrap() {
                Idle::Put(k, v, next) => {
                    map.insert(k, v);
                    next
                }
                Idle::Get(k, lookup) => match map.get(&k) {
                    Some(&v) => lookup.found(v).unwrap(),
                    None => lookup.missing().unwrap(),
                },
                Idle::Quit => return map.len(),
            }
        }
    });
    let client = client
        .put("a".into(), 1)
        .unwrap()
        .put("b".into(), 2)
        .unwrap();
    let Lookup::Found(v, client) = client.get("b".into()).unwrap().recv().unwrap() else {
        panic!("b was stored");
    };
    assert_eq!(v, 2);
    let Lookup::Missing(client) = client.get("z".into()).unwrap().recv().unwrap() else {
        panic!("z was never stored");
    };
    client.quit().unwrap();
    assert_eq!(server.join().unwrap(), 2);
}

mod delegation {
    pipes::proto! {
        /// A job carries the endpoint its result must be sent on: delegation.
        pub jobs {
            Open: send { Job(u64, result::server::Waiting) -> Open, Close -> ! }
        }

        pub result {
            Waiting: recv { Done(u64) -> ! }
        }
    }
}

#[test]
fn delegation_an_endpoint_sent_inside_a_message_is_used_by_the_receiver() {
    use delegation::{jobs, result};
    let (workers, boss) = jobs::init();
    let worker = thread::spawn(move || {
        let mut jobs = workers;
        while let Ok(jobs::Open::Job(n, reply, next)) = jobs.recv() {
            reply.done(n * n).unwrap();
            jobs = next;
        }
    });
    let mut boss = boss;
    let mut waiting = Vec::new();
    for n in 1..=5 {
        let (result_server, result_client) = result::init();
        boss = boss.job(n, result_server).unwrap();
        waiting.push(result_client);
    }
    boss.close().unwrap();
    let squares: Vec<u64> = waiting
        .into_iter()
        .map(|w| {
            let result::Waiting::Done(n) = w.recv().unwrap();
            n
        })
        .collect();
    assert_eq!(squares, [1, 4, 9, 16, 25]);
    worker.join().unwrap();
}

#[test]
fn peers_vanish_at_every_step() {
    // The client gives up while the server waits for a login.
    let (server, client) = bank::init();
    let waiter = thread::spawn(move || server.recv().map(|_| ()));
    thread::sleep(Duration::from_millis(20));
    drop(client);
    assert!(waiter.join().unwrap().is_err());

    // The server panics after the login arrives: the client's wait for the answer ends.
    let (server, client) = bank::init();
    let server = thread::spawn(move || {
        let _login = server.recv().unwrap();
        panic!("the bank fails mid-protocol");
    });
    let error = client
        .login("a".into(), "b".into())
        .unwrap()
        .recv()
        .expect_err("the bank failed");
    assert_eq!(error.state(), "LoginResponse");
    assert!(server.join().is_err());

    // The server is gone: a deposit hands its amount back, and so does the next one.
    let (server, client) = bank::init();
    let server = thread::spawn(move || {
        let bank::Login::Login(_, _, response) = server.recv().unwrap();
        response.logged_in().unwrap()
    });
    let bank::LoginResponse::LoggedIn(client) = client
        .login("a".into(), "b".into())
        .unwrap()
        .recv()
        .unwrap()
    else {
        panic!("logged in");
    };
    drop(server.join().unwrap());
    assert_eq!(client.deposit(7).unwrap_err().into_inner(), 7);

    // try_recv and recv_timeout hand the endpoint back until the peer answers or vanishes.
    let (server, client) = pingpongs::pingpong::init();
    let pong = client.ping(1).unwrap();
    let pong = match pong.try_recv() {
        Err(TryRecvError::Empty(pong)) => pong,
        _ => panic!("nothing was sent yet"),
    };
    let pong = match pong.recv_timeout(Duration::from_millis(5)) {
        Err(RecvTimeoutError::Timeout(pong)) => pong,
        _ => panic!("nothing was sent yet"),
    };
    drop(server);
    assert!(matches!(
        pong.recv_timeout(Duration::from_secs(10)),
        Err(RecvTimeoutError::Disconnected(_))
    ));
}

#[test]
fn generated_endpoints_are_send_when_their_payloads_are() {
    fn is_send<T: Send>() {}
    is_send::<bank::client::Login>();
    is_send::<bank::server::Login>();
    is_send::<pingpongs::pingpong::client::ping>();
    is_send::<pingpongs::pingpong::server::pong>();
    is_send::<kv_proto::kv::client::Idle<String, Vec<u8>>>();
    // Not `Sync`: see tests/ui/fail/endpoint_is_not_sync.rs.
}

mod debug {
    /// A payload that does not implement `Debug`.
    pub struct Opaque;

    pipes::proto! {
        pub shown {
            Start: send<T: Send> { Pair(u32, T) -> Start<T>, Named(String) -> Done }
            Done: recv {}
        }
    }

    pipes::proto! {
        pub hidden {
            Start: send { Secret(Opaque) -> !, Plain(u8) -> ! }
        }
    }
}

/// `Debug` for a message enum exactly when its payloads implement it: the inherent constant
/// shadows the trait's only when its `where` clause holds (the "impls" trick).
struct IsDebug<T>(std::marker::PhantomData<T>);

trait NotDebug {
    const DEBUG: bool = false;
}

impl<T> NotDebug for IsDebug<T> {}

impl<T: std::fmt::Debug> IsDebug<T> {
    const DEBUG: bool = true;
}

#[test]
fn message_enums_are_debug_when_their_payloads_are() {
    use debug::{hidden, shown};
    const {
        assert!(IsDebug::<shown::Start<Vec<u8>>>::DEBUG);
        assert!(!IsDebug::<shown::Start<debug::Opaque>>::DEBUG);
        assert!(!IsDebug::<hidden::Start>::DEBUG);
    }

    let (server, client) = shown::init::<Vec<u8>>();
    let _client = client.pair(7, vec![1, 2]).unwrap();
    let message = server.recv().unwrap();
    assert_eq!(
        format!("{message:?}"),
        "Pair(7, [1, 2], shown::server::Start)"
    );
    let shown::Start::Pair(_, _, server) = message else {
        unreachable!()
    };
    drop(server);
    let (server, client) = shown::init::<u8>();
    client.named("n".to_string()).unwrap();
    assert_eq!(
        format!("{:?}", server.recv().unwrap()),
        r#"Named("n", shown::server::Done)"#
    );
}

mod unused_parameter {
    pipes::proto! {
        /// `Done` passes `T` on but none of its messages carries one.
        pub handoff {
            Give: send<T: Send> { Item(T) -> Done<T> }
            Done: recv<T: Send> { Thanks -> ! }
        }
    }
}

#[test]
fn a_generic_state_whose_messages_do_not_use_its_parameter_compiles_and_matches_exhaustively() {
    use unused_parameter::handoff;
    let (server, client) = handoff::init::<String>();
    let done = client.item("a".to_string()).unwrap();
    let handoff::Give::Item(item, thanks) = server.recv().unwrap();
    assert_eq!(item, "a");
    thanks.thanks().unwrap();
    // No arm for the hidden, uninhabited variant that uses `T`.
    match done.recv().unwrap() {
        handoff::Done::Thanks => {}
    }
}

// A `?Sized` parameter (the payload boxes it): the generated types keep the `?Sized`, which
// they used to drop (E0277 at the whole invocation; found by review 4).
pipes::proto! {
    pub boxed {
        Start: recv<T: ?Sized> { Boxed(Box<T>) -> ! }
    }
}

#[test]
fn a_state_generic_over_an_unsized_type() {
    let (server, client) = boxed::init::<str>();
    server.boxed(Box::from("unsized")).unwrap();
    let boxed::Start::Boxed(text) = client.recv().unwrap();
    assert_eq!(&*text, "unsized");
}

pipes::proto! {
    // The same over lanes (a loop) and over a session buffer (two states).
    pub boxed_stream {
        Stream: send<T: ?Sized> { Item(Box<T>) -> Stream<T>, End -> ! }
    }
    pub boxed_ask {
        Ask: send<T: ?Sized> { Question(Box<T>) -> Answer<T> }
        Answer: recv<T: ?Sized> { Reply(Box<T>) -> ! }
    }
}

#[test]
fn unsized_parameters_over_lanes_and_a_buffer() {
    let (server, client) = boxed_stream::init::<[u8]>();
    let client = client.item(Box::from(&b"ab"[..])).unwrap();
    client.end().unwrap();
    let boxed_stream::Stream::Item(bytes, server) = server.recv().unwrap() else {
        panic!("an item first")
    };
    assert_eq!(&*bytes, b"ab");
    assert!(matches!(server.recv().unwrap(), boxed_stream::Stream::End));

    let (server, client) = boxed_ask::init::<str>();
    let client = client.question(Box::from("why")).unwrap();
    let boxed_ask::Ask::Question(question, server) = server.recv().unwrap();
    assert_eq!(&*question, "why");
    server.reply(Box::from("because")).unwrap();
    let boxed_ask::Answer::Reply(reply) = client.recv().unwrap();
    assert_eq!(&*reply, "because");
}

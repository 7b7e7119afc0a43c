//! `select!` over generated endpoints: the tutorial's second version, `-> !` messages, the
//! `closed` and `timeout` arms, and expression position.

use std::thread;
use std::time::Duration;

mod tutorial {
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

        pub shout {
            Loud: send { Shout(String) -> Loud, Quiet -> ! }
        }

        pub feed {
            Open: send<T: Send> { Item(T, u8) -> Open<T>, Close -> ! }
        }
    }
}

use tutorial::shout::{self, Loud::*};
use tutorial::simple_proto::{self, StartState::*};

#[test]
fn tutorial_server_answers_whichever_client_speaks() {
    let (channel, client) = simple_proto::init();
    let (other, shouter) = shout::init();
    let clients = thread::spawn(move || {
        let client = client.say_hello().unwrap();
        let simple_proto::GettingName::MyNameIs(name, client) =
            client.whats_your_name().unwrap().recv().unwrap();
        drop(client);
        shouter.shout("hey".into()).unwrap().quiet().unwrap();
        name
    });
    let (mut channel, mut other) = (Some(channel), Some(other));
    let mut log = Vec::new();
    while channel.is_some() || other.is_some() {
        // Wait on whichever endpoints are still open.
        match (channel.take(), other.take()) {
            // In one endpoint's arms the other endpoint was not received from: keep it.
            (Some(ch), Some(ot)) => pipes::select! {
                ch => {
                    SayHello -> next {
                        log.push("hello".to_string());
                        (channel, other) = (Some(next), Some(ot));
                    },
                    WhatsYourName -> asked {
                        channel = Some(asked.my_name_is("Bob".into()).unwrap());
                        other = Some(ot);
                    },
                    closed => {
                        log.push("client gone".to_string());
                        other = Some(ot);
                    },
                },
                ot => {
                    Shout(text) -> next {
                        log.push(text);
                        (channel, other) = (Some(ch), Some(next));
                    },
                    Quiet -> ! {
                        log.push("quiet".to_string());
                        channel = Some(ch);
                    },
                },
            },
            (Some(ch), None) => pipes::select! {
                ch => {
                    SayHello -> next { log.push("hello".to_string()); channel = Some(next) },
                    WhatsYourName -> asked {
                        channel = Some(asked.my_name_is("Bob".into()).unwrap());
                    },
                    closed => { log.push("client gone".to_string()) },
                },
            },
            (None, Some(ot)) => pipes::select! {
                ot => {
                    Shout(text) -> next { log.push(text); other = Some(next) },
                    Quiet -> ! { log.push("quiet".to_string()) },
                },
            },
            (None, None) => unreachable!(),
        }
    }
    assert_eq!(clients.join().unwrap(), "Bob");
    // Each client's messages arrive in its own order; the two interleave freely.
    let simple: Vec<&String> = log
        .iter()
        .filter(|l| *l == "hello" || *l == "client gone")
        .collect();
    assert_eq!(simple, ["hello", "client gone"]);
    let loud: Vec<&String> = log
        .iter()
        .filter(|l| *l == "hey" || *l == "quiet")
        .collect();
    assert_eq!(loud, ["hey", "quiet"]);
}

#[test]
fn select_is_an_expression_and_picks_the_ready_endpoint() {
    let (quiet, _quiet_client) = shout::init();
    let (loud, loud_client) = shout::init();
    loud_client.shout("hi".into()).unwrap();
    let heard: String = pipes::select! {
        quiet => {
            Shout(text) -> _next { text },
            Quiet -> ! { "quiet".into() },
        },
        loud => {
            shout::Loud::Shout(text) -> _next { text.to_uppercase() },
            shout::Loud::Quiet -> ! { "QUIET".into() },
        },
    };
    assert_eq!(heard, "HI");
}

#[test]
fn timeout_arm_runs_when_nothing_arrives() {
    let (server, _client) = shout::init();
    let outcome = pipes::select! {
        server => {
            Shout(_text) -> _next { "message" },
            Quiet -> ! { "quiet" },
        },
        timeout(Duration::from_millis(10)) => { "timed out" },
    };
    assert_eq!(outcome, "timed out");
}

#[test]
#[should_panic(expected = "state `Loud` of protocol `shout`")]
fn a_closed_peer_without_a_closed_arm_panics_naming_protocol_and_state() {
    let (server, client) = shout::init();
    drop(client);
    pipes::select! {
        server => {
            Shout(_text) -> _next {},
            Quiet -> ! {},
        },
    }
}

#[test]
fn arms_of_a_generic_state_infer_its_parameters() {
    // `select!` checks each arm against its message's constructor, which is generic here: the
    // received message fixes `T`.
    use tutorial::feed::{self, Open::*};
    let (server, client) = feed::init::<Vec<u32>>();
    client.item(vec![1, 2], 3).unwrap().close().unwrap();
    let server = pipes::select! {
        server => {
            Item(items, count) -> next { assert_eq!((items, count), (vec![1, 2], 3)); next },
            Close -> ! { panic!("the item comes first") },
        },
    };
    let closed = pipes::select! {
        server => {
            Item(_, _) -> _next { false },
            Close -> ! { true },
        },
    };
    assert!(closed);
}

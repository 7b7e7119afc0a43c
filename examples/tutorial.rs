//! The 2012 protocol tutorial (seed 004, "Rust protocols"), in today's syntax: the three
//! versions of `simple_proto`, each a client and a server on two threads, the server written
//! with `select!` as the tutorial recommends.
//!
//! 1. hello: `SayHello -> StartState`;
//! 2. what's your name: the client asks, the server answers `MyNameIs("Bob")`;
//! 3. goodbye: `GoodBye -> !` ends the protocol (and a state with no messages does too).
//!
//! Run: `cargo run --release --example tutorial`

use std::thread;

/// Version 1: the client can only say hello.
pub mod hello {
    pipes::proto! {
        pub simple_proto {
            StartState:send {
                SayHello -> StartState
            }
        }
    }

    use simple_proto::StartState::SayHello;

    /// Says hello `times` times, then hangs up.
    pub fn client(channel: simple_proto::client::StartState, times: usize) {
        let mut channel = channel;
        for _ in 0..times {
            channel = channel.say_hello().unwrap();
        }
    }

    /// Answers every hello until the client hangs up; returns what it printed.
    pub fn server(channel: simple_proto::server::StartState) -> Vec<String> {
        let mut log = Vec::new();
        let mut channel = channel;
        loop {
            channel = pipes::select! {
                channel => {
                    SayHello -> next {
                        log.push("Client says hello!".to_string());
                        next
                    },
                    closed => { return log },
                },
            };
        }
    }
}

/// Version 2: the client may also ask the server's name.
pub mod name {
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

    use simple_proto::GettingName::MyNameIs;
    use simple_proto::StartState::{SayHello, WhatsYourName};

    /// Says hello, asks the server's name and returns the answer.
    pub fn client(channel: simple_proto::client::StartState) -> String {
        let channel = channel.say_hello().unwrap();
        let channel = channel.whats_your_name().unwrap();
        pipes::select! {
            channel => {
                MyNameIs(name) -> _channel { format!("The server is named {name}") },
            },
        }
    }

    /// Greets hellos and answers "Bob" until the client hangs up; returns what it printed.
    pub fn server(channel: simple_proto::server::StartState) -> Vec<String> {
        let mut log = Vec::new();
        let mut channel = channel;
        loop {
            channel = pipes::select! {
                channel => {
                    SayHello -> next {
                        log.push("Client says hello!".to_string());
                        next
                    },
                    WhatsYourName -> asked {
                        log.push("Client asks my name".to_string());
                        asked.my_name_is("Bob".to_string()).unwrap()
                    },
                    closed => { return log },
                },
            };
        }
    }
}

/// Version 3: `GoodBye` ends the protocol, as a message to `!`.
pub mod goodbye {
    pipes::proto! {
        pub simple_proto {
            StartState:send {
                SayHello -> StartState,
                GoodBye -> !
            }
        }
    }

    use simple_proto::StartState::{GoodBye, SayHello};

    /// Says hello twice and good-bye: the endpoint is gone after it, so nothing else can be sent.
    pub fn client(channel: simple_proto::client::StartState) {
        channel
            .say_hello()
            .unwrap()
            .say_hello()
            .unwrap()
            .good_bye()
            .unwrap();
    }

    /// Greets until good-bye; returns what it printed.
    pub fn server(channel: simple_proto::server::StartState) -> Vec<String> {
        let mut log = Vec::new();
        let mut channel = channel;
        loop {
            channel = pipes::select! {
                channel => {
                    SayHello -> next {
                        log.push("Client says hello!".to_string());
                        next
                    },
                    GoodBye -> ! {
                        log.push("Client says good-bye.".to_string());
                        return log;
                    },
                },
            };
        }
    }
}

/// Runs the three versions; returns each server's log and the client's answer from version 2.
pub fn run() -> (Vec<String>, Vec<String>, String, Vec<String>) {
    let (server, client) = hello::simple_proto::init();
    let hello_server = thread::spawn(move || hello::server(server));
    hello::client(client, 3);
    let hello_log = hello_server.join().unwrap();

    let (server, client) = name::simple_proto::init();
    let name_server = thread::spawn(move || name::server(server));
    let answer = name::client(client);
    let name_log = name_server.join().unwrap();

    let (server, client) = goodbye::simple_proto::init();
    let goodbye_server = thread::spawn(move || goodbye::server(server));
    goodbye::client(client);
    let goodbye_log = goodbye_server.join().unwrap();
    (hello_log, name_log, answer, goodbye_log)
}

fn main() {
    let (hello, name, answer, goodbye) = run();
    println!("== 1. hello\n{}", hello.join("\n"));
    println!("\n== 2. what's your name\n{}\n{answer}", name.join("\n"));
    println!("\n== 3. good-bye\n{}", goodbye.join("\n"));
}

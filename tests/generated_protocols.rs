//! Protocols the checker accepts compile under `#![deny(warnings)]` and run: cases found by
//! review 11's generator of random protocols (a differential test, "accepted by the checker =>
//! compiles"), each shrunk by hand to a minimal protocol.
#![deny(warnings)]
#![allow(missing_docs)]

/// A state named like a primitive type (`usize`, lower case as the language allows) shadowed
/// the primitive in the generated module: the runtime's `__endpoints!` wrote `room: usize` in
/// each endpoint's `Backlog::report`, which then named the state's enum (E0053, E0308 at the
/// whole invocation).
pub mod primitive_state_names {
    pipes::proto! {
        pub p {
            Start: send { Go(u8) -> usize }
            usize: recv { Back(usize, bool) -> u8 }
            u8: send { More -> bool, Stop -> ! }
            bool: recv { Again -> usize }
        }
        pub lanes {
            usize: send { Go(usize) -> usize, Stop -> u8 }
            u8: recv { Back(u8) -> ! }
        }
    }
}

#[test]
fn a_state_may_be_named_like_a_primitive() {
    let (server, client) = primitive_state_names::p::init();
    let client = client.go(1).unwrap();
    let primitive_state_names::p::Start::Go(n, server) = server.recv().unwrap();
    let _server = server.back(n as usize + 1, true).unwrap();
    let primitive_state_names::p::usize::Back(m, flag, client) = client.recv().unwrap();
    assert_eq!((m, flag), (2, true));
    client.stop().unwrap();

    let (server, client) = primitive_state_names::lanes::init();
    let u8_state = client.go(1).unwrap().go(2).unwrap().stop().unwrap();
    let mut server = server;
    let mut got = Vec::new();
    let server = loop {
        match server.recv().unwrap() {
            primitive_state_names::lanes::usize::Go(n, next) => {
                got.push(n);
                server = next;
            }
            primitive_state_names::lanes::usize::Stop(next) => break next,
        }
    };
    assert_eq!(got, [1, 2]);
    server.back(3).unwrap();
    assert!(matches!(
        u8_state.recv(),
        Ok(primitive_state_names::lanes::u8::Back(3))
    ));
}

/// The 2012 kinds `send` and `copy` (bounds, as the seed writes them) were rewritten to the bare
/// names `Send` and `Copy`, which the generated module resolves to its own states of those
/// names: "expected trait, found enum `Send`" at a bound the user wrote as `send`.
pub mod kinds_beside_states_of_their_names {
    pipes::proto! {
        pub p {
            Send: send<T: send> { Go(T) -> Copy<T>, Stop -> ! }
            Copy: recv<T: copy + send> { Back(T) -> Send<T> }
        }
    }
}

#[test]
fn a_2012_kind_means_the_trait_beside_a_state_of_its_name() {
    fn needs_send<T: Send>(_: &T) {}
    let (server, client) = kinds_beside_states_of_their_names::p::init::<u8>();
    needs_send(&client);
    let reply = client.go(5).unwrap();
    let kinds_beside_states_of_their_names::p::Send::Go(n, server) = server.recv().unwrap() else {
        unreachable!()
    };
    let _server = server.back(n * 2).unwrap();
    let kinds_beside_states_of_their_names::p::Copy::Back(m, client) = reply.recv().unwrap();
    assert_eq!(m, 10);
    client.stop().unwrap();
}

/// A state whose endpoints step to the state itself with different lifetime arguments: the
/// `Debug` derive of its enum bounded every field, endpoints too (`server::S<'static>: Debug`
/// and `server::S<'a>: Debug`), and rustc could not choose between the two (E0283).
pub mod lifetime_arguments_that_differ {
    pipes::proto! {
        pub p {
            S: send<'a> { A(&'a str) -> S<'static>, B -> S<'a>, Stop -> ! }
        }
    }
}

#[test]
fn endpoints_with_different_lifetime_arguments_have_debug() {
    let (server, client) = lifetime_arguments_that_differ::p::init();
    client.a("x").unwrap().b().unwrap().stop().unwrap();
    let message = server.recv().unwrap();
    assert!(format!("{message:?}").starts_with("A(\"x\""), "{message:?}");
}

/// A state whose every message is compiled out (`#[cfg(..)]`, a feature turned off): its enum
/// is empty, and the `Debug` derive's `match self {}` on a reference is not exhaustive (E0004).
pub mod every_message_compiled_out {
    pipes::proto! {
        pub p {
            Start: send { Go -> Off, Stop -> ! }
            Off: recv {
                #[cfg(any())]
                Back -> Start,
            }
        }
    }
}

#[test]
fn a_state_without_messages_after_cfg_still_ends_the_session() {
    let (server, client) = every_message_compiled_out::p::init();
    let _off = client.go().unwrap();
    assert!(matches!(
        server.recv(),
        Ok(every_message_compiled_out::p::Start::Go(_))
    ));
}

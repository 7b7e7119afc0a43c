//! Payload types (and the type arguments of transitions) name what they name where `proto!`
//! is invoked, even when the protocol's own module holds an item of the same name: a state,
//! its `client` and `server` modules, or the module's own `super`.

/// The user's `Login`, in a protocol whose state and message are called `Login` too (the
/// naming the language reference's own examples use).
#[derive(Debug, PartialEq)]
pub struct Login {
    /// Who logs in.
    pub user: String,
}

/// A user type named like the state that carries it, generic like it.
#[derive(Debug, PartialEq)]
pub struct Item<T>(pub T);

/// A user type named like a const-generic state.
#[derive(Debug, PartialEq)]
pub struct Frame<const N: usize>(pub [u8; N]);

/// The `super::Token` of `nested` below.
#[derive(Debug, PartialEq)]
pub struct Token(pub u64);

mod same_names {
    pub use super::Login;

    pipes::proto! {
        pub bank {
            Login: send { Login(Login) -> Welcome }
            Welcome: recv { Welcome(String) -> ! }
        }
    }
}

#[test]
fn a_payload_named_like_its_state_and_message_is_the_users_type() {
    use same_names::bank;
    let (server, client) = bank::init();
    let welcome = client.login(Login { user: "ada".into() }).unwrap();
    let bank::Login::Login(login, server) = server.recv().unwrap();
    assert_eq!(login.user, "ada");
    server.welcome(format!("hello {}", login.user)).unwrap();
    let bank::Welcome::Welcome(text) = welcome.recv().unwrap();
    assert_eq!(text, "hello ada");
}

mod side_names {
    /// A user module named like the generated module's `client`.
    pub mod client {
        #[derive(Debug, PartialEq)]
        pub struct Id(pub u32);
    }

    pipes::proto! {
        pub session {
            Start: send { Hello(client::Id) -> ! }
        }
    }
}

#[test]
fn a_payload_path_through_a_user_module_named_client_is_the_users_module() {
    use side_names::{client::Id, session};
    let (server, client) = session::init();
    client.hello(Id(7)).unwrap();
    let session::Start::Hello(id) = server.recv().unwrap();
    assert_eq!(id, Id(7));
}

mod nested {
    /// Not the `Token` the protocol means: `super::Token` at the call site is the crate
    /// root's, one module up from here, not this one.
    #[allow(dead_code)]
    pub struct Token(pub &'static str);

    pub mod deeper {
        pipes::proto! {
            pub auth {
                Start: send { Present(super::super::Token) -> Checked }
                Checked: recv { Accepted(self::Local, super::Token) -> ! }
            }
        }

        /// Named with `self::` from the call site.
        #[derive(Debug, PartialEq)]
        pub struct Local;
    }

    pipes::proto! {
        pub auth {
            Start: send { Present(super::Token) -> ! }
        }
    }
}

#[test]
fn super_and_self_in_a_payload_start_where_proto_is_invoked() {
    let (server, client) = nested::auth::init();
    client.present(Token(7)).unwrap();
    let nested::auth::Start::Present(token) = server.recv().unwrap();
    assert_eq!(token, Token(7));

    use nested::deeper::{Local, auth};
    let (server, client) = auth::init();
    let checked = client.present(Token(8)).unwrap();
    let auth::Start::Present(token, server) = server.recv().unwrap();
    assert_eq!(token, Token(8));
    server
        .accepted(Local, nested::Token("the one in between"))
        .unwrap();
    let auth::Checked::Accepted(local, between) = checked.recv().unwrap();
    assert_eq!((local, between.0), (Local, "the one in between"));
}

#[test]
fn a_protocol_in_a_function_body_names_the_modules_types_even_where_its_states_would_shadow_them() {
    pipes::proto! {
        in_fn {
            Login: send { Login(Login) -> Item<Login> }
            Item: recv<T> { Item(Item<T>) -> ! }
        }
    }

    let (server, client) = in_fn::init();
    let item = client.login(Login { user: "bo".into() }).unwrap();
    let in_fn::Login::Login(login, server) = server.recv().unwrap();
    server.item(Item(login)).unwrap();
    let in_fn::Item::Item(Item(login)) = item.recv().unwrap();
    assert_eq!(login.user, "bo");
}

#[test]
fn a_protocol_in_a_function_body_names_its_own_endpoints_through_its_module() {
    pipes::proto! {
        relay {
            Start: send { Pass(relay::server::Start) -> ! }
        }
    }

    let (outer_server, outer_client) = relay::init();
    let (inner_server, inner_client) = relay::init();
    outer_client.pass(inner_server).unwrap();
    let relay::Start::Pass(passed) = outer_server.recv().unwrap();
    drop(inner_client);
    assert!(
        passed.recv().is_err(),
        "the passed endpoint is the inner session's"
    );
}

mod type_arguments {
    pub use super::Login;

    pipes::proto! {
        pub handoff {
            Login: send { Hand -> Holding<Login> }
            Holding: recv<T> { Give(T) -> ! }
        }
    }
}

#[test]
fn a_type_argument_named_like_a_state_is_the_users_type() {
    use type_arguments::handoff;
    let (server, client) = handoff::init();
    let holding = client.hand().unwrap();
    let handoff::Login::Hand(server) = server.recv().unwrap();
    server.give(Login { user: "ed".into() }).unwrap();
    let handoff::Holding::Give(login) = holding.recv().unwrap();
    assert_eq!(login.user, "ed");
}

mod generic {
    pub use super::{Frame, Item};

    pipes::proto! {
        /// `Start` is generic, and its payload does not use its parameter; `Item`'s does.
        pub items {
            Start: send<T: Send> { Begin(Item<u8>) -> Item<T> }
            Item: send<T: Send> { Item(Item<T>) -> Item<T>, Done -> ! }
        }

        pub frames {
            Frame: send<const N: usize> { Frame(Frame<N>) -> Frame<N>, Last(Frame<2>) -> ! }
        }
    }
}

#[test]
fn a_generic_state_whose_payload_uses_its_parameter_or_does_not() {
    use generic::items;
    let (server, client) = items::init::<String>();
    let client = client.begin(Item(5)).unwrap();
    let client = client.item(Item("one".to_string())).unwrap();
    client.done().unwrap();
    let items::Start::Begin(Item(n), server) = server.recv().unwrap();
    assert_eq!(n, 5);
    let items::Item::Item(Item(text), server) = server.recv().unwrap() else {
        panic!("an item")
    };
    assert_eq!(text, "one");
    assert!(matches!(server.recv().unwrap(), items::Item::Done));
}

#[test]
fn a_const_generic_state_whose_payload_uses_its_parameter() {
    use generic::frames;
    let (server, client) = frames::init::<3>();
    client
        .frame(Frame([1, 2, 3]))
        .unwrap()
        .last(Frame([4, 5]))
        .unwrap();
    let frames::Frame::Frame(Frame(bytes), server) = server.recv().unwrap() else {
        panic!("a frame first")
    };
    assert_eq!(bytes, [1, 2, 3]);
    let frames::Frame::Last(Frame(last)) = server.recv().unwrap() else {
        panic!("the last frame")
    };
    assert_eq!(last, [4, 5]);
}

mod macro_payload {
    pub use super::Login;

    /// A type written by a macro, which is expanded where `proto!` is invoked too, and handed
    /// the state's parameter.
    macro_rules! pair {
        ($t:ty) => {
            ($t, $t)
        };
    }

    pipes::proto! {
        pub pairs {
            Login: send<T: Send> { Login(pair!(Login)) -> Login<T>, Both(pair!(T)) -> ! }
        }
    }
}

#[test]
fn a_payload_written_by_a_macro_is_expanded_where_proto_is_invoked() {
    use macro_payload::pairs;
    let (server, client) = pairs::init::<u8>();
    let login = |user: &str| Login { user: user.into() };
    client
        .login((login("a"), login("b")))
        .unwrap()
        .both((1, 2))
        .unwrap();
    let pairs::Login::Login((a, b), server) = server.recv().unwrap() else {
        panic!("the logins first")
    };
    assert_eq!((a.user.as_str(), b.user.as_str()), ("a", "b"));
    let pairs::Login::Both(both) = server.recv().unwrap() else {
        panic!("the pair")
    };
    assert_eq!(both, (1, 2));
}

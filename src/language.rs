//! The protocol language: a reference for what [`proto!`](crate::proto) accepts and what each
//! part of a protocol becomes.
//!
//! The same language is the format of `*.pipes` files, which build.rs generation
//! (`proto_dsl::Config`) and the `pipes-proto` command line read. Its grammar of record is
//! `proto-dsl/src/grammar.pest`; this page follows it.
//!
//! # Protocols
//!
//! An invocation holds one or more protocols, each written
//!
//! ```text
//! [doc comments and attributes] [visibility] name { states }
//! ```
//!
//! and each becomes a module of that name, with that visibility (`pub`, `pub(crate)`,
//! `pub(super)`, `pub(in path)`, or private when left out). The first state is the start
//! state: `name::init()` makes a new session and returns the server's and the client's
//! endpoints for it, in that order.
//!
//! ```
//! pipes::proto! {
//!     /// Asks for a number and gets its square back.
//!     pub squares {
//!         Ask: send { Square(u64) -> Answer }
//!         Answer: recv { Squared(u64) -> ! }
//!     }
//!
//!     // A second protocol in the same invocation: a module of its own.
//!     pub(crate) hello {
//!         Start: send { Hello -> ! }
//!     }
//! }
//!
//! let (server, client) = squares::init();
//! let answer = client.square(12).unwrap();
//! let squares::Ask::Square(n, server) = server.recv().unwrap();
//! server.squared(n * n).unwrap();
//! let squares::Answer::Squared(n) = answer.recv().unwrap();
//! assert_eq!(n, 144);
//!
//! let (server, client) = hello::init();
//! client.hello().unwrap();
//! assert!(matches!(server.recv(), Ok(hello::Start::Hello)));
//! ```
//!
//! Names are Rust identifiers, raw ones included (`r#type`). A keyword must be written raw to
//! name a protocol, state or message, and `crate`, `self`, `Self`, `super` and `_` cannot be
//! one even raw. Two protocols of one invocation cannot share a name. Comments (`//`, `/* */`)
//! may appear anywhere, as in Rust.
//!
//! The generated module keeps some names for itself: a state cannot be called `client` or
//! `server` (its modules), `_params`, or a name whose hidden payload enum (`__` and the state's
//! name) is one of the module's own items (`Buffer`, `FromClient`, `FromServer`, `pipes`,
//! `net`, `WirePayload`, `PumpClient`, `PumpServer`, `payload`); and no state or message name
//! may start with `__`. Each is refused at the name, with a help.
//!
//! # States and directions
//!
//! A state is
//!
//! ```text
//! [doc comments and attributes] Name: send|recv [<generic parameters>] { messages }
//! ```
//!
//! Protocols are written from the client's side: in a `send` state the client sends and the
//! server receives, in a `recv` state the server sends and the client receives. Each state
//! becomes two endpoint types, `name::client::State` and `name::server::State`, and (if it has
//! messages) an enum `name::State` of its messages as the receiving side gets them.
//!
//! The direction is written `send` or `recv`, in lower case; any other word is an error (which
//! suggests `send` or `recv` when the word is close to one). The spacing is free, so the 2012
//! spelling `StartState:send { .. }` is the same state, and state and message names may be
//! lower case.
//!
//! # Messages
//!
//! A state's messages are separated by commas (a trailing comma is allowed):
//!
//! ```text
//! [doc comments and attributes] Name[(Type, ...)] -> Next
//! ```
//!
//! - The payload is any list of Rust types, named as where `proto!` is invoked, whatever the
//!   generated module holds: a payload `Login` of a state `Login` is the invoking module's
//!   `Login`, not the state's enum; `client::Id` goes through the invoking module's `client`,
//!   not the generated one; `super::` and `self::` start from the invoking module. The same
//!   holds for the type arguments of `-> State<Types>`. The protocol's own endpoints are
//!   named through its module there, as any protocol's are: `bank::client::Login`.
//! - Inside a function body, types are named as in the module the function is in (and the
//!   protocol's own module by its name): the types the function declares itself are not
//!   visible (a module declared in a function cannot name the function's items), so declare
//!   them at module level.
//! - A payload cannot name `Self` (there is no `Self` where `proto!` is invoked), be
//!   `impl Trait` (give the state a type parameter instead) or leave a part to inference
//!   (`_`): each is refused at the token. Nor can it be written as a type without a size
//!   known at compile time (`str`, a slice `[T]`, a bare `dyn Trait`): a message holds its
//!   payloads by value, so send `String`, `Box<[T]>`, `Box<dyn Trait>` or a reference. A
//!   type alias for one is not seen through: rustc then refuses it, at the generated code.
//! - `Next` is `State`, `State<Types>` for a generic state, or `!`.
//! - Message names are unique within a state; two states may have messages of the same name.
//!
//! ```
//! /// Who logs in: the payload of the message `Login` of the state `Login`.
//! pub struct Login {
//!     pub user: String,
//! }
//!
//! pipes::proto! {
//!     pub bank {
//!         Login: send { Login(Login) -> ! }
//!     }
//! }
//!
//! fn main() {
//!     let (server, client) = bank::init();
//!     client.login(Login { user: "ada".into() }).unwrap();
//!     let bank::Login::Login(login) = server.recv().unwrap();
//!     assert_eq!(login.user, "ada");
//! }
//! ```
//!
//! On the sending side each message is a method that consumes the endpoint, sends, and returns
//! the endpoint for the next state. If the receiving side is gone the payload comes back in a
//! [`SendError`](crate::SendError): `()` for no payload, the value for one, a tuple for
//! several. The receiving side's endpoint has `recv`, `try_recv`, `recv_timeout` and
//! `recv_async`, and implements [`Recv`](crate::Recv); it receives the state's enum, whose
//! variants carry the payload followed by the receiver's endpoint for the next state.
//!
//! ## The method name of a message
//!
//! A message's send method is its name in snake_case. A word starts at an upper-case letter
//! that follows a lower-case letter or a digit, and at the last capital of a run of capitals
//! followed by a lower-case letter; every letter is then lower-cased, and a name that is
//! already snake_case stays as it is:
//!
//! | message | method |
//! |---|---|
//! | `Deposit` | `deposit` |
//! | `WhatsYourName` | `whats_your_name` |
//! | `HTTPGet` | `http_get` |
//! | `sayHello` | `say_hello` |
//! | `Money2Go` | `money2_go` |
//! | `insufficient_funds` | `insufficient_funds` |
//! | `r#Type` | `type` (refused: a keyword) |
//!
//! Two messages of one state whose methods would have the same name are an error, as is a
//! message whose method would be `recv`, `try_recv` or `recv_timeout` (every receiving
//! endpoint has those) or a Rust keyword.
//!
//! ```
//! pipes::proto! {
//!     pub names {
//!         Start: send {
//!             WhatsYourName -> Start,
//!             HTTPGet(String) -> Start,
//!             sayHello -> !,
//!         }
//!     }
//! }
//!
//! let (_server, client) = names::init();
//! let client = client.whats_your_name().unwrap();
//! let client = client.http_get("/".to_string()).unwrap();
//! client.say_hello().unwrap();
//! ```
//!
//! # Ending a protocol: `-> !` and states without messages
//!
//! `-> !` ends the protocol with that message: its send method returns `Ok(())`, and its
//! variant in the receiver's enum carries the payload only. A state with no messages (its
//! direction may be left out: `Done {}`) also ends the protocol, but stepping into it still
//! hands both sides an endpoint, a marker with no methods, which is a type a function can
//! name: for instance to say in its signature that it runs a session to its end.
//!
//! ```
//! pipes::proto! {
//!     pub transfer {
//!         Ready: send {
//!             Chunk(Vec<u8>) -> Ready,
//!             Finish -> Done,
//!             Abort -> !,
//!         }
//!         Done {}
//!     }
//! }
//!
//! /// Sends everything; the return type says the session ended with `Finish`.
//! fn upload(mut client: transfer::client::Ready, data: &[u8]) -> transfer::client::Done {
//!     for chunk in data.chunks(4) {
//!         client = client.chunk(chunk.to_vec()).unwrap();
//!     }
//!     client.finish().unwrap()
//! }
//!
//! let (server, client) = transfer::init();
//! let _done: transfer::client::Done = upload(client, b"hello world");
//! let mut server = server;
//! let mut received = Vec::new();
//! loop {
//!     match server.recv().unwrap() {
//!         transfer::Ready::Chunk(bytes, next) => {
//!             received.extend(bytes);
//!             server = next;
//!         }
//!         transfer::Ready::Finish(_done) => break,
//!         transfer::Ready::Abort => panic!("aborted"),
//!     }
//! }
//! assert_eq!(received, b"hello world");
//! ```
//!
//! Dropping any endpoint also ends the protocol, early: the peer's next receive fails with a
//! [`RecvError`](crate::RecvError) naming the protocol and state, and its next send hands the
//! payload back.
//!
//! # Generic states and bounds
//!
//! A state may declare generic parameters after its direction, with bounds, lifetimes and
//! const parameters written as in Rust: `<T: Clone + Send, const N: usize>`. Its endpoint types
//! and its enum take those parameters, and a message that steps to it passes them:
//! `-> Stream<T>`, with exactly as many arguments as the state declares. A state uses only the
//! parameters it declares itself: a parameter of another state named in this state's payloads
//! or arguments is an error that says to declare it here too. Bounds, and the types of const
//! parameters, are named inside the generated module (it sees the invoking module's items,
//! but its own `client`, `server` and state types come first), unlike payload types: a bound
//! or type whose path starts with a state's name (`T: Sync` beside a state `Sync`) is refused
//! at the name, and a path from the crate root (`::core::marker::Sync`) is never shadowed. A const
//! parameter's name has no lower-case letter (`N`, `LEN`, `_2`): generated methods bind
//! lower-case locals, and a pattern of a const's name would match the const instead.
//! Parameters take no default: every transition to a state passes all of its arguments. A type
//! parameter cannot have the name of its own state (`Item: send<Item>`): the state's enum would
//! be shadowed in the generated impls.
//!
//! A protocol may be written by a `macro_rules!` macro. Its fragments keep their meaning: an
//! `$n:expr` given `1 + 1` stays one operand in `[u8; $n * 2]`, a `$t:ty` given
//! `dyn Any + Send` stays one type in `&'static $t`, and `$crate::Type` names the macro's crate.
//!
//! The 2012 language wrote bounds as *kinds*; the two with a meaning today are accepted in
//! lower case: `send` means `Send` and `copy` means `Copy`, so the seed's
//! `Stream:send<T:send> { .. }` compiles. `owned` and `const` changed meaning over time, so
//! they are errors that name today's choices (`'static` or `Send`; `Sync`).
//!
//! ```
//! pipes::proto! {
//!     pub stream_of {
//!         Open: send<T: Send> {
//!             Item(T) -> Open<T>,
//!             Close -> !,
//!         }
//!     }
//! }
//!
//! let (server, client) = stream_of::init::<&str>();
//! client.item("a").unwrap().item("b").unwrap().close().unwrap();
//! let mut server = server;
//! let mut items = Vec::new();
//! while let stream_of::Open::Item(item, next) = server.recv().unwrap() {
//!     items.push(item);
//!     server = next;
//! }
//! assert_eq!(items, ["a", "b"]);
//! ```
//!
//! ```
//! // The seed's spelling: `send` as a bound is `Send`.
//! pipes::proto! {
//!     pub streamp {
//!         Stream:send<T:send> { Send(T) -> Stream<T> }
//!     }
//! }
//!
//! fn needs_send<T: Send>(_: T) {}
//! let (server, client) = streamp::init::<u8>();
//! needs_send(client.send(1).unwrap());
//! # drop(server);
//! ```
//!
//! # Doc comments and attributes
//!
//! Doc comments (`///`, or `#[doc = ".."]`) and attributes may precede a protocol, a state or
//! a message, and are carried onto what it generates:
//!
//! - a protocol's go on its module; the compiler adds a table of the protocol's states and
//!   transitions after the docs (and, with the `diagram` feature, a picture of them);
//! - a state's docs go on its enum and its two endpoint types, and its attributes on its enum
//!   (which has `Debug` already when its payloads do, so `#[derive(Debug)]` there is an error);
//! - a message's go on its enum variant and its send method, so `#[cfg(..)]` on a message
//!   removes it from both.
//!
//! Items without docs of their own get docs written by the compiler, so a crate with
//! `#![deny(missing_docs)]` accepts every protocol.
//!
//! Two attributes are the compiler's own and are not passed on: `#[allow(unreachable_states)]`,
//! and `#[wire]` (below).
//! Every state must be reachable from the start state, or the compiler reports it; this
//! attribute, on the state or on the whole protocol, allows it. Other lints may share the
//! attribute (`#[allow(unreachable_states, dead_code)]`): those are passed on.
//!
//! ```
//! pipes::proto! {
//!     /// A door. Its docs are the module's.
//!     #[allow(dead_code)]
//!     pub door {
//!         /// The door is shut.
//!         Closed: send {
//!             /// Opens the door; the server answers.
//!             Open -> Opening,
//!             #[cfg(any())]
//!             Lock -> !,
//!         }
//!         Opening: recv { Opened -> ! }
//!         /// Kept for old clients: nothing steps here any more.
//!         #[allow(unreachable_states)]
//!         Jammed: recv { Unjammed -> Closed }
//!     }
//! }
//!
//! let (server, client) = door::init();
//! let opening = client.open().unwrap();
//! // `Lock` was compiled out: `Open` is the only message of `Closed`.
//! let door::Closed::Open(server) = server.recv().unwrap();
//! server.opened().unwrap();
//! assert!(matches!(opening.recv(), Ok(door::Opening::Opened)));
//! ```
//!
//! # Remote sessions: `#[wire]`
//!
//! The other attribute the compiler keeps for itself is `#[wire]`, on a protocol: its sessions
//! can then cross processes and machines through `pipes::net` (the `net` feature). The
//! generated module gains a `Wire` type that names the protocol there, and each side of a
//! remote session holds the very endpoint types `init()` hands out, so `select!`, port sets,
//! timeouts and `recv_async` work on remote sessions unchanged:
//!
//! ```ignore
//! pipes::proto! {
//!     #[wire]
//!     pub bank { Login: send { Login(String, String) -> LoginResponse } /* .. */ }
//! }
//!
//! // The bank: each session a peer opens arrives as a `bank::server::Login`.
//! for login in node.incoming::<bank::Wire>() { /* serve it */ }
//! // A customer: a `bank::client::Login` whose peer is the bank at `addr`.
//! let login = node.client::<bank::Wire>(addr)?;
//! ```
//!
//! A wire protocol must be fixed when it is compiled, because both ends compare a fingerprint
//! of it (its name, states, directions, messages, payload types as tokens, transitions) when a
//! session opens, and another version fails with `ConnectError::Incompatible`. So:
//!
//! - every payload must be `Serialize + DeserializeOwned + Send + 'static` (serde, written
//!   with postcard); one that is not is an error at that payload;
//! - no state may be generic, and none may be called `Wire`;
//! - no payload may be an endpoint (delegation): open a second session instead. The compiler
//!   refuses endpoints of the protocols it compiles; others (a stream's `Chan`, say) fail the
//!   payload check.
//!
//! A `send`'s `Ok` means the message was handed to the transport, as with TCP: to know the peer
//! has it, let the protocol answer (an acknowledgement state). When the session fails (the
//! peer's process dies, the connection is lost, the peer breaks the protocol), the endpoint
//! sees its peer gone: a receive fails with a `RecvError`, a send hands its payload back.
//! `examples/remote_bank.rs` runs the bank as two processes.
//!
//! # Bounded and unbounded sessions
//!
//! The compiler decides, by the 2012 pipe compiler's liveness rule, whether a session can have
//! at most one message in flight per state. A protocol is *bounded* unless some cycle of
//! transitions runs through states that all have the same direction, so that one side could
//! keep sending without ever waiting for the other (as `Chunk -> Ready` above, a `send` state
//! stepping to itself).
//!
//! - A bounded protocol's session lives in one buffer that `init()` allocates, with a slot per
//!   state that has messages, reused every time round: messages allocate nothing.
//! - An unbounded protocol's session is two lanes (queues of message slots) that `init()`
//!   allocates, one per direction, so a sender may run ahead of its receiver by any number of
//!   messages; messages allocate nothing while the receiver keeps up.
//! - Each message travels in a packet of its own instead when the states do not all declare
//!   the same list of generic parameters (one session type could not name them), and when a
//!   bounded protocol has a single state with messages (a oneshot: a session is used once).
//!
//! The API is the same whatever the layout; the generated module's docs say which layout a protocol
//! got. `pipes-proto explain FILE` prints the liveness of a `*.pipes` file.
//!
//! ```
//! pipes::proto! {
//!     // Bounded: the directions alternate, so each side waits for the other.
//!     pub pingpong {
//!         Ping: send { Ping(u32) -> Pong }
//!         Pong: recv { Pong(u32) -> Ping }
//!     }
//!     // Unbounded: the client may send `Tick` again and again without an answer.
//!     pub ticks {
//!         Ticking: send { Tick -> Ticking, Stop -> ! }
//!     }
//! }
//!
//! let (server, client) = ticks::init();
//! let client = client.tick().unwrap().tick().unwrap();
//! client.stop().unwrap();
//! let ticks::Ticking::Tick(server) = server.recv().unwrap() else { unreachable!() };
//! let ticks::Ticking::Tick(server) = server.recv().unwrap() else { unreachable!() };
//! assert!(matches!(server.recv(), Ok(ticks::Ticking::Stop)));
//! # let _ = pingpong::init();
//! ```
//!
//! # What a protocol generates
//!
//! For a protocol `name`:
//!
//! - `name::init()`: a new session, `(server, client)` endpoints of the start state;
//! - `name::State` for each state with messages: an enum of its messages, each variant holding
//!   the payload and then the receiver's endpoint for the next state (none after `-> !`);
//! - `name::client::State` and `name::server::State` for each state: the endpoint types.
//!   Endpoints are `Send` when their payloads are, never `Sync`, never `Clone`;
//! - send methods on the sending side's endpoint of each state, and `recv`, `try_recv`,
//!   `recv_timeout` and `recv_async` on the receiving side's.
//!
//! [`select!`](crate::select!) waits on endpoints of several protocols at once, with one arm
//! per message.

#![doc = include_str!("../README.md")]
//!
//! ## API map
//!
//! - [`language`]: the reference of the protocol language that [`proto!`] reads, and what
//!   each part of a protocol generates.
//! - At the root: [`proto!`], [`select!`], the stream, oneshot, port set and shared chan types
//!   with the functions that make them, the [`select2`], [`selecti`] and [`select()`]
//!   functions, the errors and the [`Recv`] trait.
//! - Each kind of pipe has a module that opens with a guide (when to use it, examples, what it
//!   costs) and holds its iterator, future and helper types: [`stream`](mod@stream),
//!   [`oneshot`](mod@oneshot), [`shared`], [`port_set`], [`select`](mod@select) (with the
//!   `_timeout` and async forms) and [`spin`] (how receivers wait, and the knob that turns
//!   their spinning down).

pub mod language;

pub use pipes_runtime::*;

/// Remote sessions: nodes, connections, and the sessions of `#[wire]` protocols, which hand
/// out the same endpoint types as `init()` (the `pipes-net` crate, with the `net` feature). The
/// runtime stays executor-free: only this module brings in tokio.
#[cfg(feature = "net")]
pub use pipes_net as net;

/// Declares protocols and generates their typed endpoints: see [`language`] for the language
/// and what a protocol generates.
///
/// Each protocol becomes a module. Its payload types (and the type arguments of its
/// transitions) are named as where `proto!` is invoked, even where the module holds a name of
/// its own: a payload `Login` of a state `Login` is the invoking module's `Login`, and
/// `super::` starts from the invoking module. Inside a function body, types are named as in
/// the module the function is in, so types declared inside the function itself are not
/// visible: declare them at module level.
///
/// This is the runtime's `proto!` with one difference: generated code reaches everything
/// through this crate, so a protocol marked `#[wire]` finds `pipes::net` (with the `net`
/// feature) for its remote sessions.
///
/// ```
/// pipes::proto! {
///     pingpong {
///         Ping: send { Ping(u32) -> Pong }
///         Pong: recv { Pong(u32) -> Ping }
///     }
/// }
///
/// let (server, client) = pingpong::init();
/// let pong = client.ping(1).unwrap();
/// let pingpong::Ping::Ping(n, server) = server.recv().unwrap();
/// server.pong(n + 1).unwrap();
/// let pingpong::Pong::Pong(n, _client) = pong.recv().unwrap();
/// assert_eq!(n, 2);
/// ```
#[macro_export]
macro_rules! proto {
    ($($protocols:tt)*) => {
        $crate::__private::proto_impl! { $crate; $($protocols)* }
    };
}

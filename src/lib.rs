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

/// Remote sessions: nodes, connections and the untyped sessions a protocol's pump will sit on
/// (the `pipes-net` crate, with the `net` feature). The runtime stays executor-free: only this
/// module brings in tokio.
#[cfg(feature = "net")]
pub use pipes_net as net;

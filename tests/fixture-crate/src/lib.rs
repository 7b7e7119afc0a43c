//! Every protocol fixture of `proto-dsl/tests/fixtures`, compiled both by build.rs generation
//! ([`built`]) and through `pipes::proto!` ([`via_macro`]); see `build.rs`. A fixture that the
//! protocol checker accepts but whose generated code rustc refuses fails this crate's build,
//! and so `cargo test --workspace`.
//!
//! The crate forbids unsafe code: generated code, either way, has none (a bounded protocol's
//! session buffer is built through the runtime's safe, checked `session`), so a crate that
//! forbids it can include build.rs output, and `clippy::undocumented_unsafe_blocks` has
//! nothing to flag there.
#![forbid(unsafe_code)]
// rustdoc works out whether each endpoint is `Send`, and for the 200-state fixture's chain of
// packets (each message enum holds the next state's endpoint) that takes more than the
// default 128 levels (about three per state): without this, `cargo doc` fails with E0275 on this crate.
#![recursion_limit = "1024"]

/// The payload types that fixtures written in the seed's spelling name without declaring
/// (they are resolved where the protocol is generated, as the 2012 examples' were).
#[allow(non_camel_case_types)]
pub mod payloads {
    /// `bank_2012.pipes`: a user name.
    pub type username = String;
    /// `bank_2012.pipes`: a password.
    pub type password = String;
    /// `bank_2012.pipes`: an amount deposited or paid out.
    pub type money = u64;
    /// `bank_2012.pipes`: an amount asked for.
    pub type amount = u64;
    /// `double_buffer.pipes`: the buffer handed back and forth.
    pub type Buffer = Vec<u8>;
}

include!(concat!(env!("OUT_DIR"), "/fixtures.rs"));

/// Declares a protocol whose payload is this crate's own type, named through `$crate`, as a
/// library's macros name theirs: the invoking crate needs no path to it (see
/// `tests/crate_paths.rs`).
#[macro_export]
macro_rules! buffer_protocol {
    ($vis:vis $name:ident) => {
        pipes::proto! {
            $vis $name {
                Full: send { Fill($crate::payloads::Buffer) -> Full, Done -> ! }
            }
        }
    };
}

/// Names a const parameter's type and a bound can reach through `$crate` (see
/// `tests/crate_paths.rs`): the invoking crate has no `lengths` module of its own.
pub mod lengths {
    /// A const parameter's type, through an alias.
    pub type Len = usize;
    /// A bound on a state's type parameter.
    pub trait Marker {}
    impl Marker for u8 {}
}

/// Declares a protocol whose generic state's const parameter has this crate's type alias as
/// its type, named through `$crate`.
#[macro_export]
macro_rules! sized_protocol {
    ($vis:vis $name:ident) => {
        pipes::proto! {
            $vis $name {
                Start: send { Begin -> Sized<4> }
                Sized: send<const N: $crate::lengths::Len> { Fill([u8; N]) -> Sized<N>, Done -> ! }
            }
        }
    };
}

/// Declares a protocol whose generic state's type parameter is bounded by this crate's trait,
/// named through `$crate`.
#[macro_export]
macro_rules! marked_protocol {
    ($vis:vis $name:ident) => {
        pipes::proto! {
            $vis $name {
                Stream: send<T: $crate::lengths::Marker> { Item(T) -> Stream<T>, Done -> ! }
            }
        }
    };
}

/// Declares a protocol with two payloads: this crate's `payloads::Buffer`, named through
/// `$crate`, and a type the invoking crate chooses (`$theirs`), which may be spelt
/// `crate::payloads::Buffer` there and then is the invoking crate's own type.
#[macro_export]
macro_rules! two_buffers_protocol {
    ($vis:vis $name:ident, $theirs:ty) => {
        pipes::proto! {
            $vis $name {
                Full: send {
                    Ours($crate::payloads::Buffer) -> Full,
                    Theirs($theirs) -> Full,
                    Done -> !,
                }
            }
        }
    };
}

//! Protocols written by a user's `macro_rules!` mean what the macro's fragments mean: an
//! expression or type fragment stays one operand however it is spelt (rustc hands it over in
//! an invisible group), `$crate` names the macro's crate, and a visibility or name fragment
//! works where the protocol expects one.
#![deny(warnings)]
#![allow(missing_docs)]

use std::any::Any;

/// A payload type a library names through `$crate`.
#[derive(Debug, PartialEq)]
pub struct Token(pub u32);

/// Builds a protocol from fragments of every kind a protocol's author would pass.
macro_rules! build {
    ($vis:vis $name:ident, $n:expr, $t:ty, $big:ty, $never:meta) => {
        pipes::proto! {
            $vis $name {
                Start: send {
                    Bytes([u8; $n * 2]) -> Start,
                    Dynamic(&'static $t) -> Start,
                    Big($big) -> Start,
                    Length([u8; $n]) -> Start,
                    Boxed(Box<$t>) -> Start,
                    Library($crate::Token) -> !,
                    #[cfg(not($never))]
                    Kept -> !,
                }
            }
        }
    };
}

pub mod built {
    use super::*;
    build!(pub made, 1 + 1, dyn Any + Send + Sync, Vec<u8>, target_os = "none");
    // A visibility of more than one token, and other fragments again; only two of its
    // messages are sent.
    #[allow(dead_code)]
    mod crate_visible {
        use super::*;
        build!(pub(crate) again, 3, dyn Any + Send, Vec<u8>, any());
    }
    pub(crate) use crate_visible::again;
}

#[test]
fn an_expression_fragment_stays_one_operand() {
    let (server, client) = built::made::init();
    let client = client.bytes([7; 4]).unwrap();
    let built::made::Start::Bytes(bytes, _) = server.recv().unwrap() else {
        panic!("the bytes first")
    };
    // `[u8; $n * 2]` with `$n = 1 + 1` is four bytes, not `1 + 1 * 2` = three.
    assert_eq!(bytes.len(), 4);
    drop(client);
}

#[test]
fn type_fragments_and_crate_paths_keep_their_meaning() {
    static VALUE: u8 = 5;
    let (server, client) = built::made::init();
    client
        .dynamic(&VALUE)
        .unwrap()
        .big(vec![1, 2])
        .unwrap()
        .library(Token(9))
        .unwrap();
    let built::made::Start::Dynamic(any, server) = server.recv().unwrap() else {
        panic!("the trait object first")
    };
    assert_eq!(any.downcast_ref::<u8>(), Some(&5));
    let built::made::Start::Big(big, server) = server.recv().unwrap() else {
        panic!("the vector next")
    };
    assert_eq!(big, [1, 2]);
    let built::made::Start::Library(token) = server.recv().unwrap() else {
        panic!("the token last")
    };
    assert_eq!(token, Token(9));
}

#[test]
fn a_meta_fragment_in_an_attribute_is_read_as_written() {
    let (server, client) = built::made::init();
    client.kept().unwrap();
    assert!(matches!(server.recv().unwrap(), built::made::Start::Kept));
    let (server, client) = built::again::init();
    client.bytes([0; 6]).unwrap().kept().unwrap();
    drop(server);
}

/// The length the nested macros below are given.
pub const LEN: usize = 2;

/// Passes its fragments on to [`inner_protocol!`]: each reaches `proto!` through two levels
/// of invisible groups, and `$n * 2`, built here, is itself a fragment there.
macro_rules! outer_protocol {
    ($name:ident, $n:expr, $t:ty, $sum:expr) => {
        inner_protocol!($name, $n * 2, $t, $sum, Begin, send, 'a, { LEN + 1 }, allow(dead_code));
    };
}

/// Names, directions, lifetimes, blocks and attributes from fragments, in every place a
/// protocol takes them.
macro_rules! inner_protocol {
    ($name:ident, $n:expr, $t:ty, $sum:expr, $state:ident, $dir:ident, $l:lifetime, $b:block, $m:meta) => {
        pipes::proto! {
            #[$m]
            pub $name {
                /// The start.
                #[allow(unreachable_states)]
                $state: $dir {
                    Doubled([u8; $n]) -> $state,
                    Summed([u8; $sum * 2]) -> $state,
                    Shared(&'static $t) -> $state,
                    ToBlock -> Blocked<$b>,
                    ToDyn -> Dynamic<$t>,
                    #[doc = concat!("Steps to ", "the borrowed state.")]
                    ToBorrowed -> Borrowed<'static>,
                }
                Blocked: recv<const N: usize> { Bytes([u8; N]) -> ! }
                Dynamic: recv<T: ?Sized + 'static> { Boxed(Box<T>) -> ! }
                Borrowed: recv<$l> { Text(&$l str) -> ! }
            }
        }
    };
}

outer_protocol!(nested, 1 + 1, dyn Any + Send + Sync, LEN + LEN);

#[test]
fn fragments_passed_through_two_macros_keep_their_meaning() {
    static VALUE: u8 = 3;
    let (server, client) = nested::init();
    // `$n * 2` with `$n = 1 + 1`, then `* 2` again inside: `[u8; ((1 + 1) * 2)]`, four.
    let client = client.doubled([1; 4]).unwrap();
    // `$sum * 2` with `$sum = LEN + LEN`: eight, not `LEN + LEN * 2` = six.
    let client = client.summed([2; 8]).unwrap().shared(&VALUE).unwrap();
    // `Blocked<$b>` with `$b = { LEN + 1 }`: three bytes.
    let blocked: nested::client::Blocked<3> = client.to_block().unwrap();
    drop(blocked);
    let nested::Begin::Doubled(doubled, server) = server.recv().unwrap() else {
        panic!("the doubled bytes first")
    };
    assert_eq!(doubled, [1; 4]);
    let nested::Begin::Summed(summed, server) = server.recv().unwrap() else {
        panic!("the summed bytes next")
    };
    assert_eq!(summed.len(), 8);
    let nested::Begin::Shared(shared, _) = server.recv().unwrap() else {
        panic!("the shared value last")
    };
    assert_eq!(shared.downcast_ref::<u8>(), Some(&3));
}

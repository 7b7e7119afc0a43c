//! A `#[wire]` protocol written by a `macro_rules!` has the fingerprint of the same protocol
//! written out: both ends compare fingerprints, so a peer built from the protocol's text (by
//! hand, or from a `*.pipes` file by build.rs) must find it compatible.
#![cfg(feature = "net")]
#![deny(warnings)]
#![allow(missing_docs)]

use pipes::net::WireProtocol;

pub type Alias = Vec<u8>;

macro_rules! wired {
    ($m:meta, $vis:vis $name:ident, $n:expr) => {
        pipes::proto! {
            #[$m]
            $vis $name {
                Start: send { Bytes([u8; $n]) -> Start, Library($crate::Alias) -> ! }
            }
        }
    };
}

pub mod by_macro {
    wired!(wire, pub same, 2 + 2);
}

pub mod by_hand {
    pipes::proto! {
        #[wire]
        pub same {
            Start: send { Bytes([u8; 2 + 2]) -> Start, Library(crate::Alias) -> ! }
        }
    }
}

#[test]
fn a_macro_written_wire_protocol_has_the_fingerprint_of_its_text() {
    let by_macro = <by_macro::same::Wire as WireProtocol>::PROTOCOL;
    let by_hand = <by_hand::same::Wire as WireProtocol>::PROTOCOL;
    // The macro's `[u8; $n]` with `$n = 2 + 2` is the type `[u8; 2 + 2]`: the parentheses
    // proto! prints for the fragment's invisible group are not the protocol's.
    assert_eq!(by_macro.fingerprint, by_hand.fingerprint);
    let (_server, client) = by_macro::same::init();
    client.bytes([0; 4]).unwrap().library(vec![]).unwrap();
}

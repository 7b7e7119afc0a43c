//! The fingerprint of a `#[wire]` protocol: what the handshake of a remote session compares,
//! so two programs built from different versions of a protocol fail when they connect instead
//! of garbling messages later.
//!
//! It is a digest of the protocol's [canonical text](canonical): its name, and each state's
//! index, name and direction, and each message's index, name, payload types and where it
//! leads, in declaration order (the order the wire's state and message indices follow). Docs,
//! attributes and visibility are left out: they do not change what crosses the wire. A payload
//! type is written as its tokens, one space apart, so the spacing and line breaks of the source
//! do not matter, and the macro and build.rs generation (which see the same tokens) agree.
//!
//! The digest is 128-bit FNV-1a: fully specified (so it never changes with the compiler, as
//! std's `DefaultHasher` may), a few lines with no dependency, and ample against accidental
//! collisions, which are all it must guard against (a fingerprint is no defence against a
//! hostile peer, which may send any fingerprint it likes).

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use quote::ToTokens;

use crate::ast::{Next, Protocol};

/// The first line of every canonical text: a new format of it (or of the wire's indices)
/// changes this, and with it every fingerprint.
pub const FORMAT: &str = "pipes-wire 1";

/// The text the fingerprint digests, one line per protocol, state and message.
///
/// ```
/// let source = "#[wire] bank { Login: send { Login(String, Vec < u8 >) -> ! } }";
/// let file = proto_dsl::parse(source).unwrap();
/// assert_eq!(
///     proto_dsl::fingerprint::canonical(&file.protocols[0]),
///     "pipes-wire 1\nprotocol bank\nstate 0 Login send\nmessage 0 Login ( String , Vec < u8 > ) -> !\n"
/// );
/// ```
pub fn canonical(protocol: &Protocol) -> String {
    let mut text = format!("{FORMAT}\nprotocol {}\n", protocol.name.unraw());
    for (i, state) in protocol.states.iter().enumerate() {
        let direction = state.direction.map_or("-", |d| d.word());
        text.push_str(&format!("state {i} {} {direction}\n", state.name.unraw()));
        for (j, message) in state.messages.iter().enumerate() {
            let payload: Vec<String> = message
                .payload
                .iter()
                .map(|ty| tokens(ty.syn.to_token_stream()))
                .collect();
            let next = match &message.next {
                Next::End { .. } => "!".to_string(),
                Next::State { name, args, .. } => {
                    let args: Vec<String> = args
                        .iter()
                        .map(|arg| tokens(arg.syn.to_token_stream()))
                        .collect();
                    if args.is_empty() {
                        name.unraw().to_string()
                    } else {
                        format!("{} < {} >", name.unraw(), args.join(" , "))
                    }
                }
            };
            text.push_str(&format!(
                "message {j} {} ( {} ) -> {next}\n",
                message.name.unraw(),
                payload.join(" , ")
            ));
        }
    }
    text
}

/// The fingerprint of a protocol: [`digest`] of its [`canonical`] text.
pub fn fingerprint(protocol: &Protocol) -> [u8; 16] {
    digest(canonical(protocol).as_bytes())
}

/// 128-bit FNV-1a of `bytes`, big-endian.
pub fn digest(bytes: &[u8]) -> [u8; 16] {
    const OFFSET_BASIS: u128 = 0x6c62_272e_07bb_0142_62b8_2175_6295_c58d;
    const PRIME: u128 = 0x0000_0000_0100_0000_0000_0000_0000_013b;
    let hash = bytes.iter().fold(OFFSET_BASIS, |hash, &byte| {
        (hash ^ u128::from(byte)).wrapping_mul(PRIME)
    });
    hash.to_be_bytes()
}

/// Tokens as text, one space apart, whatever their spacing in the source. Written out rather
/// than `TokenStream::to_string`, whose spacing differs between a proc macro (the compiler's
/// tokens) and build.rs (proc_macro2's own).
fn tokens(stream: TokenStream) -> String {
    let mut words = Vec::new();
    push_tokens(stream, &mut words);
    words.join(" ")
}

fn push_tokens(stream: TokenStream, words: &mut Vec<String>) {
    for token in stream {
        match token {
            TokenTree::Group(group) => {
                let (open, close) = match group.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::None => ("", ""),
                };
                if !open.is_empty() {
                    words.push(open.to_string());
                }
                push_tokens(group.stream(), words);
                if !close.is_empty() {
                    words.push(close.to_string());
                }
            }
            TokenTree::Ident(ident) => words.push(ident.to_string()),
            TokenTree::Punct(punct) => words.push(punct.as_char().to_string()),
            TokenTree::Literal(literal) => words.push(literal.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fingerprint_of(source: &str) -> [u8; 16] {
        fingerprint(&crate::parse(source).unwrap().protocols[0])
    }

    #[test]
    fn fnv1a_128_of_known_inputs() {
        // The specification's test vectors: the empty input is the offset basis, and "a".
        assert_eq!(
            u128::from_be_bytes(digest(b"")),
            0x6c62_272e_07bb_0142_62b8_2175_6295_c58d
        );
        assert_eq!(
            u128::from_be_bytes(digest(b"a")),
            0xd228_cb69_6f1a_8caf_7891_2b70_4e4a_8964
        );
    }

    #[test]
    fn spacing_comments_docs_and_visibility_do_not_count() {
        let a = "#[wire] pub bank { Login: send { Login(String, Vec<u8>) -> Done } Done {} }";
        let b = "/// Docs.\n#[wire]\nbank {\n  Login : send {\n    // a comment\n    Login( String ,Vec< u8 > ) -> Done,\n  }\n  Done {}\n}";
        assert_eq!(fingerprint_of(a), fingerprint_of(b));
    }

    #[test]
    fn every_part_of_the_protocol_counts() {
        let base = "bank { Login: send { Login(String) -> Done, Quit -> ! } Done {} }";
        let changed = [
            "bonk { Login: send { Login(String) -> Done, Quit -> ! } Done {} }",
            "bank { Logon: send { Login(String) -> Logon, Quit -> ! } Done {} }",
            "bank { Login: recv { Login(String) -> Done, Quit -> ! } Done {} }",
            "bank { Login: send { Logon(String) -> Done, Quit -> ! } Done {} }",
            "bank { Login: send { Login(str) -> Done, Quit -> ! } Done {} }",
            "bank { Login: send { Login(String, u8) -> Done, Quit -> ! } Done {} }",
            "bank { Login: send { Login(String) -> !, Quit -> ! } Done {} }",
            "bank { Login: send { Quit -> !, Login(String) -> Done } Done {} }",
            "bank { Login: send { Login(String) -> Done, Quit -> ! } Done {} Other {} }",
        ];
        let base = fingerprint_of(base);
        for source in changed {
            assert_ne!(fingerprint_of(source), base, "{source}");
        }
    }
}

//! The generated code of every protocol in the corpus, pretty-printed and snapshotted: this is
//! what users read in docs and errors, so every change to it is reviewed here.

mod common;

use proc_macro2::Span;

/// Expands a fixture as build.rs would (runtime at `::pipes`), formatted with prettyplease.
/// Diagrams are off whatever the `diagram` feature says, so `--all-features` runs agree with
/// these snapshots (tests/tooling.rs snapshots a diagram).
fn expand(name: &str) -> String {
    let path = common::fixtures().join(format!("{name}.pipes"));
    let source = std::fs::read_to_string(&path).unwrap();
    common::expand(&source, false)
}

#[test]
fn generation_is_deterministic() {
    assert_eq!(expand("bank"), expand("bank"));
}

macro_rules! expansions {
    ($($name:ident)*) => {
        $(
            #[test]
            fn $name() {
                insta::assert_snapshot!(concat!("expand__", stringify!($name)), expand(stringify!($name)));
            }
        )*
    };
}

expansions! {
    bank bank_2012 bar cfg_empties_a_state cfg_leaves_one_message double_buffer foo future_pipe generated_200 kv_store oneshot pingpong
    pingpong_unbounded ring simple_proto_empty simple_proto_end simple_proto_goodbye
    simple_proto_hello simple_proto_name stream streamp
}

#[test]
fn doc_attributes_are_docs() {
    // What a macro receives for `/// A bank.`: the docs must not be mistaken for attributes.
    let analysis = proto_dsl::analyze(r#"# [doc = " A bank."] p { S: send { M -> ! } }"#).unwrap();
    let protocol = &analysis.file.protocols[0];
    assert_eq!(protocol.meta.docs[0].text, " A bank.");
    assert!(protocol.meta.attrs.is_empty());
}

#[test]
fn module_docs_write_payload_types_as_rustfmt_would_whatever_the_spacing() {
    // What `proto!` hands the compiler: tokens printed with a space between each.
    let source = "p { S: send { Jump(Vec < String >, Option < Box < [ u8 ] >>) -> T < u8 > } \
                  T: recv<X> { Back -> S } }";
    let text = common::expand(source, false);
    assert!(
        text.contains("| `S` | client | `Jump(Vec<String>, Option<Box<[u8]>>)` | `T<u8>` |"),
        "{text}"
    );
}

#[test]
fn every_token_of_a_fragment_is_placed_at_its_own_offset() {
    // The macro's `span_at` maps offsets to the user's tokens: every token of a payload type,
    // a bound, a type argument and an attribute must be looked up at its own offset, not at
    // its fragment's first (where rustc's errors and suggestions would then land).
    let source = "p {\n    S: send<T: Clone + Sendd, U: send> {\n        \
                  #[cfg(all())]\n        \
                  M(std::collections::HashMap<String, /* key */ Strng>, [u8; 4]) -> S<T, Vec<U>>,\n    }\n}";
    let analysis = proto_dsl::analyze(source).unwrap();
    let asked = std::cell::RefCell::new(std::collections::BTreeSet::new());
    let span_at = |offset: usize| {
        asked.borrow_mut().insert(offset);
        Span::call_site()
    };
    proto_dsl::codegen::generate(
        &analysis,
        &proto_dsl::codegen::Options {
            runtime: quote::quote!(::pipes),
            source,
            span_at: &span_at,
            printed: &|_| None,
        },
    );
    let asked = asked.into_inner();
    let at = |token: &str, nth: usize| {
        source
            .match_indices(token)
            .nth(nth)
            .unwrap_or_else(|| panic!("no {token}"))
            .0
    };
    for (token, nth) in [
        ("Sendd", 0),
        ("+", 0),
        // `send` is the 2012 kind, generated as `Send`, still placed at the user's `send`.
        ("send", 1),
        ("all", 0),
        ("collections", 0),
        ("HashMap", 0),
        ("String", 0),
        ("Strng", 0),
        ("4", 0),
        ("Vec", 0),
        ("U", 1),
    ] {
        assert!(
            asked.contains(&at(token, nth)),
            "`{token}` (#{nth}) at {} was not placed at its own offset: {asked:?}",
            at(token, nth)
        );
    }
}

/// The user's types are aliased once each in the module's `__super`, which names them as the
/// call site does: with the state's parameters each one uses (type, lifetime, const, and
/// those a macro is handed), a leading `super` taken two modules further up, a message's
/// `#[cfg]` carried over, and type arguments of transitions aliased too (a bare parameter is
/// left as it is). The items use the aliases.
#[test]
fn user_types_are_aliased_once_each() {
    let source = "p {\n    \
                  Login: send<'a, T: ?Sized, const N: usize> {\n        \
                  Login(Login, client::Id, super::Token) -> Login<'a, T, N>,\n        \
                  Again(Login, &'a T, [u8; N], Box<T>) -> Login<'a, T, N>,\n        \
                  Framed(Frame<N>, pair!(T), borrowed!('a)) -> Next<Login>,\n        \
                  #[cfg(feature = \"x\")]\n        \
                  Gated(Login) -> !,\n    \
                  }\n    \
                  Next: recv<U> { Done(U, Vec<U>) -> ! }\n}\n";
    let text = common::expand(source, false);
    let item = |start: &str| {
        let at = text
            .find(start)
            .unwrap_or_else(|| panic!("no {start:?} in {text}"));
        let end = text[at..].find("\n    }\n").expect("the item's end") + at;
        text[at..end + "\n    }".len()].to_string()
    };
    insta::assert_snapshot!(
        "expand__user_types",
        format!(
            "{}\n{}\n{}",
            item("    /// The user's types"),
            item("    pub enum Login<"),
            item("    pub enum Next<")
        )
    );
}

/// What `#[wire]` adds to a protocol's module (the rest of the module is the same as without
/// it): the `Wire` type, the payload check, and a pump per side.
#[test]
fn wire_items() {
    let source = "/// Ping-pong across the wire.\n#[wire]\npub pingpong {\n    \
                  Ping: send { Ping(u32, String) -> Pong, Stop -> ! }\n    \
                  Pong: recv { Pong(u32) -> Ping }\n}\n";
    insta::assert_snapshot!("expand__wire_items", wire_items_of(source));
}

/// An unbounded `#[wire]` protocol's pumps also bound what each side has yet to take: both
/// endpoints report their takes, and the pump waits for room before it receives for the user.
#[test]
fn wire_items_of_an_unbounded_protocol() {
    let source = "/// Numbers across the wire.\n#[wire]\npub numbers {\n    \
                  Stream: send { Number(u64) -> Stream, End -> Tally }\n    \
                  Tally: recv { Count(u64) -> ! }\n}\n";
    insta::assert_snapshot!("expand__wire_items_unbounded", wire_items_of(source));
}

/// The items `#[wire]` adds to the module of the protocol in `source`, pretty-printed.
fn wire_items_of(source: &str) -> String {
    let analysis = proto_dsl::analyze(source).unwrap();
    let tokens = proto_dsl::codegen::generate_with_diagrams(
        &analysis,
        &proto_dsl::codegen::Options {
            runtime: quote::quote!(::pipes),
            source,
            span_at: &|_| Span::call_site(),
            printed: &|_| None,
        },
        false,
    );
    let file: syn::File = syn::parse2(tokens).unwrap();
    let text = prettyplease::unparse(&file);
    let start = text
        .find("    use ::pipes::net::__private as __net;")
        .expect("the wire items");
    // The attribute is the compiler's: it does not reach rustc.
    assert!(
        !text.contains("# [wire]") && !text.contains("#[wire]\n"),
        "{text}"
    );
    text[start..].to_string()
}

//! A protocol declared by another crate's `macro_rules!` whose generic state's type parameter
//! is bounded by that crate's trait, named through `$crate` (`T: $crate::lengths::Marker`):
//! this crate has no `lengths` module, so a `$crate` that became `crate` would not compile.
#![deny(warnings)]

pipes_fixtures::marked_protocol!(pub(crate) marked);

#[test]
fn a_bound_of_a_library_trait_named_through_dollar_crate() {
    let (server, client) = marked::init::<u8>();
    client.item(1).unwrap().done().unwrap();
    let marked::Stream::Item(item, server) = server.recv().unwrap() else {
        panic!("the item first")
    };
    assert_eq!(item, 1);
    assert!(matches!(server.recv().unwrap(), marked::Stream::Done));
}

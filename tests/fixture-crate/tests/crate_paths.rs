//! A protocol declared by another crate's `macro_rules!` names that crate's types through
//! `$crate`: here `$crate::payloads::Buffer` is `pipes_fixtures::payloads::Buffer`, and this
//! crate has no `payloads` module, so a `$crate` that became `crate` would not compile.
#![deny(warnings)]

pipes_fixtures::buffer_protocol!(pub(crate) buffers);

#[test]
fn a_library_macro_names_its_own_types_through_dollar_crate() {
    let (server, client) = buffers::init();
    client.fill(vec![1, 2, 3]).unwrap().done().unwrap();
    let buffers::Full::Fill(buffer, server) = server.recv().unwrap() else {
        panic!("the buffer first")
    };
    let _: pipes_fixtures::payloads::Buffer = buffer.clone();
    assert_eq!(buffer, [1, 2, 3]);
    assert!(matches!(server.recv().unwrap(), buffers::Full::Done));
}

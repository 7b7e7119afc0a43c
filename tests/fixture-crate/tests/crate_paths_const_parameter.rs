//! A protocol declared by another crate's `macro_rules!` whose generic state's const parameter
//! has that crate's type, named through `$crate` (`const N: $crate::lengths::Len`): this crate
//! has no `lengths` module, so a `$crate` that became `crate` would not compile.
#![deny(warnings)]

pipes_fixtures::sized_protocol!(pub(crate) sized);

#[test]
fn a_const_parameter_of_a_library_type_named_through_dollar_crate() {
    let (server, client) = sized::init();
    let client: sized::client::Sized<4> = client.begin().unwrap();
    client.fill([1, 2, 3, 4]).unwrap().done().unwrap();
    let sized::Start::Begin(server) = server.recv().unwrap();
    let sized::Sized::Fill(bytes, _) = server.recv().unwrap() else {
        panic!("the bytes first")
    };
    assert_eq!(bytes, [1, 2, 3, 4]);
}

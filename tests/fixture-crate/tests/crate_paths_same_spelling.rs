//! A protocol declared by another crate's `macro_rules!` with a payload of that crate's
//! `payloads::Buffer`, named through `$crate`, beside a payload this crate passes in and
//! spells `crate::payloads::Buffer`, which here is this crate's own, other type: the two
//! spellings print the same (`crate::payloads::Buffer`) and must stay two types.
#![deny(warnings)]

use std::any::TypeId;

/// This crate's own `payloads::Buffer`, another type than the fixture crate's (`Vec<u8>`).
pub mod payloads {
    /// Not `pipes_fixtures::payloads::Buffer`.
    pub type Buffer = Vec<u16>;
}

pipes_fixtures::two_buffers_protocol!(pub(crate) two, crate::payloads::Buffer);

fn type_id_of<T: 'static>(_: &T) -> TypeId {
    TypeId::of::<T>()
}

#[test]
fn dollar_crate_and_this_crates_path_of_the_same_spelling_are_two_types() {
    let (server, client) = two::init();
    // `vec![2]` takes whichever element type `theirs` asks for.
    client
        .ours(vec![1])
        .unwrap()
        .theirs(vec![2])
        .unwrap()
        .done()
        .unwrap();
    let two::Full::Ours(ours, server) = server.recv().unwrap() else {
        panic!("ours first")
    };
    assert_eq!(
        type_id_of(&ours),
        TypeId::of::<pipes_fixtures::payloads::Buffer>()
    );
    let two::Full::Theirs(theirs, _) = server.recv().unwrap() else {
        panic!("theirs next")
    };
    // `Theirs` carries this crate's `Vec<u16>`, not the library's `Vec<u8>`.
    assert_eq!(type_id_of(&theirs), TypeId::of::<payloads::Buffer>());
}

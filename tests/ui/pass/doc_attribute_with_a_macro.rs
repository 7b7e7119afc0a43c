// Found by review 7: a doc written `#[doc = concat!(..)]` (or `include_str!`) is not a literal, so
// the parser keeps it as an attribute (parse.rs, `doc_text`), and codegen puts a message's
// attributes on the match arms of the generated `__arrive` too (codegen.rs, `arrival`): rustc's
// `unused_doc_comments` ("rustdoc does not generate documentation for match arms") fails the valid
// protocol under `#![deny(warnings)]`.
#![deny(warnings)]

pipes::proto! {
    pub docs {
        Start: send {
            #[doc = concat!("Ends", " the protocol.")]
            Stop -> !,
            Go -> Start,
        }
    }
}

fn main() {
    let (server, client) = docs::init();
    client.go().unwrap().stop().unwrap();
    drop(server);
}

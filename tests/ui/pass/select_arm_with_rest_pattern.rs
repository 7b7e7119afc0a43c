// Found by review 7: a `select!` arm that ignores a message's payload with `..`, as any Rust tuple
// pattern may. With `-> !` it works (`Done(..) -> ! { .. }`); with `-> next` the expansion appends
// its own `.., next` (proto-macro/src/select.rs, `Arm::expand`), so rustc reports "`..` can only
// be used once per tuple struct pattern", and the arm check counts the `..` as one binding: "this
// `select!` arm binds 1 payload value(s), but its message carries `(u32, String)`". Neither is
// what the user wrote.
#![deny(warnings)]

pipes::proto! {
    pub items {
        Open: recv { Item(u32, String) -> Open, Done(u8) -> ! }
    }
}

use items::Open::{Done, Item};

fn main() {
    let (server, client) = items::init();
    let server = server.item(1, "a".into()).unwrap();
    server.done(0).unwrap();
    let first = pipes::select! {
        client => {
            Item(..) -> _next { 1 },
            Done(..) -> ! { 2 },
        },
    };
    assert_eq!(first, 1);
}

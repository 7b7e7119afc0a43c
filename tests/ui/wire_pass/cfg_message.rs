// Found by review 7: `#[cfg(..)]` on a message of a `#[wire]` protocol. The message's variant,
// send method and payload alias are compiled out, but the pump's arm that takes the message off
// the wire (codegen/wire.rs, `off_the_wire`) does not carry the message's attributes: it still
// calls the send method `b` and names the payload alias `__1`, so the valid protocol fails with
// E0599 "no method named `b`" and E0425 "cannot find type `__1` in module `__super`".
// (`onto_the_wire`'s arms carry them.)
#![deny(warnings)]

pipes::proto! {
    #[wire]
    pub optional {
        Start: send {
            A(u8) -> Reply,
            #[cfg(any())]
            B(u16) -> !,
        }
        Reply: recv { C -> ! }
    }
}

fn main() {
    let (server, client) = optional::init();
    let reply = client.a(1).unwrap();
    let optional::Start::A(_, server) = server.recv().unwrap();
    server.c().unwrap();
    assert!(matches!(reply.recv(), Ok(optional::Reply::C)));
}

// Found by review 7: a message marked `#[deprecated]` (how a protocol retires a message while old
// peers still send it). A message's attributes go on its variant and send method, which is right,
// but also on the hidden slot enum's variant and on the match arms of the generated `__arrive`
// (codegen.rs, `arrival`) and `MessageDebug`: the generated code uses the deprecated variants
// (four "use of deprecated tuple variant/field" warnings, at the message, though the program never
// names it) and rustc warns "`#[deprecated]` attribute cannot be used on match arms". Under
// `#![deny(warnings)]` the valid protocol does not compile.
#![deny(warnings)]

pipes::proto! {
    pub versions {
        Start: send {
            #[deprecated(note = "send `New`")]
            Old(u8) -> Start,
            New(u16) -> Start,
            Stop -> !,
        }
    }
}

fn main() {
    let (server, client) = versions::init();
    client.new(1).unwrap().stop().unwrap();
    drop(server);
}

// Found by review 7: `#[cfg(..)]` on a message removes it from the enum; when it was the only
// message naming a state's type parameter, the enum no longer uses the parameter. codegen decides
// whether to add its hidden `__Params` variant before cfg runs (codegen.rs, message_enum's
// `unused`), so the enum fails with E0392, spanned at the whole `proto!` invocation.
#![deny(warnings)]

pipes::proto! {
    pub maybe {
        Start: send<T> {
            #[cfg(any())]
            Item(T) -> Start<T>,
            Stop -> !,
        }
    }
}

fn main() {
    let (server, client) = maybe::init::<u8>();
    client.stop().unwrap();
    assert!(matches!(server.recv(), Ok(maybe::Start::Stop)));
}

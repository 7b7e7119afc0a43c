// A binary that declares protocols and uses neither compiles under `#![deny(warnings)]`: an
// endpoint type's span is its state's name (so rustc's "method not found for this struct"
// points there), but it stays the macro's, so `dead_code` does not report the user's state.
#![deny(warnings)]

pipes::proto! {
    chat {
        Lobby: send {
            Join(String) -> Room,
            Leave -> Done,
        }
        Room: recv {
            Message(String) -> Room,
            Kicked -> Lobby,
        }
        Done {}
    }
}

pipes::proto! {
    generic {
        Start: send<T: Send> { Item(T) -> Start<T>, Stop -> ! }
    }
}

fn main() {}

// A misspelt message in a `select!` arm: rustc suggests the message and shows where the
// protocol declares it (at the message's name, not the whole `proto!` invocation).

pipes::proto! {
    chat {
        Room: recv {
            Message(String) -> Room,
            Kicked -> Room,
        }
    }
}
use chat::Room::{Kicked, Message};

fn main() {
    let (_server, room) = chat::init();
    pipes::select! {
        room => {
            Message(_text) -> _room {},
            Kiked -> _room {},
        },
    }
    let _ = Kicked;
}

// a protocol in a private module of a binary, of which the program receives a message it never
// sends, compiles under `#![deny(warnings)]`: the hidden payload enum's unsent variant is not
// reported as dead code.
#![deny(warnings)]

mod protocol {
    pipes::proto! {
        /// Asks, and is answered or refused.
        pub ask {
            Ask: send { Question(u32) -> Answer }
            Answer: recv { Yes -> !, No -> ! }
        }
    }
}

use protocol::ask;

fn main() {
    let (server, client) = ask::init();
    let answer = client.question(7).unwrap();
    let ask::Ask::Question(_, server) = server.recv().unwrap();
    // This program's server always says yes: `No` is received (matched) but never sent.
    server.yes().unwrap();
    match answer.recv().unwrap() {
        ask::Answer::Yes => {}
        ask::Answer::No => unreachable!(),
    }
}

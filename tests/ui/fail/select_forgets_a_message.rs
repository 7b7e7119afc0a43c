// select! arms are a match on the state's messages: forgetting one does not compile.

pipes::proto! {
    shout {
        Loud: send { Shout(String) -> Loud, Quiet -> ! }
    }
}

use shout::Loud::*;

fn main() {
    let (server, _client) = shout::init();
    pipes::select! {
        server => {
            Shout(_text) -> _next {},
        },
    }
}

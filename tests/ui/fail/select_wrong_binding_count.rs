// A select! arm binds as many values as its message carries: the endpoint for the next state
// is the arm's `-> name`, not one of the bindings. Too few bindings are reported in protocol
// words alone; too many are too, and rustc's own count of the variant's fields (endpoint
// included) follows.

pipes::proto! {
    shout {
        Loud: send { Shout(String, u8) -> Loud, Whisper(String) -> Loud, Quiet -> ! }
    }
}

use shout::Loud::*;

fn main() {
    let (server, _client) = shout::init();
    pipes::select! {
        server => {
            Shout(_text) -> _next {},
            Whisper(_text, _volume) -> _next {},
            Quiet -> ! {},
        },
    }
}

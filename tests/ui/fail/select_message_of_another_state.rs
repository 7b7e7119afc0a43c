// A select! arm names a message of another state: the error is at that arm.

pipes::proto! {
    pingpong {
        Ping: send { Ping -> Pong }
        Pong: recv { Pong -> Ping }
    }
}

use pingpong::Pong::*;

fn main() {
    let (server, _client) = pingpong::init();
    pipes::select! {
        server => {
            Pong -> _next {},
        },
    }
}

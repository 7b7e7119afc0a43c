// The server cannot send what the client sends.

pipes::proto! {
    pingpong {
        Ping: send { Ping -> Pong }
        Pong: recv { Pong -> Ping }
    }
}

fn main() {
    let (server, _client) = pingpong::init();
    let _ = server.ping();
}

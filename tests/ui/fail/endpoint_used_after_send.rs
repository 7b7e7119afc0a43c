// An endpoint is single-use: sending consumes it, so using it again does not compile.

pipes::proto! {
    pingpong {
        Ping: send { Ping -> Pong }
        Pong: recv { Pong -> Ping }
    }
}

fn main() {
    let (_server, client) = pingpong::init();
    let _pong = client.ping();
    let _again = client.ping();
}

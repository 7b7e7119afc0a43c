// A sending endpoint cannot receive.

pipes::proto! {
    pingpong {
        Ping: send { Ping -> Pong }
        Pong: recv { Pong -> Ping }
    }
}

fn main() {
    let (_server, client) = pingpong::init();
    let _ = client.recv();
}

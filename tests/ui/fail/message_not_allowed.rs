// A state offers only its own messages: `Ping` cannot answer with `pong`.

pipes::proto! {
    pingpong {
        Ping: send { Ping -> Pong }
        Pong: recv { Pong -> Ping }
    }
}

fn main() {
    let (_server, client) = pingpong::init();
    let _ = client.pong();
}

// Endpoints are owned by one thread at a time: they are Send, never Sync.

pipes::proto! {
    pingpong {
        Ping: send { Ping -> Pong }
        Pong: recv { Pong -> Ping }
    }
}

fn is_sync<T: Sync>(_: &T) {}

fn main() {
    let (_server, client) = pingpong::init();
    is_sync(&client);
}

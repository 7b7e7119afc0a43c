// select_async! has no timeout arm: the runtime has no timer, so the error says what to do.

pipes::proto! {
    shout {
        Loud: send { Shout(String) -> Loud, Quiet -> ! }
    }
}

async fn listen(server: shout::server::Loud) {
    pipes::select_async! {
        server => {
            shout::Loud::Shout(_text) -> _next {},
            shout::Loud::Quiet -> ! {},
        },
        timeout(std::time::Duration::from_millis(1)) => {},
    }
}

fn main() {
    let (server, _client) = shout::init();
    drop(listen(server));
}

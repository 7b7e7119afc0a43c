// select_async! borrows its endpoints exclusively while it waits (which is what makes its future
// `Send`), so an endpoint must be a mutable place: the error is at the endpoint, and says to
// declare it `mut`.

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
    }
}

fn main() {
    let (server, _client) = shout::init();
    drop(listen(server));
}

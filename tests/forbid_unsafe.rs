//! A crate that forbids unsafe code can still declare protocols: what `proto!` generates is the
//! runtime's responsibility, not the user's.
#![forbid(unsafe_code)]

pipes::proto! {
    /// Bounded: one session buffer, built with the runtime's one unsafe entry point.
    pub pingpong {
        Ping: send { Ping(u32) -> Pong, Bye -> ! }
        Pong: recv { Pong(u32) -> Ping }
    }

    /// Unbounded: a packet per message.
    pub ticks {
        Open: send { Tick(u64) -> Open, Stop -> ! }
    }
}

#[test]
fn bounded_and_unbounded_protocols_compile_and_run_under_forbid_unsafe_code() {
    let (server, client) = pingpong::init();
    let pong = client.ping(1).unwrap();
    let pingpong::Ping::Ping(n, server) = server.recv().unwrap() else {
        panic!("ping was sent");
    };
    let _server = server.pong(n + 1).unwrap();
    let pingpong::Pong::Pong(n, client) = pong.recv().unwrap();
    assert_eq!(n, 2);
    client.bye().unwrap();

    let (server, client) = ticks::init();
    client.tick(7).unwrap().stop().unwrap();
    let ticks::Open::Tick(7, server) = server.recv().unwrap() else {
        panic!("a tick was sent first");
    };
    assert!(matches!(server.recv().unwrap(), ticks::Open::Stop));
}

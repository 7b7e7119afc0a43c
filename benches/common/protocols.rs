//! The pingpong protocols, bounded and unbounded, and their round trips: shared by the
//! `pingpong` and `handoff` benchmarks.

use std::thread;
use std::time::Instant;

use super::out_of_time;

pipes::proto! {
    pingpong {
        ping: send { ping(u64) -> pong }
        pong: recv { pong(u64) -> ping }
    }

    // An unreachable self-loop makes the same protocol unbounded, as in 2012's benchmark.
    #[allow(unreachable_states)]
    pingpong_unbounded {
        ping: send { ping(u64) -> pong }
        pong: recv { pong(u64) -> ping }
        you_will_never_catch_me: send { never_ever_ever -> you_will_never_catch_me }
    }
}

/// Round trips between the calling thread and a spawned one over a `proto!`-declared protocol:
/// up to `n`, stopping once `limit` passes; returns how many were done.
macro_rules! protocol {
    ($name:ident, $proto:ident) => {
        pub fn $name(n: u64, limit: Instant) -> u64 {
            let (server, client) = $proto::init();
            let echo = thread::spawn(move || {
                let mut server = server;
                while let Ok($proto::ping::ping(x, reply)) = server.recv() {
                    match reply.pong(x + 1) {
                        Ok(next) => server = next,
                        Err(_) => break,
                    }
                }
            });
            let mut client = client;
            let mut done = 0;
            while done < n && !out_of_time(done, limit) {
                let $proto::pong::pong(x, next) = client.ping(done).unwrap().recv().unwrap();
                assert_eq!(x, done + 1);
                client = next;
                done += 1;
            }
            drop(client);
            echo.join().unwrap();
            done
        }
    };
}

protocol!(proto_bounded, pingpong);
protocol!(proto_unbounded, pingpong_unbounded);

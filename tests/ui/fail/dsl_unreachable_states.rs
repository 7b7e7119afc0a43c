// A protocol mistake is a compile error at the user's own tokens: unreachable states

pipes::proto! {
    pingpong {
        ping: send { ping -> pong }
        pong: recv { pong -> ping }
        lost: send { lost -> lost }
        #[allow(unreachable_states)]
        allowed: send { allowed -> lost }
    }
}

fn main() {}

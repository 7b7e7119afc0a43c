// A protocol mistake is a compile error at the user's own tokens: a state derives `Debug`,
// which its message enum has already.

pipes::proto! {
    ping {
        #[derive(Debug)]
        Start: send { Ping(u32) -> Waiting }
        /// Docs and other derives are fine beside it.
        #[derive(Clone, Debug)]
        Waiting: recv { Pong -> Done }
        /// And under `cfg_attr`.
        #[cfg_attr(all(), derive(Debug))]
        Done: send { Bye -> ! }
    }
}

fn main() {}

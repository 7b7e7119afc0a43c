// A stream's endpoint in a payload: the compiler cannot tell it is an endpoint, but it does not
// serialize, and the error says to open a second session.

pipes::proto! {
    #[wire]
    pub jobs {
        Start: send { Results(pipes::Chan<u64>) -> ! }
    }
}

fn main() {}

// A protocol mistake is a compile error at the user's own tokens: bad direction word

pipes::proto! {
    p {
        Start: sendrecv {
            Hello -> !,
        }
    }
}

fn main() {}

// A protocol mistake is a compile error at the user's own tokens: duplicate protocol

pipes::proto! {
    p {
        Start: send { Hello -> ! }
    }

    p {
        Start: recv { Hello -> ! }
    }
}

fn main() {}

// A protocol mistake is a compile error at the user's own tokens: messages without direction

pipes::proto! {
    p {
        Start {
            Hello -> Start,
        }
    }
}

fn main() {}

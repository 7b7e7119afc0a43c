// A protocol mistake is a compile error at the user's own tokens: syntax missing arrow

pipes::proto! {
    p {
        Start: send {
            Hello Start,
        }
    }
}

fn main() {}

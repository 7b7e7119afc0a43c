// A protocol mistake is a compile error at the user's own tokens: undefined state

pipes::proto! {
    p {
        Start: send {
            Hello -> Elsewhere,
        }
    }
}

fn main() {}

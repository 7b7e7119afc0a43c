// A protocol mistake is a compile error at the user's own tokens: bad direction typo

pipes::proto! {
    p {
        Start: sned {
            Hello -> Reply,
        }
        Reply: Recv {
            Hi -> Start,
        }
    }
}

fn main() {}

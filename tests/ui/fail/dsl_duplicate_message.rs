// A protocol mistake is a compile error at the user's own tokens: duplicate message

pipes::proto! {
    p {
        Start: send {
            Hello -> Start,
            Bye -> !,
            Hello(String) -> !,
        }
    }
}

fn main() {}

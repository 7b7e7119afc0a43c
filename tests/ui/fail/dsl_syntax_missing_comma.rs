// A protocol mistake is a compile error at the user's own tokens: syntax missing comma

pipes::proto! {
    p {
        Start: send {
            Hello -> Start
            Bye -> !
        }
    }
}

fn main() {}

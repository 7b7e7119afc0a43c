// A protocol mistake is a compile error at the user's own tokens: method is keyword

pipes::proto! {
    p {
        Start: send {
            Move(u64) -> Start,
            Type -> !,
        }
    }
}

fn main() {}

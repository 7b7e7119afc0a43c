// A protocol mistake is a compile error at the user's own tokens: duplicate generic param

pipes::proto! {
    p {
        Start: send<T, U, T: Clone> {
            Data(T, U) -> !,
        }
    }
}

fn main() {}

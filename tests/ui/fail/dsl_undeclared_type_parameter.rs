// A protocol mistake is a compile error at the user's own tokens: undeclared type parameter

pipes::proto! {
    p {
        Open: send<T: Send> {
            Data(T) -> Open<T>,
            Close -> Closing,
        }
        Closing: recv {
            Last(Vec<T>, Option<(T, u8)>) -> !,
        }
    }
}

fn main() {}

// A protocol mistake is a compile error at the user's own tokens: undeclared type argument

pipes::proto! {
    p {
        Open: send<T> {
            Data(T) -> Ack,
        }
        Ack: recv {
            Ok -> Open<T>,
        }
    }
}

fn main() {}

// A protocol mistake is a compile error at the user's own tokens: extra type arguments

pipes::proto! {
    p {
        Start: send<T> {
            Data(T) -> Next<T, u8>,
        }
        Next: recv<T> {
            Ack -> Start<T, T>,
            Done -> Over<T>,
        }
        Over {}
    }
}

fn main() {}

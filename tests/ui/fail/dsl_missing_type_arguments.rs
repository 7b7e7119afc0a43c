// A protocol mistake is a compile error at the user's own tokens: missing type arguments

pipes::proto! {
    stream {
        Stream: send<T: Send> {
            Send(T) -> Stream,
        }
    }
}

fn main() {}

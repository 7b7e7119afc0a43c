// A #[wire] protocol cannot have generic states: both ends must agree on every payload type
// when they are compiled.

pipes::proto! {
    #[wire]
    pub stream {
        Stream: send<T> { Item(T) -> Stream<T>, End -> ! }
    }
}

fn main() {}

// `T:send` is the 2012 kind for `Send`, but `owned` meant `'static` before it meant `Send`:
// the macro asks rather than guesses, at the kind.

pipes::proto! {
    stream {
        Stream:send<T: owned> { data(T) -> Stream<T> }
    }
}

fn main() {}

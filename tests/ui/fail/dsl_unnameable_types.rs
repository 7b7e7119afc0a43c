// A protocol mistake is a compile error at the user's own tokens: a type that names nothing
// where `proto!` is invoked (`Self`), or that no item may hold (`impl Trait`, `_`).

pipes::proto! {
    p {
        Start: send {
            Me(Box<Self>) -> Next<Vec<_>>,
            Opaque(u8, impl Clone) -> !,
        }
        Next: recv<T> {
            Done(T) -> !,
        }
    }
}

fn main() {}

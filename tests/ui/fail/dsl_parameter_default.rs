// A protocol mistake is a compile error at the user's own tokens: a state's parameter with a
// default (every transition passes all of a state's arguments).

pipes::proto! {
    p {
        Start: send<T = u8, const N: usize = 4> {
            Data(T, [u8; N]) -> Start<T, N>,
            Stop -> !,
        }
    }
}

fn main() {}

// A protocol mistake is a compile error at the user's own tokens: a const parameter named like
// generated code's locals (`p0` is a send method's first argument) would be matched against
// instead of bound, so every lower-case const parameter is refused, at the parameter.

pipes::proto! {
    p {
        Start: send<const p0: usize, const N: usize> {
            Data([u8; p0], [u8; N]) -> !,
        }
    }
}

fn main() {}

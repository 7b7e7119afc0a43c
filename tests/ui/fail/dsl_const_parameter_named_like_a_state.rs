// A protocol mistake is a compile error at the user's own tokens: a const parameter with the
// name of a state (the state's endpoint type would shadow it: rustc's E0747 at the whole
// invocation).

pipes::proto! {
    p {
        Start: send<const N: usize> { Data([u8; N]) -> N }
        N: recv { Done -> ! }
    }
}

fn main() {}

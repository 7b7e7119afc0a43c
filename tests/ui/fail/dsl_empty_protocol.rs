// A protocol mistake is a compile error at the user's own tokens: empty protocol

pipes::proto! {
    /// A protocol must have a start state.
    pub p {
    }
}

fn main() {}

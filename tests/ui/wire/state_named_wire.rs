// A state of a #[wire] protocol cannot be called `Wire`: the module holds the protocol's
// `Wire` type.

pipes::proto! {
    #[wire]
    pub hello {
        Wire: send { Hello -> ! }
    }
}

fn main() {}

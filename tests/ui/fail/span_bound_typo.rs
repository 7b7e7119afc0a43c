// A typo in a state's bounds is reported at the misspelt bound, not at the parameter.

pipes::proto! {
    stream {
        Open: send<T: Clone + Sendd> { Data(T) -> Open<T> }
    }
}

fn main() {}

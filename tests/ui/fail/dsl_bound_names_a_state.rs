// A protocol mistake is a compile error at the user's own tokens: a bound or a const
// parameter's type whose path starts with a state's name names the state, since bounds are
// written inside the protocol's module (a path from the crate root is not shadowed).

pipes::proto! {
    p {
        Start: send<T: Sync + Into<String>, const N: u8, V: ::core::marker::Sync> {
            Go(T, V) -> String,
            Wait -> Sync,
            Other -> u8,
        }
        String: recv { Back -> ! }
        Sync: recv { Back -> ! }
        u8: recv { Back -> ! }
    }
}

fn main() {}

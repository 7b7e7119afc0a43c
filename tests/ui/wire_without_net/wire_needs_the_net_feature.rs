// Without pipes' `net` feature, a #[wire] protocol is an error at `#[wire]`: remote sessions
// live in `pipes::net`.

pipes::proto! {
    #[wire]
    pub hello {
        Start: send { Hello -> ! }
    }
}

fn main() {}

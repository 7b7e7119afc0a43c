// `#[wire]` takes no arguments.

pipes::proto! {
    #[wire(tcp)]
    pub hello {
        Start: send { Hello -> ! }
    }
}

fn main() {}

// A protocol mistake is a compile error at the user's own tokens: name is keyword

pipes::proto! {
    type {
        match: send { Go -> match, yield -> ! }
    }
}

fn main() {}

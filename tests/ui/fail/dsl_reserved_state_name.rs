// A protocol mistake is a compile error at the user's own tokens: reserved state name

pipes::proto! {
    p {
        client: send { Hello -> server }
        server: recv { Hello -> client }
    }
}

fn main() {}

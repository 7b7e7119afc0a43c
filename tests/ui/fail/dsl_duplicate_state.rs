// A protocol mistake is a compile error at the user's own tokens: duplicate state

pipes::proto! {
    bank {
        Login: send { Login(String) -> Connected }
        Connected: send { Logout -> ! }
        Login: recv { Retry -> Login }
    }
}

fn main() {}

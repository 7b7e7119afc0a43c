// A protocol mistake is a compile error at the user's own tokens: many errors at once

pipes::proto! {
    /// Everything wrong at once: each error is reported, in source order.
    bank {
        Login: sned {
            Login(String, String) -> LoginResponse,
        }
        LoginResponse: recv {
            LoggedIn -> Conected,
            Invalid -> Login,
            Invalid -> Login,
        }
        Connected: send {
            Deposit(u64) -> Connected<u64>,
            deposit -> !,
        }
        client: recv {}
    }
}

fn main() {}

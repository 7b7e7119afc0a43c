// A protocol mistake is a compile error at the user's own tokens: undefined state typo

pipes::proto! {
    pub bank {
        Login: send {
            Login(String, String) -> LoginResponse,
        }
        LoginResponse: recv {
            LoggedIn -> Conected,
            Invalid -> Login,
        }
        Connected: send {
            Logout -> !,
        }
    }
}

fn main() {}

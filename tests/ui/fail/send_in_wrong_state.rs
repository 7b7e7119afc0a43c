// Sending a message of another state: `login` is the client's message in `Login`, not in
// `Connected`. Send methods are inherent methods of each state's endpoint, and rustc has no
// hook (such as `#[diagnostic::on_unimplemented]`, which is for traits) to name the states
// that allow the message: the error names the state the endpoint is in, at its declaration.

pipes::proto! {
    bank {
        Login: send { Login(String) -> Connected }
        Connected: send { Deposit(u64) -> Connected, Logout -> ! }
    }
}

fn main() {
    let (_server, client) = bank::init();
    let connected = client.login("me".into()).unwrap();
    let _ = connected.login("me again".into());
}

// Receiving gives an enum of the state's messages: a match that forgets one does not compile.

pipes::proto! {
    login {
        Login: send { Login(String) -> Response }
        Response: recv { LoggedIn -> !, Invalid -> ! }
    }
}

fn main() {
    let (_server, client) = login::init();
    let response = client.login("alice".into()).unwrap();
    match response.recv().unwrap() {
        login::Response::LoggedIn => {}
    }
}

// DESIGN section 2's bank: a wrong password, the right one, two deposits, a refused
// withdrawal, and the server's total on logout.

#[test]
fn a_session_adds_up() {
    let (server, client) = bank::init();
    let server = std::thread::spawn(move || {
        let mut login = server;
        let mut deposits = 0;
        let mut connected = loop {
            let bank::Login::Login(_user, password, reply) = login.recv().unwrap();
            if password == "right" {
                break reply.logged_in().unwrap();
            }
            login = reply.invalid().unwrap();
        };
        loop {
            connected = match connected.recv().unwrap() {
                bank::Connected::Deposit(amount, next) => {
                    deposits += amount;
                    next
                }
                bank::Connected::Withdrawal(_, reply) => reply.insufficient_funds().unwrap(),
                bank::Connected::Logout => return deposits,
            };
        }
    });
    let reply = client.login("me".into(), "wrong".into()).unwrap();
    let bank::LoginResponse::Invalid(client) = reply.recv().unwrap() else {
        panic!("a wrong password logs in");
    };
    let reply = client.login("me".into(), "right".into()).unwrap();
    let bank::LoginResponse::LoggedIn(client) = reply.recv().unwrap() else {
        panic!("the right password is refused");
    };
    let reply = client.deposit(40).unwrap().deposit(2).unwrap().withdrawal(100).unwrap();
    let bank::WithdrawalResponse::InsufficientFunds(client) = reply.recv().unwrap() else {
        panic!("money out of nothing");
    };
    client.logout().unwrap();
    assert_eq!(server.join().unwrap(), 42);
}

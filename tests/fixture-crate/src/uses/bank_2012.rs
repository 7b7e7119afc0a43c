// The seed's bank: lower-case names, payload types named where the protocol is generated
// (`crate::payloads`).

#[test]
fn the_payload_types_are_the_ones_in_scope() {
    let (server, client) = bank::init();
    let reply = client.login("me".into(), "pw".into()).unwrap();
    let bank::login::login(user, password, server) = server.recv().unwrap();
    assert_eq!((user.as_str(), password.as_str()), ("me", "pw"));
    let connected = server.ok().unwrap();
    let bank::login_response::ok(client) = reply.recv().unwrap() else {
        panic!("refused");
    };
    let _reply = client.withdrawal(5).unwrap();
    let bank::connected::withdrawal(amount, _server) = connected.recv().unwrap() else {
        panic!("not a withdrawal");
    };
    assert_eq!(amount, 5);
}

// The tutorial's stream, spelt `Stream:send<T:send>`: the 2012 kind bounds `T` by `Send`.

#[test]
fn three_values_arrive_in_order() {
    let (mut server, mut client) = stream::init::<u32>();
    let mut got = Vec::new();
    for i in 0..3 {
        client = client.send(i).unwrap();
        let stream::Stream::Send(value, next) = server.recv().unwrap();
        got.push(value);
        server = next;
    }
    assert_eq!(got, [0, 1, 2]);
}

#[test]
fn the_endpoints_cross_threads() {
    let (server, client) = stream::init::<String>();
    let sender = std::thread::spawn(move || client.send("hello".into()).map(drop).is_ok());
    let stream::Stream::Send(text, _server) = server.recv().unwrap();
    assert!(sender.join().unwrap());
    assert_eq!(text, "hello");
}

// libstd's 2012 future, spelt `waiting:recv<T:send>`: the server fulfils it once, from another
// thread (the 2012 kind `send` bounds `T` by `Send`).

#[test]
fn the_value_arrives_from_another_thread() {
    let (server, client) = future_pipe::init::<String>();
    let fulfil = std::thread::spawn(move || server.completed("done".into()).is_ok());
    let future_pipe::waiting::completed(value) = client.recv().unwrap();
    assert!(fulfil.join().unwrap());
    assert_eq!(value, "done");
}

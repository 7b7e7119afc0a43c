// The 2012 presentation's double buffer: one buffer handed back and forth ten times.

#[test]
fn the_buffer_goes_back_and_forth() {
    let (server, client) = double_buffer::init();
    let producer = std::thread::spawn(move || {
        let mut acquire = server;
        let mut buffer: Option<Buffer> = Some(Vec::new());
        for round in 0..10u8 {
            let double_buffer::acquire::request(wait) = acquire.recv().unwrap();
            let mut filled = buffer.take().unwrap();
            filled.push(round);
            let release = wait.give_buffer(filled).unwrap();
            let double_buffer::release::release(back, next) = release.recv().unwrap();
            buffer = Some(back);
            acquire = next;
        }
        buffer.unwrap()
    });
    let mut acquire = client;
    for _ in 0..10 {
        let double_buffer::wait_buffer::give_buffer(buffer, release) =
            acquire.request().unwrap().recv().unwrap();
        acquire = release.release(buffer).unwrap();
    }
    drop(acquire);
    assert_eq!(producer.join().unwrap(), (0..10).collect::<Vec<u8>>());
}

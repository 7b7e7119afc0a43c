//! One tokio task waits on a port in two ways at once (a quick look under a timeout, and a
//! longer wait); the timeout fires, and the send that comes later must still wake the task.
//! Found by an adversarial review as a hang (the runtime's side of it:
//! `two_waits_of_one_task_on_one_endpoint_each_keep_a_registration` in
//! `pipes-runtime/tests/async_waits.rs`).

use std::time::Duration;

use pipes::select::{Selectable, selecti_async};

#[test]
fn a_task_waiting_twice_on_one_port_is_woken_after_one_wait_times_out() {
    let (done_tx, done_rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap();
        runtime.block_on(async {
            let (port, chan) = pipes::oneshot::<u32>();
            let list: [&dyn Selectable; 1] = [&port];
            let sender = std::thread::spawn(move || {
                std::thread::sleep(Duration::from_millis(200));
                chan.send(5).unwrap();
            });
            let quick = tokio::time::timeout(Duration::from_millis(20), selecti_async(&list[..]));
            let long = selecti_async(&list[..]);
            let (quick, long) = tokio::join!(quick, long);
            assert!(quick.is_err(), "the quick look times out before the send");
            assert_eq!(long, 0);
            sender.join().unwrap();
        });
        done_tx.send(()).unwrap();
    });
    // Generous: the send comes after 200 ms.
    if done_rx.recv_timeout(Duration::from_secs(5)).is_err() {
        panic!("hang: the long wait was never woken by the send (lost wake-up)");
    }
}

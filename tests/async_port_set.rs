//! A port set shared by several tokio tasks on one thread (`Rc<PortSet>` on a `LocalSet`), fed
//! by threads: every task waiting on the set is a waiter of its own, so each is woken while
//! messages are queued and each sees the set end. A `recv_async` future borrows its set
//! exclusively (which is what makes it `Send`), so tasks sharing a set wait with an async
//! select over `&set` and then take a message with `try_recv`.

use std::rc::Rc;
use std::thread;

use pipes::select::{Selectable, selecti_async};
use pipes::{PortSet, TryRecvError};

/// Two tasks receive from one set until it ends; between them they get every message once.
#[test]
fn two_local_tasks_share_a_port_set() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    let local = tokio::task::LocalSet::new();
    let set = Rc::new(PortSet::new());
    let senders: Vec<_> = (0..4u64)
        .map(|i| {
            let chan = set.chan();
            thread::spawn(move || {
                for n in 0..250 {
                    chan.send(i * 1000 + n).unwrap();
                }
            })
        })
        .collect();
    let tasks: Vec<_> = (0..2)
        .map(|_| {
            let set = Rc::clone(&set);
            local.spawn_local(async move {
                let mut got = Vec::new();
                loop {
                    selecti_async([&*set as &dyn Selectable]).await;
                    match set.try_recv() {
                        Ok(n) => got.push(n),
                        // The other task took it.
                        Err(TryRecvError::Empty(())) => {}
                        Err(TryRecvError::Disconnected(_)) => break got,
                    }
                }
            })
        })
        .collect();
    let mut received: Vec<u64> = local.block_on(&runtime, async {
        let mut received = Vec::new();
        for task in tasks {
            received.extend(task.await.unwrap());
        }
        received
    });
    for sender in senders {
        sender.join().unwrap();
    }
    received.sort();
    let expected: Vec<u64> = (0..4)
        .flat_map(|i| (0..250).map(move |n| i * 1000 + n))
        .collect();
    assert_eq!(received, expected);
}

//! Review 5: loom models of a shared chan's port (its queue and signal word) under a port set
//! and under an async receive. Queue segments are 2 slots under loom, so a few messages cross
//! links, arm links and recycle. Run with
//! `RUSTFLAGS="--cfg loom" cargo test -p pipes-runtime --test loom_review5 --release`.
#![cfg(loom)]

use std::time::Duration;

use loom::thread;
use pipes_runtime::{PortSet, SharedChan, stream};

struct ThreadWaker(thread::Thread);

impl std::task::Wake for ThreadWaker {
    fn wake(self: std::sync::Arc<Self>) {
        self.0.unpark();
    }
}

/// Polls `future` to completion, parking this loom thread between polls: a lost wake-up is a
/// loom deadlock.
fn block_on<F: std::future::Future>(future: F) -> F::Output {
    let mut future = std::pin::pin!(future);
    let waker = std::task::Waker::from(std::sync::Arc::new(ThreadWaker(thread::current())));
    let mut cx = std::task::Context::from_waker(&waker);
    loop {
        if let std::task::Poll::Ready(output) = future.as_mut().poll(&mut cx) {
            return output;
        }
        thread::park();
    }
}

/// An async receive on a shared chan's port while one producer sends across a segment's end
/// (the second message's segment is linked by the first's producer after its publish, and the
/// close marker is in a third).
#[test]
fn async_recv_on_a_shared_port_across_links() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(|| {
        let (mut port, chan) = stream::<u8>();
        let shared = SharedChan::new(chan);
        assert!(port.try_recv().is_err());
        let sender = thread::spawn(move || {
            for i in 1..=3 {
                shared.send(i).unwrap();
            }
        });
        let mut got = Vec::new();
        while let Ok(i) = block_on(port.recv_async()) {
            got.push(i);
        }
        assert_eq!(got, [1, 2, 3]);
        sender.join().unwrap();
    });
}

/// A port whose timed-out wait armed a slot (its producer may ring late, a stale ring) joins a
/// port set, which then watches it on the queue.
#[test]
fn port_set_member_on_a_queue_after_a_timed_out_wait() {
    let mut model = loom::model::Builder::new();
    model.preemption_bound = Some(3);
    model.check(|| {
        let (port, chan) = stream::<u8>();
        let shared = SharedChan::new(chan);
        assert!(port.try_recv().is_err());
        let sender = thread::spawn(move || {
            shared.send(1).unwrap();
            shared.send(2).unwrap();
        });
        let mut got = Vec::new();
        if let Ok(i) = port.recv_timeout(Duration::from_millis(1)) {
            got.push(i);
        }
        let set = PortSet::new();
        set.add(port);
        while let Ok(i) = set.recv() {
            got.push(i);
        }
        assert_eq!(got, [1, 2]);
        sender.join().unwrap();
    });
}

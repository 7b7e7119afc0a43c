//! Receives, selects, async waits and shared chan sends inside a thread-local's destructor,
//! after the runtime's own thread-locals on that thread are gone: they must work, not abort the
//! process.

use std::cell::RefCell;
use std::thread;
use std::time::Duration;

mod common;

use common::task::block_on;
use pipes_runtime::{Port, PortSet, SharedChan, oneshot, selecti, stream};

/// What the destructor receives from, and what it reports back on.
struct Teardown {
    port: Port<u32>,
    set: PortSet<u32>,
    report: Option<SharedChan<u32>>,
}

impl Drop for Teardown {
    fn drop(&mut self) {
        // Each of these blocks until a helper thread sends (so it registers and parks).
        let from_port = self.port.recv().unwrap();
        assert_eq!(selecti(&[&self.port]), 0);
        let again = self.port.recv().unwrap();
        let from_set = self.set.recv().unwrap();
        let from_task = block_on(self.port.recv_async()).unwrap();
        let (idle, _idle_chan) = stream::<u32>();
        let timed_out = idle
            .recv_timeout(Duration::from_millis(5))
            .unwrap_err()
            .into_endpoint()
            .is_some();
        let (one, one_chan) = oneshot::<u32>();
        thread::spawn(move || {
            thread::sleep(Duration::from_millis(10));
            one_chan.send(5).unwrap();
        });
        let from_oneshot = block_on(one.recv_async()).unwrap();
        let report = self.report.take().unwrap();
        for value in [
            from_port,
            again,
            from_set,
            from_task,
            u32::from(timed_out),
            from_oneshot,
        ] {
            report.send(value).unwrap();
        }
    }
}

thread_local! {
    static TEARDOWN: RefCell<Option<Teardown>> = const { RefCell::new(None) };
}

#[test]
fn blocking_receives_selects_and_async_waits_work_in_a_thread_local_destructor() {
    let (port, chan) = stream::<u32>();
    let set = PortSet::new();
    let set_chan = set.chan();
    let (report_port, report) = stream::<u32>();
    let report = SharedChan::new(report);
    let receiver = thread::spawn(move || {
        // Registered first, so destroyed after every thread-local the runtime makes below.
        TEARDOWN.with(|teardown| {
            *teardown.borrow_mut() = Some(Teardown {
                port,
                set,
                report: Some(report),
            })
        });
        // Make the runtime create its per-thread state on this thread: a blocking wait (the
        // thread's waiter, its spin budget), an async one (the spare task waiter), and a shared
        // chan's send (the thread's record of its claims).
        let (_shared_port, shared) = stream::<u32>();
        SharedChan::new(shared).send(0).unwrap();
        let (mut warm, warm_chan) = stream::<u32>();
        let warmer = thread::spawn(move || {
            thread::sleep(Duration::from_millis(10));
            warm_chan.send(0).unwrap();
            warm_chan.send(0).unwrap();
        });
        warm.recv().unwrap();
        block_on(warm.recv_async()).unwrap();
        warmer.join().unwrap();
    });
    let sender = thread::spawn(move || {
        // Paced so that each wait in the destructor finds nothing at first, and blocks.
        let pace = || thread::sleep(Duration::from_millis(20));
        for value in [1, 2] {
            pace();
            chan.send(value).unwrap();
        }
        pace();
        set_chan.send(3).unwrap();
        pace();
        chan.send(4).unwrap();
    });
    receiver.join().unwrap();
    sender.join().unwrap();
    assert_eq!(report_port.iter().collect::<Vec<_>>(), [1, 2, 3, 4, 1, 5]);
}

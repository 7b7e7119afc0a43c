//! Receives, selects, async waits and shared chan sends inside a thread-local's destructor,
//! after the runtime's own thread-locals on that thread are gone: they must work, not abort the
//! process.

use std::cell::RefCell;
use std::pin::Pin;
use std::task::Context;
use std::thread;
use std::time::Duration;

mod common;

use common::forget;
use common::task::block_on;
use pipes_runtime::{Chan, Port, PortSet, SharedChan, oneshot, selecti, stream};

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

pipes_runtime::proto! {
    /// Unbounded: two lanes, so the sender may wait for room.
    #[allow(dead_code)]
    numbers {
        Stream: send { Number(u64) -> Stream, End -> ! }
    }
}

/// Waits for room in a thread-local's destructor, after the runtime's own thread-locals on the
/// thread are gone: blocking and as a task, each until a helper thread takes; then drops a
/// sender whose forgotten wait left a waiter in its lane's `taken` word and a port set with a
/// pending future's registration forgotten in it.
struct RoomTeardown {
    client: Option<numbers::client::Stream>,
    server: Option<numbers::server::Stream>,
    done: Option<Chan<u32>>,
}

impl Drop for RoomTeardown {
    fn drop(&mut self) {
        use pipes_runtime::__private::{RoomFuture, wait_room};
        let client = self.client.take().unwrap();
        let server = self.server.take().unwrap();
        let taker = std::thread::spawn(move || {
            let mut server = server;
            for _ in 0..2 {
                std::thread::sleep(std::time::Duration::from_millis(10));
                let Ok(numbers::Stream::Number(_, next)) = server.recv() else {
                    panic!("not a number")
                };
                server = next;
            }
            server
        });
        assert!(wait_room(&client, None));
        let client = client.number(2).unwrap();
        let client = common::task::block_on(RoomFuture::new(client));
        let client = client.number(3).unwrap();
        let server = taker.join().unwrap();
        // A forgotten wait leaves its waiter in `taken`; the receiver's drop takes it out.
        let mut future = RoomFuture::new(client);
        let (_count, waker) = common::task::counting();
        assert!(
            Pin::new(&mut future)
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
        forget(future);
        drop(server);
        // A set with a forgotten pending future, dropped here.
        let mut set = PortSet::<u32>::new();
        let _chan = set.chan();
        let mut pending = set.recv_async();
        assert!(
            Pin::new(&mut pending)
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
        forget(pending);
        drop(set);
        self.done.take().unwrap().send(1).unwrap();
    }
}

thread_local! {
    static ROOM_TEARDOWN: RefCell<Option<RoomTeardown>> = const { RefCell::new(None) };
}

#[test]
fn room_waits_and_drops_work_in_a_thread_local_destructor() {
    use pipes_runtime::__private::Backlog;
    let (done_port, done) = stream::<u32>();
    std::thread::spawn(move || {
        let (server, client) = numbers::init();
        server.report(1);
        let client = client.number(1).unwrap();
        ROOM_TEARDOWN.with(|slot| {
            *slot.borrow_mut() = Some(RoomTeardown {
                client: Some(client),
                server: Some(server),
                done: Some(done),
            })
        });
        // The runtime's per-thread state, made after (so destroyed before) the teardown's.
        let (mut warm, warm_chan) = stream::<u32>();
        warm_chan.send(0).unwrap();
        warm.recv().unwrap();
        warm_chan.send(0).unwrap();
        common::task::block_on(warm.recv_async()).unwrap();
        let (_p, c) = stream::<u32>();
        pipes_runtime::SharedChan::new(c).send(0).unwrap();
    })
    .join()
    .unwrap();
    assert_eq!(done_port.recv().unwrap(), 1);
}

//! Wakers that drop the future they wake, as an executor does with a task cancelled before it
//! ran again: the wake runs inside the send that woke it, on the sender's thread, and the drop
//! ends the receiving endpoint there, under the send (a single-use packet is freed, a session
//! share or a lane end let go of, a message the send just wrote dropped). Every payload is
//! counted: received or dropped, once. These tests run under Miri.

use std::any::Any;
use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Wake, Waker};
use std::thread;

use pipes_runtime::oneshot;
use pipes_runtime::select::select2_async;

/// A payload that counts its drops.
struct Counted(Arc<AtomicUsize>);

impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

pipes_runtime::proto! {
    /// Unbounded: two lanes.
    #[allow(dead_code)]
    ticks {
        Open: send { Tick(Counted) -> Open, Stop -> ! }
    }
}

pipes_runtime::proto! {
    /// Bounded: a session buffer.
    #[allow(dead_code)]
    ask {
        Ask: send { Question(Counted) -> Answer, Quit -> ! }
        Answer: recv { Reply(Counted) -> Ask }
    }
}

/// Holds a future, and drops it when woken (and so when the sender's send wakes it).
#[derive(Default)]
struct DropsWhenWoken {
    future: Mutex<Option<Box<dyn Any + Send>>>,
    wakes: AtomicUsize,
}

impl Wake for DropsWhenWoken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.wakes.fetch_add(1, Ordering::SeqCst);
        // Taken out first: the future's drop may wake (and drop) other wakers.
        let future = self.future.lock().unwrap().take();
        drop(future);
    }
}

/// Polls `future` once with a waker that drops it when woken; it must be pending. Returns the
/// waker's state, to see it was woken.
fn park_in_waker<F: Future + Unpin + Send + 'static>(mut future: F) -> Arc<DropsWhenWoken> {
    let holder = Arc::new(DropsWhenWoken::default());
    let waker = Waker::from(Arc::clone(&holder));
    assert!(
        Pin::new(&mut future)
            .poll(&mut Context::from_waker(&waker))
            .is_pending(),
        "nothing was sent yet"
    );
    *holder.future.lock().unwrap() = Some(Box::new(future));
    holder
}

fn count() -> Arc<AtomicUsize> {
    Arc::new(AtomicUsize::new(0))
}

const ROUNDS: usize = if cfg!(miri) { 4 } else { 200 };

#[test]
fn a_oneshot_receive_dropped_by_the_wake_of_its_send_drops_the_message_once() {
    for _ in 0..ROUNDS {
        let drops = count();
        let (port, chan) = oneshot::<Counted>();
        let holder = park_in_waker(port.recv_async());
        // The send wakes the waker, which drops the future and its port: the packet the send
        // just filled is freed under it, with the message.
        assert!(chan.send(Counted(Arc::clone(&drops))).is_ok());
        assert_eq!(holder.wakes.load(Ordering::SeqCst), 1);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
    }
}

#[test]
fn a_session_receive_dropped_by_the_wake_of_its_send_closes_the_session() {
    for _ in 0..ROUNDS {
        let drops = count();
        let (server, client) = ask::init();
        let holder = park_in_waker(server.recv_async());
        let answer = client.question(Counted(Arc::clone(&drops))).unwrap();
        assert_eq!(holder.wakes.load(Ordering::SeqCst), 1);
        assert_eq!(
            drops.load(Ordering::SeqCst),
            1,
            "dropped with the server's share"
        );
        assert!(answer.recv().is_err(), "the server is gone");
    }
}

#[test]
fn a_lane_receive_dropped_by_the_wake_of_its_send_hands_later_sends_back() {
    for _ in 0..ROUNDS {
        let drops = count();
        let (server, client) = ticks::init();
        let holder = park_in_waker(server.recv_async());
        let client = client.tick(Counted(Arc::clone(&drops))).unwrap();
        assert_eq!(holder.wakes.load(Ordering::SeqCst), 1);
        assert_eq!(
            drops.load(Ordering::SeqCst),
            1,
            "dropped with the server's lane"
        );
        assert!(client.tick(Counted(Arc::clone(&drops))).is_err());
        assert_eq!(drops.load(Ordering::SeqCst), 2, "handed back, then dropped");
    }
}

#[test]
fn an_async_select_dropped_by_the_wake_of_one_send_closes_both() {
    for _ in 0..ROUNDS {
        let drops = count();
        let (left, left_client) = ticks::init();
        let (right, right_chan) = oneshot::<Counted>();
        let holder = park_in_waker(select2_async(left, right));
        let _left_client = left_client.tick(Counted(Arc::clone(&drops))).unwrap();
        assert_eq!(holder.wakes.load(Ordering::SeqCst), 1);
        assert_eq!(drops.load(Ordering::SeqCst), 1);
        assert!(right_chan.send(Counted(Arc::clone(&drops))).is_err());
        assert_eq!(drops.load(Ordering::SeqCst), 2);
    }
}

/// The same from another thread: the sender's thread runs the wake and so the drop, while the
/// thread that polled goes on.
#[test]
fn receives_dropped_by_the_wakes_of_sends_from_another_thread() {
    for _ in 0..ROUNDS {
        let drops = count();
        let (port, chan) = oneshot::<Counted>();
        let (server, client) = ask::init();
        let (lanes, lanes_client) = ticks::init();
        let holders = [
            park_in_waker(port.recv_async()),
            park_in_waker(server.recv_async()),
            park_in_waker(lanes.recv_async()),
        ];
        let sender = thread::spawn({
            let drops = Arc::clone(&drops);
            move || {
                assert!(chan.send(Counted(Arc::clone(&drops))).is_ok());
                let answer = client.question(Counted(Arc::clone(&drops))).unwrap();
                let lanes_client = lanes_client.tick(Counted(Arc::clone(&drops))).unwrap();
                (answer, lanes_client)
            }
        });
        let (answer, lanes_client) = sender.join().unwrap();
        for holder in &holders {
            assert_eq!(holder.wakes.load(Ordering::SeqCst), 1);
        }
        assert_eq!(drops.load(Ordering::SeqCst), 3);
        assert!(answer.recv().is_err());
        drop(lanes_client);
    }
}

//! Wakers that call back into the runtime: a task's `Waker` is user code, and the runtime runs
//! it from inside its own calls (a send wakes the receiver's task; a port set's watch wakes the
//! task it displaces). Found by an adversarial review: a send woke the waker while it still
//! held its lane's sending state by `&mut` (undefined behaviour under Miri once the waker sent
//! on the same chan), and a port set woke it while its state was borrowed (a panic once the
//! waker used the set). These tests run under Miri in CI.

use std::cell::{OnceCell, RefCell};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use pipes_runtime::{Chan, PortSet, stream};

thread_local! {
    static CHAN: RefCell<Option<Chan<u32>>> = const { RefCell::new(None) };
    static SET: OnceCell<PortSet<u32>> = const { OnceCell::new() };
}

/// When woken, sends one more message on this thread's chan (say, a task system whose wake hook
/// reports readiness over a stream).
struct SendsWhenWoken;

impl Wake for SendsWhenWoken {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        CHAN.with(|chan| {
            if let Some(chan) = chan.borrow().as_ref() {
                let _ = chan.send(99);
            }
        });
    }
}

#[test]
fn a_waker_may_send_on_the_chan_whose_send_woke_it() {
    let (mut port, chan) = stream::<u32>();
    CHAN.with(|slot| *slot.borrow_mut() = Some(chan));
    let waker = Waker::from(Arc::new(SendsWhenWoken));
    let mut receive = port.recv_async();
    let polled = Pin::new(&mut receive).poll(&mut Context::from_waker(&waker));
    assert!(polled.is_pending());
    CHAN.with(|chan| chan.borrow().as_ref().unwrap().send(1).unwrap());
    let polled = Pin::new(&mut receive).poll(&mut Context::from_waker(&waker));
    assert!(matches!(polled, Poll::Ready(Ok(1))));
    drop(receive);
    assert_eq!(
        port.try_recv().unwrap(),
        99,
        "the waker's send arrives after"
    );
    CHAN.with(|chan| chan.borrow_mut().take());
    assert!(port.try_recv().is_err());
}

/// When woken, counts and takes what it can from this thread's set (what a local executor's
/// waker that runs ready work inline does).
struct UsesTheSet(AtomicUsize);

impl Wake for UsesTheSet {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
        SET.with(|set| {
            if let Some(set) = set.get() {
                let _ = set.try_recv();
            }
        });
    }
}

/// A port whose receive future was polled and then forgotten (safe) keeps that task's waker in
/// its lane's word. Added to a set, the set's first look at the empty port watches it, which
/// displaces and wakes the forgotten waker: after the set let go of its state, so the waker may
/// use the set.
#[test]
fn a_waker_displaced_by_a_port_sets_watch_may_use_the_set_forgotten() {
    let (mut port, chan) = stream::<u32>();
    let wakes = Arc::new(UsesTheSet(AtomicUsize::new(0)));
    let waker = Waker::from(Arc::clone(&wakes));
    let mut receive = port.recv_async();
    let polled = Pin::new(&mut receive).poll(&mut Context::from_waker(&waker));
    assert!(polled.is_pending());
    std::mem::forget(receive);
    SET.with(|set| {
        let set = set.get_or_init(PortSet::new);
        set.add(port);
        assert!(set.try_recv().is_err());
    });
    assert_eq!(
        wakes.0.load(Ordering::SeqCst),
        1,
        "the displaced waker is woken"
    );
    chan.send(5).unwrap();
    SET.with(|set| assert_eq!(set.get().unwrap().try_recv().unwrap(), 5));
}

/// A waker that panics.
struct Panicking;

impl Wake for Panicking {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        panic!("a waker that panics");
    }
}

/// Two tasks wait on one port; the one whose watch is on top has a waker that panics. The send
/// that wakes them wakes the other all the same, then lets the panic go on (its message is
/// sent). Before, the panic left the task below unwoken: a hang.
#[test]
fn a_panicking_waker_does_not_keep_the_others_on_the_port_from_being_woken() {
    quiet_waker_panics();
    let (port, chan) = stream::<u32>();
    let counted = Arc::new(UsesTheSet(AtomicUsize::new(0)));
    let counting = Waker::from(Arc::clone(&counted));
    let panicking = Waker::from(Arc::new(Panicking));
    let endpoints: [&dyn pipes_runtime::select::Selectable; 1] = [&port];
    let mut below = pipes_runtime::select::selecti_async(&endpoints);
    let mut top = pipes_runtime::select::selecti_async(&endpoints);
    assert!(
        Pin::new(&mut below)
            .poll(&mut Context::from_waker(&counting))
            .is_pending()
    );
    assert!(
        Pin::new(&mut top)
            .poll(&mut Context::from_waker(&panicking))
            .is_pending()
    );
    let sent = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| chan.send(8)));
    assert!(sent.is_err(), "the waker's panic comes out of the send");
    assert_eq!(
        counted.0.load(Ordering::SeqCst),
        1,
        "the other task is woken"
    );
    let polled = Pin::new(&mut below).poll(&mut Context::from_waker(&counting));
    assert_eq!(polled, Poll::Ready(0));
    drop((below, top));
    assert_eq!(port.recv().unwrap(), 8, "the message was sent");
}

/// Keeps the expected panics' messages out of the test output.
fn quiet_waker_panics() {
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if info.payload().downcast_ref::<&str>() != Some(&"a waker that panics") {
            default(info);
        }
    }));
}

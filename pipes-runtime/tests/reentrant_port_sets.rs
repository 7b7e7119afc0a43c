//! Port sets used by the wakers they wake: a displaced task's `Waker` (user code, run once the
//! set's state is let go of) that receives from the set, adds ports to it or panics, while a
//! blocking receive, an async select over `&set` or a `&PortSet` future is under way. Each
//! thread-local set is one test's, made first and then reached by `get` only, so the test's
//! own reference is a shared reborrow as the waker's is. Written as probes by review 6, which
//! found them held (natively, and under Miri's Stacked and Tree Borrows).

mod common;

use std::cell::{OnceCell, RefCell};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Wake, Waker};

use common::forget;
use pipes_runtime::{Chan, PortSet, stream};

thread_local! {
    static RECEIVING_SET: OnceCell<PortSet<u32>> = const { OnceCell::new() };
    static KEPT: RefCell<Vec<Chan<u32>>> = const { RefCell::new(Vec::new()) };
}

/// When woken: receives from this thread's set, then adds a port to it and sends on it (a
/// local executor's waker that runs ready work inline).
struct ReentersTheSet(AtomicUsize);

impl Wake for ReentersTheSet {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, Ordering::SeqCst);
        RECEIVING_SET.with(|set| {
            let set = set.get().expect("the set is made before the wake");
            assert!(set.try_recv().is_err(), "nothing to take yet");
            let chan = set.chan();
            chan.send(42).unwrap();
            KEPT.with(|kept| kept.borrow_mut().push(chan));
        });
    }
}

/// A blocking `PortSet::recv` watches an idle port, displacing a forgotten future's waker; the
/// waker, woken after the set's state is let go of, receives from the set and adds a port to
/// it (growing `members`) and sends; the receive's loop then goes on, waits, and takes that
/// message. Checked under Miri's Stacked Borrows: the outer `recv` holds only `&PortSet`.
#[test]
fn a_blocking_set_receive_goes_on_after_a_displaced_waker_used_the_set() {
    let (mut idle, _idle_chan) = stream::<u32>();
    let wakes = Arc::new(ReentersTheSet(AtomicUsize::new(0)));
    let waker = Waker::from(Arc::clone(&wakes));
    {
        let mut future = idle.recv_async();
        assert!(
            Pin::new(&mut future)
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
        forget(future);
    }
    // Made first, and then reached by `get` only (shared reborrows, as the waker's), so the
    // test's own reference does not come from `get_or_init`'s `&mut`.
    RECEIVING_SET.with(|set| assert!(set.set(PortSet::new()).is_ok()));
    RECEIVING_SET.with(|set| {
        let set = set.get().unwrap();
        set.add(idle);
        let _busy = set.chan();
        assert_eq!(set.recv().unwrap(), 42);
        assert_eq!(wakes.0.load(Ordering::SeqCst), 1);
        assert!(set.try_recv().is_err());
    });
    KEPT.with(|kept| kept.borrow_mut().clear());
}

thread_local! {
    static SET2: OnceCell<PortSet<u32>> = const { OnceCell::new() };
    static TAKEN: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
    static SET3: OnceCell<PortSet<u32>> = const { OnceCell::new() };
    static TAKEN3: RefCell<Vec<u32>> = const { RefCell::new(Vec::new()) };
}

/// When woken: takes what it can from `SET2` (keeping it in `TAKEN`), then panics if told to.
struct UsesSet2 {
    panics: bool,
}

impl Wake for UsesSet2 {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        SET2.with(|set| {
            if let Some(set) = set.get()
                && let Ok(message) = set.try_recv()
            {
                TAKEN.with(|taken| taken.borrow_mut().push(message));
            }
        });
        if self.panics {
            panic!("bomb reentrant");
        }
    }
}

/// An idle port holding a forgotten receive future's watch, whose waker is `waker`.
fn idle_port_with_a_forgotten_watch(waker: &Waker) -> (pipes_runtime::Port<u32>, Chan<u32>) {
    let (mut idle, idle_chan) = stream::<u32>();
    let mut future = idle.recv_async();
    assert!(
        Pin::new(&mut future)
            .poll(&mut Context::from_waker(waker))
            .is_pending()
    );
    forget(future);
    (idle, idle_chan)
}

/// The set's receive took 7 and then woke a displaced waker that receives from the set (and
/// takes 8) and panics: 7 goes to the stash (written after the user code ran) and is the next
/// receive's. Run under Miri (both borrow models) too.
#[test]
fn a_set_receive_stashes_its_message_after_a_reentrant_waker_panics() {
    common::bombs::quiet_bombs();
    let waker = Waker::from(Arc::new(UsesSet2 { panics: true }));
    let (idle, _idle_chan) = idle_port_with_a_forgotten_watch(&waker);
    SET2.with(|set| assert!(set.set(PortSet::new()).is_ok()));
    SET2.with(|set| {
        let set = set.get().unwrap();
        set.add(idle);
        let busy = set.chan();
        busy.send(7).unwrap();
        busy.send(8).unwrap();
        let received = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| set.recv()));
        assert!(
            received.is_err(),
            "the waker's panic reaches the receive's caller"
        );
        assert_eq!(set.try_recv().unwrap(), 7, "stashed");
        assert!(set.try_recv().is_err());
    });
    assert_eq!(TAKEN.with(|taken| taken.take()), [8]);
}

/// When woken: takes what it can from `SET3` (keeping it in `TAKEN3`).
struct UsesSet3;

impl Wake for UsesSet3 {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        SET3.with(|set| {
            if let Some(set) = set.get()
                && let Ok(message) = set.try_recv()
            {
                TAKEN3.with(|taken| taken.borrow_mut().push(message));
            }
        });
    }
}

/// An async select over `&set` settles the set, which watches the idle port and then wakes
/// the displaced waker, which receives from the set; the select goes on (registers with the
/// set) after that user code ran, and a later send wakes it. Also a `&PortSet` receive future.
#[test]
fn an_async_select_and_a_shared_set_future_go_on_after_a_reentrant_displaced_waker() {
    use common::task::{counting, wakes};
    use pipes_runtime::Recv;
    use pipes_runtime::select::{Selectable, selecti_async};
    let waker = Waker::from(Arc::new(UsesSet3));
    let (idle, idle_chan) = idle_port_with_a_forgotten_watch(&waker);
    let (idle2, idle_chan2) = idle_port_with_a_forgotten_watch(&waker);
    SET3.with(|set| assert!(set.set(PortSet::new()).is_ok()));
    SET3.with(|set| {
        let set = set.get().unwrap();
        set.add(idle);
        let (count, task) = counting();
        {
            let list: [&dyn Selectable; 1] = [set];
            let mut select = selecti_async(&list[..]);
            assert!(
                Pin::new(&mut select)
                    .poll(&mut Context::from_waker(&task))
                    .is_pending()
            );
            idle_chan.send(1).unwrap();
            assert_eq!(wakes(&count), 1);
            assert_eq!(
                Pin::new(&mut select).poll(&mut Context::from_waker(&task)),
                std::task::Poll::Ready(0)
            );
        }
        assert_eq!(set.try_recv().unwrap(), 1);
        set.add(idle2);
        {
            let mut future = Recv::recv_async(set);
            assert!(
                Pin::new(&mut future)
                    .poll(&mut Context::from_waker(&task))
                    .is_pending()
            );
            idle_chan2.send(2).unwrap();
            let polled = Pin::new(&mut future).poll(&mut Context::from_waker(&task));
            assert!(matches!(polled, std::task::Poll::Ready(Ok(2))));
        }
    });
    assert!(TAKEN3.with(|taken| taken.take()).is_empty());
}

//! Wakers that panic, met where the runtime must finish what it does regardless. Found by an
//! adversarial review (review 3):
//! - in a drop path (an endpoint's drop closing a session's slots, a lane's hang-up), the
//!   panic came out of the wake midway and skipped the rest: the buffer, its unreceived
//!   messages, or the lane were leaked. Drop paths now hold panics back until they are done
//!   (`panics::deferring`);
//! - a waker whose `clone` panics, watching a word another task watches, lost that task's
//!   registration (a hang) and leaked it: the clone now happens before anything is taken out
//!   of the word. So did one whose `drop` panics (review 6): a watch now lets go of its old
//!   waiter once the word holds the chain again;
//! - a port set's receive that had taken its message, then ran a waker that panicked (a
//!   displaced one, or its own old one) lost the message with the panic (reviews 5 and 6): the
//!   set now keeps it for the next receive. (A protocol endpoint's receive consumes the
//!   endpoint, so there the panic drops the message once: `async_waits.rs`.)
//!
//! These run under Miri in CI, whose leak check covers the lane case.

mod common;

use std::cell::Cell;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::task::{Context, Poll, RawWaker, RawWakerVTable, Waker};

use common::bombs::{panic_message, panicking_waker, quiet_bombs};
use common::forget;
use common::task::{counting, poll_once, wakes};
use pipes_runtime::select::{Selectable, selecti_async};
use pipes_runtime::{PortSet, Recv, oneshot, stream};

pipes_runtime::proto! {
    /// The client sends twice before the server has received anything: two slots full at once.
    #[allow(dead_code)]
    twice {
        First: send { First(Counted) -> Second }
        Second: send { Second(Counted) -> Reply }
        Reply: recv { Done -> ! }
    }
}

/// A payload counting its drops.
pub struct Counted(Arc<AtomicUsize>);
impl Drop for Counted {
    fn drop(&mut self) {
        self.0.fetch_add(1, Ordering::SeqCst);
    }
}

/// The server drops its endpoint while the client's task (whose waker panics) waits for
/// `Reply`, and a message (`Second`) is still unreceived in its slot. The server's drop closes
/// the slots in order; closing `Reply` wakes the panicking waker. The panic must not skip the
/// release of the server's share: the buffer is freed and `Second`'s payload dropped once the
/// client is gone too.
#[test]
fn a_session_drop_that_wakes_a_panicking_waker_still_frees_the_buffer_and_its_messages() {
    quiet_bombs();
    let drops = Arc::new(AtomicUsize::new(0));
    let (server, client) = twice::init();
    let second = client.first(Counted(drops.clone())).ok().unwrap();
    let reply = second.second(Counted(drops.clone())).ok().unwrap();
    let mut future = reply.recv_async();
    let panicking = panicking_waker();
    assert!(
        Pin::new(&mut future)
            .poll(&mut Context::from_waker(&panicking))
            .is_pending()
    );
    // The server drops its endpoint for `First` without receiving: `First` is dropped with
    // it, `Second` is still in its slot.
    let dropped = panic::catch_unwind(AssertUnwindSafe(|| drop(server)));
    assert_eq!(drops.load(Ordering::SeqCst), 1);
    // The panic of the waker reaches the drop's caller: fine, that is documented.
    assert!(dropped.is_err());
    // The client learns the session is over.
    match Pin::new(&mut future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => assert!(result.is_err()),
        Poll::Pending => panic!("the client still waits after the server's drop"),
    }
    drop(future);
    // Every message must have been dropped exactly once by now: `Second`'s was unreceived,
    // and both shares are gone.
    assert_eq!(
        drops.load(Ordering::SeqCst),
        2,
        "the unreceived `Second` payload was leaked with the session buffer"
    );
}

pipes_runtime::proto! {
    /// Unbounded: two lanes.
    #[allow(dead_code)]
    numbers {
        Stream: send { Number(u64) -> Stream, End -> ! }
    }
}

/// The same through lanes: the client drops its endpoint while the server's task (whose
/// waker panics) waits. `LaneTx::drop` wakes it after its hang-up swap, and must still
/// `release` the lane. Natively this shows only that the session ends for the server; Miri's
/// leak check (in CI) shows the lane is freed.
#[test]
fn a_lane_hang_up_that_wakes_a_panicking_waker_still_frees_the_lane() {
    quiet_bombs();
    let (server, client) = numbers::init();
    let mut future = server.recv_async();
    let panicking = panicking_waker();
    assert!(
        Pin::new(&mut future)
            .poll(&mut Context::from_waker(&panicking))
            .is_pending()
    );
    assert!(panic::catch_unwind(AssertUnwindSafe(|| drop(client))).is_err());
    match Pin::new(&mut future).poll(&mut Context::from_waker(Waker::noop())) {
        Poll::Ready(result) => assert!(result.is_err()),
        Poll::Pending => panic!("the server still waits after the client's drop"),
    }
}

fn panicking_clone(_: *const ()) -> RawWaker {
    panic!("bomb clone")
}
fn nothing(_: *const ()) {}
static VTABLE: RawWakerVTable = RawWakerVTable::new(panicking_clone, nothing, nothing, nothing);

/// A waker whose `clone` panics (a `Waker` is user code: the runtime must not lose others'
/// registrations because of it).
fn clone_panics() -> Waker {
    // SAFETY: the vtable's functions ignore the data pointer and uphold nothing else.
    unsafe { Waker::from_raw(RawWaker::new(std::ptr::null(), &VTABLE)) }
}

#[test]
fn a_waker_whose_clone_panics_keeps_the_other_tasks_registration() {
    quiet_bombs();
    let (port, chan) = oneshot::<u32>();
    let list: [&dyn Selectable; 1] = [&port];
    // Task 1 watches the port.
    let (count, waker) = counting();
    let mut first = selecti_async(&list[..]);
    assert!(
        Pin::new(&mut first)
            .poll(&mut Context::from_waker(&waker))
            .is_pending()
    );
    // Task 2 watches the same port, with a waker whose clone panics.
    let bad = clone_panics();
    let mut second = selecti_async(&list[..]);
    let polled = panic::catch_unwind(AssertUnwindSafe(|| {
        let _ = Pin::new(&mut second).poll(&mut Context::from_waker(&bad));
    }));
    assert!(
        polled.is_err(),
        "the clone's panic reaches the poll's caller"
    );
    drop(second);
    // The send must wake task 1, which is still waiting.
    chan.send(7).unwrap();
    assert_eq!(
        wakes(&count),
        1,
        "task 1's registration was lost: its task is never woken (a hang)"
    );
    drop(first);
    assert_eq!(port.recv().unwrap(), 7);
}

thread_local! {
    /// Set to make the next drop of a [`drop_panics`] waker on this thread panic (once): per
    /// thread, so that tests running at once do not set off each other's.
    static DROP_ARMED: Cell<bool> = const { Cell::new(false) };
}

/// Sets off the next drop of a [`drop_panics`] waker on this thread, or no longer; returns
/// whether it was set (it goes off once).
fn arm_drop(armed: bool) -> bool {
    DROP_ARMED.with(|cell| cell.replace(armed))
}
/// Two data pointers, so that two such wakers are not `will_wake` of each other.
static FIRST: u8 = 1;
static SECOND: u8 = 2;

fn same_clone(data: *const ()) -> RawWaker {
    RawWaker::new(data, &DROP_PANICS)
}
fn armed_drop(_: *const ()) {
    if arm_drop(false) {
        panic!("bomb drop");
    }
}
static DROP_PANICS: RawWakerVTable = RawWakerVTable::new(same_clone, nothing, nothing, armed_drop);

/// A waker whose drop panics while [`DROP_ARMED`] (a `Waker`'s drop is user code too).
fn drop_panics(data: &'static u8) -> Waker {
    // SAFETY: the vtable's functions ignore the data pointer (a static) beyond copying it.
    unsafe { Waker::from_raw(RawWaker::new((data as *const u8).cast(), &DROP_PANICS)) }
}

/// Two tasks watch one port through async selects, so task B's waiter carries task A's. Task A
/// moves (re-polled with another waker): its watch takes the chain out of the word, cuts its
/// old waiter out and lets go of it, which drops A's old waker, and that drop panics. The
/// watch used to let go while it held the chain (B's registration) out of the word: B's waiter
/// was dropped unwoken and the send that followed woke nobody (found by review 6). Now what a
/// watch lets go of goes once the chain is back in the word.
#[test]
fn a_waker_whose_drop_panics_keeps_the_other_tasks_registration() {
    quiet_bombs();
    let (port, chan) = stream::<u32>();
    let list: [&dyn Selectable; 1] = [&port];
    let mut a = selecti_async(&list[..]);
    assert!(
        Pin::new(&mut a)
            .poll(&mut Context::from_waker(&drop_panics(&FIRST)))
            .is_pending()
    );
    let (count, b_waker) = counting();
    let mut b = selecti_async(&list[..]);
    assert!(
        Pin::new(&mut b)
            .poll(&mut Context::from_waker(&b_waker))
            .is_pending()
    );
    // Task A moves; its old waker's drop panics.
    let moved = drop_panics(&SECOND);
    arm_drop(true);
    let polled = panic::catch_unwind(AssertUnwindSafe(|| {
        let _ = Pin::new(&mut a).poll(&mut Context::from_waker(&moved));
    }));
    arm_drop(false);
    assert!(
        polled.is_err(),
        "the drop's panic reaches the poll's caller"
    );
    chan.send(7).unwrap();
    assert_eq!(
        wakes(&count),
        1,
        "task B's registration was lost with A's old waker: B is never woken (a hang)"
    );
    drop((a, b));
    assert_eq!(port.recv().unwrap(), 7);
}

/// Three tasks watch one port: C's waiter carries A's, which carries B's. A's future is
/// dropped: its waiter stays in the chain (only a waiter on top is taken back), and the chain's
/// reference is the last. The send wakes the chain and lets go of each waiter; A's waker's drop
/// panics. The wake used to stop there, with B's waiter dropped unwoken (a hang).
#[test]
fn a_waker_whose_drop_panics_in_a_wake_does_not_stop_the_chain() {
    quiet_bombs();
    let (port, chan) = stream::<u32>();
    let list: [&dyn Selectable; 1] = [&port];
    let (b_count, b_waker) = counting();
    let mut b = selecti_async(&list[..]);
    assert!(
        Pin::new(&mut b)
            .poll(&mut Context::from_waker(&b_waker))
            .is_pending()
    );
    let mut a = selecti_async(&list[..]);
    assert!(
        Pin::new(&mut a)
            .poll(&mut Context::from_waker(&drop_panics(&FIRST)))
            .is_pending()
    );
    let (c_count, c_waker) = counting();
    let mut c = selecti_async(&list[..]);
    assert!(
        Pin::new(&mut c)
            .poll(&mut Context::from_waker(&c_waker))
            .is_pending()
    );
    drop(a);
    arm_drop(true);
    let sent = panic::catch_unwind(AssertUnwindSafe(|| chan.send(7)));
    let fired = !arm_drop(false);
    assert!(
        fired,
        "the probe expects A's waker to be dropped by the send's wake"
    );
    assert!(
        sent.is_err(),
        "the drop's panic reaches the sender once all are woken"
    );
    assert_eq!(wakes(&c_count), 1);
    assert_eq!(
        wakes(&b_count),
        1,
        "task B, below the panicking drop, is never woken"
    );
    drop((b, c));
    assert_eq!(port.recv().unwrap(), 7);
}

/// A port set's receive future takes a message, then lets go of its registration, which
/// drops the task's old waker; that drop panics. The message used to unwind with the panic
/// (found by review 6); now it stays for the next receive.
#[test]
fn a_port_set_receive_future_keeps_its_message_when_its_wakers_drop_panics() {
    quiet_bombs();
    let mut set = PortSet::<u32>::new();
    let chan = set.chan();
    let waker = drop_panics(&FIRST);
    {
        let mut future = set.recv_async();
        assert!(
            Pin::new(&mut future)
                .poll(&mut Context::from_waker(&waker))
                .is_pending()
        );
        chan.send(5).unwrap();
        arm_drop(true);
        let polled = panic::catch_unwind(AssertUnwindSafe(|| {
            Pin::new(&mut future).poll(&mut Context::from_waker(&waker))
        }));
        assert!(
            !arm_drop(false),
            "the probe expects the old waker's drop in the poll"
        );
        assert!(
            polled.is_err(),
            "the drop's panic reaches the poll's caller"
        );
    }
    assert_eq!(set.try_recv().ok(), Some(5), "the message taken is lost");
}

/// A port set's receive wakes (after its state's borrow ends) a waiter it displaced from an
/// empty port's word on the way; that waker panics. The receive used to have taken a message
/// by then, and the panic dropped it (found by an adversarial review); now it takes none until
/// the waiters it displaced are woken, so the panic reaches the caller and the message stays
/// for the next receive.
#[test]
fn a_port_set_receive_keeps_its_message_when_a_displaced_waker_panics() {
    quiet_bombs();
    let set = PortSet::new();
    // A port with a forgotten receive future left in its lane's word, holding a waker that
    // panics (a `&Port` future: its borrow ends when it is forgotten).
    let (idle, _idle_chan) = stream::<u32>();
    {
        let mut future = Recv::recv_async(&idle);
        assert!(poll_once(&mut future, &panicking_waker()).is_pending());
        forget(future);
    }
    set.add(idle);
    let busy = set.chan();
    busy.send(7).unwrap();
    // The receive looks at the idle port first (added first), watches it, displacing the
    // forgotten watch, then takes 7 from the busy one.
    let received = panic::catch_unwind(AssertUnwindSafe(|| set.recv()));
    let later = set.try_recv();
    match (received, later) {
        (Ok(Ok(7)), _) => {}
        (Err(payload), Ok(7)) => assert_eq!(panic_message(&*payload), "bomb waker"),
        (Err(payload), later) => panic!(
            "the receive panicked ({:?}) and the message is gone: try_recv then gave {:?}",
            panic_message(&*payload),
            later.map_err(|_| ())
        ),
        (Ok(other), _) => panic!("unexpected {:?}", other.map_err(|_| ())),
    }
}

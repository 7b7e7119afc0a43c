//! Endpoints are `Send` when their payloads are, and never `Sync`: each is owned by one thread.
//! A port set is the same; a shared chan is the one sender meant to be shared (`Sync`, `Clone`).

use pipes_runtime::__private::{RecvPacket, SendPacket};
use pipes_runtime::{Chan, ChanOne, Port, PortOne, PortSet, RecvError, SendError, SharedChan};

fn is_send<T: Send>() {}

/// Fails to compile if the type is `Sync`, by making the impl ambiguous (the static_assertions
/// trick). A macro, not a generic function: inside a function generic over `T`, `T: Sync` is
/// never provable, so the second impl never applies and the check passed for every type.
macro_rules! not_sync {
    ($t:ty) => {{
        trait AmbiguousIfSync<A> {
            fn check() {}
        }
        impl<T: ?Sized> AmbiguousIfSync<()> for T {}
        #[allow(dead_code)]
        struct Invalid;
        impl<T: ?Sized + Sync> AmbiguousIfSync<Invalid> for T {}
        <$t as AmbiguousIfSync<_>>::check();
    }};
}

#[test]
fn endpoints_are_send_and_not_sync() {
    is_send::<Chan<String>>();
    is_send::<Port<String>>();
    is_send::<ChanOne<String>>();
    is_send::<PortOne<String>>();
    is_send::<SendPacket<String>>();
    is_send::<RecvPacket<String>>();
    not_sync!(Chan<String>);
    not_sync!(Port<String>);
    not_sync!(ChanOne<String>);
    not_sync!(PortOne<String>);
    not_sync!(SendPacket<String>);
    not_sync!(RecvPacket<String>);
}

#[test]
fn errors_are_send_sync_and_static() {
    fn is_error<E: std::error::Error + Send + Sync + 'static>() {}
    is_error::<RecvError>();
    is_error::<SendError<String>>();
    is_error::<pipes_runtime::TryRecvError>();
    is_error::<pipes_runtime::RecvTimeoutError>();
}

#[test]
fn port_sets_are_send_and_not_sync() {
    is_send::<PortSet<String>>();
    not_sync!(PortSet<String>);
}

#[test]
fn shared_chans_are_send_sync_and_clone() {
    fn is_shared<T: Send + Sync + Clone>() {}
    is_shared::<SharedChan<String>>();
}

/// Fails to compile if the type is `Send`, the same trick as `not_sync!`.
macro_rules! not_send {
    ($t:ty) => {{
        trait AmbiguousIfSend<A> {
            fn check() {}
        }
        impl<T: ?Sized> AmbiguousIfSend<()> for T {}
        #[allow(dead_code)]
        struct Invalid;
        impl<T: ?Sized + Send> AmbiguousIfSend<Invalid> for T {}
        <$t as AmbiguousIfSend<_>>::check();
    }};
}

#[test]
fn nothing_shares_a_payload_that_may_not_cross_threads() {
    type NotSend = std::rc::Rc<u8>;
    not_send!(PortSet<NotSend>);
    not_send!(SharedChan<NotSend>);
    not_sync!(SharedChan<NotSend>);
}

/// The async receives and selects are `Send` when what they hold is: a port's and a set's
/// future borrow it exclusively (`&mut` is `Send` when the port is), an async select over
/// exclusive borrows of `Send` endpoints is `Send`, and over shared borrows it is not (an
/// endpoint is never `Sync`).
#[test]
fn futures_are_send_exactly_when_what_they_borrow_may_cross_threads() {
    use pipes_runtime::port_set::PortSetRecvFuture;
    use pipes_runtime::select::{Selectable, SelectiFuture};
    use pipes_runtime::stream::PortRecvFuture;
    type NotSend = std::rc::Rc<u8>;
    is_send::<PortRecvFuture<'static, String>>();
    is_send::<PortSetRecvFuture<'static, String>>();
    not_send!(PortRecvFuture<'static, NotSend>);
    not_send!(PortSetRecvFuture<'static, NotSend>);
    is_send::<
        SelectiFuture<(
            &'static mut PortOne<String>,
            (&'static mut Port<String>, ()),
        )>,
    >();
    is_send::<SelectiFuture<&'static mut [&'static mut (dyn Selectable + Send)]>>();
    is_send::<SelectiFuture<[&'static mut PortSet<String>; 2]>>();
    not_send!(SelectiFuture<(&'static mut PortOne<NotSend>, ())>);
    not_send!(SelectiFuture<&'static [&'static dyn Selectable]>);
    not_send!(SelectiFuture<(&'static Port<String>, ())>);
}

/// Payloads: not `Send`; `Send` but not `Sync`; `Sync` but not `Send`.
type NS = std::rc::Rc<u8>;
type NSy = std::cell::Cell<u8>;
type G = std::sync::MutexGuard<'static, u8>;

pipes_runtime::proto! {
    #[allow(dead_code)]
    lanes_rc { Open: send { Tick(NS) -> Open, Stop -> ! } }
}
pipes_runtime::proto! {
    #[allow(dead_code)]
    lanes_guard { Open: send { Tick(G) -> Open, Stop -> ! } }
}
pipes_runtime::proto! {
    #[allow(dead_code)]
    lanes_cell { Open: send { Tick(NSy) -> Open, Stop -> ! } }
}
pipes_runtime::proto! {
    #[allow(dead_code)]
    buf_rc { Ask: send { Q(NS) -> Answer } Answer: recv { R(u8) -> Ask } }
}
pipes_runtime::proto! {
    #[allow(dead_code)]
    buf_rc2 { Ask: send { Q(u8) -> Answer } Answer: recv { R(NS) -> Ask } }
}
pipes_runtime::proto! {
    #[allow(dead_code)]
    once_rc { Start: send { Go(NS) -> ! } }
}
pipes_runtime::proto! {
    #[allow(dead_code)]
    generic { Start: send { Begin -> Item<NS> } Item: recv<T> { Give(T) -> ! } }
}
pipes_runtime::proto! {
    #[allow(dead_code)]
    gen_lanes { Open: send<T> { Tick(T) -> Open<T>, Stop -> ! } }
}

/// Generated endpoints of every layout (lanes, a session buffer, packets, generic states), and
/// the futures over them (a receive, a wait for room, an async select), may cross threads only
/// when every payload may: a non-`Send` payload (`Rc`, a `MutexGuard`) in any message of the
/// protocol, in either direction, keeps every endpoint on its thread. A `Send` but not `Sync`
/// payload (`Cell`) gives `Send` endpoints, never `Sync` ones.
#[test]
fn generated_endpoints_and_their_futures_cross_threads_only_with_their_payloads() {
    not_send!(lanes_rc::client::Open);
    not_send!(lanes_rc::server::Open);
    not_send!(lanes_guard::client::Open);
    not_send!(lanes_guard::server::Open);
    not_send!(pipes_runtime::RecvFuture<lanes_rc::server::Open>);
    not_send!(pipes_runtime::__private::RoomFuture<lanes_rc::client::Open>);
    not_send!(pipes_runtime::__private::RoomFuture<lanes_rc::server::Open>);
    not_send!(pipes_runtime::select::Select2Future<lanes_rc::server::Open, lanes_rc::server::Open>);
    is_send::<lanes_cell::client::Open>();
    is_send::<lanes_cell::server::Open>();
    not_sync!(lanes_cell::server::Open);
    not_sync!(lanes_cell::client::Open);
    not_send!(buf_rc::client::Ask);
    not_send!(buf_rc::server::Ask);
    not_send!(buf_rc::client::Answer);
    not_send!(buf_rc::server::Answer);
    not_send!(buf_rc2::client::Ask);
    not_send!(buf_rc2::server::Ask);
    not_send!(buf_rc2::client::Answer);
    not_send!(buf_rc2::server::Answer);
    not_send!(pipes_runtime::RecvFuture<buf_rc2::client::Answer>);
    not_send!(pipes_runtime::RecvFuture<buf_rc::server::Ask>);
    not_send!(once_rc::client::Start);
    not_send!(once_rc::server::Start);
    not_send!(pipes_runtime::RecvFuture<once_rc::server::Start>);
    not_send!(generic::client::Start);
    not_send!(generic::server::Start);
    not_send!(generic::client::Item<NS>);
    not_send!(generic::server::Item<NS>);
    not_send!(gen_lanes::client::Open<NS>);
    not_send!(gen_lanes::server::Open<NS>);
    not_send!(pipes_runtime::RecvFuture<gen_lanes::server::Open<NS>>);
    not_sync!(gen_lanes::server::Open<u8>);
    not_sync!(gen_lanes::client::Open<u8>);
    not_sync!(buf_rc::client::Ask);
    not_send!(pipes_runtime::oneshot::PortOne<NS>);
    not_send!(pipes_runtime::PortSet<G>);
    not_send!(pipes_runtime::SharedChan<G>);
    not_sync!(pipes_runtime::SharedChan<G>);
    not_send!(pipes_runtime::Chan<G>);
    not_send!(pipes_runtime::Port<G>);
    not_sync!(pipes_runtime::stream::Iter<'static, u8>);
    not_send!(pipes_runtime::stream::Iter<'static, u8>);
    not_sync!(pipes_runtime::RecvFuture<gen_lanes::server::Open<u8>>);
}

/// What a sending endpoint's `Backlog::room` lends is a borrow of the endpoint's sending end,
/// and waits on the lane's `taken` word as that end's one waiting side: it may cross threads no
/// more than a `&` of the endpoint can. (It was `Send` and `Sync`, so two threads could wait
/// for room on one word at once, which the word's protocol rules out: a wait without a
/// deadline then returned `false`, "timed out".)
#[test]
fn a_room_stays_on_its_thread() {
    use pipes_runtime::__private::Room;
    not_send!(Room<'static>);
    not_sync!(Room<'static>);
}

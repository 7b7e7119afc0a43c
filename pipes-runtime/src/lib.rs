//! The runtime of `pipes`: packets, endpoints, errors, streams, oneshots, select, port sets and
//! shared chans. Users depend on the `pipes` facade, which re-exports everything public here.
//!
//! # Implementation notes
//!
//! Layers, each importing only the ones below it (no file imports one above it):
//!
//! | layer                         | files                                                    |
//! |-------------------------------|----------------------------------------------------------|
//! | select and port sets          | `select.rs`, `port_set.rs`, `arm.rs` (`select!`'s checks) |
//! | endpoints                     | `stream.rs`, `oneshot.rs`, `shared.rs`, `buffer.rs`, `duplex.rs`, `state.rs`, `endpoint.rs`, `target.rs`, `room.rs` |
//! | packets, lanes and queues     | `packet.rs`, `lane.rs`, `mpsc.rs`, `queue.rs`, `alloc.rs`, `drop_queue.rs` |
//! | waiting and waking            | `wait.rs`, `ready_list.rs`, `waiter.rs`, `spin.rs`, `sync.rs`, `take.rs`, `error.rs`, `panics.rs` |
//!
//! - `wait.rs` is the one protocol for waiting on a sender: a word the sender swaps and the
//!   receiving side leaves its waiter in. Packets, select, port sets and async receives all
//!   wait through it.
//! - A *packet* (`packet.rs`) is one message slot and one state word shared by a sending and a
//!   receiving endpoint. A send is one atomic swap; a receive of a message that is already there
//!   is one Acquire load. No reference count: each endpoint makes exactly one final transition
//!   and whoever makes the second frees the packet. The state words are documented there.
//! - Single-use packets are carved from small per-thread chunks (`alloc.rs`): one `malloc` per
//!   8 small packets on the sending thread, one atomic decrement per free on the receiving one.
//!   A chunk is freed when its last packet is, so a live packet pins its chunk: at most 640
//!   bytes (576 for a oneshot or a stream of `u64`, where the packet itself is 16 or 24), and a
//!   `mem::forget`-ed endpoint leaks that much. Chunks were 32 slots (2 KiB pinned per packet);
//!   a `Box` per packet pins nothing but lets a sender that keeps sending outrun the drop of
//!   its receiver (numbers in `alloc.rs`).
//! - A receiver that finds nothing spins for a bounded, per-thread adaptive *time*
//!   (`spin.rs`), then leaves its waiter (`waiter.rs`) in the state word and parks. The waiter
//!   is a thread handle or an async task's `Waker`. A stream's receiver that keeps catching up
//!   with a sender sending flat out pauses 1 µs before its next look (`spin::Chase`): its looks
//!   would otherwise make every send take the publishing line back.
//! - Bounded protocols (`buffer.rs`) get one session buffer with a packet per state, reused
//!   every time round; the two sides each hold one share of it, handed from endpoint to
//!   endpoint, so no reference count moves per message. The shares check the slot rules the
//!   liveness check promises (one sender and one receiver per slot, no second send before
//!   the receive, slots of their own buffer only) rather than trust them: generated code is
//!   text that safe user code can imitate, so the hidden API it calls must be sound alone.
//! - `sync.rs` is the one place that picks std or loom primitives; `--cfg loom` model-checks
//!   the packet through it (`tests/loom.rs`).
//! - Every atomic that can hold a pointer (state words, a task waiter's chain, the ready list,
//!   the shared chan's segments) is an `AtomicPtr`: a waiter word keeps the provenance
//!   `Arc::into_raw` gave it, and the other values a word holds are numbers in pointers
//!   without provenance (`waiter::word_of`). No integer becomes a pointer, so CI runs Miri
//!   under `-Zmiri-strict-provenance`.
//! - A *lane* (`lane.rs`) is one direction of a stream: a single-producer single-consumer
//!   queue of segments. A send writes a slot and publishes the tail with one swap of the lane's
//!   state word (which also says whether a receiver waits); a receive reads that word once per
//!   batch; used-up segments go back to the sender, so a stream that keeps up allocates
//!   nothing, and a `u64` backlog costs 8 bytes a message. The receiver waits on the same word
//!   through `wait.rs`, with its own position as the idle word.
//! - Streams (`stream.rs`) are a lane each; oneshots (`oneshot.rs`) one packet. Unbounded
//!   protocols run over two lanes per session (`duplex.rs`), each carrying a hidden enum of
//!   everything its sender sends; bounded ones reuse their session buffer; a protocol whose
//!   states do not share one parameter list sends a packet per message. Generated code reaches
//!   all three through [`__private`]; which one a protocol gets is decided in `proto-dsl`'s
//!   `layout.rs`.
//! - Errors (`error.rs`) hand back whatever a failed call did not consume.
//! - Select (`select.rs`) leaves one thread waiter in every endpoint's state word (a reference
//!   each), parks until a sender swaps one out, then takes the others back: O(n) per select.
//!   It reaches any endpoint through [`Recv`]'s hidden select hook, and a stream [`Port`]
//!   through `&Port: Recv`.
//! - Port sets (`port_set.rs`) are O(1) per message: each port is either being served (a turn
//!   of up to 32 messages from its lane), on the set's local ready list, or watched by a
//!   waiter (`waiter.rs`) that, when a sender swaps it out, is
//!   pushed on the set's shared ready list: one atomic word, lock-free, holding an intrusive
//!   stack of woken waiters or the marks "the set sleeps" and "the set is gone". A port added
//!   to the set is pushed there too. Whoever waits for the set (each pending `recv_async`
//!   future, an armed select, a thread in `recv`) registers its own entry in a registry beside
//!   the word, under a mutex, and marks the word sleeping; the sender whose push replaces that
//!   mark takes every entry (after its exchange, under the mutex) and wakes each. A waiter that
//!   resolves or is dropped takes back only its own entry, and the mark is cleared only when
//!   none is left; a forgotten future's entry is at worst woken once and dropped by the next
//!   such push. Senders lock only to end a sleep.
//! - A state word's receiving side (its endpoint, and the selects and port sets watching it)
//!   acts from one thread at a time, but it may find a waiter there that it did not leave in
//!   this call: the watch of a select future still pending, or forgotten (`mem::forget` is
//!   safe). So a receive takes a packet only with a `Settled` word (`FULL` or `TERMINATED`),
//!   which only the runtime makes; a thread or port set registering over another's waiter
//!   displaces and wakes it; a task carries the waiters of other tasks it displaces and whoever
//!   wakes it wakes them too (`waiter.rs`). A leftover watch costs a spurious wake, never a
//!   free of a packet its sender may still write.
//! - Generated endpoints (`state.rs`, `endpoint.rs`): a state says only what its message
//!   arrives in and how it becomes the state's enum (`RecvEndpoint`); `Recv`, the inherent
//!   receive methods and `Debug` are written once for all states.
//! - Async receives (`state.rs`): a `RecvFuture` leaves a task's `Waker` in the state word
//!   where a thread would leave its handle, so sends stay one swap and a protocol can have a
//!   thread on one side and a task on the other. No executor dependency. A port set's
//!   `recv_async` registers the task's waker with the set instead of parking; the async
//!   selects (`select2_async`, `selecti_async`) leave one task waiter where a thread's select
//!   leaves its thread waiter, and return `Pending` where it would park.
//! - Shared chans (`shared.rs`) are lock-free: `SharedChan::new(chan)` makes a segmented
//!   multi-producer queue (`queue.rs`: one `fetch_add` to claim a slot, another to
//!   publish it) and the chan hangs up into it: the port takes what the chan sent on its lane,
//!   then receives from the queue. The port waits by arming the slot it waits for; only the
//!   sender that publishes that slot rings the port's signal word (`mpsc.rs`), which is a
//!   state word like any other, so select, port sets and async receives work unchanged. A
//!   producer whose claims keep landing between other producers' yields its core now and then
//!   (`spin::give_way`), so crowded producers take turns instead of trading the tail's line.
//! - Dropping a receiving endpoint over a backlog is iterative for every protocol, by
//!   construction (`drop_queue.rs`): a `FULL` packet's message is moved out and the packet
//!   freed before the message is dropped, and an endpoint dropped *inside* the message being
//!   dropped (the endpoint for the next state is one of its fields) is queued on a per-thread
//!   queue instead of recursing; the outermost drop runs the queue. Only fields of the message
//!   are deferred: an endpoint dropped anywhere else may carry borrows that end when its drop
//!   returns. Each disposal runs under `catch_unwind`, so a payload whose `Drop` panics leaks
//!   nothing and stops nothing; the first panic is resumed afterwards (never while unwinding).
//!   Session buffers catch and resume the same way. A stream `Port`'s drop closes its lane
//!   first and then drops exactly the messages sent before, in a loop; ports inside those
//!   messages are queued like any endpoint.
//! - A task's `Waker` is user code, and may panic. Its panic goes on to whoever woke it (a
//!   send, a receive's report, a drop), as with tokio's channels, but never before the other
//!   waiters in a chain are woken (`waiter.rs`), and never midway through a drop path: closing
//!   a session's slots, hanging up a lane, closing a shared chan's queue finish their work
//!   first (`panics::deferring`), so a panicking waker leaks nothing. A waker is cloned before
//!   a watch takes other tasks' waiters out of a word, so a `clone` that panics loses none.

mod alloc;
mod arm;
mod buffer;
mod drop_queue;
mod duplex;
mod endpoint;
mod error;
mod lane;
mod mpsc;
pub mod oneshot;
mod packet;
mod panics;
pub mod port_set;
mod queue;
mod ready_list;
mod room;
pub mod select;
pub mod shared;
pub mod spin;
mod state;
pub mod stream;
mod sync;
mod take;
mod target;
mod wait;
mod waiter;

// The root holds the contract (DESIGN section 3); helper, iterator and future types live in
// the modules above, each of which opens with its guide.
pub use endpoint::Recv;
pub use error::{Cause, RecvError, RecvTimeoutError, SendError, TryRecvError};
pub use oneshot::{ChanOne, PortOne, oneshot};
pub use port_set::PortSet;
pub use select::{Either, select, select2, selecti};
pub use shared::SharedChan;
pub use state::RecvFuture;
pub use stream::{Chan, Port, stream};

/// Declares protocols and generates their typed endpoints. See the `pipes` crate docs for the
/// language and for what a protocol generates.
///
/// Each protocol becomes a module. Its payload types (and the type arguments of its
/// transitions) are named as where `proto!` is invoked, even where the module holds a name of
/// its own: a payload `Login` of a state `Login` is the invoking module's `Login`, and
/// `super::` starts from the invoking module. Inside a function body, types are named as in
/// the module the function is in, so types declared inside the function itself are not
/// visible: declare them at module level.
///
/// ```
/// pipes_runtime::proto! {
///     pingpong {
///         Ping: send { Ping(u32) -> Pong }
///         Pong: recv { Pong(u32) -> Ping }
///     }
/// }
///
/// let (server, client) = pingpong::init();
/// let pong = client.ping(1).unwrap();
/// let pingpong::Ping::Ping(n, server) = server.recv().unwrap();
/// server.pong(n + 1).unwrap();
/// let pingpong::Pong::Pong(n, _client) = pong.recv().unwrap();
/// assert_eq!(n, 2);
/// ```
#[macro_export]
macro_rules! proto {
    ($($protocols:tt)*) => {
        $crate::__private::proto_impl! { $crate; $($protocols)* }
    };
}

/// Waits on several receiving endpoints and runs the arm of the message that arrives first.
///
/// One block per endpoint, one arm per message of its state: `Message(payload bindings) -> next
/// { body }` binds the payload and the endpoint for the next state (`-> ! { .. }` for a message
/// that ends the protocol). The arms are a `match` on the state's enum, so a forgotten message
/// does not compile; message names are paths, so bring the enum's variants into scope
/// (`use proto::State::*`) or write `State::Message`. A block may end with `closed => { .. }`,
/// run when that endpoint's peer is gone; without it, a closed peer panics with a message
/// naming the protocol and state. A last `timeout(duration) => { .. }` arm runs if nothing
/// arrives in time. `select!` is an expression. Only the ready endpoint is received from: in its
/// arms the other endpoints are still yours to keep (assign them back), and after the `select!`
/// they count as moved, as in any `match` that moves in one arm.
///
/// ```
/// pipes_runtime::proto! {
///     pub hello { Start: send { Hello(String) -> !, Bye -> ! } }
/// }
/// use hello::Start::{Bye, Hello};
///
/// let (quiet, _quiet_client) = hello::init();
/// let (loud, loud_client) = hello::init();
/// loud_client.hello("hi".to_string()).unwrap();
///
/// let heard = pipes_runtime::select! {
///     quiet => {
///         Hello(text) -> ! { text },
///         Bye -> ! { "bye".to_string() },
///     },
///     loud => {
///         Hello(text) -> ! { text.to_uppercase() },
///         Bye -> ! { "BYE".to_string() },
///         closed => { "gone".to_string() },
///     },
/// };
/// assert_eq!(heard, "HI");
/// ```
#[macro_export]
macro_rules! select {
    ($($arms:tt)*) => {
        $crate::__private::select_impl! { $crate; $($arms)* }
    };
}

/// [`select!`] for async code: the same arms, but it waits with
/// [`selecti_async`](select::selecti_async)`(..).await`,
/// so it is used inside an `async` block or function, on any executor. There is no
/// `timeout(..)` arm (the runtime has no timer: race it against your executor's).
///
/// While it waits it borrows each endpoint exclusively (`&mut`), so the endpoints must be
/// mutable places (`let mut`, `mut` parameters), and the waiting future is `Send` when the
/// endpoints are: an async block holding a pending `select_async!` runs in `tokio::spawn` on
/// a multi-threaded runtime. (A shared borrow could not be `Send`: endpoints are not `Sync`.)
/// Dropping the waiting future loses nothing: the endpoints stay yours until an arm runs.
///
/// ```
/// pipes_runtime::proto! {
///     pub hello { Start: send { Hello(String) -> !, Bye -> ! } }
/// }
/// use hello::Start::{Bye, Hello};
///
/// async fn listen(mut quiet: hello::server::Start, mut loud: hello::server::Start) -> String {
///     pipes_runtime::select_async! {
///         quiet => {
///             Hello(text) -> ! { text },
///             Bye -> ! { "bye".to_string() },
///         },
///         loud => {
///             Hello(text) -> ! { text.to_uppercase() },
///             Bye -> ! { "BYE".to_string() },
///         },
///     }
/// }
///
/// let (quiet, _quiet_client) = hello::init();
/// let (loud, loud_client) = hello::init();
/// loud_client.hello("hi".to_string()).unwrap();
/// // Polled once by hand: the message is there, so no executor is needed to finish.
/// let mut future = Box::pin(listen(quiet, loud));
/// let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
/// let heard = match std::future::Future::poll(future.as_mut(), &mut cx) {
///     std::task::Poll::Ready(heard) => heard,
///     std::task::Poll::Pending => unreachable!("loud was sent on"),
/// };
/// assert_eq!(heard, "HI");
/// ```
#[macro_export]
macro_rules! select_async {
    ($($arms:tt)*) => {
        $crate::__private::select_impl! { $crate; async; $($arms)* }
    };
}

/// The multi-producer queue behind shared chans, reachable only for its model tests, stress
/// tests and benchmark. Not a public API.
#[doc(hidden)]
pub mod __queue {
    pub use crate::queue::{Pop, Queue};
}

/// What generated protocol code uses. Not a public API: it changes with the code generator.
#[doc(hidden)]
pub mod __private {
    pub use crate::__endpoints as endpoints;
    pub use crate::arm::{Binds, LeadsOn, SameState, SelectArm, arm_leads_on};
    pub use crate::buffer::{
        Closer, RecvSlot, SendSlot, SentByClient, SentByServer, Session, Slot, Slots, session,
    };
    pub use crate::duplex::{Duplex, duplex};
    pub use crate::endpoint::{CloseWith, Recv};
    pub use crate::error::{Cause, RecvError, RecvTimeoutError, SendError, TryRecvError};
    pub use crate::lane::Room;
    pub use crate::packet::{Receiving, RecvPacket, SendPacket, StateName, entangle};
    pub use crate::room::{Backlog, RoomFuture, wait_room};
    pub use crate::state::{RecvEndpoint, RecvFuture};
    pub use crate::wait::{Settled, StateWord};
    pub use core::convert::Infallible;
    pub use core::fmt;
    pub use core::future::Future;
    pub use core::marker::PhantomData;
    pub use core::result::Result::{self, Err, Ok};
    pub use core::time::Duration;
    pub use proto_macro::{MessageDebug, proto_impl, select_impl};

    /// `select_async!`'s borrow of one endpoint, checked where the user wrote it.
    #[inline]
    pub fn selectable<E: crate::select::Selectable>(endpoint: &mut E) -> &mut E {
        endpoint
    }

    /// A packet handed back a message its sender did not send: impossible, since each packet
    /// carries one message from one sender.
    #[cold]
    pub fn unreachable_message() -> ! {
        unreachable!("pipes: a packet handed back a message that was never sent into it")
    }
}

#[cfg(test)]
mod tests {
    /// `Selectable` is sealed: this compiles only while the crate-private `Sealed` is its
    /// supertrait (without it, only the hidden method would keep other crates out).
    #[test]
    fn selectable_is_sealed() {
        fn needs_seal<T: ?Sized + crate::select::sealed::Sealed>() {}
        fn selectable<T: ?Sized + crate::select::Selectable>() {
            needs_seal::<T>()
        }
        selectable::<dyn crate::select::Selectable>();
    }
}

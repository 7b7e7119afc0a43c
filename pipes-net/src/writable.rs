//! Waiting for room before a typed send (see [`writable`]).

use std::time::{Duration, Instant};

use pipes_runtime::__private::{Backlog, RoomFuture, wait_room};

/// The future of [`writable`]: resolves to the endpoint once its sends have room. `Send` when
/// the endpoint is; dropping it drops the endpoint.
pub type Writable<E> = RoomFuture<E>;

/// Waits until `endpoint`'s remote session has taken enough of what this side sent that one
/// more send leaves at most the credit window of messages waiting for the pump, then hands the
/// endpoint back. [`Writable::cancel`] hands it back from a wait given up on (a timeout).
///
/// A typed send never blocks. While the session's credit window is spent, the pump cannot
/// forward, and what the user sends waits in the local lane to the pump. The pump reports each
/// message it takes from that lane, so a sender that waits for room before each send, with
/// [`writable`] (async) or [`wait_writable`] (blocking), stops `2 * window + 1` messages ahead
/// of a reader that stopped: the node's [`Config::window`](crate::Config::window) on the wire,
/// one in the pump waiting for credit, and a window in the lane.
///
/// ```text
/// let mut feed: prices::client::Feed = node.client::<prices::Wire>(addr).await?;
/// for price in prices {
///     feed = pipes::net::writable(feed).await;
///     feed = feed.price(price)?;
/// }
/// ```
///
/// Any endpoint can be asked: one of a local session, of a bounded protocol, or of a state the
/// user receives in always has room (the protocol bounds what its sends leave). One whose
/// session has failed has room too: its next send or receive reports the failure.
pub fn writable<E: Backlog>(endpoint: E) -> Writable<E> {
    RoomFuture::new(endpoint)
}

/// Blocks until `endpoint`'s sends have room, as [`writable`] resolves. Not for a thread that
/// runs the node's driver: the pump it waits for would never run.
pub fn wait_writable<E: Backlog>(endpoint: &E) {
    wait_room(endpoint, None);
}

/// As [`wait_writable`], for at most `timeout`: `false` if the sends still have no room then.
pub fn wait_writable_timeout<E: Backlog>(endpoint: &E, timeout: Duration) -> bool {
    wait_room(endpoint, Instant::now().checked_add(timeout))
}

//! What every receiving endpoint offers: the [`Recv`] trait, which select, port sets and
//! generic code use to treat endpoints of any protocol and state alike.

use std::time::Duration;

use crate::error::{RecvError, RecvTimeoutError, TryRecvError};
use crate::target::Target;
use crate::wait::StateWord;

/// A single-use receiving endpoint. Receiving consumes it; the message (an enum of the state's
/// messages, or the payload for a oneshot) carries the endpoint for the next state.
pub trait Recv: Sized {
    /// What a receive yields.
    type Message;

    /// Blocks until a message arrives or the sender is dropped.
    fn recv(self) -> Result<Self::Message, RecvError>;

    /// Takes a message if one is already here; otherwise hands the endpoint back.
    fn try_recv(self) -> Result<Self::Message, TryRecvError<Self>>;

    /// Blocks for at most `timeout`; hands the endpoint back if nothing arrived in time.
    fn recv_timeout(self, timeout: Duration) -> Result<Self::Message, RecvTimeoutError<Self>>;

    /// The state word of the packet the next message arrives in: what select waits on.
    /// Not a public API; implemented by the runtime and by generated code.
    ///
    /// Harmless whatever an implementation returns: a `StateWord` offers nothing outside the
    /// runtime, and the runtime never takes a waiter it finds in a word for a message or a
    /// hang-up (see `StateWord` in `packet.rs`), so a word shared by several endpoints, or
    /// belonging to another endpoint than the one received from, costs at worst a spurious wake.
    #[doc(hidden)]
    fn __state_word(&self) -> &StateWord;

    /// What select waits on: by default the state word above. Not a public API.
    #[doc(hidden)]
    fn __select_target(&self) -> Target<'_> {
        Target::word(self.__state_word())
    }
}

//! What every receiving endpoint offers: the [`Recv`] trait, which select, port sets and
//! generic code use to treat endpoints of any protocol and state alike. For a protocol's
//! endpoints it is written once, here, over the little a generated state says about itself
//! (`RecvEndpoint` in `state.rs`), and so are their inherent methods (`__endpoint!`).

use std::time::Duration;

use crate::buffer::{RecvSlot, SendSlot, Slots};
use crate::duplex::Duplex;
use crate::error::{Cause, RecvError, RecvTimeoutError, TryRecvError};
use crate::packet::{Receiving, RecvPacket, SendPacket};
use crate::state::{RecvEndpoint, RecvFuture};
use crate::target::Target;

/// A receiving endpoint: a protocol state's (consumed by a receive; the message carries the
/// endpoint for the next state), a [`PortOne`](crate::PortOne), or a borrowed
/// [`Port`](crate::Port) or [`PortSet`](crate::PortSet) (which a receive does not consume).
///
/// Sealed: the runtime and the code `proto!` generates implement it, so that select can rely on
/// what it waits on.
pub trait Recv: Sized + sealed::Sealed {
    /// What a receive yields: the state's enum of messages, or a stream's item.
    type Message;

    /// What [`recv_async`](Recv::recv_async) returns.
    type Future: Future<Output = Result<Self::Message, RecvError>>;

    /// Blocks until a message arrives or the sender is dropped.
    fn recv(self) -> Result<Self::Message, RecvError>;

    /// Takes a message if one is already here; otherwise hands the endpoint back.
    fn try_recv(self) -> Result<Self::Message, TryRecvError<Self>>;

    /// Blocks for at most `timeout`; hands the endpoint back if nothing arrived in time.
    fn recv_timeout(self, timeout: Duration) -> Result<Self::Message, RecvTimeoutError<Self>>;

    /// A future of the message, for any executor; resolves as [`recv`](Recv::recv) returns.
    ///
    /// Called as `Recv::recv_async(endpoint)`, not as a method: a borrowed [`Port`](crate::Port)
    /// or [`PortSet`](crate::PortSet) implements `Recv` with a shared borrow, and a method here
    /// would shadow their own `recv_async(&mut self)`, whose future is `Send`. Endpoints and
    /// [`PortOne`](crate::PortOne) have `recv_async` as a method of their own.
    fn recv_async(this: Self) -> Self::Future;

    /// What select waits on. Not a public API.
    #[doc(hidden)]
    fn __select_target(&self) -> Target<'_>;
}

pub(crate) mod sealed {
    /// Keeps [`Recv`](super::Recv) implemented only where the runtime says.
    pub trait Sealed {}
}

impl<E: RecvEndpoint> sealed::Sealed for E {}

impl<E: RecvEndpoint> Recv for E {
    type Message = E::Message;
    type Future = RecvFuture<E>;

    fn recv(self) -> Result<E::Message, RecvError> {
        self.into_end().receive(&E::STATE).map(E::arrive)
    }

    fn try_recv(self) -> Result<E::Message, TryRecvError<Self>> {
        self.into_end()
            .try_receive(&E::STATE)
            .map(E::arrive)
            .map_err(|error| error.map(E::from_end))
    }

    fn recv_timeout(self, timeout: Duration) -> Result<E::Message, RecvTimeoutError<Self>> {
        self.into_end()
            .receive_within(timeout, &E::STATE)
            .map(E::arrive)
            .map_err(|error| error.map(E::from_end))
    }

    fn recv_async(this: Self) -> RecvFuture<E> {
        RecvFuture::new(this)
    }

    fn __select_target(&self) -> Target<'_> {
        let end = self.end();
        Target::word(end.word(), end.idle())
    }
}

/// An endpoint of a state with messages, or the end it holds, ended abnormally for a
/// [`Cause`]: the peer's receive (now, or in a later state) fails for it. What a remote
/// session's pump does when the wire fails, so the user's endpoint learns why. Not a public
/// API.
#[doc(hidden)]
pub trait CloseWith: Sized {
    /// Drops the endpoint, leaving `cause` for the peer.
    fn close_with(self, cause: Cause);
}

impl<T> CloseWith for SendPacket<T> {
    fn close_with(self, cause: Cause) {
        SendPacket::close_with(self, cause);
    }
}

/// A single-use packet's receiver leaves no cause: its peer sends in this state, and what it
/// receives next travels inside the message.
impl<T> CloseWith for RecvPacket<T> {
    fn close_with(self, _: Cause) {}
}

impl<T, B: Slots> CloseWith for SendSlot<T, B> {
    fn close_with(self, cause: Cause) {
        SendSlot::close_with(self, cause);
    }
}

impl<T, B: Slots> CloseWith for RecvSlot<T, B> {
    fn close_with(self, cause: Cause) {
        RecvSlot::close_with(self, cause);
    }
}

impl<Tx, Rx> CloseWith for Duplex<Tx, Rx> {
    fn close_with(self, cause: Cause) {
        Duplex::close_with(self, cause);
    }
}

/// What every generated endpoint has, written once: `Debug` (naming the protocol, side and
/// state), and for the receiving endpoint of a state with messages its [`RecvEndpoint`] impl,
/// its inherent `recv`, `try_recv`, `recv_timeout` and `recv_async` (so no trait import is
/// needed) and `IntoFuture` (so `endpoint.await` receives). Not a public API: it changes with
/// the code generator.
///
/// Invoked once per state, in the protocol's module, with its names and which side receives in
/// it; the state's message enum has the state's name. A generic state also gives its generics
/// as declared on impls (with bounds), on types (without: `Debug` needs none, so a message
/// enum's derived `Debug` asks only `T: Debug`), and as arguments. Its message arrives in a
/// single-use packet; with `client receives __Slot` in the session buffer's slot of that hidden
/// enum; or with `client receives over lanes` in the lane of the messages the server sends
/// (`__FromServer`). The state's enum turns the last two into itself with its `__arrive`.
#[doc(hidden)]
#[macro_export]
macro_rules! __endpoints {
    (impl $name:ident, $($rest:tt)*) => {
        $crate::__endpoints!(impl [] [] $name [], $($rest)*);
    };
    // A state with no messages: both endpoints only say who they are.
    (
        impl [$($g:tt)*] [$($d:tt)*] $name:ident [$($a:tt)*],
        $protocol:literal, $state:literal
    ) => {
        $crate::__endpoints!(@debug [$($d)*] client::$name $($a)*, $protocol, "client", $state);
        $crate::__endpoints!(@debug [$($d)*] server::$name $($a)*, $protocol, "server", $state);
    };
    (
        impl [$($g:tt)*] [$($d:tt)*] $name:ident [$($a:tt)*], $protocol:literal,
        $state:literal, $side:ident receives over lanes
    ) => {
        $crate::__endpoints!(impl [$($g)*] [$($d)*] $name [$($a)*], $protocol, $state);
        $crate::__endpoints!(@close [$($g)*] client::$name $($a)*);
        $crate::__endpoints!(@close [$($g)*] server::$name $($a)*);
        $crate::__endpoints!(
            @recv [$($g)*] $side::$name $($a)*, $name $($a)*, $state,
            $crate::__endpoints!(@lanes $side [$($a)*]),
            <$name $($a)*>::__arrive,
            $protocol
        );
    };
    (
        impl [$($g:tt)*] [$($d:tt)*] $name:ident [$($a:tt)*], $protocol:literal,
        $state:literal, $side:ident receives $($slot:ident)?
    ) => {
        $crate::__endpoints!(impl [$($g)*] [$($d)*] $name [$($a)*], $protocol, $state);
        $crate::__endpoints!(@close [$($g)*] client::$name $($a)*);
        $crate::__endpoints!(@close [$($g)*] server::$name $($a)*);
        $crate::__endpoints!(
            @recv [$($g)*] $side::$name $($a)*, $name $($a)*, $state,
            $crate::__endpoints!(@end $name [$($a)*] $($slot)?),
            $crate::__endpoints!(@arrive $name [$($a)*] $($slot)?),
            $protocol
        );
    };
    (@end $name:ident [$($a:tt)*]) => { $crate::__private::RecvPacket<$name $($a)*> };
    (@end $name:ident [$($a:tt)*] $slot:ident) => {
        $crate::__private::RecvSlot<$slot $($a)*, __Buffer $($a)*>
    };
    (@lanes server [$($a:tt)*]) => {
        $crate::__private::Duplex<__FromServer $($a)*, __FromClient $($a)*>
    };
    (@lanes client [$($a:tt)*]) => {
        $crate::__private::Duplex<__FromClient $($a)*, __FromServer $($a)*>
    };
    (@arrive $name:ident [$($a:tt)*]) => { ::core::convert::identity };
    (@arrive $name:ident [$($a:tt)*] $slot:ident) => { <$name $($a)*>::__arrive };
    (@close [$($g:tt)*] $endpoint:ty) => {
        impl $($g)* $crate::__private::CloseWith for $endpoint {
            fn close_with(self, cause: $crate::Cause) {
                $crate::__private::CloseWith::close_with(self.0, cause)
            }
        }

        impl $($g)* $crate::__private::Backlog for $endpoint {
            fn room(&self) -> ::core::option::Option<$crate::__private::Room<'_>> {
                $crate::__private::Backlog::room(&self.0)
            }
            fn report(&self, room: ::core::primitive::usize) {
                $crate::__private::Backlog::report(&self.0, room)
            }
        }
    };
    (@debug [$($g:tt)*] $endpoint:ty, $protocol:literal, $side:literal, $state:literal) => {
        impl $($g)* $crate::__private::fmt::Debug for $endpoint {
            fn fmt(
                &self,
                f: &mut $crate::__private::fmt::Formatter<'_>,
            ) -> $crate::__private::fmt::Result {
                f.write_str(::core::concat!($protocol, "::", $side, "::", $state))
            }
        }
    };
    (
        @recv [$($g:tt)*] $endpoint:ty, $message:ty, $state:literal, $end:ty, $arrive:expr,
        $protocol:literal
    ) => {
        impl $($g)* $crate::__private::RecvEndpoint for $endpoint {
            type Message = $message;
            type End = $end;
            const STATE: $crate::__private::StateName = $crate::__private::StateName {
                protocol: $protocol,
                state: $state,
            };
            fn into_end(self) -> $end {
                self.0
            }
            fn from_end(end: $end) -> Self {
                Self(end)
            }
            fn end(&self) -> &$end {
                &self.0
            }
            fn arrive(
                arrived: <$end as $crate::__private::Receiving>::Output,
            ) -> $message {
                ($arrive)(arrived)
            }
        }

        impl $($g)* $endpoint {
            #[doc = ::core::concat!(
                "Blocks until the message of state `", $state,
                "` arrives; fails if the sender was dropped first."
            )]
            pub fn recv(self) -> $crate::__private::Result<$message, $crate::RecvError> {
                $crate::Recv::recv(self)
            }

            /// Takes the message if it is already here; otherwise hands the endpoint back.
            pub fn try_recv(
                self,
            ) -> $crate::__private::Result<$message, $crate::TryRecvError<Self>> {
                $crate::Recv::try_recv(self)
            }

            /// Blocks for at most `timeout`; hands the endpoint back if nothing arrived.
            pub fn recv_timeout(
                self,
                timeout: $crate::__private::Duration,
            ) -> $crate::__private::Result<$message, $crate::RecvTimeoutError<Self>> {
                $crate::Recv::recv_timeout(self, timeout)
            }

            #[doc = ::core::concat!(
                "A future of the message of state `", $state, "`, for any executor; resolves ",
                "as `recv` returns, and is `Send` when the payloads are. Its `cancel` stops ",
                "waiting and hands this endpoint back; dropping it drops the endpoint, so the ",
                "peer sees the pipe closed."
            )]
            pub fn recv_async(self) -> $crate::__private::RecvFuture<Self> {
                $crate::Recv::recv_async(self)
            }
        }

        impl $($g)* ::core::future::IntoFuture for $endpoint {
            type Output = $crate::__private::Result<$message, $crate::RecvError>;
            type IntoFuture = $crate::__private::RecvFuture<Self>;
            fn into_future(self) -> $crate::__private::RecvFuture<Self> {
                $crate::Recv::recv_async(self)
            }
        }
    };
}

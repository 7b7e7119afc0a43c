//! The errors users see. Each hands back what the failed call did not consume (the unsent
//! payload, or the endpoint when nothing arrived) and names the protocol and state it concerns.

use std::fmt;

/// A send failed because the receiving endpoint is gone. The unsent payload is handed back in
/// `.0`: `()` for a message without one, the value for one, a tuple for several.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct SendError<T>(pub T);

impl<T> SendError<T> {
    /// The payload that was not sent.
    pub fn into_inner(self) -> T {
        self.0
    }
}

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SendError").finish_non_exhaustive()
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("send failed: the receiving endpoint was dropped; the message is handed back")
    }
}

impl<T> std::error::Error for SendError<T> {}

/// A receive failed: no message will come in this state, and [`cause`](RecvError::cause) says
/// why. In one process the cause is always [`Cause::Closed`]; a remote session (`pipes::net`)
/// also fails for the reasons of the wire.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct RecvError {
    protocol: &'static str,
    state: &'static str,
    cause: Cause,
}

/// Why a receive failed: what ended the protocol before the peer sent.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Cause {
    /// The peer's endpoint was dropped before it sent a message (for a remote session, the
    /// remote peer's, or the session was closed by its node).
    Closed,
    /// The connection under a remote session was lost: the socket failed or reached its end,
    /// or a node shut down.
    ConnectionLost,
    /// A message of a remote session broke the protocol (a wrong state or message, a payload
    /// that does not decode), so the session was aborted.
    Violation,
    /// The remote peer sent nothing, not even a heartbeat, for longer than the timeout.
    Timeout,
    /// A remote session was aborted: by the peer, or by this side (a message that could not
    /// be sent, such as a payload that does not serialize).
    Aborted,
}

impl Cause {
    /// Every cause, in the order of [`Cause::index`].
    const ALL: [Cause; 5] = [
        Cause::Closed,
        Cause::ConnectionLost,
        Cause::Violation,
        Cause::Timeout,
        Cause::Aborted,
    ];

    /// A small number for the cause, to keep in a word or a byte: `Closed` is 0.
    pub(crate) const fn index(self) -> usize {
        self as usize
    }

    /// The cause of [`index`](Cause::index) `index`; `Closed` for any other number.
    pub(crate) fn from_index(index: usize) -> Cause {
        Cause::ALL.get(index).copied().unwrap_or(Cause::Closed)
    }

    /// What happened, as the end of a sentence.
    fn words(self) -> &'static str {
        match self {
            Cause::Closed => "the sending endpoint was dropped before it sent a message",
            Cause::ConnectionLost => "the connection of the remote session was lost",
            Cause::Violation => "the remote peer broke the protocol, so the session was aborted",
            Cause::Timeout => "the remote peer sent nothing for longer than the heartbeat timeout",
            Cause::Aborted => "the remote session was aborted",
        }
    }
}

impl RecvError {
    /// The error for a receive in `state` of `protocol`, for `cause`. Only the runtime makes
    /// these: a `RecvError` always comes from a real receive.
    pub(crate) const fn new(protocol: &'static str, state: &'static str, cause: Cause) -> Self {
        Self {
            protocol,
            state,
            cause,
        }
    }

    /// The protocol whose peer vanished.
    pub const fn protocol(&self) -> &'static str {
        self.protocol
    }

    /// The state the receiver was in.
    pub const fn state(&self) -> &'static str {
        self.state
    }

    /// Why no message will come.
    pub const fn cause(&self) -> Cause {
        self.cause
    }
}

impl fmt::Display for RecvError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "receive failed in state `{}` of protocol `{}`: {}",
            self.state,
            self.protocol,
            self.cause.words()
        )
    }
}

impl std::error::Error for RecvError {}

/// A non-blocking receive found nothing. `Empty` hands the endpoint back to try again later;
/// `E` is `()` for receivers that are not consumed by receiving (a `Port`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum TryRecvError<E = ()> {
    /// No message yet; the endpoint, to try again.
    Empty(E),
    /// The sender was dropped; no message will come.
    Disconnected(RecvError),
}

/// A receive with a timeout found nothing in time. `Timeout` hands the endpoint back;
/// `E` is `()` for receivers that are not consumed by receiving (a `Port`).
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum RecvTimeoutError<E = ()> {
    /// No message arrived in time; the endpoint, to wait again.
    Timeout(E),
    /// The sender was dropped; no message will come.
    Disconnected(RecvError),
}

/// What the two "nothing arrived" errors share, written once.
macro_rules! endpoint_error {
    ($name:ident, $pending:ident, $pending_text:literal) => {
        impl<E> $name<E> {
            /// Maps the handed-back endpoint, e.g. from a raw packet to the type that wraps it.
            pub fn map<F>(self, f: impl FnOnce(E) -> F) -> $name<F> {
                match self {
                    $name::$pending(endpoint) => $name::$pending(f(endpoint)),
                    $name::Disconnected(error) => $name::Disconnected(error),
                }
            }

            /// The handed-back endpoint, if the peer is still there.
            pub fn into_endpoint(self) -> Option<E> {
                match self {
                    $name::$pending(endpoint) => Some(endpoint),
                    $name::Disconnected(_) => None,
                }
            }

            /// Whether the peer was dropped, so retrying is pointless.
            pub fn is_disconnected(&self) -> bool {
                matches!(self, $name::Disconnected(_))
            }
        }

        impl<E> From<RecvError> for $name<E> {
            fn from(error: RecvError) -> Self {
                $name::Disconnected(error)
            }
        }

        impl<E> fmt::Debug for $name<E> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $name::$pending(_) => f.write_str(concat!(stringify!($pending), "(..)")),
                    $name::Disconnected(error) => {
                        f.debug_tuple("Disconnected").field(error).finish()
                    }
                }
            }
        }

        impl<E> fmt::Display for $name<E> {
            fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                match self {
                    $name::$pending(_) => f.write_str($pending_text),
                    $name::Disconnected(error) => error.fmt(f),
                }
            }
        }

        impl<E> std::error::Error for $name<E> {
            fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
                match self {
                    $name::$pending(_) => None,
                    $name::Disconnected(error) => Some(error),
                }
            }
        }
    };
}

endpoint_error!(
    TryRecvError,
    Empty,
    "no message was ready yet; the endpoint is handed back to try again"
);
endpoint_error!(
    RecvTimeoutError,
    Timeout,
    "no message arrived before the timeout; the endpoint is handed back to wait again"
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn recv_error_names_protocol_and_state() {
        let error = RecvError::new("bank", "LoginResponse", Cause::Closed);
        let text = error.to_string();
        assert!(
            text.contains("`bank`") && text.contains("`LoginResponse`") && text.contains("dropped"),
            "{text}"
        );
        assert_eq!((error.protocol(), error.state()), ("bank", "LoginResponse"));
        assert_eq!(error.cause(), Cause::Closed);
    }

    #[test]
    fn a_cause_survives_its_index_and_is_in_the_text() {
        for cause in Cause::ALL {
            assert_eq!(Cause::from_index(cause.index()), cause);
        }
        assert_eq!(Cause::from_index(99), Cause::Closed);
        let lost = RecvError::new("bank", "Connected", Cause::ConnectionLost).to_string();
        assert!(lost.contains("connection"), "{lost}");
    }

    #[test]
    fn endpoint_errors_hand_back_and_map_the_endpoint() {
        let empty: TryRecvError<u8> = TryRecvError::Empty(7);
        assert_eq!(empty.map(u32::from).into_endpoint(), Some(7u32));
        let timeout: RecvTimeoutError<u8> = RecvTimeoutError::Timeout(1);
        assert!(!timeout.is_disconnected());
        let closed: TryRecvError<u8> = RecvError::new("p", "S", Cause::Closed).into();
        assert!(closed.is_disconnected());
        assert_eq!(closed.into_endpoint(), None);
        assert_eq!(format!("{:?}", TryRecvError::Empty(())), "Empty(..)");
    }

    #[test]
    fn send_error_hands_the_payload_back() {
        let error = SendError((String::from("user"), 42));
        assert!(error.to_string().contains("handed back"));
        assert_eq!(error.into_inner(), (String::from("user"), 42));
    }
}

//! The errors of remote sessions: [`ConnectError`] when a connection or a session cannot be
//! opened, [`SessionError`] when an open session fails. Both are cheap to clone, so one
//! connection's death can be handed to every session on it.

use std::fmt;
use std::io;
use std::sync::Arc;

/// Opening a connection or a session failed.
#[derive(Clone, Debug)]
pub enum ConnectError {
    /// The socket failed (refused by the OS, reset, unreachable, ...), or the connection died
    /// while the session was being opened.
    Io(Arc<io::Error>),
    /// The peer speaks another version: another fingerprint for the protocol, the same role
    /// as ours, or not pipes-net at all.
    Incompatible(String),
    /// The peer serves no protocol of that name, or stopped accepting it.
    Refused(String),
    /// The peer did not answer in time.
    Timeout,
}

impl fmt::Display for ConnectError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ConnectError::Io(error) => write!(f, "connect failed: {error}"),
            ConnectError::Incompatible(why) => write!(f, "connect failed, incompatible: {why}"),
            ConnectError::Refused(why) => write!(f, "connect refused: {why}"),
            ConnectError::Timeout => f.write_str("connect failed: the peer did not answer in time"),
        }
    }
}

impl std::error::Error for ConnectError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            ConnectError::Io(error) => Some(&**error),
            _ => None,
        }
    }
}

impl From<io::Error> for ConnectError {
    fn from(error: io::Error) -> Self {
        ConnectError::Io(Arc::new(error))
    }
}

/// An open session failed. Every failure of the connection under it is one of these too, so
/// a dead connection fails every session on it.
#[derive(Clone, Debug)]
pub enum SessionError {
    /// The peer ended the session (its endpoint was dropped, or it closed the session). A
    /// receive reports this only after every message sent before it.
    PeerClosed,
    /// The peer aborted the session, with its reason.
    Aborted(String),
    /// The connection was lost: the socket failed or reached its end, or the node shut down.
    ConnectionLost(Arc<io::Error>),
    /// A frame broke the protocol: it does not decode, or it is not allowed where it came (a
    /// wrong state or message index, a payload that does not decode, more messages than the
    /// credit window). Received for a session, it aborts it; in the framing, the connection.
    Violation(String),
    /// A frame longer than the connection's maximum, announced by the peer (or, for a frame
    /// other than a message's, about to be sent: then only that send fails).
    FrameTooLarge {
        /// The frame body's length.
        len: usize,
        /// The maximum.
        max: usize,
    },
    /// A message to send whose payload is longer than the connection's maximum message
    /// ([`Config::max_message`](crate::Config::max_message)); only that send fails. (A peer that
    /// sends one is a [`Violation`](Self::Violation).)
    MessageTooLarge {
        /// The payload's length.
        len: usize,
        /// The maximum.
        max: usize,
    },
    /// The peer sent nothing, not even a heartbeat, for longer than the heartbeat timeout, or
    /// read nothing for as long while bytes waited for it (a peer that stopped reading is as
    /// dead as one that stopped writing).
    HeartbeatTimeout,
    /// A payload to send does not serialize (postcard's words); the session goes on.
    Payload(String),
}

impl SessionError {
    /// Whether the session is over (everything but a failed serialization or an oversized
    /// send, which fail only that send).
    pub fn is_fatal(&self) -> bool {
        !matches!(
            self,
            SessionError::Payload(_)
                | SessionError::FrameTooLarge { .. }
                | SessionError::MessageTooLarge { .. }
        )
    }
}

impl fmt::Display for SessionError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionError::PeerClosed => f.write_str("the peer closed the session"),
            SessionError::Aborted(reason) => write!(f, "the peer aborted the session: {reason}"),
            SessionError::ConnectionLost(error) => write!(f, "the connection was lost: {error}"),
            SessionError::Violation(what) => write!(f, "protocol violation: {what}"),
            SessionError::FrameTooLarge { len, max } => {
                write!(
                    f,
                    "frame of {len} bytes is over the connection's maximum of {max}"
                )
            }
            SessionError::MessageTooLarge { len, max } => write!(
                f,
                "message of {len} bytes is over the connection's maximum of {max}"
            ),
            SessionError::HeartbeatTimeout => {
                f.write_str("the peer sent nothing for longer than the heartbeat timeout")
            }
            SessionError::Payload(error) => write!(f, "payload does not serialize: {error}"),
        }
    }
}

impl std::error::Error for SessionError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            SessionError::ConnectionLost(error) => Some(&**error),
            _ => None,
        }
    }
}

impl From<SessionError> for ConnectError {
    /// A session that failed while it was being opened.
    fn from(error: SessionError) -> Self {
        match error {
            SessionError::ConnectionLost(error) => ConnectError::Io(error),
            SessionError::HeartbeatTimeout => ConnectError::Timeout,
            other => ConnectError::Io(Arc::new(io::Error::other(other.to_string()))),
        }
    }
}

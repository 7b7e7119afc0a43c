//! Frames: what one connection carries for all its sessions (DESIGN section 6). Each end
//! first sends a [`hello`]; then each frame is a length-delimited body (a big-endian `u32`
//! length, at most the reader's `max_frame`), and the body is a varint session id, a kind and
//! its fields, then the payload bytes:
//!
//! ```text
//! body    = session:varint kind:u8 fields payload
//! Open    = 0  role:u8 window:varint name:bytes fingerprint:bytes
//! Msg     = 1  state:varint msg:varint            (payload: the message's postcard bytes)
//! Close   = 2
//! Abort   = 3  code:u8 reason:bytes               (reason: UTF-8)
//! Credit  = 4  n:varint
//! Ping    = 5
//! Begin   = 6  state:varint msg:varint len:varint (payload: the first piece of len bytes)
//! More    = 7                                     (payload: the next piece)
//! bytes   = len:varint then len bytes
//! varint  = LEB128, at most 10 bytes for a u64, 5 for a u32
//! ```
//!
//! Only `Msg`, `Begin` and `More` carry a payload; any other kind followed by bytes is
//! malformed. Decoding never panics and never copies the payload (it is a slice of the
//! received body): every way a body can be wrong is a [`FrameError`].
//!
//! # Chunks
//!
//! A message whose payload is longer than the connection's chunk size
//! ([`Config::chunk`](crate::Config::chunk), [`DEFAULT_CHUNK`]) crosses as chunks, so that one
//! large message does not hold the connection's writer while other sessions wait: a `Begin`
//! with the message's state and message index, the payload's whole length and its first
//! piece, then `More` frames with the next pieces, until the pieces add up to the length. The
//! writer interleaves the chunks of different sessions' messages (and their other frames) one
//! piece at a time; a session's own frames stay in order, so nothing of a session comes between
//! its `Begin` and its last `More`. The receiver puts the message together per session, and
//! treats as a violation of that session (it is aborted): a `Begin` announcing more than the
//! receiver's [`Config::max_message`](crate::Config::max_message), pieces that add up to more
//! than announced, a `More` with no message in progress, and a `Msg`, `Begin` or `Close`
//! inside one.

use std::fmt;

use bytes::{BufMut, Bytes, BytesMut};

/// The session id of frames about the connection itself (heartbeat `Ping`s).
pub const CONNECTION: u64 = 0;

/// The version a hello names: `pipes-net/3` since the hello carries the limits (2 brought
/// chunks).
pub const VERSION: &[u8] = b"pipes-net/3";

/// The body of a hello, the first frame each end sends: [`VERSION`], then this end's
/// [`Config::max_frame`](crate::Config::max_frame) and
/// [`Config::max_message`](crate::Config::max_message), each a big-endian `u64`. Each end cuts
/// its frames and bounds its messages by the smaller of its own limits and the peer's, so a
/// send that one end allows never breaks the other's (which would fail the whole connection).
pub fn hello(max_frame: usize, max_message: usize) -> Vec<u8> {
    let mut body = VERSION.to_vec();
    body.extend_from_slice(&(max_frame as u64).to_be_bytes());
    body.extend_from_slice(&(max_message as u64).to_be_bytes());
    body
}

/// The peer's `(max_frame, max_message)` from its hello's body, or `None` if the body is not a
/// hello of this [`VERSION`].
pub fn read_hello(body: &[u8]) -> Option<(usize, usize)> {
    let limits = body.strip_prefix(VERSION)?;
    let (frame, message) = limits.split_first_chunk::<8>()?;
    let message: [u8; 8] = message.try_into().ok()?;
    let clamp = |n: u64| usize::try_from(n).unwrap_or(usize::MAX);
    Some((
        clamp(u64::from_be_bytes(*frame)),
        clamp(u64::from_be_bytes(message)),
    ))
}

/// The largest frame body by default: 16 MiB. A peer announcing a longer frame fails the
/// connection with [`SessionError::FrameTooLarge`](crate::SessionError::FrameTooLarge).
pub const DEFAULT_MAX_FRAME: usize = 16 << 20;

/// The payload piece of one chunk by default: 64 KiB. A message with a longer payload is sent
/// as chunks (see the [module docs](self#chunks)).
pub const DEFAULT_CHUNK: usize = 64 << 10;

/// The longest message payload by default, sent or received: 64 MiB. Longer is refused on
/// send with [`SessionError::MessageTooLarge`](crate::SessionError::MessageTooLarge), and is
/// a violation when a peer announces or sends it.
pub const DEFAULT_MAX_MESSAGE: usize = 64 << 20;

/// The longest header a chunk frame can have (session id, kind, state, message index,
/// length): a chunk's frame is its piece plus at most this.
pub(crate) const MAX_CHUNK_HEAD: usize = 10 + 1 + 5 + 5 + 10;

/// The smallest [`Config::max_frame`](crate::Config::max_frame) a node starts with (32
/// bytes): a chunk's longest header and one byte of payload, so that every message can cross.
pub const MIN_FRAME: usize = MAX_CHUNK_HEAD + 1;

/// The largest protocol name and fingerprint an `Open` may carry.
pub const MAX_NAME: usize = 1 << 10;

/// Which end of a protocol a node plays in a session. Protocols are written from the client's
/// side; the two ends of a session must play opposite roles.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Role {
    /// The protocol's client side (it sends in the protocol's `send` states).
    Client,
    /// The protocol's server side.
    Server,
}

impl Role {
    /// The role the peer must play.
    pub const fn dual(self) -> Role {
        match self {
            Role::Client => Role::Server,
            Role::Server => Role::Client,
        }
    }
}

/// Why a session was aborted: the `code` of an `Abort` frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AbortCode {
    /// The peer's program aborted the session.
    Aborted,
    /// The peer serves no protocol of the name the `Open` gave (or stopped accepting).
    Refused,
    /// The peer serves the protocol under another fingerprint, or plays the same role.
    Incompatible,
    /// The peer received something the protocol does not allow (a wrong state or message
    /// index, a payload that does not decode, more messages than the credit window).
    Violation,
}

impl AbortCode {
    fn to_u8(self) -> u8 {
        match self {
            AbortCode::Aborted => 0,
            AbortCode::Refused => 1,
            AbortCode::Incompatible => 2,
            AbortCode::Violation => 3,
        }
    }

    fn from_u8(byte: u8) -> Option<Self> {
        Some(match byte {
            0 => AbortCode::Aborted,
            1 => AbortCode::Refused,
            2 => AbortCode::Incompatible,
            3 => AbortCode::Violation,
            _ => return None,
        })
    }
}

/// What a frame says, after its session id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Kind {
    /// Opens a session (from the opener), or accepts it (the acceptor's answer, with its own
    /// role and fingerprint).
    Open {
        /// The role the sender plays.
        role: Role,
        /// How many `Msg`s the sender lets its peer have in flight before a `Credit`: at least
        /// 1 for an unbounded protocol, 0 (no flow control) for a bounded one; any other `Open`
        /// is incompatible.
        window: u32,
        /// The protocol's name, which an acceptor serves.
        name: String,
        /// The protocol's fingerprint: both ends must have the same.
        fingerprint: Bytes,
    },
    /// A message of the protocol: the index of the state it is sent in, the index of the
    /// message in that state; the payload holds its postcard bytes.
    Msg {
        /// The state's index in the protocol.
        state: u32,
        /// The message's index in its state.
        msg: u32,
    },
    /// The sender ended the session (its endpoint was dropped or the protocol ended).
    Close,
    /// The sender failed the session.
    Abort {
        /// Why.
        code: AbortCode,
        /// Words for a person.
        reason: String,
    },
    /// The sender consumed `n` more messages: its peer may send `n` more.
    Credit {
        /// How many.
        n: u32,
    },
    /// A heartbeat (on session [`CONNECTION`]).
    Ping,
    /// The first chunk of a message too long for one frame: its state and message index (as
    /// in `Msg`) and its payload's whole length; the payload holds the first piece.
    Begin {
        /// The state's index in the protocol.
        state: u32,
        /// The message's index in its state.
        msg: u32,
        /// The whole payload's length, in bytes.
        len: u64,
    },
    /// A following chunk of the session's message in progress; the payload holds the piece.
    More,
}

/// One frame: a session id, a kind and a payload (empty unless the kind is `Msg`, `Begin` or
/// `More`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Frame {
    /// The session the frame belongs to; [`CONNECTION`] for the connection itself.
    pub session: u64,
    /// What it says.
    pub kind: Kind,
    /// A `Msg`'s payload bytes, or a `Begin`'s or `More`'s piece of one.
    pub payload: Bytes,
}

/// A frame body that does not decode, or a frame that cannot be encoded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FrameError {
    /// The body ended inside the named field.
    Truncated(&'static str),
    /// A varint ran past its width (the named field).
    VarintOverflow(&'static str),
    /// An unknown kind byte.
    UnknownKind(u8),
    /// An unknown role byte in an `Open`.
    UnknownRole(u8),
    /// An unknown abort code.
    UnknownAbortCode(u8),
    /// A protocol name or abort reason that is not UTF-8.
    NotUtf8(&'static str),
    /// A name or fingerprint longer than [`MAX_NAME`].
    TooLong(&'static str),
    /// Bytes after a kind that carries no payload.
    TrailingBytes {
        /// The kind's name.
        kind: &'static str,
        /// How many bytes were left.
        len: usize,
    },
    /// A body longer than the maximum frame length.
    TooLarge {
        /// The body's length.
        len: usize,
        /// The maximum.
        max: usize,
    },
}

impl fmt::Display for FrameError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FrameError::Truncated(field) => write!(f, "frame ends inside its {field}"),
            FrameError::VarintOverflow(field) => write!(f, "frame's {field} overflows its varint"),
            FrameError::UnknownKind(byte) => write!(f, "unknown frame kind {byte}"),
            FrameError::UnknownRole(byte) => write!(f, "unknown role {byte} in an Open frame"),
            FrameError::UnknownAbortCode(byte) => write!(f, "unknown abort code {byte}"),
            FrameError::NotUtf8(field) => write!(f, "frame's {field} is not UTF-8"),
            FrameError::TooLong(field) => {
                write!(f, "frame's {field} is longer than {MAX_NAME} bytes")
            }
            FrameError::TrailingBytes { kind, len } => {
                write!(
                    f,
                    "{len} bytes after a {kind} frame, which carries no payload"
                )
            }
            FrameError::TooLarge { len, max } => {
                write!(f, "frame of {len} bytes is over the maximum of {max}")
            }
        }
    }
}

impl std::error::Error for FrameError {}

impl Frame {
    /// A frame without payload.
    pub fn new(session: u64, kind: Kind) -> Self {
        Frame {
            session,
            kind,
            payload: Bytes::new(),
        }
    }

    /// The frame's body (what follows the length prefix), appended to `out`. An abort
    /// reason longer than [`MAX_NAME`] bytes is cut to fit (at a char boundary); a protocol
    /// name or fingerprint that long is an error, leaving `out` as it was.
    fn encode_body(&self, out: &mut BytesMut) -> Result<(), FrameError> {
        if let Kind::Open {
            name, fingerprint, ..
        } = &self.kind
        {
            if name.len() > MAX_NAME {
                return Err(FrameError::TooLong("protocol name"));
            }
            if fingerprint.len() > MAX_NAME {
                return Err(FrameError::TooLong("fingerprint"));
            }
        }
        put_varint(out, self.session);
        match &self.kind {
            Kind::Open {
                role,
                window,
                name,
                fingerprint,
            } => {
                out.put_u8(0);
                out.put_u8(match role {
                    Role::Client => 0,
                    Role::Server => 1,
                });
                put_varint(out, u64::from(*window));
                put_bytes(out, name.as_bytes());
                put_bytes(out, fingerprint);
            }
            Kind::Msg { state, msg } => {
                out.put_u8(1);
                put_varint(out, u64::from(*state));
                put_varint(out, u64::from(*msg));
            }
            Kind::Close => out.put_u8(2),
            Kind::Abort { code, reason } => {
                out.put_u8(3);
                out.put_u8(code.to_u8());
                let mut cut = reason.len().min(MAX_NAME);
                while !reason.is_char_boundary(cut) {
                    cut -= 1;
                }
                put_bytes(out, &reason.as_bytes()[..cut]);
            }
            Kind::Credit { n } => {
                out.put_u8(4);
                put_varint(out, u64::from(*n));
            }
            Kind::Ping => out.put_u8(5),
            Kind::Begin { state, msg, len } => {
                out.put_u8(6);
                put_varint(out, u64::from(*state));
                put_varint(out, u64::from(*msg));
                put_varint(out, *len);
            }
            Kind::More => out.put_u8(7),
        }
        out.put_slice(&self.payload);
        Ok(())
    }

    /// The whole frame, length prefix included, appended to `out`; fails (leaving `out` as it
    /// was) if the body is longer than `max`, or an `Open`'s name or fingerprint is longer
    /// than [`MAX_NAME`]. An abort reason that long is cut to fit.
    pub fn encode(&self, max: usize, out: &mut BytesMut) -> Result<(), FrameError> {
        let start = out.len();
        out.put_u32(0);
        if let Err(error) = self.encode_body(out) {
            out.truncate(start);
            return Err(error);
        }
        finish_length(out, start, max)
    }

    /// Decodes a frame body (without its length prefix). The payload is a slice of `body`.
    pub fn decode(body: Bytes) -> Result<Frame, FrameError> {
        let mut r = Reader { body, at: 0 };
        let session = r.varint("session id")?;
        let kind = match r.u8("kind")? {
            0 => {
                let role = match r.u8("role")? {
                    0 => Role::Client,
                    1 => Role::Server,
                    byte => return Err(FrameError::UnknownRole(byte)),
                };
                let window = r.varint32("window")?;
                let name = r.bytes("protocol name")?;
                let name = String::from_utf8(name.to_vec())
                    .map_err(|_| FrameError::NotUtf8("protocol name"))?;
                let fingerprint = r.bytes("fingerprint")?;
                Kind::Open {
                    role,
                    window,
                    name,
                    fingerprint,
                }
            }
            1 => {
                let state = r.varint32("state index")?;
                let msg = r.varint32("message index")?;
                return Ok(Frame {
                    session,
                    kind: Kind::Msg { state, msg },
                    payload: r.rest(),
                });
            }
            2 => Kind::Close,
            3 => {
                let byte = r.u8("abort code")?;
                let code = AbortCode::from_u8(byte).ok_or(FrameError::UnknownAbortCode(byte))?;
                let reason = r.bytes("abort reason")?;
                let reason = String::from_utf8(reason.to_vec())
                    .map_err(|_| FrameError::NotUtf8("abort reason"))?;
                Kind::Abort { code, reason }
            }
            4 => Kind::Credit {
                n: r.varint32("credit")?,
            },
            5 => Kind::Ping,
            6 => {
                let state = r.varint32("state index")?;
                let msg = r.varint32("message index")?;
                let len = r.varint("message length")?;
                return Ok(Frame {
                    session,
                    kind: Kind::Begin { state, msg, len },
                    payload: r.rest(),
                });
            }
            7 => {
                return Ok(Frame {
                    session,
                    kind: Kind::More,
                    payload: r.rest(),
                });
            }
            byte => return Err(FrameError::UnknownKind(byte)),
        };
        let rest = r.rest();
        if !rest.is_empty() {
            return Err(FrameError::TrailingBytes {
                kind: kind.name(),
                len: rest.len(),
            });
        }
        Ok(Frame::new(session, kind))
    }
}

impl Kind {
    /// The kind's name, for errors.
    pub fn name(&self) -> &'static str {
        match self {
            Kind::Open { .. } => "Open",
            Kind::Msg { .. } => "Msg",
            Kind::Close => "Close",
            Kind::Abort { .. } => "Abort",
            Kind::Credit { .. } => "Credit",
            Kind::Ping => "Ping",
            Kind::Begin { .. } => "Begin",
            Kind::More => "More",
        }
    }
}

/// A message encoded for the wire: one `Msg` frame, or a payload too long for one, which the
/// connection's writer sends as chunks.
#[derive(Debug)]
pub(crate) enum Encoded {
    /// A whole `Msg` frame, length prefix included.
    Whole(Bytes),
    /// A payload to send as a `Begin` and `More`s.
    Chunked {
        state: u32,
        msg: u32,
        payload: Bytes,
    },
}

/// How long messages and their frames may be: the sender's side of a connection's settings.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    /// The longest payload piece of one frame: longer payloads are chunked.
    pub(crate) piece: usize,
    /// The longest message payload.
    pub(crate) max_message: usize,
}

impl Limits {
    /// The limits of a connection whose frames may be `max_frame` long, with chunks of `chunk`
    /// payload bytes (cut so a chunk's frame fits) and messages of `max_message`.
    pub(crate) fn new(max_frame: usize, chunk: usize, max_message: usize) -> Self {
        Limits {
            piece: chunk.min(max_frame.saturating_sub(MAX_CHUNK_HEAD)).max(1),
            max_message,
        }
    }
}

/// Encodes message `msg` of state `state` with `payload` in postcard, serialized straight into
/// the frame (one copy, no intermediate buffer). Fails if the payload does not serialize or is
/// longer than the maximum message.
pub(crate) fn encode_msg<T: serde::Serialize + ?Sized>(
    session: u64,
    state: u32,
    msg: u32,
    payload: &T,
    limits: Limits,
) -> Result<Encoded, crate::SessionError> {
    encode_msg_with(session, state, msg, limits, |out| {
        postcard::to_extend(payload, ExtendBytes(out))
            .map(drop)
            .map_err(|error| error.to_string())
    })
}

/// Encodes a message whose payload `write` appends (postcard, written by the caller: a typed
/// pump writes several payloads one after the other, which is how postcard writes them as one
/// tuple). Fails if `write` fails or the payload is longer than the maximum message.
pub(crate) fn encode_msg_with(
    session: u64,
    state: u32,
    msg: u32,
    limits: Limits,
    write: impl FnOnce(&mut BytesMut) -> Result<(), String>,
) -> Result<Encoded, crate::SessionError> {
    let mut out = BytesMut::with_capacity(64);
    out.put_u32(0);
    // A Msg has no field that can be too long.
    let _ = Frame::new(session, Kind::Msg { state, msg }).encode_body(&mut out);
    let head = out.len();
    write(&mut out).map_err(crate::SessionError::Payload)?;
    let len = out.len() - head;
    if len > limits.max_message {
        return Err(crate::SessionError::MessageTooLarge {
            len,
            max: limits.max_message,
        });
    }
    if len > limits.piece {
        // The frame's head is dropped: the writer puts chunk heads on the pieces.
        return Ok(Encoded::Chunked {
            state,
            msg,
            payload: out.freeze().slice(head..),
        });
    }
    // Fits: the body is at most a piece plus the head, under the maximum frame.
    finish_length(&mut out, 0, usize::MAX)
        .map_err(|error| crate::SessionError::Violation(error.to_string()))?;
    Ok(Encoded::Whole(out.freeze()))
}

/// The session id of an encoded frame (length prefix included); 0, the connection's, if it
/// has none (never, for a frame this crate encoded).
pub(crate) fn session_of(frame: &[u8]) -> u64 {
    let mut r = Reader {
        body: Bytes::copy_from_slice(frame.get(4..frame.len().min(4 + 10)).unwrap_or(&[])),
        at: 0,
    };
    r.varint("session id").unwrap_or(CONNECTION)
}

/// Appends the length prefix and head of a chunk frame of `session` carrying `piece` payload
/// bytes (to be written after it): a `Begin` if `begin` is given (state, message index and the
/// payload's whole length), else a `More`.
pub(crate) fn put_chunk_head(
    out: &mut BytesMut,
    session: u64,
    begin: Option<(u32, u32, u64)>,
    piece: usize,
) {
    let start = out.len();
    out.put_u32(0);
    put_varint(out, session);
    match begin {
        Some((state, msg, len)) => {
            out.put_u8(6);
            put_varint(out, u64::from(state));
            put_varint(out, u64::from(msg));
            put_varint(out, len);
        }
        None => out.put_u8(7),
    }
    let len = out.len() - start - 4 + piece;
    out[start..start + 4].copy_from_slice(&(len as u32).to_be_bytes());
}

/// Lets postcard serialize into a `BytesMut` borrowed mutably (its `Extend` impl is on the
/// owned value).
pub(crate) struct ExtendBytes<'a>(pub(crate) &'a mut BytesMut);

impl Extend<u8> for ExtendBytes<'_> {
    fn extend<I: IntoIterator<Item = u8>>(&mut self, iter: I) {
        self.0.extend(iter);
    }
}

/// Writes the length of the body that starts 4 bytes after `start` into its prefix.
fn finish_length(out: &mut BytesMut, start: usize, max: usize) -> Result<(), FrameError> {
    let len = out.len() - start - 4;
    match u32::try_from(len) {
        Ok(len32) if len <= max => {
            out[start..start + 4].copy_from_slice(&len32.to_be_bytes());
            Ok(())
        }
        _ => {
            out.truncate(start);
            Err(FrameError::TooLarge { len, max })
        }
    }
}

fn put_varint(out: &mut BytesMut, mut value: u64) {
    while value >= 0x80 {
        out.put_u8((value as u8) | 0x80);
        value >>= 7;
    }
    out.put_u8(value as u8);
}

fn put_bytes(out: &mut BytesMut, bytes: &[u8]) {
    put_varint(out, bytes.len() as u64);
    out.put_slice(bytes);
}

/// A cursor over a body; every read checks the length.
struct Reader {
    body: Bytes,
    at: usize,
}

impl Reader {
    fn u8(&mut self, field: &'static str) -> Result<u8, FrameError> {
        let byte = *self.body.get(self.at).ok_or(FrameError::Truncated(field))?;
        self.at += 1;
        Ok(byte)
    }

    fn varint(&mut self, field: &'static str) -> Result<u64, FrameError> {
        let mut value = 0u64;
        for i in 0..10 {
            let byte = self.u8(field)?;
            let bits = u64::from(byte & 0x7f);
            // The tenth byte holds the top bit of a u64 only.
            if i == 9 && bits > 1 {
                return Err(FrameError::VarintOverflow(field));
            }
            value |= bits << (7 * i);
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err(FrameError::VarintOverflow(field))
    }

    fn varint32(&mut self, field: &'static str) -> Result<u32, FrameError> {
        u32::try_from(self.varint(field)?).map_err(|_| FrameError::VarintOverflow(field))
    }

    fn bytes(&mut self, field: &'static str) -> Result<Bytes, FrameError> {
        let len = self.varint(field)?;
        if len > MAX_NAME as u64 {
            return Err(FrameError::TooLong(field));
        }
        let len = len as usize;
        if self.body.len() - self.at < len {
            return Err(FrameError::Truncated(field));
        }
        let bytes = self.body.slice(self.at..self.at + len);
        self.at += len;
        Ok(bytes)
    }

    fn rest(&mut self) -> Bytes {
        let rest = self.body.slice(self.at..);
        self.at = self.body.len();
        rest
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn round_trip(frame: Frame) {
        let mut out = BytesMut::new();
        frame.encode(DEFAULT_MAX_FRAME, &mut out).unwrap();
        let len = u32::from_be_bytes(out[..4].try_into().unwrap()) as usize;
        assert_eq!(len, out.len() - 4);
        assert_eq!(Frame::decode(out.freeze().slice(4..)), Ok(frame));
    }

    #[test]
    fn every_kind_round_trips() {
        round_trip(Frame::new(
            1,
            Kind::Open {
                role: Role::Server,
                window: 256,
                name: "bank".into(),
                fingerprint: Bytes::from_static(b"\x01\x02\xff"),
            },
        ));
        round_trip(Frame {
            session: u64::MAX,
            kind: Kind::Msg {
                state: u32::MAX,
                msg: 3,
            },
            payload: Bytes::from_static(b"payload"),
        });
        round_trip(Frame::new(7, Kind::Close));
        round_trip(Frame::new(
            7,
            Kind::Abort {
                code: AbortCode::Violation,
                reason: "bad state ☃".into(),
            },
        ));
        round_trip(Frame::new(9, Kind::Credit { n: 128 }));
        round_trip(Frame::new(CONNECTION, Kind::Ping));
        round_trip(Frame {
            session: 3,
            kind: Kind::Begin {
                state: 2,
                msg: 1,
                len: u64::MAX,
            },
            payload: Bytes::from_static(b"first piece"),
        });
        round_trip(Frame {
            session: 3,
            kind: Kind::More,
            payload: Bytes::from_static(b"next piece"),
        });
        round_trip(Frame::new(3, Kind::More));
    }

    #[test]
    fn the_session_of_an_encoded_frame_is_read_back() {
        for session in [0, 1, 127, 128, 300, u64::MAX] {
            let mut out = BytesMut::new();
            Frame::new(session, Kind::Close)
                .encode(DEFAULT_MAX_FRAME, &mut out)
                .unwrap();
            assert_eq!(session_of(&out), session);
        }
        assert_eq!(session_of(b"\0\0"), CONNECTION);
    }

    #[test]
    fn chunk_heads_decode_as_the_frames_they_start() {
        for begin in [Some((4, 5, 1 << 40)), None] {
            let mut out = BytesMut::new();
            put_chunk_head(&mut out, 300, begin, 3);
            out.put_slice(b"abc");
            let len = u32::from_be_bytes(out[..4].try_into().unwrap()) as usize;
            assert_eq!(len, out.len() - 4);
            assert!(len - 3 <= MAX_CHUNK_HEAD);
            let frame = Frame::decode(out.freeze().slice(4..)).unwrap();
            let kind = match begin {
                Some((state, msg, len)) => Kind::Begin { state, msg, len },
                None => Kind::More,
            };
            assert_eq!((frame.session, frame.kind), (300, kind));
            assert_eq!(&frame.payload[..], b"abc");
        }
    }

    #[test]
    fn long_payloads_are_chunked_and_too_long_ones_refused() {
        let limits = Limits::new(DEFAULT_MAX_FRAME, 8, 64);
        let whole = encode_msg(1, 0, 0, &[1u8; 7][..], limits).unwrap();
        // 7 bytes and their length: 8, one piece.
        assert!(matches!(whole, Encoded::Whole(_)), "{whole:?}");
        match encode_msg(1, 2, 3, &[1u8; 8][..], limits).unwrap() {
            Encoded::Chunked {
                state: 2,
                msg: 3,
                payload,
            } => assert_eq!(payload, postcard::to_allocvec(&[1u8; 8][..]).unwrap()),
            other => panic!("{other:?}"),
        }
        assert!(matches!(
            encode_msg(1, 0, 0, &[1u8; 64][..], limits),
            Err(crate::SessionError::MessageTooLarge { len: 65, max: 64 })
        ));
        // A chunk's frame fits the maximum frame, however large the chunk size.
        assert_eq!(
            Limits::new(100, 1 << 20, 1 << 30).piece,
            100 - MAX_CHUNK_HEAD
        );
    }

    #[test]
    fn malformed_bodies_are_typed_errors() {
        let decode = |bytes: &'static [u8]| Frame::decode(Bytes::from_static(bytes));
        assert_eq!(
            decode(b"\x01\x06\x00\x00"),
            Err(FrameError::Truncated("message length"))
        );
        assert_eq!(decode(b"\x01\x08"), Err(FrameError::UnknownKind(8)));
        assert_eq!(decode(b""), Err(FrameError::Truncated("session id")));
        assert_eq!(decode(b"\x01"), Err(FrameError::Truncated("kind")));
        assert_eq!(decode(b"\x01\x00\x07"), Err(FrameError::UnknownRole(7)));
        assert_eq!(
            decode(b"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f\x05"),
            Err(FrameError::VarintOverflow("session id"))
        );
        assert_eq!(
            decode(b"\x01\x01\x80\x80\x80\x80\x10\x00"),
            Err(FrameError::VarintOverflow("state index"))
        );
        assert_eq!(
            decode(b"\x01\x02x"),
            Err(FrameError::TrailingBytes {
                kind: "Close",
                len: 1
            })
        );
        assert_eq!(
            decode(b"\x01\x00\x00\x00\x05ab"),
            Err(FrameError::Truncated("protocol name"))
        );
        assert_eq!(
            decode(b"\x01\x00\x00\x00\x02\xff\xfe\x00"),
            Err(FrameError::NotUtf8("protocol name"))
        );
        assert_eq!(
            decode(b"\x01\x03\x09\x00"),
            Err(FrameError::UnknownAbortCode(9))
        );
    }

    #[test]
    fn long_abort_reasons_are_cut_and_long_names_refused() {
        let mut out = BytesMut::new();
        let reason = "é".repeat(MAX_NAME);
        Frame::new(
            1,
            Kind::Abort {
                code: AbortCode::Aborted,
                reason,
            },
        )
        .encode(DEFAULT_MAX_FRAME, &mut out)
        .unwrap();
        match Frame::decode(out.freeze().slice(4..)).unwrap().kind {
            Kind::Abort { reason, .. } => assert_eq!(reason, "é".repeat(MAX_NAME / 2)),
            other => panic!("{other:?}"),
        }
        let mut out = BytesMut::from(&b"keep"[..]);
        let open = Frame::new(
            1,
            Kind::Open {
                role: Role::Client,
                window: 0,
                name: "n".repeat(MAX_NAME + 1),
                fingerprint: Bytes::new(),
            },
        );
        assert_eq!(
            open.encode(DEFAULT_MAX_FRAME, &mut out),
            Err(FrameError::TooLong("protocol name"))
        );
        assert_eq!(&out[..], b"keep");
    }

    #[test]
    fn oversized_frames_are_refused_and_leave_the_buffer_alone() {
        let mut out = BytesMut::from(&b"keep"[..]);
        let frame = Frame {
            session: 1,
            kind: Kind::Msg { state: 0, msg: 0 },
            payload: Bytes::from(vec![0u8; 100]),
        };
        assert!(matches!(
            frame.encode(50, &mut out),
            Err(FrameError::TooLarge { max: 50, .. })
        ));
        assert_eq!(&out[..], b"keep");
    }
}

//! One session on a connection, untyped: [`RawSession`], and the [`Acceptor`] that hands
//! out the sessions peers open.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use bytes::{Bytes, BytesMut};
use serde::Serialize;
use serde::de::DeserializeOwned;
use tokio::sync::mpsc;

use crate::block::block_on;
use crate::connection::{Conn, Out, Slot, closed_by_node};
use crate::error::SessionError;
use crate::frame::{self, AbortCode, Encoded, Kind};

/// What the reader task hands a session: a message, or the end; or, from a shutting-down
/// node, a request that the session's pump report in (see `shutdown.rs`), which a receive
/// skips.
pub(crate) enum Event {
    Msg {
        state: u32,
        msg: u32,
        payload: Bytes,
    },
    End(SessionError),
    Settle,
}

/// One message as it came off the wire: the index of the state it was sent in, its index in
/// that state, and its payload's postcard bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RawMessage {
    /// The state's index in the protocol.
    pub state: u32,
    /// The message's index in its state.
    pub msg: u32,
    /// The payload, as postcard bytes.
    pub payload: Bytes,
}

impl RawMessage {
    /// Decodes the payload as a `T`; a payload that does not decode, or has bytes left over,
    /// is a [`SessionError::Violation`]. So is one nested deeper than pipes-net decodes (128
    /// levels), which would otherwise overflow the stack.
    pub fn decode<T: DeserializeOwned>(&self) -> Result<T, SessionError> {
        match crate::depth::take::<T>(&self.payload) {
            Ok((value, [])) => Ok(value),
            Ok((_, rest)) => Err(SessionError::Violation(format!(
                "{} bytes left after the payload of message {} in state {}",
                rest.len(),
                self.msg,
                self.state
            ))),
            Err(error) => Err(SessionError::Violation(format!(
                "the payload of message {} in state {} does not decode: {error}",
                self.msg, self.state
            ))),
        }
    }
}

/// One session on a connection, untyped: it sends and receives `(state, message,
/// payload)` triples, which is all a protocol's generated pump needs. It knows nothing of the
/// protocol's states; the pump does (DESIGN section 6):
///
/// - On open, the pump holds the *dual* local endpoint of the one it hands the user (from the
///   protocol's `init()`), and a `RawSession` opened with the protocol's [`Protocol`](crate::Protocol)
///   (name, fingerprint, bounded or not) and role.
/// - In a state where the user's side sends, the pump receives from its local endpoint, and
///   forwards the message with [`send`](RawSession::send): the state's index, the message's
///   index in that state (both in the order the protocol declares them), and the payload
///   (serialized with postcard; several payload types travel as one tuple). In a state where the
///   remote side sends, it [`recv`](RawSession::recv)s, checks that the state index is the one
///   it is in and the message index is one of that state's, decodes the payload as that
///   message's type only ([`RawMessage::decode`]), and sends it on its local endpoint. A wrong
///   index or a payload that does not decode is a [`violation`](RawSession::violation).
/// - When the local endpoint is dropped or the protocol ends, the pump
///   [`close`](RawSession::close)s; when the session fails, it drops its local endpoint, so the
///   user's endpoint sees the pipe closed (the cause is kept in the [`SessionError`]).
///
/// Flow control: for an unbounded protocol each end grants its peer a credit window of
/// messages (the node's [`Config::window`](crate::Config::window)); a send waits while the
/// window is spent, and a receive hands credit back every half window. A peer that sends past
/// its window is a violation. Bounded protocols need no credit (at most a bounded number of
/// messages is ever in flight) and send at once.
///
/// Not `Clone`; dropping it closes the session.
pub struct RawSession {
    id: u64,
    conn: Arc<Conn>,
    slot: Arc<Slot>,
    inbox: mpsc::UnboundedReceiver<Event>,
    protocol: &'static str,
    /// Messages received since the last credit sent.
    uncredited: u32,
    /// Whether this end ended the session (closed or aborted it).
    done: bool,
}

impl std::fmt::Debug for RawSession {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawSession")
            .field("id", &self.id)
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

impl RawSession {
    pub(crate) fn new(
        id: u64,
        conn: Arc<Conn>,
        slot: Arc<Slot>,
        inbox: mpsc::UnboundedReceiver<Event>,
        protocol: &'static str,
    ) -> Self {
        RawSession {
            id,
            conn,
            slot,
            inbox,
            protocol,
            uncredited: 0,
            done: false,
        }
    }

    /// Registers a pump for this session with its node, whose shutdown then waits for it.
    pub(crate) fn register_pump(&self) -> crate::shutdown::PumpMark {
        self.conn.pumps.register()
    }

    /// The session's id on its connection.
    pub fn id(&self) -> u64 {
        self.id
    }

    /// The name of the session's protocol.
    pub fn protocol(&self) -> &'static str {
        self.protocol
    }

    /// Why the session cannot go on, if it cannot.
    fn ended(&self) -> Option<SessionError> {
        self.slot
            .ended
            .get()
            .cloned()
            .or_else(|| self.conn.failure())
    }

    /// Sends message `msg` of state `state` with `payload` (serialized with postcard),
    /// waiting for credit if the protocol is unbounded and the peer's window is spent.
    /// `Ok` means handed to the connection, as with TCP: to know the peer has it, the
    /// protocol needs a state in which the peer answers.
    pub async fn send_async<T: Serialize + ?Sized>(
        &self,
        state: u32,
        msg: u32,
        payload: &T,
    ) -> Result<(), SessionError> {
        if let Some(error) = self.ended() {
            return Err(error);
        }
        // Encode first: a payload that does not serialize or is too large costs no credit.
        let out = self.encode(state, msg, payload)?;
        self.send_encoded_async(out).await
    }

    /// Sends a message encoded by [`encode_with`](Self::encode_with), waiting for credit
    /// if the protocol is unbounded.
    pub(crate) async fn send_encoded_async(&self, out: Encoded) -> Result<(), SessionError> {
        if let Some(error) = self.ended() {
            return Err(error);
        }
        if self.slot.limited.load(std::sync::atomic::Ordering::Acquire) {
            match self.slot.credit.acquire().await {
                Ok(permit) => permit.forget(),
                Err(_) => return Err(self.ended().unwrap_or(SessionError::PeerClosed)),
            }
        }
        self.conn.send_message(Out::message(self.id, out))
    }

    /// [`send_async`](Self::send_async), blocking the thread while the credit is spent. Not
    /// for async code.
    pub fn send<T: Serialize + ?Sized>(
        &self,
        state: u32,
        msg: u32,
        payload: &T,
    ) -> Result<(), SessionError> {
        block_on(self.send_async(state, msg, payload))
    }

    /// [`send_async`](Self::send_async) without waiting: `Ok(false)` if the credit is spent
    /// (nothing was sent).
    pub fn try_send<T: Serialize + ?Sized>(
        &self,
        state: u32,
        msg: u32,
        payload: &T,
    ) -> Result<bool, SessionError> {
        if let Some(error) = self.ended() {
            return Err(error);
        }
        let out = self.encode(state, msg, payload)?;
        if self.slot.limited.load(std::sync::atomic::Ordering::Acquire) {
            match self.slot.credit.try_acquire() {
                Ok(permit) => permit.forget(),
                Err(tokio::sync::TryAcquireError::NoPermits) => return Ok(false),
                Err(tokio::sync::TryAcquireError::Closed) => {
                    return Err(self.ended().unwrap_or(SessionError::PeerClosed));
                }
            }
        }
        self.conn
            .send_message(Out::message(self.id, out))
            .map(|()| true)
    }

    /// A message of this session, whose payload `write` appends.
    pub(crate) fn encode_with(
        &self,
        state: u32,
        msg: u32,
        write: impl FnOnce(&mut BytesMut) -> Result<(), String>,
    ) -> Result<Encoded, SessionError> {
        frame::encode_msg_with(self.id, state, msg, self.conn.limits, write)
    }

    /// A message of this session, encoded.
    fn encode<T: Serialize + ?Sized>(
        &self,
        state: u32,
        msg: u32,
        payload: &T,
    ) -> Result<Encoded, SessionError> {
        frame::encode_msg(self.id, state, msg, payload, self.conn.limits)
    }

    /// The next message from the peer. After the last one, the error says why there are no
    /// more: [`SessionError::PeerClosed`] when the peer ended the session, or the connection's
    /// failure.
    pub async fn recv_async(&mut self) -> Result<RawMessage, SessionError> {
        loop {
            if let Some(received) = self.recv_or_settle().await {
                return received;
            }
        }
    }

    /// [`recv_async`](Self::recv_async), or `None` when the node's shutdown asks the session's
    /// pump to report in: the pump's receive, which is how a pump waiting on the peer hears
    /// of the shutdown at no cost the rest of the time.
    pub(crate) async fn recv_or_settle(&mut self) -> Option<Result<RawMessage, SessionError>> {
        Some(match self.inbox.recv().await {
            Some(Event::Msg {
                state,
                msg,
                payload,
            }) => {
                self.credit_one();
                Ok(RawMessage {
                    state,
                    msg,
                    payload,
                })
            }
            Some(Event::End(error)) => Err(error),
            Some(Event::Settle) => return None,
            None => Err(self.ended().unwrap_or_else(closed_by_node)),
        })
    }

    /// [`recv_async`](Self::recv_async), blocking the thread. Not for async code.
    pub fn recv(&mut self) -> Result<RawMessage, SessionError> {
        block_on(self.recv_async())
    }

    /// A received message, if one is here already (`Ok(None)` if not).
    pub fn try_recv(&mut self) -> Result<Option<RawMessage>, SessionError> {
        let mut event = self.inbox.try_recv();
        while let Ok(Event::Settle) = event {
            event = self.inbox.try_recv();
        }
        match event {
            Ok(Event::Msg {
                state,
                msg,
                payload,
            }) => {
                self.credit_one();
                Ok(Some(RawMessage {
                    state,
                    msg,
                    payload,
                }))
            }
            Ok(Event::End(error)) => Err(error),
            Ok(Event::Settle) | Err(mpsc::error::TryRecvError::Empty) => Ok(None),
            Err(mpsc::error::TryRecvError::Disconnected) => {
                Err(self.ended().unwrap_or_else(closed_by_node))
            }
        }
    }

    /// The credit window this end grants the peer (0 for a bounded protocol): also the room
    /// a pump leaves the sends of its local endpoint (see `writable.rs`).
    pub(crate) fn window(&self) -> u32 {
        self.slot.window
    }

    /// Counts a received message, and hands the peer credit every half window.
    fn credit_one(&mut self) {
        let window = self.slot.window;
        if window == 0 {
            // A bounded protocol's peer needs no credit: only the count of what waits here.
            self.slot
                .inflight
                .fetch_sub(1, std::sync::atomic::Ordering::AcqRel);
            return;
        }
        self.uncredited += 1;
        if self.uncredited >= (window / 2).max(1) {
            let n = std::mem::take(&mut self.uncredited);
            self.slot
                .inflight
                .fetch_sub(n, std::sync::atomic::Ordering::AcqRel);
            self.conn.credit(self.id, &self.slot, n);
        }
    }

    /// Ends the session: the peer receives what was sent before, then
    /// [`SessionError::PeerClosed`]. Dropping the session does the same.
    pub fn close(mut self) {
        self.end_with(Kind::Close);
    }

    /// Aborts the session: the peer's next receive or send fails with
    /// [`SessionError::Aborted`] and `reason`.
    pub fn abort(mut self, reason: &str) {
        self.end_with(Kind::Abort {
            code: AbortCode::Aborted,
            reason: reason.into(),
        });
    }

    /// Aborts the session because the peer broke the protocol (a wrong state or message
    /// index, a payload that does not decode): the peer fails with
    /// [`SessionError::Violation`] and `what`.
    pub fn violation(mut self, what: &str) {
        self.end_with(Kind::Abort {
            code: AbortCode::Violation,
            reason: what.into(),
        });
    }

    pub(crate) fn abort_with(mut self, code: AbortCode, reason: &str) {
        self.end_with(Kind::Abort {
            code,
            reason: reason.into(),
        });
    }

    fn end_with(&mut self, kind: Kind) {
        if std::mem::replace(&mut self.done, true) {
            return;
        }
        // Owe the peer a frame only if neither it nor the connection ended the session first.
        if self.conn.remove(self.id) && !self.conn.is_dead() {
            let _ = self.conn.send_frame(self.id, kind);
        }
    }
}

impl Drop for RawSession {
    fn drop(&mut self) {
        self.end_with(Kind::Close);
    }
}

/// A session a peer opened, on its way to an [`Acceptor`]: counted in the acceptor's backlog
/// (see [`Config::backlog`](crate::Config::backlog)) until it is accepted or dropped.
pub(crate) struct Unaccepted {
    pub(crate) session: RawSession,
    pub(crate) backlog: Backlogged,
}

/// One session's place in an acceptor's count of unaccepted sessions: given back on drop.
pub(crate) struct Backlogged(Arc<AtomicUsize>);

impl Backlogged {
    /// Counts one more session in `backlog`, unless it counts `limit` already. The readers of
    /// every connection add to it, so the check and the count are one step.
    pub(crate) fn try_new(backlog: &Arc<AtomicUsize>, limit: usize) -> Option<Self> {
        backlog
            .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |n| {
                (n < limit).then_some(n + 1)
            })
            .ok()?;
        Some(Backlogged(backlog.clone()))
    }
}

impl Drop for Backlogged {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Sessions of one protocol that peers open with this node: from
/// [`Node::serve`](crate::Node::serve).
pub struct Acceptor {
    pub(crate) sessions: mpsc::UnboundedReceiver<Unaccepted>,
    pub(crate) protocol: &'static str,
}

impl std::fmt::Debug for Acceptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Acceptor")
            .field("protocol", &self.protocol)
            .finish_non_exhaustive()
    }
}

impl Acceptor {
    /// The next session a peer opens; `None` once the node has shut down.
    pub async fn accept_async(&mut self) -> Option<RawSession> {
        let unaccepted = self.sessions.recv().await?;
        // Accepted: its place in the backlog is free again.
        drop(unaccepted.backlog);
        Some(unaccepted.session)
    }

    /// [`accept_async`](Self::accept_async), blocking the thread. Not for async code.
    pub fn accept(&mut self) -> Option<RawSession> {
        block_on(self.accept_async())
    }
}

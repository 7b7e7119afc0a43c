//! One connection between two nodes, carrying many sessions: the hello that starts it, the
//! reader task that decodes frames and hands each to its session's inbox, the writer task that
//! drains the one outbound queue (and sends heartbeats), and what happens when it dies: every
//! session on it gets the error, and every waiting receive, send or open wakes up with it.
//!
//! Reading bodies off the stream is `codec.rs`; decoding them, `frame.rs`.
//!
//! Session ids are odd for sessions the dialing end opened and even for the accepting end's,
//! so the two ends never pick the same id; 0 is the connection itself.

use std::collections::{HashMap, VecDeque};
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use tokio::io::{AsyncRead, AsyncWrite, AsyncWriteExt, BufWriter};
use tokio::sync::{Notify, Semaphore, mpsc, oneshot, watch};
use tokio::time::Instant;
use tokio_util::codec::FramedRead;

use crate::codec::{Bodies, ReadError, Watched, codec, next};
use crate::deadline::Later;
use crate::error::{ConnectError, SessionError};
use crate::frame::{self, AbortCode, CONNECTION, Encoded, Frame, FrameError, Kind, Limits, Role};
use crate::node::{Config, Lookup, Protocol, Registry};
use crate::session::{Backlogged, Event, RawSession, Unaccepted};
use crate::shutdown::Pumps;

/// The longest hello read: before it, the peer is anyone who could connect, and a decoder
/// takes what the length prefix announces as the size to expect.
const HELLO_MAX: usize = 64;

/// Bytes of answers to the peer's frames (its `Open`s) that may wait unwritten before the
/// reader stops reading the peer: a peer that writes and never reads would otherwise make the
/// node queue answers without bound. Only answers count, not what the node's own sessions
/// send, so two nodes both sending more than they read cannot stop each other's readers.
///
/// Nor can two nodes that each open many sessions at once: an end keeps the answers its
/// unanswered `Open`s can cost the peer within [`OPENS_ROOM`], half this limit, so a peer that
/// reads is never stopped by them. (Without that, 1,500 `Open`s each way of a protocol with a
/// long name stopped both readers, each writer then waiting for the other's reader.) A peer
/// that froze, or one that does not keep to this, meets the writer's stall timeout (see
/// [`stalled`]): [`SessionError::HeartbeatTimeout`] instead of a hang.
const ANSWERS_LIMIT: usize = 1 << 20;

/// Bytes of the peer's answers that this end's unanswered `Open`s may cost it (see
/// [`ANSWERS_LIMIT`]): an open waits for room before it sends its `Open`.
const OPENS_ROOM: usize = ANSWERS_LIMIT / 2;

/// Which end of a connection this node is: the one that dialed it, or the one that accepted.
/// It decides which session ids each end picks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Origin {
    /// This node dialed the connection.
    Dialed,
    /// This node accepted it.
    Accepted,
}

/// A live connection's state, shared by its tasks and its sessions.
pub(crate) struct Conn {
    pub(crate) config: Config,
    /// How long this end's frames and messages may be: its own limits, and the peer's from
    /// its hello, whichever is smaller.
    pub(crate) limits: Limits,
    registry: Arc<Registry>,
    /// What the writer task sends: encoded frames (length prefix included), in order.
    out: mpsc::UnboundedSender<Out>,
    /// The answers to the peer's frames queued and not yet written (see [`ANSWERS_LIMIT`]).
    answers: Arc<Answers>,
    /// The pumps of the node's typed sessions, which its shutdown waits for.
    pub(crate) pumps: Arc<Pumps>,
    sessions: Mutex<HashMap<u64, Entry>>,
    /// Why the connection died; set once.
    failure: OnceLock<SessionError>,
    /// Why the writer stopped, if its socket failed while the connection lived on: the reader
    /// still delivers what the peer sent before it went (see `write_loop`), and meanwhile
    /// messages are refused with this error.
    write_failure: OnceLock<SessionError>,
    /// Tells the tasks to stop.
    dead: watch::Sender<bool>,
    /// Set when this end starts shutting its write half down in a graceful shutdown: the end
    /// of the peer's stream that follows is its answer, and the connection ends as the node's.
    closing: AtomicBool,
    next_id: AtomicU64,
    /// The highest id of a session the peer opened (only the reader task writes it).
    peer_max: AtomicU64,
    /// Room, in bytes, for the peer's answers to this end's `Open`s (see [`OPENS_ROOM`]).
    opens: Semaphore,
    pub(crate) handle: tokio::runtime::Handle,
}

/// How many bytes of answers wait to be written, and a wake for a reader that stopped for them.
#[derive(Default)]
struct Answers {
    bytes: AtomicUsize,
    drained: Notify,
}

/// An answer's frame while it is queued: its drop (once the writer has written it, or when
/// the queue is dropped) takes it off the backlog.
struct Answer {
    frame: BytesMut,
    answers: Arc<Answers>,
}

impl AsRef<[u8]> for Answer {
    fn as_ref(&self) -> &[u8] {
        &self.frame
    }
}

impl Drop for Answer {
    fn drop(&mut self) {
        let before = self
            .answers
            .bytes
            .fetch_sub(self.frame.len(), Ordering::Relaxed);
        if before > ANSWERS_LIMIT && before - self.frame.len() <= ANSWERS_LIMIT {
            self.answers.drained.notify_waiters();
        }
    }
}

/// What the writer task takes from the outbound queue.
pub(crate) enum Out {
    /// A frame, length prefix included (its session id follows the prefix: the writer reads
    /// it only while a chunked message is being cut, to keep each session's frames in order).
    Frame(Bytes),
    /// A message to send as chunks (boxed: rare, and it keeps the queue's slots small).
    Chunked(Box<Cut>),
    /// A `Credit` of the session: the writer takes what the slot owes the peer when it writes
    /// it (see [`Conn::credit`]).
    Credit(u64, Arc<Slot>),
    /// The end of the connection's outbound stream: write what came before, flush, shut the
    /// write half down, then answer.
    Finish(oneshot::Sender<()>),
}

impl Out {
    /// A message of `session`, as it was encoded.
    #[inline]
    pub(crate) fn message(session: u64, encoded: Encoded) -> Out {
        match encoded {
            Encoded::Whole(bytes) => Out::Frame(bytes),
            Encoded::Chunked {
                state,
                msg,
                payload,
            } => Out::Chunked(Box::new(Cut {
                session,
                state,
                msg,
                payload,
                written: 0,
            })),
        }
    }
}

/// A session as the reader task sees it.
struct Entry {
    events: mpsc::UnboundedSender<Event>,
    slot: Arc<Slot>,
    /// While the session is being opened by this end: what it expects of the peer's answer.
    opening: Option<Opening>,
    /// The chunked message the peer is sending, while it is in progress.
    chunked: Option<Chunked>,
}

/// Hands a whole message to `entry`'s session, unless more are waiting there than its peer may
/// have in flight (then that limit, to abort the session with). Called under the sessions'
/// lock: a send to the inbox never waits, and this spares a clone of the inbox's sender per
/// message.
fn deliver(entry: &Entry, state: u32, msg: u32, payload: Bytes) -> Result<(), u32> {
    let limit = entry.slot.limit;
    let waiting = entry.slot.inflight.fetch_add(1, Ordering::AcqRel);
    if waiting >= limit {
        return Err(limit);
    }
    // The payload is a slice of the block the reader read it into (8 to 64 KiB), and keeps all
    // of it alive. A session that falls behind could have a whole window of tiny payloads keep
    // a block each: past a few waiting, they get bytes of their own.
    let payload = if waiting >= SHARED_WAITING && payload.len() < OWN_BELOW {
        Bytes::copy_from_slice(&payload)
    } else {
        payload
    };
    let _ = entry.events.send(Event::Msg {
        state,
        msg,
        payload,
    });
    Ok(())
}

/// How many messages may wait in a session's inbox as slices of the read buffer; later ones
/// shorter than [`OWN_BELOW`] are copied out of it.
const SHARED_WAITING: u32 = 8;

/// Payloads at least this long are left in the read buffer: its blocks are at most 64 KiB
/// (unless one frame is longer), so such a payload keeps at most twice its own size alive.
const OWN_BELOW: usize = 32 << 10;

/// A message frame, as [`Conn::message`] takes it.
enum Piece {
    /// A whole message (`Msg`).
    Whole { state: u32, msg: u32 },
    /// The first chunk of one (`Begin`).
    Begin { state: u32, msg: u32, len: u64 },
    /// A following chunk (`More`).
    More,
}

/// A chunked message being received: what its `Begin` said, and the pieces so far.
struct Chunked {
    state: u32,
    msg: u32,
    /// The payload's whole length, as announced (at most the maximum message).
    len: usize,
    payload: BytesMut,
}

/// A session this end is opening.
struct Opening {
    /// Where the peer's answer goes.
    answer: oneshot::Sender<Result<(), ConnectError>>,
    protocol: Protocol,
    role: Role,
}

/// What a session shares with the reader task.
pub(crate) struct Slot {
    /// The credit window this end grants the peer (0: no flow control).
    pub(crate) window: u32,
    /// Messages received and not yet credited back (for a bounded protocol, not yet taken
    /// from the inbox).
    pub(crate) inflight: AtomicU32,
    /// How many may be: the window, or for a bounded protocol, whose peer never needs credit
    /// (each state holds one message at most), the config's window all the same, so that a
    /// peer that ignores the protocol cannot fill this end's memory; but never fewer than the
    /// protocol lets a peer send ahead (`Protocol::in_flight`), or a small window would cut
    /// off a peer that keeps to it.
    limit: u32,
    /// Whether sends need credit: the peer granted a window.
    pub(crate) limited: AtomicBool,
    /// The peer's window for this end's sends; closed when the session ends.
    pub(crate) credit: Semaphore,
    /// The peer's window, as it announced it.
    peer_window: AtomicU32,
    /// Credit this end owes the peer and has not written yet: non-zero while an
    /// [`Out::Credit`] of the session waits in the outbound queue.
    owed: AtomicU32,
    /// Why the session ended, once it has: read on every send, so without a lock.
    pub(crate) ended: OnceLock<SessionError>,
}

impl Slot {
    fn new(window: u32, protocol: &Protocol, config: &Config) -> Self {
        Slot {
            window,
            inflight: AtomicU32::new(0),
            limit: if window > 0 {
                window
            } else {
                config.window.max(protocol.in_flight).max(1)
            },
            limited: AtomicBool::new(false),
            credit: Semaphore::new(0),
            peer_window: AtomicU32::new(0),
            owed: AtomicU32::new(0),
            ended: OnceLock::new(),
        }
    }

    /// Takes the peer's window from its `Open`.
    fn grant(&self, peer_window: u32) {
        self.peer_window.store(peer_window, Ordering::Relaxed);
        if peer_window > 0 {
            self.credit.add_permits(peer_window as usize);
            self.limited.store(true, Ordering::Release);
        }
    }

    /// Ends the session with `error` (the first reason wins) and wakes a send waiting for
    /// credit.
    pub(crate) fn end(&self, error: SessionError) {
        let _ = self.ended.set(error);
        self.credit.close();
    }
}

/// Locks a mutex whose data stays consistent even if a holder panicked.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

impl Conn {
    /// Why the connection died, if it has.
    pub(crate) fn failure(&self) -> Option<SessionError> {
        self.failure.get().cloned()
    }

    /// Whether the connection died.
    pub(crate) fn is_dead(&self) -> bool {
        self.failure.get().is_some()
    }

    /// Kills the connection: every session on it ends with `error`, and the tasks stop.
    pub(crate) fn fail(&self, error: SessionError) {
        if self.failure.set(error.clone()).is_err() {
            return;
        }
        let sessions = std::mem::take(&mut *lock(&self.sessions));
        for (_, entry) in sessions {
            entry.slot.end(error.clone());
            // Dropping the entry drops its inbox sender and its opener's answer: a waiting
            // receive or open wakes and finds `failure`.
        }
        self.dead.send_replace(true);
    }

    /// Queues a message of a session for the writer: refused, not lost, once the writer's
    /// socket has failed.
    pub(crate) fn send_message(&self, out: Out) -> Result<(), SessionError> {
        match self.write_failure.get() {
            Some(failure) => Err(self.failure().unwrap_or_else(|| failure.clone())),
            None => self.send_out(out),
        }
    }

    /// Queues a frame or a chunked message for the writer.
    pub(crate) fn send_out(&self, out: Out) -> Result<(), SessionError> {
        if let Some(failure) = self.failure() {
            return Err(failure);
        }
        self.out
            .send(out)
            .map_err(|_| self.failure().unwrap_or_else(closed_by_node))
    }

    /// Encodes and queues a frame that answers one of the peer's, counted in the answers
    /// backlog until the writer has written (and dropped) it.
    fn answer(&self, session: u64, kind: Kind) -> Result<(), SessionError> {
        let mut out = BytesMut::new();
        Frame::new(session, kind)
            .encode(self.config.max_frame, &mut out)
            .map_err(|error| SessionError::Violation(error.to_string()))?;
        let len = out.len();
        self.answers.bytes.fetch_add(len, Ordering::Relaxed);
        let answer = Answer {
            frame: out,
            answers: self.answers.clone(),
        };
        self.send_out(Out::Frame(Bytes::from_owner(answer)))
    }

    /// Grants the peer `n` more messages on session `id`. A session's grant is one number:
    /// added to the `Credit` of the session still waiting in the outbound queue, if one does,
    /// so that a peer which sends and never reads makes the node hold a frame per session,
    /// not one per half window of its messages.
    pub(crate) fn credit(&self, id: u64, slot: &Arc<Slot>, n: u32) {
        // At most a window is ever owed (it is for messages the peer sent within its window),
        // so the sum cannot wrap.
        if slot.owed.fetch_add(n, Ordering::AcqRel) == 0 {
            let _ = self.send_out(Out::Credit(id, slot.clone()));
        }
    }

    /// Encodes and queues a frame without payload.
    pub(crate) fn send_frame(&self, session: u64, kind: Kind) -> Result<(), SessionError> {
        let mut out = BytesMut::new();
        Frame::new(session, kind)
            .encode(self.config.max_frame, &mut out)
            .map_err(|error| match error {
                FrameError::TooLarge { len, max } => SessionError::FrameTooLarge { len, max },
                other => SessionError::Violation(other.to_string()),
            })?;
        self.send_out(Out::Frame(out.freeze()))
    }

    /// Ends the connection gracefully: every frame queued before this call is written and
    /// flushed, the write half is shut down (the peer reads the end of the stream after the
    /// frames), and then this waits for the peer to end its side too, so that closing the
    /// socket with the peer's unread bytes in it cannot reset the connection under the frames
    /// just sent. Not bounded by itself: the node's shutdown puts its deadline on it, then
    /// fails the connection.
    pub(crate) async fn finish(&self) {
        let (done, written) = oneshot::channel();
        // Before the Finish: the peer's end may come as soon as the write half is shut down.
        self.closing.store(true, Ordering::Release);
        if self.out.send(Out::Finish(done)).is_ok() {
            // An error: the writer died (the connection failed) before it got there.
            let _ = written.await;
        }
        let mut dead = self.dead.subscribe();
        stopped(&mut dead).await;
    }

    /// Asks every session's pump to report in to the node's shutdown (see `shutdown.rs`).
    pub(crate) fn settle_sessions(&self) {
        for entry in lock(&self.sessions).values() {
            let _ = entry.events.send(Event::Settle);
        }
    }

    /// Forgets a session this end ended; whether it was still live.
    pub(crate) fn remove(&self, id: u64) -> bool {
        lock(&self.sessions).remove(&id).is_some()
    }

    /// Opens a session: sends `Open` and waits for the peer's `Open` (or its `Abort`).
    /// Runs on the node's runtime (it uses its timer).
    pub(crate) async fn open(
        self: Arc<Self>,
        protocol: Protocol,
        role: Role,
    ) -> Result<RawSession, ConnectError> {
        // Checked before anything is made for the session: an `Open` carries at most this.
        if protocol.name.len() > frame::MAX_NAME || protocol.fingerprint.len() > frame::MAX_NAME {
            return Err(ConnectError::Io(Arc::new(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "protocol `{}`: its name ({} bytes) and fingerprint ({} bytes) may each be \
                     {} bytes long at most",
                    protocol.name.chars().take(64).collect::<String>(),
                    protocol.name.len(),
                    protocol.fingerprint.len(),
                    frame::MAX_NAME
                ),
            ))));
        }
        let window = protocol.window(&self.config);
        let open = Kind::Open {
            role,
            window,
            name: protocol.name.to_owned(),
            fingerprint: Bytes::from_static(protocol.fingerprint),
        };
        let deadline = Instant::now().later(self.config.open_timeout);
        // Room for the answer in the peer's backlog, held until the answer is here.
        let room = answer_room(&open);
        let room = match tokio::time::timeout_at(deadline, self.opens.acquire_many(room)).await {
            Ok(Ok(permit)) => permit,
            Ok(Err(_)) => return Err(closed_by_node().into()),
            Err(_) => return Err(ConnectError::Timeout),
        };
        let slot = Arc::new(Slot::new(window, &protocol, &self.config));
        let (events, inbox) = mpsc::unbounded_channel();
        let (answer, answered) = oneshot::channel();
        let id = {
            // The id is taken and the Open queued under the lock, so Opens go out in order
            // of id (the peer refuses an id lower than one it has seen).
            let mut sessions = lock(&self.sessions);
            if let Some(failure) = self.failure() {
                return Err(failure.into());
            }
            let id = self.next_id.fetch_add(2, Ordering::Relaxed);
            sessions.insert(
                id,
                Entry {
                    events,
                    slot: slot.clone(),
                    opening: Some(Opening {
                        answer,
                        protocol,
                        role,
                    }),
                    chunked: None,
                },
            );
            if let Err(error) = self.send_frame(id, open) {
                // Not opened after all: nothing may stay behind for it.
                sessions.remove(&id);
                return Err(error.into());
            }
            id
        };
        let answered = tokio::time::timeout_at(deadline, answered).await;
        // The answer is here (and gone from the peer's backlog), or will not be waited for.
        drop(room);
        match answered {
            Ok(Ok(Ok(()))) => Ok(RawSession::new(id, self, slot, inbox, protocol.name)),
            Ok(Ok(Err(error))) => Err(error),
            Ok(Err(_)) => Err(self.failure().unwrap_or_else(closed_by_node).into()),
            Err(_) => {
                self.remove(id);
                let _ = self.send_frame(
                    id,
                    Kind::Abort {
                        code: AbortCode::Aborted,
                        reason: "open timed out".into(),
                    },
                );
                Err(ConnectError::Timeout)
            }
        }
    }

    /// Handles one frame from the peer. A frame that breaks the framing is the connection's
    /// failure; one that breaks a session's rules aborts that session.
    fn dispatch(self: &Arc<Self>, frame: Frame, origin: Origin) -> Result<(), SessionError> {
        let id = frame.session;
        if id == CONNECTION {
            return match frame.kind {
                Kind::Ping => Ok(()),
                other => Err(SessionError::Violation(format!(
                    "a {} frame on the connection's session 0",
                    other.name()
                ))),
            };
        }
        let peers = (id % 2 == 1) == (origin == Origin::Accepted);
        // A frame for a session that was never opened (a frame for one that was, and has
        // ended, is late, not wrong: it is dropped below).
        let opened = match (&frame.kind, peers) {
            (Kind::Open { .. }, true) => {
                if !self.open_peer(id) {
                    return Err(SessionError::Violation(format!(
                        "a second Open of session {id}"
                    )));
                }
                true
            }
            (_, true) => id <= self.peer_max.load(Ordering::Relaxed),
            (_, false) => id < self.next_id.load(Ordering::Relaxed),
        };
        if !opened {
            return Err(SessionError::Violation(format!(
                "a {} frame for session {id}, which was never opened",
                frame.kind.name()
            )));
        }
        match frame.kind {
            Kind::Open {
                role,
                window,
                name,
                fingerprint,
            } => {
                if peers {
                    self.accept(id, role, window, name, fingerprint)
                } else {
                    self.answered(id, role, window, &name, &fingerprint);
                    Ok(())
                }
            }
            Kind::Msg { state, msg } => {
                self.message(id, Piece::Whole { state, msg }, frame.payload);
                Ok(())
            }
            Kind::Begin { state, msg, len } => {
                self.message(id, Piece::Begin { state, msg, len }, frame.payload);
                Ok(())
            }
            Kind::More => {
                self.message(id, Piece::More, frame.payload);
                Ok(())
            }
            Kind::Close => {
                let inside = lock(&self.sessions)
                    .get(&id)
                    .is_some_and(|entry| entry.chunked.is_some());
                if inside {
                    self.abort_session(
                        id,
                        AbortCode::Violation,
                        format!("session {id} closed inside a chunked message"),
                    );
                } else {
                    self.end_session(id, SessionError::PeerClosed, None);
                }
                Ok(())
            }
            Kind::Abort { code, reason } => {
                let error = match code {
                    AbortCode::Violation => SessionError::Violation(reason.clone()),
                    _ => SessionError::Aborted(reason.clone()),
                };
                let refusal = match code {
                    AbortCode::Refused => ConnectError::Refused(reason),
                    AbortCode::Incompatible => ConnectError::Incompatible(reason),
                    AbortCode::Aborted | AbortCode::Violation => {
                        ConnectError::Refused(format!("the peer aborted the open: {reason}"))
                    }
                };
                self.end_session(id, error, Some(refusal));
                Ok(())
            }
            Kind::Credit { n } => {
                let sessions = lock(&self.sessions);
                let Some(entry) = sessions.get(&id) else {
                    return Ok(());
                };
                let slot = entry.slot.clone();
                drop(sessions);
                let peer_window = slot.peer_window.load(Ordering::Relaxed);
                let available = slot.credit.available_permits() as u64;
                if peer_window == 0 || available + u64::from(n) > u64::from(peer_window) {
                    self.abort_session(
                        id,
                        AbortCode::Violation,
                        format!("a credit of {n} past the window of {peer_window}"),
                    );
                } else {
                    slot.credit.add_permits(n as usize);
                }
                Ok(())
            }
            Kind::Ping => Err(SessionError::Violation(format!(
                "a Ping frame on session {id}"
            ))),
        }
    }

    /// Takes a message, or a chunk of one, for session `id`, and hands each whole message to
    /// the session (counting it against the credit window). Whatever breaks the rules of
    /// messages (see [`frame`](crate::frame#chunks)) aborts the session as a violation.
    fn message(&self, id: u64, piece: Piece, payload: Bytes) {
        let mut sessions = lock(&self.sessions);
        // A session this end already closed: the peer sent before it knew.
        let Some(entry) = sessions.get_mut(&id) else {
            return;
        };
        let max = self.config.max_message;
        // The common case first: a whole message, nothing in progress.
        if let Piece::Whole { state, msg } = piece
            && entry.chunked.is_none()
            && entry.opening.is_none()
            && payload.len() <= max
        {
            if let Err(window) = deliver(entry, state, msg, payload) {
                drop(sessions);
                self.past_window(id, window);
            }
            return;
        }
        let broken = |what: String| Some(Err(what));
        let whole = match (piece, entry.chunked.take()) {
            _ if entry.opening.is_some() => broken(format!(
                "a message on session {id} before its Open was answered"
            )),
            (Piece::Whole { .. } | Piece::Begin { .. }, Some(_)) => broken(format!(
                "a new message on session {id} inside a chunked message"
            )),
            (Piece::More, None) => broken(format!(
                "a More frame on session {id}, which has no chunked message in progress"
            )),
            (Piece::Whole { .. }, None) if payload.len() > max => broken(format!(
                "a message of {} bytes on session {id}, over the maximum of {max}",
                payload.len()
            )),
            (Piece::Whole { state, msg }, None) => Some(Ok((state, msg, payload))),
            (Piece::Begin { len, .. }, None) if len > max as u64 => broken(format!(
                "a message of {len} bytes on session {id}, over the maximum of {max}"
            )),
            (Piece::Begin { len, .. }, None) if payload.len() as u64 > len => broken(format!(
                "a first chunk of {} bytes on session {id}, longer than its message of {len}",
                payload.len()
            )),
            (Piece::Begin { state, msg, len }, None) if payload.len() as u64 == len => {
                Some(Ok((state, msg, payload)))
            }
            (Piece::Begin { state, msg, len }, None) => {
                // Grown as the pieces come, never to more than the peer really sent.
                let mut assembled = BytesMut::with_capacity((len as usize).min(payload.len() * 2));
                assembled.extend_from_slice(&payload);
                entry.chunked = Some(Chunked {
                    state,
                    msg,
                    len: len as usize,
                    payload: assembled,
                });
                None
            }
            (Piece::More, Some(mut chunked)) => {
                if chunked.payload.len() + payload.len() > chunked.len {
                    broken(format!(
                        "chunks of more than the {} bytes announced on session {id}",
                        chunked.len
                    ))
                } else {
                    chunked.payload.extend_from_slice(&payload);
                    if chunked.payload.len() == chunked.len {
                        Some(Ok((chunked.state, chunked.msg, chunked.payload.freeze())))
                    } else {
                        entry.chunked = Some(chunked);
                        None
                    }
                }
            }
        };
        let (state, msg, payload) = match whole {
            None => return,
            Some(Ok(whole)) => whole,
            Some(Err(what)) => {
                drop(sessions);
                self.abort_session(id, AbortCode::Violation, what);
                return;
            }
        };
        if let Err(window) = deliver(entry, state, msg, payload) {
            drop(sessions);
            self.past_window(id, window);
        }
    }

    /// Aborts session `id`, whose peer sent more than `limit` messages ahead of this end (see
    /// [`Slot`]'s `limit`).
    fn past_window(&self, id: u64, limit: u32) {
        self.abort_session(
            id,
            AbortCode::Violation,
            format!("more than {limit} messages in flight, the session's window"),
        );
    }

    /// Records that the peer opens session `id`; whether it is a new one (each end sends its
    /// `Open`s in increasing order of id).
    fn open_peer(&self, id: u64) -> bool {
        let max = self.peer_max.load(Ordering::Relaxed);
        if id > max {
            self.peer_max.store(id, Ordering::Relaxed);
        }
        id > max
    }

    /// The peer opens a session: answer with our `Open` and hand the session to the
    /// protocol's acceptor, or refuse it.
    fn accept(
        self: &Arc<Self>,
        id: u64,
        role: Role,
        window: u32,
        name: String,
        fingerprint: Bytes,
    ) -> Result<(), SessionError> {
        let serve = match self.registry.get(&name, &fingerprint) {
            Lookup::Served(serve) => serve,
            Lookup::Unknown => {
                let reason = format!("no protocol named `{name}` is served here");
                return self.refuse(id, AbortCode::Refused, reason);
            }
            // Served under that name, but not as the peer's protocol: it is the peer's that
            // differs, so name every fingerprint served here beside the peer's.
            Lookup::Differs(here) => {
                let here: Vec<String> = here.iter().map(|served| hex(served)).collect();
                let fingerprints = if here.len() == 1 {
                    "fingerprint"
                } else {
                    "fingerprints"
                };
                let reason = format!(
                    "protocol `{name}` differs: {fingerprints} {} here, {} there",
                    here.join(", "),
                    hex(&fingerprint)
                );
                return self.refuse(id, AbortCode::Incompatible, reason);
            }
        };
        let refusal = if serve.acceptor.is_closed() {
            Some((
                AbortCode::Refused,
                format!("protocol `{name}` is no longer accepted here"),
            ))
        } else if role != serve.role.dual() {
            Some((
                AbortCode::Incompatible,
                format!("both ends play the {role:?} of protocol `{name}`"),
            ))
        } else if (window == 0) == serve.protocol.unbounded {
            // A peer that announced no window for an unbounded protocol would have every send
            // of ours go unlimited (a bounded protocol announces none and needs none).
            Some((
                AbortCode::Incompatible,
                window_mismatch(&name, window, serve.protocol.unbounded),
            ))
        } else {
            None
        };
        if let Some((code, reason)) = refusal {
            return self.refuse(id, code, reason);
        }
        let Some(backlog) = Backlogged::try_new(&serve.unaccepted, self.config.backlog) else {
            let reason = format!(
                "{} sessions of protocol `{name}` wait to be accepted here already (the backlog)",
                self.config.backlog
            );
            return self.refuse(id, AbortCode::Refused, reason);
        };
        let ours = serve.protocol.window(&self.config);
        let slot = Arc::new(Slot::new(ours, &serve.protocol, &self.config));
        slot.grant(window);
        let (events, inbox) = mpsc::unbounded_channel();
        lock(&self.sessions).insert(
            id,
            Entry {
                events,
                slot: slot.clone(),
                opening: None,
                chunked: None,
            },
        );
        self.answer(
            id,
            Kind::Open {
                role: serve.role,
                window: ours,
                name,
                fingerprint: Bytes::from_static(serve.protocol.fingerprint),
            },
        )?;
        let session = Unaccepted {
            session: RawSession::new(id, self.clone(), slot, inbox, serve.protocol.name),
            backlog,
        };
        if let Err(mpsc::error::SendError(refused)) = serve.acceptor.send(session) {
            refused
                .session
                .abort_with(AbortCode::Refused, "the acceptor was dropped");
        }
        Ok(())
    }

    /// Refuses the session the peer opens as `id`, answering its `Open` with an `Abort`.
    fn refuse(&self, id: u64, code: AbortCode, reason: String) -> Result<(), SessionError> {
        // Refused either way: an answer that cannot be queued means the connection is going
        // down, which fails the peer's open too.
        let _ = self.answer(id, Kind::Abort { code, reason });
        Ok(())
    }

    /// The peer answered a session this end opened.
    fn answered(&self, id: u64, role: Role, window: u32, name: &str, fingerprint: &[u8]) {
        let mut sessions = lock(&self.sessions);
        let Some(entry) = sessions.get_mut(&id) else {
            return;
        };
        let Some(opening) = entry.opening.take() else {
            return;
        };
        let slot = entry.slot.clone();
        drop(sessions);
        // The acceptor checked the fingerprint; check again, so that a peer that answers
        // anything cannot pass for compatible.
        let expected = opening.protocol;
        let mismatch = if name != expected.name || fingerprint != expected.fingerprint {
            Some(format!(
                "the peer answered with protocol `{name}` fingerprint {}, not `{}` {}",
                hex(fingerprint),
                expected.name,
                hex(expected.fingerprint)
            ))
        } else if role != opening.role.dual() {
            Some(format!("both ends play the {role:?} of protocol `{name}`"))
        } else if (window == 0) == expected.unbounded {
            Some(window_mismatch(name, window, expected.unbounded))
        } else {
            None
        };
        match mismatch {
            None => {
                slot.grant(window);
                let _ = opening.answer.send(Ok(()));
            }
            Some(reason) => {
                let _ = opening
                    .answer
                    .send(Err(ConnectError::Incompatible(reason.clone())));
                self.abort_session(id, AbortCode::Incompatible, reason);
            }
        }
    }

    /// Ends a session the peer ended or that broke the rules, telling its receiver (after the
    /// messages before) and its opener, if it is still being opened.
    fn end_session(&self, id: u64, error: SessionError, refusal: Option<ConnectError>) {
        let Some(entry) = lock(&self.sessions).remove(&id) else {
            return;
        };
        entry.slot.end(error.clone());
        if let Some(opening) = entry.opening {
            let _ = opening
                .answer
                .send(Err(refusal.unwrap_or_else(|| error.clone().into())));
        }
        let _ = entry.events.send(Event::End(error));
    }

    /// Aborts a session from this end: tells the peer and the local receiver.
    /// Called by the reader only, for one of the peer's frames: the `Abort` counts in the
    /// answers backlog.
    pub(crate) fn abort_session(&self, id: u64, code: AbortCode, reason: String) {
        let _ = self.answer(
            id,
            Kind::Abort {
                code,
                reason: reason.clone(),
            },
        );
        let error = match code {
            AbortCode::Violation => SessionError::Violation(reason),
            _ => SessionError::Aborted(reason),
        };
        self.end_session(id, error, None);
    }
}

/// Waits until `flag` turns true (or its sender is gone).
pub(crate) async fn stopped(flag: &mut watch::Receiver<bool>) {
    let _ = flag.wait_for(|stop| *stop).await;
}

/// The error of a connection whose node shut down.
pub(crate) fn closed_by_node() -> SessionError {
    SessionError::ConnectionLost(Arc::new(io::Error::new(
        io::ErrorKind::ConnectionAborted,
        "the node shut down",
    )))
}

/// Why a peer's `Open` window does not fit the protocol: an unbounded protocol's sessions
/// need a credit window, a bounded one's have none.
fn window_mismatch(name: &str, window: u32, unbounded: bool) -> String {
    if unbounded {
        format!("protocol `{name}` is unbounded, and the peer granted no credit window")
    } else {
        format!("protocol `{name}` is bounded, and the peer granted a credit window of {window}")
    }
}

/// `bytes` in lowercase hex, for error messages.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for byte in bytes.iter().take(16) {
        let _ = write!(out, "{byte:02x}");
    }
    if bytes.len() > 16 {
        out.push_str("..");
    }
    out
}

/// Starts a connection over `io`: exchanges hellos, then spawns its reader and writer on
/// `handle`'s runtime. Runs on that runtime (it uses its timer).
pub(crate) async fn start<T>(
    io: T,
    origin: Origin,
    config: Config,
    registry: Arc<Registry>,
    pumps: Arc<Pumps>,
    handle: tokio::runtime::Handle,
) -> Result<Arc<Conn>, ConnectError>
where
    T: AsyncRead + AsyncWrite + Send + 'static,
{
    let (read, write) = tokio::io::split(io);
    let mut frames = FramedRead::new(Watched::new(read), codec(HELLO_MAX));
    let stall = Arc::new(Stall::new());
    let mut write = BufWriter::with_capacity(
        64 << 10,
        Stalls {
            inner: write,
            stall: stall.clone(),
        },
    );
    let hello = async {
        let body = frame::hello(config.max_frame, config.max_message);
        let mut out = BytesMut::new();
        out.extend_from_slice(&(body.len() as u32).to_be_bytes());
        out.extend_from_slice(&body);
        write.write_all(&out).await?;
        write.flush().await?;
        let incompatible = || {
            ConnectError::Incompatible(format!(
                "the peer does not speak {}",
                String::from_utf8_lossy(frame::VERSION)
            ))
        };
        match next(&mut frames).await {
            Some(Ok(body)) => match frame::read_hello(&body) {
                Some((max_frame, _)) if max_frame < frame::MIN_FRAME => {
                    Err(ConnectError::Incompatible(format!(
                        "the peer's frames may be {max_frame} bytes long, less than the {} \
                         every message needs",
                        frame::MIN_FRAME
                    )))
                }
                Some(limits) => Ok(limits),
                None => Err(incompatible()),
            },
            Some(Err(ReadError::TooLarge(_))) => Err(incompatible()),
            Some(Err(ReadError::Io(error))) => Err(error.into()),
            None => Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the peer closed the connection during the hello",
            )
            .into()),
        }
    };
    let (peer_frame, peer_message) = match tokio::time::timeout(config.connect_timeout, hello).await
    {
        Ok(result) => result?,
        Err(_) => return Err(ConnectError::Timeout),
    };
    // What this end sends fits the peer's limits as well as its own.
    let limits = Limits::new(
        config.max_frame.min(peer_frame),
        config.chunk,
        config.max_message.min(peer_message),
    );
    frames.decoder_mut().max = config.max_frame;
    let (out, queue) = mpsc::unbounded_channel();
    let (dead, _) = watch::channel(false);
    let conn = Arc::new(Conn {
        config,
        limits,
        registry,
        out,
        answers: Arc::default(),
        pumps,
        sessions: Mutex::new(HashMap::new()),
        failure: OnceLock::new(),
        write_failure: OnceLock::new(),
        dead,
        closing: AtomicBool::new(false),
        peer_max: AtomicU64::new(0),
        opens: Semaphore::new(OPENS_ROOM),
        next_id: AtomicU64::new(match origin {
            Origin::Dialed => 1,
            Origin::Accepted => 2,
        }),
        handle: handle.clone(),
    });
    handle.spawn(read_loop(Guard::new(&conn), frames, origin));
    handle.spawn(write_loop(Guard::new(&conn), queue, write, stall));
    Ok(conn)
}

/// The most room the peer's answer to `open` can take in its answers backlog (see
/// [`OPENS_ROOM`]): the peer's own `Open`, which has the same name and, if it is
/// compatible, the same fingerprint, or an `Abort`, whose reason is cut to [`frame::MAX_NAME`]
/// bytes. Both are counted as if the session id took the most bytes a varint does.
fn answer_room(open: &Kind) -> u32 {
    let len = |kind: Kind| {
        let mut out = BytesMut::new();
        let _ = Frame::new(CONNECTION, kind).encode(usize::MAX, &mut out);
        out.len() + 9
    };
    let abort = Kind::Abort {
        code: AbortCode::Incompatible,
        reason: "-".repeat(frame::MAX_NAME),
    };
    // At most some 2 KiB each way (names are checked against `MAX_NAME` before this).
    len(open.clone()).max(len(abort)) as u32
}

/// A connection's reader or writer task's hold on it, which fails it if the task is dropped
/// before it is done: with its runtime (a `start_async` node's runtime that ends first) or by
/// a panic. Nobody would read or write the connection any more, and a session waiting on it
/// would wait forever (its inbox's sender lives in the connection, which the session keeps).
struct Guard {
    conn: Arc<Conn>,
    /// Whether the drop fails the connection; cleared by a writer that finished its stream
    /// (the reader then waits for the peer's end).
    armed: bool,
}

impl Guard {
    fn new(conn: &Arc<Conn>) -> Self {
        Guard {
            conn: conn.clone(),
            armed: true,
        }
    }
}

impl Drop for Guard {
    fn drop(&mut self) {
        // A task that ended the connection itself set its reason first: this one is ignored.
        if self.armed {
            self.conn
                .fail(SessionError::ConnectionLost(Arc::new(io::Error::other(
                    "the connection's task was dropped (its runtime shut down, or it panicked)",
                ))));
        }
    }
}

/// Since when the writer's socket has refused to take bytes (the peer does not read), if it
/// does: a writer stuck that long fails the connection (see [`stalled`]). Kept as milliseconds
/// after `base`, plus one (0: the last write went through).
struct Stall {
    base: Instant,
    since: AtomicU64,
}

impl Stall {
    fn new() -> Self {
        Stall {
            base: Instant::now(),
            since: AtomicU64::new(0),
        }
    }

    /// Notes how a write (or flush) of the socket went: only a write that waits reads the
    /// clock, and only the first of a run.
    #[inline]
    fn note<T>(&self, polled: Poll<T>) -> Poll<T> {
        let waiting = self.since.load(Ordering::Relaxed) != 0;
        match polled {
            Poll::Pending if !waiting => {
                let after = self.base.elapsed().as_millis() as u64;
                self.since.store(after + 1, Ordering::Relaxed);
            }
            Poll::Ready(_) if waiting => self.since.store(0, Ordering::Relaxed),
            _ => {}
        }
        polled
    }

    /// When the socket started refusing bytes, if it has not taken any since.
    fn since(&self) -> Option<Instant> {
        match self.since.load(Ordering::Relaxed) {
            0 => None,
            after => Some(self.base + Duration::from_millis(after - 1)),
        }
    }
}

/// The writer's socket, noting in a [`Stall`] whether its writes wait.
struct Stalls<W> {
    inner: W,
    stall: Arc<Stall>,
}

impl<W: AsyncWrite + Unpin> AsyncWrite for Stalls<W> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        self.stall.note(polled)
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        self.stall.note(polled)
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_flush(cx);
        self.stall.note(polled)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let polled = Pin::new(&mut self.inner).poll_shutdown(cx);
        self.stall.note(polled)
    }
}

/// Returns once the socket has taken no byte for `timeout` while the writer had some to
/// write: the peer stopped reading, and is as dead as one that stopped writing (the reader's
/// heartbeat timeout). Without it, a peer that stops both with bytes owed to it would hold
/// the writer, and whatever waits for the writer (a reader paused on the answers backlog, a
/// graceful finish), forever. An idle writer costs a timer every `timeout`.
async fn stalled(stall: &Stall, timeout: Duration) {
    loop {
        let wake = match stall.since() {
            Some(since) if since.elapsed() >= timeout => return,
            Some(since) => since.later(timeout),
            None => Instant::now().later(timeout),
        };
        tokio::time::sleep_until(wake).await;
    }
}

async fn read_loop<R: AsyncRead + Unpin>(
    guard: Guard,
    mut frames: FramedRead<Watched<R>, Bodies>,
    origin: Origin,
) {
    // Every way out of the loop ends the connection first: the guard's failure only counts
    // when the task is dropped.
    let conn = &guard.conn;
    let mut dead = conn.dead.subscribe();
    let stop = stopped(&mut dead);
    tokio::pin!(stop);
    let timeout = conn.config.heartbeat_timeout;
    // One timer for the whole loop, moved on only when it fires: a timer per frame (a
    // `timeout` around each read) cost a clock read and a timer-wheel entry a message.
    let silence = tokio::time::sleep(timeout);
    tokio::pin!(silence);
    loop {
        // Stop reading while the answers to what the peer sent wait to be written: a peer
        // that does not read its answers stops being read (see `ANSWERS_LIMIT`).
        loop {
            let drained = conn.answers.drained.notified();
            if conn.answers.bytes.load(Ordering::Relaxed) <= ANSWERS_LIMIT {
                break;
            }
            tokio::select! {
                biased;
                () = &mut stop => return,
                () = drained => {}
            }
        }
        let read = tokio::select! {
            biased;
            () = &mut stop => return,
            read = next(&mut frames) => Ok(read),
            () = &mut silence => Err(()),
        };
        let error = match read {
            // No whole frame in time, but bytes came lately: wait on until the timeout after
            // them (reading a frame is cancel-safe, its bytes so far stay in the buffer).
            Err(()) if frames.get_ref().last.elapsed() < timeout => {
                let last = frames.get_ref().last;
                silence.as_mut().reset(last.later(timeout));
                continue;
            }
            Err(()) => SessionError::HeartbeatTimeout,
            // The peer's answer to this end's graceful shutdown.
            Ok(None) if conn.closing.load(Ordering::Acquire) => closed_by_node(),
            Ok(None) => SessionError::ConnectionLost(Arc::new(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "the peer closed the connection",
            ))),
            Ok(Some(Err(error))) => error.into_session(conn.config.max_frame),
            Ok(Some(Ok(body))) => match Frame::decode(body.freeze()) {
                Err(error) => SessionError::Violation(error.to_string()),
                Ok(frame) => match conn.dispatch(frame, origin) {
                    Ok(()) => continue,
                    Err(error) => error,
                },
            },
        };
        conn.fail(error);
        return;
    }
}

async fn write_loop<W: AsyncWrite + Unpin>(
    mut guard: Guard,
    mut queue: mpsc::UnboundedReceiver<Out>,
    mut write: BufWriter<W>,
    stall: Arc<Stall>,
) {
    let conn = guard.conn.clone();
    let mut dead = conn.dead.subscribe();
    // A dead connection owes the peer nothing more: stop at once, even inside a write that
    // a peer which does not read would hold forever.
    let written = tokio::select! {
        () = stopped(&mut dead) => Ok(()),
        written = write_frames(&conn, &mut queue, &mut write) => {
            written.map_err(|error| SessionError::ConnectionLost(Arc::new(error)))
        }
        () = stalled(&stall, conn.config.heartbeat_timeout) => Err(SessionError::HeartbeatTimeout),
    };
    match written {
        // The stream is finished (or the connection dead): the reader ends the connection
        // when the peer's end comes.
        Ok(()) => guard.armed = false,
        // The socket failed under a write, typically as the peer hung up. What it sent before
        // that may still wait unread in the socket, and failing the connection now would lose
        // it: the reader delivers it, and ends the connection at the end of the stream, which
        // follows at once. Until then the queue is drained (an answer's drop wakes a reader
        // paused for the answers backlog); a stream that does not end is cut off after the
        // heartbeat timeout.
        Err(error @ SessionError::ConnectionLost(_)) => {
            let _ = conn.write_failure.set(error.clone());
            tokio::select! {
                () = stopped(&mut dead) => {}
                () = discard(&mut queue) => {}
                () = tokio::time::sleep(conn.config.heartbeat_timeout) => conn.fail(error),
            }
        }
        Err(error) => conn.fail(error),
    }
}

/// Drops what comes through `queue`, for as long as anything can.
async fn discard(queue: &mut mpsc::UnboundedReceiver<Out>) {
    while queue.recv().await.is_some() {}
    std::future::pending().await
}

/// Writes what comes through `queue`, and a heartbeat whenever the connection has been idle
/// for the heartbeat interval, until the queue closes or a [`Out::Finish`] is done.
///
/// Chunked messages are written a piece at a time, taking turns with each other, and with
/// everything queued meanwhile: between two pieces, whatever came in is written (or, for a
/// session that has a chunked message in progress, set aside behind it), so a small message
/// waits for one piece at most, never for a whole large message.
async fn write_frames<W: AsyncWrite + Unpin>(
    conn: &Conn,
    queue: &mut mpsc::UnboundedReceiver<Out>,
    write: &mut BufWriter<W>,
) -> io::Result<()> {
    let mut heartbeat = tokio::time::interval(conn.config.heartbeat_interval);
    heartbeat.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    let mut ping = BytesMut::new();
    let _ = Frame::new(CONNECTION, Kind::Ping).encode(usize::MAX, &mut ping);
    let ping = ping.freeze();
    let mut turns = Turns::new(conn.limits.piece);
    // Set once a Finish is taken: nothing after it is, and it is answered once the chunked
    // messages before it are all written.
    let mut finish: Option<oneshot::Sender<()>> = None;
    let mut batch = Vec::with_capacity(BATCH);
    let mut head = BytesMut::new();
    loop {
        if turns.cutting.is_empty() {
            if let Some(done) = finish {
                write.shutdown().await?;
                let _ = done.send(());
                return Ok(());
            }
            // Flush once nothing more is queued; then wait for more.
            if queue.is_empty() {
                write.flush().await?;
            }
            tokio::select! {
                biased;
                taken = queue.recv_many(&mut batch, BATCH) => if taken == 0 {
                    write.flush().await?;
                    return Ok(());
                },
                _ = heartbeat.tick() => {
                    write.write_all(&ping).await?;
                    continue;
                }
            }
        } else if finish.is_none() {
            // Between two pieces: whatever came in meanwhile, without waiting.
            while batch.len() < BATCH {
                match queue.try_recv() {
                    Ok(out) => batch.push(out),
                    Err(_) => break,
                }
            }
        }
        for out in batch.drain(..) {
            match out {
                // Nothing after a Finish is written.
                _ if finish.is_some() => {}
                // The common case first: a frame, and no chunked message it could be behind.
                Out::Frame(bytes) if turns.behind.is_empty() => write.write_all(&bytes).await?,
                // Credit has no place in its session's order: it goes out at once.
                Out::Credit(id, slot) => write_credit(write, &mut head, id, &slot).await?,
                Out::Finish(done) => finish = Some(done),
                out => turns.take(out, write).await?,
            }
        }
        turns.write_piece(write, &mut head).await?;
    }
}

/// Writes the `Credit` that session `id` owes, all of it (whatever was added since it was
/// queued too).
async fn write_credit<W: AsyncWrite + Unpin>(
    write: &mut BufWriter<W>,
    head: &mut BytesMut,
    id: u64,
    slot: &Slot,
) -> io::Result<()> {
    let n = slot.owed.swap(0, Ordering::AcqRel);
    if n == 0 {
        return Ok(());
    }
    head.clear();
    // A frame of a few bytes: it cannot be too large.
    let _ = Frame::new(id, Kind::Credit { n }).encode(usize::MAX, head);
    write.write_all(head).await
}

/// How many queued frames the writer takes at once.
const BATCH: usize = 256;

/// The writer's chunked messages in progress, taking turns a piece at a time, and the frames
/// set aside behind them (a session's frames go out in the order they were queued).
struct Turns {
    /// The payload bytes of one piece.
    piece: usize,
    /// The messages being cut, one per session, the next to write a piece at the front.
    cutting: VecDeque<Cut>,
    /// For each session with a message being cut, what it queued since, in order.
    behind: HashMap<u64, VecDeque<Out>>,
}

/// A chunked message being written.
pub(crate) struct Cut {
    session: u64,
    state: u32,
    msg: u32,
    payload: Bytes,
    /// How many of its bytes are written.
    written: usize,
}

impl Turns {
    fn new(piece: usize) -> Self {
        Turns {
            piece: piece.max(1),
            cutting: VecDeque::new(),
            behind: HashMap::new(),
        }
    }

    /// Writes `out` now, starts cutting it, or sets it aside behind its session's message
    /// in progress.
    async fn take<W: AsyncWrite + Unpin>(
        &mut self,
        out: Out,
        write: &mut BufWriter<W>,
    ) -> io::Result<()> {
        let session = match &out {
            Out::Frame(bytes) => frame::session_of(bytes),
            Out::Chunked(cut) => cut.session,
            // The writer handles a Credit and a Finish itself, before it gets here.
            Out::Credit(..) | Out::Finish(_) => return Ok(()),
        };
        if let Some(behind) = self.behind.get_mut(&session) {
            behind.push_back(out);
            return Ok(());
        }
        match out {
            Out::Frame(bytes) => write.write_all(&bytes).await,
            Out::Chunked(cut) => {
                self.behind.insert(cut.session, VecDeque::new());
                self.cutting.push_back(*cut);
                Ok(())
            }
            Out::Credit(..) | Out::Finish(_) => Ok(()),
        }
    }

    /// Writes the next piece of the message whose turn it is; whether there was one. A
    /// message done lets what its session set aside go, up to its next chunked message.
    async fn write_piece<W: AsyncWrite + Unpin>(
        &mut self,
        write: &mut BufWriter<W>,
        head: &mut BytesMut,
    ) -> io::Result<bool> {
        let Some(mut cut) = self.cutting.pop_front() else {
            return Ok(false);
        };
        let end = (cut.written + self.piece).min(cut.payload.len());
        let begin = (cut.written == 0).then_some((cut.state, cut.msg, cut.payload.len() as u64));
        head.clear();
        frame::put_chunk_head(head, cut.session, begin, end - cut.written);
        write.write_all(head).await?;
        write.write_all(&cut.payload[cut.written..end]).await?;
        cut.written = end;
        if cut.written < cut.payload.len() {
            self.cutting.push_back(cut);
            return Ok(true);
        }
        let mut behind = self.behind.remove(&cut.session).unwrap_or_default();
        while let Some(out) = behind.pop_front() {
            match out {
                Out::Frame(bytes) => write.write_all(&bytes).await?,
                Out::Chunked(cut) => {
                    self.behind.insert(cut.session, behind);
                    self.cutting.push_back(*cut);
                    break;
                }
                // Never set aside (see `take`).
                Out::Credit(..) | Out::Finish(_) => {}
            }
        }
        Ok(true)
    }
}

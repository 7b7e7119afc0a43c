//! The pump of a typed remote session, the part that is the same for every `#[wire]`
//! protocol: what generated code reaches as `pipes_net::__private`. Not a public API: it
//! changes with the code generator.
//!
//! A protocol's generated pump is an enum with one variant per state that has messages,
//! holding the pump's local endpoint in that state (the dual of the user's), and a
//! [`PumpState::step`] that moves one message:
//!
//! - where the user's side sends, [`Pump::local`] receives it from the local endpoint (and
//!   watches the session meanwhile, so a failed session is noticed at once), and
//!   [`Pump::encode`] and [`Pump::send`] forward it: state index, message index, and the
//!   payloads one after the other, which is how postcard writes them as one tuple;
//! - where the remote side sends, [`Pump::remote`] receives a message and checks its state and
//!   message index, [`Pump::take`] decodes each payload as that message's types only and
//!   [`Pump::done`] checks nothing is left, and [`Pump::deliver`] sends it on the local
//!   endpoint.
//!
//! Each returns `None` when the session cannot go on, after doing what ends it: a violation
//! aborts the session, a local endpoint that is gone closes it, and a failed session is
//! dropped. [`run`] steps until then. The local endpoint a step holds is [`Held`] meanwhile
//! (the one it receives from is inside [`Pump::local`], guarded alike, and the start state's
//! is held from the pump's spawn): when the step ends early, it is closed with the [`Cause`]
//! of the failure, so the user's endpoint learns why in its `RecvError` instead of waiting
//! forever; when the pump is dropped (its node's runtime ended), with
//! [`Cause::ConnectionLost`], as the connections of that runtime are.
//!
//! Payloads reach serde only through [`payload`], which checks that a payload type is a
//! [`WirePayload`]: generated code calls it (through a check of its own that names the
//! protocol) with the payload's type spanned at the user's token, so a payload that cannot
//! cross the wire is an error there, in protocol words.
//!
//! A payload's `Serialize` and `Deserialize` are user code, run on the pump's task. One that
//! panics ends the session as one that fails does: [`Pump::encode`] and [`Pump::take`] catch
//! the panic, abort the session (the peer sees [`SessionError::Aborted`], the user's endpoint
//! [`Cause::Aborted`]), and then resume it, as the runtime resumes a payload's panicking
//! `Drop` once its work is done: the pump's task ends panicking, which tokio reports as any
//! task's panic (the panic hook has printed it already). Uncaught, the panic would have
//! unwound through the pump with the session still open: its drop closed it, so the peer saw a
//! clean end, and the user's endpoint a lost connection.

use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::task::Poll;

use bytes::{Bytes, BytesMut};
use serde::Serialize;
use serde::de::DeserializeOwned;

use std::sync::{Arc, OnceLock};

use pipes_runtime::__private::{Backlog, CloseWith, Recv, RecvEndpoint, RecvFuture, RoomFuture};
use pipes_runtime::Cause;

use crate::error::SessionError;
use crate::frame::Encoded;
use crate::session::RawSession;
use crate::shutdown::PumpMark;

/// What every payload of a `#[wire]` protocol must be: serialized and deserialized by serde
/// (with postcard), and moved to the pump's task. Each protocol's generated code states it
/// again in a trait of its own, whose error message names the protocol; this one's is the
/// fallback.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot cross the wire: every payload of a #[wire] protocol must be Serialize + DeserializeOwned + Send + 'static",
    label = "a payload of a #[wire] protocol",
    note = "an endpoint (of a protocol, a stream or a oneshot) cannot cross the wire: open a second session of its protocol instead"
)]
pub trait WirePayload: Send + Sized + 'static {
    /// Appends the value to `out`, in postcard.
    fn put(&self, out: &mut BytesMut) -> Result<(), String>;
    /// Decodes a value from the front of `bytes`, returning the rest; a value nested deeper
    /// than the limit is an error (see `depth.rs`).
    fn take(bytes: &[u8]) -> Result<(Self, &[u8]), String>;
}

impl<T: Serialize + DeserializeOwned + Send + 'static> WirePayload for T {
    fn put(&self, out: &mut BytesMut) -> Result<(), String> {
        postcard::to_extend(self, crate::frame::ExtendBytes(out))
            .map(drop)
            .map_err(|error| error.to_string())
    }

    fn take(bytes: &[u8]) -> Result<(Self, &[u8]), String> {
        crate::depth::take(bytes).map_err(|error| error.to_string())
    }
}

/// A pump's task: what a protocol's `WireProtocol` impl returns for the node to spawn.
pub type PumpTask = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// How one payload type crosses the wire: made by [`payload`] (where its type is checked),
/// used to forward ([`Payload::field`]) and to decode ([`Pump::take`]) with no bound of its
/// own, so a type that cannot cross the wire is one error, at the check.
pub struct Payload<T> {
    put: PutFn<T>,
    take: TakeFn<T>,
}

/// Appends a payload to a frame.
type PutFn<T> = fn(&T, &mut BytesMut) -> Result<(), String>;

/// Decodes a payload from the front of the bytes, returning the rest.
type TakeFn<T> = fn(&[u8]) -> Result<(T, &[u8]), String>;

impl<T> Clone for Payload<T> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<T> Copy for Payload<T> {}

/// How a payload type crosses the wire: the check that it can.
#[inline]
pub fn payload<T: WirePayload>() -> Payload<T> {
    Payload {
        put: T::put,
        take: T::take,
    }
}

impl<T> Payload<T> {
    /// `value`, to forward with [`Pump::encode`].
    #[inline]
    pub fn field(self, value: &T) -> Field<'_, T> {
        Field {
            value,
            put: self.put,
        }
    }
}

/// One payload to forward: what [`Pump::encode`] serializes.
pub struct Field<'a, T> {
    value: &'a T,
    put: PutFn<T>,
}

/// A [`Field`] of any type, for the list of a message's payloads.
pub trait Put {
    /// Appends the payload to `out`.
    fn put(&self, out: &mut BytesMut) -> Result<(), String>;
}

impl<T> Put for Field<'_, T> {
    fn put(&self, out: &mut BytesMut) -> Result<(), String> {
        (self.put)(self.value, out)
    }
}

/// A protocol's generated pump: its local endpoint in one state.
pub trait PumpState: Sized + Send + 'static {
    /// Moves one message of this state (either way), and returns the pump in the next state,
    /// or `None` when the session is over (the protocol ended, or it cannot go on).
    fn step(self, pump: &mut Pump) -> impl Future<Output = Option<Self>> + Send;

    /// Closes the local endpoint, leaving `cause` for the user's: how a pump whose task is
    /// dropped before its first step (with its node's runtime) ends the session.
    fn close_with(self, cause: Cause);
}

/// A pump in its start state, as an endpoint [`Held`] can close.
struct Start<S>(S);

impl<S: PumpState> CloseWith for Start<S> {
    fn close_with(self, cause: Cause) {
        self.0.close_with(cause);
    }
}

/// Runs a pump from `state` over `session`: the task a typed session's node spawns.
pub fn pump<S: PumpState>(state: S, session: RawSession) -> PumpTask {
    // Registered now, not at the task's first poll: a node shut down before that waits for it.
    let mark = session.register_pump();
    // Held now too: a task dropped before its first poll (its node's runtime ended first)
    // closes the user's endpoint as a lost connection, not as a peer that closed.
    let cause = Arc::default();
    let start = Held {
        endpoint: Some(Start(state)),
        cause: Arc::clone(&cause),
    };
    Box::pin(run(start, session, mark, cause))
}

/// The pump's endpoint for the start state, made to report what the pump takes from it, so that
/// the user's sends can wait for room (`writable.rs`), before the user has its own endpoint:
/// no send gets ahead of the report. Nothing for a bounded protocol's endpoints.
pub fn report<E: Backlog>(endpoint: E, session: &RawSession) -> E {
    match session.window() {
        0 => {}
        window => endpoint.report(window as usize),
    }
    endpoint
}

/// A pump for a protocol whose start state has no messages: nothing ever crosses, so the
/// session is closed at once.
pub fn idle(session: RawSession) -> PumpTask {
    session.close();
    Box::pin(std::future::ready(()))
}

async fn run<S: PumpState>(
    start: Held<Start<S>>,
    session: RawSession,
    mark: PumpMark,
    cause: Arc<OnceLock<Cause>>,
) {
    let Start(mut state) = start.into_inner();
    let mut pump = Pump {
        session: Some(session),
        cause,
        mark,
        payload: Bytes::new(),
        state: 0,
        msg: 0,
    };
    while let Some(next) = state.step(&mut pump).await {
        state = next;
    }
    // The last state's endpoint is gone: dropping the session closes it (if nothing ended it
    // already).
}

/// A message [`Pump::encode`] encoded, for [`Pump::send`]: one frame, or chunks.
pub struct Outgoing(Encoded);

/// The session side of a pump, and the message it is decoding.
pub struct Pump {
    /// The session, until it ends.
    session: Option<RawSession>,
    /// Why it ended early, for the [`Held`] endpoints to close with.
    cause: Arc<OnceLock<Cause>>,
    /// How a node's shutdown learns that the pump has nothing left to send.
    mark: PumpMark,
    /// The payload of the message received last, from where [`Pump::take`] goes on.
    payload: Bytes,
    /// The state and message of that message, for errors.
    state: u32,
    msg: u32,
}

/// What ended a wait on the local endpoint.
enum Local<M> {
    Message(M),
    Gone,
    Remote(Result<crate::RawMessage, crate::SessionError>),
}

impl Pump {
    /// The message the local endpoint `endpoint` receives, while watching the session:
    /// anything from the peer now is a violation (it is this side's turn to send), and a
    /// failed session ends the wait. `None` closes the local endpoint (with the failure's
    /// cause), so the user's next send fails and a receive after it says why.
    pub async fn local<E>(&mut self, endpoint: E) -> Option<E::Message>
    where
        E: RecvEndpoint + CloseWith,
    {
        let Some(session) = self.session.as_mut() else {
            endpoint.close_with(self.cause());
            return None;
        };
        let mut recv = LocalRecv(Some(Recv::recv_async(endpoint)));
        let mark = &mut self.mark;
        let local = loop {
            tokio::select! {
                biased;
                received = recv.future() => break match received {
                    Ok(message) => Local::Message(message),
                    Err(_) => Local::Gone,
                },
                // Polled after the local endpoint: a dropped endpoint is seen before a
                // shutdown's settle request is taken.
                remote = session.recv_or_settle() => match remote {
                    Some(remote) => break Local::Remote(remote),
                    None => mark.idle(),
                },
            }
        };
        match local {
            Local::Message(message) => return Some(message),
            Local::Gone => {
                // The user's endpoint is gone: the peer receives what was sent, then the end.
                self.end(Cause::Closed);
            }
            Local::Remote(Ok(message)) => self.violation(&format!(
                "message {} of state {} arrived while it was this end's turn to send",
                message.msg, message.state
            )),
            Local::Remote(Err(error)) => self.failed(&error),
        }
        if let Some(endpoint) = recv.cancel() {
            endpoint.close_with(self.cause());
        }
        None
    }

    /// `endpoint`, closed with the cause of the failure if the step ends early: how a step
    /// holds the local endpoint it sends on, or the one it received for the next state.
    pub fn hold<E: CloseWith>(&self, endpoint: E) -> Held<E> {
        Held {
            endpoint: Some(endpoint),
            cause: Arc::clone(&self.cause),
        }
    }

    /// Why the session ended early ([`Cause::Closed`] if nothing failed).
    fn cause(&self) -> Cause {
        self.cause.get().copied().unwrap_or(Cause::Closed)
    }

    /// Ends the session for `cause`: what the held endpoints close with. Closes the session if
    /// nothing ended it yet.
    fn end(&mut self, cause: Cause) {
        let _ = self.cause.set(cause);
        if let Some(session) = self.session.take() {
            session.close();
        }
    }

    /// Ends the session that failed with `error`.
    fn failed(&mut self, error: &SessionError) {
        let _ = self.cause.set(cause_of(error));
        self.session = None;
    }

    /// Encodes message `msg` of state `state` with `payloads` (the message's payloads in
    /// order). `None` if the session is over, or a payload does not serialize (then the
    /// session is aborted: the user's message is lost, and the user's endpoint sees its peer
    /// gone, for [`Cause::Aborted`]).
    ///
    /// # Panics
    ///
    /// If a payload's `Serialize` panics: the session is aborted first, as for an error (see
    /// the [module docs](self)).
    pub fn encode(&mut self, state: u32, msg: u32, payloads: &[&dyn Put]) -> Option<Outgoing> {
        let session = self.session.as_ref()?;
        // Unwind safe: a panic leaves only the frame being built half written, and it is
        // dropped; the session is aborted before the panic goes on.
        let encoded = panic::catch_unwind(AssertUnwindSafe(|| {
            session.encode_with(state, msg, |out| {
                payloads.iter().try_for_each(|field| field.put(out))
            })
        }));
        match encoded {
            Ok(Ok(message)) => Some(Outgoing(message)),
            Ok(Err(error)) => {
                self.abort(&format!(
                    "message {msg} of state {state} could not be sent: {error}"
                ));
                None
            }
            Err(panic) => {
                self.abort(&format!(
                    "message {msg} of state {state} could not be sent: a payload's Serialize \
                     panicked"
                ));
                panic::resume_unwind(panic)
            }
        }
    }

    /// Aborts the session: this end cannot go on with it.
    fn abort(&mut self, reason: &str) {
        let _ = self.cause.set(Cause::Aborted);
        if let Some(session) = self.session.take() {
            session.abort(reason);
        }
    }

    /// Sends a frame from [`encode`](Self::encode), waiting for credit in an unbounded
    /// protocol. `None` if the session failed.
    pub async fn send(&mut self, message: Outgoing) -> Option<()> {
        match self.session.as_ref()?.send_encoded_async(message.0).await {
            Ok(()) => Some(()),
            Err(error) => {
                self.failed(&error);
                None
            }
        }
    }

    /// The local endpoint the pump is about to deliver the peer's next message to, once the
    /// user has taken all but a credit window of what the pump delivered before: the pump
    /// receives from the session (and so hands the peer credit) only as fast as the user
    /// reads, so a user who stops reading stops the peer's sends, and its node buffers at most
    /// a window in the lane and a window in the session. Waiting here, the pump has nothing to
    /// put on the wire: a shutdown counts it idle.
    ///
    /// The session may end meanwhile (the peer closed it, or the connection died): what it
    /// received before is still delivered, once the user reads, and then the end. If the
    /// pump itself is dropped while it waits (its node's runtime went away), the endpoint is
    /// closed as a held one is.
    pub async fn room<E: Backlog + CloseWith>(&mut self, endpoint: E) -> E {
        let mut wait = Waiting(Some(RoomFuture::new(endpoint)));
        // One poll first: a user that keeps up costs no more than that.
        let first = std::future::poll_fn(|cx| Poll::Ready(wait.poll(cx))).await;
        match first {
            Poll::Ready(endpoint) => endpoint,
            Poll::Pending => {
                self.mark.away();
                let endpoint = std::future::poll_fn(|cx| wait.poll(cx)).await;
                self.mark.back();
                endpoint
            }
        }
    }

    /// The next message from the peer, which must be one of the `messages` messages of state
    /// `state`: its index. Anything else is a violation; a failed session is `None`.
    pub async fn remote(&mut self, state: u32, messages: u32) -> Option<u32> {
        let session = self.session.as_mut()?;
        let mark = &mut self.mark;
        let received = loop {
            match session.recv_or_settle().await {
                Some(received) => break received,
                None => mark.idle(),
            }
        };
        match received {
            Ok(message) if message.state == state && message.msg < messages => {
                (self.state, self.msg) = (message.state, message.msg);
                self.payload = message.payload;
                Some(message.msg)
            }
            Ok(message) => {
                let what = if message.state == state {
                    format!(
                        "state {state} has {messages} messages; message {} is none of them",
                        message.msg
                    )
                } else {
                    format!(
                        "message {} of state {} arrived in state {state}",
                        message.msg, message.state
                    )
                };
                self.violation(&what);
                None
            }
            Err(error) => {
                self.failed(&error);
                None
            }
        }
    }

    /// The next payload of the message [`remote`](Self::remote) received, decoded as a `T`.
    /// A payload that does not decode is a violation, as is one that nests deeper than
    /// `depth.rs` allows (a hostile peer's, which would overflow this task's stack).
    ///
    /// # Panics
    ///
    /// If the payload's `Deserialize` panics: the session is aborted first (this end's fault,
    /// not the peer's: see the [module docs](self)).
    pub fn take<T>(&mut self, payload: Payload<T>) -> Option<T> {
        // Unwind safe: decoding only reads the payload; the session is aborted before the
        // panic goes on.
        let taken = panic::catch_unwind(AssertUnwindSafe(|| (payload.take)(&self.payload)));
        match taken {
            Ok(Ok((value, rest))) => {
                self.payload = self.payload.slice(self.payload.len() - rest.len()..);
                Some(value)
            }
            Err(panic) => {
                let reason = format!(
                    "message {} of state {} could not be received: a payload's Deserialize \
                     panicked",
                    self.msg, self.state
                );
                self.abort(&reason);
                panic::resume_unwind(panic)
            }
            Ok(Err(error)) => {
                let what = format!(
                    "the payload of message {} in state {} does not decode: {error}",
                    self.msg, self.state
                );
                self.violation(&what);
                None
            }
        }
    }

    /// Checks that the message's payloads were all taken, with no bytes left over.
    pub fn done(&mut self) -> Option<()> {
        if self.payload.is_empty() {
            return Some(());
        }
        let what = format!(
            "{} bytes left after the payload of message {} in state {}",
            self.payload.len(),
            self.msg,
            self.state
        );
        self.violation(&what);
        None
    }

    /// The message [`remote`](Self::remote) received is one this build compiled out with
    /// `#[cfg]`: the generated pump's fallback arm. The fingerprint ignores `#[cfg]`, so the
    /// peer (built with the message) may send it, but this end has no method to deliver it by:
    /// a violation, naming the message as other decode failures do, so both ends learn why the
    /// session ended instead of seeing a clean close. Always `None`.
    pub fn compiled_out<N>(&mut self) -> Option<N> {
        let what = format!(
            "message {} of state {} is compiled out of this build (by #[cfg]), which cannot \
             receive it",
            self.msg, self.state
        );
        self.violation(&what);
        None
    }

    /// The result of sending a received message on the local endpoint: the local endpoint
    /// for the next state, or `None` (closing the session) if the user's endpoint is gone.
    pub fn deliver<N, E>(&mut self, sent: Result<N, E>) -> Option<N> {
        match sent {
            Ok(next) => Some(next),
            Err(_) => {
                self.end(Cause::Closed);
                None
            }
        }
    }

    /// Aborts the session: the peer broke the protocol.
    fn violation(&mut self, what: &str) {
        let _ = self.cause.set(Cause::Violation);
        if let Some(session) = self.session.take() {
            session.violation(what);
        }
    }
}

/// What the user's endpoint learns of a failed session.
fn cause_of(error: &SessionError) -> Cause {
    match error {
        SessionError::PeerClosed => Cause::Closed,
        SessionError::ConnectionLost(_) => Cause::ConnectionLost,
        SessionError::Violation(_) | SessionError::FrameTooLarge { .. } => Cause::Violation,
        SessionError::HeartbeatTimeout => Cause::Timeout,
        SessionError::Aborted(_)
        | SessionError::MessageTooLarge { .. }
        | SessionError::Payload(_) => Cause::Aborted,
    }
}

/// A local endpoint a pump's step holds ([`Pump::hold`]): given back by
/// [`into_inner`](Held::into_inner) when the step goes on, closed with the cause of the
/// failure when the step ends early.
pub struct Held<E: CloseWith> {
    endpoint: Option<E>,
    cause: Arc<OnceLock<Cause>>,
}

impl<E: CloseWith> Held<E> {
    /// The endpoint, to send on or to hold in the next state.
    pub fn into_inner(mut self) -> E {
        match self.endpoint.take() {
            Some(endpoint) => endpoint,
            None => unreachable!("a held endpoint is taken once"),
        }
    }
}

impl<E: CloseWith> Drop for Held<E> {
    fn drop(&mut self) {
        if let Some(endpoint) = self.endpoint.take() {
            // No cause: the pump was dropped mid-step, with its node's runtime.
            let cause = self.cause.get().copied().unwrap_or(Cause::ConnectionLost);
            endpoint.close_with(cause);
        }
    }
}

/// [`Pump::local`]'s receive, which closes the endpoint as [`Held`] does if the pump is dropped
/// while it waits (a plain [`RecvFuture`]'s drop would close it with no cause, which the user
/// reads as its peer closing).
struct LocalRecv<E: RecvEndpoint + CloseWith>(Option<RecvFuture<E>>);

impl<E: RecvEndpoint + CloseWith> LocalRecv<E> {
    /// The receive, to poll until it resolves.
    fn future(&mut self) -> &mut RecvFuture<E> {
        self.0
            .as_mut()
            .expect("a receive is cancelled only at its end")
    }

    /// Stops the receive: the endpoint, unless it resolved.
    fn cancel(mut self) -> Option<E> {
        self.0.take().and_then(RecvFuture::cancel)
    }
}

impl<E: RecvEndpoint + CloseWith> Drop for LocalRecv<E> {
    fn drop(&mut self) {
        if let Some(endpoint) = self.0.take().and_then(RecvFuture::cancel) {
            endpoint.close_with(Cause::ConnectionLost);
        }
    }
}

/// [`Pump::room`]'s wait, which closes the endpoint as [`Held`] does if the pump is dropped
/// while it waits.
struct Waiting<E: Backlog + CloseWith>(Option<RoomFuture<E>>);

impl<E: Backlog + CloseWith> Waiting<E> {
    fn poll(&mut self, cx: &mut std::task::Context<'_>) -> Poll<E> {
        let wait = self.0.as_mut().expect("a wait resolves once");
        let endpoint = std::task::ready!(Pin::new(wait).poll(cx));
        self.0 = None;
        Poll::Ready(endpoint)
    }
}

impl<E: Backlog + CloseWith> Drop for Waiting<E> {
    fn drop(&mut self) {
        if let Some(wait) = self.0.take() {
            wait.cancel().close_with(Cause::ConnectionLost);
        }
    }
}

//! Oneshots: exactly one message, from one sender to one receiver.
//!
//! [`oneshot()`] makes the two ends: a [`PortOne`] that receives and a [`ChanOne`] that sends.
//! Both are used up by their one call: [`ChanOne::send`] takes the chan, and
//! [`PortOne::recv`] takes the port. A reply to a request is the typical use: send a
//! [`ChanOne`] along with the request, keep the [`PortOne`] to wait for the answer.
//!
//! ```
//! # use pipes_runtime as pipes;
//! let (requests, server) = pipes::stream::<(u32, pipes::ChanOne<u32>)>();
//! let worker = std::thread::spawn(move || {
//!     for (n, reply) in requests {
//!         reply.send(n * n).unwrap();
//!     }
//! });
//! let (answer, reply) = pipes::oneshot();
//! server.send((12, reply)).unwrap();
//! assert_eq!(answer.recv().unwrap(), 144);
//! drop(server);
//! worker.join().unwrap();
//! ```
//!
//! # Receiving
//!
//! - [`PortOne::recv`] blocks until the message arrives, or fails with a [`RecvError`] if the
//!   chan is dropped without sending.
//! - [`PortOne::try_recv`], [`PortOne::recv_timeout`] and [`PortOne::recv_deadline`] hand the
//!   port back in the error when nothing arrived, to try again later.
//! - [`PortOne::recv_async`] is a [`RecvFuture`] for any executor. Its
//!   [`cancel`](RecvFuture::cancel) hands the port back; dropping it drops the port, so the
//!   chan's send hands its message back.
//! - A [`PortOne`] is a [`Recv`] endpoint, so [`select2`](crate::select2),
//!   [`select`](fn@crate::select) and `select!` wait on it beside other endpoints.
//!
//! ```
//! # use pipes_runtime as pipes;
//! use std::time::Duration;
//!
//! let (port, chan) = pipes::oneshot::<String>();
//! // Nothing sent yet: the port comes back to wait again.
//! let port = port.recv_timeout(Duration::from_millis(1)).unwrap_err().into_endpoint().unwrap();
//! drop(chan);
//! assert!(port.recv().is_err(), "the chan is gone without sending");
//! ```
//!
//! # Costs
//!
//! A oneshot is one packet: a payload slot and one state word, carved from a small per-thread
//! chunk (one allocation per 8 packets made on a thread). Sending is one atomic swap,
//! receiving a message that is already there one load. A oneshot is itself a protocol of one
//! state, declared with `proto!` as the 2012 library did.

use std::fmt;
use std::future::IntoFuture;
use std::time::{Duration, Instant};

use crate::endpoint::Recv;
use crate::error::{RecvError, RecvTimeoutError, SendError, TryRecvError};
use crate::packet::StateName;
use crate::state::{RecvEndpoint, RecvFuture};

crate::proto! {
    #[allow(dead_code)]
    oneshot {
        Oneshot: send<T> { Send(T) -> ! }
    }
}

/// Makes a oneshot pipe: the receiving and the sending end, in that order.
pub fn oneshot<T>() -> (PortOne<T>, ChanOne<T>) {
    let (port, chan) = oneshot::init();
    (PortOne(port), ChanOne(chan))
}

/// The sending end of a oneshot: sends one message, then is gone.
pub struct ChanOne<T>(oneshot::client::Oneshot<T>);

impl<T> ChanOne<T> {
    /// Sends the message. Never blocks; hands the message back if the port is gone.
    pub fn send(self, message: T) -> Result<(), SendError<T>> {
        self.0.send(message)
    }
}

/// The receiving end of a oneshot: receives one message, then is gone.
pub struct PortOne<T>(Inner<T>);

/// The generated endpoint a [`PortOne`] wraps.
type Inner<T> = oneshot::server::Oneshot<T>;

/// The payload of the oneshot's only message.
fn payload<T>(oneshot::Oneshot::Send(message): oneshot::Oneshot<T>) -> T {
    message
}

impl<T> PortOne<T> {
    /// Blocks until the message arrives or the chan is dropped.
    pub fn recv(self) -> Result<T, RecvError> {
        Recv::recv(self)
    }

    /// Takes the message if it is already here; otherwise hands the port back.
    pub fn try_recv(self) -> Result<T, TryRecvError<Self>> {
        Recv::try_recv(self)
    }

    /// Blocks for at most `timeout`; hands the port back if nothing arrived in time.
    pub fn recv_timeout(self, timeout: Duration) -> Result<T, RecvTimeoutError<Self>> {
        Recv::recv_timeout(self, timeout)
    }

    /// Blocks until `deadline` at the latest; hands the port back if nothing arrived.
    pub fn recv_deadline(self, deadline: Instant) -> Result<T, RecvTimeoutError<Self>> {
        self.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    }

    /// A future of the message, for any executor; resolves as `recv` returns. Its
    /// [`cancel`](RecvFuture::cancel) hands the port back; dropping it drops the port, so the
    /// chan's send hands its message back.
    pub fn recv_async(self) -> RecvFuture<Self> {
        Recv::recv_async(self)
    }
}

/// The oneshot's only state, seen through the port: what arrives is the payload itself.
impl<T> RecvEndpoint for PortOne<T> {
    type Message = T;
    type End = <Inner<T> as RecvEndpoint>::End;
    const STATE: StateName = Inner::<T>::STATE;

    fn into_end(self) -> Self::End {
        self.0.into_end()
    }

    fn from_end(end: Self::End) -> Self {
        PortOne(Inner::from_end(end))
    }

    fn end(&self) -> &Self::End {
        self.0.end()
    }

    fn arrive(arrived: oneshot::Oneshot<T>) -> T {
        payload(Inner::<T>::arrive(arrived))
    }
}

impl<T> IntoFuture for PortOne<T> {
    type Output = Result<T, RecvError>;
    type IntoFuture = RecvFuture<Self>;

    fn into_future(self) -> RecvFuture<Self> {
        Recv::recv_async(self)
    }
}

impl<T> fmt::Debug for ChanOne<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ChanOne").finish_non_exhaustive()
    }
}

impl<T> fmt::Debug for PortOne<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PortOne").finish_non_exhaustive()
    }
}

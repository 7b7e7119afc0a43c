//! Oneshots: a pipe that carries exactly one message, declared with `proto!` as in the 2012
//! library. A protocol with one message state keeps single-use packets, so a oneshot is one
//! packet: one allocation, one swap to send, one load to receive.
//!
//! ```
//! let (port, chan) = pipes_runtime::oneshot::<u32>();
//! std::thread::spawn(move || chan.send(42).unwrap());
//! assert_eq!(port.recv().unwrap(), 42);
//! ```

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

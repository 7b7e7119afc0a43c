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
use std::future::Future;
use std::time::{Duration, Instant};

use crate::endpoint::Recv;
use crate::error::{RecvError, RecvTimeoutError, SendError, TryRecvError};
use crate::wait::StateWord;

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
pub struct PortOne<T>(oneshot::server::Oneshot<T>);

/// The payload of the oneshot's only message.
fn payload<T>(oneshot::Oneshot::Send(message): oneshot::Oneshot<T>) -> T {
    message
}

impl<T> PortOne<T> {
    /// Blocks until the message arrives or the chan is dropped.
    pub fn recv(self) -> Result<T, RecvError> {
        self.0.recv().map(payload)
    }

    /// Takes the message if it is already here; otherwise hands the port back.
    pub fn try_recv(self) -> Result<T, TryRecvError<Self>> {
        self.0.try_recv().map(payload).map_err(|e| e.map(PortOne))
    }

    /// Blocks for at most `timeout`; hands the port back if nothing arrived in time.
    pub fn recv_timeout(self, timeout: Duration) -> Result<T, RecvTimeoutError<Self>> {
        self.0
            .recv_timeout(timeout)
            .map(payload)
            .map_err(|e| e.map(PortOne))
    }

    /// Blocks until `deadline` at the latest; hands the port back if nothing arrived.
    pub fn recv_deadline(self, deadline: Instant) -> Result<T, RecvTimeoutError<Self>> {
        self.recv_timeout(deadline.saturating_duration_since(Instant::now()))
    }

    /// A future of the message, for any executor; resolves as `recv` returns. Dropping it
    /// before it resolves drops the port, so the chan's send hands its message back.
    pub fn recv_async(self) -> impl Future<Output = Result<T, RecvError>> {
        let future = self.0.recv_async();
        async move { future.await.map(payload) }
    }
}

impl<T> Recv for PortOne<T> {
    type Message = T;

    fn recv(self) -> Result<T, RecvError> {
        PortOne::recv(self)
    }

    fn try_recv(self) -> Result<T, TryRecvError<Self>> {
        PortOne::try_recv(self)
    }

    fn recv_timeout(self, timeout: Duration) -> Result<T, RecvTimeoutError<Self>> {
        PortOne::recv_timeout(self, timeout)
    }

    fn __state_word(&self) -> &StateWord {
        self.0.__state_word()
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
